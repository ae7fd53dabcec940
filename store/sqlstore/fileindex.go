package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/lakehold/catalog/store"
	"github.com/lakehold/catalog/store/sqlstore/sqldb"
)

// indexChunk bounds the values of one IN list or multi-row INSERT of the
// base-file index: far below both databases' parameter limits.
const indexChunk = 256

var fileIndexCols = []string{"table_id", "location", "lineage"}

// leafIndexCols are the columns of a leaf row this version writes:
// colfiles = 1 says its lineage lists column files too (migration 22).
// Rows of the previous version get the column's default, 0, and are not
// trusted: FileIndexLeaves skips them and FileIndexAdd replaces them.
var leafIndexCols = []string{"table_id", "leaf", "lineage", "colfiles"}

// placeholders returns "$first, ..., $first+n-1".
func placeholders(first, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
	}
	return b.String()
}

// padded returns the arguments of an IN list of vals, padded to a power of
// two by repeating the last value (which changes no result): SQLite's
// statement cache then holds a few shapes of the query, not one per length.
func padded(head any, vals []string) []any {
	n := 1
	for n < len(vals) {
		n *= 2
	}
	args := make([]any, 0, n+1)
	args = append(args, head)
	for i := 0; i < n; i++ {
		args = append(args, vals[min(i, len(vals)-1)])
	}
	return args
}

// FileIndexLeaves implements store.FileIndex.
func (s *Store) FileIndexLeaves(ctx context.Context, tableID string, leaves []string) (map[string]string, error) {
	out := map[string]string{}
	err := queryIn(ctx, s.db, `SELECT leaf, lineage FROM file_index_leaves WHERE colfiles = 1 AND table_id = $1 AND leaf IN `, tableID, leaves,
		func(r sqldb.Row) error {
			var leaf, lineage string
			err := r.Scan(&leaf, &lineage)
			out[leaf] = lineage
			return err
		})
	if err != nil {
		return nil, s.wrap(err, "read the file index")
	}
	return out, nil
}

// FileIndexLookup implements store.FileIndex.
func (s *Store) FileIndexLookup(ctx context.Context, tableID string, locations []string) ([]store.IndexEntry, error) {
	var out []store.IndexEntry
	err := queryIn(ctx, s.db, `SELECT location, lineage FROM file_index WHERE table_id = $1 AND location IN `, tableID, locations,
		func(r sqldb.Row) error {
			var e store.IndexEntry
			err := r.Scan(&e.Location, &e.Lineage)
			out = append(out, e)
			return err
		})
	if err != nil {
		return nil, s.wrap(err, "read the file index")
	}
	return out, nil
}

