"""Output paths checked before anything is computed or written (one-line errors, no folder
created on the way).

>>> import tempfile, os
>>> folder = tempfile.mkdtemp()
>>> check_out_dir(os.path.join(folder, "new", "deeper")).name
'deeper'
>>> check_out_dir("")
Traceback (most recent call last):
...
simkit.errors.SimkitError: out is empty (give a folder, '.' for the current one)
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path

from simkit.errors import SimkitError
from simkit.storage.dataset import LEGACY_MANIFEST, MANIFEST
from simkit.storage.files import remove_stale_temp_files
from simkit.storage.hands import HANDS_KIND


def _nearest_existing(path: Path) -> Path:
    base = path
    while not os.path.lexists(base):
        parent = base.parent
        if parent == base:
            break
        base = parent
    return base


def _named(option: str) -> tuple[str, ...]:
    """The parameter an error names (:attr:`SimkitError.parameters`); none for a flag."""
    return (option,) if option.isidentifier() else ()


def _broken_link(path: Path) -> str | None:
    """What is wrong with ``path`` when it is a symbolic link that leads to no file: a loop,
    or a link to a missing path; None otherwise (no link, or a link to something that exists)."""
    if not os.path.islink(path):
        return None
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if exc.errno == errno.ENOENT:
            return f"is a symbolic link to the missing {os.readlink(path)}"
        return f"is a symbolic link that cannot be followed ({exc.strerror or exc})"
    return None


def check_out_dir(path: str | os.PathLike, option: str = "out") -> Path:
    """``path`` as a Path once it is known to be usable as an output folder: not empty, not a
    file, not under a file, and in a folder this process may write to.  Creates nothing.
    ``option``: how errors name the path (a parameter name, or the CLI's flag)."""
    text = os.fspath(path)
    named = _named(option)
    if not text:
        raise SimkitError(f"{option} is empty (give a folder, '.' for the current one)", parameters=named)
    out = Path(text)
    broken = _broken_link(out)
    if broken:
        raise SimkitError(f"{option} {out} {broken}, not a folder", parameters=named)
    if os.path.lexists(out) and not out.is_dir():
        raise SimkitError(f"{option} {out} is a file, not a folder", parameters=named)
    base = _nearest_existing(out)
    if not base.is_dir():
        raise SimkitError(f"{option} {out}: {base} is a file, not a folder", parameters=named)
    if not os.access(base, os.W_OK | os.X_OK):
        raise SimkitError(f"{option} {out}: cannot write in {base} (no permission or a read-only file system)",
                          parameters=named)
    return out


def parquet_readers_skip(root: str | os.PathLike, target: str | os.PathLike) -> bool:
    """Whether Parquet readers of the folder ``root`` (pyarrow, pandas, polars, duckdb) skip
    ``target``, a path at or under it: they read every folder below, except those whose names
    start with ``_`` or ``.``.

    >>> parquet_readers_skip("d", "d/_report/x"), parquet_readers_skip("d", "d/plots"), parquet_readers_skip("d", "d")
    (True, False, False)
    """
    below = Path(os.path.abspath(target)).relative_to(Path(os.path.abspath(root))).parts
    return any(part.startswith(("_", ".")) for part in below)


def holds_dataset(folder: Path) -> bool:
    """Whether ``folder`` holds a simkit dataset: the manifest of ``simkit simulate`` (or of an
    ``equity`` run's deals), or the older manifest name next to Parquet files; not a folder of
    dealt hands (``simkit deals``: its manifest's kind says so, and it holds its figures and
    report itself)."""
    if (folder / MANIFEST).is_file():
        return True
    legacy = folder / LEGACY_MANIFEST
    if not legacy.is_file() or not any(folder.glob("*.parquet")):
        return False
    try:
        kind = json.loads(legacy.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):  # unreadable: it may be a dataset's
        return True
    return kind != HANDS_KIND


def check_outside_datasets(path: str | os.PathLike, option: str = "out", itself: bool = True) -> Path:
    """``path`` unless it is a simkit dataset's folder, or a folder under one that its Parquet
    readers read (:func:`parquet_readers_skip`; links resolved): a one-line error, so that a
    study (a comparison, a tournament, a tuning, a training, an experiment, a review) never
    writes its JSON, Markdown and figures among a dataset's Parquet files, where
    ``pd.read_parquet(DATASET)`` would fail on them.  With ``itself`` False only the folders
    above ``path`` are checked: a dataset's own writer (``simulate``) may resume it, but a
    dataset inside another would add its rows to the outer one's readers.  Creates nothing.

    >>> import tempfile
    >>> data = Path(tempfile.mkdtemp()) / "data"; data.mkdir()
    >>> _ = (data / "_manifest.json").write_text("{}")
    >>> check_outside_datasets(data.parent / "cmp").name, check_outside_datasets(data / "_mine").name
    ('cmp', '_mine')
    >>> check_outside_datasets(data / "cmp")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simkit.errors.SimkitError: out .../data/cmp is inside the simkit dataset .../data: ...
    """
    out = Path(os.fspath(path))
    target = Path(os.path.realpath(out))
    for folder in (target, *target.parents) if itself else target.parents:
        if folder.is_dir() and holds_dataset(folder) and not parquet_readers_skip(folder, target):
            where = "is the folder of a simkit dataset" if folder == target else f"is inside the simkit dataset {folder}"
            raise SimkitError(f"{option} {out} {where}: Parquet readers of the dataset would read this command's files; "
                              f"choose a folder outside it, or under it with a name starting with _",
                              parameters=_named(option))
    return out


def check_new_or_own(path: str | os.PathLike, own: str, what: str, option: str = "out",
                     ignored: tuple[str, ...] = (".",), also_own: re.Pattern | None = None) -> Path:
    """``path`` unless it is a folder that holds files but not ``own`` (the name of the study's
    identity file or folder, which marks a folder it wrote): a one-line error, so that a study
    writes only into a new or empty folder, or one it wrote before (to resume or redo it), and
    never over a user's files (a ``report.md`` of theirs, say).  Names starting with one of
    ``ignored`` (default ``.``: locks, temporary files, a desktop's metadata) do not count, nor
    names that ``also_own`` matches in full (a dataset's batch files, checked when adopted).
    Creates nothing.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_new_or_own(folder / "new", "run.json", "a run").name
    'new'
    >>> _ = (folder / "report.md").write_text("mine")
    >>> check_new_or_own(folder, "run.json", "a run")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simkit.errors.SimkitError: out ... holds report.md and no run.json: a run writes only into a new or empty folder or one it wrote; choose another folder
    """
    out = Path(os.fspath(path))
    if not out.is_dir() or os.path.lexists(out / own):
        return out
    others = sorted(p.name for p in out.iterdir()
                    if not p.name.startswith(ignored) and not (also_own is not None and also_own.fullmatch(p.name)))
    if others:
        more = f" (and {len(others) - 1} more)" if len(others) > 1 else ""
        raise SimkitError(f"{option} {out} holds {others[0]}{more} and no {own}: {what} writes only into a new or "
                          f"empty folder or one it wrote; choose another folder", parameters=_named(option))
    return out


def check_out_file(path: str | os.PathLike, option: str = "output") -> Path:
    """``path`` as a Path once it is known to be usable as an output file: not empty, not a
    folder, in an existing folder this process may write to (the folder of the file a symbolic
    link points to), or a device, FIFO or socket it may write to (``/dev/stdout``, which
    :func:`simkit.storage.files.atomic_write` writes straight into).  Creates nothing.  ``option``: as
    :func:`check_out_dir`."""
    text = os.fspath(path)
    named = _named(option)
    if not text:
        raise SimkitError(f"{option} is empty", parameters=named)
    out = Path(text)
    if out.is_dir():
        raise SimkitError(f"{option} {out} is a folder, not a file", parameters=named)
    broken = _broken_link(out)
    if broken and not broken.startswith("is a symbolic link to the missing"):  # a missing target is created
        raise SimkitError(f"{option} {out} {broken}", parameters=named)
    if out.exists() and not out.is_file():  # a device, FIFO or socket (/dev/stdout): written straight into
        if not os.access(out, os.W_OK):
            raise SimkitError(f"{option} {out}: cannot write to it (no permission)", parameters=named)
        return out
    parent = Path(os.path.realpath(out)).parent if out.is_symlink() else out.parent
    if not parent.is_dir():
        what = "is a file" if os.path.lexists(parent) else "does not exist"
        raise SimkitError(f"{option} {out}: the folder {parent} {what}", parameters=named)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SimkitError(f"{option} {out}: cannot write in {parent} (no permission or a read-only file system)",
                          parameters=named)
    return out


def make_out_dir(path: Path) -> Path:
    """Create an output folder (and its parents), a one-line error when that fails; in a
    folder that exists, remove the temporary files of writers that were killed before they
    renamed them (:func:`simkit.storage.files.remove_stale_temp_files`)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SimkitError(f"{path}: cannot create the folder ({exc.strerror or exc})") from None
    remove_stale_temp_files(path)
    return path
