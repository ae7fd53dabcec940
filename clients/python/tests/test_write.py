"""The write side against a real catalog: append, update_columns,
merge_columns, idempotent retries of a commit whose answer was lost."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests

import lakehold
from lakehold import _commit, _schema

DIM = 64


def _snapshots(t: lakehold.Table) -> int:
    return len(t.refresh().snapshots())


def _events(t0: int, n: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(t0, t0 + n), pa.int64()),
        "ts": pa.array([dt.datetime(2026, 1, 1 + (i % 3)) for i in range(t0, t0 + n)], pa.timestamp("us")),
        "score": pa.array([None if i % 5 == 0 else float(i) for i in range(t0, t0 + n)], pa.float64()),
        "label": pa.array([f"l{i % 4}" for i in range(t0, t0 + n)]),
    })


def test_append_writes_field_ids_and_stats_in_one_commit(catalog: lakehold.Catalog, namespace: str) -> None:
    t = catalog.create_table(f"{namespace}.ev", _events(0, 1).schema, partition_spec=[("day", "ts")])
    data = _events(0, 30)
    before = _snapshots(t)
    sid = t.append(data, snapshot_properties={"job": "test-append"})
    assert _snapshots(t) == before + 1, "one commit"
    summary = t.snapshot(sid)["summary"]
    assert summary["added-data-files"] == "3" and summary["added-records"] == "30", summary
    assert summary.get("job") == "test-append", summary
    assert all("null-value-counts" not in x["data-file"] for x in t._plan({})), "the library asks for no counts"
    tasks = t._plan({"stats-fields": ["score"]})
    assert len(tasks) == 3
    ids = {f.name: _schema.field_id(f) for f in t.schema()}
    for task in tasks:
        df = task["data-file"]
        assert df["file-path"].startswith(t.location + "/data/ts_day=")
        with t._io.open_input(df["file-path"]) as f:
            written = pq.ParquetFile(f).schema_arrow
        assert {f.name: _schema.field_id(f) for f in written} == ids
        # content-stats reached the manifest: the plan reports its counts.
        nulls = dict(zip(df["null-value-counts"]["keys"], df["null-value-counts"]["values"]))
        day = dt.date.fromisoformat(df["partition"][0]) if isinstance(df["partition"][0], str) else \
            dt.date(1970, 1, 1) + dt.timedelta(days=df["partition"][0])
        rows = [r for r in data.to_pylist() if r["ts"].date() == day]
        assert df["record-count"] == len(rows)
        assert nulls[ids["score"]] == sum(r["score"] is None for r in rows)
        assert set(nulls) == {ids["score"]}, "counts of the stats-fields only"
    # Pruning works off the sent stats: a filter outside every bound plans nothing.
    assert t._plan({"filter": {"type": "gt", "term": "id", "value": 1000}}) == []
    assert t.scan().to_arrow().sort_by("id").to_pylist() == data.to_pylist()


def test_update_columns_refreshes_an_embedding(catalog: lakehold.Catalog, namespace: str) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("text", pa.string()),
                        pa.field("embedding", pa.list_(pa.float32()))])
    t = catalog.create_table(f"{namespace}.docs", schema)
    for start in (0, 100, 200):  # three base files
        n = 40
        t.append(pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                           "text": [f"doc {i}" for i in range(start, start + n)],
                           "embedding": pa.array([[0.0] * DIM] * n, pa.list_(pa.float32()))}))
    first = t.current_snapshot_id
    assert first is not None

    def embed(batch: pa.Table) -> pa.Table:
        ids = batch["id"].to_numpy()
        vecs = (ids[:, None] + np.arange(DIM)[None, :] / DIM).astype("float32")
        return pa.table({"embedding": pa.array(list(vecs), pa.list_(pa.float32()))})

    before = _snapshots(t)
    sid = t.update_columns(embed, inputs=["id"], outputs=["embedding"])
    assert _snapshots(t) == before + 1
    assert t.snapshot(sid)["summary"]["added-column-files"] == "3"
    got = t.scan(selected_fields=("id", "embedding")).to_arrow().sort_by("id")
    for row in got.to_pylist():
        assert len(row["embedding"]) == DIM
        assert row["embedding"][1] == pytest.approx(row["id"] + 1 / DIM)
    assert t.scan(selected_fields=("text",)).to_arrow().num_rows == 120
    # No lineage column written: every row counts as changed.
    assert t.changes(first, selected_fields=("embedding",)).count() == 120

    # A new column from a pa.Schema is added to the table, then written.
    sid2 = t.update_columns(lambda b: pa.table({"n": pc_len(b["text"])}), inputs=["text"],
                            outputs=pa.schema([pa.field("n", pa.int32())]))
    assert "n" in t.schema().names and t.current_snapshot_id == sid2
    lens = {r["id"]: r["n"] for r in t.scan(selected_fields=("id", "n")).to_pylist()} if False else \
        {r["id"]: r["n"] for r in t.scan(selected_fields=("id", "n")).to_arrow().to_pylist()}
    assert lens[5] == len("doc 5") and lens[205] == len("doc 205")


def pc_len(arr: pa.ChunkedArray) -> pa.Array:
    import pyarrow.compute as pc

    return pc.cast(pc.utf8_length(arr), pa.int32())


def test_merge_columns_changes_only_the_given_keys(catalog: lakehold.Catalog, namespace: str) -> None:
    t = catalog.create_table(f"{namespace}.scores", _events(0, 1).schema)
    t.append(_events(0, 50))
    t.append(_events(50, 50))
    start = t.current_snapshot_id
    assert start is not None
    before = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
    new = {3: 0.5, 7: 0.25, 11: None}
    sid = t.merge_columns(pa.table({"id": pa.array(list(new), pa.int64()), "score": list(new.values())}), key="id")
    assert t.snapshot(sid)["summary"]["added-column-files"] == "1", "only the base holding the keys"
    after = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
    assert set(after) == set(before)
    for k, row in after.items():
        want = dict(before[k], score=new[k]) if k in new else before[k]
        assert row == want, k
    # changes() reports exactly the merged rows, by their row ids.
    row_ids = {r["_row_id"]: r["id"] for r in t.scan(selected_fields=("id",), with_row_lineage=True)
               .to_arrow().to_pylist()}
    changed = t.changes(start, selected_fields=("score",)).to_arrow().to_pylist()
    assert sorted(row_ids[r["_row_id"]] for r in changed) == sorted(new)

    # A second merge on the same base carries the first one's lineage.
    mid = t.current_snapshot_id
    t.merge_columns(pa.table({"id": pa.array([4], pa.int64()), "score": [9.0]}), key="id")
    changed = t.changes(mid, selected_fields=("score",)).to_arrow().to_pylist()
    assert [row_ids[r["_row_id"]] for r in changed] == [4]
    changed = t.changes(start, selected_fields=("score",)).to_arrow().to_pylist()
    assert sorted(row_ids[r["_row_id"]] for r in changed) == sorted([*new, 4])


def test_update_columns_with_a_row_filter_keeps_other_rows(catalog: lakehold.Catalog, namespace: str) -> None:
    t = catalog.create_table(f"{namespace}.flt", _events(0, 1).schema)
    t.append(_events(0, 20))
    start = t.current_snapshot_id
    assert start is not None
    before = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
    t.update_columns(lambda b: pa.table({"label": pa.array(["hot"] * b.num_rows)}), inputs=["id"],
                     outputs=["label"], row_filter={"type": "gt", "term": "score", "value": 15.0})
    after = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
    hot = {k for k, r in before.items() if r["score"] is not None and r["score"] > 15.0}
    assert hot == {16, 17, 18, 19}
    for k, row in after.items():
        assert row == (dict(before[k], label="hot") if k in hot else before[k]), k
    row_ids = {r["_row_id"]: r["id"] for r in t.scan(selected_fields=("id",), with_row_lineage=True)
               .to_arrow().to_pylist()}
    changed = t.changes(start, selected_fields=("label",)).to_arrow().to_pylist()
    assert sorted(row_ids[r["_row_id"]] for r in changed) == sorted(hot)


def test_merge_columns_refuses_bad_keys(catalog: lakehold.Catalog, namespace: str) -> None:
    t = catalog.create_table(f"{namespace}.k", _events(0, 1).schema)
    t.append(_events(0, 10))
    n = _snapshots(t)
    with pytest.raises(lakehold.MergeKeyError) as e:
        t.merge_columns(pa.table({"id": pa.array([1, 77], pa.int64()), "score": [1.0, 2.0]}), key="id")
    assert e.value.keys == [77]
    with pytest.raises(lakehold.MergeKeyError) as e:
        t.merge_columns(pa.table({"id": pa.array([2, 2], pa.int64()), "score": [1.0, 2.0]}), key="id")
    assert e.value.keys == [2]
    with pytest.raises(lakehold.MergeKeyError):
        t.merge_columns(pa.table({"id": pa.array([None], pa.int64()), "score": [1.0]}), key="id")
    assert _snapshots(t) == n, "nothing committed"
    # pandas and polars sources.
    import pandas as pd
    import polars as pl

    t.merge_columns(pd.DataFrame({"id": [1], "score": [0.125]}), key="id")
    t.merge_columns(pl.DataFrame({"id": [2], "label": ["polars"]}), key="id")
    rows = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
    assert rows[1]["score"] == 0.125 and rows[2]["label"] == "polars" and rows[3]["score"] == 3.0


def _table_files(t: lakehold.Table) -> set[str]:
    """Every file under the table's location (data and metadata)."""
    import pyarrow.fs as pafs

    fs, path = t._io.filesystem_and_path(t.location)
    try:
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    except FileNotFoundError:
        return set()
    return {i.path for i in infos if i.type == pafs.FileType.File}


