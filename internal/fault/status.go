package fault

import "net/http"

// status is the one table from failure kind to HTTP status and the Iceberg
// error type clients branch on. TestEveryKindHasAStatus fails when a kind
// has no row.
var status = [numKinds]struct {
	code int
	typ  string
}{
	Internal:           {http.StatusInternalServerError, "InternalServerError"},
	BadRequest:         {http.StatusBadRequest, "BadRequestException"},
	IllegalArgument:    {http.StatusBadRequest, "IllegalArgumentException"},
	Validation:         {http.StatusBadRequest, "ValidationException"},
	Forbidden:          {http.StatusForbidden, "ForbiddenException"},
	NoSuchWarehouse:    {http.StatusNotFound, "NoSuchWarehouseException"},
	NoSuchNamespace:    {http.StatusNotFound, "NoSuchNamespaceException"},
	NoSuchTable:        {http.StatusNotFound, "NoSuchTableException"},
	NoSuchView:         {http.StatusNotFound, "NoSuchViewException"},
	NoSuchFunction:     {http.StatusNotFound, "NoSuchFunctionException"},
	NotFound:           {http.StatusNotFound, "NotFoundException"},
	Unsupported:        {http.StatusNotAcceptable, "UnsupportedOperationException"},
	AlreadyExists:      {http.StatusConflict, "AlreadyExistsException"},
	NamespaceNotEmpty:  {http.StatusConflict, "NamespaceNotEmptyException"},
	CommitFailed:       {http.StatusConflict, "CommitFailedException"},
	Unprocessable:      {http.StatusUnprocessableEntity, "UnprocessableEntityException"},
	CommitStateUnknown: {http.StatusInternalServerError, "CommitStateUnknownException"},
	Unavailable:        {http.StatusServiceUnavailable, "ServiceUnavailableException"},
	TooLarge:           {http.StatusRequestEntityTooLarge, "RequestEntityTooLargeException"},
	Unauthorized:       {http.StatusUnauthorized, "NotAuthorizedException"},
	NoSuchPlanID:       {http.StatusNotFound, "NoSuchPlanIdException"},
	NoSuchPlanTask:     {http.StatusNotFound, "NoSuchPlanTaskException"},
	UnsupportedMedia:   {http.StatusUnsupportedMediaType, "UnsupportedMediaTypeException"},
	MethodNotAllowed:   {http.StatusMethodNotAllowed, "MethodNotAllowedException"},
	Gone:               {http.StatusGone, "GoneException"},
}

// Status returns the HTTP status and Iceberg error type served for kind. A
// value outside the declared kinds is served as Internal.
func Status(kind Kind) (code int, typ string) {
	if kind < 0 || kind >= numKinds {
		kind = Internal
	}
	s := status[kind]
	return s.code, s.typ
}

// StatusOf is the HTTP status a request failing with err answers (500 for
// errors that are not *Error), for records such as the audit trail that
// keep the status of a failure handled below the HTTP layer.
func StatusOf(err error) int {
	code, _ := Status(KindOf(err))
	return code
}

// Audit decisions: how the audit trail classifies an answer.
const (
	DecisionAllowed = "allowed" // the request succeeded (2xx, 3xx)
	DecisionDenied  = "denied"  // authentication or authorization refused it (401, 403)
	DecisionFailed  = "failed"  // any other failure
)

// Decision classifies an HTTP status for the audit trail, beside the table
// that gives failures their statuses.
func Decision(status int) string {
	switch {
	case status >= 200 && status < 400:
		return DecisionAllowed
	case status == 401 || status == 403:
		return DecisionDenied
	}
	return DecisionFailed
}

// Refused reports whether err refuses a caller access to an object: it
// may not act on it (Forbidden), or may not even know it exists (any of
// the not-found kinds an authorizer answers for a hidden object).
func Refused(err error) bool {
	switch KindOf(err) {
	case Forbidden, NoSuchWarehouse, NoSuchNamespace, NoSuchTable, NoSuchView, NoSuchFunction, NotFound:
		return err != nil
	}
	return false
}
