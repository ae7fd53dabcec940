"""The source side of ``merge_columns``: its keys, indexed once.

``pc.index_in(base_keys, value_set=source_keys)`` builds a hash set of the
whole source on every call; called once per base file it was most of a
merge's time (400k keys, 10 bases: 0.43 of 0.68 s). The index here is built
once per merge and then answers each base: integer keys through a sorted
NumPy array (``searchsorted``), every other type through a dict.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import MergeKeyError

_SAMPLE = 20  # keys an error carries


class KeyIndex:
    """Source row of every key of ``keys`` (non-null and unique).

    Raises MergeKeyError when ``keys`` holds nulls or a key twice; the
    error lists up to 20 of the offending keys.
    """

    def __init__(self, keys: pa.Array) -> None:
        if keys.null_count:
            raise MergeKeyError(f"the source has {keys.null_count} null key(s)", reason="null-key")
        self.type = keys.type
        self._sorted: np.ndarray | None = None
        self._order: np.ndarray | None = None
        self._rows: dict[Any, int] | None = None
        if pa.types.is_integer(keys.type):
            values = keys.to_numpy(zero_copy_only=False)
            order = np.argsort(values, kind="stable")
            ordered = values[order]
            twice = ordered[1:][ordered[1:] == ordered[:-1]]
            if len(twice):
                _duplicates(np.unique(twice).tolist())
            self._sorted, self._order = ordered, order
        else:
            values = keys.to_pylist()
            self._rows = {k: i for i, k in enumerate(values)}
            if len(self._rows) < len(values):
                _duplicates(_repeated(values))

    def lookup(self, keys: pa.Array | pa.ChunkedArray) -> pa.Int64Array:
        """Per key of ``keys`` (a base's key column), its source row, null
        where the source has no such key or the key is null."""
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        if keys.type != self.type:
            keys = keys.cast(self.type)
        if self._rows is not None:
            rows = self._rows
            return pa.array([rows.get(k) for k in keys.to_pylist()], type=pa.int64())
        assert self._sorted is not None and self._order is not None
        valid = pc.is_valid(keys).to_numpy(zero_copy_only=False)
        values = pc.fill_null(keys, 0).to_numpy(zero_copy_only=False)
        if not len(self._sorted):
            return pa.nulls(len(keys), pa.int64())
        pos = np.searchsorted(self._sorted, values)
        pos[pos == len(self._sorted)] = 0
        hit = valid & (self._sorted[pos] == values)
        return pa.array(self._order[pos], type=pa.int64(), mask=~hit)


def _repeated(values: list[Any]) -> list[Any]:
    """The keys of ``values`` that appear more than once, each once, in
    order of their second appearance."""
    seen: set[Any] = set()
    out: dict[Any, None] = {}
    for k in values:
        if k in seen:
            out[k] = None
        seen.add(k)
    return list(out)


def _duplicates(dup: list[Any]) -> None:
    raise MergeKeyError(f"{len(dup)} key(s) appear more than once in the source, e.g. {dup[:5]}", dup[:_SAMPLE],
                        reason="duplicate-key")
