package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lakehold/catalog/internal/storage"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store/sqlstore"
)

func FuzzDecodeNamespace(f *testing.F) {
	for _, s := range []string{"a", "a\x1fb", "", "\x1f", "a\x1f", "dotted.name", "with/slash", "ünï"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		levels, err := decodeNamespace(p)
		if err != nil {
			return
		}
		if strings.Join(levels, namespaceSep) != p {
			t.Fatalf("levels %q do not rebuild %q", levels, p)
		}
		for _, l := range levels {
			if l == "" {
				t.Fatalf("empty level accepted in %q", p)
			}
		}
	})
}

// FuzzNamespacePath sends arbitrary escaped namespace segments through the
// real router: every answer is a 200 or an Iceberg error, never a panic or a
// 5xx, and a namespace created through the body is found again through any
// encoding of its path.
func FuzzNamespacePath(f *testing.F) {
	st, err := sqlstore.OpenSQLite(f.Context(), filepath.Join(f.TempDir(), "c.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, storage.NewProvider(), service.Options{Logger: quiet})
	if _, err := svc.CreateWarehouse(f.Context(), "wh", "file://"+f.TempDir(), nil); err != nil {
		f.Fatal(err)
	}
	h := New(svc, Config{DefaultWarehouse: "wh", Logger: quiet})
	for _, s := range []string{"a", "a b", "a+b", "a%2Fb", "x.y", "%C3%BC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, level string) {
		if level == "" || strings.ContainsAny(level, "\x1f") || len(level) > 200 || !utf8.ValidString(level) {
			return
		}
		body := `{"namespace":[` + quoteJSON(level) + `]}`
		rec := httptest.NewRecorder()
		// A loopback Host and a JSON body, as the cross-site rules want
		// (crosssite.go): httptest's default Host is example.com.
		req := httptest.NewRequest("POST", "http://127.0.0.1/v1/wh/namespaces", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("create %q: %d %s", level, rec.Code, rec.Body)
		}
		if rec.Code != 200 && rec.Code != 409 {
			return
		}
		// The two encodings clients use: Java's URLEncoder (space as '+',
		// '+' as %2B) and Python's quote(safe="") (space as %20).
		for _, enc := range []string{url.QueryEscape(level), strings.ReplaceAll(url.PathEscape(level), "+", "%2B")} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/v1/wh/namespaces/"+enc, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("namespace %q not found via %q: %d %s", level, enc, rec.Code, rec.Body)
			}
		}
	})
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
