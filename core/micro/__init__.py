"""Microaggregation (Soria-Comas's thesis, ch. 3-4): MDAV and its methods, information loss, linkage risk."""

from typing import TYPE_CHECKING

from microrelease.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from microrelease.core.micro.linkage import record_linkage
    from microrelease.core.micro.micro_loss import information_loss
    from microrelease.core.micro.micro_release import write_microaggregation
    from microrelease.core.micro.microaggregation import METHODS, Microaggregation, microaggregate

# The public names, each from its module, resolved on first use (see microrelease.core.lazy_exports).
_MODULES = {
    "micro_loss": ["information_loss"],
    "linkage": ["record_linkage"],
    "micro_release": ["write_microaggregation"],
    "microaggregation": ["METHODS", "Microaggregation", "microaggregate"],
}
__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


__all__ = [
    "METHODS",
    "Microaggregation",
    "information_loss",
    "microaggregate",
    "record_linkage",
    "write_microaggregation",
]
