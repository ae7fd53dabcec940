"""Resumable column updates (``checkpoint=PATH``) against a real catalog:
an update stopped by ``fn`` or by a catalog that stops answering leaves
its finished bases in the checkpoint; a rerun builds only the rest (and
bases changed since), commits once and removes the checkpoint."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pytest

import lakehold
from conftest import start_catalog, stop_catalog
from lakehold import _colupdate
from lakehold.errors import CommitStateUnknownError, TransportError, ValidationError

BASES = 8
ROWS = 10


class Boom(Exception):
    """What the test's ``fn`` raises on purpose."""


def _table(catalog: lakehold.Catalog, name: str) -> lakehold.Table:
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("score", pa.float64()),
                        pa.field("label", pa.string())])
    t = catalog.create_table(name, schema)
    for b in range(BASES):  # one base file per append
        ids = list(range(b * 100, b * 100 + ROWS))
        t.append(pa.table({"id": pa.array(ids, pa.int64()), "score": pa.array([0.0] * ROWS),
                           "label": pa.array(["old"] * ROWS)}))
    return t


class Counter:
    """``fn``: score = 2 * id; records which bases it ran for (by their
    first id) and runs ``hook(n)`` before the n-th call's result (1-based)."""

    def __init__(self, hook: Callable[[int], None] = lambda n: None) -> None:
        self.calls: list[int] = []
        self.hook = hook
        self.lock = threading.Lock()

    def __call__(self, rows: pa.Table) -> pa.Table:
        with self.lock:
            self.calls.append(int(rows.column("id")[0].as_py()))
            n = len(self.calls)
        self.hook(n)
        return pa.table({"score": pc.multiply(pc.cast(rows.column("id"), pa.float64()), 2.0)})


def _fail_at(k: int) -> Callable[[int], None]:
    def hook(n: int) -> None:
        if n == k:
            raise Boom(f"fn failed at call {n}")
    return hook


def _scores_right(t: lakehold.Table) -> None:
    rows = t.refresh().scan(selected_fields=("id", "score")).to_arrow().to_pylist()
    assert len(rows) == BASES * ROWS
    assert all(r["score"] == 2.0 * r["id"] for r in rows), [r for r in rows if r["score"] != 2.0 * r["id"]][:3]


def _recorded(path: Path) -> list[dict]:
    doc = json.loads(path.read_text())
    assert doc["format"] == "lakehold-column-update-checkpoint" and doc["version"] == 1
    return list(doc["done"])


def _exists(t: lakehold.Table, location: str) -> bool:
    fs, p = t._io.filesystem_and_path(location)
    return fs.get_file_info(p).type != pafs.FileType.NotFound


def test_fn_failure_resumes_only_the_remaining_bases(catalog: lakehold.Catalog, namespace: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_colupdate, "_WORKERS", 2)
    t = _table(catalog, f"{namespace}.emb")
    before = len(t.refresh().snapshots())
    ck = tmp_path / "update.ckpt"
    first = Counter(_fail_at(3))
    with pytest.raises(Boom) as err:
        t.update_columns(first, inputs=["id"], outputs=["score"], checkpoint=ck)
    # Scheduling stopped: at most the failing call and one under way on
    # the other worker, never the remaining bases.
    assert 3 <= len(first.calls) <= 4, first.calls
    assert "holds" in "".join(getattr(err.value, "__notes__", [])), "the error says how far it got"
    assert len(t.refresh().snapshots()) == before, "nothing committed"
    done = _recorded(ck)
    assert len(done) == len(first.calls) - 1, "every finished base is recorded, the failed one is not"
    for d in done:
        assert _exists(t, d["entry"]["location"]), "recorded files are kept"
        assert d["entry"]["record-count"] == ROWS and d["entry"]["field-ids"]
        assert d["state"][0] == d["entry"]["data-file"]

    second = Counter()
    sid = t.update_columns(second, inputs=["id"], outputs=["score"], checkpoint=ck)
    assert len(second.calls) == BASES - len(done), (first.calls, second.calls)
    finished_first = {c for i, c in enumerate(first.calls) if i + 1 != 3}
    assert not finished_first & set(second.calls), "no finished base is computed again"
    assert len(t.refresh().snapshots()) == before + 1 and t.current_snapshot_id == sid, "one commit"
    assert t.snapshot(sid)["summary"]["added-column-files"] == str(BASES)
    assert not ck.exists(), "the checkpoint is removed after the commit"
    _scores_right(t)


