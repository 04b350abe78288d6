"""A simulation dataset on disk: ``_manifest.json`` + one zstd Parquet file per batch.

* The manifest's name starts with ``_`` (and the lock and temporary files with ``.``), so
  pyarrow, pandas (``pd.read_parquet(folder)``), polars and duckdb read the folder's batch
  files directly.  Datasets written before (``manifest.json``) are still read and resumed
  in place: :func:`manifest_path` finds whichever name a folder has.
* Schema version 2 (:data:`SCHEMA_VERSION`): the winner's ``hu``, ``units``, ``lou`` and
  ``steps`` are null on 穿牌 (pandas ``Int16`` / ``Int8`` through the files' pandas
  metadata, :func:`pandas_metadata`).  Version 1 files stored -1 / 0 there;
  :func:`load_dataset` turns those into nulls, so both read the same.
* ``seating`` (manifest; absent means ``fixed``): how policies sit at seats,
  :data:`SEATING_MODES`.  With ``all`` each deal is played under the 6 seatings: 6 rows per
  deal, in deal order then seating 0..5 (``seating`` column), and the batch checks expect
  ``deal_id`` repeated 6 times.

* Every file is written to a temporary name in the same folder and renamed into place, so an
  interrupted run leaves whole batch files only.  One writer per folder (:mod:`simkit.storage.lock`).
* Each batch file carries its identity in its key-value metadata (``simkit.batch``,
  ``simkit.first_deal``, ``simkit.deals``, ``simkit.config``) and page checksums; the manifest
  records each batch file's size and sha256 (``files``) and a sha256 of its own content
  (``manifest_sha256``).  :func:`read_manifest` and :func:`read_batch` verify all of it, so a
  file from another run, a copied, swapped, truncated or bit-rotten file, or an edited manifest
  is a one-line :class:`DatasetError` naming the file, never data (docs/datasets.md).
* Manifests written before these records (no ``files``, no ``manifest_sha256``) are still read:
  their ``config_digest`` and ``batches`` are checked against their other fields, and batch
  files by identity, page checksums and deal ids; ``simkit simulate`` adds the records on resume.
* :func:`load_dataset` reads only the columns asked for (and ``deal_id``, to check it).
* ``policy_0..2`` hold each policy's plain label (``expert``; parameters by name only where they
  differ from the defaults), which the manifest records as ``policy_labels``; ``policies`` keeps
  the full parameter vectors (the identity) and ``policy_params`` the same by name.  Datasets
  written before (no ``policy_labels``) hold the positional texts of ``policies`` in those
  columns and keep them when resumed (:func:`column_labels`): a folder never mixes the two.
* ``policy_sources`` (manifest, runs with user policies or ``learned`` models only): each user
  policy's source digest (:func:`simkit.policies.registry.policy_source_digest`) and each
  ``learned`` policy's model file digest (``model sha256:…``), part of the run's identity, so
  that resuming after an edit of the policy or the model is refused.
* The manifest records ``session_length`` (deals per session, docs/rules.md §8 ``next_dealer``; a
  manifest without it is from before sessions and means 1).  Runs in sessions (K > 1) store
  the columns ``session`` and ``deal_in_session``; for K = 1 (whose files have no such
  columns) :func:`load_dataset` derives them when asked: ``session = deal_id``,
  ``deal_in_session = 0``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from simkit.errors import SimkitError
# a dataset run's identity and its limits, declared once with the specs (a module without imports)
from simkit.specs.dataset import (  # noqa: F401 - the format's names, read from here too
    EQUITY,
    IDENTITY_KEYS,
    POLICY_SOURCES,
    READABLE_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
    SEATING_MODES,
    dataset_identity,
)
from simkit.storage.files import FileError, json_digest, read_regular, regular_file_problem, write_json, write_parquet

MANIFEST = "_manifest.json"  # leading "_": Parquet readers of the folder skip it
LEGACY_MANIFEST = "manifest.json"  # the name before schema version 2, still read and resumed in place
WINNER_COLUMNS = {"hu": "Int16", "units": "Int16", "lou": "Int8", "steps": "Int8"}  # null on 穿牌
SEATING_COLUMN = "seating"
ROWS_PER_DEAL = {"fixed": 1, "rotate": 1, "all": 6}
KIND = "simkit.simulation"
SESSION_COLUMNS = ("session", "deal_in_session")
FILES = "files"  # the manifest's table of batch files: name -> record (batch, first_deal, deals, bytes, sha256)
MANIFEST_DIGEST = "manifest_sha256"  # sha256 of the manifest's own content (all other fields)
# the parameters of each of ``policies`` by name ([{name: value}, ...], the values the run plays
# with); not part of the identity (``policies`` records them by position), absent in manifests
# written before it
POLICY_PARAMS = "policy_params"
# the values of the ``policy_0..2`` columns, one per policy of ``policies``: each policy's plain
# label (``expert``; only the parameters that differ from its defaults, by name); not part of the
# identity; absent in manifests written before plain labels, whose columns hold ``policies``' texts
POLICY_LABELS = "policy_labels"
REPAIR = "re-run simkit simulate with the run's arguments to recompute it"
REBUILD = "re-run simkit simulate with the run's arguments to rebuild it from the batch files"
BATCH_NAME = re.compile(r"batch-(\d{6})\.parquet")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class DatasetError(SimkitError):
    """A missing, foreign, mismatched or corrupt dataset."""


class BatchError(DatasetError):
    """A batch file that is not this run's or is damaged: ``path`` and the ``reason`` alone."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def column_labels(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The values a dataset's ``policy_0..2`` columns hold for its policies (in the order of
    ``policies``): the manifest's :data:`POLICY_LABELS`, or for a dataset written before them
    its positional ``policies`` texts."""
    return tuple(manifest.get(POLICY_LABELS) or manifest["policies"])


def config_digest(identity: dict[str, Any]) -> str:
    """Short hash of the fields that define a run's content."""
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def batch_path(directory: Path, batch: int) -> Path:
    return directory / f"batch-{batch:06d}.parquet"


