"""Compiled roll-up of one node's classes from an evaluated node below it, and the node's figures.

A class is an int64 key packing one level code per QI in bit fields (the layout of
``key_spec``). Going from a node u to a node v >= u rewrites
the field of every QI whose level rises through the composed parent map (level u_i -> v_i) and
regroups the classes in an open-addressing hash table, summing their counts. The cost is the number of
classes of u, which is why ``NodeEvaluator`` starts from the
evaluated node below v with the fewest classes. The numpy oracle is
``class_sizes`` (tests compare both at every node).
"""

from __future__ import annotations

import numba as nb
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier


@nb.njit(cache=True, nogil=True)
def class_figures(counts, k):
    """(suppressed rows, released classes, smallest released class, Σ released size², Σ every size²)
    for k-anonymity with minimal required suppression (classes smaller than k removed)."""
    suppressed = 0
    distinct = 0
    smallest = 0
    released_sq = 0
    all_sq = 0
    for i in range(len(counts)):
        c = counts[i]
        all_sq += c * c
        if c < k:
            suppressed += c
        else:
            distinct += 1
            released_sq += c * c
            if smallest == 0 or c < smallest:
                smallest = c
    return suppressed, distinct, smallest, released_sq, all_sq


@nb.njit(cache=True, nogil=True)
def suppressed_quality(keys, counts, k, levels, shifts, masks, share_flat, share_off, value_off, value_count):
    """What the quality models read of the suppressed classes (those smaller than k): per QI their rows'
    share mass (``share_flat[share_off[a, level] + code]``), and Σ over QIs of Σ_u a_u log2 a_u, a_u the
    suppressed rows holding generalized value u (``value_count``: zero scratch per QI value, left zero)."""
    m = len(shifts)
    mass = np.zeros(m)
    for i in range(len(counts)):
        c = counts[i]
        if c >= k:
            continue
        key = keys[i]
        for a in range(m):
            code = (key >> shifts[a]) & masks[a]
            mass[a] += c * share_flat[share_off[a, levels[a]] + code]
            value_count[value_off[a] + code] += c
    entropy = 0.0
    for i in range(len(counts)):
        if counts[i] >= k:
            continue
        key = keys[i]
        for a in range(m):
            j = value_off[a] + ((key >> shifts[a]) & masks[a])
            x = value_count[j]
            if x > 0:
                entropy += x * np.log2(x)
                value_count[j] = 0.0
    return mass, entropy


@nb.njit(cache=True, nogil=True)
def nearest_below(levels, sizes, node, bottom_size):
    """The slot of the cached node below ``node`` with the fewest classes (fewer than ``bottom_size``),
    or -1 (``sizes[slot]`` < 0: a free slot)."""
    best = -1
    best_size = bottom_size
    m = len(node)
    for slot in range(len(sizes)):
        size = sizes[slot]
        if size < 0 or size >= best_size:
            continue
        below = True
        for a in range(m):
            if levels[slot, a] > node[a]:
                below = False
                break
        if below:
            best = slot
            best_size = size
    return best


@nb.njit(cache=True, nogil=True)
def roll_to(keys, counts, changed, shifts, masks, deltas_flat, deltas_off, split, table_keys, table_idx, k,
            give_up):
    """The classes at a node above: the field of QI ``changed[j]`` moves by
    ``deltas_flat[deltas_off[j] + digit]`` (its new code minus its old, shifted into place), and the
    classes that meet are merged (their counts summed).

    The classes come sorted by QI ``split`` (its values in the hierarchy's top-down order, see
    ``NodeEvaluator._block_orders``), which the roll-up keeps; so each value of ``split`` at the new
    level is a contiguous *block* of classes that never meets another. Blocks are grouped one at a time,
    each in a hash table sized for it (in the processor's cache when small), and after each block the
    rows in classes smaller than ``k`` so far are a lower bound of the node's suppression: once above
    ``give_up`` (the node fails; -1: never) the roll-up stops. Returns (keys, counts, complete, classes
    read); the classes stay sorted by ``split``. ``table_keys`` (all -1, left so) and ``table_idx``:
    scratch of at least 2 × len(keys) rounded up to a power of two.
    """
    n = len(keys)
    # the split QI's field alone first (where its value at the new level changes: the blocks), so that
    # a roll-up that gives up never rewrites the keys it does not read
    split_move = -1
    for j in range(len(changed)):
        if changed[j] == split:
            split_move = j
    out_keys = np.empty(max(n, 1), np.int64)
    out_counts = np.empty(max(n, 1), np.int64)
    slots = np.empty(max(n, 1), np.int64)
    m = 0
    suppressed = 0
    lo = 0
    while lo < n:
        digit = (keys[lo] >> shifts[split]) & masks[split]
        value = digit + (deltas_flat[deltas_off[split_move] + digit] >> shifts[split] if split_move >= 0 else 0)
        hi = lo + 1
        while hi < n:
            digit = (keys[hi] >> shifts[split]) & masks[split]
            moved = digit + (deltas_flat[deltas_off[split_move] + digit] >> shifts[split] if split_move >= 0 else 0)
            if moved != value:
                break
            hi += 1
        bits = 4
        while (1 << bits) < 2 * (hi - lo):
            bits += 1
        hash_shift = np.uint64(64 - bits)
        wrap = (1 << bits) - 1
        first = m
        for i in range(lo, hi):
            key = keys[i]
            for j in range(len(changed)):
                a = changed[j]
                key += deltas_flat[deltas_off[j] + ((key >> shifts[a]) & masks[a])]
            s = np.int64((np.uint64(key) * _GOLDEN) >> hash_shift)
            while True:
                tk = table_keys[s]
                if tk == -1:
                    table_keys[s] = key
                    table_idx[s] = m
                    slots[m] = s
                    out_keys[m] = key
                    out_counts[m] = counts[i]
                    m += 1
                    break
                if tk == key:
                    out_counts[table_idx[s]] += counts[i]
                    break
                s = (s + 1) & wrap
        for j in range(first, m):
            table_keys[slots[j]] = -1
            if out_counts[j] < k:
                suppressed += out_counts[j]
        lo = hi
        if give_up >= 0 and suppressed > give_up and lo < n:
            return out_keys[:m].copy(), out_counts[:m].copy(), False, lo
    return out_keys[:m].copy(), out_counts[:m].copy(), True, n
