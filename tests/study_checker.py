"""An independent checker of a released multi-table study (issue 16, item 1), from the files alone.

It imports nothing of ``microrelease.core.sequential``: it reads the study's TOML, its input CSV files
and hierarchies (ARX files, read with ``read_arx``), and the release folder, and checks

- **k-indistinguishability** (the guarantee): each released entity's *signature* is its entity-table
  QI values, per satellite the sorted multiset of its rows, and per visit rank the visit's time text
  and its events in ``position`` order, each event = (table, code values); ``smallest_shared`` is
  the size of the smallest set of released entities with one signature;
- **truthfulness**: a released QI is its source value or an ancestor of it; an entity's released
  satellite rows match one-to-one distinct input rows of that entity (bipartite matching); a
  released visit's events, in ``position`` order, match in order distinct input events of the same
  table of that entity (every code column generalizing, every time inside the visit's interval),
  the input visits of released visit r all before those of visit r + 1 (:func:`match_history`);
  no identifier or dropped column in any output, no input id in an id column;
- **accounting**: released + suppressed = input rows per event table and satellite (from the
  audit), and every input entity released exactly once.
- **format** (``malformed``): every file and column there, sequence keys ``<pseudonym>-V<rank>`` with
  ranks 1..n, one time text per visit, positions 1..n, no rows of an id the entity file lacks.

``ok(k)``: ``smallest_shared >= k`` and no problem of any kind.

Input order of a history: visits by (first time, sequence key); inside a visit, events by time, and
events with equal times in any order (the input does not order them).

Tests import it as ``study_checker`` (tests/ is on pytest's path).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pandas as pd

from microrelease.core.lattice.hierarchies import read_arx

POSITION = "position"
_READERS = (  # time kinds, tried in order on every input time cell (numbers, ISO dates, timestamps)
    (re.compile(r"[+-]?\d+"), int),
    (re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"), float),
    (re.compile(r"\d{4}-\d{2}-\d{2}"), lambda t: datetime.strptime(t, "%Y-%m-%d").toordinal()),
    (re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(?:\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?"), None),
)


@dataclass(frozen=True)
class StudyVerdict:
    """What :func:`check_study` found; ``smallest_shared`` is 0 for a release without entities."""

    smallest_shared: int
    untruthful: tuple[str, ...] = ()  # released values or columns that do not stand for their source
    accounting: tuple[str, ...] = ()  # counts that do not add up
    malformed: tuple[str, ...] = ()  # files or cells not in the released format
    smallest_class: tuple[str, ...] = field(default=(), repr=False)  # released ids of a smallest class

    def problems(self) -> list[str]:
        return [*self.untruthful, *self.accounting, *self.malformed]

    def ok(self, k: int) -> bool:
        return self.smallest_shared >= k and not self.problems()


@dataclass(frozen=True)
class _Table:
    name: str
    file: Path
    id: str
    columns: tuple[str, ...]  # QIs or code columns: generalized
    keep: tuple[str, ...]
    hidden: tuple[str, ...]  # identifiers and dropped columns: never released
    labels: dict  # column -> {ground value: the labels it may be released as}
    sequence_key: str = ""
    time: str = ""


def check_study(config: Path, outdir: Path, pseudonym: Mapping[str, str], k: int,
                audit: Mapping | None = None) -> StudyVerdict:
    """Check the release in ``outdir`` of the study described by ``config`` (see the module docstring).

    ``pseudonym`` maps every input entity id to its released id; ``audit`` is the parsed audit JSON
    (None: the counts it holds are not checked). ``k`` is only checked for being a positive int:
    the verdict says ``ok(k)`` for any k.
    """
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    entities, satellites, events = _read_config(Path(config))
    source = _read(entities.file, entities.name, (entities.id, *entities.columns, *entities.keep))
    if source[entities.id].duplicated().any():
        raise ValueError(f"input {entities.name}: ids repeat in {entities.id!r}")
    inputs = dict(zip(source[entities.id], _rows(source), strict=True))
    ctx = _Context(Path(outdir), {c for t in (entities, *satellites, *events) for c in t.hidden}, set(inputs),
                   {v: i for i, v in pseudonym.items()}, audit, len(satellites))
    _check_pseudonyms(inputs, pseudonym, ctx)
    out = ctx.released(entities, (entities.id, *entities.columns, *entities.keep))
    ids = Counter(out[entities.id]) if out is not None else Counter()
    ctx.count += [f"{entities.name}: released id {r!r} appears {n} times" for r, n in ids.items() if n > 1]
    ctx.count += [f"{entities.name}: input entity {i!r} (released as {pseudonym[i]!r}) is not released"
                  for i in inputs if i in pseudonym and pseudonym[i] not in ids]
    ctx.count += [f"{entities.name}: released id {r!r} stands for no input entity"
                  for r in ids if r not in ctx.original]
    for row in [] if out is None else _rows(out):
        rid = row[entities.id]
        ctx.signature[rid][0] = tuple(row[c] for c in entities.columns)
        src = inputs.get(ctx.original.get(rid))
        if src is not None:
            ctx.truth += _qi_problems(entities, row, src, f"{entities.name}: entity {rid!r}")
            ctx.truth += [f"{entities.name}: entity {rid!r}: kept {c!r} is {row[c]!r}, the source {src[c]!r}"
                          for c in entities.keep if row[c] != src[c]]
    for s, sat in enumerate(satellites, start=1):
        _check_satellite(sat, s, ctx)
    _check_events(events, ctx)

    classes = Counter(tuple(sig) for sig in ctx.signature.values())
    if not classes:
        return StudyVerdict(0, tuple(ctx.truth), tuple(ctx.count), tuple(ctx.form))
    rarest, smallest = min(classes.items(), key=lambda kv: kv[1])
    members = tuple(sorted(r for r, sig in ctx.signature.items() if tuple(sig) == rarest))
    return StudyVerdict(smallest, tuple(ctx.truth), tuple(ctx.count), tuple(ctx.form), members)


class _Context:
    """What the checks share: the release folder, the problems found and each released id's signature
    (entity QIs, one sorted tuple of rows per satellite, the history)."""

    def __init__(self, outdir: Path, hidden: set, input_ids: set, original: dict, audit: Mapping | None,
                 n_satellites: int):
        self.outdir, self.hidden, self.input_ids, self.original, self.audit = (outdir, hidden, input_ids,
                                                                               original, audit)
        self.truth: list[str] = []
        self.count: list[str] = []
        self.form: list[str] = []
        self.signature: dict[str, list] = defaultdict(lambda: [()] * (n_satellites + 2))

    def known(self, rid: str, where: str) -> None:
        if rid not in self.signature:
            self.form.append(f"{where}: rows of {rid!r}, not a released entity")

    def released(self, table: _Table, expected: Sequence[str]) -> pd.DataFrame | None:
        """The released file of ``table``, or None (and a problem) when it is missing or lacks columns."""
        path = self.outdir / f"{table.name}.csv"
        if not path.is_file():
            self.form.append(f"the release has no {path.name}")
            return None
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        self.truth += [f"{path.name}: column {c!r} is an identifier or dropped column" for c in frame.columns
                       if c in self.hidden and c not in expected]
        self.form += [f"{path.name}: unexpected column {c!r}" for c in frame.columns
                      if c not in self.hidden and c not in expected]
        missing = [c for c in expected if c not in frame.columns]
        if missing:
            self.form.append(f"{path.name}: no column(s) {missing}")
            return None
        leaked = sorted(set(frame[table.id]) & self.input_ids)
        if leaked:
            self.truth.append(f"{path.name}: the id column {table.id!r} holds input ids {leaked[:5]}")
        return frame


def _check_pseudonyms(inputs: dict, pseudonym: Mapping, ctx: _Context) -> None:
    ctx.count += [f"the pseudonym map has no entry for input entity {i!r}" for i in inputs if i not in pseudonym]
    ctx.count += [f"the pseudonym map names {i!r}, not an input entity" for i in pseudonym if i not in inputs]
    if len(ctx.original) < len(pseudonym):
        ctx.count.append("the pseudonym map gives two input entities the same released id")


def _check_satellite(sat: _Table, s: int, ctx: _Context) -> None:
    source = _read(sat.file, sat.name, (sat.id, *sat.columns, *sat.keep))
    rows_in = defaultdict(list)
    for row in _rows(source):
        rows_in[row[sat.id]].append(row)
    out = ctx.released(sat, (sat.id, *sat.columns, *sat.keep))
    rows_out = defaultdict(list)
    for row in [] if out is None else _rows(out):
        rows_out[row[sat.id]].append(row)
    for rid, rows in rows_out.items():
        ctx.known(rid, sat.name)
        ctx.signature[rid][s] = tuple(sorted(tuple(r[c] for c in (*sat.columns, *sat.keep)) for r in rows))
        pool = rows_in.get(ctx.original.get(rid), [])

        def fits(r: Mapping, i: int, pool: list = pool) -> bool:
            return not _qi_problems(sat, r, pool[i], "") and all(r[c] == pool[i][c] for c in sat.keep)
        matched = _matching(rows, len(pool), fits)
        if matched < len(rows):
            lone = [r for r in rows if not any(fits(r, i) for i in range(len(pool)))]
            why = (f"row {_cells(lone[0], sat.columns)} generalizes none of its {len(pool)} input row(s)" if lone else
                   f"only {matched} of its {len(rows)} released rows match distinct input rows ({len(pool)} in input)")
            ctx.truth.append(f"{sat.name}: entity {rid!r}: {why}")
    _account(ctx, sat.name, "rows", len(source), 0 if out is None else len(out))


def _check_events(events: Sequence[_Table], ctx: _Context) -> None:
    if not events:
        return
    sources = [_read(t.file, t.name, (t.id, t.sequence_key, t.time, *t.columns)) for t in events]
    read_time = _time_reader([c for src, t in zip(sources, events, strict=True) for c in src[t.time]])
    visits: dict = defaultdict(lambda: defaultdict(list))  # input id -> visit key -> [(time, table, codes)]
    for ti, (src, t) in enumerate(zip(sources, events, strict=True)):
        for row in _rows(src):
            codes = tuple(row[c] for c in t.columns)
            visits[row[t.id]][row[t.sequence_key]].append((read_time(row[t.time]), ti, codes))
    released: dict = defaultdict(lambda: defaultdict(list))  # released id -> rank -> [(position, table, ...)]
    for ti, t in enumerate(events):
        out = ctx.released(t, (t.id, t.sequence_key, t.time, *t.columns, POSITION))
        for row in [] if out is None else _rows(out):
            rid, key = row[t.id], row[t.sequence_key]
            rank = key[len(rid) + 2:] if key.startswith(f"{rid}-V") else ""
            if not (rank.isdigit() and str(int(rank)) == rank and int(rank) > 0):
                ctx.form.append(f"{t.name}: sequence key {key!r} of {rid!r} is not '{rid}-V<rank>'")
            pos = row[POSITION]
            released[rid][rank].append((int(pos) if pos.isdigit() else 0, ti, tuple(row[c] for c in t.columns),
                                        row[t.time]))
        _account(ctx, t.name, "events", len(sources[ti]), 0 if out is None else len(out))
    for rid, ranks in released.items():
        ctx.known(rid, "events")
        history = []
        order = sorted(ranks, key=lambda r: (len(r), r))
        if order != [str(r) for r in range(1, len(order) + 1)]:
            ctx.form.append(f"entity {rid!r}: visit ranks {order} are not 1..{len(order)}")
        for rank in order:
            evs = sorted(ranks[rank])
            times = sorted({e[3] for e in evs})
            if len(times) > 1 or [e[0] for e in evs] != list(range(1, len(evs) + 1)):
                ctx.form.append(f"entity {rid!r} visit V{rank}: times {times} and positions {[e[0] for e in evs]} "
                                f"(one time, positions 1..{len(evs)})")
            history.append((rank, tuple(times), tuple((events[e[1]].name, e[2]) for e in evs)))
        ctx.signature[rid][-1] = tuple(history)
        if rid in ctx.original:
            _check_history(rid, history, visits.get(ctx.original[rid], {}), events, read_time, ctx.truth)


def _check_history(rid: str, history: list, visits: dict, events: Sequence[_Table], read_time: Callable,
                   truth: list[str]) -> None:
    inputs = sorted(visits.items(), key=lambda kv: (min(e[0] for e in kv[1]), kv[0]))
    spans = []
    for rank, times, _ in history:
        ends = [read_time(x, strict=False) for x in times[0].split("..")] if len(times) == 1 else []
        if len(ends) not in (1, 2) or None in ends or ends[0] > ends[-1]:
            truth.append(f"entity {rid!r} visit V{rank}: time {times} is not one interval of input times")
            return
        spans.append((ends[0], ends[-1]))
    table = {e.name: i for i, e in enumerate(events)}

    def generalizes(ti: int, released: tuple, codes: tuple) -> bool:
        labels = events[ti].labels
        return all(v in labels[c].get(g, ()) for c, v, g in zip(events[ti].columns, released, codes, strict=True))
    wanted = [(lo, hi, [(table[name], codes) for name, codes in evs])
              for (lo, hi), (_, _, evs) in zip(spans, history, strict=True)]
    failed = match_history(wanted, [v for _, v in inputs], generalizes)
    if failed is None:
        return
    r, j = failed
    (lo, hi, _), (ti, codes) = wanted[r], wanted[r][2][j]
    alike = [e for v in visits.values() for e in v if e[1] == ti and generalizes(ti, codes, e[2])]
    why = (f"generalizes no input event of {events[ti].name}" if not alike else
           f"has no such input event at a time inside {history[r][1][0]!r}" if not any(
               lo <= e[0] <= hi for e in alike) else
           "cannot be matched in order (visits or events out of order, or more events than the input has)")
    truth.append(f"entity {rid!r} visit V{history[r][0]}: event {j + 1} ({events[ti].name} {codes}) {why}")


def match_history(released: Sequence[tuple], inputs: Sequence[Sequence[tuple]],
                  generalizes: Callable[[int, tuple, tuple], bool]) -> tuple[int, int] | None:
    """None if the released visits ``(low, high, [(table, codes), ...])`` can stand for the input visits
    ``[[(time, table, codes), ...], ...]`` (in order, see the module docstring), else (visit, event)
    indices of the first released event that cannot be placed.

    Greedy and exact: the input events are cut into blocks of equal (visit, time), in order; each block
    takes the longest prefix of the remaining events that has a perfect matching into it (any set of
    events that fits a later block also fits after a longer prefix is placed), and a released visit
    that ends in input visit v leaves the next one visits after v.
    """
    blocks = []
    for vi, visit in enumerate(inputs):
        by_time = defaultdict(list)
        for time, ti, codes in visit:
            by_time[time].append((ti, codes))
        blocks += [(vi, time, by_time[time]) for time in sorted(by_time)]
    b = 0
    for r, (low, high, evs) in enumerate(released):
        j, last = 0, None
        while j < len(evs):
            if b == len(blocks):
                return r, j
            vi, time, pool = blocks[b]
            if low <= time <= high:
                taken = _longest_prefix(evs[j:], pool, generalizes)
                j, last = j + taken, vi if taken else last
            b += 1
        while b < len(blocks) and blocks[b][0] == last:
            b += 1
    return None


def _longest_prefix(evs: Sequence[tuple], pool: list, generalizes: Callable) -> int:
    """The longest prefix of ``evs`` matched to distinct events of ``pool`` (Kuhn's augmenting paths)."""
    holder: dict[int, int] = {}

    def fits(e: int, i: int) -> bool:
        return evs[e][0] == pool[i][0] and generalizes(evs[e][0], evs[e][1], pool[i][1])
    for n in range(len(evs)):
        if not _augment(n, len(pool), fits, holder, set()):
            return n
    return len(evs)


def _matching(rows: list, n_pool: int, fits: Callable) -> int:
    """Size of a maximum matching of ``rows`` into ``range(n_pool)`` (Kuhn's augmenting paths)."""
    holder: dict[int, int] = {}
    return sum(_augment(e, n_pool, lambda a, i: fits(rows[a], i), holder, set()) for e in range(len(rows)))


def _augment(e: int, n_pool: int, fits: Callable, holder: dict, seen: set) -> bool:
    for i in range(n_pool):
        if i not in seen and fits(e, i):
            seen.add(i)
            if i not in holder or _augment(holder[i], n_pool, fits, holder, seen):
                holder[i] = e
                return True
    return False


def _qi_problems(table: _Table, row: Mapping, src: Mapping, where: str) -> list[str]:
    return [f"{where}: {c} {row[c]!r} does not generalize the source {src[c]!r}"
            for c in table.columns if row[c] not in table.labels[c].get(src[c], ())]


def _account(ctx: _Context, name: str, unit: str, n_in: int, n_out: int) -> None:
    """Released + suppressed = input, as the audit counts them (skipped without an audit)."""
    if ctx.audit is None:
        return
    keys = (f"input_{unit}", f"released_{unit}", f"suppressed_{unit}")
    found = _find_counts(ctx.audit, name, keys)
    bad = ctx.count
    if not found:
        bad.append(f"the audit has no {keys} for {name!r}")
    for counts in found:
        if counts.get(keys[2]) is None or n_out + counts[keys[2]] != n_in:
            bad.append(f"{name}: {n_out} released + {counts.get(keys[2])} suppressed {unit} != {n_in} input")
        if counts.get(keys[1]) != n_out:
            bad.append(f"{name}: the audit says {counts.get(keys[1])} released {unit}, the file has {n_out}")
        if counts.get(keys[0], n_in) != n_in:
            bad.append(f"{name}: the audit says {counts[keys[0]]} input {unit}, the input has {n_in}")


def _find_counts(node, name: str, keys: tuple, key=None) -> list[Mapping]:
    """Every mapping of the audit holding one of ``keys`` that belongs to table ``name`` (under the key
    ``name``, or with a "name"/"table" entry equal to it): the format does not fix the nesting."""
    found = []
    if isinstance(node, Mapping):
        if (name in (key, node.get("name"), node.get("table"))) and any(k in node for k in keys):
            found.append(node)
        for k, v in node.items():
            found += _find_counts(v, name, keys, k)
    elif isinstance(node, list):
        for v in node:
            found += _find_counts(v, name, keys)
    return found


def _rows(frame: pd.DataFrame) -> list[dict]:
    """The rows as dicts (column lists first: much faster than iterating Arrow-backed text)."""
    columns = list(frame.columns)
    return [dict(zip(columns, values, strict=True)) for values in zip(*(frame[c].tolist() for c in columns),
                                                                      strict=True)]


def _cells(row: Mapping, columns: Sequence[str]) -> str:
    return "(" + ", ".join(f"{c}={row[c]!r}" for c in columns) + ")"


def _time_reader(cells: Sequence[str]) -> Callable:
    """The one reading of every input time cell (numbers, ISO dates or ISO timestamps, by the first
    kind all cells are); the reader returns None (strict=False) or raises for a cell of another kind."""
    kinds = [(pattern, convert) for pattern, convert in _READERS if all(pattern.fullmatch(c) for c in cells)]
    if not kinds:
        raise ValueError(f"input times are neither all numbers, all ISO dates nor all ISO timestamps: {cells[:5]}")
    pattern, convert = kinds[0]
    seen: dict[str, object] = {}  # the same few times recur: read each once

    def read(text: str, strict: bool = True):
        if text in seen:
            return seen[text]
        match = pattern.fullmatch(text)
        try:
            if match is None:
                raise ValueError(text)
            seen[text] = convert(text) if convert else _microseconds(*match.groups())
            return seen[text]
        except ValueError:
            if strict:
                raise ValueError(f"input time {text!r} cannot be read like the others") from None
            return None
    return read


def _microseconds(day: str, minute: str, second: str | None, zone: str | None) -> int:
    """An ISO timestamp as microseconds since year 1 (in UTC when it has a zone)."""
    stamp = datetime.strptime(f"{day}T{minute}", "%Y-%m-%dT%H:%M") - datetime(1, 1, 1)
    micros = (stamp.days * 86_400 + stamp.seconds) * 10**6
    if second:
        whole, _, frac = second[1:].partition(".")
        micros += int(whole) * 10**6 + int(frac.ljust(6, "0"))
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        micros -= sign * (int(zone[1:3]) * 60 + int(zone[4:6])) * 60 * 10**6
    return micros


def _read(path: Path, name: str, columns: Sequence[str]) -> pd.DataFrame:
    if not path.is_file():
        raise ValueError(f"input file of {name!r} not found: {path}")
    with open(path, encoding="utf-8-sig") as fh:
        header = fh.readline()
    sep = max(",;\t|", key=header.count)
    frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"input {path.name} of {name!r} has no column(s) {missing}")
    return frame


