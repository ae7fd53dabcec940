package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/lakehold/catalog/service"
)

// errorKinds is the one table from failure kind to HTTP status and the
// Iceberg error type clients branch on.
var errorKinds = map[service.Kind]struct {
	status int
	typ    string
}{
	service.KindInternal:           {http.StatusInternalServerError, "InternalServerError"},
	service.KindBadRequest:         {http.StatusBadRequest, "BadRequestException"},
	service.KindIllegalArgument:    {http.StatusBadRequest, "IllegalArgumentException"},
	service.KindValidation:         {http.StatusBadRequest, "ValidationException"},
	service.KindForbidden:          {http.StatusForbidden, "ForbiddenException"},
	service.KindNoSuchWarehouse:    {http.StatusNotFound, "NoSuchWarehouseException"},
	service.KindNoSuchNamespace:    {http.StatusNotFound, "NoSuchNamespaceException"},
	service.KindNoSuchTable:        {http.StatusNotFound, "NoSuchTableException"},
	service.KindNoSuchView:         {http.StatusNotFound, "NoSuchViewException"},
	service.KindNotFound:           {http.StatusNotFound, "NotFoundException"},
	service.KindUnsupported:        {http.StatusNotAcceptable, "UnsupportedOperationException"},
	service.KindAlreadyExists:      {http.StatusConflict, "AlreadyExistsException"},
	service.KindNamespaceNotEmpty:  {http.StatusConflict, "NamespaceNotEmptyException"},
	service.KindCommitFailed:       {http.StatusConflict, "CommitFailedException"},
	service.KindUnprocessable:      {http.StatusUnprocessableEntity, "UnprocessableEntityException"},
	service.KindCommitStateUnknown: {http.StatusInternalServerError, "CommitStateUnknownException"},
	service.KindUnavailable:        {http.StatusServiceUnavailable, "ServiceUnavailableException"},
	service.KindTooLarge:           {http.StatusRequestEntityTooLarge, "RequestEntityTooLargeException"},
	service.KindUnauthorized:       {http.StatusUnauthorized, "NotAuthorizedException"},
	service.KindNoSuchPlanID:       {http.StatusNotFound, "NoSuchPlanIdException"},
	service.KindNoSuchPlanTask:     {http.StatusNotFound, "NoSuchPlanTaskException"},
	service.KindUnsupportedMedia:   {http.StatusUnsupportedMediaType, "UnsupportedMediaTypeException"},
}

// ErrorModel is the body of every error response.
type ErrorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
	// Reason is our extension: a stable sub-code for validation failures.
	Reason string `json:"reason,omitempty"`
	// Details is our extension: the offending files and ids.
	Details map[string]any `json:"details,omitempty"`
}

type errorResponse struct {
	Error ErrorModel `json:"error"`
}

// errorModel classifies err.
func errorModel(err error) ErrorModel {
	var se *service.Error
	kind, msg, reason := service.KindInternal, "Internal server error", ""
	var details map[string]any
	if errors.As(err, &se) {
		kind, reason, details = se.Kind, se.Reason, se.Details
		msg = se.Message
	}
	k := errorKinds[kind]
	return ErrorModel{Message: msg, Type: k.typ, Code: k.status, Reason: reason, Details: details}
}

// writeError renders err as an Iceberg error body. 5xx are logged at Error
// with the cause (the client sees no internals), 4xx at Debug.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	m := errorModel(err)
	log := loggerFrom(r.Context())
	if m.Code >= 500 {
		log.ErrorContext(r.Context(), "request failed", "status", m.Code, "type", m.Type, "error", err)
	} else {
		log.DebugContext(r.Context(), "request rejected", "status", m.Code, "type", m.Type, "error", err)
	}
	writeErrorModel(w, m)
}

func writeErrorModel(w http.ResponseWriter, m ErrorModel) {
	w.Header().Set("Content-Type", "application/json")
	switch m.Code {
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	case http.StatusRequestEntityTooLarge:
		// The rest of the body is not read: the connection cannot be reused.
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(m.Code)
	_ = json.NewEncoder(w).Encode(errorResponse{Error: m})
}

// badRequest is used for request decoding and parameter errors. A body cut
// off by the size limit is a 413, not a malformed request.
func badRequest(w http.ResponseWriter, r *http.Request, err error) {
	if e := tooLarge(err); e != nil {
		writeError(w, r, e)
		return
	}
	writeError(w, r, &service.Error{Kind: service.KindBadRequest, Message: "Malformed request: " + service.ClientText(err)})
}
