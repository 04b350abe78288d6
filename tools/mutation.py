"""Mutation testing of chosen simkit modules against their own tests, with mutmut.

    pip install -e ".[mutation]"
    python tools/mutation.py                                  # every module of tools/mutation.toml
    python tools/mutation.py simkit/analysis/ratings.py       # one module
    python tools/mutation.py simkit/archive.py --survivors    # and the diff of each survivor
    python tools/mutation.py --report                         # the last runs' scores, nothing run

Each module runs in a scratch copy of the working tree (``runs/mutation/<module>/``, kept, so
a second run re-tests only the functions whose source changed, or every mutant when a file
under ``tests/`` changed) whose ``pyproject.toml`` tells
mutmut to mutate that module alone and to run only the tests named for it in
``tools/mutation.toml``.  mutmut writes every mutant of the module into one copy of the sources
and picks the mutant at run time (its "trampolines"), so the copy's source digest, and with it
simkit's kernel cache folder (``simkit/kernel_cache.py``), is the same for every mutant: the
kernels compile once per copy, not once per mutant.  The kernels themselves are decorated
functions, which mutmut leaves alone; docs/testing.md says how they are tested instead.

The score of a module is (killed + timed out) / (every mutant but the skipped ones): a mutant
that no test of the module runs counts against it, as a survivor does.  The scores go to
``runs/mutation/scores.json`` and print as a Markdown table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = Path(__file__).resolve().with_suffix(".toml")
KILLED = ("killed", "timeout", "caught by type check")
NOT_COUNTED = ("skipped",)
PYTEST_ARGS = ["-p", "no:cacheprovider", "-q", "-o", "addopts=", "-x"]


def module_table(config_path: Path = CONFIG) -> dict[str, dict[str, list[str]]]:
    """The modules to mutate and, for each, the test files run against its mutants (``tests``)
    and any further pytest arguments (``pytest_args``, e.g. ``["-m", "not slow"]``)."""
    table = tomllib.loads(config_path.read_text("utf-8"))["modules"]
    return {module: {"tests": list(entry["tests"]), "pytest_args": list(entry.get("pytest_args", []))}
            for module, entry in table.items()}


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout
    return [name for name in listed.decode().split("\0") if name and (ROOT / name).is_file()]


def prepare_copy(module: str, tests: list[str], pytest_args: list[str], scratch: Path) -> None:
    """Copy the working tree's files into ``scratch`` and write its mutmut section."""
    for name in tracked_files():
        target = scratch / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    section = "\n".join([
        "", "[tool.mutmut]",
        'source_paths = ["simkit"]',
        'also_copy = ["README.md"]',  # tests that read the front page's examples (mutmut copies tests/ itself)
        f"only_mutate = {json.dumps([module])}",
        f"pytest_add_cli_args = {json.dumps(PYTEST_ARGS + pytest_args)}",
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        "use_git_change_detection = false",
        # a fresh server process forks each mutant's tests: forking the process that ran the
        # suite once (mutmut's default) copies numba's and pyarrow's thread pools mid-lock, and
        # such a child can hang in a futex with no CPU time to trip mutmut's CPU limit
        'process_isolation = "forkserver"',
        "timeout_multiplier = 5.0", ""])
    (scratch / "pyproject.toml").write_text(pyproject + section, "utf-8")


def mutant_statuses(scratch: Path, env: dict[str, str]) -> dict[str, str]:
    shown = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=scratch,
                           env=env, check=True, capture_output=True, text=True).stdout
    statuses = {}
    for line in shown.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and "__mutmut_" in name:
            statuses[name] = status
    return statuses


def score(statuses: dict[str, str]) -> dict[str, object]:
    counted = {name: s for name, s in statuses.items() if s not in NOT_COUNTED}
    killed = sum(s in KILLED for s in counted.values())
    survivors = sorted(name for name, s in counted.items() if s not in KILLED)
    return {"mutants": len(counted), "killed": killed,
            "score": killed / len(counted) if counted else None, "survivors": survivors,
            "by_status": {s: sum(v == s for v in statuses.values()) for s in sorted(set(statuses.values()))}}


def tests_digest(files: list[str], entry: dict[str, list[str]]) -> str:
    """The sha256 of the module's entry and of every file under ``tests/`` (the module's tests,
    their helpers, conftest)."""
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True).encode())
    for name in sorted(f for f in files if f.startswith("tests/")):
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes() + b"\0")
    return digest.hexdigest()


def run_module(module: str, entry: dict[str, list[str]], out: Path, jobs: int,
               show_survivors: bool) -> dict[str, object]:
    tests = entry["tests"]
    scratch = out / module.replace("/", "__").removesuffix(".py")
    # mutmut keeps a mutant's result while its function's source is unchanged, whatever the
    # tests: when the tests or the module's entry changed, every mutant is tested again
    stamp, digest = scratch / "tests.sha256", tests_digest(tracked_files(), entry)
    if (scratch / "mutants").exists() and (not stamp.exists() or stamp.read_text() != digest):
        shutil.rmtree(scratch / "mutants")
    prepare_copy(module, tests, entry["pytest_args"], scratch)
    stamp.write_text(digest)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(out / ".numba-cache"))
    print(f"== {module}: mutants run against {' '.join(tests + entry['pytest_args'])}", flush=True)
    run = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)], cwd=scratch,
                         env=env, capture_output=True, text=True)
    if run.returncode != 0:
        tail = (run.stdout + run.stderr)[-3000:]
        raise SystemExit(f"mutmut failed on {module} (exit {run.returncode}):\n{tail}")
    result = score(mutant_statuses(scratch, env))
    if show_survivors:
        for name in result["survivors"]:
            diff = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=scratch, env=env,
                                  capture_output=True, text=True).stdout
            print(f"-- {name} ({'no tests' if 'no tests' in diff else 'survived'})\n{diff}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules of tools/mutation.toml (default: all of them)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once (mutmut's --max-children)")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "mutation", help="scratch copies and scores")
    parser.add_argument("--survivors", action="store_true", help="print the diff of every surviving mutant")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: the scores of the modules' last runs, as their scratch copies hold them")
    args = parser.parse_args(argv)
    table = module_table()
    unknown = [m for m in args.modules if m not in table]
    if unknown:
        parser.error(f"not in {CONFIG.name}: {', '.join(unknown)} (add the module and its tests there)")
    args.out.mkdir(parents=True, exist_ok=True)
    scores_path = args.out / "scores.json"
    for module in args.modules or list(table):
        scratch = args.out / module.replace("/", "__").removesuffix(".py")
        if args.report:
            if not (scratch / "mutants").exists():
                continue
            result = score(mutant_statuses(scratch, dict(os.environ)))
        else:
            result = run_module(module, table[module], args.out, args.jobs, args.survivors)
        # read again just before writing: runs of other modules may have written meanwhile
        scores = json.loads(scores_path.read_text("utf-8")) if scores_path.exists() else {}
        scores[module] = result
        scores_path.write_text(json.dumps(scores, indent=1, sort_keys=True) + "\n", "utf-8")
    print("\n| module | mutants | killed | score |\n|---|---:|---:|---:|")
    for module in args.modules or list(table):
        if module not in scores:
            continue
        s = scores[module]
        print(f"| `{module}` | {s['mutants']} | {s['killed']} | "
              f"{'-' if s['score'] is None else format(s['score'], '.1%')} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
