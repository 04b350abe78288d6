"""Atomic file writers: every file is written to a temporary name in its folder and renamed
into place, so an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


TMP_TAG = "simkit"


def temp_path(path: Path) -> Path:
    """The temporary name ``path`` is written through: ``.NAME.simkit-PID-RANDOM.tmp`` in its
    folder.  The writer's pid and a random part make it this writer's alone, so a writer that
    cleans up removes only its own leftovers (never another writer's file or a user's
    ``.*.tmp``)."""
    return path.parent / f".{path.name}.{TMP_TAG}-{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"


def atomic_write(path: Path, writer: Callable[[str], None]) -> None:
    """Write through a temporary file in the same folder, flush it to disk, then rename into
    place.  The file gets the mode of any new file (0666 less the umask), not mkstemp's 0600."""
    path = Path(path)
    tmp = temp_path(path)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        writer(str(tmp))
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def write_json(path: Path, data: dict) -> None:
    """Indented UTF-8 JSON and a final newline."""

    def writer(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")

    atomic_write(path, writer)


def stored_identity(path: Path, identity: dict) -> dict | None:
    """The identity already stored in the JSON file ``path`` (the caller compares it with
    ``identity`` and words the refusal), or None after writing ``identity`` there when there
    is none yet.  An unreadable file is a one-line ``ValueError`` naming it."""
    if not path.exists():
        write_json(path, identity)
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable ({exc})") from None


def write_text(path: Path, text: str) -> None:
    """UTF-8 text."""

    def writer(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    atomic_write(path, writer)


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """A DataFrame as zstd Parquet (no index)."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def write_figure(fig, directory: Path, stem: str) -> None:
    """A matplotlib figure as ``STEM.png`` and ``STEM.svg`` (120 dpi) in ``directory``."""
    for ext in ("png", "svg"):
        atomic_write(directory / f"{stem}.{ext}", lambda tmp, ext=ext: fig.savefig(tmp, format=ext, dpi=120))
