"""Every error the library raises is importable from ``lakehold.errors``.

Walks the source of every module of the package and resolves each
``raise X(...)`` (or ``raise f(...)`` of a helper that returns the error)
to its class: it must live in ``lakehold.errors`` and be exported by the
package, or be private (``_Name``: caught and converted inside the
library). No catalog needed.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import typing
from collections.abc import Iterator
from types import ModuleType

import lakehold
import lakehold.errors


def _modules() -> Iterator[ModuleType]:
    for info in pkgutil.iter_modules(lakehold.__path__):
        yield importlib.import_module(f"lakehold.{info.name}")


def _resolve(module: ModuleType, node: ast.expr) -> object | None:
    if isinstance(node, ast.Name):
        found = getattr(module, node.id, None)
        if found is None and node.id.startswith("_"):  # a sibling module imported inside a function
            found = importlib.import_module(f"lakehold.{node.id}")
        return found
    if isinstance(node, ast.Attribute):
        owner = _resolve(module, node.value)
        return getattr(owner, node.attr, None) if owner is not None else None
    return None


def _raised_class(module: ModuleType, node: ast.Raise) -> type[BaseException] | None:
    """The class a ``raise`` statement raises, when it is a call of a class
    or of a function annotated to return one; None for re-raises."""
    if not isinstance(node.exc, ast.Call):
        return None
    target = _resolve(module, node.exc.func)
    if inspect.isclass(target) and issubclass(target, BaseException):
        return target
    if callable(target):
        ret = typing.get_type_hints(target).get("return")
        if inspect.isclass(ret) and issubclass(ret, BaseException):
            return ret
        raise AssertionError(f"{module.__name__}: raise {ast.unparse(node.exc.func)}(...) returns {ret!r}")
    raise AssertionError(f"{module.__name__}: cannot resolve raise {ast.unparse(node.exc)}")


def _raises() -> Iterator[tuple[str, type[BaseException]]]:
    for module in _modules():
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise):
                cls = _raised_class(module, node)
                if cls is not None:
                    yield f"{module.__name__}:{node.lineno}", cls


def test_every_raised_error_is_in_lakehold_errors() -> None:
    seen = list(_raises())
    assert len(seen) > 50, "the walk found too few raise statements to be checking anything"
    for where, cls in seen:
        if cls.__name__.startswith("_"):
            continue  # private: converted inside the library
        if cls.__module__ == "builtins":
            assert cls in (ValueError, TypeError, RuntimeError, AssertionError), f"{where} raises {cls}"
            continue
        assert cls.__module__ == "lakehold.errors", f"{where} raises {cls.__module__}.{cls.__name__}"
        assert getattr(lakehold.errors, cls.__name__) is cls


def test_every_error_class_is_exported() -> None:
    classes = [c for _, c in inspect.getmembers(lakehold.errors, inspect.isclass)
               if issubclass(c, BaseException) and c.__module__ == "lakehold.errors"]
    assert lakehold.errors.LakeholdError in classes
    for cls in classes:
        assert issubclass(cls, lakehold.errors.LakeholdError), cls
        assert getattr(lakehold, cls.__name__) is cls, f"lakehold.{cls.__name__} is not exported"
        assert cls.__name__ in lakehold.__all__
