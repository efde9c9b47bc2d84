"""The time column of an event table: one parsing rule, exact values, exact written intervals.

**Parsing rule** (surrounding spaces ignored; a blank cell is refused, naming the column):

1. *numbers*, if every cell is a decimal number (``12``, ``-3.5``, ``1.6e9``); ``inf`` and ``nan`` are
   refused by name. The column is *integers* if every cell is written as one (``12``, ``-7``; stored
   exactly in 64 bits), else floating point.
2. else *dates*, if every cell is an ISO date ``YYYY-MM-DD``;
3. else *timestamps*, if every cell is ``YYYY-MM-DDTHH:MM[:SS[.ffffff]]`` (``T`` or a space, fractions to
   the microsecond), all with a zone (``Z`` or ``±HH:MM``: compared and written in UTC) or all
   without (naive: compared as written); a mix of the two is refused by name;
4. anything else is refused, naming the column, how many cells are of each kind and a few of them.

**Written intervals** (``first..last``, or the single time when both are equal; ``..`` never occurs
inside a number, a date or a timestamp, so a negative or dated end reads unambiguously): integers
as integers (``1600000000..1600000123``); other numbers with the shortest text that reads back as
the same value (Python's ``repr``; integral values without ``.0``); dates as dates
(``2024-01-03..2024-02-10``); timestamps in ISO form to the finest unit the input uses (seconds,
milliseconds or microseconds), with ``Z`` when the input had zones (``2024-01-03T09:00:00Z``). Every
written end is one of the input's own values, so an interval contains exactly the times it stands for.

Internally a time is an exact value (``int64``: integers, days since 1970-01-01, or microseconds
since 1970-01-01 [UTC]; ``float64``: other numbers) and, for the cost F, the same value as a float.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.exceptions import DataError

INTERVAL = ".."  # between the two ends of a written interval
KINDS = ("integers", "numbers", "dates", "timestamps")

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NON_FINITE = r"(?i:[+-]?(?:inf|infinity|nan))"
_INTEGER = r"[+-]?\d+"
_DATE = r"\d{4}-\d{2}-\d{2}"
_TIMESTAMP = r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)(Z|[+-]\d{2}:\d{2})?"
_UNITS = {"s": 1_000_000, "ms": 1_000, "us": 1}  # microseconds per unit, coarsest first
_EARLIEST = np.datetime64("0001-01-01", "us")  # year 0 reads as a date in numpy, not in ISO tools


@dataclass(frozen=True)
class TimeScale:
    """How the values of one time column read and are written (see the module docstring)."""

    column: str
    kind: str  # one of KINDS
    zone: bool = False  # timestamps: given with zones, stored and written in UTC
    unit: str = "s"  # timestamps: the finest unit the input needs ("s", "ms" or "us")

    def text(self, value) -> str:
        """One exact value as written."""
        if self.kind == "integers":
            return str(int(value))
        if self.kind == "numbers":
            v = float(value)
            return str(int(v)) if v.is_integer() and abs(v) < 2.0**53 else repr(v)
        if self.kind == "dates":
            return str(np.datetime64(int(value), "D"))
        # self.unit is one of numpy's units ("s", "ms", "us"), a str where the stubs want a Literal
        text = str(np.datetime_as_string(np.datetime64(int(value), "us"), unit=self.unit))  # type: ignore[call-overload]
        return text + "Z" if self.zone else text

    def interval(self, low, high) -> str:
        """The written interval from ``low`` to ``high`` (one value when they are equal)."""
        return self.text(low) if low == high else f"{self.text(low)}{INTERVAL}{self.text(high)}"

    def describe(self) -> str:
        """The column's kind as the report says it."""
        if self.kind == "timestamps":
            zone = "with zones, written in UTC" if self.zone else "without zones"
            return f"ISO timestamps ({zone}, to the {dict(s='second', ms='millisecond', us='microsecond')[self.unit]})"
        return {"integers": "integers", "numbers": "numbers", "dates": "ISO dates"}[self.kind]


def _examples(values: pd.Series, limit: int = 5) -> list[str]:
    return list(dict.fromkeys(values.tolist()))[:limit]


