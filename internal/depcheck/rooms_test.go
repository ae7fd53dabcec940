package depcheck

import (
	"strings"
	"testing"
)

// roomLayers orders the rooms of the service, lowest first. A room imports
// only rooms of lower layers (never one of its own layer or above), so the
// call graph between rooms runs one way and no room reaches back up: what
// every room needs from below comes through service/tableaccess, one
// layer above the leaves. A package under service/ missing here fails the
// test, so a new room has to be placed.
var roomLayers = [][]string{
	// Leaves: identifiers, store errors, the location policy, the v4
	// manifest readers, the file walk.
	{"ident", "storefault", "locations", "v4read", "tablefiles"},
	// Access control, idempotency keys, the commit loop and the jobs a
	// commit enqueues.
	{"access", "idempotent", "commitengine", "commitjobs"},
	// What every room reaches tables through.
	{"tableaccess"},
	// Rooms on tableaccess alone.
	{"changefeed", "reports", "planning", "storageaccess", "v4commits", "views", "functions"},
	// Table commits: plan updates through v4commits, enqueue the jobs of
	// commitjobs.
	{"tablecommit"},
	// Maintenance commits an expiry through tablecommit; the upgrade to
	// v4 and the export stage through tablecommit and v4commits, plan
	// v1–v3 manifests and grant the export's access.
	{"maintenance", "v4migrate"},
	// Background work: schedules maintenance and compaction.
	{"upkeep"},
	// The warehouse registry (checks upkeep's deletion properties). Table
	// creates, loads and drops: check new metadata through tablecommit,
	// grant storage access, enqueue upkeep's purge and expiry jobs.
	{"warehouses", "tables"},
}

func TestRoomOrder(t *testing.T) {
	const svc = "github.com/lakehold/catalog/service/"
	layer := map[string]int{}
	for i, rooms := range roomLayers {
		for _, r := range rooms {
			layer[svc+r] = i
		}
	}
	all := deps(t)
	for key := range all {
		if strings.HasPrefix(key, "direct:") || !strings.HasPrefix(key, svc) {
			continue
		}
		room := key
		if i := strings.Index(room[len(svc):], "/"); i >= 0 {
			continue // a room's own sub-package
		}
		if _, ok := layer[room]; !ok {
			t.Errorf("%s is not placed in roomLayers", room)
		}
	}
	for room, l := range layer {
		imports, ok := all["direct:"+room]
		if !ok {
			t.Errorf("room %s not found", room)
			continue
		}
		for _, imp := range imports {
			il, isRoom := layer[imp]
			if isRoom && il >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): rooms import only lower layers", room, l, imp, il)
			}
			if imp == strings.TrimSuffix(svc, "/") {
				t.Errorf("%s imports the service facade", room)
			}
		}
	}
}
