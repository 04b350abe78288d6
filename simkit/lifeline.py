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

import os
import threading
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
