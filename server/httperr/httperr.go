// Package httperr writes every error response of the catalog's HTTP layer
// as an Iceberg ErrorModel body, its status and type taken from the one
// table of internal/fault, and carries the request's logger those writes
// log through. It is a leaf below package server and its request
// pipeline, so that handlers and middleware answer failures alike.
package httperr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

// Model classifies err through fault.Status. An error that is not a
// *fault.Error becomes a 500 whose message reveals nothing of it.
func Model(err error) ErrorModel {
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

// Write renders err as an Iceberg error body. 5xx are logged at Error
// with the cause (the client sees no internals), 4xx at Debug.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	m := Model(err)
	log := Logger(r.Context())
	if m.Code >= 500 {
		log.ErrorContext(r.Context(), "request failed", "status", m.Code, "type", m.Type, "error", err)
	} else {
		log.DebugContext(r.Context(), "request rejected", "status", m.Code, "type", m.Type, "error", err)
	}
	WriteModel(w, m)
}

// WriteModel writes m as the response, unlogged: for callers that have
// logged the cause their own way, or that have none to log.
func WriteModel(w http.ResponseWriter, m ErrorModel) {
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

// BadRequest is used for request decoding and parameter errors. A body cut
// off by the size limit is a 413, not a malformed request.
func BadRequest(w http.ResponseWriter, r *http.Request, err error) {
	if e := TooLarge(err); e != nil {
		Write(w, r, e)
		return
	}
	Write(w, r, &fault.Error{Kind: fault.BadRequest, Message: "Malformed request: " + fault.ClientText(err)})
}

// BadRequestf returns a 400 fault whose message the client sees as given.
func BadRequestf(format string, args ...any) error {
	return &fault.Error{Kind: fault.BadRequest, Message: fmt.Sprintf(format, args...)}
}

// BodyTooLarge is the 413 for a body over limit bytes.
func BodyTooLarge(limit int64) *fault.Error {
	return &fault.Error{Kind: fault.TooLarge,
		Message: fmt.Sprintf("Request body is larger than the limit of %d bytes", limit)}
}

// TooLarge returns the 413 when err comes from reading a body past the
// limit, and nil otherwise.
func TooLarge(err error) *fault.Error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return BodyTooLarge(mbe.Limit)
	}
	return nil
}

type loggerKey struct{}

// WithLogger returns ctx carrying l as the request's logger: the request
// pipeline sets it so that every line about a request, errors included,
// names the request.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// Logger returns the request's logger from ctx, or slog.Default when none
// was set (a handler run outside the pipeline, as in tests).
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
