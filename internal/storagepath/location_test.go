package storagepath

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	ok := []struct{ in, want string }{
		{"file:///srv/wh", "file:///srv/wh"},
		{"file:///srv/wh/", "file:///srv/wh"},
		{"file:/srv/wh", "file:///srv/wh"},
		{"FILE:///srv/wh", "file:///srv/wh"},
		{"file://localhost/srv/wh", "file:///srv/wh"},
		{"file:////srv//wh/./t/", "file:///srv/wh/t"},
		{"file:///srv/a%20b/c", "file:///srv/a b/c"},
		{"file:///srv/a%3Fb", "file:///srv/a%3Fb"},
		{"file:///srv/100%25", "file:///srv/100%25"},
		{"file:///srv/%2e/x", "file:///srv/x"},
		{"s3://bucket", "s3://bucket"},
		{"s3://bucket/", "s3://bucket"},
		{"S3://bucket/wh/t//", "s3://bucket/wh/t"},
		{"gs://my_bucket.x/a/b", "gs://my_bucket.x/a/b"},
		{"s3://b/data/s=a%20b/f.parquet", "s3://b/data/s=a%20b/f.parquet"},
		{"s3://b/k%zz", "s3://b/k%zz"},
		{"abfss://lake@acct1.dfs.core.windows.net/wh/", "abfss://lake@acct1.dfs.core.windows.net/wh"},
		{"ABFSS://lake@acct1.dfs.core.windows.net", "abfss://lake@acct1.dfs.core.windows.net"},
		{"wasbs://my-lake@acct1.blob.core.chinacloudapi.cn/a/b", "wasbs://my-lake@acct1.blob.core.chinacloudapi.cn/a/b"},
	}
	for _, c := range ok {
		got, err := Normalize(c.in)
		if err != nil || got != c.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, reason string }{
		{"", "scheme"},
		{"../../x", "scheme"},
		{"/etc/passwd", "scheme"},
		{"relative/dir:x", "scheme"},
		{"ftp://x/y", "scheme must be file, s3, gs, abfss or wasbs"},
		{"file:relative", "absolute"},
		{"file://host/x", "host"},
		{"file:///", "root"},
		{"file://", "root"},
		{"file:////", "root"},
		{"file:///srv/wh/../../etc", "'..'"},
		{"file:///srv/%2e%2e/etc", "'..'"},
		{"file:///srv/a%2Fb", "escaped"},
		{"file:///srv/a%00", "escaped"},
		{"file:///srv/a%", "percent"},
		{"file:///srv/a?b", "'?'"},
		{"file:///srv/a#b", "'?'"},
		{"file:///srv/a\\b", "'?'"},
		{"file:///srv/a\nb", "control"},
		{"s3://", "bucket"},
		{"s3:///key", "bucket"},
		{"s3:bucket/key", "authority"},
		{"s3://Bucket/key", "lowercase"},
		{"s3://user@bucket/key", "lowercase"},
		{"s3://bucket:9000/key", "lowercase"},
		{"s3://-bucket/key", "lowercase"},
		{"s3://b/a//c", "empty"},
		{"s3://b//a", "empty"},
		{"s3://b/a/./c", "'.'"},
		{"s3://b/a/../c", "'..'"},
		{"gs://b/a/%2E%2E/c", "'..'"},
		{"abfs://lake@acct1.dfs.core.windows.net/wh", "TLS"},
		{"wasb://lake@acct1.blob.core.windows.net/wh", "TLS"},
		{"abfss://acct1.dfs.core.windows.net/wh", "container@"},
		{"abfss://@acct1.dfs.core.windows.net/wh", "container@"},
		{"abfss:lake@acct1.dfs.core.windows.net/wh", "authority"},
		{"abfss://Lake@acct1.dfs.core.windows.net/wh", "container names"},
		{"abfss://la@acct1.dfs.core.windows.net/wh", "container names"},
		{"abfss://a--b@acct1.dfs.core.windows.net/wh", "container names"},
		{"abfss://lake@Acct1.dfs.core.windows.net/wh", "account host"},
		{"abfss://lake@acct1.file.core.windows.net/wh", "account host"},
		{"abfss://lake@acct1.dfs/wh", "account host"},
		{"abfss://lake@acct_1.dfs.core.windows.net/wh", "account host"},
		{"abfss://lake@acct1.dfs.core..net/wh", "account host"},
		{"abfss://lake@acct1.dfs.core.windows.net:443/wh", "account host"},
		{"abfss://lake@acct1.dfs.core.windows.net/wh/../x", "'..'"},
		{"wasbs://lake@acct1.blob.core.windows.net/wh//x", "empty"},
	}
	for _, c := range bad {
		got, err := Normalize(c.in)
		var le *Error
		if !errors.As(err, &le) {
			t.Errorf("Normalize(%q) = %q, %v; want an *Error", c.in, got, err)
			continue
		}
		if !strings.Contains(le.Reason, c.reason) {
			t.Errorf("Normalize(%q): reason %q does not mention %q", c.in, le.Reason, c.reason)
		}
		if len(c.in) > 8 && strings.Contains(le.Reason, c.in) {
			t.Errorf("Normalize(%q): the reason echoes the location", c.in)
		}
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		prefix, loc string
		want        bool
	}{
		{"file:///wh", "file:///wh", true},
		{"file:///wh", "file:///wh/t", true},
		{"file:///wh/", "file:////wh//t/", true},
		{"file:///wh", "file:///wh2/t", false},
		{"file:///wh", "file:///w", false},
		{"file:///wh/ns", "file:///wh/ns/../ns/t", false}, // refused, not resolved
		{"file:///wh", "file:///wh/%74", true},
		{"file:///wh", "file:///etc", false},
		{"file:///wh", "../../etc", false},
		{"s3://b", "s3://b/anything", true},
		{"s3://b", "s3://bb/x", false},
		{"s3://b/wh", "s3://other/wh/t", false},
		{"s3://b/wh", "gs://b/wh/t", false},
		{"s3://b/wh", "s3://b/wh//t", false},
		{"s3://b/wh", "S3://b/wh/t", true},
		{"bad", "s3://b/wh", false},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "abfss://lake@acct1.dfs.core.windows.net/wh/t", true},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "wasbs://lake@acct1.blob.core.windows.net/wh/t", true},
		{"wasbs://lake@acct1.blob.core.windows.net/wh", "abfss://lake@acct1.dfs.core.windows.net/wh", true},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "abfss://lake@acct2.dfs.core.windows.net/wh/t", false},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "abfss://other@acct1.dfs.core.windows.net/wh/t", false},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "abfss://lake@acct1.dfs.core.chinacloudapi.cn/wh/t", false},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "abfss://lake@acct1.dfs.core.windows.net/wh2", false},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "s3://lake/wh/t", false},
	}
	for _, c := range cases {
		if got := Within(c.prefix, c.loc); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.prefix, c.loc, got, c.want)
		}
	}
	if !Overlap("file:///wh/t/sub", "file:////wh/t") || Overlap("file:///wh/t1", "file:///wh/t2") {
		t.Error("Overlap")
	}
}

