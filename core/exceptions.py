"""Exceptions raised by microrelease.core.

Every message names the parameter, column or value at fault, so a user can fix the input without
reading our code. Wrong types raise ``TypeError``; wrong values raise a ``ValueError`` subclass.
"""

from __future__ import annotations


class MicroreleaseError(Exception):
    """Base class of every error this package raises on purpose.

    ``parameter`` names the API parameter at fault (``"l_diversity"``, ``"hierarchies"``), so that a
    front end can point at its own control for it: the CLI maps it to a flag in one place. Messages
    in core name parameters, never flags.
    """

    def __init__(self, *args: object, parameter: str | None = None):
        self.parameter = parameter
        super().__init__(*args)


class InvalidParameterError(MicroreleaseError, ValueError):
    """A parameter (k, MaxSup, a node, a policy name, ...) has a value outside its domain."""


class DataError(MicroreleaseError, ValueError):
    """The table cannot be used: unknown column, empty table, malformed CSV, ..."""


class HierarchyError(MicroreleaseError, ValueError):
    """A generalization hierarchy is malformed (ragged rows, a value with two parents, ...)."""

    def __init__(self, attribute: str, message: str):
        self.attribute = attribute
        super().__init__(f"hierarchy of {attribute!r}: {message}")


class CoverageError(HierarchyError):
    """Values occur in the data but not among the hierarchy's ground values."""

    def __init__(self, attribute: str, missing: dict[str, int]):
        self.missing = dict(missing)
        shown = sorted(self.missing.items(), key=lambda kv: (-kv[1], kv[0]))
        listed = ", ".join(f"{v!r} ({n} rows)" for v, n in shown[:20])
        more = f", and {len(shown) - 20} more" if len(shown) > 20 else ""
        super().__init__(attribute, f"{len(shown)} data value(s) missing from the hierarchy: {listed}{more}")


class NoSolutionError(MicroreleaseError):
    """No node of the lattice satisfies the requested privacy constraints."""


class VerificationError(MicroreleaseError):
    """What was written does not pass the independent re-check (never expected; a bug if raised)."""


class Cancelled(MicroreleaseError):
    """Long work was stopped because ``should_stop()`` returned True."""


class EngineError(MicroreleaseError):
    """An engine cannot run: a Dask scheduler that does not answer, an engine not installed, ..."""


class OutputError(MicroreleaseError):
    """An output cannot be written: a path that is not ours, a full disk, a folder we may not write."""


class PrivacyWarning(UserWarning):
    """Something weakens or wastes the privacy guarantee (clamped values, a k that cannot help, columns
    released as is). A warning, not an error: the release is still what was asked for."""
