"""The table and its attribute roles: reading, validating, encoding; the bundled samples."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from microrelease.core.data.dataset import Dataset, load_dataset
    from microrelease.core.data.reading import read_table
    from microrelease.core.data.roles import AttributeRole, Schema
    from microrelease.core.data.samples import (
        MICRODATA_SAMPLES,
        SAMPLES,
        load_sample,
        microdata_sample,
        sample,
        sample_data_folder,
    )

# The public names, each from its module, resolved on first use (PEP 562): importing this package
# imports none of its modules, so no import circle and no extra import time (numba kernels).
_MODULES = {
    "dataset": ["Dataset", "load_dataset"],
    "reading": ["read_table"],
    "roles": ["AttributeRole", "Schema"],
    "samples": ["MICRODATA_SAMPLES", "SAMPLES", "load_sample", "microdata_sample", "sample", "sample_data_folder"],
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
    "AttributeRole",
    "Dataset",
    "MICRODATA_SAMPLES",
    "SAMPLES",
    "Schema",
    "load_dataset",
    "load_sample",
    "microdata_sample",
    "read_table",
    "sample",
    "sample_data_folder",
]
