"""The drift check of the plan contract: the library's scan-task types
(``lakehold._scantasks``) against the catalog's OpenAPI schemas in
``openapi/scantasks/scantasks.json``, which the server's Go types are
generated from. A property added, removed, renamed, made (not) required or
retyped on one side only fails here. Also the run-time decode of a plan
answer (``_scantasks.resolve``)."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from lakehold import _scantasks
from lakehold.errors import LakeholdError

SPEC = Path(__file__).resolve().parents[3] / "openapi" / "scantasks" / "scantasks.json"
REF = "#/components/schemas/"


def schemas() -> dict[str, Any]:
    return json.loads(SPEC.read_text())["components"]["schemas"]


def expected_type(prop: dict[str, Any]) -> Any:
    """The Python type of a schema property, as the TypedDicts spell it."""
    if "$ref" in prop:
        name = prop["$ref"].removeprefix(REF)
        return Any if name == "RawJSON" else _scantasks.WIRE_TYPES[name]
    if prop.get("type") == "array":
        return list[expected_type(prop["items"])]  # type: ignore[misc]  # a type built at run time
    return {"integer": int, "string": str, "boolean": bool, "number": float}[prop["type"]]


def test_every_schema_has_a_type() -> None:
    # RawJSON is any JSON value: Any in the TypedDicts, not a type of its own.
    assert set(schemas()) - {"RawJSON"} == set(_scantasks.WIRE_TYPES)


@pytest.mark.parametrize("name", sorted(_scantasks.WIRE_TYPES))
def test_type_matches_schema(name: str) -> None:
    schema = schemas()[name]
    typ = _scantasks.WIRE_TYPES[name]
    props = schema["properties"]
    assert set(typ.__annotations__) == set(props), f"{name}: keys differ from {SPEC.name}"
    assert typ.__required_keys__ == frozenset(schema.get("required", [])), f"{name}: required keys differ"
    hints = typing.get_type_hints(typ)
    for key, prop in props.items():
        assert hints[key] == expected_type(prop), f"{name}.{key}: {hints[key]} is not the schema's {prop}"


def answer() -> dict[str, Any]:
    """A plan answer as the catalog sends one, both delete-file kinds."""
    return {
        "status": "completed", "plan-id": "p",
        "delete-files": [
            {"content": "position-deletes", "file-path": "s3://b/dv.puffin", "file-format": "puffin", "spec-id": 0,
             "partition": [], "file-size-in-bytes": 80, "record-count": 2,
             "referenced-data-file": "s3://b/a.parquet", "content-offset": 4, "content-size-in-bytes": 76},
            {"content": "equality-deletes", "file-path": "s3://b/eq.parquet", "file-format": "parquet", "spec-id": 0,
             "partition": [], "file-size-in-bytes": 300, "record-count": 1, "equality-ids": [1]},
        ],
        "file-scan-tasks": [
            {"delete-file-references": [1, 0], "residual-filter": True,
             "data-file": {"content": "data", "file-path": "s3://b/a.parquet", "file-format": "parquet", "spec-id": 0,
                           "partition": [], "file-size-in-bytes": 900, "record-count": 10, "first-row-id": 100,
                           "data-sequence-number": 7, "latest-column-file-snapshot-id": 55,
                           "column-files": [{"location": "s3://b/c.parquet", "file-format": "parquet",
                                             "field-ids": [2], "file-size-in-bytes": 99}]}},
            {"residual-filter": True,
             "data-file": {"content": "data", "file-path": "s3://b/b.parquet", "file-format": "parquet", "spec-id": 0,
                           "partition": [], "file-size-in-bytes": 50, "record-count": 3}},
        ],
    }


def test_resolve() -> None:
    res = answer()
    tasks = _scantasks.resolve(res)
    assert [t["data-file"]["file-path"] for t in tasks] == ["s3://b/a.parquet", "s3://b/b.parquet"]
    assert tasks[0]["delete-files"] == [res["delete-files"][1], res["delete-files"][0]]
    assert tasks[1]["delete-files"] == []
    assert all("delete-file-references" not in t for t in tasks)
    assert tasks[0]["residual-filter"] is True


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["file-scan-tasks"][0]["data-file"].pop("record-count"), "data file without record-count"),
    (lambda r: r["file-scan-tasks"][0]["data-file"]["column-files"][0].pop("field-ids"), "without field-ids"),
    (lambda r: r["delete-files"][0].pop("file-path"), "delete file without file-path"),
    (lambda r: r["file-scan-tasks"][1].pop("data-file"), "without a data file"),
    (lambda r: r["file-scan-tasks"][1].update({"delete-file-references": [2]}), "references delete files [2] of 2"),
])
def test_resolve_refuses_other_shapes(edit: Any, message: str) -> None:
    res = answer()
    edit(res)
    with pytest.raises(LakeholdError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _scantasks.resolve(res)