def manifest_digest(manifest: dict[str, Any]) -> str:
    """sha256 of a manifest's content: every field but ``manifest_sha256``, as canonical JSON."""
    return json_digest(manifest, MANIFEST_DIGEST)


def manifest_identity(manifest: dict[str, Any]) -> dict[str, Any]:
    """The identity fields a manifest records (what its ``config_digest`` was computed from):
    read as the specs write them (:func:`simkit.specs.dataset.dataset_identity`)."""
    return dataset_identity(manifest)


def seating(manifest: dict[str, Any]) -> str:
    """How a run seats its policies (:data:`SEATING_MODES`); ``fixed`` for manifests without it."""
    return str(manifest.get("seating", "fixed"))


def rows_per_deal(manifest: dict[str, Any]) -> int:
    """Rows per deal of a run: 6 with seating ``all`` (one per seating), else 1."""
    return ROWS_PER_DEAL[seating(manifest)]


def manifest_path(directory: str | os.PathLike) -> Path:
    """Where a folder's manifest is: ``_manifest.json``, or ``manifest.json`` in a dataset
    written before schema version 2 (read and resumed under that name), or, when the folder
    has neither, ``_manifest.json`` (where a new one goes)."""
    directory = Path(directory)
    legacy = directory / LEGACY_MANIFEST
    if not os.path.lexists(directory / MANIFEST) and os.path.lexists(legacy):
        return legacy
    return directory / MANIFEST


