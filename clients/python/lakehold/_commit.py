"""Commits retried safely with an Idempotency-Key.

One logical commit gets one key. When the answer is 503 (nothing
committed, not now) or never arrives (connection error, timeout), the same
request is sent again with the same key, so the catalog applies it at most
once and answers a retry of a commit that landed with its first outcome.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

from ._rest import RestSession
from .errors import CommitStateUnknownError, ServiceUnavailableError, TransportError

TRIES = 5
BACKOFF_S = 0.25


def post(rest: RestSession, path: str, body: dict[str, Any], *, tries: int = TRIES,
         backoff_s: float = BACKOFF_S) -> dict[str, Any]:
    """POST a commit, retrying 503s and lost answers with one key.

    Raises the catalog's error for a final answer (ValidationError,
    CommitFailedError, ...), ServiceUnavailableError when every try got a
    503, and CommitStateUnknownError when the catalog answered 500 or a
    try went unanswered and no later try settled it.
    """
    key = str(uuid.uuid4())
    unanswered = False
    last: Exception | None = None
    for attempt in range(tries):
        if attempt:
            time.sleep(backoff_s * (2 ** (attempt - 1)) * (0.5 + random.random()))
        try:
            return rest.request("POST", path, json=body, headers={"Idempotency-Key": key}, commit=True)
        except ServiceUnavailableError as e:
            last = e
        except TransportError as e:
            unanswered, last = True, e
    if unanswered:
        raise CommitStateUnknownError(
            f"commit to {path} got no final answer after {tries} tries; reload the table to see whether it landed"
        ) from last
    assert last is not None
    raise last
