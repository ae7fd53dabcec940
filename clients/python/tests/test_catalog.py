"""Connecting, creating tables and error mapping, against a real catalog."""

from __future__ import annotations

import time

import requests
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import lakehold
from lakehold import _schema

NESTED = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("ts", pa.timestamp("us")),
    pa.field("tags", pa.list_(pa.string())),
    pa.field("point", pa.struct([("x", pa.float64()), ("y", pa.float64())])),
    pa.field("attrs", pa.map_(pa.string(), pa.int64())),
    pa.field("region", pa.string()),
])


def _ids(t: pa.DataType) -> list[int]:
    """Field ids of every nested field of ``t``."""
    out: list[int] = []
    if pa.types.is_struct(t):
        children = [t.field(i) for i in range(t.num_fields)]
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        children = [t.value_field]
    elif pa.types.is_map(t):
        children = [t.key_field, t.item_field]
    else:
        return out
    for c in children:
        fid = _schema.field_id(c)
        assert fid is not None, f"nested field {c.name} has no field id"
        out += [fid, *_ids(c.type)]
    return out


def all_ids(schema: pa.Schema) -> list[int]:
    out: list[int] = []
    for f in schema:
        fid = _schema.field_id(f)
        assert fid is not None, f"{f.name} has no field id"
        out += [fid, *_ids(f.type)]
    return out


def test_create_reads_back_catalog_ids_and_spec(catalog: lakehold.Catalog, namespace: str) -> None:
    t = catalog.create_table(f"{namespace}.events", NESTED,
                             partition_spec=[("day", "ts"), ("bucket[8]", "id"), ("identity", "region")])
    assert t.format_version == 4
    ids = all_ids(t.schema())
    assert len(ids) == len(set(ids)) == 11, ids  # 6 columns, 1 element, 2 struct children, key, value
    assert t.metadata["last-column-id"] == max(ids)
    spec = t.spec_json()
    by_name = {f.name: _schema.field_id(f) for f in t.schema()}
    assert [(f["transform"], f["source-id"]) for f in spec["fields"]] == [
        ("day", by_name["ts"]), ("bucket[8]", by_name["id"]), ("identity", by_name["region"])]
    again = catalog.load_table((namespace, "events"))
    assert again.schema().equals(t.schema(), check_metadata=True)
    assert (namespace, "events") in catalog.list_tables(namespace)
    assert (namespace,) in catalog.list_namespaces()


def test_nested_field_ids_are_in_written_parquet(catalog: lakehold.Catalog, namespace: str) -> None:
    t = catalog.create_table(f"{namespace}.nested", NESTED)
    rows = pa.table({"id": [1, 2], "ts": pa.array([0, 86_400_000_000], pa.timestamp("us")),
                     "tags": [["a"], None], "point": [{"x": 1.0, "y": 2.0}, None],
                     "attrs": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int64())), "region": ["eu", "us"]})
    t.append(rows)
    (task,) = t._plan({})
    with t._io.open_input(task["data-file"]["file-path"]) as f:
        written = pq.ParquetFile(f).schema_arrow
    assert all_ids(written) == all_ids(t.schema())
    assert t.scan().to_arrow().sort_by("id").to_pylist() == rows.to_pylist()


def test_unregister_keeps_the_files_and_registers_back(catalog: lakehold.Catalog, namespace: str) -> None:
    t = catalog.create_table(f"{namespace}.moved", pa.schema([pa.field("id", pa.int64(), nullable=False)]))
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    before = catalog.load_table((namespace, "moved"))
    loc = catalog.unregister_table((namespace, "moved"))
    assert loc == before.metadata_location
    assert not catalog.table_exists((namespace, "moved"))
    with pytest.raises(lakehold.NoSuchTableError):
        catalog.unregister_table((namespace, "moved"))
    back = catalog.register_table((namespace, "moved_back"), loc)
    assert back.scan().to_arrow().sort_by("id").column("id").to_pylist() == [1, 2, 3]