def _refused(t: lakehold.Table, reason: str, call: Any) -> lakehold.ValidationError:
    """Run ``call``; it must raise ValidationError with ``reason`` and leave
    the table's snapshot, metadata and files as they were."""
    t.refresh()
    snap, meta, files = t.current_snapshot_id, t.metadata_location, _table_files(t)
    with pytest.raises(lakehold.ValidationError) as e:
        call()
    assert e.value.reason == reason, (e.value.reason, e.value.message)
    t.refresh()
    assert (t.current_snapshot_id, t.metadata_location) == (snap, meta), "nothing committed"
    assert _table_files(t) == files, "no file written (or every one removed)"
    return e.value


def test_writes_check_their_input_before_writing(catalog: lakehold.Catalog, namespace: str) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("score", pa.float64()),
                        pa.field("label", pa.string()),
                        pa.field("tags", pa.list_(pa.field("element", pa.string(), False)))])
    t = catalog.create_table(f"{namespace}.checked", schema)
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "score": [1.0, 2.0, 3.0], "label": ["a", "b", "c"],
                       "tags": pa.array([["x"], [], None], pa.list_(pa.string()))}))
    t.append(pa.table({"id": pa.array([4, 5], pa.int64())}))  # a second base; optional columns as nulls

    # append
    _refused(t, "undeclared-column", lambda: t.append(pa.table({"id": pa.array([9], pa.int64()), "extra": [1]})))
    _refused(t, "type-mismatch", lambda: t.append(pa.table({"id": pa.array([9], pa.int64()), "score": ["9.5"]})))
    _refused(t, "type-mismatch", lambda: t.append(pa.table({"id": pa.array([9], pa.int32())})))
    _refused(t, "null-in-required-field", lambda: t.append(pa.table({"id": pa.array([9, None], pa.int64())})))
    _refused(t, "null-in-required-field", lambda: t.append(pa.table({
        "id": pa.array([9], pa.int64()), "tags": pa.array([["a", None]], pa.list_(pa.string()))})))
    _refused(t, "missing-column", lambda: t.append(pa.table({"score": [1.0]})))
    # update_columns: fn's result is checked for every base, files of
    # bases already written are removed.
    _refused(t, "undeclared-column", lambda: t.update_columns(
        lambda b: pa.table({"score": pa.array([0.5] * b.num_rows), "label": ["z"] * b.num_rows}),
        inputs=["id"], outputs=["score"]))
    _refused(t, "type-mismatch", lambda: t.update_columns(
        lambda b: pa.table({"score": pa.array(["0.5"] * b.num_rows)}), inputs=["id"], outputs=["score"]))
    _refused(t, "missing-column", lambda: t.update_columns(
        lambda b: pa.table({"label": ["z"] * b.num_rows}), inputs=["id"], outputs=["score", "label"]))
    # Only the second base's result is bad: the first one's file is removed.
    _refused(t, "type-mismatch", lambda: t.update_columns(
        lambda b: pa.table({"score": pa.array(["x"] * b.num_rows) if 4 in b["id"].to_pylist()
                            else pa.array([0.5] * b.num_rows)}), inputs=["id"], outputs=["score"]))
    _refused(t, "row-count-mismatch", lambda: t.update_columns(
        lambda b: pa.table({"score": pa.array([0.5])}), inputs=["id"], outputs=["score"]))
    _refused(t, "unknown-column", lambda: t.update_columns(
        lambda b: pa.table({"nope": pa.array([0.5] * b.num_rows)}), inputs=["id"], outputs=["nope"]))
    _refused(t, "null-in-required-field", lambda: t.update_columns(
        lambda b: pa.table({"tags": pa.array([[None]] * b.num_rows, pa.list_(pa.string()))}),
        inputs=["id"], outputs=["tags"]))
    _refused(t, "not-tabular", lambda: t.update_columns(lambda b: [1, 2], inputs=["id"], outputs=["score"]))
    _refused(t, "invalid-cast-mode", lambda: t.update_columns(
        lambda b: pa.table({"score": pa.array([0.5] * b.num_rows)}), inputs=["id"], outputs=["score"],
        cast="unsafe"))  # type: ignore[arg-type]
    # merge_columns: keys and values checked before anything is planned.
    _refused(t, "key-type-mismatch", lambda: t.merge_columns(pa.table({"id": [1.0, 2.0], "score": [9.0, 9.0]}),
                                                             key="id"))
    _refused(t, "key-type-mismatch", lambda: t.merge_columns(pa.table({"id": [1.5], "score": [9.0]}), key="id",
                                                             cast="safe"))
    _refused(t, "type-mismatch", lambda: t.merge_columns(
        pa.table({"id": pa.array([1], pa.int64()), "score": ["9"]}), key="id"))
    _refused(t, "unknown-column", lambda: t.merge_columns(
        pa.table({"id": pa.array([1], pa.int64()), "extra": [1]}), key="id"))
    _refused(t, "null-in-required-field", lambda: t.merge_columns(
        pa.table({"id": pa.array([1], pa.int64()), "tags": pa.array([[None]], pa.list_(pa.string()))}), key="id"))
    # A pandas int column with a missing value is float64: refused as a key.
    import pandas as pd

    e = _refused(t, "key-type-mismatch", lambda: t.merge_columns(pd.DataFrame({"id": [1, None], "score": [1.0, 2.0]}),
                                                                 key="id"))
    assert isinstance(e, lakehold.ValidationError) and e.details["column"] == "id"

    # A filtered update checks required fields on the rows it changes only.
    def tags(b: pa.Table) -> pa.Table:  # a null element but for id 2
        return pa.table({"tags": pa.array([["ok"] if i == 2 else [None] for i in b["id"].to_pylist()],
                                          pa.list_(pa.string()))})

    _refused(t, "null-in-required-field", lambda: t.update_columns(
        tags, inputs=["id"], outputs=["tags"], row_filter={"type": "lt-eq", "term": "id", "value": 2}))
    t.update_columns(tags, inputs=["id"], outputs=["tags"], row_filter={"type": "eq", "term": "id", "value": 2})
    got = {r["id"]: r["tags"] for r in t.scan(selected_fields=("id", "tags")).to_arrow().to_pylist()}
    assert got == {1: ["x"], 2: ["ok"], 3: None, 4: None, 5: None}

    # The safe-cast opt-in: lossless widening is written, with the table's types.
    t.append(pa.table({"id": pa.array([6], pa.int32()), "score": pa.array([6.5], pa.float32())}), cast="safe")
    t.merge_columns(pa.table({"id": pa.array([1, 6], pa.int32()), "score": pa.array([0.25, 0.75], pa.float32())}),
                    key="id", cast="safe")
    t.update_columns(lambda b: pa.table({"label": pa.array(["u"] * b.num_rows, pa.large_string())}), inputs=["id"],
                     outputs=["label"])
    rows = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
    assert rows[6]["score"] == 0.75 and rows[1]["score"] == 0.25 and rows[2]["score"] == 2.0
    assert {r["label"] for r in rows.values()} == {"u"}
    assert t.scan().to_arrow().schema.field("score").type == pa.float64()


