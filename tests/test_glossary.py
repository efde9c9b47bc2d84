"""One meaning per word (docs/glossary): the identifiers of core/ and app/ keep to the glossary.

Walks the ast (names only: never strings, docstrings or comments, so prose cannot fool it) and
fails naming file:line for each identifier the glossary retired:

- ``check`` is the CLI command that audits a table (``microrelease check``, ``check_k_anonymity``,
  ``KAnonymityCheck``, the report's JSON keys ``check``/``checks``): parameter validation is
  ``validate_*``, a claim re-read on a written file is a ``Verification`` (``verify_*``);
- ``satisfies`` is the one verb for "meets the requirement": no function/method named ``holds``,
  ``passes``, ``satisfied`` (nor ``*_passes``/``passes_*``/``holds_*`` flags);
- ``method`` says which algorithm: no parameter or variable ``variant``;
- ``node`` is a vector of levels: a parameter annotated as an int is a ``node_index``;
- ``spec`` is a criterion's or model's text form: the dashboard's release decision is a ``decision``.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("core", "app")

# names a function/method may not have
BANNED_FUNCTIONS = {
    "holds": "satisfies / satisfies_value",
    "passes": "satisfies",
    "satisfied": "satisfies",
    "passes_counts": "satisfies_counts",
    "check_release": "verify_release",
    "check_against_report": "verify_against_report",
}
# `check` in a function name: only a table audit (the CLI command's `check_k_anonymity`; the teaching
# tab's audit of every QI pair)
ALLOWED_CHECK_FUNCTIONS = {"check_k_anonymity", "pairs_check"}
CHECK_FUNCTION = re.compile(r"(^|_)check(_|$)")
# names no parameter, variable or field may have
BANNED_NAMES = {
    "variant": "method",
    "VARIANTS": "GROUPING_METHODS",
    "Check": "Verification",
    "file_passes": "file_satisfies",
}
INT_ANNOTATIONS = {"int", "int | None", "Optional[int]", "None | int"}


def _where(path: Path, node: ast.AST, root: Path) -> str:
    return f"{path.relative_to(root)}:{getattr(node, 'lineno', '?')}"


def parse(path: Path) -> ast.AST:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for n in ast.walk(tree):
        for child in ast.iter_child_nodes(n):
            child._parent = n
    return tree


def offences(path: Path, tree: ast.AST, root: Path = ROOT) -> list[str]:
    """The retired identifiers of one parsed file (see :func:`parse`), as 'file:line: what'."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if n.name in BANNED_FUNCTIONS:
                out.append(f"{_where(path, n, root)}: `{n.name}` -> {BANNED_FUNCTIONS[n.name]}")
            elif (not isinstance(n, ast.ClassDef) and CHECK_FUNCTION.search(n.name)
                  and n.name not in ALLOWED_CHECK_FUNCTIONS and not n.name.startswith("test_")):
                out.append(f"{_where(path, n, root)}: function `{n.name}`: `check` is the table audit only "
                           "(validate_* for parameters, verify_* for a written file)")
            elif n.name in BANNED_NAMES:
                out.append(f"{_where(path, n, root)}: `{n.name}` -> {BANNED_NAMES[n.name]}")
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is None:
                    continue
                if arg.arg in BANNED_NAMES:
                    out.append(f"{_where(path, arg, root)}: parameter `{arg.arg}` -> {BANNED_NAMES[arg.arg]}")
                if (arg.arg == "node" and arg.annotation is not None
                        and ast.unparse(arg.annotation) in INT_ANNOTATIONS):
                    out.append(f"{_where(path, arg, root)}: parameter `node: {ast.unparse(arg.annotation)}` is an "
                               "index: `node_index` (a node is a vector of levels)")
        elif isinstance(n, ast.Name) and n.id in BANNED_NAMES and isinstance(n.ctx, ast.Store):
            out.append(f"{_where(path, n, root)}: name `{n.id}` -> {BANNED_NAMES[n.id]}")
        elif isinstance(n, ast.Attribute) and n.attr in BANNED_NAMES and n.attr != "variant":
            # (`args.variant`: argparse's name for the published `--variant` flag)
            out.append(f"{_where(path, n, root)}: attribute `{n.attr}` -> {BANNED_NAMES[n.attr]}")
        elif isinstance(n, ast.Attribute) and n.attr in {"holds", "satisfied", "passes"} and _called(n):
            out.append(f"{_where(path, n, root)}: call `.{n.attr}(...)` -> satisfies")
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id in {"holds", "passes"}:
            out.append(f"{_where(path, n, root)}: field `{n.target.id}` -> satisfies_* (a verdict)")
        elif isinstance(n, (ast.ImportFrom,)):
            for alias in n.names:
                if alias.name in BANNED_FUNCTIONS or alias.name in BANNED_NAMES:
                    out.append(f"{_where(path, n, root)}: imports `{alias.name}`")
    return out


def _called(attr: ast.Attribute) -> bool:
    parent = getattr(attr, "_parent", None)
    return isinstance(parent, ast.Call) and parent.func is attr


def all_offences(root: Path = ROOT) -> list[str]:
    return [o for tree_dir in TREES for path in sorted((root / tree_dir).rglob("*.py"))
            for o in offences(path, parse(path), root)]


def test_every_identifier_keeps_to_the_glossary():
    found = all_offences()
    assert not found, "identifiers the glossary retired (see the glossary):\n" + "\n".join(found)


def test_the_walk_reads_names_not_prose(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "prose.py").write_text(
        '"""It passes, it holds, it is satisfied; check_k and variant are old words."""\n'
        "# def holds(): a comment\n"
        "MESSAGE = 'the variant parameter; def passes(self); x.holds(1)'\n")
    assert all_offences(tmp_path) == []
    (tmp_path / "core" / "code.py").write_text(
        "def holds(x): ...\n"
        "def check_epsilon(e): ...\n"
        "def f(variant, node: int): ...\n"
        "class C:\n    def passes(self): ...\n"
        "ok = x.satisfied(1)\n")
    got = all_offences(tmp_path)
    assert [o.split(":")[1] for o in got] == ["1", "2", "3", "3", "5", "6"] and all(
        o.startswith("core/code.py:") for o in got), got
