package pipeline

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/lakehold/catalog/internal/identity"
	"github.com/lakehold/catalog/service"
	"github.com/lakehold/catalog/service/access"
)

// tokenRoute is the OAuth token endpoint; its requests are audited as
// "issue-token" and nothing of them but the outcome is kept.
const tokenRoute = "/v1/oauth/tokens"

// namespaceSep separates the levels of a {namespace} route parameter, as
// in package server's paths (0x1F, sent as %1F).
const namespaceSep = "\x1f"

// Audit records one audit event for every mutating request (POST, PUT,
// DELETE, PATCH) after its handler ran: the principal, the method and
// route pattern, the object named by the route parameters, the status and
// the request id. Headers, bodies and query strings are never read.
//
// It may run before or after authentication. Placed before it (with
// AuditPrincipal right after it), requests that authentication refuses with
// 401 are recorded too, as the anonymous principal; placed after it, they
// are not.
func (p *Pipeline) Audit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every request carries its id: reads record credential vends.
		ctx := access.WithRequestID(r.Context(), w.Header().Get("X-Request-ID"))
		if !mutating(r.Method) {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		slot := &principalSlot{}
		r = r.WithContext(context.WithValue(ctx, principalSlotKey{}, slot))
		sw, ok := w.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: w}
		}
		// Record even when a later handler panics: RequestContext then
		// answers 500, after this defer ran.
		completed := false
		defer func() {
			status := sw.code()
			if !completed && sw.status == 0 {
				status = http.StatusInternalServerError
			}
			action, resource := auditTarget(r)
			e := service.AuditEvent{Action: action, Resource: resource, Status: status}
			if slot.set {
				pr := slot.p
				if pr.Source == "" {
					pr.Source = identity.SourceAnonymous
				}
				e.Principal = pr.String()
			}
			p.svc.RecordAudit(r.Context(), e)
		}()
		next.ServeHTTP(sw, r)
		completed = true
	})
}

// principalSlot carries the authenticated principal back out to audit,
// which may run before authentication put it in the context.
type principalSlot struct {
	p   identity.Principal
	set bool
}

type principalSlotKey struct{}

// AuditPrincipal hands the authenticated principal to audit; it belongs
// right after the authentication middleware when audit runs before it.
func AuditPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slot, ok := r.Context().Value(principalSlotKey{}).(*principalSlot); ok {
			slot.p, slot.set = identity.From(r.Context()), true
		}
		next.ServeHTTP(w, r)
	})
}

// mutating reports whether requests of method change state.
func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	}
	return false
}

// auditTarget names the action and the object of a routed request from
// the route pattern (a bounded set) and its decoded parameters.
func auditTarget(r *http.Request) (action, resource string) {
	rc := chi.RouteContext(r.Context())
	pattern := ""
	if rc != nil {
		pattern = rc.RoutePattern()
		if pattern == "" && rc.Routes != nil {
			// A middleware answered before routing (401, 413, 400 on
			// names): look the route up without running it.
			probe := chi.NewRouteContext()
			path := r.URL.RawPath
			if path == "" {
				path = r.URL.Path
			}
			if pattern = rc.Routes.Find(probe, r.Method, path); pattern != "" {
				rc = probe
			}
		}
	}
	method := methodLabel(r.Method)
	switch {
	case pattern == "":
		return method + " unmatched", ""
	case pattern == tokenRoute:
		return "issue-token", service.Resource{Kind: service.ResourceServer}.String()
	}
	param := func(k string) string {
		v := rc.URLParam(k)
		if u, err := url.PathUnescape(v); err == nil {
			return u
		}
		return v
	}
	return method + " " + pattern, routeResource(pattern, param)
}

// routeResource derives the object of a route: the table, view, namespace
// or warehouse of catalog routes; the warehouse, or "<kind>:<name>" for the
// first parameter, of management routes; the server otherwise.
func routeResource(pattern string, param func(string) string) string {
	if strings.HasPrefix(pattern, "/v1/{prefix}/") {
		res := service.Resource{Kind: service.ResourceWarehouse, Warehouse: param("prefix")}
		if strings.Contains(pattern, "{namespace}") {
			res.Kind, res.Namespace = service.ResourceNamespace, strings.Split(param("namespace"), namespaceSep)
		}
		if strings.Contains(pattern, "{table}") {
			res.Kind, res.Name = service.ResourceTable, param("table")
		} else if strings.Contains(pattern, "{view}") {
			res.Kind, res.Name = service.ResourceView, param("view")
		}
		return res.String()
	}
	if rest, ok := strings.CutPrefix(pattern, "/management/v1/"); ok {
		coll, tail, _ := strings.Cut(rest, "/")
		if name, ok := firstParam(tail); ok {
			if coll == "warehouses" {
				return service.Resource{Kind: service.ResourceWarehouse, Warehouse: param(name)}.String()
			}
			return strings.TrimSuffix(coll, "s") + ":" + param(name)
		}
	}
	return service.Resource{Kind: service.ResourceServer}.String()
}

// firstParam returns the name of the first {param} in a route pattern.
func firstParam(pattern string) (string, bool) {
	_, after, ok := strings.Cut(pattern, "{")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(after, "}")
	return name, ok
}
