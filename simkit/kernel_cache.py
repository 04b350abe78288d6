"""numba's on-disk cache of simkit's kernels, kept in step with simkit's source.

numba keys a cached kernel on the time stamp and size of the kernel's *own* file only. A
kernel whose file did not change, but which calls or inlines code from a file that did, is
loaded as it was built: with the old code. After ``git pull`` into an editable install (or any
edit of an engine file), the play kernels of ``runner/play.py`` would go on playing the old
engine, silently (measured: a payoff rule changed in ``engine/kernel.py`` left every cached
batch's payoffs as before until the cache was removed).

So when simkit is imported, before any kernel is loaded, :func:`clear_stale_kernel_caches`
compares a digest of all simkit's source files (:func:`source_digest`) with the one recorded
in each of its cache folders (:data:`STAMP_NAME`). Where the two differ, or none is recorded,
it removes that folder's cached kernels (``*.nbi``, ``*.nbc``; nothing else) and records the
digest, and numba builds the kernels again on their first call. The folders are numba's own
(:func:`kernel_cache_folder`): ``NUMBA_CACHE_DIR``'s, or the source folder's ``__pycache__``,
or numba's folder in the user's cache. Nothing here imports numba (``import simkit`` stays
light) unless the source folder cannot hold a cache. Any file system error leaves a folder
as it is.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STAMP_NAME = "simkit-sources.sha256"  # in each kernel cache folder: the digest its kernels were built from
KERNEL_CACHE_SUFFIXES = (".nbi", ".nbc")  # numba's cache index and data files
PACKAGE_DIR = Path(__file__).resolve().parent


def _source_files(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.relative_to(package).parts)


def source_digest(package: str | os.PathLike = PACKAGE_DIR) -> str:
    """sha256 of every ``.py`` file under ``package``: each one's path relative to it and
    its bytes, in path order."""
    root = Path(package)
    digest = hashlib.sha256()
    for path in _source_files(root):
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        digest.update(len(name).to_bytes(8, "little") + name + len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def numba_cache_subpath(directory: str | os.PathLike) -> str:
    """The folder name numba gives, under ``NUMBA_CACHE_DIR`` or its user-wide cache, to the
    kernels of the source files in ``directory`` (numba's ``get_suitable_cache_subpath``:
    the folder's name and the SHA-1 of its absolute path)."""
    path = os.path.abspath(directory)
    return "_".join([os.path.split(path)[-1], hashlib.sha1(path.encode()).hexdigest()])


def kernel_cache_folder(directory: str | os.PathLike) -> Path:
    """Where numba caches the kernels of the source files in ``directory``, in numba's order:
    under ``NUMBA_CACHE_DIR`` when it is set; else the folder's own ``__pycache__`` when it
    can be written; else under numba's user-wide cache folder."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user) / numba_cache_subpath(directory)
    in_tree = Path(directory) / "__pycache__"
    try:
        in_tree.mkdir(exist_ok=True)
    except OSError:
        pass
    if in_tree.is_dir() and os.access(in_tree, os.W_OK | os.X_OK):
        return in_tree
    from numba.misc.appdirs import AppDirs  # only for a read-only install: this imports numba

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / numba_cache_subpath(directory)


def clear_stale_kernel_caches(package: str | os.PathLike = PACKAGE_DIR) -> list[Path]:
    """Remove the cached kernels built from other sources than ``package``'s current ones
    (see the module's docstring); the cache folders cleared.  A folder whose recorded digest
    matches is left alone, so this costs one digest of the sources per process."""
    root = Path(package)
    digest = source_digest(root)
    cleared = []
    for directory in sorted({p.parent for p in _source_files(root)}):
        folder = kernel_cache_folder(directory)
        stamp = folder / STAMP_NAME
        try:
            if stamp.read_text(encoding="ascii").strip() == digest:
                continue
        except (OSError, UnicodeDecodeError):
            pass
        try:
            if folder.is_dir():
                for path in folder.iterdir():
                    if path.suffix in KERNEL_CACHE_SUFFIXES:
                        path.unlink(missing_ok=True)
            folder.mkdir(parents=True, exist_ok=True)
            temporary = folder / f".{STAMP_NAME}.{os.getpid()}.tmp"
            temporary.write_text(digest + "\n", encoding="ascii")
            os.replace(temporary, stamp)
        except OSError:
            continue
        cleared.append(folder)
    return cleared
