package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
	"github.com/lakehold/catalog/credentials/vending"
	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/server"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// Regression tests for the location policy (issue 9, the trust boundary):
// each hostile request of the issue is refused or made harmless, a canary
// file outside the warehouse survives, no error body carries a server path,
// and the catalog keeps working afterwards.

// canary is a file outside the warehouse, in its own directory.
type canary struct{ dir, path string }

func newCanary(t *testing.T) canary {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "canary")
	require.NoError(t, os.WriteFile(path, []byte("root:x:0:0:secret\n"), 0o600))
	return canary{dir: dir, path: path}
}

func (c canary) url() string { return "file://" + c.path }

// intact asserts the canary file is unchanged and nothing else appeared in
// its directory.
func (c canary) intact(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(c.path)
	require.NoError(t, err, "the canary outside the warehouse must survive")
	require.Equal(t, "root:x:0:0:secret\n", string(data))
	entries, err := os.ReadDir(c.dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing may be written next to the canary")
}

// noRelativeWrites asserts that nothing appeared where a relative
// location ("../../x", "x") would have pointed from the test's directory.
func noRelativeWrites(t *testing.T) {
	t.Helper()
	for _, p := range []string{"x", filepath.Join("..", "..", "x")} {
		_, err := os.Stat(p)
		require.True(t, os.IsNotExist(err), "%s was written relative to the working directory", p)
	}
}

// whDir is the warehouse's directory on disk.
func (b *bundle) whDir() string { return strings.TrimPrefix(b.warehouse, "file://") }

// refused asserts status and error type, and that the body names none of
// the given server paths (nor the first bytes of the canary).
func refused(t *testing.T, r response, status int, typ string, paths ...string) string {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	got, msg := r.errorOf(t)
	require.Equal(t, typ, got, "%s", r.body)
	for _, p := range paths {
		require.NotContains(t, string(r.body), p, "error body leaks a server path")
	}
	require.NotContains(t, string(r.body), "root:x", "error body leaks file contents")
	require.NotContains(t, string(r.body), "invalid character", "error body carries parser text")
	return msg
}

// healthy asserts a table loads and takes a commit.
func (b *bundle) healthy(t *testing.T, ns, name string) {
	t.Helper()
	r := b.do(t, "GET", "/v1/wh/namespaces/"+ns+"/tables/"+name, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	c := b.do(t, "POST", "/v1/wh/namespaces/"+ns+"/tables/"+name, setProps("healthy", time.Now().String()))
	require.Equal(t, 200, c.status, "%s", c.body)
}

func tableLocation(t *testing.T, r response) string {
	t.Helper()
	return r.json(t)["metadata"].(map[string]any)["location"].(string)
}

func forBackends(t *testing.T, run func(t *testing.T, b *bundle)) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { run(t, setup(t, backend)) })
	}
}

func snapshotUpdate(id int64, manifestList string) map[string]any {
	return map[string]any{"action": "add-snapshot", "snapshot": map[string]any{
		"snapshot-id": id, "sequence-number": 1, "timestamp-ms": time.Now().UnixMilli(), "schema-id": 0,
		"manifest-list": manifestList, "summary": map[string]any{"operation": "append"}}}
}

func mainRef(id int64) map[string]any {
	return map[string]any{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id}
}

// TestPurgeLeavesOutsideFiles: a snapshot whose manifest list (or a
// statistics file) names a file outside the table must not make purge
// delete it. The commit is refused once the commit engine checks
// locations (checkTableMetadataLocations); until then it lands and the
// purge must still leave the file alone. Either way the canary survives.
func TestPurgeLeavesOutsideFiles(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		c := newCanary(t)
		b.createNamespace(t, "ns")
		cases := map[string]func(loc string) []any{
			"manifest-list": func(string) []any { return []any{snapshotUpdate(7, c.url()), mainRef(7)} },
			"statistics": func(loc string) []any {
				return []any{snapshotUpdate(8, loc+"/metadata/snap-8.avro"), mainRef(8),
					map[string]any{"action": "set-statistics", "statistics": map[string]any{"snapshot-id": 8,
						"statistics-path": c.url(), "file-size-in-bytes": 1, "file-footer-size-in-bytes": 1, "blob-metadata": []any{}}}}
			},
		}
		for name, updates := range cases {
			t.Run(name, func(t *testing.T) {
				tbl := "t_" + strings.ReplaceAll(name, "-", "_")
				cr := b.createTable(t, "ns", tbl, nil)
				require.Equal(t, 200, cr.status)
				r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/"+tbl, map[string]any{"updates": updates(tableLocation(t, cr))})
				if r.status != 200 {
					refused(t, r, 400, "BadRequestException", c.dir, b.whDir())
					c.intact(t)
					b.healthy(t, "ns", tbl)
				}
				d := b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/"+tbl+"?purgeRequested=true", nil)
				require.Equal(t, 204, d.status, "%s", d.body)
				b.drainJobs(t)
				c.intact(t)
			})
		}
		// The catalog keeps working.
		require.Equal(t, 200, b.createTable(t, "ns", "after", nil).status)
		b.healthy(t, "ns", "after")
	})
}

