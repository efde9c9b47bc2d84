"""Every command's every flag given bad and extreme values (a seeded, bounded fuzz over the parser):
exit 0, or one line on stderr and exit 2 (``check``: 1 for a table that is not k-anonymous), never a
traceback or a hang; a value that cannot be right (a word for a number, a choice not offered, a column
or file that does not exist, a negative count, a column named twice in a list) is refused, never run
silently; a path value lies inside pytest's tmp_path. The tally is printed."""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import signal
from collections import Counter
from pathlib import Path

from microrelease.app.cli import build_parser, main
from microrelease.core.data.samples import microdata_sample, sample_data_folder

SEED, KINDS = 20261202, 260  # the cases run: every named one, then a seeded draw of the rest up to KINDS
HANG = 120  # seconds one case may take (the tiny samples answer in well under one)

# A word for a number, a choice not offered, a column or file that does not exist: always refused.
NUMERIC = {"--k", "--max-sup", "--memory-budget", "--time-limit", "--threads", "--k-map", "--max-risk",
           "--max-uniqueness", "--sampling-fraction", "--list-suppressed", "--seed", "--epsilon", "--bins",
           "--w-relational", "--w-sequence", "--w-time", "--port", "--threshold", "--limit", "--memory-limit"}
COLUMNS = {"--qi", "--identifier", "--sensitive", "--attrs", "--confidential", "--keep", "--drop", "--entity-id",
           "--sequence-key", "--order-by", "--code"}
COLUMN_LISTS = {"--qi", "--identifier", "--sensitive", "--attrs", "--confidential", "--keep", "--drop"}
PATHS = {"--hierarchy-dir", "--population", "--config", "--code-hierarchy"}
# "{tmp}": pytest's tmp_path (a path value never writes outside it); "{column}": a column of the command's table
VALUES = {"word": "abc", "nan": "nan", "negative": "-1", "negative share": "-5%", "empty": "", "huge": "1e999",
          "subnormal": "1e-320", "fraction": "2.5", "dash list": "-1,0,0", "column": "no_such_column",
          "path": "{tmp}/nonexistent/microrelease-fuzz/x", "quote": '"', "unicode": "é€", "zero": "0",
          "large": "1000000000", "separator pair": "::", "repeated column": "{column},{column}"}
COLUMN = {"search": "Race", "release": "Race", "check": "Race", "risk": "Race", "app": "age", "microaggregate": "RESSALES",
          "dp": "RESSALES", "sequential": "age"}  # a column of each base command's table


def value(command: str, kind: str, tmp: Path) -> str:
    return VALUES[kind].replace("{tmp}", str(tmp)).replace("{column}", COLUMN[command])


def must_refuse(flag: str, action: argparse.Action, kind: str) -> bool:
    if action.choices is not None:
        return kind in ("word", "empty", "column")
    if flag in NUMERIC or flag.startswith("--max-") or flag in ("--l-diversity", "--t-closeness"):
        return kind in ("word", "nan", "negative", "negative share", "column", "unicode")
    if flag in COLUMN_LISTS and kind == "repeated column":
        return True
    if flag in COLUMNS:
        return kind == "column"
    if flag in PATHS:
        return kind == "path"
    return False


def base_commands(tmp: Path) -> dict[str, list[str]]:
    """A command line that runs, per command, on a tiny bundled table (the fuzzed flag is appended)."""
    h = sample_data_folder("hospital")
    out = str(tmp / "out.csv")
    return {
        "search": ["search", "--sample", "samarati", "--k", "2", "--quiet"],
        "release": ["release", "--sample", "samarati", "--k", "2", "-o", out, "--force", "--quiet"],
        "check": ["check", "--sample", "samarati", "--k", "1"],
        "risk": ["risk", "--sample", "samarati"],
        "microaggregate": ["microaggregate", str(microdata_sample("eia").path), "--qi", "RESSALES", "--k", "3",
                           "-o", out, "--force", "--quiet"],
        "dp": ["dp", str(microdata_sample("eia").path), "--attrs", "RESSALES", "--bounds", "RESSALES=0:10000000",
               "--epsilon", "1", "--method",
               "record-noise", "-o", out, "--force"],
        "sequential": ["sequential", str(h / "patients.csv"), str(h / "visits.csv"), "--entity-id", "patient_id",
                       "--qi", "age,sex,zip", "--identifier", "name", "--sequence-key", "visit_id", "--order-by", "day",
                       "--code", "code", "--code-hierarchy", str(h / "hospital_hierarchy_code.csv"), "--hierarchy-dir",
                       str(h), "--drop", "cost", "--k", "5", "-o", str(tmp / "seq"), "--force", "--quiet"],
        "app": ["app", "--sample", "toy"],
    }


