"""The release decision of the dashboard and its one write (param only).

``ExportState.decision`` is the same ``NodeRelease`` the CLI's ``release`` builds for the same
question, so the file is the release the screen shows: the selected node (as ``--node``), else the
policy's preferred node, with the k, MaxSup, sensitive attribute and privacy models (k-map included)
the current profile was computed with. ``files`` keeps the bytes of the last write for the current
decision (the CSV, its report and the report's page must come from one write: see
``microrelease.app.downloads``).
"""

from __future__ import annotations

from pathlib import Path

import param

from microrelease.app.downloads import WrittenFiles, written_bytes
from microrelease.app.explorer.explorer import Explorer
from microrelease.core import POLICIES, NoSolutionError
from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.node_release import NodeRelease, OutputOptions
from microrelease.core.release import Published

FILE = "release.csv"
REPORT = "release.report.json"
REPORT_HTML = "release.report.html"


def decision_key(decision: NodeRelease, escape: bool, publish_reference: bool = False) -> tuple:
    """What makes two writes the same release (the table and the sensitive frequency by identity)."""
    c = decision.criteria
    return (id(decision.data), tuple(decision.node), decision.max_sup, id(c.sensitive), tuple(c.describe()), decision.chosen_by,
            decision.policy, tuple(sorted((decision.weights or {}).items())), bool(escape), bool(publish_reference),
            None if c.k_map is None else id(c.k_map.population))


class ExportState(param.Parameterized):
    explorer = param.ClassSelector(class_=Explorer)
    escape = param.Boolean(default=False, label="Escape spreadsheet formulas")
    # off by default: the input's counts minus the file's give the suppressed rows' sensitive values
    publish_reference = param.Boolean(default=False, label="Publish the input's counts of the sensitive values "
                                      "(t-closeness; they disclose the suppressed rows' values)")

    def __init__(self, **params):
        super().__init__(**params)
        # (key, spec, WrittenFiles) of the last write; the spec is held so that the ids
        # in the key cannot be reused by other objects while the entry lives
        self._cache: tuple | None = None
        self._counts: tuple | None = None  # (key, spec, counts) of the last decision described

    def node(self) -> int | None:
        """The node an export writes: the selected one, else the policy's preferred one (None: neither)."""
        e = self.explorer
        return e.selected if e.selected is not None else e.preferred

    def decision(self, node_index: int | None = None) -> NodeRelease:
        """The release decision of the current state, built exactly as ``microrelease release`` builds it.

        ``node`` (default: the selected node) is released as ``--node`` does (chosen_by "node"); with
        no node and no selection, the policy's preferred node (chosen_by "policy NAME", with the
        policy and its weights). MaxSup, the sensitive attribute and the privacy models are those
        the current profile (and so the screen) was computed with. Raises NoSolutionError when
        there is nothing to release.
        """
        e = self.explorer
        if e.dataset is None or e.answer is None:
            raise NoSolutionError("no data loaded: nothing to release")
        node_index = e.selected if node_index is None else node_index
        data, k, max_sup, frequency, models = e.dataset, e.k, e.max_sup, e.applied_frequency, e.applied_models
        k_map = e.applied_k_map  # the one the screen shows: the writer suppresses and re-checks the same classes
        criteria = e.criteria()  # the risk-based models the lattice is coloured by: refused, then re-checked
        chosen = Criteria.of(k, *models, *([k_map] if k_map else []), *criteria, sensitive=frequency)
        if node_index is not None:
            return NodeRelease(data, e.lattice.node(int(node_index)), chosen, max_sup)
        if e.preferred is None:
            raise NoSolutionError(e.message or f"no node satisfies k={k} with MaxSup={max_sup}")
        return NodeRelease(data, e.lattice.node(e.preferred), chosen, max_sup, f"policy {e.policy}", e.policy,
                           dict(e.weights) if POLICIES[e.policy].uses_weights and e.weights else None)

    def refusal(self, node_index: int | None) -> str:
        """Why ``node`` cannot be exported ('' when it can). From the answer the screen shows; the
        core refuses the same nodes (more suppressed rows than MaxSup, model failures included)."""
        e = self.explorer
        if e.answer is None:
            return "Nothing to export: no data loaded."
        if e.unapplied():  # the lattice answers a weaker question than the one asked: no release of it
            return f"Nothing to export: {e.unapplied()}."
        if node_index is None:
            return "Nothing to export: " + (e.message or "no node is selected and none satisfies the question.")
        r = e.answer.node(int(node_index))
        if r.satisfies:
            return ""
        text = (f"Node {list(r.vector)} cannot be exported: it does not satisfy k = {e.k} within MaxSup = "
                f"{e.max_sup} (it needs {r.suppressed} suppressed rows)")
        failing = e.failing_models(int(node_index))
        return text + (f"; it fails the privacy models: {failing}." if failing else ".")

    def counts(self) -> dict:
        """Rows the export writes and suppresses, by reason (the report's ``counts``), computed once
        per decision: the view asks again on every tap of the same node."""
        decision = self.decision()
        key = decision_key(decision, False)
        if self._counts is None or self._counts[0] != key:
            self._counts = (key, decision, decision.suppression().counts(self.explorer.dataset.n_rows))
        return self._counts[2]

    def write(self, path: str | Path) -> Published:
        """Write the current decision to ``path`` (and its report beside it), read back and checked.

        Raises InvalidParameterError when the node cannot be exported (see ``refusal``)."""
        reason = self.refusal(self.node())
        if reason:
            raise InvalidParameterError(reason)
        return self.decision().write(path, self.options())

    def options(self) -> OutputOptions:
        """How the export writes: the release options the CLI's ``release`` has flags for."""
        return OutputOptions(escape=self.escape, publish_reference=self.publish_reference)

    def files(self) -> WrittenFiles:
        """(CSV, report JSON, report page) bytes of one write of the current decision (kept until it changes)."""
        reason = self.refusal(self.node())
        if reason:
            raise InvalidParameterError(reason)
        decision = self.decision()
        key, options = decision_key(decision, self.escape, self.publish_reference), self.options()
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, decision, written_bytes(lambda path: decision.write(path, options), FILE))
        return self._cache[2]