// injectMetadata rewrites a table's metadata behind the catalog's back, in
// its row and in its metadata file (which a purge job reads), as metadata
// written before the policy could look.
func injectMetadata(t *testing.T, b *bundle, ns, name string, edit func(m map[string]any)) {
	t.Helper()
	ctx := context.Background()
	obj, err := b.store.ObjectGet(ctx, store.ObjectRef{Warehouse: "wh", Namespace: []string{ns}, Name: name, Kind: store.KindTable})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(obj.Metadata, &m))
	edit(m)
	data, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(strings.TrimPrefix(obj.MetadataLocation, "file://"), data, 0o644))
	require.NoError(t, b.store.ObjectsSwap(ctx, []store.Swap{{ObjectID: obj.ID, ExpectedMetadataLocation: obj.MetadataLocation,
		NewMetadataLocation: obj.MetadataLocation, NewMetadata: data, NewFormatVersion: obj.FormatVersion}}))
}

// TestPurgeOnlyInsideTheTable: with references the commit path would now
// refuse already stored, purge deletes the referenced files inside the
// table, leaves files outside it (another table's too) and never removes
// a directory.
func TestPurgeOnlyInsideTheTable(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		c := newCanary(t)
		b.createNamespace(t, "ns")
		victim := b.createTable(t, "ns", "victim", nil)
		require.Equal(t, 200, victim.status)
		victimFile := filepath.Join(strings.TrimPrefix(tableLocation(t, victim), "file://"), "data", "v.parquet")
		require.NoError(t, os.MkdirAll(filepath.Dir(victimFile), 0o755))
		require.NoError(t, os.WriteFile(victimFile, []byte("v"), 0o644))

		r := b.createTable(t, "ns", "t", nil)
		require.Equal(t, 200, r.status)
		loc := strings.TrimPrefix(tableLocation(t, r), "file://")
		own := filepath.Join(loc, "metadata", "stats.puffin")
		require.NoError(t, os.WriteFile(own, []byte("s"), 0o644))
		dir := filepath.Join(loc, "data")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		now := time.Now().UnixMilli()
		snap := func(id int64, list string) map[string]any {
			return map[string]any{"snapshot-id": id, "sequence-number": id, "timestamp-ms": now, "schema-id": 0,
				"manifest-list": list, "summary": map[string]any{"operation": "append"}}
		}
		stats := func(id int64, path string) map[string]any {
			return map[string]any{"snapshot-id": id, "statistics-path": path, "file-size-in-bytes": 1,
				"file-footer-size-in-bytes": 1, "blob-metadata": []any{}}
		}
		injectMetadata(t, b, "ns", "t", func(m map[string]any) {
			m["snapshots"] = []any{snap(1, c.url()), snap(2, "file://"+dir), snap(3, "file://"+victimFile)}
			m["last-sequence-number"] = 3
			m["current-snapshot-id"] = 3
			m["refs"] = map[string]any{"main": map[string]any{"snapshot-id": 3, "type": "branch"}}
			m["statistics"] = []any{stats(1, "file://"+own), stats(2, "file://"+c.dir+"/../"+filepath.Base(c.dir)+"/canary")}
		})
		d := b.do(t, "DELETE", "/v1/wh/namespaces/ns/tables/t?purgeRequested=true", nil)
		require.Equal(t, 204, d.status, "%s", d.body)
		b.drainJobs(t)
		c.intact(t)
		_, err := os.Stat(own)
		require.True(t, os.IsNotExist(err), "a referenced file inside the table is purged")
		st, err := os.Stat(dir)
		require.NoError(t, err, "purge never removes a directory")
		require.True(t, st.IsDir())
		_, err = os.Stat(victimFile)
		require.NoError(t, err, "another table's file survives")
		b.healthy(t, "ns", "victim")
	})
}

