"""Refinement of the grouping: swapping two entities of neighbouring groups when the release loses less.

The greedy (``grouping``) fixes each group before it sees the next, so
an entity may fit a later group better. A pass visits every entity e (input order) and its ``near``
nearest entities f in the sketch (nearest first, ties: input order); when f is in another group, the
swap of e and f is made if it lowers the two groups' loss (``group_loss``, measured on the
consensus the release will compute) and does not raise the codes they suppress; e's first such swap is
kept. Groups keep their sizes, so each keeps at least k members, and the measured suppression never
rises.

Most swaps are judged without aligning a whole group: each entity keeps its group's consensus
*without* it (the release's alignment of the other members). Swapping e and f would give e's group the
consensus without e, merged with f: a bound on what that keeps (``value_bound``)
discards most swaps; one alignment each side estimates the rest; only a swap that the estimate says
lowers the loss has both groups aligned in full, and only that exact figure decides. With blocks
(``blocks``), swaps stay within a block, and the blocks are
refined at the same time.
"""

from __future__ import annotations

from collections.abc import Callable

import numba as nb
import numpy as np
from numba.typed import List

import microrelease.core.sequential.alignment_kernels as alignment_kernels
import microrelease.core.sequential.grouping_kernels as gk
from microrelease.core.exceptions import Cancelled
from microrelease.core.sequential import group_loss as gl
from microrelease.core.sequential.cost import in_threads

NEAR = 16  # neighbours of an entity whose swaps are tried
PASSES = 1  # refinement passes over every entity (a second gained 0.3 points of suppression at k = 5)
STEPS = 50  # progress reports (and cancellation checks) per pass
TOL = 1e-9  # a loss must fall by more than this share to count (rounding never makes a swap)


@nb.njit(cache=True, nogil=True)
def _without(members, skip, visit_ptr, code_ptr, codes, times, hcodes, tab, mu, w_time, span, step_bytes):
    """The release's consensus of ``members`` (input order) but ``skip``, with its
    ``visit_tops`` and its value."""
    rest = np.empty(len(members) - 1, dtype=np.int64)
    t = 0
    for x in members:
        if x != skip:
            rest[t] = x
            t += 1
    low, high, ptr, level, rep = alignment_kernels.group_consensus(rest, visit_ptr, code_ptr, codes, times, hcodes,
                                                                   tab, w_time, span, step_bytes)
    return low, high, ptr, level, rep, gl.visit_tops(ptr, level, rep, hcodes, tab, mu), \
        gl.consensus_value(level, rep, hcodes, tab, mu)


@nb.njit(cache=True, nogil=True)
def _relational(members, skip, extra, qi_codes, qi_hcodes, qi_tab):
    """rel of ``members`` with ``skip`` replaced by ``extra``: per QI, the level where all meet."""
    m, top = qi_codes.shape[1], qi_hcodes.shape[1] - 1
    total = 0.0
    for q in range(m):
        lv, u = 0, qi_codes[extra, q]
        for x in members:
            if x != skip:
                while lv < top and qi_hcodes[q, lv, u] != qi_hcodes[q, lv, qi_codes[x, q]]:
                    lv += 1
        total += qi_tab[q, lv, qi_hcodes[q, lv, u]]
    return total / m if m else 0.0


@nb.njit(cache=True, nogil=True)
def prepare(gids, group_ptr, members, loss, sup, slot, qi_codes, qi_hcodes, qi_tab, rows, w_rows, visit_ptr, code_ptr,
            codes, times, hcodes, tab, w_rel, w_sup, mu, w_time, span, step_bytes):
    """Groups ``gids``: each one's loss and suppressed codes (into loss, sup), and each member's
    consensus of its group without it (returned; entity x's is at slot[x])."""
    without = List()
    for g in gids:
        own = members[group_ptr[g]:group_ptr[g + 1]]
        loss[g], sup[g] = gl.group_loss(own, qi_codes, qi_hcodes, qi_tab, rows, w_rows, visit_ptr, code_ptr, codes,
                                        times, hcodes, tab, w_rel, w_sup, mu, w_time, span, step_bytes)
        for x in own:
            slot[x] = len(without)
            without.append(_without(own, x, visit_ptr, code_ptr, codes, times, hcodes, tab, mu, w_time, span,
                                    step_bytes))
    return without


