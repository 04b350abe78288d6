"""numba's on-disk cache of simkit's kernels, keyed by the digest of simkit's sources.

numba keys a cached kernel on its *own* source file only.  A kernel whose file did not
change, but which calls or inlines code from a file that did, would be loaded as it was built:
with the old code (measured: a payoff rule changed in ``engine/kernel.py`` left every cached
play kernel's payoffs as before).  Clearing stale files at import (simkit's first attempt) is
not enough: a process that imported the old sources may compile and save a kernel *after*
another process cleared the cache; a checkout reached through a symbolic link names its folder
differently; a read-only cache folder cannot be cleared while numba falls back to another one.

So staleness is made impossible by construction: every simkit kernel is cached in a folder
named after the digest of the sources the process actually runs (:func:`source_digest`), and
only there.  A kernel built from other sources lives in another folder and can never be found.

* At ``import simkit`` (:func:`guard_package`), before any kernel module is imported, the
  sources are read once: the sha256 of each ``.py`` file (a :class:`SourceSnapshot`) and of
  all of them (the *key*).  An import hook (:class:`_SnapshotCheck`) then checks every module of
  the package imported later against the snapshot: a module whose file changed since (a ``git
  pull`` during a long run) marks the process *mixed*, and from then on its kernels are cached
  in a private temporary folder removed at exit, never in a shared one.
* :class:`SourceKeyedCacheLocator`, put first among numba's cache locators
  (:func:`use_source_keyed_cache`, called by :mod:`simkit.jit` before any kernel is made),
  places each kernel of a guarded package in ``BASE/simkit-kernels-KEY/RELATIVE_FOLDER``, where
  BASE is the first writable of ``NUMBA_CACHE_DIR``, the package's own ``__pycache__`` and
  numba's user-wide cache folder (numba's order), else the private temporary folder.  The
  folder is named by the key, not by the path, so a symbolic link to the checkout finds the
  same folder, and any BASE numba falls back to is keyed too.  The source stamp numba checks is
  the file's sha256 from the snapshot.
* Folders of other keys are pruned when a new key's folder is first made (the newest
  :data:`KEEP_OTHER_KEYS` are kept, for switching branches), and so are the unkeyed kernel files
  that older simkit versions left in ``__pycache__``.  A folder a process began to use in the
  last :data:`IN_USE_S` seconds is kept too (each process touches its key's folder): another
  process may be compiling into it, and numba fails on a kernel file whose folder vanished
  before its rename.  A pruned folder that a longer-running process uses is made again when it
  saves.

Nothing here imports numba but :func:`use_source_keyed_cache`, so ``import simkit`` stays
light.  Any file-system error leaves the cache as it is (a kernel then compiles again).
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import importlib.abc
import importlib.machinery
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
KEY_PREFIX = "simkit-kernels-"  # a cache folder per source digest: KEY_PREFIX + the digest's first KEY_LENGTH hex digits
KEY_LENGTH = 24
KEEP_OTHER_KEYS = 2  # folders of other source digests kept when a new one is made (switching branches)
IN_USE_S = 3600.0  # a key folder a process began to use this recently is not pruned (it may still compile)
KERNEL_CACHE_SUFFIXES = (".nbi", ".nbc")  # numba's cache index and data files
ROOT_FOLDER = "_"  # the relative folder name of the package's own top folder inside a key's folder


def _source_files(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.relative_to(package).parts)


def _file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclasses.dataclass(frozen=True)
class SourceSnapshot:
    """The sources of a package as a process read them: the sha256 of each ``.py`` file by
    its path relative to the package (posix), and the digest of all of them (:attr:`key`)."""

    root: Path  # the package folder, symbolic links resolved
    files: dict[str, str]
    digest: str

    @property
    def key(self) -> str:
        """The name of this snapshot's kernel cache folder."""
        return KEY_PREFIX + self.digest[:KEY_LENGTH]

    def relative(self, path: str | os.PathLike) -> str | None:
        """``path``'s name relative to the package (posix), or None when it lies outside."""
        try:
            return Path(os.path.realpath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return None


def take_snapshot(package: str | os.PathLike) -> SourceSnapshot:
    """Read every ``.py`` file under ``package`` (one read each).

    >>> snapshot = take_snapshot(PACKAGE_DIR)
    >>> snapshot.files["kernel_cache.py"] == _file_digest((PACKAGE_DIR / "kernel_cache.py").read_bytes())
    True
    >>> snapshot.key.startswith(KEY_PREFIX) and len(snapshot.key) == len(KEY_PREFIX) + KEY_LENGTH
    True
    """
    root = Path(os.path.realpath(package))
    files = {}
    digest = hashlib.sha256()
    for path in _source_files(root):
        name = path.relative_to(root).as_posix()
        data = path.read_bytes()
        files[name] = _file_digest(data)
        encoded = name.encode()
        digest.update(len(encoded).to_bytes(8, "little") + encoded + len(data).to_bytes(8, "little") + data)
    return SourceSnapshot(root, files, digest.hexdigest())


def source_digest(package: str | os.PathLike = PACKAGE_DIR) -> str:
    """sha256 of every ``.py`` file under ``package``: each one's path relative to it and its
    bytes, in path order."""
    return take_snapshot(package).digest


@dataclasses.dataclass
class _Guarded:
    """A guarded package: its snapshot, and whether a module imported later differed from it."""

    snapshot: SourceSnapshot
    mixed: bool = False
    changed: list[str] = dataclasses.field(default_factory=list)


_GUARDED: dict[str, _Guarded] = {}  # by package name
_PRIVATE: list[Path] = []  # this process's temporary cache folder, made on first need


def _private_folder() -> Path:
    """A cache folder of this process alone, removed at exit: for kernels of a mixed process,
    or when no shared folder can be written."""
    if not _PRIVATE:
        folder = Path(tempfile.mkdtemp(prefix="simkit-kernels-private-"))
        atexit.register(shutil.rmtree, folder, True)
        _PRIVATE.append(folder)
    return _PRIVATE[0]


class _SnapshotCheck(importlib.abc.MetaPathFinder):
    """An import hook that compares each module of the guarded packages, as it is imported,
    with the snapshot taken at the package's import; it finds nothing itself (Python's own
    finders load the module)."""

    def find_spec(self, fullname, path=None, target=None):
        package = fullname.partition(".")[0]
        guarded = _GUARDED.get(package)
        if guarded is None or guarded.mixed or fullname == package:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        name = guarded.snapshot.relative(spec.origin)
        try:
            current = _file_digest(Path(spec.origin).read_bytes())
        except OSError:
            current = None
        if name is None or guarded.snapshot.files.get(name) != current:
            guarded.mixed = True
            guarded.changed.append(fullname)
        return None  # Python's finders go on and load it


def guard_package(name: str, package: str | os.PathLike) -> SourceSnapshot:
    """Snapshot the package ``name`` (folder ``package``) and check every module of it imported
    from now on against the snapshot.  Call it from the package's ``__init__``, before any of
    its kernel modules is imported.  Idempotent for one package."""
    if name in _GUARDED:
        return _GUARDED[name].snapshot
    snapshot = take_snapshot(package)
    _GUARDED[name] = _Guarded(snapshot)
    if not any(isinstance(finder, _SnapshotCheck) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SnapshotCheck())
    return snapshot


def is_mixed(name: str = "simkit") -> bool:
    """Whether a module of package ``name`` was imported from a file that changed after the
    package's import (this process then caches its kernels privately)."""
    guarded = _GUARDED.get(name)
    return bool(guarded and guarded.mixed)


def _guarded_for(py_file: str) -> tuple[_Guarded, str] | None:
    for guarded in _GUARDED.values():
        name = guarded.snapshot.relative(py_file)
        if name is not None and name in guarded.snapshot.files:
            return guarded, name
    return None


def _user_wide_folder() -> Path:
    from numba.misc.appdirs import AppDirs  # numba's own choice of the user's cache folder

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)


