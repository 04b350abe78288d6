"""simkit/kernel_cache.py: kernels cached from older sources are removed before they are loaded.

numba keys a cached kernel on its own file only, so a kernel that calls code of an edited file
came back from the cache with the old code (an edited payoff rule of engine/kernel.py left the
cached play kernels' payoffs as they were)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest
from numba.core.caching import _CacheLocator

import simkit
from simkit import rng
from simkit.kernel_cache import (STAMP_NAME, clear_stale_kernel_caches, kernel_cache_folder, numba_cache_subpath,
                                 source_digest)

NO_JIT = bool(numba.config.DISABLE_JIT)


def _package(root: Path) -> Path:
    """A package of two modules: ``b.g`` (cached) and ``a.f`` (cached) that calls it."""
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "b.py").write_text(textwrap.dedent("""\
        from numba import njit

        @njit(cache=True)
        def g():
            return 1
        """), encoding="utf-8")
    (package / "a.py").write_text(textwrap.dedent("""\
        from numba import njit
        from pkg.b import g

        @njit(cache=True)
        def f():
            return g() + 10
        """), encoding="utf-8")
    return package


def test_the_cache_folders_are_numbas(tmp_path, monkeypatch):
    """The folder names and places are numba's own: under NUMBA_CACHE_DIR its subpath of the
    source folder, else the source folder's __pycache__ (where numba put simkit's kernels)."""
    assert numba_cache_subpath(tmp_path) == _CacheLocator.get_suitable_cache_subpath(str(tmp_path / "x.py"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert kernel_cache_folder(tmp_path / "src") == tmp_path / "cache" / numba_cache_subpath(tmp_path / "src")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert kernel_cache_folder(tmp_path) == tmp_path / "__pycache__"


@pytest.mark.skipif(NO_JIT, reason="numba's cache is off without the JIT")
def test_simkits_kernels_are_cached_where_it_looks():
    """The folder of a real kernel's cache (numba's private attribute, read here to follow numba)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        pytest.skip("checked in-tree only")
    folder = Path(rng.next_below._cache._cache_path)
    assert folder == kernel_cache_folder(Path(rng.__file__).parent)


def test_a_source_change_removes_the_cached_kernels_of_every_folder(tmp_path, monkeypatch):
    """The first call removes the kernels of folders without a digest (built from unknown
    sources) and records it; the next leaves them; an edit of any one file clears every folder
    (a kernel inlines code of other folders); other files are never touched."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    package = _package(tmp_path)
    (package / "sub").mkdir()
    (package / "sub" / "c.py").write_text("X = 1\n", encoding="utf-8")
    folders = [package / "__pycache__", package / "sub" / "__pycache__"]
    for folder in folders:
        folder.mkdir()
        for name in ("a.f-4.py311.nbi", "a.f-4.py311.1.nbc", "a.cpython-311.pyc"):
            (folder / name).write_bytes(b"x")
    assert clear_stale_kernel_caches(package) == folders
    for folder in folders:
        assert sorted(p.name for p in folder.iterdir()) == ["a.cpython-311.pyc", STAMP_NAME]
        assert (folder / STAMP_NAME).read_text(encoding="ascii").strip() == source_digest(package)
        (folder / "a.f-4.py311.nbi").write_bytes(b"new")
    assert clear_stale_kernel_caches(package) == []
    assert all((folder / "a.f-4.py311.nbi").exists() for folder in folders)
    (package / "sub" / "c.py").write_text("X = 2\n", encoding="utf-8")
    assert clear_stale_kernel_caches(package) == folders
    assert not any((folder / "a.f-4.py311.nbi").exists() for folder in folders)


@pytest.mark.skipif(NO_JIT, reason="numba's cache is off without the JIT")
def test_an_edited_callee_is_not_played_from_the_cache(tmp_path):
    """The hazard itself: a.f cached, b.g (which it calls) edited.  Loaded after the clean-up,
    f runs the new g (without it numba loads f as built, with the old g)."""
    package = _package(tmp_path)
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from simkit.kernel_cache import "
              "clear_stale_kernel_caches; clear_stale_kernel_caches(sys.argv[2]); import pkg.a; print(pkg.a.f())")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(package)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run() == "11"
    assert any(p.suffix == ".nbi" for p in (package / "__pycache__").iterdir())  # f and g were cached
    (package / "b.py").write_text((package / "b.py").read_text(encoding="utf-8").replace("return 1", "return 2"),
                                  encoding="utf-8")
    assert run() == "12"


def test_importing_simkit_clears_its_stale_kernels(tmp_path):
    """The clean-up runs when simkit is imported (before any kernel can load): a cached kernel
    file with another digest in simkit's cache folder is gone after ``import simkit``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    engine = Path(simkit.__file__).parent / "engine"
    folder = tmp_path / "cache" / numba_cache_subpath(engine)
    folder.mkdir(parents=True)
    (folder / STAMP_NAME).write_text("0" * 64 + "\n", encoding="ascii")
    (folder / "kernel.observe-1023.py311.nbi").write_bytes(b"old")
    done = subprocess.run([sys.executable, "-c", "import simkit"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert not (folder / "kernel.observe-1023.py311.nbi").exists()
    assert (folder / STAMP_NAME).read_text(encoding="ascii").strip() == source_digest()
