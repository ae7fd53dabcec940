package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/internal/tablemeta"
)

// BenchmarkCommitFloor is the part of a one-property commit on a table with
// n snapshots that the spec itself asks for: a new metadata file holding
// the whole table. "write" writes the document's bytes to a new file;
// "encode+write" first builds and encodes the new document the way a
// commit does (the previous snapshots copied as bytes). Set against
// BenchmarkCommit/snapshots=N, which does this and everything else a
// commit does over HTTP, it shows how far above that floor a commit sits
// and how much of the 1 → 10k growth the floor itself explains.
func BenchmarkCommitFloor(b *testing.B) {
	for _, n := range []int{1, 10_000} {
		dir := b.TempDir()
		loc := manySnapshotsMetadata(b, dir, n)
		data, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
		require.NoError(b, err)
		prev, err := tablemeta.NewEntry(data)
		require.NoError(b, err)
		info := []tablemeta.UpdateInfo{{Action: "set-properties"}}
		out := filepath.Join(dir, "out")
		require.NoError(b, os.MkdirAll(out, 0o755))

		b.Run(fmt.Sprintf("snapshots=%d/write", n), func(b *testing.B) {
			w := newFileWriter(b, out)
			b.SetBytes(int64(len(data)))
			b.ReportMetric(float64(len(data)), "doc-bytes")
			for range b.N {
				w.write(data)
			}
			b.StopTimer()
			w.report()
		})
		b.Run(fmt.Sprintf("snapshots=%d/encode+write", n), func(b *testing.B) {
			w := newFileWriter(b, out)
			b.ReportAllocs()
			size := 0
			for i := range b.N {
				ups := table.Updates{table.NewSetPropertiesUpdate(map[string]string{"k": strconv.Itoa(i)})}
				meta, _, err := tablemeta.Build(prev, loc, false, ups, info)
				if err != nil {
					b.Fatal(err)
				}
				enc, ok, err := tablemeta.Encode(meta, prev.Version, prev)
				if err != nil || !ok {
					b.Fatalf("encode: ok=%v err=%v", ok, err)
				}
				size = len(enc.Data)
				w.write(enc.Data)
			}
			b.StopTimer()
			w.report()
			b.SetBytes(int64(size))
			b.ReportMetric(float64(size), "doc-bytes")
		})
		// The same over HTTP on loopback, the whole document sent back as a
		// commit's response carries it: the floor of a commit over the
		// REST API, with nothing else (no store, no check, no pipeline).
		b.Run(fmt.Sprintf("snapshots=%d/encode+write+respond", n), func(b *testing.B) {
			w := newFileWriter(b, out)
			var i atomic.Int64
			hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				ups := table.Updates{table.NewSetPropertiesUpdate(map[string]string{"k": strconv.FormatInt(i.Add(1), 10)})}
				meta, _, err := tablemeta.Build(prev, loc, false, ups, info)
				if err != nil {
					http.Error(rw, err.Error(), 500)
					return
				}
				enc, _, err := tablemeta.Encode(meta, prev.Version, prev)
				if err != nil {
					http.Error(rw, err.Error(), 500)
					return
				}
				w.write(enc.Data)
				rw.Header().Set("Content-Type", "application/json")
				rw.Write(enc.Data)
			}))
			defer hs.Close()
			body := []byte(`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`)
			client := hs.Client()
			w.start = processCPU()
			for range b.N {
				resp, err := client.Post(hs.URL, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.StopTimer()
			w.report()
		})
	}
}

// fileWriter writes each document to a new file, as a commit does, and
// deletes them in batches outside the timer and the CPU count (a
// 10k-snapshot document is megabytes: thousands would fill the disk).
type fileWriter struct {
	b        *testing.B
	dir      string
	n        int
	files    []string
	start    time.Duration // process CPU when the benchmark started
	excluded time.Duration // CPU spent deleting
}

func newFileWriter(b *testing.B, dir string) *fileWriter {
	return &fileWriter{b: b, dir: dir, start: processCPU()}
}

// report deletes what is left and reports the CPU per operation, the
// deletions left out.
func (w *fileWriter) report() {
	w.clean()
	if w.b.N > 0 {
		cpu := processCPU() - w.start - w.excluded
		w.b.ReportMetric(float64(cpu)/float64(time.Microsecond)/float64(w.b.N), "cpu-µs/op")
	}
}

func (w *fileWriter) write(data []byte) {
	w.n++
	name := filepath.Join(w.dir, fmt.Sprintf("%05d.metadata.json", w.n))
	if err := os.WriteFile(name, data, 0o644); err != nil {
		w.b.Fatal(err)
	}
	w.files = append(w.files, name)
	if len(w.files) == 64 {
		w.b.StopTimer()
		w.clean()
		w.b.StartTimer()
	}
}

func (w *fileWriter) clean() {
	t0 := processCPU()
	for _, f := range w.files {
		os.Remove(f)
	}
	w.files = w.files[:0]
	w.excluded += processCPU() - t0
}
