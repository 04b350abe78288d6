"""One writer per folder: an exclusive ``flock`` on ``FOLDER/.simkit.lock``.

The lock file holds the writer's pid, so a second writer is refused with a message naming it.
The kernel releases the lock when its holder ends, however it ends (SIGKILL included), so a
stale lock file never blocks anyone: the next writer takes it over.  A writer that ends
normally removes the file (while still holding the lock; a waiter that opened the removed
file sees that it is gone and opens the new one).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> with FolderLock(folder):
...     FolderLock(folder).acquire()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.storage.dataset.DatasetError: ... is being written by another simkit process (pid ...); wait for it to end or stop it
"""

from __future__ import annotations

import os
from pathlib import Path

from simkit.storage.dataset import DatasetError

LOCK_NAME = ".simkit.lock"


class FolderLock:
    """Context manager holding the exclusive writer lock of ``directory`` (which must exist)."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_NAME
        self.fd: int | None = None

    def acquire(self) -> "FolderLock":
        import fcntl

        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                raise DatasetError(f"{self.directory}: cannot create the lock file {LOCK_NAME} "
                                   f"({exc.strerror or exc})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_pid(fd)
                os.close(fd)
                raise DatasetError(f"{self.directory} is being written by another simkit process "
                                   f"(pid {holder or 'unknown'}); wait for it to end or stop it") from None
            except OSError as exc:  # a filesystem without flock
                os.close(fd)
                raise DatasetError(f"{self.directory}: cannot lock {LOCK_NAME} ({exc.strerror or exc})") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed the file as we opened it: lock the new one
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)  # closing releases the lock
        self.fd = None

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None