// TestCreateOutsideWarehouse: create (and stage-create) with a location
// outside the warehouse, through "..", or a write.*.path outside the
// table is refused before anything is written.
func TestCreateOutsideWarehouse(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		c := newCanary(t)
		b.createNamespace(t, "ns")
		wh := b.whDir()
		up := strings.Repeat("/..", strings.Count(wh, "/"))
		bodies := map[string]map[string]any{
			"outside":          {"location": "file://" + c.dir},
			"dotdot":           {"location": "file://" + wh + up + c.dir},
			"dotdot-staged":    {"location": "file://" + wh + up + c.dir, "stage-create": true},
			"outside-staged":   {"location": "file://" + c.dir, "stage-create": true},
			"relative":         {"location": "../../x"},
			"warehouse-root":   {"location": b.warehouse},
			"metadata-path":    {"properties": map[string]string{"write.metadata.path": "file://" + c.dir}},
			"metadata-rel":     {"properties": map[string]string{"write.metadata.path": "../../x"}},
			"data-path":        {"properties": map[string]string{"write.data.path": "file://" + c.dir}},
			"object-path":      {"properties": map[string]string{"write.object-storage.path": "file://" + c.dir}},
			"metadata-sibling": {"properties": map[string]string{"write.metadata.path": b.warehouse + "/ns"}},
		}
		for name, extra := range bodies {
			t.Run(name, func(t *testing.T) {
				r := b.createTable(t, "ns", "t_"+strings.ReplaceAll(name, "-", "_"), extra)
				refused(t, r, 400, "BadRequestException", c.dir, wh)
				c.intact(t)
			})
		}
		noRelativeWrites(t)
		r := b.createTable(t, "ns", "ok", map[string]any{"location": b.warehouse + "/ns/ok",
			"properties": map[string]string{"write.metadata.path": b.warehouse + "/ns/ok/meta"}})
		require.Equal(t, 200, r.status, "%s", r.body)
		b.healthy(t, "ns", "ok")
	})
}

// TestCommitOutsideWarehouse: set-properties with a write.*.path outside
// the table and set-location outside the warehouse are refused; no file
// appears outside and the table keeps working.
func TestCommitOutsideWarehouse(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		c := newCanary(t)
		b.createNamespace(t, "ns")
		require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
		wh := b.whDir()
		commits := map[string]map[string]any{
			"metadata-path":     setProps("write.metadata.path", "file://"+c.dir),
			"metadata-relative": setProps("write.metadata.path", "../../x"),
			"metadata-dotdot":   setProps("write.metadata.path", b.warehouse+"/ns/../.."+c.dir),
			"data-path":         setProps("write.data.path", "file://"+c.dir),
			"location":          {"updates": []any{map[string]any{"action": "set-location", "location": "file://" + c.dir}}},
			"location-dotdot":   {"updates": []any{map[string]any{"action": "set-location", "location": b.warehouse + "/ns/../../x"}}},
		}
		for name, body := range commits {
			t.Run(name, func(t *testing.T) {
				r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables/t", body)
				refused(t, r, 400, "BadRequestException", c.dir, wh)
				c.intact(t)
				b.healthy(t, "ns", "t")
			})
		}
		// A create through assert-create (staged create) that puts the table
		// outside is refused too (its metadata write is); the same request
		// inside the warehouse is the control.
		createByCommit := func(name, loc string) response {
			return b.do(t, "POST", "/v1/wh/namespaces/ns/tables/"+name, map[string]any{
				"requirements": []any{map[string]any{"type": "assert-create"}},
				"updates": []any{map[string]any{"action": "assign-uuid", "uuid": uuid.NewString()},
					map[string]any{"action": "upgrade-format-version", "format-version": 2},
					map[string]any{"action": "add-schema", "schema": json.RawMessage(testSchema)},
					map[string]any{"action": "set-current-schema", "schema-id": -1},
					map[string]any{"action": "add-spec", "spec": map[string]any{"spec-id": 0, "fields": []any{}}},
					map[string]any{"action": "set-default-spec", "spec-id": -1},
					map[string]any{"action": "add-sort-order", "sort-order": map[string]any{"order-id": 0, "fields": []any{}}},
					map[string]any{"action": "set-default-sort-order", "sort-order-id": -1},
					map[string]any{"action": "set-location", "location": loc}}})
		}
		refused(t, createByCommit("staged", "file://"+c.dir), 400, "BadRequestException", c.dir, wh)
		c.intact(t)
		r := createByCommit("staged", b.warehouse+"/ns/staged")
		require.Equal(t, 200, r.status, "%s", r.body)
		b.healthy(t, "ns", "staged")
		noRelativeWrites(t)
	})
}

