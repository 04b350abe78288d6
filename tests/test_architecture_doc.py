"""docs/architecture.md names the module of each concept, and every module it names exists.

Two spellings are checked, anywhere on the page (the concept index, the module table, the prose):

* a path such as ``simkit/storage/runs.py``: a file of the package;
* a dotted name such as ``simkit.analysis.sequential``: a module or package of the package, optionally
  followed by a name its file defines at the top level (``simkit.rules.RuleSet``: a class, function,
  assignment or import there).

A renamed or deleted module, or a renamed top-level name, fails the check.  It reads and parses the
package's files and imports nothing (no numba compile).  Each row of the concept index must name at
least one module, so the index cannot lose its modules and pass.
"""

from __future__ import annotations

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
CONCEPT_HEADING = "## Where each concept lives"

_NOT_BEFORE = r"(?<![\w./-])"
MODULE_PATH = re.compile(_NOT_BEFORE + r"(simkit/[\w/]+\.py)(?![\w-])")
DOTTED = re.compile(_NOT_BEFORE + r"(simkit(?:\.[A-Za-z_]\w*)+)")


def package_sources() -> dict[str, str]:
    """Repo-relative POSIX path -> source text, for every .py file of the package."""
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((ROOT / "simkit").rglob("*.py")) if "__pycache__" not in p.parts}


def top_level_names(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _module_file(parts: list[str], sources: dict[str, str]) -> str | None:
    stem = "/".join(parts)
    for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
        if candidate in sources:
            return candidate
    return None


def dotted_problem(name: str, sources: dict[str, str]) -> str | None:
    """Why the dotted ``name`` names no module (or no name of its module); None when it does."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):  # the longest prefix that is a module or package
        found = _module_file(parts[:k], sources)
        if found is not None:
            break
    else:
        return f"{name}: no such module"
    rest = parts[k:]
    if not rest or rest[0] in top_level_names(sources[found]):
        return None
    return f"{name}: no module {'.'.join(parts[:k + 1])}, nor a name {rest[0]!r} in {found}"


def concept_rows(text: str) -> list[tuple[str, str]]:
    """(concept, modules cell) of each row of the concept index."""
    section = text.split(CONCEPT_HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and cells[0] not in ("concept", "") and not set(cells[0]) <= {"-"}:
            rows.append((cells[0], cells[1]))
    return rows


def problems(text: str, sources: dict[str, str]) -> list[str]:
    out = [f"{path}: no such module" for path in sorted(set(MODULE_PATH.findall(text))) if path not in sources]
    out += [p for name in sorted(set(DOTTED.findall(text))) if (p := dotted_problem(name, sources))]
    out += [f"concept {concept!r}: names no module" for concept, cell in concept_rows(text)
            if not MODULE_PATH.search(cell) and not DOTTED.search(cell)]
    return out


def test_every_module_named_in_architecture_doc_exists():
    text = DOC.read_text(encoding="utf-8")
    assert problems(text, package_sources()) == []
    # the page does name modules both ways, and has its concept index (the check is not vacuous)
    assert len(set(MODULE_PATH.findall(text))) >= 50
    assert {"simkit.analysis.sequential", "simkit.analysis.regression"} <= set(DOTTED.findall(text))
    assert len(concept_rows(text)) >= 30


def test_a_renamed_module_or_name_fails():
    text = DOC.read_text(encoding="utf-8")
    sources = package_sources()
    assert problems(text, sources) == []  # so each set below is exactly what the change causes

    renamed = dict(sources)
    renamed["simkit/analysis/NAME.py"] = renamed.pop("simkit/analysis/sequential.py")
    assert set(problems(text, renamed)) == {
        "simkit/analysis/sequential.py: no such module",
        "simkit.analysis.sequential: no module simkit.analysis.sequential, nor a name 'sequential' in "
        "simkit/analysis/__init__.py"}

    gone_package = {k: v for k, v in sources.items() if not k.startswith("simkit/experiment/")}
    assert set(problems(text, gone_package)) == {"simkit/experiment/spec.py: no such module",
                                                 "simkit/experiment/run.py: no such module"}

    no_class = dict(sources)
    no_class["simkit/rules.py"] = sources["simkit/rules.py"].replace("class RuleSet", "class Rules")
    assert no_class["simkit/rules.py"] != sources["simkit/rules.py"]
    assert problems(text, no_class) == [
        "simkit.rules.RuleSet: no module simkit.rules.RuleSet, nor a name 'RuleSet' in simkit/rules.py"]

    typo = text.replace("`simkit/runner/luck.py`", "`simkit/runner/NAME.py`", 1)
    assert typo != text and problems(typo, sources) == ["simkit/runner/NAME.py: no such module"]

    emptied = text.replace("| `simkit/storage/lock.py` | docs/datasets.md |", "| the lock | docs/datasets.md |")
    assert emptied != text
    assert problems(emptied, sources) == ["concept 'one writer per folder': names no module"]
