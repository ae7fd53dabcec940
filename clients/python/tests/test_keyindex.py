"""KeyIndex (merge_columns' source index) against pyarrow's index_in, the
per-base lookup it replaces."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from lakehold._keyindex import KeyIndex
from lakehold.errors import MergeKeyError


def _expected(base: pa.Array, source: pa.Array) -> list[int | None]:
    return pc.index_in(base, value_set=source).cast(pa.int64()).to_pylist()


@pytest.mark.parametrize("typ", [pa.int8(), pa.int32(), pa.int64(), pa.uint16(), pa.uint64()])
def test_integer_keys_match_index_in(typ: pa.DataType) -> None:
    rng = np.random.default_rng(3)
    hi = 120 if typ.bit_width == 8 else 10_000
    lo = 0 if pa.types.is_unsigned_integer(typ) else -hi
    source = pa.array(rng.permutation(np.arange(lo, hi))[: (hi - lo) // 2], type=typ)
    base = pa.array([None if i % 17 == 0 else int(v) for i, v in enumerate(rng.integers(lo, hi, 3000))], type=typ)
    assert KeyIndex(source).lookup(base).to_pylist() == _expected(base, source)


def test_string_keys_match_index_in() -> None:
    source = pa.array([f"k{i}" for i in range(0, 2000, 3)])
    base = pa.array([None if i % 11 == 0 else f"k{i}" for i in range(2000)])
    got = KeyIndex(source).lookup(pa.chunked_array([base.slice(0, 700), base.slice(700)]))
    assert got.to_pylist() == _expected(base, source)


def test_base_keys_cast_to_the_source_type() -> None:
    index = KeyIndex(pa.array([5, 7, 9], type=pa.int64()))
    assert index.lookup(pa.array([9, 1, 5], type=pa.int32())).to_pylist() == [2, None, 0]


def test_empty_source_matches_nothing() -> None:
    assert KeyIndex(pa.array([], type=pa.int64())).lookup(pa.array([1, None, 2])).to_pylist() == [None] * 3


@pytest.mark.parametrize("source", [pa.array([3, 1, 3, 2, 1, 3]), pa.array(["b", "a", "b", "c", "a", "b"])])
def test_duplicate_keys_are_refused_with_each_key_once(source: pa.Array) -> None:
    with pytest.raises(MergeKeyError) as e:
        KeyIndex(source)
    assert "2 key(s) appear more than once" in str(e.value)
    assert sorted(e.value.keys) == sorted(set(source.to_pylist()) - {2, "c"})


def test_null_keys_are_refused() -> None:
    with pytest.raises(MergeKeyError, match="1 null key"):
        KeyIndex(pa.array([1, None, 2]))
