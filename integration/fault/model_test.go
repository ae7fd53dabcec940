package fault

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// keySet is an immutable set of writer keys (indices), as a bitset. It is
// the model's state: the writer properties present on the table.
type keySet []uint64

func (s keySet) has(k int) bool { return k/64 < len(s) && s[k/64]&(1<<(k%64)) != 0 }

func (s keySet) with(k int) keySet {
	n := max(len(s), k/64+1)
	out := make(keySet, n)
	copy(out, s)
	out[k/64] |= 1 << (k % 64)
	return out
}

func (s keySet) equal(o keySet) bool {
	for i := range max(len(s), len(o)) {
		if s.word(i) != o.word(i) {
			return false
		}
	}
	return true
}

func (s keySet) word(i int) uint64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func (s keySet) len() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

func (s keySet) hash() uint64 {
	h := uint64(14695981039346656037)
	for i := range s {
		if w := s[i]; w != 0 {
			h = (h ^ w ^ uint64(i)<<58) * 1099511628211
		}
	}
	return h
}

// minus is s without the members of o.
func (s keySet) minus(o keySet) keySet {
	out := make(keySet, len(s))
	for i := range s {
		out[i] = s[i] &^ o.word(i)
	}
	return out
}

// keys lists the members in order.
func (s keySet) keys() []int {
	var out []int
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << b
		}
	}
	return out
}

// outcome is what a client may conclude from a commit response.
type outcome int

const (
	applied    outcome = iota // 200: the commit landed
	notApplied                // 4xx, 503, other 500, refused connection: nothing landed
	unknown                   // 500 CommitStateUnknown, reset, timeout: it may have landed
)

func (o outcome) String() string {
	return [...]string{"applied", "not-applied", "unknown"}[o]
}

// op is one recorded HTTP request: a set-properties commit of one key, or
// a loadTable that saw a set of keys.
type op struct {
	client   int
	write    bool
	key      int
	call     int64 // ns since the recorder's start
	ret      int64
	out      outcome // writes
	seen     keySet  // reads that returned 200
	status   int     // HTTP status, 0 on a transport error
	errType  string  // Iceberg error type or transport error text
	message  string  // Iceberg error message
	replica  int
	phase    string
	leak     string // an internal string found in an error answer
	readOK   bool
	metaLoc  string
	metadata []byte // final reads only
}

// recorder collects ops from all clients.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []op
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) now() int64 { return int64(time.Since(r.start)) }

func (r *recorder) add(o op) {
	r.mu.Lock()
	r.ops = append(r.ops, o)
	r.mu.Unlock()
}

func (r *recorder) snapshot() []op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

type modelIn struct {
	write bool
	key   int
}

// setModel is a register holding the set of committed writer keys: a
// commit adds its key, a read must return exactly the current set. Reads
// therefore see every commit acknowledged before they began and nothing
// that had not yet been called when they returned.
var setModel = porcupine.Model{
	Init: func() any { return keySet(nil) },
	Step: func(state, in, out any) (bool, any) {
		s, i := state.(keySet), in.(modelIn)
		if i.write {
			return true, s.with(i.key)
		}
		return s.equal(out.(keySet)), s
	},
	Equal: func(a, b any) bool { return a.(keySet).equal(b.(keySet)) },
	Hash:  func(s any) uint64 { return s.(keySet).hash() },
	DescribeOperation: func(in, out any) string {
		if i := in.(modelIn); i.write {
			return fmt.Sprintf("set %s", keyName(i.key))
		}
		return fmt.Sprintf("load -> %d keys", out.(keySet).len())
	},
	DescribeState: func(s any) string { return fmt.Sprintf("%d keys", s.(keySet).len()) },
}

// porcupineHistory turns the recorded ops into porcupine operations. Only
// commits that may have landed take part: acknowledged ones with their
// real interval, and unknown ones whose key is in the final state with an
// open-ended return (they took effect at some point after their call;
// setting a key twice is harmless, so an extra attempt that did not land
// is covered too). Unknown commits whose key never appeared did not land
// (keys are never removed), and failed reads observed nothing; both are
// left out.
func porcupineHistory(ops []op, final keySet) []porcupine.Operation {
	var end int64
	for _, o := range ops {
		end = max(end, o.ret)
	}
	var h []porcupine.Operation
	for _, o := range ops {
		var out any = keySet(nil)
		ret := o.ret
		switch {
		case o.write && o.out == applied:
		case o.write && o.out == unknown && final.has(o.key):
			ret = end + int64(time.Hour)
		case !o.write && o.readOK:
			out = o.seen
		default:
			continue
		}
		h = append(h, porcupine.Operation{ClientId: o.client, Input: modelIn{o.write, o.key}, Call: o.call, Output: out, Return: ret})
	}
	return h
}

// TestSetModel shows that the check can fail: stale reads, reads of the
// future and a read that forgets a key are rejected, and an unknown commit
// counts only when its key is in the final state.
func TestSetModel(t *testing.T) {
	w := func(k int, call, ret int64, out outcome) op {
		return op{write: true, key: k, call: call, ret: ret, out: out}
	}
	r := func(call, ret int64, keys ...int) op {
		var s keySet
		for _, k := range keys {
			s = s.with(k)
		}
		return op{client: 1, call: call, ret: ret, readOK: true, seen: s}
	}
	final0 := keySet(nil).with(0)
	cases := []struct {
		name  string
		ops   []op
		final keySet
		want  porcupine.CheckResult
	}{
		{"read after ack sees the key", []op{w(0, 0, 10, applied), r(20, 30, 0)}, final0, porcupine.Ok},
		{"stale read after ack", []op{w(0, 0, 10, applied), r(20, 30)}, final0, porcupine.Illegal},
		{"concurrent read may miss the key", []op{w(0, 0, 10, applied), r(5, 8)}, final0, porcupine.Ok},
		{"read of a commit not yet called", []op{r(0, 5, 0), w(0, 10, 20, applied)}, final0, porcupine.Illegal},
		{"unknown commit lands late", []op{w(0, 0, 10, unknown), r(20, 30), r(40, 50, 0)}, final0, porcupine.Ok},
		{"unknown commit that never landed is seen", []op{w(0, 0, 10, unknown), r(20, 30, 0)}, nil, porcupine.Illegal},
		{"refused commit is seen", []op{w(0, 0, 10, notApplied), r(20, 30, 0)}, final0, porcupine.Illegal},
		{"a key disappears", []op{w(0, 0, 10, unknown), r(20, 30, 0), r(40, 50)}, final0, porcupine.Illegal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := porcupine.CheckOperationsTimeout(setModel, porcupineHistory(c.ops, c.final), time.Second); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
