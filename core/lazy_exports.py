"""A subpackage's public names, each imported from its module on first use (PEP 562).

A subpackage's ``__init__`` then imports none of its modules, so no import circle runs through it
(``microrelease.core``'s own ``__init__`` still imports the central names eagerly, so importing any
subpackage loads them). To add a public name: its module in ``_MODULES``, the name in ``__all__``
and an import under ``TYPE_CHECKING`` (what mypy reads; tests/test_architecture.py holds the three
to one list). The
package keeps a literal ``__all__`` (what readers, griffe and type checkers see) and names the
module of each name in one table.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any


def lazy_exports(package: str, modules: Mapping[str, Sequence[str]]) -> tuple[Callable[[str], Any],
                                                                            Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    modules : mapping of str to sequence of str
        Each of its modules (relative name) to the public names it holds.

    Returns
    -------
    tuple of (callable, callable)
        ``__getattr__(name)``, which imports the name's module and keeps the value in the package,
        and ``__dir__()``.
    """
    homes = {name: module for module, names in modules.items() for name in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name in homes:
            value = getattr(import_module(f"{package}.{homes[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return __getattr__, __dir__
