"""The Explorer's privacy-criteria parameters, generated from the core's registry (param only, no Panel).

Each API parameter of the registry but k (the question's own, asked by the sidebar's slider) is one
group of controls (``control_groups``); each control is one
Explorer parameter of its name (``l_kind``, ``l``, ``c``, ``t``, ``ground``, ``max_risk``, ...). A
group's values compose its text spec, parsed by ``parse_criteria`` as the command line's flags are.
A criterion registered later (a test's) gets its parameters on the next Explorer made (``declare``).
"""

from __future__ import annotations

import param

from microrelease.core.criteria.controls import Control, ControlGroup
from microrelease.core.criteria.criterion import Scope, Statistic
from microrelease.core.criteria.registry import control_groups

OWN = ("k",)  # registry parameters the question asks for with its own widgets, not as a group


def groups(*, needs: Statistic | None = None, scope: Scope | None = None) -> dict[str, ControlGroup]:
    """The registry's groups the sidebar generates (registry order), optionally filtered as
    ``spec_parameters`` filters."""
    return {p: g for p, g in control_groups(needs=needs, scope=scope).items() if p not in OWN}


def parameter(control: Control) -> param.Parameter:
    """The param Parameter asking for ``control``: its label, default, bounds (exclusive ones kept:
    c > 0) or choices."""
    common = {"default": control.default, "label": control.label, "doc": control.doc or None}
    if control.choices:
        return param.Selector(objects=list(control.choices), **common)
    kind = param.Integer if control.kind is int else param.Number
    return kind(bounds=(control.low, control.high), inclusive_bounds=(not control.low_open, not control.high_open),
                **common)


def declare(cls: type[param.Parameterized]) -> None:
    """Give ``cls`` a parameter for every control of ``groups`` it lacks (the registry read now)."""
    for group in groups().values():
        for control in group.every:
            if control.name not in cls.param:
                cls.param.add_parameter(control.name, parameter(control))


def names(*, scope: Scope) -> list[str]:
    """The parameters of the groups of ``scope``: CLASS ones change the profile, RELEASE ones the query."""
    return [c.name for g in groups(scope=scope).values() for c in g.every]
