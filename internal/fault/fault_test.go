package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryKindHasAStatus: each kind maps to a status and an Iceberg type
// of its own, so that a new kind without a row fails here instead of
// answering status 0.
func TestEveryKindHasAStatus(t *testing.T) {
	seen := map[string]Kind{}
	for k := Kind(0); k < numKinds; k++ {
		code, typ := Status(k)
		require.True(t, code >= 400 && code <= 599, "kind %d has status %d", k, code)
		require.True(t, typ == "InternalServerError" || strings.HasSuffix(typ, "Exception"), "kind %d has type %q", k, typ)
		if prev, dup := seen[typ]; dup {
			t.Errorf("kinds %d and %d share the type %s", prev, k, typ)
		}
		seen[typ] = k
	}
}

// TestStatus: the rows clients and the compatibility kit depend on, and
// the fallback for a value that is no kind.
func TestStatus(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		code int
		typ  string
	}{
		{CommitFailed, 409, "CommitFailedException"},
		{CommitStateUnknown, 500, "CommitStateUnknownException"},
		{Unavailable, 503, "ServiceUnavailableException"},
		{NoSuchTable, 404, "NoSuchTableException"},
		{Unauthorized, 401, "NotAuthorizedException"},
		{-1, 500, "InternalServerError"},
		{numKinds, 500, "InternalServerError"},
	} {
		code, typ := Status(c.kind)
		require.Equal(t, c.code, code, "kind %d", c.kind)
		require.Equal(t, c.typ, typ, "kind %d", c.kind)
	}
}

// TestStatusOf: wrapped catalog errors keep their status; anything else
// is a 500.
func TestDecision(t *testing.T) {
	for status, want := range map[int]string{200: "allowed", 204: "allowed", 304: "allowed", 400: "failed",
		401: "denied", 403: "denied", 404: "failed", 409: "failed", 500: "failed", 503: "failed"} {
		require.Equal(t, want, Decision(status), "status %d", status)
	}
}

func TestStatusOf(t *testing.T) {
	require.Equal(t, 403, StatusOf(fmt.Errorf("vend: %w", New(Forbidden, "no"))))
	require.Equal(t, 500, StatusOf(errors.New("boom")))
	require.Equal(t, Internal, KindOf(errors.New("boom")))
	require.Equal(t, NoSuchView, KindOf(fmt.Errorf("x: %w", New(NoSuchView, "gone"))))
}

// TestErrorText: the cause is part of Error() only for internal errors,
// whose text is logged, never served.
func TestErrorText(t *testing.T) {
	cause := errors.New("disk on fire")
	require.Equal(t, "metadata: disk on fire", Wrap(Internal, cause, "metadata").Error())
	require.Equal(t, "Table t is gone", Wrap(NoSuchTable, cause, "Table %s is gone", "t").Error())
	require.ErrorIs(t, Wrap(NoSuchTable, cause, "x"), cause)
}

// TestClientText: decoder errors lose Go type names and package prefixes;
// our own errors keep their message.
func TestClientText(t *testing.T) {
	require.Equal(t, "", ClientText(nil))
	require.Equal(t, "Table t is gone", ClientText(fmt.Errorf("load: %w", New(NoSuchTable, "Table t is gone"))))
	var v struct{ N int }
	err := json.Unmarshal([]byte(`{"N":`), &v)
	require.Error(t, err)
	err = json.Unmarshal([]byte(`{"N":"x"}`), &v)
	txt := ClientText(err)
	require.Contains(t, txt, `"N"`)
	require.NotContains(t, txt, "Go struct field")
	require.Equal(t, "malformed JSON at byte 1", ClientText(json.Unmarshal([]byte(`}`), &v)))
	_, err = strconv.Atoi("12a")
	require.Equal(t, `"12a" is not a valid number`, ClientText(err))
	require.Equal(t, "cannot unmarshal", ClientText(errors.New("json: cannot unmarshal")))
}

// TestNoOtherStatusTable: no package outside this one spells an Iceberg
// error type, so that every error body (server, console, audit) takes its
// status and type from Status. Generated code and tests are exempt.
func TestNoOtherStatusTable(t *testing.T) {
	var types []string
	for k := Kind(0); k < numKinds; k++ {
		_, typ := Status(k)
		types = append(types, `"`+typ+`"`)
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "openapi" || rel == filepath.Join("internal", "fault") || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, typ := range types {
			if strings.Contains(string(src), typ) {
				t.Errorf("%s spells the error type %s: use fault.Status", rel, typ)
			}
		}
		return nil
	})
	require.NoError(t, err)
}
