package locations

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/fault"
	"github.com/lakehold/catalog/internal/tablemeta"
	"github.com/lakehold/catalog/store"
)

// metaJSON is a v2 table metadata document at loc with the given extra
// top-level fields.
func metaJSON(t *testing.T, loc string, extra map[string]any) []byte {
	t.Helper()
	m := map[string]any{"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": loc,
		"last-sequence-number": 3, "last-updated-ms": 1, "last-column-id": 1, "current-schema-id": 0,
		"schemas":         []any{map[string]any{"type": "struct", "schema-id": 0, "fields": []any{map[string]any{"id": 1, "name": "id", "type": "long", "required": true}}}},
		"partition-specs": []any{map[string]any{"spec-id": 0, "fields": []any{}}}, "default-spec-id": 0, "last-partition-id": 999,
		"sort-orders": []any{map[string]any{"order-id": 0, "fields": []any{}}}, "default-sort-order-id": 0}
	for k, v := range extra {
		m[k] = v
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func snapshotJSON(id int64, list string) map[string]any {
	return map[string]any{"snapshot-id": id, "sequence-number": id, "timestamp-ms": 1, "schema-id": 0,
		"manifest-list": list, "summary": map[string]any{"operation": "append"}}
}

func statsJSON(id int64, path string) map[string]any {
	return map[string]any{"snapshot-id": id, "statistics-path": path, "file-size-in-bytes": 1,
		"file-footer-size-in-bytes": 1, "blob-metadata": []any{}}
}

// TestCheckTableMetadataLocations: every location table metadata names is
// judged; the 400 names the property or snapshot, never the path.
func TestCheckTableMetadataLocations(t *testing.T) {
	w := &store.Warehouse{Name: "wh", Location: "s3://lake/wh", Properties: map[string]string{AllowedLocationsKey: "s3://shared/landing"}}
	const tbl = "s3://lake/wh/ns/t"
	cases := []struct {
		name  string
		loc   string
		extra map[string]any
		want  string // "" when accepted
	}{
		{"plain", tbl, nil, ""},
		{"unnormalised but inside", "S3://lake/wh/ns/t/", nil, ""},
		{"snapshots inside", tbl, map[string]any{"snapshots": []any{snapshotJSON(1, tbl+"/metadata/snap-1.avro"), snapshotJSON(2, "s3://shared/landing/snap-2.avro")}}, ""},
		{"location outside", "s3://other/t", nil, "Invalid location"},
		{"location at the warehouse root", "s3://lake/wh", nil, "Invalid location"},
		{"location with dotdot", "s3://lake/wh/../x", nil, "Invalid location"},
		{"location in a bucket-name prefix", "s3://lake2/wh/ns/t", nil, "Invalid location"},
		{"manifest list outside", tbl, map[string]any{"snapshots": []any{snapshotJSON(1, "s3://other/snap.avro")}}, "snapshot 1"},
		{"manifest list in another table", tbl, map[string]any{"snapshots": []any{snapshotJSON(2, "s3://lake/wh/ns/u/snap.avro")}}, "snapshot 2"},
		{"manifest list relative", tbl, map[string]any{"snapshots": []any{snapshotJSON(3, "../../snap.avro")}}, "snapshot 3"},
		{"statistics outside", tbl, map[string]any{"snapshots": []any{snapshotJSON(1, tbl+"/m.avro")},
			"statistics": []any{statsJSON(1, "file:///etc/shadow")}}, "statistics of snapshot 1"},
		{"partition statistics outside", tbl, map[string]any{"snapshots": []any{snapshotJSON(1, tbl+"/m.avro")},
			"partition-statistics": []any{map[string]any{"snapshot-id": 1, "statistics-path": "s3://lake/wh/ns/u/p.parquet", "file-size-in-bytes": 1}}},
			"partition statistics of snapshot 1"},
		{"write.data.path outside", tbl, map[string]any{"properties": map[string]string{"write.data.path": "s3://other/data"}}, "write.data.path"},
		{"write.metadata.path relative", tbl, map[string]any{"properties": map[string]string{"write.metadata.path": "../../x"}}, "write.metadata.path"},
		{"write.object-storage.path in the warehouse, not the table", tbl, map[string]any{"properties": map[string]string{"write.object-storage.path": "s3://lake/wh/objects"}}, "write.object-storage.path"},
		{"write.data.path in an extra prefix", tbl, map[string]any{"properties": map[string]string{"write.data.path": "s3://shared/landing/t"}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			meta, _, err := tablemeta.Parse(metaJSON(t, c.loc, c.extra))
			if err != nil {
				t.Fatal(err)
			}
			err = CheckTableMetadataLocations(w, meta)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if fault.KindOf(err) != fault.BadRequest || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (kind %d), want a 400 mentioning %q", err, fault.KindOf(err), c.want)
			}
			for _, leak := range []string{"shadow", "s3://other", "/ns/u/", "../"} {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("message names the path: %v", err)
				}
			}
		})
	}
}

func TestCheckFileInTable(t *testing.T) {
	w := &store.Warehouse{Name: "wh", Location: "file:///srv/wh"}
	const tbl = "file:///srv/wh/ns/t"
	for loc, ok := range map[string]bool{
		tbl + "/data/a.parquet":           true,
		"file:////srv/wh/ns/t/./data/b":   true,
		"file:///srv/wh/ns/t2/data/a":     false,
		"file:///srv/wh/ns/t/../t2/x":     false,
		"file:///etc/passwd":              false,
		"data/a.parquet":                  false,
		"file:///srv/wh/ns/t/%2e%2e/t2/x": false,
	} {
		err := CheckFileInTable(w, tbl, loc, "data file")
		if (err == nil) != ok {
			t.Errorf("CheckFileInTable(%q) = %v", loc, err)
		}
	}
	// A table whose own location lies outside the warehouse (a row from
	// before the policy) has no prefix of its own: nothing is inside it.
	if CheckFileInTable(w, "file:///etc", "file:///etc/passwd", "data file") == nil {
		t.Error("a legacy table outside the warehouse must not allow its own location")
	}
}

func TestSafeSegment(t *testing.T) {
	for in, want := range map[string]string{
		"t": "t", "..": "__", ".": "_", "a/b": "a_b", `a\b`: "a_b", "a?b#c%d": "a_b_c_d", "x\ny": "x_y", "données": "données",
	} {
		if got := safeSegment(in); got != want {
			t.Errorf("safeSegment(%q) = %q, want %q", in, got, want)
		}
	}
	w := &store.Warehouse{Name: "wh", Location: "file:///srv/wh"}
	ns := &store.Namespace{Levels: []string{"..", "..", "etc"}}
	if _, err := CheckObjectLocation(w, DefaultLocation(w, ns, "..")); err != nil {
		t.Fatalf("default location of hostile names leaves the warehouse: %v", err)
	}
}

// TestTableFileName: inside the table a file is named relative to it,
// outside by its last segment only.
func TestTableFileName(t *testing.T) {
	require.Equal(t, "data/a.parquet", TableFileName("s3://b/wh/t", "s3://b/wh/t/data/a.parquet"))
	require.Equal(t, "<outside>/a.parquet", TableFileName("s3://b/wh/t", "s3://b/other/a.parquet"))
}