def test_a_killed_catalog_stops_before_the_next_base_and_resumes(catalog_bin: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_colupdate, "_WORKERS", 2)
    work = Path(tempfile.mkdtemp(prefix="lakehold-py-resume-"))
    wh = work / "warehouse"
    wh.mkdir()
    running = start_catalog(catalog_bin, work, warehouse_dir=wh)
    try:
        cat = lakehold.load_catalog("kill", uri=running.uri, warehouse=running.warehouse)
        cat.create_namespace("ns")
        t = _table(cat, "ns.emb")
        before = len(t.refresh().snapshots())
        ck = work / "update.ckpt"
        k = 3

        def kill(n: int) -> None:
            if n == k:
                os.kill(running.proc.pid, signal.SIGKILL)
                running.proc.wait()

        first = Counter(kill)
        with pytest.raises(TransportError) as err:
            t.update_columns(first, inputs=["id"], outputs=["score"], checkpoint=ck)
        assert k <= len(first.calls) <= k + 1, f"stopped before the next base: {first.calls}"
        done = _recorded(ck)
        assert len(done) == len(first.calls), "the bases under way finished and were recorded"
        assert f"holds {len(done)} of {BASES} bases" in str(err.value) and str(ck) in str(err.value), str(err.value)

        running = start_catalog(catalog_bin, work, warehouse_dir=wh)  # same data dir, new port
        cat = lakehold.load_catalog("kill", uri=running.uri, warehouse=running.warehouse)
        t = cat.load_table("ns.emb")
        assert len(t.snapshots()) == before, "nothing was committed"
        second = Counter()
        sid = t.update_columns(second, inputs=["id"], outputs=["score"], checkpoint=ck)
        assert sorted(first.calls + second.calls) == [b * 100 for b in range(BASES)], "each base computed once"
        assert len(t.refresh().snapshots()) == before + 1 and t.current_snapshot_id == sid
        assert not ck.exists()
        _scores_right(t)
    finally:
        stop_catalog(running)
        shutil.rmtree(work, ignore_errors=True)


def test_a_base_changed_between_runs_is_computed_again(catalog: lakehold.Catalog, namespace: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_colupdate, "_WORKERS", 1)
    t = _table(catalog, f"{namespace}.emb")
    ck = tmp_path / "update.ckpt"
    first = Counter(_fail_at(4))
    with pytest.raises(Boom):
        t.update_columns(first, inputs=["id"], outputs=["score"], checkpoint=ck)
    done = _recorded(ck)
    assert len(done) == 3 and len(first.calls) == 4
    changed_base = first.calls[1]
    # Another update of that base commits meanwhile: its state changes.
    t.merge_columns(pa.table({"id": pa.array([changed_base + 1], pa.int64()), "label": ["merged"]}), key="id")
    stale = [d["entry"]["location"] for d in done
             if d["entry"]["data-file"] in {x["data-file"]["file-path"] for x in t._plan({})
                                            if x["data-file"].get("column-files")}]
    assert len(stale) == 1
    before = len(t.refresh().snapshots())

    second = Counter()
    t.update_columns(second, inputs=["id"], outputs=["score"], checkpoint=ck)
    assert sorted(second.calls) == sorted({b * 100 for b in range(BASES)} - {first.calls[0], first.calls[2]}), \
        (first.calls, second.calls)
    assert len(t.refresh().snapshots()) == before + 1
    assert not _exists(t, stale[0]), "the changed base's recorded file is discarded"
    _scores_right(t)
    labels = {r["id"]: r["label"] for r in t.scan(selected_fields=("id", "label")).to_arrow().to_pylist()}
    assert labels[changed_base + 1] == "merged" and labels[changed_base] == "old"


def test_a_checkpoint_of_another_update_is_refused(catalog: lakehold.Catalog, namespace: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_colupdate, "_WORKERS", 1)
    t = _table(catalog, f"{namespace}.emb")
    ck = tmp_path / "update.ckpt"
    with pytest.raises(Boom):
        t.update_columns(Counter(_fail_at(2)), inputs=["id"], outputs=["score"], checkpoint=ck)
    saved = ck.read_text()
    other = _table(catalog, f"{namespace}.other")
    attempts: list[Callable[[Counter], object]] = [
        lambda fn: t.update_columns(fn, inputs=["id", "label"], outputs=["score"], checkpoint=ck),
        lambda fn: t.update_columns(fn, inputs=["id"], outputs=["score"], row_filter="id > 5", checkpoint=ck),
        lambda fn: t.update_columns(lambda b: pa.table({"label": pa.array(["x"] * b.num_rows)}), inputs=["id"],
                                    outputs=["label"], checkpoint=ck),
        lambda fn: other.update_columns(fn, inputs=["id"], outputs=["score"], checkpoint=ck),
        lambda fn: t.merge_columns(pa.table({"id": pa.array([1], pa.int64()), "score": [1.0]}), key="id",
                                   checkpoint=ck),
    ]
    for attempt in attempts:
        fn = Counter()
        with pytest.raises(ValidationError) as err:
            attempt(fn)
        assert err.value.reason == "checkpoint-mismatch", err.value
        assert fn.calls == [], "refused before any base is built"
        assert ck.read_text() == saved, "the checkpoint is left as it was"
    ck.write_text("not json")
    with pytest.raises(ValidationError) as err:
        t.update_columns(Counter(), inputs=["id"], outputs=["score"], checkpoint=ck)
    assert err.value.reason == "checkpoint-unreadable"


