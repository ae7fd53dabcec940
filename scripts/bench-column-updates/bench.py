"""Write amplification of a column refresh: copy-on-write vs column files vs Lance.

Run by scripts/bench-column-updates.sh, which starts a catalog and passes
--uri and --warehouse. Three contenders get the same wide table (id, 80
doubles including `score`, 10 ints, 9 strings; optionally a 64-float
`embedding`) split into the same number of files, and the same new values
for every row:

- cow: PyIceberg 0.12 on a format-version 2 table. The cheapest honest
  copy-on-write refresh: scan the table, replace the column (aligned by id)
  and commit one `overwrite()` (all files dropped by metadata, the table
  rewritten once). The scan is part of the update: a rewrite needs the
  other 99 columns.
- cf: column files through the lakehold library on a format-version 4
  table: `merge_columns(source, key="id")` for `score`, and
  `update_columns(fn, inputs=["id"], outputs=["embedding"])` for the
  embedding (fn looks the new vectors up by id, the same glue as cow's).
- lance: pylance 14 `merge_insert("id").when_matched_update_all()
  .write_mode("rewrite_columns")` on a local dataset.

Bytes written: every file that is new or changed under the table's (or
dataset's) directory after the update, split into data and metadata by
directory. Times: each run builds fresh tables, so every update is a first
update of its table; the median over --runs is printed. Reads are timed on
the last run's tables after one warm-up read; the stitched read and the
plain read of the same base files take turns, and their ratio is the
median of the pairs.

Nothing here is a test: it measures, checks that each contender's update
really landed (values compared by id) and exits non-zero when one did not.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

N_DOUBLES = 79  # besides score: 80 doubles in all
N_INTS = 10
N_STRINGS = 9
EMBED_DIM = 64
SIZES = {"20k": (20_000, 4), "400k": (400_000, 10), "2m": (2_000_000, 20)}  # 20k: a quick smoke run


# ---------------------------------------------------------------- data


def base_table(rows: int, embedding: bool, seed: int = 7) -> pa.Table:
    """The wide table every contender starts from (100 columns, +1 with embedding)."""
    rng = np.random.default_rng(seed)
    cols: dict[str, pa.Array] = {"id": pa.array(np.arange(rows, dtype=np.int64))}
    cols["score"] = pa.array(rng.random(rows))
    for i in range(N_DOUBLES):
        cols[f"d{i:02d}"] = pa.array(rng.standard_normal(rows))
    for i in range(N_INTS):
        cols[f"i{i:02d}"] = pa.array(rng.integers(0, 1_000_000, rows, dtype=np.int32))
    for i in range(N_STRINGS):
        # Low-cardinality labels, as real string columns mostly are.
        codes = pa.array(rng.integers(0, 5_000, rows, dtype=np.int64))
        cols[f"s{i:02d}"] = pc.binary_join_element_wise(f"label{i}-", pc.cast(codes, pa.string()), "")
    if embedding:
        cols["embedding"] = embeddings(np.arange(rows, dtype=np.int64), version=0)
    return pa.table(cols)


def embeddings(ids: np.ndarray, version: int) -> pa.Array:
    """A deterministic 64-float vector per id (list<float>; Iceberg has no fixed-size list)."""
    freq = np.linspace(0.001, 0.05, EMBED_DIM, dtype=np.float64)
    values = np.sin(ids[:, None].astype(np.float64) * freq[None, :] + version).astype(np.float32)
    offsets = np.arange(0, (len(ids) + 1) * EMBED_DIM, EMBED_DIM, dtype=np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.ravel()))


def update_source(rows: int, column: str) -> pa.Table:
    """New values for every row, keyed by id (the same source for each contender)."""
    ids = np.arange(rows, dtype=np.int64)
    if column == "score":
        return pa.table({"id": ids, "score": np.random.default_rng(11).random(rows)})
    return pa.table({"id": ids, "embedding": embeddings(ids, version=1)})


class Aligner:
    """source[column] reordered to follow ids: the glue every contender's fn
    shares. The source's ids are sorted once, so a call per base file
    (update_columns) is a binary search per row rather than a hash set of
    the whole source each time (which made the glue, not the library, most
    of a per-file update)."""

    def __init__(self, source: pa.Table, column: str) -> None:
        ids = source["id"].to_numpy()
        self.order = np.argsort(ids, kind="stable")
        self.sorted = ids[self.order]
        self.values = source[column]

    def __call__(self, ids: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
        want = ids.to_numpy()
        pos = np.minimum(np.searchsorted(self.sorted, want), len(self.sorted) - 1)
        if not np.array_equal(self.sorted[pos], want):
            sys.exit("bench: an id of the table is not in the update source")
        return pc.take(self.values, pa.array(self.order[pos]))


def aligned(source: pa.Table, ids: pa.ChunkedArray | pa.Array, column: str) -> pa.ChunkedArray | pa.Array:
    """source[column] reordered to follow ids, in one call."""
    return Aligner(source, column)(ids)


def chunks(table: pa.Table, files: int) -> list[pa.Table]:
    per = -(-table.num_rows // files)
    return [table.slice(i * per, per) for i in range(files)]


# ---------------------------------------------------------------- measuring


def walk(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under root: relative path -> (size, mtime_ns)."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath, n)
            st = p.stat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


@dataclass
class Written:
    total: int = 0
    metadata: int = 0
    files: int = 0


def written(before: dict, after: dict, is_data: Callable[[str], bool]) -> Written:
    w = Written()
    for rel, meta in after.items():
        if before.get(rel) == meta:
            continue
        w.total += meta[0]
        w.files += 1
        if not is_data(rel):
            w.metadata += meta[0]
    return w


def iceberg_is_data(rel: str) -> bool:
    return rel.startswith("data/") or rel.startswith("data" + os.sep)


def lance_is_data(rel: str) -> bool:
    return rel.startswith("data/")


def local_path(location: str) -> Path:
    u = urlparse(location)
    return Path(u.path if u.scheme == "file" else location)


@dataclass
class HttpCall:
    method: str
    path: str
    seconds: float
    sent: int
    received: int


class HttpLog:
    """Times every HTTP request made through `requests` while active.

    Wraps requests.Session.send (public API) so the lakehold library's own
    calls are timed as they happen, without reaching into the library.
    """

    def __init__(self) -> None:
        self.calls: list[HttpCall] = []

    def __enter__(self) -> "HttpLog":
        import requests

        self._orig = requests.Session.send
        log = self

        def send(session, request, **kwargs):
            t0 = time.perf_counter()
            resp = log._orig(session, request, **kwargs)
            _ = resp.content  # the body is part of the call
            body = request.body or b""
            log.calls.append(HttpCall(request.method, urlparse(request.url).path, time.perf_counter() - t0,
                                      len(body if isinstance(body, bytes) else body.encode()), len(resp.content)))
            return resp

        requests.Session.send = send
        return self

    def __exit__(self, *exc) -> None:
        import requests

        requests.Session.send = self._orig

    def seconds(self, pred: Callable[[HttpCall], bool]) -> float:
        return sum(c.seconds for c in self.calls if pred(c))

    def count(self, pred: Callable[[HttpCall], bool]) -> int:
        return sum(1 for c in self.calls if pred(c))


def is_plan(c: HttpCall) -> bool:
    return c.method == "POST" and (c.path.endswith("/plan") or c.path.endswith("/tasks"))


def is_commit(c: HttpCall) -> bool:
    return c.method == "POST" and c.path.endswith("/column-files")


@dataclass
class Run:
    seconds: float
    written: Written
    plan_s: float = 0.0
    commit_s: float = 0.0
    commits: int = 0
    commit_json: int = 0


@dataclass
class Result:
    name: str
    runs: list[Run] = field(default_factory=list)
    read_s: float = 0.0
    plain_read_s: float = 0.0
    read_ratio: float = 0.0  # median of paired read / plain read
    how: str = ""

    def median(self, f: Callable[[Run], float]) -> float:
        return statistics.median(f(r) for r in self.runs)


def timed_read(fn: Callable[[], pa.Table], repeat: int) -> float:
    fn()  # warm-up: page cache, imports, connection
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired_reads(a: Callable[[], pa.Table], b: Callable[[], pa.Table], repeat: int) -> tuple[float, float, float]:
    """Medians of a and b, and of the ratio a/b pair by pair: timed in turn
    (a b a b ...) after a warm-up of each, so a slow spell of the shared
    machine hits both sides of a pair rather than one reader."""
    a(), b()
    ta, tb = [], []
    for _ in range(repeat):
        for fn, out in ((a, ta), (b, tb)):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return statistics.median(ta), statistics.median(tb), statistics.median(x / y for x, y in zip(ta, tb))


def check(name: str, got: pa.Table, source: pa.Table, column: str) -> None:
    """Fails the benchmark unless every row holds the source's new value."""
    if got.num_rows != source.num_rows:
        sys.exit(f"{name}: {got.num_rows} rows after the update, want {source.num_rows}")
    want = aligned(source, got["id"], column)
    if not got[column].combine_chunks().equals(pa.chunked_array([want]).combine_chunks().cast(got[column].type)):
        sys.exit(f"{name}: {column} after the update is not the source's value for every id")


