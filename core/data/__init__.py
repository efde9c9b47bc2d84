"""The table and its attribute roles: reading, validating, encoding; the bundled samples."""

from typing import TYPE_CHECKING

from microrelease.core.lazy_exports import lazy_exports

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

# The public names, each from its module, resolved on first use (see microrelease.core.lazy_exports).
_MODULES = {
    "dataset": ["Dataset", "load_dataset"],
    "reading": ["read_table"],
    "roles": ["AttributeRole", "Schema"],
    "samples": ["MICRODATA_SAMPLES", "SAMPLES", "load_sample", "microdata_sample", "sample", "sample_data_folder"],
}
__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


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
