"""Every document or repository path cited by a text file of the repo exists in the repo.

Scanned: every file git knows here (tracked, or new and not ignored) ending in .md, .py, .toml or
.txt.  Three kinds of citation, each resolved to a file (or folder) the same set must contain:

* a Markdown link or image ``[text](target)`` in a .md file, resolved from that file's folder
  (web addresses, ``mailto:`` and bare ``#anchor`` links are not paths; an ``#anchor`` after a
  path is dropped);
* a path under one of the repo's top-level folders (``docs/``, ``experiments/``, ``reports/``,
  ``simkit/``, ``tests/``, ``tools/``) ending in .md .toml .py .txt .json .png or .svg, backticked or bare,
  resolved from the repo root;
* a bare Markdown file name such as ``CHANGELOG.md``: some file of the repo must
  have that name.

Not citations, handled explicitly: paths inside generated-output folders (``runs/...``,
``out/...``: a path rule only starts a match at a top-level folder of the repo, and a link into
them is skipped), placeholder segments (``reports/NAME/report.md``), and anything with ``{`` or
``*`` in it (f-strings, globs), which the path characters exclude.  This file is not scanned: its
own examples cite missing paths on purpose.
"""

from __future__ import annotations

import pathlib
import posixpath
import re
import shutil
import subprocess
from typing import Callable, Iterable

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = (".md", ".py", ".toml", ".txt")
TOP_FOLDERS = ("docs", "experiments", "reports", "simkit", "tests", "tools")
CITED_SUFFIXES = ("md", "toml", "py", "txt", "json", "png", "svg")
# folders that commands write into (never part of the repo): a link there cites no repo file
GENERATED_ROOTS = ("runs", "out")
# path segments (or file stems) that stand for a name the reader chooses
PLACEHOLDERS = frozenset({"NAME"})
THIS_FILE = "tests/test_doc_references.py"

_PATH_CHARS = r"[\w./-]"
MD_LINK = re.compile(r"!?\[[^\]\n]*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
REPO_PATH = re.compile(
    rf"(?<!{_PATH_CHARS})((?:{'|'.join(TOP_FOLDERS)})/{_PATH_CHARS}*?\.(?:{'|'.join(CITED_SUFFIXES)}))(?![\w-])"
)
BARE_MD = re.compile(rf"(?<!{_PATH_CHARS})([\w-]+\.md)(?![\w-])")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _has_placeholder(path: str) -> bool:
    return any(part in PLACEHOLDERS or part.split(".")[0] in PLACEHOLDERS for part in path.split("/"))


def _folders(files: Iterable[str]) -> set[str]:
    out = set()
    for name in files:
        folder = posixpath.dirname(name)
        while folder:
            out.add(folder)
            folder = posixpath.dirname(folder)
    return out


def broken_citations(files: set[str], read: Callable[[str], str]) -> list[str]:
    """``file:line: cites 'X'`` for every citation in ``files`` (repo-relative POSIX paths, the
    whole repo) of a path the repo does not contain; ``read(name)`` gives a file's text."""
    folders = _folders(files)
    names = {posixpath.basename(f) for f in files}
    problems = []
    for source in sorted(f for f in files if f.endswith(TEXT_SUFFIXES) and f != THIS_FILE):
        text = read(source)
        line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        seen = set()  # (line, file name): one report when several rules see one citation

        def report(pos: int, cited: str, why: str) -> None:
            line = next(k for k in range(len(line_starts), 0, -1) if line_starts[k - 1] <= pos)
            key = (line, posixpath.basename(cited.split("#", 1)[0]))
            if key not in seen:
                seen.add(key)
                problems.append((source, line, f"{source}:{line}: cites {cited!r} ({why})"))

        if source.endswith(".md"):
            for m in MD_LINK.finditer(text):
                target = m.group(1).split("#", 1)[0]
                if not target or URL.match(target):
                    continue
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
                if resolved.split("/", 1)[0] in GENERATED_ROOTS or _has_placeholder(resolved):
                    continue
                if resolved not in files and resolved not in folders:
                    report(m.start(1), m.group(1), f"no {resolved} in the repo")
        for m in REPO_PATH.finditer(text):
            path = posixpath.normpath(m.group(1))
            if not _has_placeholder(path) and path not in files:
                report(m.start(1), m.group(1), "no such file in the repo")
        for m in BARE_MD.finditer(text):
            if m.group(1) not in names:
                report(m.start(1), m.group(1), "no file of that name in the repo")
    return [message for _, _, message in sorted(problems)]


def _repo_files(root: pathlib.Path) -> set[str]:
    """Tracked files, and new files git does not ignore, that exist in the working tree."""
    proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                          cwd=root, capture_output=True, check=True)
    return {name for name in proc.stdout.decode("utf-8").split("\0") if name and (root / name).is_file()}


