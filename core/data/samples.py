"""The bundled sample data sets (see sample_data/README.md for provenance and licences)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from microrelease.core.data.dataset import Dataset, load_dataset
from microrelease.core.exceptions import InvalidParameterError


@dataclass(frozen=True)
class Sample:
    name: str
    file: str
    qi: tuple[str, ...]
    sensitive: tuple[str, ...]
    description: str
    folder_name: str = ""  # the folder of its file and hierarchies, if not its name
    population: str = ""  # a population table it was drawn from (a file of the folder), for k-map

    @property
    def folder(self) -> Path:
        return Path(str(resources.files("microrelease.sample_data").joinpath(self.folder_name or self.name)))

    @property
    def population_path(self) -> Path | None:
        return self.folder / self.population if self.population else None

    @property
    def path(self) -> Path:
        return self.folder / self.file


SAMPLES: dict[str, Sample] = {
    s.name: s
    for s in (
        Sample("samarati", "samarati.csv", ("Race", "ZIP"), (), "Samarati's running example (9 rows)"),
        Sample(
            "adult", "adult.csv",
            ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"),
            ("salary-class",), "UCI Adult census extract (30,162 rows)",
        ),
        Sample("toy", "test.csv", ("age", "gender", "zipcode"), (), "ARX's 7-row toy table"),
        Sample(
            "adult-sample", "adult-sample.csv",
            ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"),
            ("salary-class",), "a seeded 10 % sample of adult (3,016 rows); its population is the whole adult table",
            folder_name="adult", population="adult.csv",
        ),
    )
}


def sample(name: str) -> Sample:
    """A bundled k-anonymity sample by name (its file, folder, default QIs and sensitive attributes).

    Parameters
    ----------
    name : str
        A key of ``SAMPLES``.

    Returns
    -------
    Sample
        The sample's description.

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a bundled sample.
    """
    if name not in SAMPLES:
        raise InvalidParameterError(f"unknown sample {name!r}; choose one of {sorted(SAMPLES)}")
    return SAMPLES[name]


def load_sample(name: str, *, qi: tuple[str, ...] | None = None) -> Dataset:
    """Load a bundled sample with its hierarchies (default QIs as listed in SAMPLES).

    Parameters
    ----------
    name : str
        The sample's name, a key of ``SAMPLES`` (e.g. ``"toy"``, ``"samarati"``, ``"adult"``).
    qi : tuple of str, optional
        The quasi-identifiers; by default the sample's own (and then its sensitive attributes too).

    Returns
    -------
    Dataset
        The table, its schema and one hierarchy per quasi-identifier.

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a bundled sample.

    Examples
    --------
    >>> ds = load_sample("toy")
    >>> ds.schema.quasi_identifiers
    ('age', 'gender', 'zipcode')
    >>> len(ds.table)
    7
    """
    s = sample(name)
    return load_dataset(s.path, qi=qi or s.qi, hierarchy_dir=s.folder, sensitive=() if qi else s.sensitive)


@dataclass(frozen=True)
class MicrodataSample:
    """A bundled numeric data set for microaggregation (the CASC reference files; see
    sample_data/README.md). ``qi`` / ``confidential`` are our default split, not the source's."""

    name: str
    file: str
    qi: tuple[str, ...]
    confidential: tuple[str, ...]
    identifiers: tuple[str, ...]
    description: str
    # Declared domain bounds for DP releases: public round figures we chose above the published
    # ranges of the attributes, not the data's own minima and maxima (those would leak).
    bounds: tuple[tuple[str, float, float], ...] = ()

    @property
    def path(self) -> Path:
        return Path(str(resources.files("microrelease.sample_data").joinpath("casc", self.file)))

    @property
    def bounds_dict(self) -> dict[str, tuple[float, float]]:
        return {name: (lo, hi) for name, lo, hi in self.bounds}


MICRODATA_SAMPLES: dict[str, MicrodataSample] = {
    s.name: s
    for s in (
        MicrodataSample(
            "census", "CASCrefmicrodata.csv",
            ("AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC"),
            ("POTHVAL", "INTVAL", "PEARNVAL", "FICA", "WSALVAL", "ERNVAL"), (),
            "CASC Census (1,080 people x 13 numeric attributes)",
            (("AFNLWGT", 0, 1e6), ("AGI", 0, 1e5), ("EMCONTRB", 0, 1e4), ("FEDTAX", 0, 25_000),
             ("PTOTVAL", 0, 125_000), ("STATETAX", 0, 12_500), ("TAXINC", 0, 1e5), ("POTHVAL", 0, 125_000),
             ("INTVAL", 0, 50_000), ("PEARNVAL", 0, 1e5), ("FICA", 0, 1e4), ("WSALVAL", 0, 1e5), ("ERNVAL", 0, 1e5)),
        ),
        MicrodataSample(
            "eia", "EIA.csv",
            ("RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE", "INDSALES"),
            ("OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES"), ("UTILNAME",),
            "CASC EIA (4,092 utilities; revenue and sales)",
        ),
        MicrodataSample(
            "tarragona", "Tarragona.csv",
            ("FIXED.ASSETS", "CURRENT.ASSETS", "TREASURY", "UNCOMMITTED.FUNDS", "PAID.UP.CAPITAL", "SHORT.TERM.DEBT"),
            ("SALES", "LABOR.COSTS", "DEPRECIATION", "OPERATING.PROFIT", "FINANCIAL.OUTCOME", "GROSS.PROFIT",
             "NET.PROFIT"), (),
            "CASC Tarragona (834 companies x 13 numeric attributes)",
        ),
    )
}


def microdata_sample(name: str) -> MicrodataSample:
    """A bundled numeric sample for microaggregation, by name.

    Parameters
    ----------
    name : str
        A key of ``MICRODATA_SAMPLES``.

    Returns
    -------
    MicrodataSample
        The sample's description.

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a bundled microdata sample.
    """
    if name not in MICRODATA_SAMPLES:
        raise InvalidParameterError(f"unknown microdata sample {name!r}; choose one of {sorted(MICRODATA_SAMPLES)}")
    return MICRODATA_SAMPLES[name]


def sample_data_folder(name: str) -> Path:
    """The folder of a bundled data set (``hospital``: the synthetic relational + sequential sample).

    Parameters
    ----------
    name : str
        The data set's folder name under ``sample_data``.

    Returns
    -------
    Path
        The folder.
    """
    return Path(str(resources.files("microrelease.sample_data").joinpath(name)))
