"""simkit/kernel_cache.py: a kernel built from other sources can never be loaded.

numba keys a cached kernel on its own file only, so a kernel that calls code of an edited file
came back from the cache with the old code.  simkit caches every kernel under the digest of the
sources the process runs; these tests edit a small package guarded the same way (its
``__init__`` does what simkit's does) and check that every process runs the code it imported:
after an edit, with a process that imported the old sources and compiles late, through a
symbolic link with ``NUMBA_CACHE_DIR`` set, with a cache folder that cannot be written, and in
a seeded mix of all of them."""

from __future__ import annotations

import importlib
import os
import time
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

import simkit
from simkit import kernel_cache, rng
from simkit.kernel_cache import (KEY_PREFIX, ROOT_FOLDER, kernel_folder, prune_other_keys, source_digest,
                                 take_snapshot)

NO_JIT = bool(numba.config.DISABLE_JIT)
needs_jit = pytest.mark.skipif(NO_JIT, reason="numba's cache is off without the JIT")

INIT = textwrap.dedent("""\
    from simkit.kernel_cache import guard_package, use_source_keyed_cache
    guard_package(__name__, __path__[0])
    use_source_keyed_cache()
    """)
B = textwrap.dedent("""\
    from numba import njit

    @njit(cache=True)
    def g():
        return {value}
    """)
A = textwrap.dedent("""\
    from numba import njit
    from pkg.b import g

    @njit(cache=True)
    def f():
        return g() + 10
    """)
# a process that imports pkg.a, says so, waits for a line on its input, then calls f
LATE = ("import sys; sys.path.insert(0, sys.argv[1]); import pkg.a; print('ready', flush=True); "
        "sys.stdin.readline(); print(pkg.a.f(), flush=True)")
NOW = "import sys; sys.path.insert(0, sys.argv[1]); import pkg.a; print(pkg.a.f())"


def _package(root: Path, value: int = 1) -> Path:
    """``pkg``: ``b.g`` (cached) returns ``value``; ``a.f`` (cached) calls it and adds 10."""
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(INIT, encoding="utf-8")
    (package / "b.py").write_text(B.format(value=value), encoding="utf-8")
    (package / "a.py").write_text(A, encoding="utf-8")
    return package


def _edit(package: Path, value: int) -> None:
    (package / "b.py").write_text(B.format(value=value), encoding="utf-8")


