"""The rules of the catalog's Kubernetes objects beyond their schemas.

Schemas cannot say that a pod is hardened, that a secret is not written
into a manifest, or that a Service selects the catalog's pods and not the
migration Job's; these checks do, over one rendered set of objects.
"""
from __future__ import annotations

import re

# Environment variables that must come from a Secret, never a literal value.
SECRET_ENV = re.compile(r"SECRET|PASSWORD|DATABASE_URL|CREDENTIALS")


def findings(docs: list[dict]) -> list[str]:
    """Every broken rule of the set, each naming its object."""
    out = _duplicates(docs)
    for d in docs:
        pod = _pod_spec(d)
        if pod is not None:
            out += [f"{_name(d)}: {m}" for m in _pod_findings(pod)]
        if d.get("kind") == "Secret" and (d.get("data") or d.get("stringData")):
            out.append(f"{_name(d)}: a Secret with values; ship instructions to create it instead")
    return out + _wiring(docs)


def _name(d: dict) -> str:
    return f"{d.get('kind')}/{d.get('metadata', {}).get('name')}"


def _duplicates(docs: list[dict]) -> list[str]:
    seen, out = set(), []
    for d in docs:
        if _name(d) in seen:
            out.append(f"{_name(d)}: defined twice")
        seen.add(_name(d))
    return out


def _pod_spec(d: dict):
    if d.get("kind") in ("Deployment", "Job", "StatefulSet", "DaemonSet"):
        return d.get("spec", {}).get("template", {}).get("spec", {})
    return None


def _pod_findings(pod: dict) -> list[str]:
    out = []
    sc = pod.get("securityContext", {})
    if sc.get("runAsNonRoot") is not True or sc.get("runAsUser") != 65532:
        out.append("pod securityContext: want runAsNonRoot and runAsUser 65532 (the image's user)")
    if sc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        out.append("pod securityContext: want seccompProfile RuntimeDefault")
    if pod.get("automountServiceAccountToken") is not False:
        out.append("automountServiceAccountToken: want false (the catalog never calls the API)")
    for c in pod.get("containers", []):
        out += [f"container {c.get('name')}: {m}" for m in _container_findings(c)]
    return out


def _container_findings(c: dict) -> list[str]:
    out = []
    sc = c.get("securityContext", {})
    if sc.get("readOnlyRootFilesystem") is not True:
        out.append("want readOnlyRootFilesystem")
    if sc.get("allowPrivilegeEscalation") is not False:
        out.append("want allowPrivilegeEscalation false")
    if "ALL" not in sc.get("capabilities", {}).get("drop", []):
        out.append("want capabilities drop ALL")
    for e in c.get("env", []):
        if SECRET_ENV.search(e.get("name", "")) and "value" in e:
            out.append(f"env {e['name']}: a literal value; take it from a Secret (valueFrom.secretKeyRef)")
    if c.get("args", [None])[0] == "serve":
        out += _serve_findings(c)
    return out


def _serve_findings(c: dict) -> list[str]:
    """The catalog replica: probes on its two endpoints, bounded memory."""
    out = []
    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        if c.get(probe, {}).get("httpGet", {}).get("path") != path:
            out.append(f"{probe}: want httpGet {path}")
    res = c.get("resources", {})
    if not res.get("requests") or "memory" not in res.get("limits", {}):
        out.append("resources: want requests and a memory limit")
    if not any(m.get("mountPath") == "/tmp" for m in c.get("volumeMounts", [])):
        out.append("want a writable /tmp (the root file system is read-only)")
    return out


def _selects(selector: dict, labels: dict) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _wiring(docs: list[dict]) -> list[str]:
    """Selectors and references between the objects of the set."""
    by_kind: dict[str, list[dict]] = {}
    for d in docs:
        by_kind.setdefault(d.get("kind"), []).append(d)
    out = []
    deps = by_kind.get("Deployment", [])
    for dep in deps:
        sel = dep["spec"]["selector"].get("matchLabels", {})
        if not _selects(sel, dep["spec"]["template"]["metadata"].get("labels", {})):
            out.append(f"{_name(dep)}: its selector does not match its pod labels")
    pods = [dep["spec"]["template"] for dep in deps]
    jobs = [j["spec"]["template"] for j in by_kind.get("Job", [])]
    for svc in by_kind.get("Service", []):
        out += _service_wiring(svc, pods, jobs)
    for pdb in by_kind.get("PodDisruptionBudget", []):
        if not any(_selects(pdb["spec"]["selector"].get("matchLabels", {}), p["metadata"]["labels"]) for p in pods):
            out.append(f"{_name(pdb)}: selects no Deployment's pods")
    for hpa in by_kind.get("HorizontalPodAutoscaler", []):
        out += _hpa_wiring(hpa, deps)
    for sm in by_kind.get("ServiceMonitor", []):
        out += _monitor_wiring(sm, by_kind.get("Service", []))
    return out


def _service_wiring(svc: dict, pods: list[dict], jobs: list[dict]) -> list[str]:
    sel = svc["spec"].get("selector", {})
    chosen = [p for p in pods if _selects(sel, p["metadata"].get("labels", {}))]
    if not chosen:
        return [f"{_name(svc)}: selects no Deployment's pods"]
    out = []
    if any(_selects(sel, j["metadata"].get("labels", {})) for j in jobs):
        out.append(f"{_name(svc)}: selects a Job's pods too")
    names = {port.get("name") for p in chosen for c in p["spec"]["containers"] for port in c.get("ports", [])}
    for port in svc["spec"].get("ports", []):
        if isinstance(port.get("targetPort"), str) and port["targetPort"] not in names:
            out.append(f"{_name(svc)}: targetPort {port['targetPort']} is no container port")
    return out


def _hpa_wiring(hpa: dict, deps: list[dict]) -> list[str]:
    ref = hpa["spec"]["scaleTargetRef"]
    target = [d for d in deps if d["metadata"]["name"] == ref.get("name") and ref.get("kind") == "Deployment"]
    if not target:
        return [f"{_name(hpa)}: scales no Deployment of the set"]
    if "replicas" in target[0]["spec"]:
        return [f"{_name(hpa)}: its Deployment sets replicas too (each apply would reset the autoscaler)"]
    return []


def _monitor_wiring(sm: dict, services: list[dict]) -> list[str]:
    sel = sm["spec"].get("selector", {}).get("matchLabels", {})
    chosen = [s for s in services if _selects(sel, s["metadata"].get("labels", {}))]
    if not chosen:
        return [f"{_name(sm)}: selects no Service of the set"]
    ports = {p.get("name") for s in chosen for p in s["spec"].get("ports", [])}
    return [f"{_name(sm)}: endpoint port {e.get('port')} is no Service port"
            for e in sm["spec"].get("endpoints", []) if e.get("port") not in ports]