class LoseFirstAnswer:
    """A transport that sends the first commit POST to ``suffix`` for real
    and then acts as if the connection dropped before the answer came."""

    def __init__(self, session: requests.Session, suffix: str) -> None:
        self.real = session.request
        self.suffix = suffix
        self.keys: list[str] = []

    def __call__(self, method: str, url: str, **kw):  # type: ignore[no-untyped-def]
        resp = self.real(method, url, **kw)
        if method == "POST" and url.endswith(self.suffix):
            self.keys.append((kw.get("headers") or {}).get("Idempotency-Key", ""))
            if len(self.keys) == 1:
                raise requests.ConnectionError("connection reset by peer")
        return resp


@pytest.mark.parametrize("route", ["/files", "/column-files"])
def test_commit_whose_answer_was_lost_is_applied_once(catalog: lakehold.Catalog, namespace: str,
                                                      monkeypatch: pytest.MonkeyPatch, route: str) -> None:
    t = catalog.create_table(f"{namespace}.idem", _events(0, 1).schema)
    t.append(_events(0, 10))
    n = _snapshots(t)
    lose = LoseFirstAnswer(t._rest.http, route)
    monkeypatch.setattr(t._rest.http, "request", lose)
    monkeypatch.setattr(_commit, "BACKOFF_S", 0.01)
    if route == "/files":
        t.append(_events(10, 5))
    else:
        t.merge_columns(pa.table({"id": pa.array([1], pa.int64()), "score": [5.0]}), key="id")
    assert len(lose.keys) == 2 and lose.keys[0] == lose.keys[1] and lose.keys[0], lose.keys
    assert _snapshots(t) == n + 1, "the retry replayed the first commit, no second snapshot"
    rows = t.scan().to_arrow()
    assert rows.num_rows == (15 if route == "/files" else 10)


