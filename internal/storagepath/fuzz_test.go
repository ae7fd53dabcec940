package storagepath

import (
	"strings"
	"testing"
)

// FuzzNormalize checks the properties the policy relies on: Normalize is
// idempotent; its output has no "..", "." or empty segment and no trailing
// slash; and Within on canonical locations is a string-prefix test at
// segment boundaries (a cut inside a segment is never a containing prefix).
// FuzzCanonical checks Normalize's shortcut: what canonical accepts, the
// full normalization returns unchanged.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"file:///a/b", "s3://b/k", "gs://b", "s3://B/k", "s3://b//k", "file:///a/./b", "s3://b/k/", "file:///", "s3://.b/k", "gs://b/a%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !canonical(in) {
			return
		}
		if n, err := normalize(in); err != nil || n != in {
			t.Fatalf("canonical(%q) but normalize gives %q, %v", in, n, err)
		}
	})
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"file:///a/b", "s3://b/k", "file:////a/./b/", "gs://b/a%2e%2e/x", "file:///a/%2e%2e", "abfss://lake@acc.dfs.x/k", "wasbs://lake@acc.blob.x/k/j"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := Normalize(in)
		if err != nil {
			return
		}
		if again, err := Normalize(n); err != nil || again != n {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, n, again, err)
		}
		start := authorityEnd(t, n)
		path := n[start:]
		if strings.HasSuffix(n, "/") {
			t.Fatalf("trailing slash: %q", n)
		}
		if path != "" {
			for _, seg := range strings.Split(path[1:], "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("segment %q in %q", seg, n)
				}
			}
		}
		if !Within(n, n) || !Within(in, n) || !Within(n, in) {
			t.Fatalf("a location is within itself: %q / %q", in, n)
		}
		for i := start + 1; i < len(n); i++ {
			p := n[:i]
			pn, err := Normalize(p)
			if err != nil {
				if Within(p, n) {
					t.Fatalf("Within(%q, %q) with a prefix that does not normalise", p, n)
				}
				continue
			}
			if pn != p {
				continue // a cut that is not canonical (e.g. the bucket part of a file path)
			}
			want := n[i] == '/'
			if got := Within(p, n); got != want {
				t.Fatalf("Within(%q, %q) = %v, want %v", p, n, got, want)
			}
			if Within(n, p) {
				t.Fatalf("Within(%q, %q): a longer location inside a shorter one", n, p)
			}
		}
	})
}

// authorityEnd returns the index where the path of a canonical location
// starts ("/..." or the end).
func authorityEnd(t *testing.T, n string) int {
	switch {
	case strings.HasPrefix(n, "file:///"):
		return len("file://")
	case strings.HasPrefix(n, "s3://"), strings.HasPrefix(n, "gs://"):
		i := strings.IndexByte(n[5:], '/')
		if i < 0 {
			return len(n)
		}
		return 5 + i
	case strings.HasPrefix(n, "abfss://"), strings.HasPrefix(n, "wasbs://"):
		i := strings.IndexByte(n[8:], '/')
		if i < 0 {
			return len(n)
		}
		return 8 + i
	}
	t.Fatalf("not canonical: %q", n)
	return 0
}
