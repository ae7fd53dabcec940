"""Typed errors raised by the library.

Every error the catalog answers arrives as an Iceberg ``ErrorModel`` JSON
body; :func:`from_response` turns it into one of the classes below by HTTP
status and ``type``. Messages carry the server's message only: never a token,
secret or request header.
"""

from __future__ import annotations

from typing import Any


class LakeholdError(Exception):
    """Base class of every error this library raises on purpose.

    ``status`` is the HTTP status (``None`` for client-side errors), ``type``
    the ErrorModel type (e.g. ``"ValidationException"``).
    """

    def __init__(self, message: str, *, status: int | None = None, type: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type


class ValidationError(LakeholdError):
    """400: the request was refused as bad input; nothing was committed.

    ``reason`` is the server's machine-readable ``error.reason`` (one of the
    ``validation.Reason*`` codes, e.g. ``"record-count-mismatch"``) when it
    gave one; ``details`` its ``error.details`` object.
    """

    def __init__(self, message: str, *, status: int | None = 400, type: str | None = None,
                 reason: str | None = None, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, status=status, type=type)
        self.reason = reason
        self.details = details or {}


class NotAuthorizedError(LakeholdError):
    """401: missing, expired or refused credentials."""


class ForbiddenError(LakeholdError):
    """403: authenticated, but the principal may not do this."""


class NotFoundError(LakeholdError):
    """404 for something other than a table or namespace."""


class NoSuchTableError(NotFoundError):
    """404: the table does not exist."""


class NoSuchNamespaceError(NotFoundError):
    """404: the namespace does not exist."""


class AlreadyExistsError(LakeholdError):
    """409 AlreadyExistsException: a table or namespace of that name exists."""


class CommitFailedError(LakeholdError):
    """409: the commit conflicted; nothing was committed, it is safe to retry."""


class ServiceUnavailableError(LakeholdError):
    """503 (or retries exhausted on one): not now; nothing was committed."""


class CommitStateUnknownError(LakeholdError):
    """500 on a commit, or retries exhausted without an answer: the commit may
    or may not have landed. Refresh the table and look before retrying."""


class TransportError(LakeholdError):
    """The request got no HTTP answer (connection refused or reset, timeout)."""


class MergeKeyError(LakeholdError, ValueError):
    """merge_columns input is unusable: keys missing from the table,
    duplicated in the source, or null. ``keys`` holds a few examples."""

    def __init__(self, message: str, keys: list[Any] | None = None) -> None:
        super().__init__(message)
        self.keys = keys or []


_BY_TYPE: dict[str, type[LakeholdError]] = {
    "NoSuchTableException": NoSuchTableError,
    "NoSuchNamespaceException": NoSuchNamespaceError,
    "AlreadyExistsException": AlreadyExistsError,
    "CommitFailedException": CommitFailedError,
    "ServiceUnavailableException": ServiceUnavailableError,
    "CommitStateUnknownException": CommitStateUnknownError,
    "NotAuthorizedException": NotAuthorizedError,
    "ForbiddenException": ForbiddenError,
}

_BY_STATUS: dict[int, type[LakeholdError]] = {
    400: ValidationError,
    401: NotAuthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: CommitFailedError,
    419: NotAuthorizedError,
    503: ServiceUnavailableError,
}


def from_response(status: int, body: Any, *, commit: bool = False) -> LakeholdError:
    """Build the error for an HTTP answer ``status`` with decoded JSON ``body``
    (anything when the body was not JSON). ``commit`` marks a commit route,
    where a 5xx other than 503 means the outcome is unknown."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        err = {}
    message = str(err.get("message") or f"HTTP {status}")
    etype = err.get("type") if isinstance(err.get("type"), str) else None
    if status == 400 or etype in ("ValidationException", "BadRequestException"):
        details = err.get("details") if isinstance(err.get("details"), dict) else None
        return ValidationError(message, status=status, type=etype, reason=err.get("reason"), details=details)
    if status >= 500 and status != 503:
        if commit:
            return CommitStateUnknownError(message, status=status, type=etype)
        return LakeholdError(message, status=status, type=etype)
    cls = _BY_TYPE.get(etype or "") or _BY_STATUS.get(status) or LakeholdError
    return cls(message, status=status, type=etype)
