"""Schema validation of Kubernetes objects, offline.

Built-in kinds are checked by kubernetes-validate against the strict JSON
schemas it bundles (unknown fields are errors). Custom resources are checked
against the openAPIV3Schema of their CustomResourceDefinition, made strict
the same way: an object schema that lists properties and neither allows
additional ones nor preserves unknown fields rejects any other field.
"""
from __future__ import annotations

import copy
import importlib.resources
import json

import jsonschema
import kubernetes_validate
from kubernetes_validate import utils as kv
from referencing import Registry, Resource

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def builtin_errors(doc: dict, version: str) -> list[str]:
    """Findings of a built-in kind at a Kubernetes version; a kind without a
    schema there is a finding too, not a warning."""
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kv.ValidationError as e:
        return [f"{_path(e)}: {e.message} (Kubernetes {version})"]
    except kv.SchemaNotFoundError as e:
        return [e.message]
    return []


class CRDs:
    """The strict schemas of the custom resources, keyed by apiVersion and kind."""

    def __init__(self) -> None:
        self.schemas: dict[tuple[str, str], dict] = {}

    def add(self, crd: dict) -> None:
        """Adds every served version of a CustomResourceDefinition."""
        spec = crd["spec"]
        for v in spec["versions"]:
            if v.get("served", True):
                key = (f"{spec['group']}/{v['name']}", spec["names"]["kind"])
                self.schemas[key] = _strict(copy.deepcopy(v["schema"]["openAPIV3Schema"]))

    def covers(self, doc: dict) -> bool:
        return (doc.get("apiVersion"), doc.get("kind")) in self.schemas

    def errors(self, doc: dict, version: str) -> list[str]:
        """Findings of a custom resource: its CRD schema, and its metadata
        against the ObjectMeta of the Kubernetes version."""
        schema = self.schemas[(doc["apiVersion"], doc["kind"])]
        out = [f"{_path(e)}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]
        meta = _object_meta_validator(version)
        out += [f"metadata.{_path(e)}: {e.message}" for e in meta.iter_errors(doc.get("metadata", {}))]
        return out


def _strict(node):
    """Marks closed every object schema that lists its properties."""
    if isinstance(node, dict):
        if ("properties" in node and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")):
            node["additionalProperties"] = False
        for v in node.values():
            _strict(v)
    elif isinstance(node, list):
        for v in node:
            _strict(v)
    return node


def _object_meta_validator(version: str):
    """A validator of ObjectMeta from the bundled strict definitions."""
    name = f"kubernetes-json-schema/v{version}-local-strict/_definitions.json"
    defs = json.loads(importlib.resources.files("kubernetes_validate").joinpath(name).read_text())
    registry = Resource.from_contents(defs) @ Registry()
    schema = {"$ref": f"{defs['$id']}#/$defs/{OBJECT_META}"}
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _path(e: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in e.absolute_path) or "(top)"
