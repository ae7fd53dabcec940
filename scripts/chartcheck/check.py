"""Validates Kubernetes manifests offline: every object against the strict
schemas of each Kubernetes version given (custom resources against their
CRDs), then the rules of policy.py over the whole set.

    check.py [--kube-version V]... [--crd FILE]... FILE...   (FILE - : stdin)

Prints one line per finding and exits 1 when there is any, 2 when a file
does not parse or holds no object, 0 otherwise.
"""
from __future__ import annotations

import argparse
import sys

import yaml

import policy
import schema


def load(path: str) -> list[dict]:
    """The objects of a multi-document YAML file; empty documents are skipped."""
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    return [d for d in yaml.safe_load_all(text) if d]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kube-version", action="append", default=[])
    ap.add_argument("--crd", action="append", default=[])
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    versions = args.kube_version or ["1.37.0"]
    crds = schema.CRDs()
    for f in args.crd:
        for d in load(f):
            crds.add(d)
    docs = []
    try:
        for f in args.files:
            docs += load(f)
    except (OSError, yaml.YAMLError) as e:
        print(f"cannot read manifests: {e}")
        return 2
    if not docs:
        print("no object in " + " ".join(args.files))
        return 2
    out = []
    for d in docs:
        name = f"{d.get('kind')}/{d.get('metadata', {}).get('name')}"
        for v in versions:
            errs = crds.errors(d, v) if crds.covers(d) else schema.builtin_errors(d, v)
            out += [f"{name}: {e}" for e in errs]
    out += policy.findings(docs)
    for line in dict.fromkeys(out):  # once each, in order
        print(line)
    print(f"{len(docs)} objects, {len(out)} findings (Kubernetes {', '.join(versions)})", file=sys.stderr)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
