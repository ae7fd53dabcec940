package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/lakehold/catalog/internal/fault"
)

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

// errorModel classifies err through fault.Status.
func errorModel(err error) ErrorModel {
	var se *fault.Error
	kind, msg, reason := fault.Internal, "Internal server error", ""
	var details map[string]any
	if errors.As(err, &se) {
		kind, reason, details = se.Kind, se.Reason, se.Details
		msg = se.Message
	}
	code, typ := fault.Status(kind) // the one status table
	return ErrorModel{Message: msg, Type: typ, Code: code, Reason: reason, Details: details}
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
	writeError(w, r, &fault.Error{Kind: fault.BadRequest, Message: "Malformed request: " + fault.ClientText(err)})
}