@nb.njit(cache=True, nogil=True)
def _estimate(own, e, f, cons, n_codes, work, exact, qi_codes, qi_hcodes, qi_tab, rows, w_rows, visit_ptr, code_ptr,
              codes, times, hcodes, tab, w_rel, w_sup, mu, w_time, span, step_bytes):
    """The loss of group ``own`` with e replaced by f: a lower bound (exact = False: the consensus
    without e keeps at most what ``value_bound`` allows of f) or the estimate
    (exact = True: the consensus without e, merged with f)."""
    rel = _relational(own, e, f, qi_codes, qi_hcodes, qi_tab)
    low, high, ptr, lev, rep, tops, value = cons
    if exact:
        _, _, _, lev2, rep2 = alignment_kernels.merge_member(low, high, ptr, lev, rep, f, visit_ptr, code_ptr, codes,
                                                             times, hcodes, tab, w_time, span, step_bytes)
        value = gl.consensus_value(lev2, rep2, hcodes, tab, mu)
    else:
        value = min(value, gl.value_bound(ptr, tops, f, visit_ptr, code_ptr, work))
    size = len(own)
    return w_rel * size * rel + w_sup * (n_codes - size * value) + gl.rows_loss(own, size, e, f, rows, w_rows)


@nb.njit(cache=True, nogil=True)
def _codes(own, visit_ptr, code_ptr):
    total = 0
    for x in own:
        total += code_ptr[visit_ptr[x + 1]] - code_ptr[visit_ptr[x]]
    return total


@nb.njit(cache=True, nogil=True)
def refine_steps(ents, group_of, group_ptr, members, near, loss, sup, without, slot, qi_codes, qi_hcodes, qi_tab, rows,
                 w_rows, visit_ptr, code_ptr, codes, times, hcodes, tab, w_rel, w_sup, mu, w_time, span, step_bytes):
    """Entities ``ents`` each try their swaps (the module docstring); returns how many were made."""
    args = (qi_codes, qi_hcodes, qi_tab, rows, w_rows, visit_ptr, code_ptr, codes, times, hcodes, tab, w_rel, w_sup, mu,
            w_time, span, step_bytes)
    widest = 1
    for x in range(len(visit_ptr) - 1):
        widest = max(widest, visit_ptr[x + 1] - visit_ptr[x] + 1)
    work = np.empty((3, widest))
    made = 0
    for e in ents:
        cons_e = without[slot[e]]
        for t in range(near.shape[1]):
            f = near[e, t]
            g, h = group_of[e], group_of[f]
            if f < 0 or g == h:
                continue
            cons_f = without[slot[f]]
            own_g, own_h = members[group_ptr[g]:group_ptr[g + 1]], members[group_ptr[h]:group_ptr[h + 1]]
            n_e = code_ptr[visit_ptr[e + 1]] - code_ptr[visit_ptr[e]]
            n_f = code_ptr[visit_ptr[f + 1]] - code_ptr[visit_ptr[f]]
            codes_g = _codes(own_g, visit_ptr, code_ptr) - n_e + n_f
            codes_h = _codes(own_h, visit_ptr, code_ptr) - n_f + n_e
            base = loss[g] + loss[h]
            bar = base - TOL * (1.0 + abs(base))
            # bounds first, then one side aligned, then the other: each step only if the swap may still pay
            side_g = _estimate(own_g, e, f, cons_e, codes_g, work, False, *args)
            side_h = _estimate(own_h, f, e, cons_f, codes_h, work, False, *args)
            if side_g + side_h >= bar:
                continue
            side_g = _estimate(own_g, e, f, cons_e, codes_g, work, True, *args)
            if side_g + side_h >= bar:
                continue
            side_h = _estimate(own_h, f, e, cons_f, codes_h, work, True, *args)
            if side_g + side_h >= bar:
                continue
            new_g, new_h = own_g.copy(), own_h.copy()
            for x in range(len(new_g)):
                new_g[x] = f if new_g[x] == e else new_g[x]
            for x in range(len(new_h)):
                new_h[x] = e if new_h[x] == f else new_h[x]
            new_g, new_h = np.sort(new_g), np.sort(new_h)  # the release aligns members in input order
            lg, sg = gl.group_loss(new_g, *args)
            lh, sh = gl.group_loss(new_h, *args)
            if lg + lh >= bar or sg + sh > sup[g] + sup[h]:
                continue
            own_g[:], own_h[:] = new_g, new_h
            group_of[e], group_of[f] = h, g
            loss[g], loss[h], sup[g], sup[h] = lg, lh, sg, sh
            for own in (own_g, own_h):
                for x in own:
                    without[slot[x]] = _without(own, x, visit_ptr, code_ptr, codes, times, hcodes, tab, mu, w_time,
                                                span, step_bytes)
            made += 1
            break
    return made


