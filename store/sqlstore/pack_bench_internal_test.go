package sqlstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// bigMetadata builds a table metadata document shaped like a long-lived
// table's: n snapshots with random ids, each naming a manifest list with a
// random UUID, as writers do.
func bigMetadata(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
	}
	var sb strings.Builder
	sb.WriteString(`{"format-version":2,"table-uuid":"` + uuid() + `","location":"s3://bucket/warehouse/ns/t","last-sequence-number":` + fmt.Sprint(n) + `,"snapshots":[`)
	ts := int64(1_700_000_000_000)
	parent := int64(0)
	for i := 1; i <= n; i++ {
		id := r.Int64()
		ts += r.Int64N(60_000)
		if i > 1 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"snapshot-id":%d,"parent-snapshot-id":%d,"sequence-number":%d,"timestamp-ms":%d,"manifest-list":"s3://bucket/warehouse/ns/t/metadata/snap-%d-1-%s.avro","summary":{"operation":"append","added-data-files":"%d","added-records":"%d","total-records":"%d"},"schema-id":0}`,
			id, parent, i, ts, id, uuid(), 1+r.IntN(5), r.IntN(100_000), i*50_000)
		parent = id
	}
	sb.WriteString(`]}`)
	return []byte(sb.String())
}

// BenchmarkPack measures compressing and expanding the store's copy of a
// 10,000-snapshot document; ratio is stored bytes over document bytes.
func BenchmarkPack(b *testing.B) {
	doc := bigMetadata(10_000)
	packed := pack(doc)
	b.Run("pack", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			packed = pack(doc)
		}
		b.ReportMetric(float64(len(packed))/float64(len(doc)), "ratio")
	})
	b.Run("unpack", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := unpack(packed); err != nil {
				b.Fatal(err)
			}
		}
	})
}
