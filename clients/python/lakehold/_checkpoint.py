"""The checkpoint file of a resumable column update (``checkpoint=PATH``).

One small JSON document on the local disk, rewritten whole after every
finished base (temporary file, fsync, atomic rename, fsync of the
directory), so a crash leaves either the previous or the next version,
never a torn one. It holds:

- ``identity``: what the update is (operation, table uuid, outputs and
  inputs or key and columns, row filter, cast mode, a digest of a merge
  source). A checkpoint of another update is refused, not half-reused.
- ``id``: a random id the commit carries as the snapshot property
  ``lakehold.checkpoint``, so a rerun can tell that an earlier try's
  commit landed even when its answer was lost.
- ``planned-snapshot-id`` and ``bases``: the last plan it was taken on.
- ``done``: per finished base, its state when it was built (data file,
  data sequence number, column files, deletes: ``_colupdate.base_state``),
  its column-file entry (location, size, record count, field ids; null
  when the update leaves the base alone) and what the job's check needs.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from typing import Any

from .errors import ValidationError

FORMAT = "lakehold-column-update-checkpoint"
VERSION = 1
SNAPSHOT_PROPERTY = "lakehold.checkpoint"


def _refuse(reason: str, message: str, **details: Any) -> ValidationError:
    return ValidationError(message, status=None, reason=reason, details=details)


class Checkpoint:
    """A checkpoint file bound to one update. Thread-safe: workers record
    bases as they finish."""

    def __init__(self, path: str, identity: dict[str, Any], doc: dict[str, Any] | None = None) -> None:
        self.path = path
        self.identity = identity
        self._lock = threading.Lock()
        doc = doc or {}
        self.id: str = doc.get("id") or uuid.uuid4().hex
        self.snapshot_id: int | None = doc.get("planned-snapshot-id")
        self.bases: int = int(doc.get("bases") or 0)
        self.done: dict[str, dict[str, Any]] = {d["key"]: d for d in doc.get("done") or []}

    @classmethod
    def open(cls, path: str | os.PathLike[str], identity: dict[str, Any]) -> Checkpoint:
        """The checkpoint at ``path`` (a new, empty one when there is no
        file). ValidationError (status None) when the file is not a
        checkpoint this library can read (``checkpoint-unreadable``), is of
        another version (``checkpoint-version``) or of another update
        (``checkpoint-mismatch``; ``details["differs"]`` names the keys)."""
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                doc = json.load(f)
        except FileNotFoundError:
            return cls(p, identity)
        except (OSError, ValueError) as e:
            raise _refuse("checkpoint-unreadable", f"checkpoint {p} cannot be read: {e}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise _refuse("checkpoint-unreadable", f"{p} is not a lakehold column-update checkpoint")
        if doc.get("version") != VERSION:
            raise _refuse("checkpoint-version", f"checkpoint {p} is of version {doc.get('version')!r}; "
                          f"this library reads version {VERSION}", version=doc.get("version"))
        theirs = doc.get("identity") or {}
        # Compared as JSON text: the stored identity went through JSON (a
        # tuple came back a list, NaN is not equal to itself), the given one
        # did not.
        differs = sorted(k for k in {*theirs, *identity} if _canon(theirs.get(k)) != _canon(identity.get(k)))
        if differs:
            raise _refuse("checkpoint-mismatch", f"checkpoint {p} belongs to another update (it differs in "
                          f"{', '.join(differs)}): remove it or pass another path", differs=differs)
        return cls(p, identity, doc)

    def planned(self, snapshot_id: int, bases: int) -> None:
        """Note the plan the update is now working on, and save."""
        with self._lock:
            self.snapshot_id, self.bases = snapshot_id, bases
            self._save()

    def record(self, key: str, state: Any, entry: dict[str, Any] | None, info: Any) -> None:
        """Record a finished base (its state ``key``) and save."""
        with self._lock:
            self.done[key] = {"key": key, "state": state, "entry": entry, "info": info}
            self._save()

    def drop(self, keys: list[str]) -> None:
        """Forget bases (their state changed or their file is gone) and save."""
        with self._lock:
            for k in keys:
                self.done.pop(k, None)
            self._save()

    def locations(self) -> set[str]:
        """The column files the checkpoint holds."""
        with self._lock:
            return {d["entry"]["location"] for d in self.done.values() if d.get("entry")}

    def remove(self) -> None:
        """Delete the checkpoint file (after the update committed)."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        _sync_dir(self.path)

    def _save(self) -> None:
        doc = {"format": FORMAT, "version": VERSION, "id": self.id, "identity": self.identity,
               "planned-snapshot-id": self.snapshot_id, "bases": self.bases, "done": list(self.done.values())}
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        tmp = f"{self.path}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f, separators=(",", ":"))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        _sync_dir(self.path)


def _sync_dir(path: str) -> None:
    """fsync the directory holding ``path``: a rename or unlink is durable
    only once its directory is."""
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not sync directories
    finally:
        os.close(fd)


def _canon(v: Any) -> str:
    """v as canonical JSON text, for comparing identities."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)