def pandas_metadata(columns: Sequence[str]) -> bytes:
    """The ``pandas`` schema metadata of a batch file: the nullable pandas dtype of each of
    ``columns`` among :data:`WINNER_COLUMNS`, so ``pd.read_parquet`` (and
    :func:`load_dataset`) gives ``Int16`` / ``Int8`` with ``<NA>`` instead of float64 with
    NaN.  Deterministic (no library versions): every batch of a run carries the same bytes."""
    meta = {"index_columns": [], "column_indexes": [],
            "columns": [{"name": c, "field_name": c, "pandas_type": WINNER_COLUMNS[c].lower(),
                         "numpy_type": WINNER_COLUMNS[c], "metadata": None} for c in columns if c in WINNER_COLUMNS]}
    return json.dumps(meta, sort_keys=True, separators=(",", ":")).encode("utf-8")


def batch_deals(manifest: dict[str, Any], batch: int) -> tuple[int, int]:
    """(first deal, number of deals) of a batch of the run a manifest describes."""
    first = batch * manifest["batch_size"]
    return first, min(manifest["deals"], first + manifest["batch_size"]) - first


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def manifest_problem(manifest: dict[str, Any]) -> str | None:
    """What is wrong with a manifest read from disk, None when it is consistent.

    Checked: its digest over its own content (manifests from before integrity records have
    none), its ``config_digest`` against the identity fields it records, ``batches`` against
    ``deals`` and ``batch_size``, and every record of ``files`` against its batch's place.
    """
    stored = manifest.get(MANIFEST_DIGEST)
    if stored is not None and stored != manifest_digest(manifest):
        return f"its content does not match its {MANIFEST_DIGEST} (edited or damaged)"
    for key in IDENTITY_KEYS + ("config_digest", "batches"):
        if key not in manifest:
            return f"it has no {key!r}"
    for key in ("schema_version", "seed", "deals", "batch_size", "batches", "session_length"):
        if key in manifest and not _is_int(manifest[key]):
            return f"its {key} is {manifest[key]!r}, not an integer"
    if manifest["schema_version"] not in READABLE_SCHEMA_VERSIONS:
        return (f"its schema_version is {manifest['schema_version']}; this simkit reads versions "
                f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))} (written by a newer simkit?)")
    if manifest.get("seating", "fixed") not in SEATING_MODES or (
            "seating" in manifest and manifest["schema_version"] < 2):
        return f"its seating {manifest.get('seating')!r} is not one of {', '.join(SEATING_MODES)}"
    k = manifest.get("session_length", 1)
    if manifest["seed"] < 0 or manifest["deals"] < 1 or manifest["batch_size"] < 1 or k < 1:
        return "its seed, deals, batch_size or session_length is out of range"
    policies = manifest["policies"]
    if not isinstance(manifest["rules"], dict) or not (
            isinstance(policies, list) and len(policies) == 3 and all(isinstance(p, str) for p in policies)):
        return "its rules or policies are malformed"
    sources = manifest.get(POLICY_SOURCES, {})
    if not (isinstance(sources, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items())):
        return f"its {POLICY_SOURCES} is malformed"
    named = manifest.get(POLICY_PARAMS, [{}, {}, {}])
    if not (isinstance(named, list) and len(named) == 3 and all(
            isinstance(d, dict) and all(isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
                                        for k, v in d.items()) for d in named)):
        return f"its {POLICY_PARAMS} is malformed"
    labels = manifest.get(POLICY_LABELS, policies)
    if not (isinstance(labels, list) and len(labels) == 3 and all(isinstance(p, str) and p for p in labels)):
        return f"its {POLICY_LABELS} is malformed"
    if config_digest(manifest_identity(manifest)) != manifest["config_digest"]:
        return (f"its config_digest {manifest['config_digest']!r} does not match the seed, deals, batch size, "
                "rules, policies and seating it records (edited or damaged)")
    expected = -(-manifest["deals"] // manifest["batch_size"])
    if manifest["batches"] != expected:
        return (f"its batches is {manifest['batches']!r}, but {manifest['deals']} deals in batches of "
                f"{manifest['batch_size']} make {expected} (edited or damaged)")
    if manifest["batch_size"] % k:
        return f"its batch_size {manifest['batch_size']} is not a multiple of its session_length {k}"
    files = manifest.get(FILES)
    if files is not None:
        if not isinstance(files, dict):
            return f"its {FILES} is not a table of batch files"
        for name, record in files.items():
            match = BATCH_NAME.fullmatch(name)
            if match is None or int(match.group(1)) >= manifest["batches"]:
                return f"its {FILES} lists {name!r}, which is no batch file of this run"
            batch = int(match.group(1))
            first, deals = batch_deals(manifest, batch)
            if not (isinstance(record, dict) and record.get("batch") == batch and record.get("first_deal") == first
                    and record.get("deals") == deals and _is_int(record.get("bytes"))
                    and isinstance(record.get("sha256"), str) and _SHA256.fullmatch(record["sha256"])):
                return f"its record of {name} is malformed or does not fit batch {batch}"
    return None


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The verified manifest of a folder (``_manifest.json``, or ``manifest.json`` of a dataset
    written before schema version 2), None when there is none; DatasetError (one line naming
    the file) when it is unreadable, foreign or inconsistent, or when the folder holds both."""
    path = manifest_path(directory)
    if not os.path.lexists(path):
        return None
    if path.name == MANIFEST and os.path.lexists(Path(directory) / LEGACY_MANIFEST):
        raise DatasetError(f"{path}: the folder also holds {LEGACY_MANIFEST} (two manifests: which run is it?); "
                           "remove the one that does not belong")
    try:
        raw = read_regular(path)  # a FIFO or other non-regular file: refused before it is opened for reading
    except FileError as exc:
        raise DatasetError(f"{path}: {exc.reason}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: unreadable manifest ({' '.join(str(exc).split())}; truncated or damaged); "
                           f"restore it, or delete it and {REBUILD}") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise DatasetError(f"{path}: not a simkit simulation manifest")
    problem = manifest_problem(data)
    if problem is not None:
        raise DatasetError(f"{path}: {problem}; restore it, or delete it and {REBUILD}")
    return data


def write_manifest(directory: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write a manifest atomically with its batch records sorted and its own digest last (to
    :func:`manifest_path`: a dataset written before keeps its ``manifest.json``)."""
    manifest = {k: v for k, v in manifest.items() if k != MANIFEST_DIGEST}
    if FILES in manifest:
        manifest[FILES] = dict(sorted(manifest.pop(FILES).items()))
    manifest[MANIFEST_DIGEST] = manifest_digest(manifest)
    write_json(manifest_path(directory), manifest)
    return manifest


def write_batch(directory: Path, batch: int, table: pa.Table, meta: dict[str, Any]) -> dict[str, Any]:
    """Atomically write one batch file with its identity metadata; returns its manifest record
    (``batch``, ``first_deal``, ``deals``, ``bytes``, ``sha256`` of the bytes written)."""
    existing = table.schema.metadata or {}
    merged = dict(existing)
    merged.update({f"simkit.{k}".encode(): str(v).encode() for k, v in meta.items()})
    table = table.replace_schema_metadata(merged)
    record = write_parquet(table, batch_path(directory, batch))  # simkit's one Parquet writer
    return {"batch": int(meta["batch"]), "first_deal": int(meta["first_deal"]), "deals": int(meta["deals"]), **record}


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def verify_batches(directory: Path, manifest: dict[str, Any], n_batches: int,
                   batch_range: Callable[[int], tuple[int, int]], config: str,
                   per_deal: int = 1) -> tuple[dict[str, Any], list[int], list[str]]:
    """Verify every batch file already in a run's ``directory`` before the run resumes: a file
    whose sha256 ``manifest`` records is checked against it, any other is decoded whole
    (:func:`read_batch`, deals ``batch_range(b)``, the run's ``config`` digest).  A missing batch
    is to compute; a broken one is removed, to compute again, and said in ``problems``; a file
    that is not a regular file where a batch belongs is an error.  Returns the manifest (written
    again when its records changed), the batches to compute and the problems.  The one resume
    check of ``simulate`` and ``equity``."""
    records = dict(manifest.get(FILES) or {})
    todo: list[int] = []
    problems: list[str] = []
    for b in range(n_batches):
        path = batch_path(directory, b)
        if not os.path.lexists(path):
            records.pop(path.name, None)
            todo.append(b)
            continue
        problem = regular_file_problem(path)
        if problem is not None:
            raise DatasetError(f"{path}: {problem} where a batch file belongs; move it away and run again")
        first, stop = batch_range(b)
        record = records.get(path.name)
        try:
            # a file whose sha256 is recorded is checked against it; any other file is decoded whole
            _, records[path.name] = read_batch(path, BatchIdentity(b, first, stop - first, config, per_deal), record,
                                               decode=record is None)
        except BatchError as exc:
            problems.append(f"{path.name}: {exc.reason}; recomputing it")
            path.unlink()
            records.pop(path.name, None)
            todo.append(b)
    current = {k: v for k, v in manifest.items() if k != MANIFEST_DIGEST}
    updated = {**current, FILES: records}
    if updated != current or MANIFEST_DIGEST not in manifest:
        manifest = write_manifest(directory, updated)
    return manifest, todo, problems


class BatchIdentity(NamedTuple):
    """What a batch file must say it is (:func:`read_batch` checks it): batch index ``batch`` of
    the run whose config digest is ``config``, holding deals ``first`` .. ``first + deals - 1``
    with ``per_deal`` rows each (:func:`rows_per_deal`)."""

    batch: int
    first: int
    deals: int
    config: str
    per_deal: int = 1


def read_batch(path: Path, identity: BatchIdentity, record: dict[str, Any] | None = None,
               columns: Sequence[str] | None = None, decode: bool = True) -> tuple[pa.Table | None, dict[str, Any]]:
    """Read one batch file and verify it; returns (its table, or None without ``decode``; its record).

    Verified: the file's sha256 and size against ``record`` (when the manifest has one), its
    identity metadata (``identity``: run config, batch index, first deal, deal count) and row count
    (``deals * per_deal``: ``per_deal`` rows per deal, :func:`rows_per_deal`), and, when
    decoding, every page checksum of the columns read and the deal ids (exactly
    ``first .. first + deals - 1``, each ``per_deal`` times in a row, with ``seating`` 0 ..
    per_deal - 1 when ``per_deal`` > 1). Raises :class:`BatchError` naming the file.
    """
    batch, first, deals, config, per_deal = identity
    try:
        data = read_regular(path)  # a FIFO, folder or device: refused before it is opened for reading
    except FileError as exc:
        raise BatchError(path, exc.reason.replace("a regular file", "a batch file")) from None
    digest = hashlib.sha256(data).hexdigest()
    if record is not None and (record.get("bytes"), record.get("sha256")) != (len(data), digest):
        raise BatchError(path, f"its content differs from the sha256 recorded in {manifest_path(path.parent).name} "
                               "(damaged or replaced)")
    actual = {"batch": batch, "first_deal": first, "deals": deals, "bytes": len(data), "sha256": digest}
    buffer = pa.py_buffer(data)
    try:
        meta = pq.read_metadata(pa.BufferReader(buffer))
    except Exception as exc:  # noqa: BLE001 - any failure means unreadable
        raise BatchError(path, f"unreadable Parquet ({_one_line(exc)})") from None
    kv = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
          for k, v in (meta.metadata or {}).items() if k.startswith(b"simkit.")}
    for key, value in (("config", config), ("batch", batch), ("first_deal", first), ("deals", deals)):
        found = kv.get(f"simkit.{key}")
        if found != str(value):
            other = " (it belongs to another run)" if key == "config" else ""
            raise BatchError(path, f"its {key} is {found!r}, expected {str(value)!r}{other}")
    if meta.num_rows != deals * per_deal:
        raise BatchError(path, f"it holds {meta.num_rows} rows, expected {deals * per_deal}")
    if not decode:
        return None, actual
    checked = ["deal_id"] + ([SEATING_COLUMN] if per_deal > 1 else [])
    wanted = None if columns is None else list(dict.fromkeys([*columns, *checked]))
    try:
        table = pq.read_table(pa.BufferReader(buffer), columns=wanted, page_checksum_verification=True)
        ids = table.column("deal_id").to_numpy()
        seats = table.column(SEATING_COLUMN).to_numpy() if per_deal > 1 else None
    except Exception as exc:  # noqa: BLE001
        raise BatchError(path, f"corrupt data ({_one_line(exc)})") from None
    expected = np.repeat(np.arange(first, first + deals, dtype=ids.dtype), per_deal)
    if len(ids) != len(expected) or not np.array_equal(ids, expected):
        times = f", each {per_deal} times" if per_deal > 1 else ""
        raise BatchError(path, f"its deal ids are not {first}..{first + deals - 1}{times} (duplicated or missing deals)")
    if seats is not None and not np.array_equal(seats, np.tile(np.arange(per_deal, dtype=seats.dtype), deals)):
        raise BatchError(path, f"its seatings are not 0..{per_deal - 1} for every deal (duplicated or missing rows)")
    if columns is not None:
        table = table.drop_columns([c for c in checked if c not in columns])
    return table, actual


