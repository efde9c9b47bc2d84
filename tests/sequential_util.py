"""Helpers of the relational + sequential tests."""

from __future__ import annotations


def by_entity(release) -> dict[int, list[tuple]]:
    """Each input entity's released events (visit rank, time, code), the pseudonyms undone."""
    index = {name: e for e, name in enumerate(release.pseudonym)}
    out: dict[int, list[tuple]] = {}
    for row in release.events.itertuples(index=False):
        ident, visit, when, code = row
        out.setdefault(index[ident], []).append((visit.rsplit("-V", 1)[1], when, code))
    return {e: sorted(v) for e, v in out.items()}