def cache_bases(snapshot: SourceSnapshot) -> list[Path]:
    """Where a guarded package's kernel folders may go, in numba's order of preference:
    ``NUMBA_CACHE_DIR``, the package's own ``__pycache__``, numba's user-wide cache."""
    from numba.core import config

    bases = [Path(config.CACHE_DIR)] if config.CACHE_DIR else []
    return bases + [snapshot.root / "__pycache__", _user_wide_folder()]


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def prune_other_keys(base: Path, keep: str, keep_others: int = KEEP_OTHER_KEYS,
                     in_use_s: float = IN_USE_S) -> list[Path]:
    """Remove the kernel folders of other source digests under ``base`` but the newest
    ``keep_others`` and those a process began to use less than ``in_use_s`` seconds ago (each
    process touches its key's folder when it first uses it: a process of other sources may still
    be compiling into it, and numba fails on a folder removed between writing a kernel and
    renaming it into place); the folders removed."""
    try:
        others = [p for p in base.iterdir() if p.name.startswith(KEY_PREFIX) and p.name != keep and p.is_dir()]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        now = time.time()
        others = others[:keep_others] + [p for p in others[keep_others:] if now - p.stat().st_mtime >= in_use_s]
    except OSError:
        return []
    removed = []
    for folder in others[keep_others:]:
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _remove_unkeyed_kernels(snapshot: SourceSnapshot) -> None:
    """Kernel files that simkit versions before source keys left in ``__pycache__``."""
    for folder in {snapshot.root / Path(name).parent / "__pycache__" for name in snapshot.files}:
        try:
            for path in folder.iterdir():
                if path.suffix in KERNEL_CACHE_SUFFIXES and path.is_file():
                    path.unlink(missing_ok=True)
        except OSError:
            continue


