package store_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lakehold/catalog/store"
)

// TestTracedCoversStore: every method of store.Store is declared on the
// traced wrapper itself, not promoted from the wrapped store, so that a
// method added to the interface cannot go untraced unnoticed.
func TestTracedCoversStore(t *testing.T) {
	declared := map[string]bool{}
	fset := token.NewFileSet()
	for _, file := range []string{"traced.go", "traced_methods.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok && star.X.(*ast.Ident).Name == "traced" {
				declared[fn.Name.Name] = true
			}
		}
	}
	iface := reflect.TypeFor[store.Store]()
	for i := range iface.NumMethod() {
		name := iface.Method(i).Name
		require.True(t, declared[name], "store.Store.%s has no traced method (store/traced_methods.go)", name)
	}
}

// fakeStore answers two calls; every other method is unset.
type fakeStore struct{ store.Store }

func (fakeStore) WarehouseGet(context.Context, string) (*store.Warehouse, error) {
	return nil, fmt.Errorf("%w: warehouse lake-secret-name", store.ErrNotFound)
}

func (fakeStore) ObjectsSwap(context.Context, []store.Swap) error {
	return fmt.Errorf("%w: driver text with a value", store.ErrUnavailable)
}

// TestTracedSpans: a call under a recording span is a client span named
// after the method; a missing row is noted, not failed; a failure carries
// its class, never the error's text; a call outside any span makes none.
func TestTracedSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var st store.Store = fakeStore{}
	require.Equal(t, st, store.WithTracing(st, nil, store.SystemSQLite), "no provider: the store itself")
	st = store.WithTracing(st, tp, store.SystemPostgres)

	_, _ = st.WarehouseGet(context.Background(), "wh")
	require.Empty(t, rec.Ended(), "no span outside a trace")

	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	_, err := st.WarehouseGet(ctx, "wh")
	require.ErrorIs(t, err, store.ErrNotFound, "errors pass through unchanged")
	require.ErrorIs(t, st.ObjectsSwap(ctx, nil), store.ErrUnavailable)
	parent.End()

	spans := rec.Ended()
	require.Len(t, spans, 3)
	get, swap := spans[0], spans[1]
	require.Equal(t, "store.WarehouseGet", get.Name())
	require.Equal(t, parent.SpanContext().SpanID(), get.Parent().SpanID())
	require.Equal(t, codes.Unset, get.Status().Code, "not found is an answer")
	require.Equal(t, "store.ObjectsSwap", swap.Name())
	require.Equal(t, codes.Error, swap.Status().Code)
	require.Equal(t, "unavailable", swap.Status().Description)
	attrs := map[string]string{}
	for _, kv := range append(get.Attributes(), swap.Attributes()...) {
		attrs[string(kv.Key)] += kv.Value.String() + ";"
	}
	require.Equal(t, "postgresql;postgresql;", attrs["db.system.name"])
	require.Equal(t, "WarehouseGet;ObjectsSwap;", attrs["db.operation.name"])
	require.Equal(t, "not_found;unavailable;", attrs["error.type"])
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			require.NotContains(t, kv.Value.String(), "secret")
			require.NotContains(t, kv.Value.String(), "driver")
		}
	}
}
