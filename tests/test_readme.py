"""The README is a front page: it stays short; the set-up block ``.ci/run`` parses is intact; its
figures live in docs/benchmarks.md only.  The contributors' page docs/architecture.md lists every
module of the package, in the layer ``tests/test_architecture.py`` puts it, and no module that
does not exist."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import test_architecture as arch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
TEST_COMMAND = 'bash tools/install-browser.sh && python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest -n logical --maxprocesses 4 --dist loadfile'


def layout_rows(text: str) -> dict[str, str]:
    """Module path -> layer, from the rows of docs/architecture.md's module table."""
    section = text
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and (m := re.fullmatch(r"`(simkit/[\w/]+\.py)`", cells[0])):
            if m.group(1) in rows:
                raise AssertionError(f"{m.group(1)} has two rows")
            rows[m.group(1)] = cells[1]
    return rows


def expected_rows(modules: dict[str, pathlib.Path]) -> dict[str, str | None]:
    """Every module of the package (a sub-package's ``__init__.py`` only re-exports its modules:
    the package's own ``simkit/__init__.py`` is listed) -> the name of its layer."""
    out = {}
    for name, path in modules.items():
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py" and name != arch.PACKAGE:
            continue
        index = arch.layer_of(name)
        out[rel] = None if index is None else arch.LAYERS[index][0]
    return out


def layout_problems(text: str, modules: dict[str, pathlib.Path]) -> list[str]:
    rows = layout_rows(text)
    expected = expected_rows(modules)
    problems = [f"{rel}: no row in docs/architecture.md" for rel in expected if rel not in rows]
    problems += [f"{rel}: a row, but no such module" for rel in rows if rel not in expected]
    problems += [f"{rel}: docs/architecture.md says layer {rows[rel]!r}, tests/test_architecture.py says {layer!r}"
                 for rel, layer in expected.items() if rel in rows and layer is not None and rows[rel] != layer]
    return problems


def test_layout_table_lists_every_module_in_its_layer():
    assert layout_problems(ARCHITECTURE.read_text(encoding="utf-8"), arch.simkit_modules()) == []
    assert "(docs/architecture.md)" in README.read_text(encoding="utf-8")


def test_layout_check_fails_for_a_module_added_without_a_row_or_a_stale_or_misplaced_row():
    """The check itself can fail: a new module, a row for a deleted module, a wrong layer."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    modules = arch.simkit_modules()
    before = set(layout_problems(text, modules))  # empty unless the test above fails too

    def new_problems(text: str, modules: dict[str, pathlib.Path]) -> set[str]:
        return set(layout_problems(text, modules)) - before

    added = dict(modules, **{"simkit.studies.NAME": ROOT / "simkit" / "studies" / "NAME.py"})
    assert new_problems(text, added) == {"simkit/studies/NAME.py: no row in docs/architecture.md"}
    removed = {k: v for k, v in modules.items() if k != "simkit.bench"}
    assert new_problems(text, removed) == {"simkit/bench.py: a row, but no such module"}
    wrong = re.sub(r"(\| `simkit/bench\.py` \| )tools( \|)", r"\1analysis\2", text)
    assert wrong != text
    assert new_problems(wrong, modules) == {
        "simkit/bench.py: docs/architecture.md says layer 'analysis', tests/test_architecture.py says 'tools'"}


def test_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    # the block .ci/run executes: the marker, then a fenced bash block with the exact line
    block = text.split("<!-- test-command -->", 1)[1].lstrip("\n").splitlines()
    assert block[0] == "```bash" and block[1] == TEST_COMMAND and block[2] == "```"
    for doc in ("docs/rules.md", "docs/evaluator.md", "docs/engine.md", "docs/analysis.md", "docs/datasets.md",
                "docs/statistics.md", "docs/compare.md", "docs/tournaments.md", "docs/probability.md",
                "docs/methods.md", "docs/measurements.md", "docs/benchmarks.md", "CHANGELOG.md"):
        assert f"]({doc})" in text and (ROOT / doc).exists(), doc


@pytest.mark.parametrize("pattern", [r"deals/s", r"evaluations/s", r"lines/s", r"µs", r"\bcommit [0-9a-f]{7}\b"])
def test_readme_has_no_speed_figures_and_no_history(pattern):
    """Speed figures live in docs/benchmarks.md, history in CHANGELOG.md."""
    assert re.search(pattern, README.read_text(encoding="utf-8")) is None