func TestRel(t *testing.T) {
	cases := []struct{ prefix, loc, rel string }{
		{"file:///wh/t", "file:///wh/t/metadata/v1.json", "metadata/v1.json"},
		{"file:///wh/t", "file:///wh/t", ""},
		{"s3://b", "s3://b/x/y", "x/y"},
		{"abfss://lake@acct1.dfs.core.windows.net/wh", "wasbs://lake@acct1.blob.core.windows.net/wh/t/m.json", "t/m.json"},
	}
	for _, c := range cases {
		if rel, ok := Rel(c.prefix, c.loc); !ok || rel != c.rel {
			t.Errorf("Rel(%q, %q) = %q, %v; want %q", c.prefix, c.loc, rel, ok, c.rel)
		}
	}
	if rel, ok := Rel("file:///wh/t", "file:///etc/shadow"); ok || rel != "" {
		t.Errorf("Rel outside = %q, %v", rel, ok)
	}
}

func TestSet(t *testing.T) {
	s, err := NewSet("file:///wh/", "s3://extra/landing")
	if err != nil {
		t.Fatal(err)
	}
	for loc, want := range map[string]bool{
		"file:///wh/t": true, "file:///wh": true, "s3://extra/landing/x": true,
		"s3://extra/other": false, "file:///etc": false, "x": false,
	} {
		if s.Contains(loc) != want {
			t.Errorf("Contains(%q) = %v", loc, !want)
		}
	}
	if s.ContainsBelow("file:///wh") || !s.ContainsBelow("file:///wh/t") {
		t.Error("ContainsBelow")
	}
	o, _ := NewSet("s3://extra")
	if !s.Overlaps(o) {
		t.Error("Overlaps: s3://extra contains s3://extra/landing")
	}
	o, _ = NewSet("file:///wh2", "s3://extra/landing2")
	if s.Overlaps(o) {
		t.Error("Overlaps: siblings do not overlap")
	}
	if _, err := NewSet("file:///ok", "file:///"); err == nil {
		t.Error("NewSet accepts a root")
	}
}

// TestCanonicalShortcut pins which inputs skip the full normalization: the
// common canonical shapes do, anything that needs work or care does not.
func TestCanonicalShortcut(t *testing.T) {
	for in, want := range map[string]bool{
		"file:///a/b": true, "s3://b/k/j": true, "gs://b": true, "s3://b-1.x_y/k": true,
		"file://localhost/a": false, "file:/a": false, "file:///": false, "FILE:///a": false,
		"s3://B/k": false, "s3://b//k": false, "s3://b/k/": false, "s3://.b/k": false,
		"file:///a/./b": false, "file:///a/../b": false, "gs://b/a%2e": false,
		"abfss://c@a.dfs.core.windows.net/k": false, "s3://b/k?x": false,
	} {
		if got := canonical(in); got != want {
			t.Errorf("canonical(%q) = %v, want %v", in, got, want)
		}
	}
}