def parse_times(cells: pd.Series, column: str) -> tuple[np.ndarray, TimeScale]:
    """Exact values of a time column (cells as text) and its ``TimeScale``; raises DataError
    naming ``column`` for a blank, non-finite, malformed or mixed column (the rule above)."""
    text = cells.astype(str).str.strip()
    blank = text.eq("")
    if blank.any():
        raise DataError(f"{int(blank.sum())} event(s) have a missing or non-numeric {column!r} (a blank cell): every "
                        "event needs a time",
                        parameter="order_by")
    number = text.str.fullmatch(_NUMBER)
    if number.all():
        return _numbers(text, column)
    non_finite = text.str.fullmatch(_NON_FINITE)
    if (number | non_finite).all():
        raise DataError(f"{int(non_finite.sum())} event(s) have a time {column!r} that is not finite: "
                        f"{_examples(text[non_finite])}", parameter="order_by")
    date = text.str.fullmatch(_DATE)
    if date.all():
        return _dates(text, column), TimeScale(column, "dates")
    parts = text.str.extract(f"^{_TIMESTAMP}$")
    stamp = parts[0].notna()
    if stamp.all():
        return _timestamps(text, parts, column)
    kinds = {"numbers": number | non_finite, "ISO dates": date, "ISO timestamps": stamp}
    other = ~(number | non_finite | date | stamp)
    found = [f"{int(mask.sum())} {name} (e.g. {_examples(text[mask], 3)})" for name, mask in
             [*kinds.items(), ("other", other)] if mask.any()]
    raise DataError(f"the time column {column!r} must hold numbers only, ISO dates only (YYYY-MM-DD) or ISO "
                    f"timestamps only (YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|±HH:MM]); it has " + ", ".join(found),
                    parameter="order_by")


def _numbers(text: pd.Series, column: str) -> tuple[np.ndarray, TimeScale]:
    if text.str.fullmatch(_INTEGER).all():
        try:
            return text.to_numpy().astype(np.int64), TimeScale(column, "integers")
        except OverflowError:
            big = [v for v in _examples(text, len(text)) if abs(int(v)) >= 2**63][:5]
            raise DataError(f"the time column {column!r} has integers beyond 64 bits: {big}",
                            parameter="order_by") from None
    values = text.to_numpy().astype(np.float64)
    overflow = ~np.isfinite(values)  # e.g. 1e999: a number, but not a finite float
    if overflow.any():
        raise DataError(f"{int(overflow.sum())} event(s) have a time {column!r} that is not finite: "
                        f"{_examples(text[overflow])}", parameter="order_by")
    return values, TimeScale(column, "numbers")


def _calendar(text: pd.Series, unit: str, column: str, what: str) -> np.ndarray:
    """Parse ISO text with numpy; on failure, name the values that are not real dates or times."""
    try:
        values = text.to_numpy().astype(f"datetime64[{unit}]")
    except ValueError:
        bad = []
        for v in _examples(text, len(text)):
            try:
                np.datetime64(v, unit)  # type: ignore[call-overload]  # unit: numpy's, a str not a Literal
            except ValueError:
                bad.append(v)
        raise DataError(f"the time column {column!r} has {what} that do not exist: {bad[:5]}",
                        parameter="order_by") from None
    early = values < _EARLIEST.astype(f"datetime64[{unit}]")
    if early.any():
        raise DataError(f"the time column {column!r} has {what} before the year 1: {_examples(text[early])}",
                        parameter="order_by")
    return values


def _dates(text: pd.Series, column: str) -> np.ndarray:
    return _calendar(text, "D", column, "dates").astype(np.int64)


def _timestamps(text: pd.Series, parts: pd.DataFrame, column: str) -> tuple[np.ndarray, TimeScale]:
    zone = parts[2]
    aware = zone.notna()
    if aware.any() and not aware.all():
        raise DataError(f"the time column {column!r} mixes timestamps with a zone ({_examples(text[aware], 3)}) and "
                        f"without ({_examples(text[~aware], 3)}): give every timestamp a zone, or none",
                        parameter="order_by")
    local = _calendar(parts[0] + "T" + parts[1], "us", column, "timestamps").astype(np.int64)
    if aware.all():
        offset = zone.str.extract(r"^([+-])(\d{2}):(\d{2})$")
        given = offset[0].notna()
        hours, minutes = offset[1].fillna("0").astype(int), offset[2].fillna("0").astype(int)
        bad = given & ((hours > 23) | (minutes > 59))
        if bad.any():
            raise DataError(f"the time column {column!r} has zones that do not exist: {_examples(text[bad])}",
                            parameter="order_by")
        sign = np.where(offset[0] == "-", -1, 1)
        local = local - (sign * (hours * 60 + minutes)).to_numpy(np.int64) * 60_000_000
    unit = next(u for u, per in _UNITS.items() if not (local % per).any())
    return local, TimeScale(column, "timestamps", zone=bool(aware.all()), unit=unit)
