// Package fault is the catalog's failure vocabulary, imported by every
// layer and importing nothing of the project: the kinds of failure, the
// Error a client sees (its exact message, a reason code and details), the
// one table from kind to HTTP status and Iceberg error type, and the
// client-safe description of errors that are not ours (ClientText).
package fault

import (
	"errors"
	"fmt"
)

// Kind classifies a failure. Status gives each kind exactly one HTTP
// status and Iceberg error type.
type Kind int

// Failure kinds; the comment gives the status and Iceberg type served.
// The order is not part of any stored or wire format.
const (
	Internal           Kind = iota // 500 InternalServerError
	BadRequest                     // 400 BadRequestException
	IllegalArgument                // 400 IllegalArgumentException
	Validation                     // 400 ValidationException
	NoSuchWarehouse                // 404 NoSuchWarehouseException
	NoSuchNamespace                // 404 NoSuchNamespaceException
	NoSuchTable                    // 404 NoSuchTableException
	NoSuchView                     // 404 NoSuchViewException
	NoSuchFunction                 // 404 NoSuchFunctionException
	NotFound                       // 404 NotFoundException
	AlreadyExists                  // 409 AlreadyExistsException
	NamespaceNotEmpty              // 409 NamespaceNotEmptyException
	CommitFailed                   // 409 CommitFailedException: nothing was committed
	Unsupported                    // 406 UnsupportedOperationException
	Unprocessable                  // 422 UnprocessableEntityException
	CommitStateUnknown             // 500 CommitStateUnknownException: the commit may have landed
	Unavailable                    // 503 ServiceUnavailableException
	Forbidden                      // 403 ForbiddenException
	TooLarge                       // 413 RequestEntityTooLargeException: the request body is over the limit
	Unauthorized                   // 401 NotAuthorizedException: no valid credentials
	NoSuchPlanID                   // 404 NoSuchPlanIdException: the scan plan is not (or no longer) known
	NoSuchPlanTask                 // 404 NoSuchPlanTaskException: the plan task is not one of this table's
	UnsupportedMedia               // 415 UnsupportedMediaTypeException: a request body not declared as JSON
	MethodNotAllowed               // 405 MethodNotAllowedException: the route exists, not for this method
	Gone                           // 410 GoneException: the position asked for is past its retention

	numKinds // not a kind: the count, for the table's completeness test
)

// Error is a failure with the exact message clients see. Messages follow
// the texts Java clients and the REST compatibility kit assert on.
type Error struct {
	Kind    Kind
	Message string
	// Reason is a machine-readable sub-code (our extension), e.g. for
	// validation failures of column-file commits.
	Reason string
	// Details names the offending files and ids of a validation failure.
	Details map[string]any
	// Err is the cause: logged for 5xx, never sent to a client.
	Err error
}

// Error is the message, with the cause for internal errors (for logs).
func (e *Error) Error() string {
	if e.Err != nil && e.Kind == Internal {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an Error of kind with the formatted client message.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap is New with err as the cause.
func Wrap(kind Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: err}
}

// KindOf returns the kind of err, Internal for errors that are not *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}
