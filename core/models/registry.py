"""The one registry of privacy models, and their text specs.

:data:`PRIVACY_MODELS` maps each model's ``name`` to its class (see
:class:`~microrelease.core.models.base.PrivacyModel` for what a class declares). The lattice
search reads the models' monotonicity, the CLI and the dashboard parse text specs with
:func:`parse_models`, and the contract tests iterate the registry.
"""

from __future__ import annotations

from collections.abc import Mapping

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.models.base import PrivacyModel
from microrelease.core.models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from microrelease.core.models.t_closeness import TCloseness

PRIVACY_MODELS: dict[str, type[PrivacyModel]] = {
    cls.name: cls for cls in (DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, TCloseness)
}


def spec_parameters() -> dict[str, tuple[type[PrivacyModel], ...]]:
    """Each API parameter that gives models as text, and the models it may give (registry order)."""
    by_parameter: dict[str, tuple[type[PrivacyModel], ...]] = {}
    for cls in PRIVACY_MODELS.values():
        by_parameter[cls.parameter] = (*by_parameter.get(cls.parameter, ()), cls)
    return by_parameter


def parse_model(parameter: str, spec: str) -> PrivacyModel:
    """The model written ``spec`` for ``parameter`` (``l_diversity``: ``entropy:3``; ``t_closeness``:
    ``0.2:ordered``). Its parameters are checked against the data later (:meth:`PrivacyModel.check`)."""
    classes = spec_parameters().get(parameter)
    if classes is None:
        raise InvalidParameterError(f"no privacy model is given by a parameter {parameter!r}; "
                                    f"known: {sorted(spec_parameters())}")
    for cls in classes:
        model = cls.from_spec(spec)
        if model is not None:
            return model
    forms = [cls.syntax for cls in classes]
    listed = forms[0] if len(forms) == 1 else f"{', '.join(forms[:-1])} or {forms[-1]}"
    raise InvalidParameterError(f"The {parameter!r} parameter expects {listed}; got {spec!r}", parameter=parameter)


def parse_models(specs: Mapping[str, str | None]) -> tuple[PrivacyModel, ...]:
    """Models from text specs by parameter, in the mapping's order, skipping empty ones:
    ``parse_models({"l_diversity": "entropy:3", "t_closeness": "0.2:hierarchical"})``."""
    return tuple(parse_model(parameter, spec) for parameter, spec in specs.items() if spec)
