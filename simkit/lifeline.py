"""Worker processes that end with their parent, however the parent ends.

A pool's initializer runs :func:`exit_with_parent` in each worker, before the worker imports
anything heavy: this module imports only the standard library (unpickling a reference to a
function of a module that imported numba, pandas or pyarrow would cost the worker seconds
during which it could not see its parent go).  ``parent`` is the read end of a pipe whose
only write end the main process holds: when the main process ends, however it ends (SIGKILL
included, and whether or not anyone reaps it: a zombie holds no file), the kernel closes
that end, the read sees end-of-file and the worker exits.  A worker that starts after its
parent is gone sees end-of-file at once.  Unlike polling the parent's pid, this cannot
mistake an unreaped (zombie) parent for a live one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any


def _watch(pipe: Any) -> None:
    try:
        while os.read(pipe.fileno(), 4096):
            pass
    except OSError:
        pass
    os._exit(1)


def exit_with_parent(pipe: Any) -> None:
    """Start a daemon thread that ends this process when ``pipe`` (a readable
    :class:`multiprocessing.connection.Connection`) reaches end-of-file."""
    threading.Thread(target=_watch, args=(pipe,), name="simkit-parent-watch", daemon=True).start()


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the length of the block, then deliver the first that came.

    A run records each batch file in its manifest after writing it: an interruption between
    the two left a whole batch file the manifest did not name (seen under load in
    tests/test_integrity.py).  Inside this block the two steps happen together or not at all.
    Off the main thread (where Python takes no signal handlers) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    for number in previous:
        signal.signal(number, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if received:
            signal.raise_signal(received[0])
