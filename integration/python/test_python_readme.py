"""Every fenced block of clients/python/README.md, run or skipped with a reason.

The blocks marked ``<!-- readme-test: run -->`` are run in README order as
one program (each builds on the ones before: connect, create, update,
read), in the lakehold library's venv (LAKEHOLD_PYTHON), against a catalog
started like the embedded default: ``catalog serve`` with no flags in a
fresh directory (SQLite and ./data, warehouse ``default``), on a free port
instead of 8181. The README leaves a few inputs to the reader (its data,
an embedding model); the prelude below defines them, and nothing else.
A block without a marker fails ``test_every_block_has_a_test``.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import textwrap

from test_readme import README_URI, ROOT, catalog_bin, free_port, read_snippets, require, start, stop

README = ROOT / "clients" / "python" / "README.md"
SNIPPETS = read_snippets(README)
KINDS = ("run", "skip")

# What the README names without defining: the rows to append and the model.
PRELUDE = textwrap.dedent('''
    import datetime
    import numpy
    import pandas
    import pyarrow

    def _rows(id_type):
        n = 20
        ts = [datetime.datetime(2026, 1, 1 + i % 3) for i in range(n)]
        return pyarrow.table({
            "id": pyarrow.array(range(n), id_type), "ts": pyarrow.array(ts, pyarrow.timestamp("us")),
            "score": [i / n for i in range(n)],
            "embedding": pyarrow.array([[0.0, 1.0]] * n, pyarrow.list_(pyarrow.float32())),
            "text": [f"row {i}" for i in range(n)]})

    arrow_table = _rows(pyarrow.int64())
    int32_ids_table = _rows(pyarrow.int32())

    class _Model:
        def encode(self, texts):
            return numpy.ones((len(texts), 4))

    model = _Model()
    pandas_df = pandas.DataFrame({"id": [1, 2], "score": [0.25, 0.75]})
''')


def test_every_block_has_a_test():
    bad = [f"clients/python/README.md:{s.line} ({s.kind or 'no marker'})" for s in SNIPPETS if s.kind not in KINDS]
    assert not bad, "blocks without a readme-test marker this file knows: " + ", ".join(bad)
    assert any(s.kind == "run" for s in SNIPPETS)


def program(uri: str) -> str:
    """The prelude, then every ``run`` block compiled under its README line
    (a failure's traceback names the block), all in one namespace."""
    parts = [PRELUDE, "_g = dict(globals())"]
    for s in SNIPPETS:
        if s.kind == "run":
            body = s.body.replace(README_URI, uri)
            parts.append(f"exec(compile({body!r}, 'clients/python/README.md:{s.line}', 'exec'), _g)")
    # The change scan's column comment is checked, not just read.
    parts.append("assert _g['changed'].column_names == "
                 "['id', 'ts', 'score', 'embedding', 'text', 'n', '_row_id', '_last_updated_sequence_number'], "
                 "_g['changed'].column_names")
    parts.append("assert _g['changed'].num_rows > 0")
    return "\n".join(parts)


def test_run_blocks_against_the_embedded_default(tmp_path):
    py = os.environ.get("LAKEHOLD_PYTHON")
    if not py:
        require("LAKEHOLD_PYTHON (the lakehold library's venv)")
    r = start([catalog_bin(), "serve"], tmp_path, free_port())
    try:
        # The library of this tree, whatever the venv has installed.
        # lakehold.local("./lake") (Without a server) runs the binary under test.
        env = {**os.environ, "PYTHONPATH": str(ROOT / "clients" / "python"), "LAKEHOLD_CATALOG_BIN": catalog_bin()}
        res = subprocess.run([py, "-c", program(r.uri)], capture_output=True, text=True, cwd=tmp_path, env=env,
                             timeout=300)
    finally:
        stop(r)
    assert res.returncode == 0, res.stderr[-3000:]
    assert (pathlib.Path(tmp_path) / "data").is_dir()
    assert (pathlib.Path(tmp_path) / "lake").is_dir()
