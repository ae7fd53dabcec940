package sqlstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakehold/catalog/store"
)

// BenchmarkLookups times the hot lookups of the first and the last table
// of a warehouse of 10,000 and of 100,000 tables (not with -short; its
// set-up takes some 15 s per database), on SQLite and on Postgres (with
// CATALOG_TEST_DATABASE_URL): a lookup whose plan walks the warehouse's
// objects costs more for the last table than for the first. Compare
// .../first with .../last; they should be within 1.5x.
func BenchmarkLookups(b *testing.B) {
	sizes := []int{10_000}
	if !testing.Short() {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("sqlite/%dk", n/1000), func(b *testing.B) {
			s := openSQLiteStore(b)
			seedTables(b, s, n)
			benchLookups(b, s, n)
		})
		b.Run(fmt.Sprintf("postgres/%dk", n/1000), func(b *testing.B) {
			s := openPostgresStore(b)
			seedTables(b, s, n)
			benchLookups(b, s, n)
		})
	}
}

// benchLookups runs each operation on the first table and then on the
// last, the reads before the commits: the dead rows and autovacuum work a
// run of commits leaves behind would otherwise slow whatever runs next.
func benchLookups(b *testing.B, s *Store, n int) {
	ctx := context.Background()
	ops := []struct {
		name string
		run  func(b *testing.B, ref store.ObjectRef)
	}{
		{"load", func(b *testing.B, ref store.ObjectRef) {
			for range b.N {
				if _, err := s.ObjectGet(ctx, ref); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"exists", func(b *testing.B, ref store.ObjectRef) {
			for range b.N {
				if _, err := s.ObjectMetadataLocation(ctx, ref); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"list", func(b *testing.B, ref store.ObjectRef) {
			for range b.N {
				names, _, err := s.ObjectList(ctx, seedWarehouse, ref.Namespace, store.KindTable, store.Page{Size: 50})
				if err != nil || len(names) != 50 {
					b.Fatal(len(names), err)
				}
			}
		}},
		{"commit", func(b *testing.B, ref store.ObjectRef) { benchSwap(b, s, ref) }},
	}
	for _, op := range ops {
		for _, pos := range []struct {
			name string
			i    int
		}{{"first", 0}, {"last", n - 1}} {
			b.Run(op.name+"/"+pos.name, func(b *testing.B) { op.run(b, seedRef(pos.i)) })
		}
	}
}

// benchSwap times the single-table commit's compare-and-swap, each
// iteration moving the pointer on from the one the last one wrote.
func benchSwap(b *testing.B, s *Store, ref store.ObjectRef) {
	ctx := context.Background()
	o, err := s.ObjectGet(ctx, ref)
	if err != nil {
		b.Fatal(err)
	}
	sw := store.Swap{ObjectID: o.ID, NewMetadata: seedMetadata, NewFormatVersion: 2}
	s.PrepareSwap(&sw)
	cur := o.MetadataLocation
	b.ResetTimer()
	for i := range b.N {
		sw.ExpectedMetadataLocation = cur
		sw.NewMetadataLocation = fmt.Sprintf("%s/metadata/b%d-%d.metadata.json", o.Location, b.N, i)
		if err := s.ObjectsSwap(ctx, []store.Swap{sw}); err != nil {
			b.Fatal(err)
		}
		cur = sw.NewMetadataLocation
	}
}