def batches_verified(directory: Path, manifest: dict[str, Any], wanted: int,
                     batch_range: Callable[[int], tuple[int, int]], config: str) -> bool:
    """Whether batches 0 .. wanted - 1 of ``directory`` are all recorded in ``manifest`` and
    each reads back verified (:func:`read_batch`, deals ``batch_range(b)`` = (first, stop)):
    a finished run, with nothing to write.  A batch that is recorded but damaged raises
    :class:`DatasetError`."""
    files = manifest.get(FILES) or {}
    for b in range(wanted):
        path = batch_path(directory, b)
        if path.name not in files:
            return False
        first, stop = batch_range(b)
        read_batch(path, BatchIdentity(b, first, stop - first, config, rows_per_deal(manifest)), files[path.name],
                   decode=False)
    return True


def _schema_key(table: pa.Table) -> tuple:
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if not k.startswith(b"simkit.")}
    return table.schema.remove_metadata(), tuple(sorted(meta.items()))


def _check_same_schema(directory: Path, tables: list[pa.Table]) -> None:
    """All batches of a run have the same columns, types and pandas metadata: the odd one out
    (against the majority) is damaged.  Matters for datasets without per-file hashes."""
    keys = [_schema_key(t) for t in tables]
    if len(keys) < 2 or all(k == keys[0] for k in keys):
        return
    counts = [sum(k == other for other in keys) for k in keys]
    usual = keys[counts.index(max(counts))]
    odd = next(b for b, k in enumerate(keys) if k != usual)
    raise BatchError(batch_path(directory, odd), "its columns or types differ from the other batches' (damaged)")