def test_unanswered_commit_is_state_unknown(catalog: lakehold.Catalog, namespace: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    t = catalog.create_table(f"{namespace}.lost", _events(0, 1).schema)

    def never(method: str, url: str, **kw):  # type: ignore[no-untyped-def]
        if method == "POST" and url.endswith("/files"):
            raise requests.Timeout("read timed out")
        return real(method, url, **kw)

    real = t._rest.http.request
    monkeypatch.setattr(t._rest.http, "request", never)
    monkeypatch.setattr(_commit, "BACKOFF_S", 0.0)
    with pytest.raises(lakehold.CommitStateUnknownError):
        t.append(_events(0, 3))


def test_conflicting_update_is_replanned(catalog: lakehold.Catalog, namespace: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A concurrent commit to the same base between plan and commit: 409,
    nothing committed; the library re-plans, rewrites and lands once."""
    t = catalog.create_table(f"{namespace}.race", _events(0, 1).schema)
    t.append(_events(0, 10))
    start = t.current_snapshot_id
    assert start is not None
    other = catalog.load_table(f"{namespace}.race")
    real = _commit.post
    calls: list[int] = []

    def racing(rest, path, body, **kw):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 1 and path.endswith("/column-files"):
            other.merge_columns(pa.table({"id": pa.array([2], pa.int64()), "label": ["other"]}), key="id")
        return real(rest, path, body, **kw)

    monkeypatch.setattr(_commit, "post", racing)
    t.merge_columns(pa.table({"id": pa.array([1], pa.int64()), "score": [42.0]}), key="id")
    rows = {r["id"]: r for r in t.scan().to_arrow().to_pylist()}
    assert rows[1]["score"] == 42.0 and rows[2]["label"] == "other"
    assert len(calls) >= 3, "ours, the other's, ours again after the 409"
    # Our rewrite carried the other update's lineage: both rows read as changed.
    row_ids = {r["_row_id"]: r["id"] for r in t.scan(selected_fields=("id",), with_row_lineage=True)
               .to_arrow().to_pylist()}
    changed = t.changes(start, selected_fields=("score", "label")).to_arrow().to_pylist()
    assert sorted(row_ids[r["_row_id"]] for r in changed) == [1, 2]


def _answer(status: int, body: dict) -> requests.Response:  # type: ignore[type-arg]
    import json

    resp = requests.Response()
    resp.status_code = status
    resp._content = json.dumps(body).encode()  # a stand-in answer built by the test, not a real request
    return resp


def test_503_is_retried_with_the_same_key_and_500_is_state_unknown(catalog: lakehold.Catalog, namespace: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    t = catalog.create_table(f"{namespace}.busy", _events(0, 1).schema)
    real = t._rest.http.request
    keys: list[str] = []
    status = {"next": 503}

    def busy_once(method: str, url: str, **kw):  # type: ignore[no-untyped-def]
        if method == "POST" and url.endswith("/files"):
            keys.append(kw["headers"]["Idempotency-Key"])
            if status["next"]:
                code, status["next"] = status["next"], 0
                kind = "ServiceUnavailableException" if code == 503 else "InternalServerError"
                return _answer(code, {"error": {"message": "not now", "type": kind, "code": code}})
        return real(method, url, **kw)

    monkeypatch.setattr(t._rest.http, "request", busy_once)
    monkeypatch.setattr(_commit, "BACKOFF_S", 0.01)
    n = _snapshots(t)
    t.append(_events(0, 4))
    assert len(keys) == 2 and keys[0] == keys[1]
    assert _snapshots(t) == n + 1
    status["next"] = 500
    with pytest.raises(lakehold.CommitStateUnknownError):
        t.append(_events(4, 4))
    assert _snapshots(t) == n + 1


def test_column_files_stay_aligned_over_deleted_rows(catalog: lakehold.Catalog, namespace: str) -> None:
    """A base with a deletion vector: the column file still has a row per
    base position, a deleted row's key is not a match, live rows update."""
    import io as _pyio

    from lakehold import _deletes

    t = catalog.create_table(f"{namespace}.dv", _events(0, 1).schema)
    t.append(_events(0, 6))
    (task,) = t._plan({})
    base = task["data-file"]["file-path"]
    buf = _pyio.BytesIO()
    (blob,) = _deletes.write_puffin(buf, [(base, [1, 4])])  # ids 1 and 4
    loc = f"{t.location}/data/dv-test.puffin"
    with t._io.open_output(loc) as out:
        out.write(buf.getvalue())
    t._rest.request("POST", f"{t._path}/files", json={"set-deletion-vectors": [blob.request(base, loc)]}, commit=True)
    n = _snapshots(t)
    with pytest.raises(lakehold.MergeKeyError) as e:
        t.merge_columns(pa.table({"id": pa.array([4], pa.int64()), "score": [1.0]}), key="id")
    assert e.value.keys == [4] and _snapshots(t) == n
    t.merge_columns(pa.table({"id": pa.array([5, 2], pa.int64()), "score": [50.0, 20.0]}), key="id")
    rows = {r["id"]: r["score"] for r in t.scan().to_arrow().to_pylist()}
    assert rows == {0: None, 2: 20.0, 3: 3.0, 5: 50.0}
    t.update_columns(lambda b: pa.table({"score": pc_len(b["label"]).cast(pa.float64())}), inputs=["label"],
                     outputs=["score"])
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [0, 2, 3, 5]


def test_refused_column_commit_reports_reason_and_removes_its_files(catalog: lakehold.Catalog, namespace: str) -> None:
    import pyarrow.fs as pafs

    t = catalog.create_table(f"{namespace}.refused", _events(0, 1).schema, partition_spec=[("identity", "label")])
    t.append(_events(0, 8))
    fs, path = t._io.filesystem_and_path(f"{t.location}/data")

    def files() -> set[str]:
        return {i.path for i in fs.get_file_info(pafs.FileSelector(path, recursive=True)) if i.type == pafs.FileType.File}

    before = files()
    with pytest.raises(lakehold.ValidationError) as e:
        t.update_columns(lambda b: pa.table({"label": pa.array(["x"] * b.num_rows)}), inputs=[], outputs=["label"])
    assert e.value.reason == "partition-source-field", (e.value.reason, e.value.message)
    assert files() == before, "the refused commit's column files were deleted"


def test_partition_transforms_match_the_spec_vectors() -> None:
    from lakehold import _partition

    # Iceberg spec, "Appendix B": 32-bit Murmur3 hash values.
    assert _partition.murmur3_32(_partition._hash_bytes(34, pa.int64())) == 2017239379
    assert _partition.murmur3_32(_partition._hash_bytes(17486, pa.date32())) == -653330422
    assert _partition.murmur3_32(b"iceberg") == 1210000089
    ts = pa.array([dt.datetime(2017, 11, 16, 22, 31, 8), None], pa.timestamp("us"))
    assert _partition.apply("year", ts).to_pylist() == [47, None]
    assert _partition.apply("month", ts).to_pylist() == [574, None]
    assert _partition.apply("day", ts).to_pylist() == [dt.date(2017, 11, 16), None]
    assert _partition.apply("hour", ts).to_pylist() == [419686, None]
    assert _partition.apply("bucket[16]", pa.array([34, None], pa.int64())).to_pylist() == [2017239379 % 16, None]
    assert _partition.apply("truncate[10]", pa.array([1, -1, 15])).to_pylist() == [0, -10, 10]
    assert _partition.apply("truncate[3]", pa.array(["iceberg"])).to_pylist() == ["ice"]


def test_long_string_bounds_are_truncated_and_not_tight() -> None:
    from lakehold import _write

    f = pa.field("s", pa.string(), True, {b"PARQUET:field_id": b"1"})
    st = _write.content_stats(pa.table({"s": pa.array(["a" * 40, "b" * 40])}, schema=pa.schema([f])))["1"]
    assert st["lower-bound"] == "a" * 16 and st["upper-bound"] == "b" * 15 + "c" and st["tight-bounds"] is False
    st = _write.content_stats(pa.table({"s": pa.array(["x", None])}, schema=pa.schema([f])))["1"]
    assert st == {"value-count": 2, "null-value-count": 1, "lower-bound": "x", "upper-bound": "x", "tight-bounds": True}


class _MemoryIO:
    """A FileIO stand-in holding one written file in memory (the encoding
    choice is a pure function of the data; no catalog needed)."""

    def __init__(self) -> None:
        self.data = b""

    def open_output(self, location: str) -> Any:
        import contextlib
        import io

        @contextlib.contextmanager
        def sink() -> Any:
            b = io.BytesIO()
            yield b
            self.data = b.getvalue()

        return sink()


def test_column_files_dictionary_encode_only_text() -> None:
    from lakehold import _write

    data = pa.table({"label": ["a", "b"] * 50, "score": [float(i) for i in range(100)],
                     "embedding": pa.array([[1.0, 2.0]] * 100, pa.list_(pa.float32()))})
    for text_only, want in ((True, [True, False, False]), (False, [True, True, True])):
        io = _MemoryIO()
        _write.write(io, "mem://f.parquet", data, dictionary_for_text_only=text_only)
        rg = pq.ParquetFile(pa.BufferReader(io.data)).metadata.row_group(0)
        got = [any("DICTIONARY" in e for e in rg.column(i).encodings) for i in range(rg.num_columns)]
        assert got == want, (text_only, got)