def _read(root: pathlib.Path) -> Callable[[str], str]:
    return lambda name: (root / name).read_text(encoding="utf-8", errors="replace")


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_every_cited_path_exists():
    files = _repo_files(ROOT)
    assert "docs/rules.md" in files and "tests/test_doc_references.py" in files
    problems = broken_citations(files, _read(ROOT))
    assert not problems, "citations of paths the repo does not contain:\n" + "\n".join(problems)


# -- the checker itself: what it flags and what it leaves alone ---------------------------------

REPO = {"README.md", "docs/rules.md", "docs/engine.md", "simkit/cards.py", "reports/a/report.md",
        "reports/a/plot.png", "experiments/a.toml"}


def _check(text: str, source: str = "docs/new.md") -> list[str]:
    texts = {name: "" for name in REPO}
    texts[source] = text
    return broken_citations(set(texts), texts.__getitem__)


GONE = "RULES" + ".md"  # a specification file the repo does not have (spelt in two parts: grep finds no citation here)


@pytest.mark.parametrize("text,cited", [
    (f"The game is specified in {GONE} §5.", GONE),
    ("see `CHANGELOG.md`", "CHANGELOG.md"),
    (f"the rules ([rules](../{GONE}))", f"../{GONE}"),
    ("[benchmarks](benchmarks.md#cpu)", "benchmarks.md#cpu"),
    ("![plot](../reports/a/missing.png)", "../reports/a/missing.png"),
    ("checked by tests/test_replay.py", "tests/test_replay.py"),
    ("`docs/benchmarks.md` has the table", "docs/benchmarks.md"),
    ("recipe in experiments/b.toml", "experiments/b.toml"),
])
def test_flags_a_missing_citation(text, cited):
    problems = _check(text)
    assert any(f"cites {cited!r}" in p for p in problems), problems
    assert problems[0].startswith("docs/new.md:1: ")


def test_names_the_line_of_the_citation():
    assert _check(f"one\ntwo\nsee {GONE}\n") == [f"docs/new.md:3: cites '{GONE}' (no file of that name in the repo)"]
    assert _check("x = 1\n# docs/rules.md §8, docs/gone.md\n", "simkit/new.py") == [
        "simkit/new.py:2: cites 'docs/gone.md' (no such file in the repo)"]


@pytest.mark.parametrize("text", [
    "docs/rules.md §5, `simkit/cards.py`, [engine](engine.md#policies), [top](../README.md)",
    "rules.md §10 and README.md",                          # bare names of files the repo has
    "![plot](../reports/a/plot.png), [reports](../reports/a), [web](https://example.org/x.md)",
    "writes runs/demo/report.md and out/docs/x.md; [report](../runs/demo/report.md)",  # generated
    "`reports/NAME/report.md` from `experiments/NAME.toml`",  # placeholders
    "f'reports/{name}/report.md', tests/test_*.py, [anchor](#section)",  # f-strings, globs, anchors
])
def test_leaves_existing_and_generated_paths_alone(text):
    assert _check(text) == []


def test_links_only_count_in_markdown_and_resolve_from_their_folder():
    assert _check("x[a](gone/b.png)", "simkit/new.py") == []  # Python indexing is no link
    assert _check("[plot](plot.png)", "reports/a/new.md") == []
    assert _check("[plot](plot.png)", "docs/new.md") == [
        "docs/new.md:1: cites 'plot.png' (no docs/plot.png in the repo)"]


def test_one_report_per_citation():
    assert _check(f"[the spec]({GONE}), [docs/gone.md](docs/gone.md)") == [
        f"docs/new.md:1: cites '{GONE}' (no docs/{GONE} in the repo)",
        "docs/new.md:1: cites 'docs/gone.md' (no docs/docs/gone.md in the repo)"]
