"""Runs the catalog as the rendered pods would: the migration Job's
container (when there is one) to completion, then several replicas of the
Deployment's container at once, each with exactly the environment the
manifest gives it (Secret references resolved from --secret), against a
real Postgres. Each replica must answer /healthz, /readyz and /metrics for
a Host naming a pod address, as the kubelet and Prometheus send it, and,
with authentication on, refuse /v1/config without a token.

    smoke.py --bin CATALOG --secret NAME/KEY=VALUE... [--replicas N] MANIFEST

Each replica listens on a free loopback port instead of 0.0.0.0:8181 (they
share this machine). Exits 1 when a container fails or an answer is wrong.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

POD_HOST = "10.1.2.3:8181"


def env_of(container: dict, secrets: dict, tmp: str) -> dict:
    """The container's environment; TMPDIR points at a local directory."""
    env = {"PATH": "/usr/bin:/bin", "HOME": tmp}
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = str(e["value"])
        else:
            ref = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = secrets[f"{ref['name']}/{ref['key']}"]
    env["TMPDIR"] = tmp
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(port: int, path: str) -> int:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": POD_HOST})
    try:
        return urllib.request.urlopen(req, timeout=3).status
    except urllib.error.HTTPError as e:
        return e.code


def wait_listening(port: int, proc: subprocess.Popen) -> bool:
    for _ in range(150):
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def run_jobs(docs: list[dict], args, tmp: str) -> list[str]:
    out = []
    for job in (d for d in docs if d["kind"] == "Job"):
        for c in job["spec"]["template"]["spec"]["containers"]:
            r = subprocess.run([args.bin] + c.get("args", []), env=env_of(c, args.secrets, tmp),
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                out.append(f"Job/{job['metadata']['name']}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return out


def run_replicas(dep: dict, args, tmp: str) -> list[str]:
    c = dep["spec"]["template"]["spec"]["containers"][0]
    env = env_of(c, args.secrets, tmp)
    procs, out = [], []
    for i in range(args.replicas):
        port = free_port()
        log = open(os.path.join(tmp, f"replica-{i}.log"), "w")
        procs.append((port, log, subprocess.Popen([args.bin] + c.get("args", []),
                                                  env=dict(env, CATALOG_LISTEN=f"127.0.0.1:{port}"), stderr=log)))
    try:
        for i, (port, log, p) in enumerate(procs):
            if not wait_listening(port, p):
                log.flush()
                out.append(f"replica {i}: not listening: {open(log.name).read()[-400:]}")
                continue
            want = {"/healthz": 200, "/readyz": 200, "/metrics": 200}
            if env.get("CATALOG_AUTH") == "on":
                want["/v1/config"] = 401
            out += [f"replica {i}: {path} answered {got}, want {w}"
                    for path, w in want.items() if (got := status(port, path)) != w]
    finally:
        for _, _, p in procs:
            p.terminate()
            p.wait(timeout=30)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--secret", action="append", default=[])
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("manifest")
    args = ap.parse_args(argv)
    args.secrets = dict(s.split("=", 1) for s in args.secret)
    docs = [d for d in yaml.safe_load_all(open(args.manifest, encoding="utf-8")) if d]
    with tempfile.TemporaryDirectory() as tmp:
        out = run_jobs(docs, args, tmp)
        if not out:
            out = [f for dep in docs if dep["kind"] == "Deployment" for f in run_replicas(dep, args, tmp)]
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