def test_errors_are_typed(catalog: lakehold.Catalog, namespace: str) -> None:
    with pytest.raises(lakehold.NoSuchTableError):
        catalog.load_table(f"{namespace}.missing")
    with pytest.raises(lakehold.NoSuchNamespaceError):
        catalog.list_tables("no_such_namespace_here")
    t = catalog.create_table(f"{namespace}.e", pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.float64())]))
    with pytest.raises(lakehold.AlreadyExistsError):
        catalog.create_table(f"{namespace}.e", pa.schema([pa.field("id", pa.int64())]))
    t.append(pa.table({"id": [1, 2, 3], "v": [0.0, 0.0, 0.0]}))
    (task,) = t._plan({})
    base = task["data-file"]["file-path"]
    # A column file whose declared row count disagrees with its base.
    with pytest.raises(lakehold.ValidationError) as e:
        t._rest.request("POST", f"{t._path}/column-files", json={"column-files": [{
            "data-file": base, "location": base.rsplit("/", 1)[0] + "/cf-never-written.parquet",
            "file-format": "parquet", "field-ids": [2], "file-size-in-bytes": 1, "record-count": 7}]}, commit=True)
    assert e.value.status == 400 and e.value.reason == "record-count-mismatch", (e.value.reason, e.value.message)
    # A column file that is the base data file itself.
    with pytest.raises(lakehold.ValidationError) as e:
        t._rest.request("POST", f"{t._path}/column-files", json={"column-files": [{
            "data-file": base, "location": base,
            "file-format": "parquet", "field-ids": [2], "file-size-in-bytes": 1, "record-count": 3}]}, commit=True)
    assert e.value.status == 400 and e.value.reason == "duplicate-file", (e.value.reason, e.value.message)
    # A merge key the table does not hold is refused before any commit.
    before = len(t.refresh().snapshots())
    with pytest.raises(lakehold.MergeKeyError):
        t.merge_columns(pa.table({"id": [42], "v": [1.0]}), key="id")
    assert len(t.refresh().snapshots()) == before


def test_connect_with_credential_and_with_token(auth_deployment) -> None:  # type: ignore[no-untyped-def]
    r = auth_deployment.running
    cred = f"{auth_deployment.client_id}:{auth_deployment.client_secret}"
    cat = lakehold.load_catalog("auth", uri=r.uri, warehouse="lake", credential=cred, scope="catalog")
    cat.create_namespace("authns")
    t = cat.create_table("authns.t", pa.schema([pa.field("id", pa.int64())]))
    t.append(pa.table({"id": [1, 2]}))
    assert t.scan().to_arrow().num_rows == 2

    token = requests.post(f"{r.uri}/v1/oauth/tokens", data={
        "grant_type": "client_credentials", "client_id": auth_deployment.client_id,
        "client_secret": auth_deployment.client_secret, "scope": "catalog"}, timeout=30).json()["access_token"]
    by_token = lakehold.load_catalog("auth", uri=r.uri, warehouse="lake", token=token)
    assert by_token.load_table("authns.t").scan().to_arrow().num_rows == 2

    with pytest.raises(lakehold.NotAuthorizedError) as e:
        lakehold.load_catalog("auth", uri=r.uri, warehouse="lake", credential=f"{auth_deployment.client_id}:wrong-secret")
    assert "wrong-secret" not in str(e.value)
    with pytest.raises((lakehold.NotAuthorizedError, lakehold.ForbiddenError)):
        lakehold.load_catalog("anon", uri=r.uri, warehouse="lake").load_table("authns.t")
    assert auth_deployment.client_secret not in r.log_text()
    assert token not in r.log_text()


def test_expired_token_is_renewed_from_the_credential(auth_deployment) -> None:  # type: ignore[no-untyped-def]
    r = auth_deployment.running
    cat = lakehold.load_catalog("auth", uri=r.uri, warehouse="lake",
                                credential=f"{auth_deployment.client_id}:{auth_deployment.client_secret}")
    cat._rest._token = "not-a-valid-token"  # as if it had expired: the 401 makes it sign in again
    cat.list_namespaces()
    assert cat._rest._token != "not-a-valid-token"


def test_events_follow_changes(catalog: lakehold.Catalog, namespace: str) -> None:
    # Where the feed stands now: everything after it is this test's.
    start = catalog.events(page_size=1000)
    token = start.continuation_token
    while start.events:
        start = catalog.events(token, page_size=1000)
        token = start.continuation_token
    t = catalog.create_table(f"{namespace}.scores", pa.schema([pa.field("id", pa.int64(), nullable=False)]))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    catalog.drop_table(f"{namespace}.scores")

    # On Postgres an event shows once every older transaction on the server
    # has ended (docs/events.md, "Order"): other tests share the server.
    deadline = time.monotonic() + 30
    page = catalog.events(token, objects=[namespace])
    while len(page.events) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
        page = catalog.events(token, objects=[namespace])
    assert [e.operation_type for e in page.events] == ["create-table", "update-table", "drop-table"]
    uuid = t.metadata["table-uuid"]
    assert {e.operation["table-uuid"] for e in page.events} == {uuid}
    assert page.events[0].operation["identifier"] == {"namespace": [namespace], "name": "scores"}
    assert all(isinstance(e, lakehold.Event) and e.id and e.timestamp_ms > 0 for e in page.events)
    assert len({e.id for e in page.events}) == 3
    # The last token answers nothing until something new commits.
    assert catalog.events(page.continuation_token, objects=[namespace]).events == []
    only_drops = catalog.events(token, operation_types=["drop-table"], objects=[namespace])
    assert [e.operation_type for e in only_drops.events] == ["drop-table"]
    with pytest.raises(lakehold.LakeholdError):
        catalog.events("not-a-token-of-ours")