def session_length(manifest: dict[str, Any]) -> int:
    """Deals per session of a run (1 = independent deals, also for manifests from before sessions)."""
    return int(manifest.get("session_length", 1))


def load_dataset(path: str | os.PathLike, columns: Sequence[str] | None = None,
                 batches: int | None = None) -> pd.DataFrame:
    """Read a dataset folder into pandas (only ``columns`` when given), in deal order (with
    seating ``all``: 6 rows per deal, seating 0..5).

    The same rows and dtypes as ``pd.read_parquet(folder)`` on a dataset of schema version 2;
    the winner's ``hu``, ``units``, ``lou`` and ``steps`` are nullable (``Int16`` / ``Int8``,
    ``<NA>`` on 穿牌) also for datasets written before (schema version 1, -1 / 0 there).
    ``seating`` is derived (0) when asked of a run with fixed seats, which stores no such column.

    ``batches`` reads only the first that many batches (a prefix of the run, e.g. while a
    sequential test is still deciding). Everything read is verified first (the manifest
    against itself, each batch file by :func:`read_batch`); any mismatch is a one-line
    :class:`DatasetError` naming the file, never data.
    """
    if not os.fspath(path):
        raise DatasetError("the dataset folder is an empty path")
    directory = Path(path)
    if not directory.is_dir():
        raise DatasetError(f"{directory}: no such dataset folder")
    manifest = read_manifest(directory)
    if manifest is None:
        raise DatasetError(f"{directory}: no {MANIFEST} (not a simkit dataset)")
    manifest_name = manifest_path(directory).name
    n_batches = int(manifest["batches"])
    if batches is not None:
        if not 1 <= batches <= n_batches:
            raise DatasetError(f"{directory}: batches must be in 1..{n_batches}, got {batches}")
        n_batches = int(batches)
    missing = [b for b in range(n_batches) if not os.path.lexists(batch_path(directory, b))]
    if missing:
        raise DatasetError(f"{directory}: {len(missing)} of {n_batches} batches missing (first: {missing[0]}); "
                           "re-run the simulation to complete it")
    files = manifest.get(FILES)  # None: written before per-file hashes (page checksums and identity only)
    if files is not None:
        unrecorded = [b for b in range(n_batches) if batch_path(directory, b).name not in files]
        if unrecorded:
            raise DatasetError(f"{batch_path(directory, unrecorded[0])}: not recorded in {manifest_name} (its run was "
                               "stopped before recording it); re-run simkit simulate with the run's arguments "
                               "to verify and record it")
    wanted = list(columns) if columns is not None else None
    derived: list[str] = []
    if wanted is not None:
        absent = ([*SESSION_COLUMNS] if session_length(manifest) == 1 else []) + (
            [SEATING_COLUMN] if seating(manifest) == "fixed" else [])
        # independent deals store no session columns, fixed seats no seating: derive them
        derived = [c for c in wanted if c in absent]
        wanted = [c for c in wanted if c not in absent]
        if derived and "deal_id" not in wanted:
            wanted.append("deal_id")
    legacy_nulls = int(manifest["schema_version"]) < 2 and (
        wanted is None or any(c in WINNER_COLUMNS for c in wanted))
    if legacy_nulls and wanted is not None and "winner" not in wanted:
        wanted.append("winner")  # schema version 1: the winner columns are null where winner < 0
    tables = []
    for b in range(n_batches):
        file = batch_path(directory, b)
        first, deals = batch_deals(manifest, b)
        record = files[file.name] if files is not None else None
        identity = BatchIdentity(b, first, deals, manifest["config_digest"], rows_per_deal(manifest))
        table, _ = read_batch(file, identity, record, columns=wanted)
        tables.append(table)
    _check_same_schema(directory, tables)
    try:
        table = pa.concat_tables(tables)
        if legacy_nulls:
            no_winner = pc.less(table.column("winner"), 0)
            for name in WINNER_COLUMNS:
                if name in table.column_names:
                    column = table.column(name)
                    table = table.set_column(table.schema.get_field_index(name), name,
                                             pc.if_else(no_winner, pa.scalar(None, column.type), column))
        meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"}
        meta[b"pandas"] = pandas_metadata(table.column_names)
        frame = table.replace_schema_metadata(meta).to_pandas()
    except Exception as exc:  # noqa: BLE001
        raise DatasetError(f"{directory}: its batches do not fit together ({_one_line(exc)})") from None
    if derived:
        deal_id = frame["deal_id"].to_numpy()
        if "session" in derived:
            frame["session"] = deal_id.astype("int64")
        if "deal_in_session" in derived:
            frame["deal_in_session"] = pd.Series(0, index=frame.index, dtype="int16")
        if SEATING_COLUMN in derived:
            frame[SEATING_COLUMN] = pd.Series(0, index=frame.index, dtype="int8")
    if columns is not None and list(frame.columns) != list(columns):
        frame = frame[list(columns)]
    return frame