// queryIn runs sql, which ends in "IN ", for head and chunks of vals,
// and calls row for every row.
func queryIn(ctx context.Context, q sqldb.Querier, sql, head string, vals []string, row func(sqldb.Row) error) error {
	for start := 0; start < len(vals); start += indexChunk {
		args := padded(head, vals[start:min(start+indexChunk, len(vals))])
		rows, err := q.Query(ctx, sql+`(`+placeholders(2, len(args)-1)+`)`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := row(rows); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// FileIndexAdd implements store.FileIndex. It changes no catalog state, so
// it is not fenced by the request's Idempotency-Key. A row of the previous
// version (colfiles = 0) is replaced: its lineage may lack column files.
// The file rows of that old lineage stay, unused, until the table goes.
func (s *Store) FileIndexAdd(ctx context.Context, tableID string, leaves []store.IndexedLeaf) error {
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		for _, l := range leaves {
			n, err := q.Exec(ctx, `INSERT INTO file_index_leaves (table_id, leaf, lineage, colfiles) VALUES ($1, $2, $3, 1)
				ON CONFLICT (table_id, leaf) DO UPDATE SET lineage = excluded.lineage, colfiles = 1
				WHERE file_index_leaves.colfiles = 0`,
				tableID, l.Leaf, l.Lineage)
			if err != nil {
				return err
			}
			if n == 0 {
				continue // indexed already, by a commit or a concurrent rebuild
			}
			if err := insertValues(ctx, q, "file_index", fileIndexCols, fileRows(tableID, l), " ON CONFLICT DO NOTHING"); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(err, "write the file index")
}

// insertNewIndex indexes leaves a commit wrote, inside its swap
// transaction. Leaves and lineages are new, so there is nothing to
// conflict with: Postgres copies the file rows (COPY), SQLite runs a
// prepared multi-row insert.
func insertNewIndex(ctx context.Context, q sqldb.Querier, tableID string, leaves []store.IndexedLeaf) error {
	if len(leaves) == 0 {
		return nil
	}
	marks := make([][]any, 0, len(leaves))
	var rows [][]any
	for _, l := range leaves {
		marks = append(marks, []any{tableID, l.Leaf, l.Lineage, 1})
		rows = append(rows, fileRows(tableID, l)...)
	}
	if err := insertValues(ctx, q, "file_index_leaves", leafIndexCols, marks, ""); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	if copied, err := sqldb.CopyFrom(ctx, q, "file_index", fileIndexCols, rows); copied {
		return err
	}
	return insertValues(ctx, q, "file_index", fileIndexCols, rows, "")
}

// fileRows are the file_index rows of one leaf.
func fileRows(tableID string, l store.IndexedLeaf) [][]any {
	rows := make([][]any, len(l.Locations))
	for i, loc := range l.Locations {
		rows[i] = []any{tableID, loc, l.Lineage}
	}
	return rows
}

// insertValues inserts rows into table with multi-row INSERTs of at most
// indexChunk rows, each followed by suffix. In a SQLite transaction the
// statement of a full chunk is prepared once and reused, and its
// parameters are anonymous: the driver looks up the name of every numbered
// parameter by a linear search, which made binding a chunk quadratic. pgx
// prepares and caches statements itself.
func insertValues(ctx context.Context, q sqldb.Querier, table string, cols []string, rows [][]any, suffix string) error {
	prep, isSQLite := sqldb.SQLitePreparer(q)
	text := func(n int) string {
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
		row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if !isSQLite {
				row = "(" + placeholders(1+i*len(cols), len(cols)) + ")"
			}
			b.WriteString(row)
		}
		return b.String() + suffix
	}
	var full *sql.Stmt
	if isSQLite && len(rows) >= indexChunk {
		if prep != nil {
			st, err := prep.PrepareContext(ctx, text(indexChunk))
			if err != nil {
				return err
			}
			defer func() { _ = st.Close() }()
			full = st
		}
	}
	args := make([]any, 0, indexChunk*len(cols))
	for start := 0; start < len(rows); start += indexChunk {
		chunk := rows[start:min(start+indexChunk, len(rows))]
		args = args[:0]
		for _, r := range chunk {
			args = append(args, r...)
		}
		var err error
		if full != nil && len(chunk) == indexChunk {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = q.Exec(ctx, text(len(chunk)), args...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteIndex removes the index of the table objects matching where (a
// condition on catalog_objects with args), in the caller's transaction.
func deleteIndex(ctx context.Context, q sqldb.Querier, where string, args ...any) error {
	for _, t := range []string{"file_index", "file_index_leaves"} {
		if _, err := q.Exec(ctx, `DELETE FROM `+t+` WHERE table_id IN (SELECT id FROM catalog_objects WHERE `+where+`)`, args...); err != nil {
			return err
		}
	}
	return nil
}

// FileIndexForget removes the base-file index of table tableID, so that
// the next column-file commit rebuilds it from the leaves: a repair for an
// index suspected damaged, and how tests simulate a table from before the
// index. It returns only database errors.
func (s *Store) FileIndexForget(ctx context.Context, tableID string) error {
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		return deleteIndex(ctx, q, `id = $1`, tableID)
	})
	return s.wrap(err, "forget the file index")
}

// FileIndexAddAsPrevious indexes leaves of table tableID as a version
// before migration 22 did (leaf rows with colfiles = 0, which this version
// does not trust): how tests simulate a replica still on that version
// during a rolling upgrade. Leaves already indexed are left as they are.
// It returns only database errors.
func (s *Store) FileIndexAddAsPrevious(ctx context.Context, tableID string, leaves []store.IndexedLeaf) error {
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		for _, l := range leaves {
			if _, err := q.Exec(ctx, `INSERT INTO file_index_leaves (table_id, leaf, lineage) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
				tableID, l.Leaf, l.Lineage); err != nil {
				return err
			}
			if err := insertValues(ctx, q, "file_index", fileIndexCols, fileRows(tableID, l), " ON CONFLICT DO NOTHING"); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(err, "write the file index")
}

// FileIndexForgetLeaves implements store.FileIndex: the leaf rows go in
// chunks, then the file rows of the lineages those leaves belonged to
// that no remaining leaf continues, all in one transaction.
func (s *Store) FileIndexForgetLeaves(ctx context.Context, tableID string, leaves []string) error {
	if len(leaves) == 0 {
		return nil
	}
	err := s.inTxUnfenced(ctx, func(q sqldb.Querier) error {
		lineages := map[string]bool{}
		for start := 0; start < len(leaves); start += pendingBatch {
			chunk := leaves[start:min(start+pendingBatch, len(leaves))]
			in, args := inList(2, chunk)
			args = append([]any{tableID}, args...)
			rows, err := q.Query(ctx, `SELECT lineage FROM file_index_leaves WHERE table_id = $1 AND leaf IN (`+in+`)`, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var l string
				if err := rows.Scan(&l); err != nil {
					rows.Close()
					return err
				}
				lineages[l] = true
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if _, err := q.Exec(ctx, `DELETE FROM file_index_leaves WHERE table_id = $1 AND leaf IN (`+in+`)`, args...); err != nil {
				return err
			}
		}
		gone := make([]string, 0, len(lineages))
		for l := range lineages {
			gone = append(gone, l)
		}
		// One pass over the table's file rows per chunk (the key leads with
		// the location, not the lineage).
		for start := 0; start < len(gone); start += pendingBatch {
			in, args := inList(2, gone[start:min(start+pendingBatch, len(gone))])
			args = append([]any{tableID}, args...)
			if _, err := q.Exec(ctx, `DELETE FROM file_index WHERE table_id = $1 AND lineage IN (`+in+`)
				AND lineage NOT IN (SELECT lineage FROM file_index_leaves WHERE table_id = $1)`, args...); err != nil {
				return err
			}
		}
		return nil
	})
	return s.wrap(err, "forget expired leaves in the file index")
}

// inList is "$first, $first+1, ..." for vals, and vals as arguments.
func inList(first int, vals []string) (string, []any) {
	var b strings.Builder
	args := make([]any, len(vals))
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
		args[i] = v
	}
	return b.String(), args
}
