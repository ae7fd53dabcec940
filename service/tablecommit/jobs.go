package tablecommit

import (
	"github.com/lakehold/catalog/service/commitjobs"
	"github.com/lakehold/catalog/service/ident"
	"github.com/lakehold/catalog/store"
)

// stagedJobs are the jobs a staged change of table id enqueues with its
// swap (commitjobs.For).
func (tc *Committer) stagedJobs(w *store.Warehouse, id ident.Ident, st *staged) []store.Job {
	return commitjobs.For(tc.d.Tables.Now(), w, id, st.base, st.meta, st.metaLoc)
}
