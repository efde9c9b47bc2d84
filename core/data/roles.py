"""Attribute roles (Samarati §2: quasi-identifiers; the rest by the usual SDC vocabulary).

- identifier: names a person outright (SSN, name). Dropped from every output, always.
- quasi-identifier (QI): could be linked with outside data (Samarati's QI); generalized and
  suppressed so that each QI combination is shared by at least k released rows.
- sensitive: the confidential value the release is about (kept; constrained by later models).
- insensitive: anything else (kept unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from microrelease.core.exceptions import DataError

LISTED = 20  # column names quoted in a message at most: a 10,000-column table's would fill the screen


class AttributeRole(StrEnum):
    """The role of a table's column (Samarati §2).

    Attributes
    ----------
    IDENTIFIER
        Identifies a person directly (a name, a number): never released.
    QUASI_IDENTIFIER
        Linkable to outside data (Samarati's QI): generalized by a hierarchy.
    SENSITIVE
        What must not be learnt about a person: protected by the privacy models.
    INSENSITIVE
        Released as is.
    """

    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"


@dataclass(frozen=True)
class Schema:
    """Roles of a table's columns. QIs keep the user's order: lattice vectors follow it.

    Parameters
    ----------
    quasi_identifiers : tuple of str
        The quasi-identifiers, in the order lattice vectors follow.
    identifiers : tuple of str, optional
        Direct identifiers (never released).
    sensitive : tuple of str, optional
        Sensitive attributes.
    """

    quasi_identifiers: tuple[str, ...]
    identifiers: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))
        object.__setattr__(self, "identifiers", tuple(self.identifiers))
        object.__setattr__(self, "sensitive", tuple(self.sensitive))
        if not self.quasi_identifiers:
            raise DataError("at least one quasi-identifier is needed: 'quasi_identifiers' is empty",
                            parameter="quasi_identifiers")
        seen: dict[str, str] = {}
        for role, parameter, names in (
            ("quasi-identifier", "quasi_identifiers", self.quasi_identifiers),
            ("identifier", "identifiers", self.identifiers),
            ("sensitive", "sensitive", self.sensitive),
        ):
            for name in names:
                if name in seen:  # the parameter of its second mention, where the user would fix it
                    raise DataError(f"column {name!r} is given twice (as {seen[name]} and as {role})",
                                    parameter=parameter)
                seen[name] = role

    def role(self, column: str) -> AttributeRole:
        if column in self.identifiers:
            return AttributeRole.IDENTIFIER
        if column in self.quasi_identifiers:
            return AttributeRole.QUASI_IDENTIFIER
        if column in self.sensitive:
            return AttributeRole.SENSITIVE
        return AttributeRole.INSENSITIVE

    def validate_columns(self, columns: list[str] | tuple[str, ...]) -> None:
        """Raise DataError naming every role column that the table does not have."""
        present = set(columns)
        for role, names in (("QI", self.quasi_identifiers), ("identifier", self.identifiers), ("sensitive", self.sensitive)):
            unknown = [n for n in names if n not in present]
            if unknown:
                raise DataError(f"unknown {role} column(s) {unknown}; the table has columns {listed(list(columns))}")

    def output_columns(self, columns: list[str] | tuple[str, ...]) -> list[str]:
        """Columns written to any output: all but the identifiers, in the table's order."""
        return [c for c in columns if c not in self.identifiers]


def listed(names: list) -> str:
    """``names`` as a message quotes them: all of a short list, else the first LISTED and how many in all."""
    if len(names) <= LISTED:
        return str(names)
    return f"{str(names[:LISTED])[:-1]}, ... ({len(names):,} in all)]"
