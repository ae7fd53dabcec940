"""Column updates: row-aligned column files, one ``/column-files`` commit per call.

A column file holds new values of some top-level fields for every row of
one base data file, in the base's order, deleted rows included (positions
matter). It also carries ``_last_updated_sequence_number`` when only some
rows change: null for the changed rows, the row's current effective value
for the others (docs/column-files.md, "Row lineage"), so change scans
report exactly the changed rows. A map over every row leaves it out: the
catalog then takes every row as changed.

A 409 means nothing was committed: the table is planned again and only
the bases whose files changed meanwhile are rewritten.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _checkpoint, _commit, _schema, _validate, _write
from ._keyindex import KeyIndex
from ._scantasks import ScanTask
from .errors import (CommitFailedError, CommitStateUnknownError, FilterError, ForbiddenError, LakeholdError,
                     MergeKeyError, ServiceUnavailableError, TransportError)

if TYPE_CHECKING:
    from .table import Table

CONFLICT_TRIES = 3
_WORKERS = 4


def nullable(f: pa.Field) -> pa.Field:
    """``f`` optional at the top, field ids kept: a column file's rows for
    deleted base rows are nulls. Nested fields keep the table's
    nullability, so a required list element or struct child is written
    REQUIRED, which is how the catalog knows it holds no nulls."""
    return pa.field(f.name, f.type, True, f.metadata)


def _lineage() -> pa.Field:
    return _schema.lineage_field(_schema.LAST_UPDATED)


def base_state(task: ScanTask) -> tuple[Any, ...]:
    """What a base's column file depends on: its location, data sequence
    number, column files and deletes. Equal states need no rewrite."""
    df = task["data-file"]
    cfs = tuple(sorted((c["location"], tuple(c.get("field-ids") or [])) for c in df.get("column-files") or []))
    dels = tuple(sorted((d.get("file-path"), d.get("content-offset")) for d in task.get("delete-files") or []))
    return df["file-path"], df.get("data-sequence-number"), cfs, dels


def live_mask(table: Table, task: ScanTask) -> np.ndarray:
    """Per base position, whether the row is live (not in a deletion vector).
    LakeholdError for equality deletes (convert them to deletion vectors)."""
    from . import _deletes

    rows = int(task["data-file"]["record-count"])
    keep = np.ones(rows, dtype=bool)
    for d in task.get("delete-files") or []:
        if d.get("content") == "equality-deletes":
            raise LakeholdError(f"{task['data-file']['file-path']} has equality deletes: convert them to "
                                "deletion vectors before updating its columns")
        if d.get("content-offset") is not None:
            bitmap = _deletes.read_dv(table._io, d["file-path"], int(d["content-offset"]),
                                      int(d["content-size-in-bytes"]), d.get("record-count"))
            keep &= np.asarray(_deletes.keep_mask(bitmap, rows))
        else:
            pos = _deletes.positions_from_file(table._io, d["file-path"], task["data-file"]["file-path"])
            keep[pos[pos < rows]] = False
    return keep


BaseReader = Callable[[ScanTask, list[str], bool], pa.Table]


def base_reader(table: Table) -> BaseReader:
    """``read(task, columns, lineage)``: every row of a base (deleted ones
    too, in base order) with the current values of ``columns``, stitched.
    The table's Arrow schema and name mapping are worked out once, not per
    base (on a wide table that was a fifth of a read)."""
    from ._stitch import name_mapping, read_task

    schema, mapping = table.schema(), name_mapping(table.metadata)

    def read(task: ScanTask, columns: list[str], lineage: bool) -> pa.Table:
        return read_task(table._io, task, columns, with_row_lineage=lineage, keep_deleted_rows=True,
                         schema=schema, name_mapping=mapping)

    return read


def blend(changed: pa.Array, new: pa.Table, current: pa.Table, fields: list[pa.Field]) -> pa.Table:
    """Column-file rows: ``new`` where ``changed``, ``current`` elsewhere,
    plus the lineage column (null where changed, carried elsewhere)."""
    arrays = [pc.if_else(changed, new.column(f.name), _as(current.column(f.name), f.type)) for f in fields]
    carried = current.column(_schema.LAST_UPDATED)
    arrays.append(pc.if_else(changed, pa.scalar(None, pa.int64()), carried))
    return pa.Table.from_arrays(arrays, schema=pa.schema([*fields, _lineage()]))


def _as(col: pa.ChunkedArray, t: pa.DataType) -> pa.ChunkedArray:
    """``col`` (read with the table's types) as column-file type ``t``: the
    same values (``if_else`` wants equal types)."""
    return col if col.type == t else col.cast(t)


@dataclass
class _Built:
    entry: dict[str, Any] | None
    info: Any = None


@dataclass
class Job:
    """One column update: ``build(task)`` returns the column-file rows for a
    base (None to leave it alone) and something ``check`` sees for every
    base of the plan before the commit goes out. ``identity()`` says what
    the update is, for its checkpoint; ``info_json``/``info_load`` carry
    ``build``'s info through the checkpoint's JSON."""

    build: Callable[[ScanTask], tuple[pa.Table | None, Any]]
    check: Callable[[list[Any]], None] = lambda infos: None
    plan_filter: Any = None  # expression JSON (a dict, or true/false)
    snapshot_properties: dict[str, str] | None = None
    identity: Callable[[], dict[str, Any]] = lambda: {}
    info_json: Callable[[Any], Any] = lambda info: None
    info_load: Callable[[Any], Any] = lambda raw: None
    _cache: dict[str, _Built] = field(default_factory=dict)
    _written: list[str] = field(default_factory=list)


def state_key(task: ScanTask) -> str:
    """``base_state(task)`` as a string: the key of the build cache and of
    the checkpoint's bases."""
    return json.dumps(base_state(task), separators=(",", ":"))


def _build(table: Table, job: Job, task: ScanTask) -> _Built:
    data, info = job.build(task)
    df = task["data-file"]
    if data is None:
        return _Built(None, info)
    _validate.check_rows(data.num_rows, int(df["record-count"]), f"the column rows for {df['file-path']}")
    loc = _write.new_location(table.location, suffix="-cols")
    job._written.append(loc)
    size = _write.write(table._io, loc, data, dictionary_for_text_only=True)
    ids = [_schema.field_id(f) for f in data.schema]
    return _Built({"data-file": df["file-path"], "location": loc, "file-format": "parquet", "field-ids": ids,
                   "file-size-in-bytes": size, "record-count": data.num_rows}, info)


def run(table: Table, job: Job, fresh: bool = False, checkpoint: str | os.PathLike[str] | None = None) -> int:
    """Plan, write column files for every base ``job`` changes, commit them
    in one request; returns the new (or, when nothing changed, current)
    snapshot id. Retries a 409 up to CONFLICT_TRIES times, rewriting only
    bases that changed. ``fresh`` says the caller has just reloaded the
    table, so the first try plans without reloading.

    The catalog is asked whether it answers before each base is built:
    on a TransportError or ServiceUnavailableError no further base is
    started, the ones under way finish, and the error is raised (as does
    an exception of ``job.build``). Without ``checkpoint`` the written
    files are then deleted (kept when a commit's outcome is unknown).
    With it, every finished base is recorded there (lakehold._checkpoint)
    and its file kept; a rerun builds only the bases not recorded or whose
    state changed since, and the file is removed after the commit."""
    ck = _open_checkpoint(table, job, checkpoint)
    try:
        for attempt in range(CONFLICT_TRIES):
            if attempt or not fresh:
                table.refresh()
            snap = table.current_snapshot_id
            if snap is None:
                raise LakeholdError("the table has no snapshot: append data before updating columns")
            if ck is not None and (landed := _landed(table, ck)) is not None:
                ck.remove()  # an earlier run's commit landed; its answer was lost
                return landed
            body: dict[str, Any] = {"snapshot-id": snap}
            if job.plan_filter is not None:
                body["filter"] = job.plan_filter
            tasks = table._plan(body)
            if ck is not None:
                _resume(table, job, ck, tasks, snap)
            _build_all(table, job, [t for t in tasks if state_key(t) not in job._cache], len(tasks), ck)
            current = [job._cache[state_key(t)] for t in tasks]
            job.check([b.info for b in current])
            entries = [b.entry for b in current if b.entry is not None]
            if not entries:
                _cleanup(table, job, keep=set())
                if ck is not None:
                    ck.remove()
                return snap
            try:
                res = _commit_files(table, job, snap, entries, ck)
            except CommitFailedError:
                continue
            table._apply(res)
            _cleanup(table, job, keep={e["location"] for e in entries})
            if ck is not None:
                ck.remove()
            return int(table.current_snapshot_id or 0)
        raise CommitFailedError(f"column update of {'.'.join(table.identifier)} conflicted {CONFLICT_TRIES} times")
    except CommitStateUnknownError:
        raise
    except BaseException:
        _cleanup(table, job, keep=ck.locations() if ck is not None else set())
        raise


def _commit_files(table: Table, job: Job, snap: int, entries: list[dict[str, Any]],
                  ck: _checkpoint.Checkpoint | None) -> dict[str, Any]:
    # Pin the planned snapshot: a column file carries lineage values
    # read from it, which a concurrent update of the base would make
    # stale even where the catalog could merge the files.
    req: dict[str, Any] = {"column-files": entries, "requirements": [
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": snap}]}
    props = dict(job.snapshot_properties or {})
    if ck is not None:
        props[_checkpoint.SNAPSHOT_PROPERTY] = ck.id
    if props:
        req["snapshot-properties"] = props
    return _commit.post(table._rest, f"{table._path}/column-files", req)


# --- the worker pool -----------------------------------------------------------

_CATALOG_DOWN = (TransportError, ServiceUnavailableError)


def _build_all(table: Table, job: Job, todo: list[ScanTask], planned: int,
               ck: _checkpoint.Checkpoint | None) -> None:
    """Build ``todo`` on _WORKERS threads into ``job._cache`` (and ``ck``).
    A worker asks the catalog whether it answers before each base; the
    first failure (that answer, a build's exception, a checkpoint write)
    stops every worker from taking another base, those under way finish,
    and it is raised."""
    pending = iter(todo)
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker() -> None:
        while True:
            with lock:
                task = None if failures else next(pending, None)
            if task is None:
                return
            try:
                _probe(table)
                built = _build(table, job, task)
                key = state_key(task)
                if ck is not None:
                    ck.record(key, json.loads(key), built.entry, job.info_json(built.info))
                with lock:
                    job._cache[key] = built
            except BaseException as e:
                with lock:
                    failures.append(e)
                return

    with ThreadPoolExecutor(max_workers=max(1, min(_WORKERS, len(todo)))) as pool:
        for f in [pool.submit(worker) for _ in range(min(_WORKERS, len(todo)))]:
            f.result()
    if failures:
        first = failures[0]
        err = _stopped(first, planned - len(todo) + _count_built(job, todo), planned, ck)
        if err is first:
            raise err
        raise err from first


def _count_built(job: Job, todo: list[ScanTask]) -> int:
    return sum(state_key(t) in job._cache for t in todo)


def _probe(table: Table) -> None:
    """Ask the catalog whether the table is there: a TransportError or
    ServiceUnavailableError when it does not answer, before a base's
    (possibly long) build rather than at the commit after the last. HEAD
    needs table-list, which the update itself does not: a 403 still
    shows the catalog answering, so it lets the build go on."""
    try:
        table._rest.request("HEAD", table._path)
    except ForbiddenError:
        pass


def _stopped(e: BaseException, done: int, planned: int,
             ck: _checkpoint.Checkpoint | None) -> BaseException:
    """The error to raise for a stopped build: the catalog's errors
    restated with how far the update got and how to resume; others (what
    ``fn`` raised, a ValidationError of its result) unchanged, with a note."""
    if ck is not None:
        where = (f"the checkpoint {ck.path} holds {done} of {planned} bases: run the same update with "
                 f"checkpoint={ck.path!r} to build only the rest and commit")
    else:
        where = (f"{done} of {planned} bases were built, nothing was committed and their files are deleted "
                 "(pass checkpoint=PATH to keep finished bases for a rerun)")
    if isinstance(e, _CATALOG_DOWN):
        msg = f"column update stopped, the catalog does not answer ({e.message}); {where}"
        return type(e)(msg, status=e.status, type=e.type)
    e.add_note(f"lakehold: column update stopped; {where}")
    return e


# --- checkpoints ---------------------------------------------------------------

def _open_checkpoint(table: Table, job: Job,
                     path: str | os.PathLike[str] | None) -> _checkpoint.Checkpoint | None:
    if path is None:
        return None
    identity = {**job.identity(), "table-uuid": table.metadata.get("table-uuid")}
    return _checkpoint.Checkpoint.open(path, identity)


def _landed(table: Table, ck: _checkpoint.Checkpoint) -> int | None:
    """The snapshot an earlier run of this checkpoint committed, if one did
    (its answer lost: CommitStateUnknownError), else None."""
    if ck.snapshot_id is None:
        return None
    for s in table.snapshots():
        if (s.get("summary") or {}).get(_checkpoint.SNAPSHOT_PROPERTY) == ck.id:
            return int(s["snapshot-id"])
    return None


def _resume(table: Table, job: Job, ck: _checkpoint.Checkpoint, tasks: list[ScanTask], snap: int) -> None:
    """Take the checkpoint's bases into ``job._cache``: those whose state
    is still a planned base's and whose file is there at its recorded
    size. The others are forgotten and their files deleted (best effort):
    the base changed since, so they are built again."""
    planned = {state_key(t) for t in tasks}
    live = {c["location"] for t in tasks for c in t["data-file"].get("column-files") or []}
    stale = []
    for key, d in list(ck.done.items()):
        entry = d.get("entry")
        if key in job._cache:
            continue
        if key in planned and (entry is None or _present(table, entry)):
            job._cache[key] = _Built(entry, job.info_load(d.get("info")))
            continue
        stale.append(key)
        if entry is not None and entry["location"] not in live:
            try:
                table._io.delete(entry["location"])
            except OSError:
                pass  # an orphan for maintenance
    if stale:
        ck.drop(stale)
    ck.planned(snap, len(tasks))


def _present(table: Table, entry: dict[str, Any]) -> bool:
    """Whether a recorded column file is there with its recorded size."""
    try:
        return table._io.size(entry["location"]) == int(entry["file-size-in-bytes"])
    except (OSError, TypeError, ValueError):
        return False


def _cleanup(table: Table, job: Job, keep: set[str]) -> None:
    for loc in job._written:
        if loc not in keep:
            try:
                table._io.delete(loc)
            except OSError:
                pass  # an orphan for maintenance; the commit's outcome is what matters


# --- update_columns -----------------------------------------------------------

def map_job(table: Table, fn: Callable[[pa.Table], Any], inputs: list[str], out_fields: list[pa.Field],
            row_filter: Any, snapshot_properties: dict[str, str] | None, cast: _validate.CastMode = "exact") -> Job:
    """The job of ``Table.update_columns``: ``fn`` over every base's rows.
    Each base's ``fn`` result is checked (lakehold._validate) before its
    column file is written; ValidationError when it does not fit."""
    from . import _expr

    schema = table.schema()
    read_base = base_reader(table)
    cf_fields = [nullable(f) for f in out_fields]
    cf_schema = pa.schema(cf_fields)
    filt = _expr.to_json(row_filter, schema) if row_filter is not None else None
    pred = _expr.to_pyarrow(filt, schema) if filt is not None else None
    filter_cols = _expr.referenced_names(filt, schema) if filt is not None else []

    def build(task: ScanTask) -> tuple[pa.Table | None, Any]:
        rows = read_base(task, inputs, False)
        out = _validate.to_arrow(fn(rows), "update_columns: fn's result")
        _validate.check_rows(out.num_rows, rows.num_rows, "update_columns: fn's result")
        # Every row's values must fit the types; required fields are
        # checked on the rows written (a filtered update keeps the others).
        if pred is None:
            return _validate.conform(out, out_fields, cast, what="update_columns: fn's result",
                                     schema=cf_schema), None
        cur = read_base(task, sorted({*(f.name for f in out_fields), *filter_cols}), True)
        changed = _mask(cur, pred)
        new = _validate.conform(out, out_fields, cast, what="update_columns: fn's result", nulls=changed,
                                schema=cf_schema)
        if not pc.any(changed).as_py():
            return None, None
        return blend(changed, new, cur, cf_fields), None

    def identity() -> dict[str, Any]:
        return {"operation": "update_columns", "inputs": list(inputs), "row-filter": filt, "cast": cast,
                "outputs": [[f.name, _schema.field_id(f)] for f in out_fields]}

    return Job(build=build, plan_filter=filt, snapshot_properties=snapshot_properties, identity=identity)


def _mask(rows: pa.Table, pred: pc.Expression) -> pa.Array:
    """Per row, whether ``pred`` holds (null counts as false). FilterError
    when pyarrow cannot evaluate it on these columns."""
    import pyarrow.dataset as ds

    try:
        res = ds.dataset(rows).to_table(columns={"m": pred}).column("m")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise FilterError(f"the row filter cannot be evaluated on the table's columns: {e}") from None
    return pc.fill_null(res.combine_chunks(), False)


# --- merge_columns ------------------------------------------------------------

def merge_job(table: Table, source: pa.Table, key: str, columns: list[str],
              snapshot_properties: dict[str, str] | None, cast: _validate.CastMode = "exact") -> Job:
    """The job of ``Table.merge_columns``: new values by key. Checks the
    whole source first (lakehold._validate): ValidationError for a key or
    column that does not fit the table, MergeKeyError for null or
    duplicate source keys; the job's check raises MergeKeyError for keys
    no live row has."""
    schema = table.schema()
    read_base = base_reader(table)
    if key not in schema.names:
        raise _validate.fail(_validate.UNKNOWN_COLUMN, f"key column {key!r} is not in the table", column=key)
    if key not in source.column_names:
        raise _validate.fail(_validate.MISSING_COLUMN, f"key column {key!r} is not in the source", column=key)
    fields = [schema.field(c) for c in columns]
    cf_fields = [nullable(f) for f in fields]
    keys = _validate.merge_keys(source.column(key), schema.field(key), cast)
    index = KeyIndex(keys)
    src = _validate.conform(source.select(columns), fields, cast, what="merge_columns source",
                            schema=pa.schema(cf_fields))

    def build(task: ScanTask) -> tuple[pa.Table | None, Any]:
        idx = index.lookup(read_base(task, [key], False).column(key))
        live = pa.array(live_mask(table, task))
        idx = pc.if_else(live, idx, pa.scalar(None, idx.type))
        changed = pc.is_valid(idx)
        matched = pc.drop_null(idx).to_numpy(zero_copy_only=False)
        if len(matched) == 0:
            return None, matched
        if len(matched) == len(idx):
            # Every row of the base changes: the new values alone, without
            # reading the current ones, and no lineage column (the catalog
            # then takes every row as changed, which each one is).
            return src.take(idx), matched
        cur = read_base(task, columns, True)
        return blend(changed, src.take(idx), cur, cf_fields), matched

    def check(infos: list[Any]) -> None:
        hit = np.zeros(len(keys), dtype=bool)
        for m in infos:
            if m is not None and len(m):
                hit[m] = True
        if not hit.all():
            missing = keys.filter(pa.array(~hit)).to_pylist()
            raise MergeKeyError(f"{len(missing)} source key(s) match no live row of the table, e.g. {missing[:5]}",
                                missing[:20], reason="unmatched-key")

    def identity() -> dict[str, Any]:
        return {"operation": "merge_columns", "key": key, "columns": list(columns), "cast": cast,
                "source-sha256": _digest(source.select([key, *columns]))}

    return Job(build=build, check=check, snapshot_properties=snapshot_properties, identity=identity,
               info_json=lambda m: None if m is None else [int(i) for i in m],
               info_load=lambda raw: None if raw is None else np.asarray(raw, dtype=np.int64))


def _digest(source: pa.Table) -> str:
    """SHA-256 of ``source`` as an Arrow IPC stream: a merge's checkpoint
    is refused for another source."""
    import hashlib

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, source.schema) as w:
        w.write_table(source)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()