# ---------------------------------------------------------------- contenders


class Cow:
    """PyIceberg copy-on-write on a format-version 2 table."""

    name = "cow"
    how = "PyIceberg 0.12, v2: scan, replace the column by id, one overwrite() commit"

    def __init__(self, uri: str, warehouse: str, ns: str) -> None:
        from pyiceberg.catalog import load_catalog

        self.cat = load_catalog("bench", **{"type": "rest", "uri": uri, "warehouse": warehouse})
        self.ns = ns

    def setup(self, base: pa.Table, files: int):
        tbl = self.cat.create_table(f"{self.ns}.cow_{uuid.uuid4().hex[:8]}", schema=base.schema,
                                    properties={"format-version": "2"})
        for part in chunks(base, files):
            tbl.append(part)
        return tbl

    def root(self, tbl) -> Path:
        return local_path(tbl.location())

    def update(self, tbl, source: pa.Table, column: str) -> None:
        current = tbl.scan().to_arrow()
        i = current.schema.get_field_index(column)
        new = aligned(source, current["id"], column).cast(current.schema.field(i).type)
        tbl.overwrite(current.set_column(i, current.schema.field(i), new))

    def read(self, tbl, columns: tuple[str, ...] = ("*",)) -> pa.Table:
        tbl.refresh()
        return tbl.scan(selected_fields=columns).to_arrow()

    def drop(self, tbl) -> None:
        self.cat.drop_table(tbl.name())
        shutil.rmtree(self.root(tbl), ignore_errors=True)


