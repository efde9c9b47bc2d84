"""Microaggregation (Soria-Comas's thesis, ch. 3-4): MDAV and its methods, information loss, linkage risk."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from microrelease.core.micro.linkage import record_linkage
    from microrelease.core.micro.micro_loss import information_loss
    from microrelease.core.micro.micro_release import write_microaggregation
    from microrelease.core.micro.microaggregation import METHODS, Microaggregation, microaggregate

# The public names, each from its module, resolved on first use (PEP 562): importing this package
# imports none of its modules, so no import circle and no extra import time (numba kernels).
_MODULES = {
    "micro_loss": ["information_loss"],
    "linkage": ["record_linkage"],
    "micro_release": ["write_microaggregation"],
    "microaggregation": ["METHODS", "Microaggregation", "microaggregate"],
}
_HOMES = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "METHODS",
    "Microaggregation",
    "information_loss",
    "microaggregate",
    "record_linkage",
    "write_microaggregation",
]