// TestWarehouseLocations: a warehouse at a filesystem root, without a
// bucket, overlapping another, or with a bad allowed-locations entry is
// refused; a sibling is accepted.
func TestWarehouseLocations(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		wh := b.whDir()
		bad := map[string]map[string]any{
			"root":            {"location": "file:///"},
			"root-dotdot":     {"location": "file://" + wh + strings.Repeat("/..", strings.Count(wh, "/"))},
			"bucketless":      {"location": "s3://"},
			"bucketless-path": {"location": "s3:///wh"},
			"relative":        {"location": "warehouse"},
			"inside":          {"location": b.warehouse + "/ns/inner"},
			"contains":        {"location": "file://" + filepath.Dir(wh)},
			"unnormalised":    {"location": "file:///" + wh + "/./"},
			"allowed-overlap": {"location": "s3://fresh", "properties": map[string]string{"allowed-locations": b.warehouse + "/x"}},
			"allowed-bad":     {"location": "s3://fresh", "properties": map[string]string{"allowed-locations": "../x"}},
			"allowed-root":    {"location": "s3://fresh", "properties": map[string]string{"allowed-locations": "file:///"}},
		}
		for name, body := range bad {
			t.Run(name, func(t *testing.T) {
				body["name"] = "w_" + strings.ReplaceAll(name, "-", "_")
				r := b.do(t, "POST", "/management/v1/warehouses", body)
				refused(t, r, 400, "BadRequestException", wh)
			})
		}
		r := b.do(t, "POST", "/management/v1/warehouses", map[string]any{"name": "sibling", "location": b.warehouse + "-sibling",
			"properties": map[string]string{"allowed-locations": "s3://extra/landing/ , gs://other"}})
		require.Equal(t, 200, r.status, "%s", r.body)
		props := r.json(t)["properties"].(map[string]any)
		require.Equal(t, "s3://extra/landing,gs://other", props["allowed-locations"], "stored canonical")
		b.createNamespace(t, "ns")
		require.Equal(t, 200, b.createTable(t, "ns", "t", nil).status)
		b.healthy(t, "ns", "t")
	})
}

// TestOverlapThroughUnnormalisedPaths: two tables cannot overlap through
// "file:////", "..", a trailing slash or an uppercase scheme.
func TestOverlapThroughUnnormalisedPaths(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		b.createNamespace(t, "ns")
		wh := b.whDir()
		r := b.createTable(t, "ns", "t", map[string]any{"location": "file://" + wh + "/ns/t/"})
		require.Equal(t, 200, r.status, "%s", r.body)
		require.Equal(t, "file://"+wh+"/ns/t", tableLocation(t, r), "stored canonical")
		for name, loc := range map[string]string{
			"four-slashes": "file:///" + wh + "/ns/t/sub",
			"dotdot":       "file://" + wh + "/ns/../ns/t/sub",
			"dot":          "file://" + wh + "/ns/./t/sub",
			"double":       "file://" + wh + "//ns//t//sub",
			"same":         "file://" + wh + "/ns/t/",
			"upper-scheme": "FILE://" + wh + "/ns/t/sub",
			"short-form":   "file:" + wh + "/ns/t/sub",
			"parent":       "file://" + wh + "/ns/",
			"localhost":    "file://localhost" + wh + "/ns/t/sub",
		} {
			t.Run(name, func(t *testing.T) {
				r := b.createTable(t, "ns", "u_"+strings.ReplaceAll(name, "-", "_"), map[string]any{"location": loc})
				refused(t, r, 400, "BadRequestException", wh)
			})
		}
		// set-location onto the other table through an unnormalised path.
		require.Equal(t, 200, b.createTable(t, "ns", "v", nil).status)
		r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables/v", map[string]any{"updates": []any{
			map[string]any{"action": "set-location", "location": "file:///" + wh + "/./ns/t/sub/"}}})
		require.Equal(t, 400, r.status, "%s", r.body)
		b.healthy(t, "ns", "t")
		b.healthy(t, "ns", "v")
	})
}

