package service

import (
	"errors"
	"fmt"
)

// Kind classifies a failure; the server maps each kind to exactly one HTTP
// status and Iceberg error type (server/errors.go).
type Kind int

// Failure kinds. The comment gives the status and Iceberg type served.
const (
	KindInternal           Kind = iota // 500 InternalServerError
	KindBadRequest                     // 400 BadRequestException
	KindIllegalArgument                // 400 IllegalArgumentException
	KindValidation                     // 400 ValidationException
	KindNoSuchWarehouse                // 404 NoSuchWarehouseException
	KindNoSuchNamespace                // 404 NoSuchNamespaceException
	KindNoSuchTable                    // 404 NoSuchTableException
	KindNoSuchView                     // 404 NoSuchViewException
	KindNotFound                       // 404 NotFoundException
	KindAlreadyExists                  // 409 AlreadyExistsException
	KindNamespaceNotEmpty              // 409 NamespaceNotEmptyException
	KindCommitFailed                   // 409 CommitFailedException: nothing was committed
	KindUnsupported                    // 406 UnsupportedOperationException
	KindUnprocessable                  // 422 UnprocessableEntityException
	KindCommitStateUnknown             // 500 CommitStateUnknownException: the commit may have landed
	KindUnavailable                    // 503 ServiceUnavailableException
	KindForbidden                      // 403 ForbiddenException
	KindTooLarge                       // 413 RequestEntityTooLargeException: the request body is over the limit
	KindUnauthorized                   // 401 NotAuthorizedException: no valid credentials
	KindNoSuchPlanID                   // 404 NoSuchPlanIdException: the scan plan is not (or no longer) known
	KindNoSuchPlanTask                 // 404 NoSuchPlanTaskException: the plan task is not one of this table's
	KindUnsupportedMedia               // 415 UnsupportedMediaTypeException: a request body not declared as JSON
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
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Kind == KindInternal {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func newErr(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

func wrapErr(kind Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: err}
}

// KindOf returns the kind of err, KindInternal for errors that are not *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
