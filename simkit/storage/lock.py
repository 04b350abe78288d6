"""One writer per folder: an exclusive ``flock`` on ``FOLDER/.simkit.lock``.

The lock file holds the writer's pid, so a second writer is refused with a message naming it.
The kernel releases the lock when its holder ends, however it ends (SIGKILL included), so a
stale lock file never blocks anyone: the next writer takes it over.  A writer that ends
normally removes the file (while still holding the lock; a waiter that opened the removed
file sees that it is gone and opens the new one).

The lock file is simkit's own, never a file it was pointed at: it is opened without following
a symbolic link (``O_NOFOLLOW``), anything but a regular file there (a symbolic link, a FIFO, a
folder) is refused in one line, and a file this writer did not create is never written to,
truncated or removed.  A stale lock file (or a hard link to a user's file) is taken over by
renaming a new lock file of this writer over its name, which leaves the old file's content
alone.

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> with FolderLock(folder):
...     FolderLock(folder).acquire()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.storage.dataset.DatasetError: ... is being written by another simkit process (pid ...); wait for it to end or stop it
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from simkit.storage.dataset import DatasetError
from simkit.storage.files import describe_kind, temp_path

LOCK_NAME = ".simkit.lock"


class FolderLock:
    """Context manager holding the exclusive writer lock of ``directory`` (which must exist)."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_NAME
        self.fd: int | None = None

    def _refuse(self, what: str) -> DatasetError:
        return DatasetError(f"{self.path}: is {what}, not simkit's lock file; remove it (it is not used or "
                            "changed) and run again")

    def _open(self) -> tuple[int, bool] | None:
        """(descriptor, created by this writer) of the lock file, None when it vanished
        between two looks.  Never follows a symbolic link, never blocks (a FIFO)."""
        flags = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | flags, 0o666), True
        except FileExistsError:
            pass
        except OSError as exc:
            raise DatasetError(f"{self.directory}: cannot create the lock file {LOCK_NAME} "
                               f"({exc.strerror or exc})") from None
        try:
            fd = os.open(self.path, os.O_RDONLY | flags)  # flock needs no write access
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refuse("a symbolic link") from None
            raise DatasetError(f"{self.path}: cannot open the lock file ({exc.strerror or exc})") from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise self._refuse(describe_kind(mode))
        return fd, False

    def acquire(self) -> "FolderLock":
        import fcntl

        while True:
            opened = self._open()
            if opened is None:
                continue
            fd, created = opened
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
            if _same_file(fd, self.path):
                break
            os.close(fd)  # the holder removed the file as we opened it: lock the new one
        if not created:  # a stale lock file (or not simkit's): never written to; a new one of ours replaces it
            fd = self._take_over(fd)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def _take_over(self, old: int) -> int:
        """Replace the locked file ``old`` (not created by this writer) by a new lock file of
        this writer, locked before it gets the name; returns its descriptor."""
        import fcntl

        tmp = temp_path(self.path)
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(tmp, self.path)
        except BaseException:
            os.close(fd)
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise
        finally:
            os.close(old)
        return fd

    def release(self) -> None:
        if self.fd is None:
            return
        if _same_file(self.fd, self.path):  # ours: never remove a file that replaced it
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


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` (not followed) is the file open as ``fd``."""
    try:
        mine, there = os.fstat(fd), os.lstat(path)
    except FileNotFoundError:
        return False
    return (mine.st_dev, mine.st_ino) == (there.st_dev, there.st_ino)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None