def _touch(folder: Path) -> None:
    try:
        os.utime(folder)
    except OSError:
        pass


def kernel_folder(snapshot: SourceSnapshot, relative_file: str, base: Path) -> Path:
    """The folder of the kernels of the package file ``relative_file`` under ``base``."""
    parent = Path(relative_file).parent.as_posix()
    return base / snapshot.key / (ROOT_FOLDER if parent == "." else parent.replace("/", "."))


_FOLDERS: dict[Path, bool] = {}  # a kernel folder of this process: writable or not (checked once)


def _folder_for(guarded: _Guarded, relative_file: str) -> Path:
    if not guarded.mixed:
        for base in cache_bases(guarded.snapshot):
            folder = kernel_folder(guarded.snapshot, relative_file, base)
            if folder not in _FOLDERS:
                new = not (base / guarded.snapshot.key).exists()
                _FOLDERS[folder] = _writable(folder)
                if _FOLDERS[folder]:
                    _touch(base / guarded.snapshot.key)  # in use: not pruned by another process for a while
                if new and _FOLDERS[folder]:
                    prune_other_keys(base, guarded.snapshot.key)
                    _remove_unkeyed_kernels(guarded.snapshot)
            if _FOLDERS[folder]:
                return folder
    return kernel_folder(guarded.snapshot, relative_file, _private_folder())


_LOCATOR_CLASS: list[type] = []


def _locator_class() -> type:
    """:class:`SourceKeyedCacheLocator`, built on numba's locator base class on first use (so
    that this module imports no numba)."""
    if _LOCATOR_CLASS:
        return _LOCATOR_CLASS[0]
    from numba.core.caching import _CacheLocator

    class SourceKeyedCacheLocator(_CacheLocator):
        """numba cache locator for the kernels of a guarded package (the module docstring):
        the folder is keyed by the process's source digest; the source stamp is the file's
        sha256 as the process read it."""

        def __init__(self, py_func, py_file: str, folder: Path, file_digest: str):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder)
            self._file_digest = file_digest

        def ensure_cache_path(self):
            os.makedirs(self._cache_path, exist_ok=True)  # a pruned folder is made again

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return self._file_digest

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            found = _guarded_for(py_file)
            if found is None:
                return None  # not a guarded package's: numba's own locators
            guarded, name = found
            return cls(py_func, py_file, _folder_for(guarded, name), guarded.snapshot.files[name])

    _LOCATOR_CLASS.append(SourceKeyedCacheLocator)
    return SourceKeyedCacheLocator


def use_source_keyed_cache() -> None:
    """Put :class:`SourceKeyedCacheLocator` first among numba's cache locators (idempotent).
    Kernels of packages not guarded by :func:`guard_package` are cached as numba does."""
    from numba.core import caching

    implementation = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    locator = _locator_class()
    if implementation._locator_classes[:1] != [locator]:
        implementation._locator_classes = [locator] + [c for c in implementation._locator_classes if c is not locator]
