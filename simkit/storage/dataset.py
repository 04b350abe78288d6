"""A simulation dataset on disk: ``manifest.json`` + one zstd Parquet file per batch.

* Every file is written to a temporary name in the same folder and renamed into place, so an
  interrupted run leaves whole batch files only.
* Each batch file carries its identity in its key-value metadata (``simkit.batch``,
  ``simkit.first_deal``, ``simkit.deals``, ``simkit.config``), so a file from another run or a
  truncated / corrupt file is told apart from a good one (:func:`check_batch`).
* :func:`load_dataset` reads only the columns asked for and refuses a folder whose manifest is
  missing, foreign or inconsistent, with a one-line message.
* The manifest records ``session_length`` (deals per session, RULES.md §8 ``next_dealer``; a
  manifest without it is from before sessions and means 1).  Runs in sessions (K > 1) store
  the columns ``session`` and ``deal_in_session``; for K = 1 (whose files have no such
  columns) :func:`load_dataset` derives them when asked: ``session = deal_id``,
  ``deal_in_session = 0``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from simkit.errors import SimkitError

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
KIND = "simkit.simulation"
SESSION_COLUMNS = ("session", "deal_in_session")


class DatasetError(SimkitError):
    """A missing, foreign, mismatched or corrupt dataset."""


def atomic_write(path: Path, writer: Callable[[str], None]) -> None:
    """Write through a temporary file in the same folder, then rename into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        writer(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path: Path, data: dict) -> None:
    def writer(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")

    atomic_write(path, writer)


def config_digest(identity: dict[str, Any]) -> str:
    """Short hash of the fields that define a run's content."""
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def batch_path(directory: Path, batch: int) -> Path:
    return directory / f"batch-{batch:06d}.parquet"


def write_batch(directory: Path, batch: int, table: pa.Table, meta: dict[str, str]) -> Path:
    """Atomically write one batch file with its identity metadata."""
    existing = table.schema.metadata or {}
    merged = dict(existing)
    merged.update({f"simkit.{k}".encode(): str(v).encode() for k, v in meta.items()})
    table = table.replace_schema_metadata(merged)
    path = batch_path(directory, batch)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd", write_page_checksum=True))
    return path


def check_batch(path: Path, expected: dict[str, str]) -> str | None:
    """None if the batch file is whole and belongs to this run, else the reason."""
    try:
        meta = pq.read_metadata(path)
    except Exception as exc:  # noqa: BLE001 - any failure means unreadable
        return f"unreadable ({type(exc).__name__})"
    kv = {k.decode(): v.decode() for k, v in (meta.metadata or {}).items() if k.startswith(b"simkit.")}
    for key, value in expected.items():
        if kv.get(f"simkit.{key}") != str(value):
            return f"{key} is {kv.get(f'simkit.{key}')!r}, expected {value!r}"
    if meta.num_rows != int(expected["deals"]):
        return f"{meta.num_rows} rows, expected {expected['deals']}"
    try:
        pq.read_table(path, page_checksum_verification=True)
    except Exception as exc:  # noqa: BLE001
        return f"corrupt data ({type(exc).__name__})"
    return None


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of a folder, None when there is none; DatasetError when unreadable."""
    path = directory / MANIFEST
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise DatasetError(f"{path}: not a simkit simulation manifest")
    return data


def session_length(manifest: dict[str, Any]) -> int:
    """Deals per session of a run (1 = independent deals, also for manifests from before sessions)."""
    return int(manifest.get("session_length", 1))


def load_dataset(path: str | os.PathLike, columns: Sequence[str] | None = None,
                 batches: int | None = None) -> pd.DataFrame:
    """Read a dataset folder into pandas (only ``columns`` when given), in deal order.

    ``batches`` reads only the first that many batches (a prefix of the run, e.g. while a
    sequential test is still deciding). Refuses folders without a simkit manifest, with missing
    batches or with files that do not belong to the run.
    """
    directory = Path(path)
    if not directory.is_dir():
        raise DatasetError(f"{directory}: no such dataset folder")
    manifest = read_manifest(directory)
    if manifest is None:
        raise DatasetError(f"{directory}: no {MANIFEST} (not a simkit dataset)")
    n_batches = int(manifest["batches"])
    if batches is not None:
        if not 1 <= batches <= n_batches:
            raise DatasetError(f"{directory}: batches must be in 1..{n_batches}, got {batches}")
        n_batches = int(batches)
    missing = [b for b in range(n_batches) if not batch_path(directory, b).exists()]
    if missing:
        raise DatasetError(f"{directory}: {len(missing)} of {n_batches} batches missing (first: {missing[0]}); "
                           "re-run the simulation to complete it")
    wanted = list(columns) if columns is not None else None
    derived: list[str] = []
    if wanted is not None and session_length(manifest) == 1:
        # independent deals store no session columns: derive them from deal_id
        derived = [c for c in wanted if c in SESSION_COLUMNS]
        wanted = [c for c in wanted if c not in SESSION_COLUMNS]
        if derived and "deal_id" not in wanted:
            wanted.append("deal_id")
    tables = []
    for b in range(n_batches):
        file = batch_path(directory, b)
        try:
            meta = pq.read_metadata(file)
            digest = (meta.metadata or {}).get(b"simkit.config", b"").decode()
            if digest != manifest["config_digest"]:
                raise DatasetError(f"{file}: belongs to another run (config {digest or 'none'})")
            tables.append(pq.read_table(file, columns=wanted))
        except DatasetError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise DatasetError(f"{file}: unreadable or corrupt Parquet ({type(exc).__name__}: {exc})") from None
    table = pa.concat_tables(tables)
    frame = table.to_pandas()
    if derived:
        deal_id = frame["deal_id"].to_numpy()
        if "session" in derived:
            frame["session"] = deal_id.astype("int64")
        if "deal_in_session" in derived:
            frame["deal_in_session"] = pd.Series(0, index=frame.index, dtype="int16")
        frame = frame[list(columns)]
    return frame