// TestRegisterOutsideWarehouse: register never opens a file outside the
// warehouse (no content, no existence oracle), does not pass parser text
// on, names files relative to the warehouse, and accepts only metadata
// whose locations are inside.
func TestRegisterOutsideWarehouse(t *testing.T) {
	forBackends(t, func(t *testing.T, b *bundle) {
		c := newCanary(t)
		b.createNamespace(t, "ns")
		wh := b.whDir()
		reg := func(name, loc string) response {
			return b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": name, "metadata-location": loc})
		}
		existing := refused(t, reg("a", c.url()), 400, "BadRequestException", c.dir, wh)
		missing := refused(t, reg("a", "file://"+c.dir+"/missing"), 400, "BadRequestException", c.dir, wh)
		require.Equal(t, existing, missing, "no existence oracle outside the warehouse")
		for _, loc := range []string{c.path, "../../" + c.path, "file://" + wh + strings.Repeat("/..", strings.Count(wh, "/")) + c.path, "file:" + c.path} {
			refused(t, reg("a", loc), 400, "BadRequestException", c.dir, wh)
		}
		c.intact(t)

		// Inside the warehouse: a file that does not parse, a missing file.
		junk := filepath.Join(wh, "ns", "junk.metadata.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(junk), 0o755))
		require.NoError(t, os.WriteFile(junk, []byte("root:x:0:0"), 0o644))
		msg := refused(t, reg("a", "file://"+junk), 400, "BadRequestException", wh)
		require.Contains(t, msg, "ns/junk.metadata.json", "named relative to the warehouse")
		msg = refused(t, reg("a", b.warehouse+"/ns/nope.metadata.json"), 404, "NotFoundException", wh)
		require.Contains(t, msg, "ns/nope.metadata.json")

		// Valid metadata whose table location is outside, or whose file is
		// not inside the table it describes.
		src := b.createTable(t, "ns", "src", nil)
		require.Equal(t, 200, src.status)
		meta := src.json(t)["metadata"].(map[string]any)
		write := func(name string, edit func(m map[string]any)) string {
			m := map[string]any{}
			for k, v := range meta {
				m[k] = v
			}
			edit(m)
			data, err := json.Marshal(m)
			require.NoError(t, err)
			p := filepath.Join(wh, "ns", name)
			require.NoError(t, os.WriteFile(p, data, 0o644))
			return "file://" + p
		}
		for name, edit := range map[string]func(m map[string]any){
			"location":      func(m map[string]any) { m["location"] = "file://" + c.dir },
			"root":          func(m map[string]any) { m["location"] = b.warehouse },
			"metadata-path": func(m map[string]any) { m["properties"] = map[string]string{"write.metadata.path": "file://" + c.dir} },
			"elsewhere":     func(m map[string]any) { m["location"] = b.warehouse + "/ns/elsewhere" },
		} {
			refused(t, reg("r_"+strings.ReplaceAll(name, "-", "_"), write(name+".metadata.json", edit)), 400, "BadRequestException", c.dir, wh)
		}
		c.intact(t)

		// A copy of src's metadata inside its own table directory passes the
		// policy: under another name it meets src's location in the store,
		// over src itself it registers.
		loc := strings.TrimPrefix(meta["location"].(string), "file://")
		data, err := json.Marshal(meta)
		require.NoError(t, err)
		inside := filepath.Join(loc, "metadata", "99999-copy.metadata.json")
		require.NoError(t, os.WriteFile(inside, data, 0o644))
		r := reg("copy", "file://"+inside)
		msg = refused(t, r, 409, "AlreadyExistsException", wh)
		require.Contains(t, msg, "Cannot register ns.copy: its location is already used by another table or view")
		r = b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "src", "metadata-location": "file://" + inside, "overwrite": true})
		require.Equal(t, 200, r.status, "%s", r.body)
		b.healthy(t, "ns", "src")

		// Gzip-compressed metadata (write.metadata.compression-codec=gzip)
		// registers as its JSON; a corrupt stream is a 400 naming the file.
		var zbuf bytes.Buffer
		zw := gzip.NewWriter(&zbuf)
		_, err = zw.Write(data)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		gzLoc := filepath.Join(loc, "metadata", "99998-zip.gz.metadata.json")
		require.NoError(t, os.WriteFile(gzLoc, zbuf.Bytes(), 0o644))
		r = b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "src", "metadata-location": "file://" + gzLoc, "overwrite": true})
		require.Equal(t, 200, r.status, "%s", r.body)
		require.Equal(t, meta["table-uuid"], r.json(t)["metadata"].(map[string]any)["table-uuid"])
		b.healthy(t, "ns", "src")
		require.NoError(t, os.WriteFile(gzLoc, zbuf.Bytes()[:20], 0o644))
		msg = refused(t, b.do(t, "POST", "/v1/wh/namespaces/ns/register", map[string]any{"name": "src", "metadata-location": "file://" + gzLoc, "overwrite": true}),
			400, "BadRequestException", wh)
		require.Contains(t, msg, "99998-zip.gz.metadata.json")
	})
}

