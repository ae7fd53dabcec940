package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestServedEndpointsPlanning: the planning routes are advertised with the
// REST spec's templates whatever their path parameter is named, and the
// v4 extensions stay unadvertised.
func TestServedEndpointsPlanning(t *testing.T) {
	const tbl = "/v1/{prefix}/namespaces/{namespace}/tables/{table}"
	nop := func(http.ResponseWriter, *http.Request) {}
	for _, param := range []string{"{plan-id}", "{planId}"} {
		r := chi.NewRouter()
		r.Post(tbl+"/plan", nop)
		r.Get(tbl+"/plan/"+param, nop)
		r.Delete(tbl+"/plan/"+param, nop)
		r.Post(tbl+"/tasks", nop)
		r.Post(tbl+"/files", nop)
		got := servedEndpoints(r)
		for _, want := range []string{"POST " + tbl + "/plan", "GET " + tbl + "/plan/{plan-id}", "DELETE " + tbl + "/plan/{plan-id}", "POST " + tbl + "/tasks"} {
			if !slices.Contains(got, want) {
				t.Errorf("param %s: %q not advertised in %v", param, want, got)
			}
		}
		if slices.Contains(got, "POST "+tbl+"/files") {
			t.Errorf("v4 files route advertised: %v", got)
		}
	}
}