class ColumnFiles:
    """Column files through the lakehold library on a format-version 4 table."""

    name = "cf"
    how = "lakehold: merge_columns(key=id) / update_columns(fn) on v4, one /column-files commit"

    def __init__(self, uri: str, warehouse: str, ns: str, layout: str, per_file: bool = False) -> None:
        import lakehold

        self.cat = lakehold.load_catalog(uri=uri, warehouse=warehouse)
        self.ns = ns
        self.layout = layout
        self.per_file = per_file
        if per_file:
            self.name = "cf-per-file"
            self.how = "lakehold: one merge_columns call (one commit) per base file"

    def setup(self, base: pa.Table, files: int):
        """The base files, laid out as --layout says.

        one-commit: all files in one append (one /files commit, one leaf
        manifest), as a bulk load writes them. append() has no rows-per-file
        option, so the files come from a truncate[rows/files](id) spec (one
        file per id range); id is never updated, so the spec changes nothing
        a column commit does. appends: one append per file, as a table grown
        by periodic loads is (one leaf per append).
        """
        per = -(-base.num_rows // files)
        spec = [(f"truncate[{per}]", "id")] if self.layout == "one-commit" else None
        tbl = self.cat.create_table(f"{self.ns}.cf_{uuid.uuid4().hex[:8]}", schema=base.schema, partition_spec=spec)
        for part in ([base] if spec else chunks(base, files)):
            tbl.append(part)
        self.files = files
        return tbl

    def root(self, tbl) -> Path:
        return local_path(tbl.location)

    def update(self, tbl, source: pa.Table, column: str) -> None:
        if self.per_file:
            for part in chunks(source, self.files):
                tbl.merge_columns(part, key="id", columns=[column])
        elif column == "score":
            tbl.merge_columns(source, key="id", columns=[column])
        else:
            align = Aligner(source, column)
            tbl.update_columns(lambda t: pa.table({column: align(t["id"])}),
                               inputs=["id"], outputs=[column])

    def read(self, tbl, columns: tuple[str, ...] = ("*",)) -> pa.Table:
        tbl.refresh()
        return tbl.scan(selected_fields=columns).to_arrow()

    def drop(self, tbl) -> None:
        self.cat.drop_table(tbl.identifier)
        shutil.rmtree(self.root(tbl), ignore_errors=True)


class Lance:
    """pylance 14 merge_insert with write_mode("rewrite_columns") on a local dataset."""

    name = "lance"
    how = 'pylance 14: merge_insert("id").when_matched_update_all().write_mode("rewrite_columns")'

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    def setup(self, base: pa.Table, files: int):
        import lance

        path = self.workdir / f"lance_{uuid.uuid4().hex[:8]}"
        ds = lance.write_dataset(base, str(path), max_rows_per_file=-(-base.num_rows // files))
        if len(ds.get_fragments()) != files:
            sys.exit(f"lance: {len(ds.get_fragments())} fragments, want {files}")
        return path

    def root(self, path: Path) -> Path:
        return path

    def update(self, path: Path, source: pa.Table, column: str) -> None:
        import lance

        (lance.dataset(str(path)).merge_insert("id").when_matched_update_all()
         .write_mode("rewrite_columns").execute(source))

    def read(self, path: Path, columns: tuple[str, ...] = ("*",)) -> pa.Table:
        import lance

        return lance.dataset(str(path)).to_table(columns=None if columns == ("*",) else list(columns))

    def drop(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------- driver


def measure(c, base: pa.Table, files: int, source: pa.Table, column: str) -> tuple[Run, object, list[str]]:
    """One fresh table: set up, update once (timed, bytes walked), check."""
    tbl = c.setup(base, files)
    root = c.root(tbl)
    before = walk(root)
    is_data = lance_is_data if isinstance(c, Lance) else iceberg_is_data
    with HttpLog() as http:
        t0 = time.perf_counter()
        c.update(tbl, source, column)
        seconds = time.perf_counter() - t0
    run = Run(seconds, written(before, walk(root), is_data))
    if isinstance(c, ColumnFiles):
        run.plan_s = http.seconds(is_plan)
        run.commit_s = http.seconds(is_commit)
        run.commits = http.count(is_commit)
        run.commit_json = sum(c_.sent + c_.received for c_ in http.calls if is_commit(c_))
    check(c.name, c.read(tbl, ("id", column)), source, column)
    bases = sorted(str(root / rel) for rel in before if is_data(rel) and rel.endswith(".parquet"))
    return run, tbl, bases


def bench_case(contenders: list, rows: int, files: int, column: str, runs: int, read_runs: int) -> list[Result]:
    base = base_table(rows, embedding=(column == "embedding"))
    source = update_source(rows, column)
    results = {c.name: Result(c.name, how=c.how) for c in contenders}
    kept: dict[str, tuple[object, list[str]]] = {}
    for r in range(runs):
        for c in contenders:
            run, tbl, bases = measure(c, base, files, source, column)
            results[c.name].runs.append(run)
            print(f"  run {r + 1}/{runs} {c.name}: {run.seconds:.3f} s, {mb(run.written.total)} written", file=sys.stderr)
            if r == runs - 1:
                kept[c.name] = (tbl, bases)
            else:
                c.drop(tbl)
    for c in contenders:
        tbl, bases = kept[c.name]
        res = results[c.name]
        if isinstance(c, ColumnFiles):
            res.read_s, res.plain_read_s, res.read_ratio = paired_reads(
                lambda: c.read(tbl), lambda: pq.read_table(bases, partitioning=None), read_runs)
        else:
            res.read_s = timed_read(lambda: c.read(tbl), read_runs)
        c.drop(tbl)
    return list(results.values())


def mb(n: float) -> str:
    return f"{n / 1e6:,.2f} MB" if n < 100e6 else f"{n / 1e6:,.0f} MB"


def ms(s: float) -> str:
    return f"{s * 1000:.0f} ms"


def sec(s: float) -> str:
    return f"{s:.2f} s"


def summary_row(label: str, res: dict[str, Result]) -> str:
    cells = [label]
    for name in ("cow", "cf", "lance"):
        r = res.get(name)
        if r is None:
            cells.append("—")
            continue
        b, t = r.median(lambda x: x.written.total), r.median(lambda x: x.seconds)
        cell = f"{mb(b)} / {sec(t)}"
        if name == "cf" and "cow" in res:
            cell = f"{mb(b)} ({100 * b / res['cow'].median(lambda x: x.written.total):.1f} %) / {sec(t)}"
        cells.append(cell)
    cf, cow, lance = res.get("cf"), res.get("cow"), res.get("lance")
    pct = (f"{100 * cf.median(lambda x: x.written.total) / cow.median(lambda x: x.written.total):.2f} %"
           if cf and cow else "—")
    vs = (f"{cf.median(lambda x: x.seconds) / lance.median(lambda x: x.seconds):.2f}×" if cf and lance else "—")
    rd = f"{cf.read_ratio:.2f}×" if cf and cf.read_ratio else "—"
    return "| " + " | ".join(cells + [pct, vs, rd]) + " |"


SUMMARY_HEAD = ("| table | COW bytes / time | column files bytes / time | Lance bytes / time "
                "| CF bytes % of COW | CF time / Lance | CF read / plain read (paired median) |\n|---|---|---|---|---|---|---|")


def detail(results: list[Result]) -> str:
    lines = ["| contender | bytes written | of which metadata | new files | update time median (min–max) "
             "| plan | commit | commits | metadata / commit | commit JSON / commit | read all | plain base read |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        t = [x.seconds for x in r.runs]
        commits = r.median(lambda x: x.commits)
        cf = r.name.startswith("cf")
        lines.append("| " + " | ".join([
            r.name,
            mb(r.median(lambda x: x.written.total)),
            mb(r.median(lambda x: x.written.metadata)),
            f"{r.median(lambda x: x.written.files):.0f}",
            f"{sec(statistics.median(t))} ({sec(min(t))}–{sec(max(t))})",
            ms(r.median(lambda x: x.plan_s)) if cf else "—",
            ms(r.median(lambda x: x.commit_s)) if cf else "—",
            f"{commits:.0f}" if cf else "—",
            mb(r.median(lambda x: x.written.metadata / max(x.commits, 1))) if cf else "—",
            f"{r.median(lambda x: x.commit_json / max(x.commits, 1)) / 1e3:.1f} KB" if cf else "—",
            sec(r.read_s),
            sec(r.plain_read_s) if r.plain_read_s else "—",
        ]) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", required=True, help="the catalog's base URI")
    ap.add_argument("--warehouse", required=True, help="the catalog's warehouse name")
    ap.add_argument("--workdir", required=True, type=Path, help="where Lance datasets go")
    ap.add_argument("--sizes", default="400k", help="comma list of 400k (400k rows, 10 files), 2m (2M rows, 20 files), 20k (4 files, a smoke run)")
    ap.add_argument("--cases", default="score,embedding",
                    help="score (every size) and embedding (a 64-float list<float>; not at 2m)")
    ap.add_argument("--contenders", default="cow,cf,lance,cf-per-file",
                    help="cow, cf (column files), lance, cf-per-file (one commit per base file, score only)")
    ap.add_argument("--layout", choices=("one-commit", "appends"), default="one-commit",
                    help="the column-file table's base files: all in one append commit, or one append per file")
    ap.add_argument("--runs", type=int, default=3, help="fresh tables per contender and case (median printed)")
    ap.add_argument("--read-runs", type=int, default=5,
                    help="timed full reads after one warm-up (column files: paired with the plain read)")
    args = ap.parse_args()

    from pyiceberg.catalog import load_catalog

    ns = f"bench_{uuid.uuid4().hex[:8]}"
    load_catalog("bench", **{"type": "rest", "uri": args.uri, "warehouse": args.warehouse}).create_namespace(ns)
    wanted = args.contenders.split(",")
    summary, details = [], []
    for size in args.sizes.split(","):
        rows, files = SIZES[size]
        for case in args.cases.split(","):
            if case == "embedding" and size == "2m":  # the issue asks for it at 400k rows
                continue
            contenders = []
            for name in wanted:
                if name == "cow":
                    contenders.append(Cow(args.uri, args.warehouse, ns))
                elif name == "cf":
                    contenders.append(ColumnFiles(args.uri, args.warehouse, ns, args.layout))
                elif name == "cf-per-file" and case == "score":
                    contenders.append(ColumnFiles(args.uri, args.warehouse, ns, args.layout, per_file=True))
                elif name == "lance":
                    contenders.append(Lance(args.workdir))
            label = f"{rows:,} rows, {files} files, {case}"
            print(f"{label}: load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
            results = bench_case(contenders, rows, files, case, args.runs, args.read_runs)
            summary.append(summary_row(label, {r.name: r for r in results}))
            details.append(f"### {label}\n\n{detail(results)}")
    print(f"## Column refresh, {args.runs} fresh tables per contender (medians; MB = 10^6 bytes; "
          f"column-file layout: {args.layout})\n")
    print(SUMMARY_HEAD)
    print("\n".join(summary))
    print()
    print("\n\n".join(details))
    print("\nHow each contender updates:")
    for c in (Cow, ColumnFiles, Lance):
        print(f"- {c.name}: {c.how}")
    print("- cf-per-file: the same column files, one merge_columns call per base file (the batching cost)")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
