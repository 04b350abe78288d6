"""Files simkit writes and reads back: one scheme for every folder it writes into.

* **Atomic writes.** Every file is written to a temporary name in its folder
  (:func:`temp_path`: ``.NAME.simkit-PID-RANDOM.tmp``), flushed to disk and renamed into
  place, so an interrupted run never leaves a half-written file behind.  A write that fails
  (a full disk) is an ``OSError`` naming the file it was writing.
* **Temporary files of dead writers.** A SIGKILL between the temporary file's creation and its
  rename leaves it behind; :func:`remove_stale_temp_files` removes, in one folder, every file
  of exactly that pattern whose writer (the pid in its name) has ended (a zombie counts as
  ended).  It runs when an output folder is opened (:func:`simkit.storage.paths.make_out_dir`)
  and on the first write of a process into any folder (:func:`atomic_write`), so every
  folder simkit writes into (datasets, comparisons, tournaments, tunes, reports, experiments)
  is cleaned by the next run there.  A user's ``.mydata.tmp``, or a file of a running writer,
  is never touched.
* **Regular files only.** :func:`read_regular` opens a file without blocking and refuses
  anything that is not a regular file (a FIFO, a socket, a device, a folder) before reading a
  byte, so a FIFO named ``_manifest.json`` or ``batch-000000.parquet`` is a one-line error,
  never a hang.
* **Digested JSON.** The JSON files a run is resumed from (tune's ``state.json``, the identity
  files ``tune.json``, ``tournament.json``, ``comparison.json``; a comparison's CPU record
  ``cpu.json``, which must carry it) carry a sha256 of their own
  content (:data:`JSON_DIGEST`, as a dataset's manifest carries ``manifest_sha256``):
  :func:`write_checked_json` adds it, :func:`read_checked_json` verifies it, so an edited
  value, a truncated file, ``[]`` or ``"x"`` is a one-line :class:`FileError` naming the file,
  never a silent wrong result.  Files written before these digests (no such field) are still
  read.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import uuid
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from simkit.errors import SimkitError, loads_json


TMP_TAG = "simkit"
TEMP_FILE = re.compile(rf"\.(?P<name>.+)\.{TMP_TAG}-(?P<pid>\d+)-[0-9a-f]{{12}}\.tmp")  # temp_path's names
JSON_DIGEST = "content_sha256"  # sha256 of a digested JSON file's other fields (write_checked_json)
_CLEANED: set[str] = set()  # folders this process has removed dead writers' temporary files from


class FileError(SimkitError):
    """A file simkit reads back that is not a regular file, unreadable, or damaged: ``path``
    and the ``reason`` alone."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


def temp_path(path: Path) -> Path:
    """The temporary name ``path`` is written through: ``.NAME.simkit-PID-RANDOM.tmp`` in its
    folder.  The writer's pid and a random part make it this writer's alone, so a writer that
    cleans up removes only its own leftovers (never another writer's file or a user's
    ``.*.tmp``), and :func:`remove_stale_temp_files` those of writers that have ended.

    >>> TEMP_FILE.fullmatch(temp_path(Path("out/report.md")).name)["name"]
    'report.md'
    """
    return path.parent / f".{path.name}.{TMP_TAG}-{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` is running: it exists and (where ``/proc`` says) is no zombie,
    i.e. it has not ended and merely not been reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, under another user
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read()
    except OSError:
        return True  # no /proc: assume it runs
    state = text[text.rfind(b")") + 2:][:1]
    return state not in (b"Z", b"X")


def remove_stale_temp_files(directory: str | os.PathLike) -> list[str]:
    """Remove from ``directory`` the temporary files (:func:`temp_path`'s pattern, exactly)
    of writers that have ended; returns their names.  Files of running writers (this process
    included) and every other file stay."""
    directory = Path(directory)
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = TEMP_FILE.fullmatch(entry.name)
        if match is None or int(match["pid"]) == os.getpid() or pid_alive(int(match["pid"])):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                continue
            os.unlink(entry.path)
            removed.append(entry.name)
        except OSError:
            pass
    _CLEANED.add(os.path.realpath(directory))
    return removed


def _clean_once(directory: Path) -> None:
    if os.path.realpath(directory) not in _CLEANED:
        remove_stale_temp_files(directory)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """:func:`atomic_write` of ``data``: the file is replaced whole or not at all."""

    def writer(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)

    atomic_write(Path(path), writer)


def atomic_write(path: Path, writer: Callable[[str], None]) -> None:
    """Write through a temporary file in the same folder, flush it to disk, then rename into
    place.  The file gets the mode of any new file (0666 less the umask), not mkstemp's 0600.
    The first write of this process into a folder first removes dead writers' temporary files
    there (:func:`remove_stale_temp_files`).  An ``OSError`` of the write (a full disk) names
    ``path``.

    Only a regular file is replaced: a path that is (or links to) a device, FIFO or socket
    (``/dev/null``, ``/dev/stdout``, a named pipe) is written straight into, as a shell's ``>``
    does (a rename would put a regular file in the device's place), and a symbolic link to a
    regular file keeps its link: the file it points to is replaced."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # follows links
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, "cannot write it (a symbolic link loop)", str(path)) from None
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        try:
            writer(str(path))
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write it ({exc.strerror or exc})", str(path)) from None
        return
    if os.path.islink(path):
        path = Path(os.path.realpath(path))
    _clean_once(path.parent)
    tmp = temp_path(path)
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666))
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
    except OSError as exc:
        if exc.filename is not None and Path(exc.filename) != tmp:
            raise
        # the temporary name means nothing to the user: name the file being written
        raise OSError(exc.errno, f"cannot write it ({exc.strerror or exc})", str(path)) from None


def describe_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (from its ``st_mode``)."""
    for test, words in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return words
    return "not a regular file"