def flags_of(parser: argparse.ArgumentParser) -> dict[str, dict[str, argparse.Action]]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: {a.option_strings[-1]: a for a in p._actions
                   if a.option_strings and a.nargs != 0 and not isinstance(a, argparse._HelpAction)}
            for name, p in sub.choices.items()}


# The cases an attack named (issue 26), and a column named twice in every column list: always run.
NAMED = [("search", "--k", "nan"), ("search", "--k", "large"), ("search", "--k", "fraction"), ("search", "--sep", "separator pair"),
         ("release", "--out-sep", "quote"), ("release", "--list-suppressed", "negative"),
         ("search", "--max-sup", "negative share"), ("release", "--node", "dash list"), ("dp", "--epsilon", "subnormal")]


def cases() -> list[tuple[str, str, str]]:
    every = [(command, flag, kind) for command, flags in flags_of(build_parser()).items()
             for flag in flags for kind in VALUES]
    repeated = [(command, flag, "repeated column") for command, flags in flags_of(build_parser()).items()
                for flag in flags if flag in COLUMN_LISTS]
    assert len(every) >= 1000 and set(NAMED) <= set(every) and len(repeated) >= 20
    always = NAMED + repeated
    rest = [c for c in every if c not in always]
    random.Random(SEED).shuffle(rest)
    chosen = always + rest[: KINDS - len(NAMED)]
    assert {c for c, _, _ in chosen} == {c for c, _, _ in every}  # every command drawn
    return chosen


class Hung(Exception):
    pass


def run_case(argv: list[str]) -> tuple[int | None, str, BaseException | None]:
    """(exit status, stderr, an exception that escaped main) of one command line, run in this process."""
    err, code, escaped = io.StringIO(), None, None

    def hung(signum, frame):  # noqa: ARG001
        raise Hung(f"{' '.join(argv)} ran over {HANG} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:  # noqa: BLE001 - a traceback is what this test looks for
        escaped = exc
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue(), escaped


def test_every_flag_takes_bad_values_with_one_line_or_runs(tmp_path, monkeypatch):
    import microrelease.app.serve as serve_module

    monkeypatch.setattr(serve_module, "serve", lambda **_: None)  # the app command checks its flags, then would serve
    monkeypatch.chdir(tmp_path)
    flags = flags_of(build_parser())
    bases = base_commands(tmp_path)
    for argv in bases.values():  # each refusal below is the fuzzed flag's, not the base command's
        code, err, escaped = run_case(argv)
        assert escaped is None and code == 0, f"{' '.join(argv)}: exit {code}: {err or escaped}"
    tally, faults = Counter(), []
    for command, flag, kind in cases():
        argv = [*bases[command], flag, value(command, kind, tmp_path)]
        code, err, escaped = run_case(argv)
        lines = [line for line in err.splitlines() if line.strip()]
        errors = [line for line in lines if "error:" in line]
        refused = code == 2
        tally["refused" if refused else "ran" if code in (0, 1) else "other"] += 1
        where = f"{' '.join(argv[:1])} {flag} {argv[-1]!r} ({kind})"
        if escaped is not None:
            faults.append(f"{where}: {type(escaped).__name__}: {escaped}")
        elif code not in (0, 2) and not (command == "check" and code == 1):
            faults.append(f"{where}: exit {code}")
        elif refused and (len(errors) != 1 or len(lines) != len([x for x in lines if "warning:" in x]) + 1):
            faults.append(f"{where}: not one line: {err!r}")
        elif kind == "repeated column" and refused and flag not in errors[0]:
            faults.append(f"{where}: the error does not name {flag}: {errors[0]!r}")
        elif must_refuse(flag, flags[command][flag], kind):
            tally["cannot be right"] += 1
            if not refused:
                faults.append(f"{where}: ran (exit {code}) on a value that cannot be right")
    print(f"\nCLI fuzz: {tally['refused'] + tally['ran'] + tally['other']} kinds (seed {SEED}): {tally['refused']} refused in one line, "
          f"{tally['ran']} ran; {tally['cannot be right']} values that cannot be right among them; {len(faults)} faults")
    assert not faults, "\n".join(faults)