def _env(cache_dir: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    return env


def _run(path_root: Path, env: dict[str, str], script: str = NOW) -> str:
    done = subprocess.run([sys.executable, "-c", script, str(path_root)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class _LateProcess:
    """A process that imported the package and compiles f only when told to."""

    def __init__(self, path_root: Path, env: dict[str, str]):
        self.process = subprocess.Popen([sys.executable, "-c", LATE, str(path_root)], env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self.process.stdout.readline().strip() == "ready"

    def compile_now(self) -> str:
        out, err = self.process.communicate("go\n", timeout=300)
        assert self.process.returncode == 0, err
        return out.strip()


def _nbi_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.nbi")) if folder.exists() else []


# ---- the key and the folders


def test_the_key_changes_with_every_source_file(tmp_path):
    """The digest reads every file: an edit of the first, a middle, the last or a nested file in
    path order changes it (a digest that skipped one file would let its edits reuse old kernels)."""
    package = _package(tmp_path)
    (package / "sub").mkdir()
    (package / "sub" / "z.py").write_text("X = 1\n", encoding="utf-8")
    names = [p.relative_to(package).as_posix() for p in sorted(package.rglob("*.py"))]
    assert names == ["__init__.py", "a.py", "b.py", "sub/z.py"]
    seen = {source_digest(package)}
    for name in names:
        path = package / name
        path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
        seen.add(source_digest(package))
    assert len(seen) == len(names) + 1
    assert set(take_snapshot(package).files) == set(names)


def test_a_moved_or_linked_checkout_has_the_same_key(tmp_path):
    """The key is of the sources, not of the path: a copy elsewhere and a link have the same."""
    package = _package(tmp_path / "one")
    copy = _package(tmp_path / "two")
    (tmp_path / "link").symlink_to(tmp_path / "one", target_is_directory=True)
    assert take_snapshot(package).key == take_snapshot(copy).key == take_snapshot(tmp_path / "link" / "pkg").key
    assert take_snapshot(tmp_path / "link" / "pkg").relative(tmp_path / "link" / "pkg" / "a.py") == "a.py"


@needs_jit
def test_every_simkit_kernel_is_cached_under_the_key():
    """Each of simkit's cached kernels (every module) has its folder under this process's key,
    in the folder of its own source file: a kernel module that made its kernels before the
    locator was installed would be cached unkeyed, by numba's own locators."""
    snapshot = kernel_cache._GUARDED["simkit"].snapshot
    assert snapshot.digest == source_digest() and not kernel_cache.is_mixed()
    checked = 0
    for name in sorted(set(snapshot.files) - {"__main__.py"}):  # __main__ runs the command line
        module = importlib.import_module(("simkit." + name[:-3].replace("/", ".")).removesuffix(".__init__"))
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and not isinstance(value._cache, NullCache) \
                    and value.py_func.__module__ == module.__name__:
                folder = Path(value._cache._cache_path)
                assert folder.parent.name == snapshot.key, (module.__name__, folder)
                assert folder.name == (Path(name).parent.as_posix().replace("/", ".") if "/" in name else ROOT_FOLDER)
                checked += 1
    assert checked > 100
    base = Path(os.environ["NUMBA_CACHE_DIR"]) if os.environ.get("NUMBA_CACHE_DIR") else snapshot.root / "__pycache__"
    assert Path(rng.next_below._cache._cache_path) == kernel_folder(snapshot, "rng.py", base)


def test_importing_simkit_imports_no_numba():
    done = subprocess.run([sys.executable, "-c", "import sys, simkit; print('numba' in sys.modules)"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_old_keys_are_pruned_but_the_newest(tmp_path):
    for age, name in enumerate(["a", "b", "c", "d"]):
        folder = tmp_path / f"{KEY_PREFIX}{name}"
        folder.mkdir()
        os.utime(folder, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    (tmp_path / "other").mkdir()
    removed = prune_other_keys(tmp_path, keep=f"{KEY_PREFIX}a", keep_others=2)
    assert sorted(p.name for p in removed) == [f"{KEY_PREFIX}d"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other"] + [f"{KEY_PREFIX}{n}" for n in "abc"]


def test_a_key_folder_in_use_is_not_pruned(tmp_path):
    """A process of other sources touched its folder a minute ago: it may still be compiling into
    it (a helper's edit and a test run side by side removed a folder under numba's rename, and the
    command failed with 'No such file or directory' on the kernel's temporary file)."""
    now = time.time()
    stamps = {"b": 1_000_000, "c": 999_000, "d": now - 30, "e": now - 60}  # d, e: two processes now
    for name in "abcde":
        (tmp_path / f"{KEY_PREFIX}{name}").mkdir()
    for name, stamp in stamps.items():
        os.utime(tmp_path / f"{KEY_PREFIX}{name}", (stamp, stamp))
    removed = prune_other_keys(tmp_path, keep=f"{KEY_PREFIX}a", keep_others=1)
    assert sorted(p.name for p in removed) == [f"{KEY_PREFIX}b", f"{KEY_PREFIX}c"]  # e kept: in use
    assert prune_other_keys(tmp_path, keep=f"{KEY_PREFIX}a", keep_others=1, in_use_s=45) == [tmp_path / f"{KEY_PREFIX}e"]


# ---- the hazards, end to end


@needs_jit
def test_an_edited_callee_is_not_played_from_the_cache(tmp_path):
    """a.f cached, b.g (which it calls) edited: f runs the new g; unedited, the cache is used."""
    package = _package(tmp_path)
    env = _env(None)
    assert _run(tmp_path, env) == "11"
    built = _nbi_files(package / "__pycache__")
    assert {p.name.split("-")[0] for p in built} == {"a.f", "b.g"}
    assert _run(tmp_path, env) == "11"
    _edit(package, 2)
    assert _run(tmp_path, env) == "12"
    assert not list(package.joinpath("__pycache__").glob("*.nb[ic]"))  # nothing unkeyed


@needs_jit
def test_a_process_of_the_old_sources_that_compiles_late_saves_no_stale_kernel(tmp_path):
    """Issue 36, case 1: a process imports the old sources; the sources are edited and another
    process runs the new ones; the old process then compiles (from its old code: 11) and saves.
    A later process must still run the new code (with a clean-up at import it got 11)."""
    package = _package(tmp_path)
    env = _env(None)
    late = _LateProcess(tmp_path, env)
    _edit(package, 2)
    assert _run(tmp_path, env) == "12"
    assert late.compile_now() == "11"
    assert _run(tmp_path, env) == "12"


@needs_jit
def test_a_linked_checkout_with_a_cache_dir_runs_the_new_code(tmp_path):
    """Issue 36, case 2: the checkout reached through a symbolic link, NUMBA_CACHE_DIR set."""
    package = _package(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    env = _env(str(tmp_path / "cache"))
    assert _run(tmp_path / "link", env) == "11"
    assert _nbi_files(tmp_path / "cache")
    _edit(package, 2)
    assert _run(tmp_path / "link", env) == "12"
    assert _run(tmp_path / "real", env) == "12"


@needs_jit
def test_an_unwritable_cache_dir_falls_back_to_a_keyed_folder(tmp_path):
    """Issue 36, case 3: NUMBA_CACHE_DIR cannot be written (here: under a regular file, so that
    it holds for root too); the kernels go to the package's __pycache__, keyed, and an edit is
    seen."""
    package = _package(tmp_path)
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    env = _env(str(tmp_path / "file" / "cache"))
    assert _run(tmp_path, env) == "11"
    keyed = [p for p in (package / "__pycache__").iterdir() if p.name.startswith(KEY_PREFIX)]
    assert len(keyed) == 1 and _nbi_files(keyed[0])
    _edit(package, 2)
    assert _run(tmp_path, env) == "12"


@needs_jit
def test_a_module_changed_after_the_package_was_imported_is_cached_privately(tmp_path):
    """A process imports the package, then a module edited since: it runs that module's new
    code (Python loads the file as it is) and must not save kernels of its mixed sources where
    processes of either version would find them."""
    package = _package(tmp_path)
    script = ("import sys, pathlib; sys.path.insert(0, sys.argv[1]); import pkg; "
              "p = pathlib.Path(pkg.__path__[0]) / 'b.py'; p.write_text(p.read_text().replace('return 1', 'return 5')); "
              "import pkg.a, simkit.kernel_cache as k; print(pkg.a.f(), k.is_mixed('pkg'), "
              "pathlib.Path(pkg.a.f._cache._cache_path).is_relative_to(pkg.__path__[0]))")
    assert _run(tmp_path, _env(None), script) == "15 True False"
    assert not _nbi_files(package / "__pycache__")
    assert _run(tmp_path, _env(None)) == "15"


@needs_jit
def test_no_stale_kernel_in_a_seeded_mix_of_edits_and_processes(tmp_path):
    """20 trials, each an edit of b.g's value followed by runs in a seeded mix of ways: through
    the checkout or a link to it; NUMBA_CACHE_DIR unset, set, or unwritable; and a process that
    imported the sources before the edit and compiles after it.  Each process must print the
    value of the sources it imported."""
    package = _package(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "file").write_text("", encoding="utf-8")
    caches = [None, str(tmp_path / "cache"), str(tmp_path / "file" / "cache")]
    roots = [tmp_path / "real", tmp_path / "link"]
    generator = random.Random(20261205)
    value = 1
    for _ in range(20):
        env = _env(generator.choice(caches))
        late = _LateProcess(generator.choice(roots), env) if generator.random() < 0.5 else None
        old, value = value, generator.choice([v for v in range(1, 9) if v != value])
        _edit(package, value)
        if late is not None:
            if generator.random() < 0.5:
                assert _run(generator.choice(roots), _env(generator.choice(caches))) == str(10 + value)
            assert late.compile_now() == str(10 + old)
        assert _run(generator.choice(roots), _env(generator.choice(caches))) == str(10 + value)


def test_simkit_itself_is_guarded():
    assert kernel_cache._GUARDED["simkit"].snapshot.root == Path(simkit.__file__).resolve().parent
