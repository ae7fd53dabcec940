package tables

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakehold/catalog/internal/tablemeta"
)

// refsOnlyReference is the obvious implementation refsOnly must agree with
// (up to key order and whitespace): decode everything, filter, re-encode.
// Snapshot ids are read as encoding/json reads them into a struct.
func refsOnlyReference(data []byte) (any, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	type idOnly struct {
		SnapshotID int64 `json:"snapshot-id"`
	}
	heads := map[int64]bool{}
	if raw, ok := doc["refs"]; ok {
		var refs map[string]idOnly
		if err := json.Unmarshal(raw, &refs); err != nil {
			return nil, err
		}
		for _, r := range refs {
			heads[r.SnapshotID] = true
		}
	}
	if raw, ok := doc["snapshots"]; ok {
		var snaps []json.RawMessage
		if err := json.Unmarshal(raw, &snaps); err != nil {
			return nil, err
		}
		if snaps != nil {
			kept := []json.RawMessage{}
			for _, sn := range snaps {
				var id idOnly
				if err := json.Unmarshal(sn, &id); err != nil {
					return nil, err
				}
				if heads[id.SnapshotID] {
					kept = append(kept, sn)
				}
			}
			doc["snapshots"], _ = json.Marshal(kept)
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(out, &v)
	return v, err
}

func TestRefsOnly(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want string
		same     bool // refsOnly returns its input unchanged
	}{
		"no snapshots":  {in: `{"a":1}`, same: true},
		"null list":     {in: `{"snapshots":null,"refs":{}}`, same: true},
		"empty list":    {in: `{"snapshots":[],"refs":{}}`, same: true},
		"all heads":     {in: `{"snapshots":[{"snapshot-id":1}],"refs":{"main":{"snapshot-id":1,"type":"branch"}}}`, same: true},
		"drops history": {in: `{"z":0,"snapshots":[{"snapshot-id":1},{"snapshot-id":2},{"snapshot-id":3}],"refs":{"main":{"snapshot-id":3}},"a":[1]}`, want: `{"z":0,"snapshots":[{"snapshot-id":3}],"refs":{"main":{"snapshot-id":3}},"a":[1]}`},
		"refs first, tag kept": {in: `{"refs":{"t":{"snapshot-id":1,"type":"tag"},"main":{"snapshot-id":3}},"snapshots":[{"snapshot-id":1},{"snapshot-id":2},{"snapshot-id":3}]}`,
			want: `{"refs":{"t":{"snapshot-id":1,"type":"tag"},"main":{"snapshot-id":3}},"snapshots":[{"snapshot-id":1},{"snapshot-id":3}]}`},
		"no refs drops all": {in: `{"snapshots":[{"snapshot-id":1}]}`, want: `{"snapshots":[]}`},
		"pretty input": {in: "{\n \"snapshots\" : [\n  {\"snapshot-id\": 1, \"summary\": {\"refs\": \"x\"}} ,\n  {\"snapshot-id\": 2}\n ],\n \"refs\": {\"main\": {\"snapshot-id\": 2}}\n}",
			want: "{\n \"snapshots\" : [{\"snapshot-id\": 2}],\n \"refs\": {\"main\": {\"snapshot-id\": 2}}\n}"},
	} {
		t.Run(name, func(t *testing.T) {
			in := []byte(tc.in)
			out, err := tablemeta.RefsOnly(in)
			if err != nil {
				t.Fatal(err)
			}
			if tc.same {
				if &out[0] != &in[0] || len(out) != len(in) {
					t.Fatalf("want the input itself, got %s", out)
				}
				return
			}
			if string(out) != tc.want {
				t.Fatalf("got  %s\nwant %s", out, tc.want)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"snapshots":{}}`, `{"snapshots":[1]}`, `{"refs":[]}`, `{"a":`, `{"snapshots":[{"snapshot-id":"x"}]}`} {
		if _, err := tablemeta.RefsOnly([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestRefsDocument: the derived document matches refsOnly on real
// metadata; a table whose snapshots all head a ref keeps one copy.
func TestRefsDocument(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///x", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := table.MetadataBuilderFromBase(meta, "")
	var parent *int64
	for i := int64(1); i <= 5; i++ {
		snap := &table.Snapshot{SnapshotID: i, ParentSnapshotID: parent, SequenceNumber: i, TimestampMs: time.Now().UnixMilli() + i,
			ManifestList: fmt.Sprintf("file:///x/metadata/snap-%d.avro", i), Summary: &table.Summary{Operation: table.OpAppend}, SchemaID: &sc.ID}
		if err := b.AddSnapshot(snap); err != nil {
			t.Fatal(err)
		}
		parent = &snap.SnapshotID
	}
	if err := b.SetSnapshotRef("main", 5, table.BranchRef); err != nil {
		t.Fatal(err)
	}
	if err := b.SetSnapshotRef("old", 2, table.TagRef); err != nil {
		t.Fatal(err)
	}
	built, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(built)
	got := tablemeta.RefsDocument(built, data)
	var doc struct {
		Snapshots []struct {
			ID int64 `json:"snapshot-id"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(got, &doc); err != nil || len(doc.Snapshots) != 2 || doc.Snapshots[0].ID != 2 || doc.Snapshots[1].ID != 5 {
		t.Fatalf("want snapshots 2 and 5, got %+v (%v)", doc.Snapshots, err)
	}
	if strings.TrimSuffix(string(data), "}") == strings.TrimSuffix(string(got), "}") {
		t.Fatal("nothing dropped")
	}
	fresh, _ := json.Marshal(meta)
	if out := tablemeta.RefsDocument(meta, fresh); &out[0] != &fresh[0] {
		t.Fatal("a table without history needs no second copy")
	}
}

// FuzzRefsOnly: whatever the input, refsOnly either fails or returns valid
// JSON equal (as a value) to the reference implementation's answer.
func FuzzRefsOnly(f *testing.F) {
	f.Add([]byte(`{"z":0,"snapshots":[{"snapshot-id":1},{"snapshot-id":2}],"refs":{"main":{"snapshot-id":2}}}`))
	f.Add([]byte(`{"snapshots":null}`))
	f.Add([]byte("{ \"snapshots\" :[ {\"snapshot-id\":1} , {\"snapshot-id\":1}],\"refs\":{\"a\":{\"snapshot-id\":1}} }"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := tablemeta.RefsOnly(data)
		if err != nil {
			return
		}
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("invalid JSON out of %q: %s", data, out)
		}
		want, err := refsOnlyReference(data)
		if err != nil {
			t.Fatalf("refsOnly accepted what the reference cannot decode: %q", data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("in %q\ngot  %s\nwant %v", data, out, want)
		}
	})
}
