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
    """Bad input; nothing was written or committed.

    Raised for the catalog's 400 answers (``status`` 400) and by the
    library itself when it checks data against the table's schema before
    writing (``status`` None; see lakehold._validate for its reasons).
    ``reason`` is a machine-readable code: the server's ``error.reason``
    (one of the ``validation.Reason*`` codes, e.g.
    ``"record-count-mismatch"``) or the library's (e.g.
    ``"undeclared-column"``, ``"type-mismatch"``); ``details`` the
    server's ``error.details`` object, or the library's facts (``column``,
    ``expected``, ``got``).
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


class MergeKeyError(ValidationError, ValueError):
    """merge_columns input is unusable: keys missing from the table
    (reason ``unmatched-key``), duplicated in the source
    (``duplicate-key``) or null (``null-key``). ``keys`` holds a few
    examples. Nothing was written or committed."""

    def __init__(self, message: str, keys: list[Any] | None = None, *, reason: str | None = None) -> None:
        super().__init__(message, status=None, reason=reason)
        self.keys = keys or []


class FilterError(LakeholdError, ValueError):
    """A row filter that cannot be parsed, serialized or evaluated here."""


class StitchError(LakeholdError):
    """A planned file that cannot be read as the plan describes it."""


class MisalignedError(StitchError):
    """A column file whose row count differs from its base file's."""


class NotChangedError(StitchError):
    """A field asked of a change task (``column-files-changed-since``) that
    none of its column files carries: its current value may sit in a column
    file from before the range, so it cannot be read from this task. Plan a
    regular scan of the end snapshot for it."""


class DeletesError(LakeholdError):
    """A delete file that cannot be read or applied."""


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


class LocalCatalogError(LakeholdError):
    """The embedded catalog (:func:`lakehold.local`) could not start or
    stopped unexpectedly. The message ends with the tail of the process's
    stderr when it wrote any."""


class CatalogBinaryNotFoundError(LocalCatalogError):
    """No catalog binary was found in any of the places
    :func:`lakehold.local` looks."""


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
