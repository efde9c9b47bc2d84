"""Parameter checks shared by the API, the CLI and the dashboard.

One validator per parameter, scikit-learn style: the message names the parameter, its constraint
and the value received.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from microrelease.core.exceptions import InvalidParameterError

if TYPE_CHECKING:
    import numpy as np


def _message(name: str, constraint: str, value: object) -> str:
    return f"The {name!r} parameter must be {constraint}. Got {value!r} instead."


def _invalid(name: str, constraint: str, value: object) -> InvalidParameterError:
    # an entry of a mapping parameter ("k_per_attribute['age']") is reported as the parameter itself
    return InvalidParameterError(_message(name, constraint, value), parameter=name.split("[")[0])


def validate_int(value: object, name: str, *, low: int | None = None, high: int | None = None,
              high_means: str = "") -> int:
    """Return ``value`` as ``int`` if it is an integer (not a bool) within [low, high].

    ``high_means`` says what the upper bound is (``"the number of rows"``), for the message.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(_message(name, "an integer", value))
    value = int(value)
    if low is not None and value < low:
        raise _invalid(name, f"at least {low}", value)
    if high is not None and value > high:
        raise _invalid(name, f"at most {high_means} ({high})" if high_means else f"at most {high}", value)
    return value


def validate_positive(value: object, name: str) -> float:
    """Return ``value`` as ``float`` if it is a real number (not a bool), positive and finite."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(_message(name, "a real number", value))
    x = float(value)
    if not (math.isfinite(x) and x > 0):
        raise _invalid(name, "positive and finite", value)
    return x


def validate_share(value: object, name: str) -> float:
    """Return ``value`` as ``float`` if it is a real number (not a bool) in (0, 1]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(_message(name, "a real number", value))
    x = float(value)
    if not (math.isfinite(x) and 0 < x <= 1):
        raise _invalid(name, "in (0, 1]", value)
    return x


MIN_SAMPLING_FRACTION = 1e-15  # a population at most 10^15 times the sample: its estimates stay in floating point


def validate_sampling_fraction(value: object) -> float:
    """The share of the population the data is, in (0, 1] and at least MIN_SAMPLING_FRACTION (a
    subnormal share makes every population estimate f/share infinite)."""
    share = validate_share(value, "sampling_fraction")
    if share < MIN_SAMPLING_FRACTION:
        raise _invalid("sampling_fraction", f"at least {MIN_SAMPLING_FRACTION:g} (a population at most 10^15 times "
                                            "the data)", value)
    return share


def validate_k(k: object, n_rows: int) -> int:
    """k must be a whole number with 1 <= k <= number of rows (no table of n rows is (n+1)-anonymous)."""
    return validate_int(k, "k", low=1, high=n_rows, high_means="the number of rows")


def parse_max_sup(max_sup: object, n_rows: int) -> int:
    """Resolve MaxSup to a row count.

    Accepts a row count (int >= 0) or a share of rows as a string ending in ``%`` (``"1%"``,
    ``"0.5%"``). A share is rounded down: MaxSup = floor(p / 100 * n), so the threshold is never
    looser than asked.
    """
    if isinstance(max_sup, str):
        text = max_sup.strip()
        if text.endswith("%"):
            try:
                share = float(text[:-1])
            except ValueError:
                raise _invalid("max_sup", "a row count or a percentage like '1%'", max_sup) from None
            if not math.isfinite(share) or share < 0 or share > 100:
                raise _invalid("max_sup", "a percentage in [0%, 100%]", max_sup)
            return int(math.floor(share / 100.0 * n_rows + 1e-9))
        try:
            max_sup = int(text)
        except ValueError:
            raise _invalid("max_sup", "a row count or a percentage like '1%'", max_sup) from None
    if isinstance(max_sup, bool) or not isinstance(max_sup, numbers.Integral):
        raise TypeError(_message("max_sup", "an integer row count or a percentage string like '1%'", max_sup))
    max_sup = int(max_sup)
    if max_sup < 0:
        raise _invalid("max_sup", "at least 0", max_sup)
    if max_sup > n_rows:
        raise _invalid("max_sup", f"at most the number of rows ({n_rows})", max_sup)
    return int(max_sup)


def validate_rng(rng: object) -> np.random.Generator:
    """A numpy Generator from None (fresh entropy), an int seed, or a Generator (returned as is)."""

    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.default_rng(None if rng is None else int(rng))
    raise TypeError(_message("rng", "None, an int seed or a numpy Generator", type(rng).__name__))
