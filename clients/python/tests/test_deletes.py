"""Deletion vectors and equality deletes: the Puffin codec against blobs the
Go side wrote (tests/data/go-dv.*, made with iceberg-go's DV writer, the
format the catalog validates), corruption refused, anti-joins."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pytest

from lakehold._deletes import DeletesError, anti_join, decode_dv, encode_dv, keep_mask, write_puffin

DATA = Path(__file__).parent / "data"


def _go() -> tuple[bytes, dict]:
    return (DATA / "go-dv.puffin").read_bytes(), json.loads((DATA / "go-dv.json").read_text())


def _blob(raw: bytes, meta: dict) -> bytes:
    return raw[meta["offset"]:meta["offset"] + meta["size-in-bytes"]]


def test_decodes_go_written_dv_across_32_bit_keys() -> None:
    raw, meta = _go()
    a, b = meta["blobs"]
    got = decode_dv(_blob(raw, a), a["cardinality"])
    assert list(got) == meta["positions-a"]
    assert max(got) > 2**33  # a position in a third 32-bit bucket
    assert list(decode_dv(_blob(raw, b), b["cardinality"])) == meta["positions-b"]


def test_encoding_is_byte_identical_to_go() -> None:
    raw, meta = _go()
    a = meta["blobs"][0]
    assert encode_dv(meta["positions-a"]) == _blob(raw, a)


def test_puffin_file_layout_matches_go() -> None:
    raw, meta = _go()
    out = io.BytesIO()
    blobs = write_puffin(out, [(b["referenced-data-file"], meta[f"positions-{k}"]) for b, k in zip(meta["blobs"], "ab")])
    written = out.getvalue()
    for mine, theirs in zip(blobs, meta["blobs"]):
        assert (mine.offset, mine.size_in_bytes, mine.cardinality) == (
            theirs["offset"], theirs["size-in-bytes"], theirs["cardinality"])
        assert written[mine.offset:mine.offset + mine.size_in_bytes] == _blob(raw, theirs)
    assert written[:4] == b"PFA1" and written[-4:] == b"PFA1"
    footer_len = int.from_bytes(written[-12:-8], "little")
    footer = json.loads(written[-12 - footer_len:-12])
    assert [b["properties"]["referenced-data-file"] for b in footer["blobs"]] == [
        b["referenced-data-file"] for b in meta["blobs"]]
    assert all(b["type"] == "deletion-vector-v1" and "compression-codec" not in b for b in footer["blobs"])


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[:-6] + bytes([b[-6] ^ 0xFF]) + b[-5:], "checksum"),
    (lambda b: b[:4] + b"\x00\x00\x00\x00" + b[8:], "magic"),
    (lambda b: b[:-1], "length"),
    (lambda b: b[:8], "short"),
])
def test_damaged_blob_is_refused(damage, message) -> None:
    raw, meta = _go()
    with pytest.raises(DeletesError, match=message):
        decode_dv(damage(_blob(raw, meta["blobs"][0])))


def test_cardinality_mismatch_is_refused() -> None:
    raw, meta = _go()
    a = meta["blobs"][0]
    with pytest.raises(DeletesError, match="positions, expected"):
        decode_dv(_blob(raw, a), a["cardinality"] + 1)


def test_keep_mask_ignores_positions_past_the_end() -> None:
    raw, meta = _go()
    mask = keep_mask(decode_dv(_blob(raw, meta["blobs"][0])), 12)
    assert mask.to_pylist() == [False, True, False, False, True, True, True, True, True, False, True, True]


def test_anti_join_single_key_matches_nulls_and_keeps_order() -> None:
    rows = pa.table({"id": [5, None, 3, 1, 3], "v": list("abcde")})
    kept = anti_join(rows, pa.table({"id": pa.array([3, None], pa.int64())}), ["id"])
    assert kept.column("v").to_pylist() == ["a", "d"]


def test_anti_join_several_keys() -> None:
    rows = pa.table({"a": [1, 1, 2, 2], "b": ["x", "y", "x", "y"], "v": [0, 1, 2, 3]})
    kept = anti_join(rows, pa.table({"a": [1, 2], "b": ["y", "x"]}), ["a", "b"])
    assert kept.column("v").to_pylist() == [0, 3]
    with pytest.raises(DeletesError, match="null"):
        anti_join(rows, pa.table({"a": pa.array([None], pa.int64()), "b": ["x"]}), ["a", "b"])
