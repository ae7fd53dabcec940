"""Low-level writers for the read-side tests: each builds one commit by hand
(Parquet with field ids, then the catalog's ``/files`` or ``/column-files``
route), so the fixtures of the scan, change and parity tests do not depend
on the library's own writers, and can hold what those never write
(deletion vectors, equality deletes, lineage columns with chosen values)."""

from __future__ import annotations

import subprocess
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import lakehold
from lakehold._deletes import write_puffin

LUSN_ID = 2147483539


def fid(field: pa.Field) -> int:
    return int(field.metadata[b"PARQUET:field_id"])


def _write(table: lakehold.Table, data: pa.Table, stem: str) -> tuple[str, int]:
    loc = f"{table.location}/data/{stem}-{uuid.uuid4().hex[:8]}.parquet"
    with table._io.open_output(loc) as out:
        pq.write_table(data, out)
    return loc, table._io.size(loc)


def with_ids(table: lakehold.Table, data: pa.Table) -> pa.Table:
    """``data`` cast to the table's schema for its columns (field ids on)."""
    sc = table.schema()
    return data.cast(pa.schema([sc.field(n) for n in data.column_names]))


def append_file(table: lakehold.Table, data: pa.Table) -> str:
    """Commit one base file holding ``data``; its location."""
    loc, size = _write(table, with_ids(table, data), "base")
    _files(table, {"add-data-files": [{"location": loc, "file-format": "parquet", "record-count": data.num_rows,
                                       "file-size-in-bytes": size, "spec-id": 0}]})
    return loc


def column_file(table: lakehold.Table, base: str, data: pa.Table, lusn: list[int | None] | None = None) -> str:
    """Commit a column file for ``base`` with ``data``'s columns (and a
    ``_last_updated_sequence_number`` column when ``lusn`` is given)."""
    cols = with_ids(table, data)
    if lusn is not None:
        field = pa.field("_last_updated_sequence_number", pa.int64(), metadata={b"PARQUET:field_id": str(LUSN_ID).encode()})
        cols = cols.append_column(field, pa.array(lusn, pa.int64()))
    loc, size = _write(table, cols, "cols")
    table._rest.request("POST", f"{table._path}/column-files", json={"column-files": [{
        "data-file": base, "location": loc, "file-format": "parquet", "field-ids": [fid(f) for f in cols.schema],
        "file-size-in-bytes": size, "record-count": cols.num_rows}]}, commit=True)
    table.refresh()
    return loc


def deletion_vector(table: lakehold.Table, base: str, positions: list[int]) -> None:
    """Commit a deletion vector deleting ``positions`` of ``base``."""
    loc = f"{table.location}/data/dv-{uuid.uuid4().hex[:8]}.puffin"
    with table._io.open_output(loc) as out:
        blob = write_puffin(out, [(base, positions)])[0]
    _files(table, {"set-deletion-vectors": [blob.request(base, loc)]})


def equality_delete(table: lakehold.Table, keys: pa.Table) -> None:
    """Commit an equality-delete file on ``keys``' columns."""
    data = with_ids(table, keys)
    loc, size = _write(table, data, "eq")
    _files(table, {"add-equality-delete-files": [{"location": loc, "file-format": "parquet",
                                                  "record-count": data.num_rows, "file-size-in-bytes": size,
                                                  "equality-ids": [fid(f) for f in data.schema], "spec-id": 0}]})


def _files(table: lakehold.Table, body: dict[str, Any]) -> None:
    table._rest.request("POST", f"{table._path}/files", json=body, commit=True)
    table.refresh()


def base_files(table: lakehold.Table) -> list[str]:
    """The live base files, in plan order."""
    return [t["data-file"]["file-path"] for t in table._plan({})]


def update_schema(table: lakehold.Table, schema_json: dict[str, Any]) -> None:
    """Make ``schema_json`` (with its field ids) the current schema."""
    table._rest.request("POST", table._path, json={"requirements": [], "updates": [
        {"action": "add-schema", "schema": schema_json}, {"action": "set-current-schema", "schema-id": -1}]},
        commit=True)
    table.refresh()


def set_properties(table: lakehold.Table, props: dict[str, str]) -> None:
    """Set table properties through commitTable."""
    table._rest.request("POST", table._path, json={"requirements": [], "updates": [
        {"action": "set-properties", "updates": props}]}, commit=True)
    table.refresh()


def compact_skip_reason(deployment: Any) -> str | None:
    """Why ``catalog compact`` cannot run on this deployment, None if it can:
    on Postgres it needs the key that seals the warehouse's storage profile
    (CATALOG_SECRET_KEY in the environment or the deployment's extra)."""
    import os

    if deployment.backend == "sqlite" or os.environ.get("CATALOG_SECRET_KEY") or \
            deployment.extra.get("CATALOG_SECRET_KEY"):
        return None
    return "catalog compact on the Postgres deployment needs CATALOG_SECRET_KEY shared with the server"


def compact(catalog_bin: str, deployment: Any, ident: str) -> dict[str, Any]:
    """Run ``catalog compact`` on the deployment's database, picking every
    base with a column file or DV; its report."""
    import json

    out = subprocess.run([catalog_bin, "compact", ident, "--warehouse", deployment.warehouse, *deployment.db_args],
                         check=True, capture_output=True, text=True,
                         env=_env(deployment))
    return json.loads(out.stdout)


def _env(deployment: Any) -> dict[str, str]:
    import os

    return {**os.environ, **{k: v for k, v in deployment.extra.items() if k.startswith("CATALOG_")}}
