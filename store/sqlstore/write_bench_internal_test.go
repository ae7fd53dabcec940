package sqlstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakehold/catalog/store"
)

// BenchmarkObjectWrites times the store's part of a createTable (create:
// the overlap check and insert in one transaction) and of a commit (swap:
// the pointer swap) on SQLite, without the HTTP, service and file work
// around them, whose kernel time makes their CPU per op noisy on shared
// cores.
func BenchmarkObjectWrites(b *testing.B) {
	ctx := context.Background()
	s := openSQLiteStore(b)
	if err := s.WarehouseCreate(ctx, &store.Warehouse{Name: "wh", Location: "s3://bucket/wh"}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.NamespaceCreate(ctx, "wh", []string{"ns"}, nil); err != nil {
		b.Fatal(err)
	}
	meta := []byte(`{"format-version":2}`)
	n := 0
	create := func() *store.Object {
		n++
		loc := fmt.Sprintf("s3://bucket/wh/ns/t%d", n)
		o := &store.Object{Warehouse: "wh", Namespace: []string{"ns"}, Name: fmt.Sprintf("t%d", n), Kind: store.KindTable,
			Location: loc, MetadataLocation: loc + "/metadata/00000.metadata.json", Metadata: meta, FormatVersion: 2}
		if err := s.ObjectCreate(ctx, o); err != nil {
			b.Fatal(err)
		}
		return o
	}
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			create()
		}
	})
	b.Run("swap", func(b *testing.B) {
		o := create()
		cur := o.MetadataLocation
		for i := 0; b.Loop(); i++ {
			next := fmt.Sprintf("%s/metadata/%05d.metadata.json", o.Location, i+1)
			err := s.ObjectsSwap(ctx, []store.Swap{{ObjectID: o.ID, ExpectedMetadataLocation: cur,
				NewMetadataLocation: next, NewMetadata: meta, NewFormatVersion: 2}})
			if err != nil {
				b.Fatal(err)
			}
			cur = next
		}
	})
}