def read_regular(path: str | os.PathLike) -> bytes:
    """The bytes of the regular file ``path`` (a symbolic link to one is followed).  Opened
    without blocking and checked before anything is read: a FIFO, socket, device or folder is a
    :class:`FileError` ("is a FIFO (named pipe), not a regular file"), as is a missing or
    unreadable file, never a hang."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileError(path, "is missing") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise FileError(path, "is a folder, not a regular file") from None
        raise FileError(path, f"unreadable ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FileError(path, f"is {describe_kind(mode)}, not a regular file; move it away")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise FileError(path, f"unreadable ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def regular_file_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` (which exists) cannot be read as a regular file, None when it can
    (checked with ``stat``, which never blocks; a symbolic link is followed)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else f"is {describe_kind(mode)}, not a regular file"


def json_digest(data: dict, key: str = JSON_DIGEST) -> str:
    """sha256 of a JSON object's content: every field but ``key``, as canonical JSON."""
    body = {k: v for k, v in data.items() if k != key}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value of the regular UTF-8 file ``path`` (:func:`read_regular`); an
    unreadable, non-UTF-8 or malformed (e.g. truncated) file is a one-line :class:`FileError`."""
    data = read_regular(path)
    try:
        return loads_json(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise FileError(path, "unreadable (not UTF-8 text)") from None
    except ValueError as exc:
        raise FileError(path, f"unreadable (not JSON: {' '.join(str(exc).split())})") from None


def write_checked_json(path: Path, data: dict) -> dict:
    """Write the JSON object ``data`` (:func:`write_json`) with :data:`JSON_DIGEST`, the
    sha256 of its other fields, last; returns what was written."""
    body = {k: v for k, v in data.items() if k != JSON_DIGEST}
    body = json.loads(json.dumps(body, ensure_ascii=False))  # as read back: lists, not tuples
    body[JSON_DIGEST] = json_digest(body)
    write_json(path, body)
    return body


def read_checked_json(path: str | os.PathLike, what: str, repair: str = "", require_digest: bool = False) -> dict:
    """The JSON object of ``path`` written by :func:`write_checked_json`, verified: a file that
    is no JSON object, or whose content does not match its :data:`JSON_DIGEST`, is a one-line
    :class:`FileError` naming it (``what`` says what it should be; ``repair`` how to recover).
    A file without the field (written before these digests) is read as it is, unless
    ``require_digest`` (a file no simkit that digests it wrote: an error too).  The digest
    field is not part of the result."""
    data = read_json(path)
    hint = f"; {repair}" if repair else ""
    if not isinstance(data, dict):
        raise FileError(path, f"is not {what} (a JSON {type(data).__name__}, not an object){hint}")
    if require_digest and JSON_DIGEST not in data:
        raise FileError(path, f"is not {what} (no {JSON_DIGEST}){hint}")
    stored = data.pop(JSON_DIGEST, None)
    if stored is not None and stored != json_digest(data):
        raise FileError(path, f"its content does not match its {JSON_DIGEST} (edited or damaged){hint}")
    return data


def write_json(path: Path, data: dict) -> None:
    """Indented UTF-8 JSON and a final newline."""

    def writer(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")

    atomic_write(path, writer)


def stored_identity(path: Path, identity: dict, what: str = "an identity file") -> dict | None:
    """The identity already stored in the digested JSON file ``path`` (the caller compares it
    with ``identity`` and words the refusal), or None after writing ``identity`` there (with
    its digest, :func:`write_checked_json`) when there is none yet.  A file that is
    unreadable, no JSON object or edited is a one-line :class:`FileError` naming it."""
    if not os.path.lexists(path):
        write_checked_json(path, identity)
        return None
    return read_checked_json(path, what, "restore it, or use another output folder")


def write_text(path: Path, text: str) -> None:
    """UTF-8 text."""

    def writer(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    atomic_write(path, writer)


def parquet_bytes(table: pa.Table) -> bytes:
    """``table`` as the bytes of simkit's one Parquet format: zstd pages, each with its CRC
    (``write_page_checksum``, verified on reading with ``page_checksum_verification``).  Every
    Parquet file simkit writes is these bytes (:func:`write_parquet`, and the dataset batches
    of :func:`simkit.storage.dataset.write_batch`)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", write_page_checksum=True)
    return sink.getvalue().to_pybytes()


def write_parquet(data: pd.DataFrame | pa.Table, path: str | os.PathLike) -> dict[str, Any]:
    """Write a DataFrame (no index) or an Arrow table atomically as :func:`parquet_bytes`;
    returns the file's record, ``{"bytes": size, "sha256": digest of the bytes}``, for the
    caller's manifest or identity file.

    >>> import tempfile, pandas as pd, pyarrow.parquet as pq
    >>> with tempfile.TemporaryDirectory() as d:
    ...     record = write_parquet(pd.DataFrame({"x": [1, 2]}), Path(d) / "x.parquet")
    ...     back = pq.read_table(Path(d) / "x.parquet", page_checksum_verification=True).to_pandas()
    >>> sorted(record), back["x"].tolist()
    (['bytes', 'sha256'], [1, 2])
    """
    table = data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)
    blob = parquet_bytes(table)
    atomic_write_bytes(path, blob)
    return {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}


def write_figure(fig, directory: Path, stem: str) -> None:
    """A matplotlib figure as ``STEM.png`` and ``STEM.svg`` (120 dpi) in ``directory``."""
    for ext in ("png", "svg"):
        atomic_write(directory / f"{stem}.{ext}", lambda tmp, ext=ext: fig.savefig(tmp, format=ext, dpi=120))
