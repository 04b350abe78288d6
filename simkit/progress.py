"""The one progress reporter of simkit's long commands.

On a terminal it is tqdm's bar (a well-kept library: rate, time left, the line redrawn in
place).  Anywhere else (a file, a pipe, CI's log) a bar redrawn with carriage returns runs
together into one unreadable line, so there it prints one plain line per update instead, at
most one every :data:`LINE_EVERY_S` seconds and always the last.  Whether a command reports
at all is its own choice (``enabled``; :func:`progress_enabled` is the usual one: not quiet, on
a terminal, outside CI).

>>> import io
>>> out = io.StringIO()
>>> with Progress(3, "deals", "played", stream=out, every=0.0) as progress:
...     for _ in range(3):
...         progress.update()
>>> print(out.getvalue().splitlines()[-1].split(" (")[0])
played 3/3 deals
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO

LINE_EVERY_S = 10.0  # off a terminal: the least time between two progress lines


def progress_enabled(quiet: bool) -> bool:
    """Show a progress bar: not ``quiet``, on a terminal, outside CI."""
    return not quiet and sys.stderr.isatty() and not os.environ.get("CI")


class Progress:
    """Progress of ``total`` units (``unit``: "deals", "decisions", ...) labelled ``description``;
    silent unless ``enabled``.  ``update(n)`` adds n done units; ``close()`` (or leaving the
    ``with`` block) ends the line."""

    def __init__(self, total: int, unit: str = "deals", description: str = "", enabled: bool = True,
                 stream: IO[str] | None = None, every: float = LINE_EVERY_S) -> None:
        self.total = int(total)
        self.unit = unit
        self.description = description
        self.enabled = bool(enabled)
        self.stream = sys.stderr if stream is None else stream
        self.every = float(every)
        self.done = 0
        self.start = time.perf_counter()
        self._last_line = -float("inf")
        self._bar = None
        if self.enabled and self.stream.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, unit=f" {unit}", desc=description or None, file=self.stream,
                             leave=True, dynamic_ncols=True)

    def update(self, n: int = 1, status: str = "") -> None:
        """``n`` more units done; ``status``: a short note on where the work stands (a tune's
        values after its latest iteration), shown after the count (the bar's postfix).

        >>> import io
        >>> out = io.StringIO()
        >>> Progress(2, "iterations", "tune", stream=out).update(1, "x 0.5")
        >>> out.getvalue().startswith("tune 1/2 iterations (") and out.getvalue().rstrip("\\n").endswith(" s)  x 0.5")
        True
        """
        self.done += int(n)
        if not self.enabled:
            return
        if self._bar is not None:
            if status:
                self._bar.set_postfix_str(status, refresh=False)
            self._bar.update(int(n))
            return
        now = time.perf_counter()
        if self.done >= self.total or now - self._last_line >= self.every:
            self._last_line = now
            label = f"{self.description} " if self.description else ""
            note = f"  {status}" if status else ""
            self.stream.write(f"{label}{self.done:,}/{self.total:,} {self.unit} ({now - self.start:.0f} s){note}\n")
            self.stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