def test_merge_columns_resumes_from_its_checkpoint(catalog: lakehold.Catalog, namespace: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_colupdate, "_WORKERS", 1)
    t = _table(catalog, f"{namespace}.emb")
    keys = [b * 100 + 1 for b in range(BASES)]
    source = pa.table({"id": pa.array(keys, pa.int64()), "label": [f"new{k}" for k in keys]})
    ck = tmp_path / "merge.ckpt"
    real = _colupdate._build
    built: list[str] = []

    def flaky(table: lakehold.Table, job: _colupdate.Job, task: dict) -> _colupdate._Built:
        built.append(task["data-file"]["file-path"])
        if len(built) == 3:
            raise Boom("stop")
        return real(table, job, task)

    monkeypatch.setattr(_colupdate, "_build", flaky)
    before = len(t.refresh().snapshots())
    with pytest.raises(Boom):
        t.merge_columns(source, key="id", checkpoint=ck)
    assert len(_recorded(ck)) == 2
    built.clear()
    monkeypatch.setattr(_colupdate, "_build", lambda table, job, task: (built.append("x"), real(table, job, task))[1])
    t.merge_columns(source, key="id", checkpoint=ck)
    assert len(built) == BASES - 2, "only the bases not recorded"
    assert len(t.refresh().snapshots()) == before + 1 and not ck.exists()
    labels = {r["id"]: r["label"] for r in t.scan(selected_fields=("id", "label")).to_arrow().to_pylist()}
    assert all(labels[k] == f"new{k}" for k in keys) and labels[0] == "old"


def test_a_commit_whose_answer_was_lost_is_not_made_twice(catalog: lakehold.Catalog, namespace: str,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = _table(catalog, f"{namespace}.emb")
    ck = tmp_path / "update.ckpt"
    real = _colupdate._commit_files

    def lost(*args: object, **kw: object) -> dict:
        real(*args, **kw)  # type: ignore[arg-type]
        raise CommitStateUnknownError("answer lost")

    monkeypatch.setattr(_colupdate, "_commit_files", lost)
    with pytest.raises(CommitStateUnknownError):
        t.update_columns(Counter(), inputs=["id"], outputs=["score"], checkpoint=ck)
    monkeypatch.setattr(_colupdate, "_commit_files", real)
    landed = t.refresh().current_snapshot_id
    before = len(t.snapshots())
    again = Counter()
    assert t.update_columns(again, inputs=["id"], outputs=["score"], checkpoint=ck) == landed
    assert again.calls == [] and len(t.refresh().snapshots()) == before and not ck.exists()
    _scores_right(t)
    for task in t._plan({}):
        for c in task["data-file"]["column-files"]:
            assert _exists(t, c["location"]), "no committed file was deleted"



def test_an_identity_with_tuples_and_nan_reopens(tmp_path: Path) -> None:
    """The stored identity went through JSON; the given one did not. A
    tuple (a list once stored) or a NaN in the row filter still matches."""
    from lakehold import _checkpoint
    ident = {"table-uuid": "u", "row-filter": {"type": "in", "term": "id", "values": (1, 2)},
             "nan": float("nan")}
    ck = _checkpoint.Checkpoint.open(tmp_path / "c.ckpt", ident)
    ck.planned(1, 2)
    again = _checkpoint.Checkpoint.open(tmp_path / "c.ckpt", dict(ident))
    assert again.snapshot_id == 1
    with pytest.raises(ValidationError) as err:
        _checkpoint.Checkpoint.open(tmp_path / "c.ckpt", {**ident, "row-filter": {"type": "in", "term": "id",
                                                                                 "values": (1, 3)}})
    assert err.value.reason == "checkpoint-mismatch"


def test_the_probe_lets_a_caller_without_table_list_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """HEAD needs table-list, which an update does not: a 403 shows the
    catalog answering; a transport failure still stops the build."""
    from lakehold.errors import ForbiddenError

    class Rest:
        def __init__(self, exc: BaseException) -> None:
            self.exc = exc

        def request(self, method: str, path: str) -> None:
            raise self.exc

    class T:
        _path = "/v1/wh/namespaces/n/tables/t"

        def __init__(self, exc: BaseException) -> None:
            self._rest = Rest(exc)

    _colupdate._probe(T(ForbiddenError("no table-list")))  # type: ignore[arg-type]
    with pytest.raises(TransportError):
        _colupdate._probe(T(TransportError("down")))  # type: ignore[arg-type]
