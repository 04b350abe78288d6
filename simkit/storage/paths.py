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

import os
from pathlib import Path

from simkit.errors import SimkitError
from simkit.storage.files import remove_stale_temp_files


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


def check_out_dir(path: str | os.PathLike, option: str = "out") -> Path:
    """``path`` as a Path once it is known to be usable as an output folder: not empty, not a
    file, not under a file, and in a folder this process may write to.  Creates nothing.
    ``option``: how errors name the path (a parameter name, or the CLI's flag)."""
    text = os.fspath(path)
    named = _named(option)
    if not text:
        raise SimkitError(f"{option} is empty (give a folder, '.' for the current one)", parameters=named)
    out = Path(text)
    if os.path.lexists(out) and not out.is_dir():
        raise SimkitError(f"{option} {out} is a file, not a folder", parameters=named)
    base = _nearest_existing(out)
    if not base.is_dir():
        raise SimkitError(f"{option} {out}: {base} is a file, not a folder", parameters=named)
    if not os.access(base, os.W_OK | os.X_OK):
        raise SimkitError(f"{option} {out}: cannot write in {base} (no permission or a read-only file system)",
                          parameters=named)
    return out


def check_out_file(path: str | os.PathLike, option: str = "output") -> Path:
    """``path`` as a Path once it is known to be usable as an output file: not empty, not a
    folder, in an existing folder this process may write to.  Creates nothing.  ``option``: as
    :func:`check_out_dir`."""
    text = os.fspath(path)
    named = _named(option)
    if not text:
        raise SimkitError(f"{option} is empty", parameters=named)
    out = Path(text)
    if out.is_dir():
        raise SimkitError(f"{option} {out} is a folder, not a file", parameters=named)
    parent = out.parent
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
