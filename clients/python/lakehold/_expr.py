"""Row filters: Iceberg expression JSON for the server, pyarrow.compute for rows.

A scan's ``row_filter`` is sent to the catalog, whose planning is inclusive
(a file that *might* hold a matching row is returned whole), and then
evaluated on the stitched rows here. Filters come as the REST expression
JSON (a dict, or ``True``/``False``), as a PyIceberg expression object, or
as a string in PyIceberg's syntax (``"score > 0.5 and id < 10"``), which
needs PyIceberg installed: its public parser reads the string and this
module writes the JSON itself.

Null semantics follow PyIceberg's Arrow evaluation: a comparison, ``in`` or
``starts-with`` never matches a null value; ``not`` is pushed down to the
predicates first (``not (x < 5)`` is ``x >= 5``), so it matches no null
either.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakehold.errors import FilterError as FilterError

Expression = dict[str, Any] | bool

_UNARY = {"is-null", "not-null", "is-nan", "not-nan"}
_LITERAL = {"lt", "lt-eq", "gt", "gt-eq", "eq", "not-eq", "starts-with", "not-starts-with"}
_SET = {"in", "not-in"}
_NEGATE = {
    "is-null": "not-null", "not-null": "is-null", "is-nan": "not-nan", "not-nan": "is-nan",
    "lt": "gt-eq", "gt-eq": "lt", "gt": "lt-eq", "lt-eq": "gt", "eq": "not-eq", "not-eq": "eq",
    "starts-with": "not-starts-with", "not-starts-with": "starts-with", "in": "not-in", "not-in": "in",
}

# PyIceberg's unbound expression classes, by class name, to REST types.
_PYICEBERG_OPS = {
    "EqualTo": "eq", "NotEqualTo": "not-eq", "LessThan": "lt", "LessThanOrEqual": "lt-eq",
    "GreaterThan": "gt", "GreaterThanOrEqual": "gt-eq", "StartsWith": "starts-with",
    "NotStartsWith": "not-starts-with", "In": "in", "NotIn": "not-in", "IsNull": "is-null",
    "NotNull": "not-null", "IsNaN": "is-nan", "NotNaN": "not-nan",
}


def to_json(row_filter: Any, schema: pa.Schema | None = None) -> Expression | None:
    """Return the REST expression JSON of ``row_filter`` (None for no filter).

    ``schema`` (optional) lets decimal literals be written as the decimal
    strings the server expects. Raises FilterError for a string when
    PyIceberg is not installed, for a string PyIceberg cannot parse, and for
    an object or dict that is not an Iceberg expression.
    """
    if row_filter is None:
        return None
    if isinstance(row_filter, bool):
        return row_filter
    if isinstance(row_filter, dict):
        _check(row_filter)
        return row_filter
    if isinstance(row_filter, str):
        return _from_pyiceberg(_parse(row_filter), schema)
    if type(row_filter).__module__.startswith("pyiceberg."):
        return _from_pyiceberg(row_filter, schema)
    raise FilterError(f"row_filter must be an Iceberg expression dict, a bool or a string, not {type(row_filter).__name__}")


def _parse(text: str) -> Any:
    try:
        from pyiceberg.expressions.parser import parse
    except ImportError as exc:
        raise FilterError(
            "a string row_filter needs PyIceberg's parser (pip install pyiceberg); "
            "or pass the Iceberg expression JSON, e.g. {'type': 'lt', 'term': 'id', 'value': 10}"
        ) from exc
    try:
        return parse(text)
    except Exception as exc:  # the parser raises pyparsing's and its own errors
        raise FilterError(f"row_filter {text!r} does not parse: {exc}") from exc


def _from_pyiceberg(expr: Any, schema: pa.Schema | None) -> Expression:
    name = type(expr).__name__
    if name == "AlwaysTrue":
        return True
    if name == "AlwaysFalse":
        return False
    if name in ("And", "Or"):
        return {"type": name.lower(), "left": _from_pyiceberg(expr.left, schema),
                "right": _from_pyiceberg(expr.right, schema)}
    if name == "Not":
        return {"type": "not", "child": _from_pyiceberg(expr.child, schema)}
    op = _PYICEBERG_OPS.get(name)
    if op is None:
        raise FilterError(f"row_filter: PyIceberg expression {name} has no REST form")
    term = expr.term.name
    out: dict[str, Any] = {"type": op, "term": term}
    if op in _LITERAL:
        out["value"] = _json_value(expr.literal.value, term, schema)
    elif op in _SET:
        out["values"] = sorted((_json_value(lit.value, term, schema) for lit in expr.literals), key=repr)
    return out


def _json_value(value: Any, term: str, schema: pa.Schema | None) -> Any:
    """A literal as Iceberg's single-value JSON."""
    if isinstance(value, decimal.Decimal):
        typ = _field_type(schema, term) if schema is not None else None
        if typ is not None and pa.types.is_decimal(typ):
            return str(value)
        return int(value) if value == value.to_integral_value() and "." not in str(value) else float(value)
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex().upper()
    if hasattr(value, "hex") and type(value).__name__ == "UUID":
        return str(value)
    return value


def _check(expr: Any) -> None:
    """Reject what is plainly not an expression, so a typo is not a 400 later."""
    if isinstance(expr, bool):
        return
    if not isinstance(expr, dict) or not isinstance(expr.get("type"), str):
        raise FilterError(f"row_filter: {expr!r} is not an Iceberg expression")
    kind = expr["type"]
    if kind in ("and", "or"):
        _check(expr.get("left"))
        _check(expr.get("right"))
    elif kind == "not":
        _check(expr.get("child"))
    elif kind in ("true", "false"):
        return
    elif kind not in _UNARY | _LITERAL | _SET:
        raise FilterError(f"row_filter: unknown expression type {kind!r}")
    elif "term" not in expr:
        raise FilterError(f"row_filter: {kind} needs a term")


