"""Deletes: Puffin deletion vectors (read and write) and equality deletes.

A deletion vector is a Puffin blob of type ``deletion-vector-v1``: a 4-byte
big-endian length of what follows up to the checksum, the magic bytes
``D1 D3 39 64``, a portable 64-bit Roaring bitmap of the deleted row
positions, and a big-endian CRC-32 of magic and bitmap. The portable 64-bit
layout (bucket count, then per 32-bit high key a 32-bit Roaring bitmap) is
what pyroaring's ``BitMap64`` serializes, so the bitmap is decoded by it in
C, not in Python.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyroaring import BitMap64

from lakehold.errors import DeletesError as DeletesError

DV_BLOB_TYPE = "deletion-vector-v1"
_DV_MAGIC = b"\xd1\xd3\x39\x64"
_PUFFIN_MAGIC = b"PFA1"
# Reserved field ids of a position-delete file's columns.
_POS_FILE_PATH_ID = 2147483546
_POS_POS_ID = 2147483545


@dataclass(frozen=True)
class DVBlob:
    """Where a written deletion vector sits: what ``set-deletion-vectors`` takes."""

    referenced_data_file: str
    offset: int
    size_in_bytes: int
    cardinality: int

    def request(self, data_file: str, location: str) -> dict[str, Any]:
        """The ``set-deletion-vectors`` entry for this blob in ``location``."""
        return {"data-file": data_file, "location": location, "offset": self.offset,
                "size-in-bytes": self.size_in_bytes, "cardinality": self.cardinality}


def decode_dv(blob: bytes, cardinality: int | None = None) -> BitMap64:
    """Decode a ``deletion-vector-v1`` blob into the deleted positions.

    Raises DeletesError when the blob is short, its length, magic or CRC is
    wrong, the bitmap does not decode, or it holds another number of
    positions than ``cardinality`` (when given).
    """
    if len(blob) < 12:
        raise DeletesError(f"deletion vector is {len(blob)} bytes, too short")
    (length,) = struct.unpack(">I", blob[:4])
    if length != len(blob) - 8:
        raise DeletesError(f"deletion vector length field says {length}, blob holds {len(blob) - 8}")
    if blob[4:8] != _DV_MAGIC:
        raise DeletesError("deletion vector magic is wrong")
    (crc,) = struct.unpack(">I", blob[-4:])
    if zlib.crc32(blob[4:-4]) != crc:
        raise DeletesError("deletion vector checksum does not match")
    try:
        bitmap = BitMap64.deserialize(bytes(blob[8:-4]))
    except (ValueError, OverflowError) as exc:
        raise DeletesError(f"deletion vector bitmap does not decode: {exc}") from exc
    if cardinality is not None and len(bitmap) != cardinality:
        raise DeletesError(f"deletion vector holds {len(bitmap)} positions, expected {cardinality}")
    return bitmap


def encode_dv(positions: Iterable[int]) -> bytes:
    """The ``deletion-vector-v1`` blob deleting ``positions``."""
    bitmap = BitMap64(positions)
    bitmap.run_optimize()
    body = _DV_MAGIC + bitmap.serialize()
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def write_puffin(out: BinaryIO, vectors: Sequence[tuple[str, Iterable[int]]]) -> list[DVBlob]:
    """Write a Puffin file of one deletion vector per (data file, positions).

    The data file is the blob's ``referenced-data-file`` (use the location
    the catalog reports). Returns where each blob went, in input order.
    """
    out.write(_PUFFIN_MAGIC)
    offset = len(_PUFFIN_MAGIC)
    blobs, meta = [], []
    for data_file, positions in vectors:
        blob = encode_dv(positions)
        out.write(blob)
        card = len(BitMap64(positions)) if not isinstance(positions, BitMap64) else len(positions)
        blobs.append(DVBlob(data_file, offset, len(blob), card))
        # Snapshot id and sequence number are -1: the commit assigns them.
        meta.append({"type": DV_BLOB_TYPE, "fields": [], "snapshot-id": -1, "sequence-number": -1,
                     "offset": offset, "length": len(blob),
                     "properties": {"referenced-data-file": data_file, "cardinality": str(card)}})
        offset += len(blob)
    payload = json.dumps({"blobs": meta, "properties": {"created-by": "lakehold-python"}}).encode()
    out.write(_PUFFIN_MAGIC + payload + struct.pack("<i", len(payload)) + b"\x00\x00\x00\x00" + _PUFFIN_MAGIC)
    return blobs


def read_dv(io: Any, location: str, offset: int, size: int, cardinality: int | None) -> BitMap64:
    """Read and decode the blob at ``offset`` of a Puffin file through ``io``.

    Raises DeletesError when it cannot be read or decoded.
    """
    try:
        with io.open_input(location) as f:
            f.seek(offset)
            blob = f.read(size)
    except OSError as exc:
        raise DeletesError(f"deletion vector {location} cannot be read: {exc}") from exc
    if len(blob) != size:
        raise DeletesError(f"deletion vector {location} ends before its blob does")
    return decode_dv(blob, cardinality)


def keep_mask(deleted: BitMap64, num_rows: int) -> pa.BooleanArray:
    """A mask that is false at every deleted position below ``num_rows``."""
    keep = np.ones(num_rows, dtype=bool)
    pos = np.frombuffer(deleted.to_array(), dtype=np.uint64)
    keep[pos[pos < num_rows].astype(np.int64)] = False
    return pa.array(keep, type=pa.bool_())


def positions_from_file(io: Any, location: str, data_file: str) -> np.ndarray:
    """Positions deleted from ``data_file`` by a Parquet position-delete file."""
    with io.open_input(location) as f:
        pf = pq.ParquetFile(f)
        names = {_field_id(fld): fld.name for fld in pf.schema_arrow}
        path_col = names.get(_POS_FILE_PATH_ID, "file_path")
        pos_col = names.get(_POS_POS_ID, "pos")
        t = pf.read(columns=[path_col, pos_col])
    mine = t.filter(pc.equal(t.column(path_col), data_file))
    return mine.column(pos_col).to_numpy()


def _field_id(field: pa.Field) -> int | None:
    md = field.metadata or {}
    raw = md.get(b"PARQUET:field_id")
    return int(raw) if raw is not None else None


def anti_join(rows: pa.Table, deletes: pa.Table, keys: list[str]) -> pa.Table:
    """The rows of ``rows`` whose ``keys`` values appear in no row of ``deletes``.

    Equality deletes match nulls to nulls (the Iceberg rule). Rows keep
    their order. Raises DeletesError for a multi-column key with nulls in
    the delete file, which the vectorized path cannot match exactly.
    """
    if deletes.num_rows == 0 or rows.num_rows == 0:
        return rows
    if len(keys) == 1:
        hit = pc.is_in(rows.column(keys[0]), value_set=deletes.column(keys[0]).combine_chunks(), skip_nulls=False)
        return rows.filter(pc.invert(hit))
    if any(deletes.column(k).null_count for k in keys):
        raise DeletesError("equality deletes on several columns with null values are not supported by this reader")
    pos = "__lakehold_pos"
    left = pa.table({**{k: rows.column(k) for k in keys}, pos: pa.array(np.arange(rows.num_rows))})
    right = deletes.select(keys).group_by(keys).aggregate([])
    kept = np.sort(left.join(right, keys=keys, join_type="left anti").column(pos).to_numpy())
    return rows.take(pa.array(kept))
