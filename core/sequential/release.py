"""The whole pipeline for relational + sequential data, and writing its output with a report.

:func:`anonymize_sequential`: cost model -> grouping -> group anonymization. :func:`write_sequential`
writes ``entities.csv``, ``events.csv`` and ``report.json`` into a folder, after checking the output
alone (every entity shares both parts with at least k − 1 others; no identifier column) in a
temporary folder that is renamed into place only when the check passes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from microrelease.core.exceptions import VerificationError
from microrelease.core.sequential.anonymize import SequentialRelease, anonymize_groups
from microrelease.core.sequential.cost import CostModel, CostWeights
from microrelease.core.sequential.grouping import group_entities
from microrelease.core.sequential.guarantee import check_release, linkage_attack
from microrelease.core.sequential.model import SequentialData
from microrelease.core.staging import staged
from microrelease.core.validation import check_k


def anonymize_sequential(data: SequentialData, k: int, *, weights: CostWeights | None = None,
                         variant: str = "greedy", relative_time: bool = False, relational_only: bool = False,
                         rng=None, progress=None) -> SequentialRelease:
    """k-anonymize ``data`` over both parts (``relational_only``: group and generalize the relational
    part alone and leave the sequences as they are, the baseline)."""
    k = check_k(k, data.n_entities)
    weights = weights or CostWeights()
    if relational_only:
        weights = CostWeights(relational=1.0, sequence=0.0, time=weights.time)
    groups = group_entities(CostModel(data, weights), k, variant=variant, progress=progress)
    return anonymize_groups(data, groups, k, w_time=weights.time, relative_time=relative_time,
                            sequences=not relational_only, rng=rng)


def write_sequential(release: SequentialRelease, data: SequentialData, outdir: str | Path, *,
                     attack_m: int = 2, parameters: dict | None = None) -> dict:
    """Write the anonymized tables and the report (see the module docstring); returns the report."""
    with staged(Path(outdir), directory=True) as partial:
        release.entities.to_csv(partial / "entities.csv", index=False)
        release.events.to_csv(partial / "events.csv", index=False)
        import pandas as pd

        ents = pd.read_csv(partial / "entities.csv", dtype=str, keep_default_na=False)
        evs = pd.read_csv(partial / "events.csv", dtype=str, keep_default_na=False)
        shared = check_release(ents, evs, entity_id=data.entity_id, qi=data.qi, sequence_key=data.sequence_key,
                               order_by=data.order_by, code=data.code)
        problems = []
        if len(ents) != data.n_entities:
            problems.append(f"{len(ents)} entities written, expected {data.n_entities}")
        if len(shared) and shared.min() < release.k:
            problems.append(f"an entity shares both parts with only {int(shared.min()) - 1} others (k={release.k})")
        leaked = [c for c in data.identifiers if c in ents.columns]
        if leaked:
            problems.append(f"identifier column(s) {leaked} written")
        if problems:
            raise VerificationError(f"sequential release {outdir} failed its check: " + "; ".join(problems))
        attack = linkage_attack(data, ents, evs, release.pseudonym, m=attack_m)
        sizes = np.bincount(release.groups)
        report = {
            "parameters": {"k": release.k, "qi": list(data.qi), "identifiers_dropped": list(data.identifiers),
                           **dict(parameters or {})},
            "groups": {"count": len(sizes), "smallest": int(sizes.min()), "largest": int(sizes.max())},
            "losses": {"relational_ncp": round(release.relational_loss, 6), "sequence": round(release.sequence_loss, 6)},
            "suppressed_elements": {"count": int(release.suppressed_elements.sum()), "of": int(len(data.codes))},
            "check": {"smallest_shared_set": int(shared.min()) if len(shared) else 0, "k_anonymous_both_parts": True},
            "attack": {"codes_known": attack_m, "success_rate": round(attack, 6), "bound_1_over_k": 1 / release.k},
            "output": {"entities": len(ents), "events": len(evs)},
        }
        (partial / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
