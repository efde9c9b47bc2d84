"""What a generalization release's report tells a person besides its counts: why this node, where
it sits in the lattice (is it k-minimal?), and what each QI keeps. Written into the JSON report and
shown by its page (``microrelease.core.release.report_html``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

import numpy as np

from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.lattice.distance_vectors import Lattice, Node
from microrelease.core.lattice.metrics import relative_distance
from microrelease.core.lattice.policies import POLICIES, weight_vector
from microrelease.core.lattice.quality import QUALITY_MODELS

BELOW_LIMIT = 256  # nodes below a node tried for a satisfying one when satisfaction is not monotone
SCORES: dict[str, tuple[str, Callable[..., object]]] = {  # what each policy scores, and the node's value, for the report's "why"
    "min-absolute": ("height", lambda lat, node, fig, w: float(sum(node))),
    "min-relative": ("relative distance", lambda lat, node, fig, w: fig["rel_distance"]),
    "max-distribution": ("number of released classes", lambda lat, node, fig, w: fig["distinct"]),
    "min-suppression": ("number of suppressed rows", lambda lat, node, fig, w: fig["suppressed"]),
    "weighted": ("weighted relative distance",
                 lambda lat, node, fig, w: float(relative_distance(lat, np.array([node]) * weight_vector(lat, w))[0])),
    **{name: (q.label, lambda lat, node, fig, w, name=name: fig["quality"].get(name))  # DM*, entropy, KL: unpublished
       for name, q in QUALITY_MODELS.items()},
}


def minimality(lattice: Lattice, node: Node, max_sup: int | None, criteria: Criteria,
               satisfies: Callable[[Node], bool], *, by_policy: bool = False) -> tuple[bool | None, str]:
    """(is ``node`` k-minimal, why): does no node below it satisfy the question? ``satisfies(other)``
    answers for one node. The direct predecessors suffice when satisfaction is monotone (Samarati
    Lemma 5.1 for k; each criterion declares whether it is, ``monotone``); else every node below is tried, up to
    BELOW_LIMIT of them. Past that, a node a policy chose is k-minimal by the profile that chose it
    (``by_policy``: the policies choose among the k-minimal nodes); another is not determined (None)."""
    if max_sup is None:
        return None, "no MaxSup bounds the suppression, so every node satisfies k with enough of it"
    monotone = criteria.monotone(max_sup)
    below = lattice.predecessors(node) if monotone else [
        other for other in itertools.product(*(range(d + 1) for d in node)) if other != tuple(node)]
    if len(below) > BELOW_LIMIT:
        if by_policy:
            return True, (f"the policy chose it among the k-minimal nodes of the lattice profile; the {len(below)} "
                          "nodes below it were not tried again for this report")
        return None, f"{len(below)} nodes lie below it and satisfaction is not monotone here; they were not all tried"
    for other in below:
        if satisfies(other):
            return False, f"node {list(other)} below it also satisfies the question, with less generalization"
    return True, "every node directly below it fails" if monotone else f"all {len(below)} nodes below it fail"


def decision(lattice: Lattice, node: Node, figures: Mapping, parameters: Mapping,
             minimal: tuple[bool | None, str]) -> dict:
    """How the node was chosen, in words: the policy, its rule and the node's score; or by hand."""
    name = parameters.get("policy")
    known, why = minimal
    if name in POLICIES:
        policy = POLICIES[name]
        what, score = SCORES.get(name, ("score", lambda *_: None))  # a policy added later: no figure yet
        value = score(lattice, node, figures, parameters.get("weights"))
        among = "every node that satisfies the question (ARX's optimum)" if policy.quality else "the k-minimal nodes"
        return {"policy_rule": policy.description, "score": value, "why": (
            f"among {among}, the policy {name} ({policy.label.lower()}) prefers the "
            f"{policy.description}" + (f"; this node's {what} is {value:.6g}" if value is not None else "")
            + ". Ties are broken by fewer suppressed rows, then smaller relative distance, then the "
            "lexicographically smallest vector.")}
    said = {True: f"it is k-minimal ({why})", False: f"it is not k-minimal: {why}", None: f"minimality unknown: {why}"}
    return {"policy_rule": None, "score": None,
            "why": "the node was named, not chosen by a policy (given on the command line or selected in the "
                   f"dashboard); {said[known]}."}


def utility(data, node: Node, kept_levels: np.ndarray) -> list[dict]:
    """Per QI: the released level of its hierarchy, the level's name, and how many of the input's
    distinct values the released rows still tell apart. ``kept_levels``: the level codes of each
    released class (classes × QIs)."""
    out = []
    for i, (q, h, d) in enumerate(zip(data.quasi_identifiers, data.hierarchies, node, strict=True)):
        before = len(np.unique(data.frequency.codes[:, i]))
        after = len(set(np.asarray(h.labels[d], dtype=object)[kept_levels[:, i]].astype(str)))
        out.append({"qi": q, "level": int(d), "height": int(data.lattice.heights[i]), "level_name": h.level_names[d],
                    "input_distinct": before, "released_distinct": after,
                    "share_kept": after / before if before else 0.0})
    return out
