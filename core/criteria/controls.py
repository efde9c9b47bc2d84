"""What a front end asks for each criterion's parameters, declared as data beside the parameter.

A criterion's dataclass field carries a ``Control`` in its metadata (``control``): the
name a front end gives it, its label, type, bounds, step and the value meaning "off". The criteria of
one API parameter form one ``ControlGroup`` (``l_diversity``: distinct, entropy and recursive,
sharing ``l``; chosen by a selector); a group composes the text spec of the values a user chose,
which ``parse_criteria`` then reads, as it reads the
command line's flags. The dashboard's parameters and boxes are generated from these groups
(``control_groups``): adding a criterion adds its group.
Plain data: no UI library here (core never imports one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from microrelease.core.criteria.criterion import Criterion

CONTROL = "control"  # the key of a field's metadata holding its Control
NONE = "none"  # a selector's value asking for none of its group's criteria


@dataclass(frozen=True)
class Control:
    """One parameter as a front end asks for it.

    ``name`` is the front end's name for it (the dashboard's parameter), unique among the registry's
    controls, shared by the criteria of one group that take the same parameter (the l of every
    l-diversity); ``kind`` is ``int``, ``float`` or ``str`` (with ``choices``). ``low``/``high`` bound
    it (``None``: unbounded; ``low_open``/``high_open``: the bound itself excluded). ``off``: the value
    asking for no criterion (``None``: every value asks for one)."""

    name: str
    label: str
    kind: type
    default: object
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    step: float | None = None
    off: object = None
    choices: tuple[str, ...] = ()
    doc: str = ""

    def asks(self, value) -> bool:
        """Whether ``value`` asks for the criterion (is not this control's "off")."""
        return self.off is None or value != self.off

    def text(self, value) -> str:
        """``value`` as a text spec writes it (integral numbers without a decimal point)."""
        if self.kind is str:
            return str(value)
        return str(int(value)) if float(value).is_integer() else repr(float(value))


def control(declared: Control, **field_args):
    """A dataclass field declaring ``declared`` (``field_args``: the field's own, e.g. ``default``)."""
    return dataclasses.field(metadata={CONTROL: declared}, **field_args)


def controls_of(cls: type) -> tuple[Control, ...]:
    """The controls ``cls``'s fields declare, in field order (the order its text spec gives them)."""
    return tuple(f.metadata[CONTROL] for f in dataclasses.fields(cls) if CONTROL in f.metadata)


def keyword(cls: type[Criterion]) -> str:
    """The word a criterion's spec starts with when its parameter gives several (``distinct:L``)."""
    return cls.syntax.partition(":")[0]


@dataclass(frozen=True)
class ControlGroup:
    """The controls of one API parameter's criteria (``classes``, registry order): a ``selector``
    choosing among them when there are several (``none`` first: off), then each distinct control once."""

    parameter: str
    classes: tuple[type[Criterion], ...]
    selector: Control | None
    controls: tuple[Control, ...]

    @classmethod
    def of(cls, parameter: str, classes: tuple[type[Criterion], ...]) -> ControlGroup:
        """The group of ``parameter``'s ``classes``. A group of several is chosen by their shared
        ``selector`` class attribute (a ``Control``; without one, ``<parameter>_kind``); a control
        two classes declare under one name must be the same declaration (else ValueError)."""
        selector = None
        if len(classes) > 1:
            declared = getattr(classes[0], "selector", None) or Control(
                f"{parameter}_kind", parameter.replace("_", " "), str, NONE)
            selector = dataclasses.replace(declared, default=NONE, off=NONE,
                                           choices=(NONE, *(keyword(c) for c in classes)))
        by_name: dict[str, Control] = {}
        for c in classes:
            for declared in controls_of(c):
                if by_name.setdefault(declared.name, declared) != declared:
                    raise ValueError(f"{c.__name__} declares the control {declared.name!r} unlike its group")
        return cls(parameter, classes, selector, tuple(by_name.values()))

    @property
    def every(self) -> tuple[Control, ...]:
        """The selector (if any), then the controls: every value the group reads."""
        return ((self.selector,) if self.selector else ()) + self.controls

    def chosen(self, values: Mapping[str, object]) -> type[Criterion] | None:
        """The criterion class ``values`` ask for (None: off)."""
        if self.selector is None:
            return self.classes[0]
        word = values[self.selector.name]
        return next((c for c in self.classes if keyword(c) == word), None)

    def spec(self, values: Mapping[str, object]) -> str | None:
        """The text spec of the criterion ``values`` (by control name) ask for, None when off: its
        keyword (several classes), then its controlled fields' values in field order, ``:``-separated."""
        cls = self.chosen(values)
        if cls is None:
            return None
        own = controls_of(cls)
        if not all(c.asks(values[c.name]) for c in own):
            return None
        return ":".join([*([keyword(cls)] if self.selector else []), *(c.text(values[c.name]) for c in own)])

    def off(self) -> dict[str, object]:
        """The values turning this group off (those of the controls having an "off")."""
        return {c.name: c.off for c in self.every if c.off is not None}
