package changeevents

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/store"
)

// TestForeignIdents: only a rename names another object (its source);
// a source that cannot be read is still listed, to be withheld.
func TestForeignIdents(t *testing.T) {
	o := Object{Warehouse: "wh", Namespace: []string{"nsb"}, Name: "bmove", Kind: store.KindTable, UUID: "u"}
	ren := Rename(o, Who{}, []string{"nsa"}, "from_b")
	require.Equal(t, []ForeignIdent{{Field: "source", Namespace: []string{"nsb"}, Name: "bmove"}}, ForeignIdents(ren.Operation, ren.Body))
	o.Kind = store.KindView
	rv := Rename(o, Who{}, []string{"nsa"}, "v")
	require.Equal(t, "source", ForeignIdents(rv.Operation, rv.Body)[0].Field)
	require.Equal(t, []ForeignIdent{{Field: "source"}}, ForeignIdents(RenameTable, json.RawMessage(`{"source":`)))
	for _, e := range []store.Event{
		Create(CreateTable, o, Who{}, nil), Drop(DropTable, o, Who{}, true), Undrop(o, Who{}, "id"),
		Update(o, Who{}, nil, nil), NamespaceCreated("wh", []string{"a"}, Who{}, nil),
		NamespaceUpdated("wh", []string{"a"}, Who{}, nil, nil, nil), NamespaceDropped("wh", []string{"a"}, Who{}),
	} {
		require.Empty(t, ForeignIdents(e.Operation, e.Body), e.Operation)
	}
}

// TestRedact: the withheld fields become the empty identifier and are
// listed; the rest of the body is kept; a broken body keeps only its type.
func TestRedact(t *testing.T) {
	o := Object{Warehouse: "wh", Namespace: []string{"nsb"}, Name: "bmove", Kind: store.KindTable, UUID: "u"}
	ren := Rename(o, Who{}, []string{"nsa"}, "from_b")
	require.Equal(t, ren.Body, Redact(ren.Operation, ren.Body, nil), "nothing to withhold")
	require.JSONEq(t, `{"operation-type":"rename-table","table-uuid":"u","source":{"namespace":[],"name":""},
		"destination":{"namespace":["nsa"],"name":"from_b"},"x-lakehold.redacted":["source"]}`,
		string(Redact(ren.Operation, ren.Body, []string{"source"})))
	require.JSONEq(t, `{"operation-type":"rename-table","source":{"namespace":[],"name":""},"x-lakehold.redacted":["source"]}`,
		string(Redact(RenameTable, json.RawMessage(`{"source":{"namespace":["nsb"`), []string{"source"})))
}