def referenced_names(expr: Expression | None, schema: pa.Schema) -> list[str]:
    """The top-level columns of ``schema`` that ``expr`` reads, in schema order.

    Raises FilterError for a term that names no column of the schema.
    """
    found: set[str] = set()
    for term in _terms(expr):
        found.add(_top_level(term, schema))
    return [n for n in schema.names if n in found]


def _terms(expr: Any) -> list[str]:
    if not isinstance(expr, dict):
        return []
    kind = expr.get("type")
    if kind in ("and", "or"):
        return _terms(expr.get("left")) + _terms(expr.get("right"))
    if kind == "not":
        return _terms(expr.get("child"))
    if "term" in expr:
        return [_term_name(expr["term"])]
    return []


def _term_name(term: Any) -> str:
    if isinstance(term, str):
        return term
    if isinstance(term, dict) and term.get("type") == "reference" and isinstance(term.get("term"), str):
        return term["term"]
    if isinstance(term, dict) and term.get("type") == "transform":
        raise FilterError("row_filter: transform terms cannot be evaluated on rows; filter on the column itself")
    raise FilterError(f"row_filter: {term!r} is not a column reference")


def _top_level(name: str, schema: pa.Schema) -> str:
    if name in schema.names:
        return name
    head = name.split(".", 1)[0]
    if head in schema.names:
        return head
    raise FilterError(f"row_filter: column {name!r} is not in the table")


def _path(name: str, schema: pa.Schema) -> tuple[str, ...]:
    if name in schema.names:
        return (name,)
    return tuple(name.split("."))


def _field_type(schema: pa.Schema, name: str) -> pa.DataType | None:
    try:
        typ: pa.DataType = schema.field(_top_level(name, schema)).type
    except FilterError:
        return None
    for part in _path(name, schema)[1:]:
        if not pa.types.is_struct(typ):
            return None
        typ = typ.field(part).type
    return typ


def to_pyarrow(expr: Expression | None, schema: pa.Schema) -> pc.Expression | None:
    """A pyarrow.compute expression that keeps the rows ``expr`` matches.

    None means keep every row. Raises FilterError for a term not in
    ``schema`` or a literal that does not convert to its column's type.
    """
    if expr is None or expr is True:
        return None
    return _compile(_push_not(expr, False), schema)


def _push_not(expr: Any, negate: bool) -> Any:
    """Rewrite ``not`` away, as Iceberg's planners do before evaluating."""
    if isinstance(expr, bool):
        return expr != negate
    kind = expr["type"]
    if kind == "not":
        return _push_not(expr["child"], not negate)
    if kind in ("and", "or"):
        flip = {"and": "or", "or": "and"}[kind] if negate else kind
        return {"type": flip, "left": _push_not(expr["left"], negate), "right": _push_not(expr["right"], negate)}
    if kind in ("true", "false"):
        return (kind == "true") != negate
    if not negate:
        return expr
    return {**expr, "type": _NEGATE[kind]}


def _compile(expr: Any, schema: pa.Schema) -> pc.Expression:
    if isinstance(expr, bool):
        return pc.scalar(expr)
    kind = expr["type"]
    if kind == "and":
        return _compile(expr["left"], schema) & _compile(expr["right"], schema)
    if kind == "or":
        return _compile(expr["left"], schema) | _compile(expr["right"], schema)
    name = _term_name(expr["term"])
    _top_level(name, schema)
    field = pc.field(*_path(name, schema))
    typ = _field_type(schema, name)
    if kind in _UNARY:
        return _unary(kind, field)
    if kind in _SET:
        values = pa.array([_literal(v, typ, name) for v in expr.get("values", [])], type=typ)
        member = field.isin(values)
        # isin says false, not null, for a null value: keep nulls out of not-in.
        return member if kind == "in" else ~member & field.is_valid()
    return _binary(kind, field, _literal(expr.get("value"), typ, name))


def _unary(kind: str, field: pc.Expression) -> pc.Expression:
    if kind == "is-null":
        return field.is_null()
    if kind == "not-null":
        return field.is_valid()
    nan = pc.is_nan(field)
    return nan if kind == "is-nan" else ~nan


def _binary(kind: str, field: pc.Expression, value: pa.Scalar) -> pc.Expression:
    if kind == "starts-with":
        return pc.starts_with(field, pattern=value.as_py())
    if kind == "not-starts-with":
        return ~pc.starts_with(field, pattern=value.as_py())
    ops = {"lt": field < value, "lt-eq": field <= value, "gt": field > value, "gt-eq": field >= value,
           "eq": field == value, "not-eq": field != value}
    return ops[kind]


def _literal(value: Any, typ: pa.DataType | None, name: str) -> pa.Scalar:
    """A JSON literal as a scalar of the column's type (dates and
    timestamps arrive as ISO strings, decimals as strings)."""
    try:
        if typ is None:
            return pa.scalar(value)
        if pa.types.is_decimal(typ):
            return pa.scalar(decimal.Decimal(str(value)), type=typ)
        if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
            return pa.scalar(bytes.fromhex(value) if isinstance(value, str) else value, type=typ)
        if pa.types.is_timestamp(typ) and isinstance(value, str):
            return pc.cast(pa.scalar(value.replace("+00:00", "")), pa.timestamp(typ.unit)).cast(typ)
        return pa.scalar(value).cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError, TypeError) as exc:
        raise FilterError(f"row_filter: {value!r} is not a valid {typ} for column {name!r}") from exc