def _read_config(config: Path) -> tuple[_Table, list[_Table], list[_Table]]:
    if not config.is_file():
        raise ValueError(f"study config not found: {config}")
    spec = tomllib.loads(config.read_text(encoding="utf-8"))
    base = config.parent
    if "entities" not in spec:
        raise ValueError(f"{config.name}: no [entities] section")
    ent = spec["entities"]
    default_dir = ent.get("hierarchy_dir")

    def table(section: Mapping, what: str, default_name: str, columns_key: str) -> _Table:
        for key in ("file", "id") if what == "entities" else ("file",):
            if key not in section:
                raise ValueError(f"{config.name}: [{what}] has no {key!r}")
        columns = tuple(section.get(columns_key, ()))
        labels = {c: _labels(section, c, base, default_dir, what) for c in columns}
        return _Table(section.get("name", default_name), base / section["file"], section.get("id", ent["id"]),
                      columns, tuple(section.get("keep", ())),
                      tuple(section.get("identifiers", ())) + tuple(section.get("drop", ())), labels,
                      section.get("sequence_key", ""), section.get("time", ""))
    entities = table(ent, "entities", "entities", "qi")
    satellites = [table(s, "satellites", "", "qi") for s in spec.get("satellites", [])]
    events = [table(e, "events", "", "codes") for e in spec.get("events", [])]
    for e in events:
        if not (e.name and e.sequence_key and e.time and e.columns):
            raise ValueError(f"{config.name}: an [[events]] table needs name, sequence_key, time and codes")
    if any(not s.name for s in satellites):
        raise ValueError(f"{config.name}: a [[satellites]] table needs a name")
    return entities, satellites, events


def _labels(section: Mapping, column: str, base: Path, default_dir: str | None, what: str) -> dict:
    """{ground value: every label of its row} from the column's ARX hierarchy, blanks as the project
    reads them (a value of their own below the top unless the file maps "")."""
    given = section.get("hierarchies", {}).get(column)
    if given is not None:
        path = base / given
    else:
        folders = [base / d for d in (section.get("hierarchy_dir"), default_dir) if d is not None]
        found = [p for d in folders for p in sorted({*d.glob(f"*hierarchy_{column}.csv"), *d.glob(f"{column}.csv")})]
        if not found:
            raise ValueError(f"[{what}]: no hierarchy for column {column!r} (hierarchies or hierarchy_dir)")
        path = found[0]
    hierarchy = read_arx(path, column).with_missing()
    return {row[0]: frozenset(row) for row in hierarchy.rows}
