package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Scenario names, as accepted by -scenarios and printed in the report.
const (
	ScenarioLoadSmall      = "load-small"
	ScenarioLoadBig        = "load-big"
	ScenarioLoadBigRefs    = "load-big-refs"
	ScenarioLoad304        = "load-304"
	ScenarioCommitDistinct = "commit-distinct"
	ScenarioCommitHot      = "commit-hot"
	ScenarioCommitBig      = "commit-big"
	ScenarioCreate         = "create"
	ScenarioList           = "list"
)

// Kind says which Postgres ceiling a scenario is compared with.
type Kind int

// The kinds: reads against the point-SELECT ceiling, writes against the
// single-row UPDATE ceiling, and the rest against none.
const (
	KindOther Kind = iota
	KindRead
	KindWrite
)

// Scenario is one kind of operation, sent in a closed loop. op performs
// one for client worker (its seq-th) and returns how many times it had to
// resend, and an error when the final answer is not the expected one.
type Scenario struct {
	Name string
	Kind Kind
	op   func(ctx context.Context, t *Target, worker, seq int) (int, error)
}

// maxCommitRetries bounds the resends of a commit answered 409, as the
// Java client bounds its commit retries.
const maxCommitRetries = 20

// once adapts a single-request operation, which never resends.
func once(f func(ctx context.Context, t *Target, worker, seq int) error) func(context.Context, *Target, int, int) (int, error) {
	return func(ctx context.Context, t *Target, w, seq int) (int, error) { return 0, f(ctx, t, w, seq) }
}

// retried resends a commit while it is answered 409 (nothing committed,
// retry), as a client does; the operation's latency includes the resends.
func retried(f func(ctx context.Context, t *Target, worker, seq int) error) func(context.Context, *Target, int, int) (int, error) {
	return func(ctx context.Context, t *Target, w, seq int) (int, error) {
		for n := 0; ; n++ {
			err := f(ctx, t, w, seq)
			var se *StatusError
			if n == maxCommitRetries || !errors.As(err, &se) || se.Got != http.StatusConflict {
				return n, err
			}
		}
	}
}

// Scenarios returns every scenario in report order.
func Scenarios() []Scenario {
	return []Scenario{
		{ScenarioLoadSmall, KindRead, once(loadOp("small", "", false))},
		{ScenarioLoadBig, KindRead, once(loadOp("big", "", false))},
		{ScenarioLoadBigRefs, KindRead, once(loadOp("big", "?snapshots=refs", false))},
		{ScenarioLoad304, KindRead, once(loadOp("small", "", true))},
		{ScenarioCommitDistinct, KindWrite, retried(commitDistinct)},
		{ScenarioCommitHot, KindWrite, retried(commitHot)},
		{ScenarioCommitBig, KindWrite, retried(commitBig)},
		{ScenarioCreate, KindOther, once(create)},
		{ScenarioList, KindOther, once(list)},
	}
}

// SelectScenarios returns the named scenarios in report order; it returns
// an error for an unknown name.
func SelectScenarios(names []string) ([]Scenario, error) {
	all := Scenarios()
	want := map[string]bool{}
	for _, n := range names {
		found := false
		for _, s := range all {
			found = found || s.Name == n
		}
		if !found {
			return nil, fmt.Errorf("unknown scenario %q", n)
		}
		want[n] = true
	}
	var out []Scenario
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}

func loadOp(table, query string, revalidate bool) func(context.Context, *Target, int, int) error {
	return func(ctx context.Context, t *Target, _, _ int) error {
		path := "namespaces/" + t.fx.ns + "/tables/" + table + query
		if revalidate {
			hdr := http.Header{"If-None-Match": {t.fx.smallETag}}
			_, err := t.call(ctx, http.MethodGet, path, hdr, nil, nil, http.StatusNotModified)
			return err
		}
		_, err := t.call(ctx, http.MethodGet, path, nil, nil, nil, http.StatusOK)
		return err
	}
}

// setProperties is the commit a writer sends: the table's uuid as the
// only requirement (as the Java client does) and one property.
func (t *Target) setProperties(ctx context.Context, table, key, value string) error {
	body := map[string]any{
		"requirements": []map[string]any{{"type": "assert-table-uuid", "uuid": t.fx.uuids[table]}},
		"updates":      []map[string]any{{"action": "set-properties", "updates": map[string]string{key: value}}},
	}
	_, err := t.call(ctx, http.MethodPost, "namespaces/"+t.fx.ns+"/tables/"+table, nil, body, nil, http.StatusOK)
	return err
}

func commitDistinct(ctx context.Context, t *Target, worker, seq int) error {
	return t.setProperties(ctx, fmt.Sprintf("c%d", worker), "lg.seq", strconv.Itoa(seq))
}

func commitHot(ctx context.Context, t *Target, worker, seq int) error {
	return t.setProperties(ctx, "hot", "lg.last", fmt.Sprintf("%d-%d", worker, seq))
}

// commitBig commits to the table with long history, where the cost of a
// commit growing with the metadata shows.
func commitBig(ctx context.Context, t *Target, worker, seq int) error {
	return t.setProperties(ctx, "big", "lg.last", fmt.Sprintf("%d-%d", worker, seq))
}

func create(ctx context.Context, t *Target, _, _ int) error {
	name := fmt.Sprintf("n%07d", t.created.Add(1))
	_, err := t.call(ctx, http.MethodPost, "namespaces/"+t.fx.createNS+"/tables", nil, createBody(name), nil, http.StatusOK)
	return err
}

func list(ctx context.Context, t *Target, _, _ int) error {
	_, err := t.call(ctx, http.MethodGet, "namespaces/"+t.fx.listNS+"/tables", nil, nil, nil, http.StatusOK)
	return err
}