// vendingBundle is a catalog over an S3 warehouse with the S3 vendor and a
// storage profile whose STS endpoint is unreachable: no credential can be
// minted, so a request that reaches the vendor answers 503, one stopped
// by the policy answers 4xx.
func vendingBundle(t *testing.T, backend string) *bundle {
	st := openStore(t, backend)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sealer, err := credentials.NewSealer(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet, Sealer: sealer, Credentials: vending.New(sealer)})
	_, err = svc.CreateWarehouse(context.Background(), "wh", "s3://warehouse", nil)
	require.NoError(t, err)
	hs := httptest.NewServer(server.New(svc, server.Config{DefaultWarehouse: "wh", Logger: quiet}))
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, store: st, client: hs.Client()}
	r := b.do(t, "PUT", "/management/v1/warehouses/wh/storage-profile", map[string]any{"type": "s3", "region": "us-east-1",
		"endpoint": "http://127.0.0.1:1", "path-style-access": true, "sts-endpoint": "http://127.0.0.1:1",
		"role-arn": "arn:aws:iam::000000000000:role/CatalogVendedRole", "access-key-id": "catalog", "secret-access-key": catalogSecret})
	require.Equal(t, 200, r.status, "%s", r.body)
	b.createNamespace(t, "ns")
	return b
}

// TestNoCredentialsForAnotherBucket: create in another bucket (or through
// a bucket-name prefix) with vended credentials is refused before any
// write or vending; a table row outside the warehouse (from before the
// policy) gets 403, not credentials.
func TestNoCredentialsForAnotherBucket(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			b := vendingBundle(t, backend)
			for _, loc := range []string{"s3://another-bucket/payroll", "s3://warehouse2/payroll", "s3://warehouse/../another/payroll",
				"s3://warehouse//payroll", "s3://warehouse", "gs://warehouse/payroll"} {
				r := b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "payroll", "schema": rawJSON(testSchema), "location": loc},
					"X-Iceberg-Access-Delegation", "vended-credentials")
				refused(t, r, 400, "BadRequestException")
				require.NotContains(t, string(r.body), "storage-credentials")
				require.NotContains(t, string(r.body), "s3.access-key-id")
			}
			meta := map[string]any{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c3", "location": "s3://another-bucket/payroll",
				"last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": 1, "current-schema-id": 0,
				"schemas":         []any{map[string]any{"type": "struct", "schema-id": 0, "fields": []any{map[string]any{"id": 1, "name": "id", "type": "long", "required": true}}}},
				"partition-specs": []any{map[string]any{"spec-id": 0, "fields": []any{}}}, "default-spec-id": 0, "last-partition-id": 999,
				"sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}}, "default-sort-order-id": 0}
			data, err := json.Marshal(meta)
			require.NoError(t, err)
			require.NoError(t, b.store.ObjectCreate(context.Background(), &store.Object{Warehouse: "wh", Namespace: []string{"ns"}, Name: "legacy",
				Kind: store.KindTable, Location: "s3://another-bucket/payroll", MetadataLocation: "s3://another-bucket/payroll/metadata/00000-x.metadata.json",
				Metadata: data, FormatVersion: 2}))
			r := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/legacy", nil, "X-Iceberg-Access-Delegation", "vended-credentials")
			refused(t, r, 403, "ForbiddenException")
			r = b.do(t, "GET", "/v1/wh/namespaces/ns/tables/legacy/credentials", nil)
			refused(t, r, 403, "ForbiddenException")
			// A table inside the warehouse reaches the vendor (503 here: no STS).
			r = b.do(t, "POST", "/v1/wh/namespaces/ns/tables", map[string]any{"name": "inside", "schema": rawJSON(testSchema), "location": "s3://warehouse/ns/inside", "stage-create": true},
				"X-Iceberg-Access-Delegation", "vended-credentials")
			require.Equal(t, 503, r.status, "%s", r.body)
		})
	}
}