def in_blocks(tasks: list, workers: int) -> list:
    """The results of the blocks' tasks (callables running kernels that release the GIL), on up to
    ``workers`` threads."""
    out = [None] * len(tasks)

    def run(lo, hi):
        for b in range(lo, hi):
            out[b] = tasks[b]()

    in_threads(len(tasks), workers, run, pieces=len(tasks))
    return out


def refine_groups(loss_model, groups: np.ndarray, points: np.ndarray, parts: list[np.ndarray] | None = None, *,
                  near: int = NEAR, passes: int = PASSES, progress: Callable[[float], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> np.ndarray:
    """``groups`` after ``passes`` refinement passes (a new array; see the module docstring). ``parts``:
    the blocks' entities (every group within one block); None: one block."""
    group_of = np.array(groups, dtype=np.int64)
    n = len(group_of)
    n_groups = int(group_of.max()) + 1 if n else 0
    if passes == 0 or n_groups < 2 or near == 0 or np.bincount(group_of).min() < 2:
        return group_of
    parts = [np.arange(n)] if parts is None else parts
    members = np.argsort(group_of, kind="stable")  # input order within each group
    group_ptr = np.searchsorted(group_of[members], np.arange(n_groups + 1))
    arrays = loss_model.arrays()
    loss, sup, slot = np.empty(n_groups), np.empty(n_groups, dtype=np.int64), np.empty(n, dtype=np.int64)
    near_of = np.full((n, near), -1, dtype=np.int64)
    workers = loss_model.model.workers

    def prepare_block(ids):
        points_b = np.ascontiguousarray(points[ids])
        found = gk.all_nearest(points_b, gk.build_tree(points_b), near)
        near_of[ids] = np.where(found >= 0, ids[np.maximum(found, 0)], -1)
        return prepare(np.unique(group_of[ids]), group_ptr, members, loss, sup, slot, *arrays)

    without = in_blocks([lambda ids=ids: prepare_block(ids) for ids in parts], workers)
    bounds = [np.linspace(0, len(ids), STEPS + 1).astype(np.int64) for ids in parts]
    for p in range(passes):
        made = 0
        for s in range(STEPS):
            if should_stop is not None and should_stop():
                raise Cancelled("grouping cancelled")
            made += sum(in_blocks([lambda b=b, s=s: refine_steps(parts[b][bounds[b][s]:bounds[b][s + 1]], group_of,
                                                                 group_ptr, members, near_of, loss, sup, without[b],
                                                                 slot, *arrays)
                                   for b in range(len(parts))], workers))
            if progress is not None:
                progress((p + (s + 1) / STEPS) / passes)
        if made == 0:
            break
    return group_of
