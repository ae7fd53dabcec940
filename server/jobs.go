package server

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/lakehold/catalog/openapi"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/store"
)

// ListJobs implements openapi.StrictServerInterface.
func (s *Server) ListJobs(ctx context.Context, req openapi.ListJobsRequestObject) (openapi.ListJobsResponseObject, error) {
	p := req.Params
	if p.PageSize != nil && *p.PageSize < 1 {
		return nil, badRequestf("pageSize must be at least 1")
	}
	var f service.JobFilter
	if p.Warehouse != nil {
		f.Warehouse = *p.Warehouse
	}
	if p.Kind != nil {
		f.Kind = *p.Kind
	}
	if p.Table != nil {
		dot := strings.LastIndexByte(*p.Table, '.')
		if dot <= 0 || dot == len(*p.Table)-1 {
			return nil, badRequestf("table must be \"namespace.name\"")
		}
		f.Table = &service.Ident{Namespace: strings.Split((*p.Table)[:dot], "."), Name: (*p.Table)[dot+1:]}
	}
	if p.State != nil {
		for _, st := range *p.State {
			f.States = append(f.States, string(st))
		}
	}
	jobs, next, err := s.rooms.upkeep.ListJobs(ctx, f, listPage(p.PageToken, p.PageSize))
	if err != nil {
		return nil, err
	}
	out := make([]openapi.Job, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, jobOut(j))
	}
	return openapi.ListJobs200JSONResponse{Jobs: out, NextPageToken: nextToken(next)}, nil
}

func jobOut(j *store.JobInfo) openapi.Job {
	o := openapi.Job{Id: j.ID, Kind: j.Kind, State: openapi.JobState(j.State), Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
		CreatedAt: j.CreatedAt.UTC(), ScheduledAt: j.ScheduledAt.UTC(), AttemptedAt: utcPtr(j.AttemptedAt), FinalizedAt: utcPtr(j.FinalizedAt),
		Warehouse: optional(j.Warehouse), Table: optional(j.Table), TableUuid: optional(j.TableUUID), Errors: []openapi.JobAttemptError{}}
	// Args is the job's own JSON object; anything else lists as {}.
	if err := json.Unmarshal(j.Args, &o.Args); err != nil || o.Args == nil {
		o.Args = map[string]any{}
	}
	for _, e := range j.Errors {
		o.Errors = append(o.Errors, openapi.JobAttemptError{Attempt: e.Attempt, At: e.At.UTC(), Error: e.Error})
	}
	return o
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// optional is nil for "", so that an empty field is left out.
func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
