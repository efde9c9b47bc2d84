"""The one registry of privacy criteria, and their text specs.

``CRITERIA`` maps each criterion's ``name`` to its class (what a class declares:
``criterion``). The command line's flags and the contract tests are
generated from it, and so are the dashboard's boxes (``control_groups``, from the controls each
criterion's fields declare: ``controls``); ``parse_criteria`` reads
text specs by API parameter. Adding a criterion is its module, one entry here, and its tests.
"""

from __future__ import annotations

from collections.abc import Mapping

from microrelease.core.criteria.controls import ControlGroup
from microrelease.core.criteria.criterion import Criterion, Scope, Statistic
from microrelease.core.criteria.k_anonymity import KAnonymity
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from microrelease.core.models.t_closeness import TCloseness
from microrelease.core.risk.criteria import AverageRisk, PopulationUniqueness, RecordsAtRisk
from microrelease.core.risk.k_map import KMap

CRITERIA: dict[str, type[Criterion]] = {cls.name: cls for cls in (
    KAnonymity, DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, TCloseness, KMap,
    AverageRisk, RecordsAtRisk, PopulationUniqueness)}


def flag(parameter: str) -> str:
    """The command line's flag for a criterion's parameter."""
    return "--" + parameter.replace("_", "-")


def spec_parameters(*, needs: Statistic | None = None, scope: Scope | None = None) -> dict[str, tuple[type[Criterion], ...]]:
    """Each API parameter that gives criteria as text, and the criteria it may give (registry order),
    optionally only those reading ``needs`` or of ``scope``."""
    by_parameter: dict[str, tuple[type[Criterion], ...]] = {}
    for cls in CRITERIA.values():
        if scope is not None and cls.scope is not scope:
            continue
        if needs is not None and needs not in _needs(cls):
            continue
        by_parameter[cls.parameter] = (*by_parameter.get(cls.parameter, ()), cls)
    return by_parameter


def control_groups(*, needs: Statistic | None = None, scope: Scope | None = None) -> dict[str, ControlGroup]:
    """One ``ControlGroup`` per API parameter of ``spec_parameters`` (same filters, same order):
    what a front end asks for each, generated from the criteria's declared controls."""
    return {parameter: ControlGroup.of(parameter, classes)
            for parameter, classes in spec_parameters(needs=needs, scope=scope).items()}


def _needs(cls: type[Criterion]) -> frozenset[Statistic]:
    example = cls.from_spec(cls.example)
    if example is None:  # the registry's contract test keeps every example valid
        raise ValueError(f"{cls.__name__}.example {cls.example!r} is not a spec of {cls.__name__}")
    return example.needs()


def parse_criterion(parameter: str, spec: str) -> Criterion:
    """The criterion written ``spec`` for ``parameter`` (``l_diversity``: ``entropy:3``; ``max_risk``:
    ``0.05``). Its parameters are checked against the data later (a model's ``check``)."""
    classes = spec_parameters().get(parameter)
    if classes is None:
        raise InvalidParameterError(f"no privacy criterion is given by a parameter {parameter!r}; "
                                    f"known: {sorted(spec_parameters())}")
    for cls in classes:
        criterion = cls.from_spec(str(spec))
        if criterion is not None:
            return criterion
    forms = [cls.syntax for cls in classes]
    listed = forms[0] if len(forms) == 1 else f"{', '.join(forms[:-1])} or {forms[-1]}"
    raise InvalidParameterError(f"The {parameter!r} parameter expects {listed}; got {spec!r}", parameter=parameter)


def parse_criteria(specs: Mapping[str, str | None]) -> tuple:
    """Criteria from text specs by parameter, in the mapping's order, skipping empty ones:
    ``parse_criteria({"l_diversity": "entropy:3", "max_risk": "0.05"})``.

    Parameters
    ----------
    specs : mapping of str to str or None
        Criterion name to its parameter text, e.g. ``{"l-diversity": "3"}``.

    Returns
    -------
    tuple
        The criteria objects.

    Raises
    ------
    InvalidParameterError
        If a name is unknown or a parameter text invalid.
    """
    return tuple(parse_criterion(parameter, spec) for parameter, spec in specs.items() if spec)
