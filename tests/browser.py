"""A headless Chromium for the page tests (issue 52, item 4), driven by plain subprocess calls.

* :func:`browser`: the browser on PATH; where there is none, ``tools/install-browser.sh`` is run
  once (it installs Debian's ``chromium`` with apt-get where it can, else says why) and PATH is
  looked at again; a test skips only where that leaves no browser, with the script's reason.
* :func:`font_config`: a fontconfig file whose only fonts are matplotlib's DejaVu Sans (no CJK
  font at all, the same on every machine): what the page must draw its Chinese without.
* :func:`run_browser`: one ``--screenshot`` (or ``--dump-dom``) run with console logging on
  (``--enable-logging=stderr --v=0``); :func:`console_messages` picks the page's console lines
  (a font that does not decode, a script error) out of the browser's own noise.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "tools" / "install-browser.sh"
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _on_path() -> str | None:
    return next((path for path in map(shutil.which, NAMES) if path), None)


@functools.lru_cache(maxsize=1)
def _find() -> tuple[str | None, str]:
    """(the browser's path or None, what the install script said)."""
    path = _on_path()
    if path is not None:
        return path, ""
    try:
        run = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=1200)
        said = (run.stdout.strip().splitlines() or ["(no output)"])[-1]
    except (OSError, subprocess.TimeoutExpired) as exc:
        said = f"tools/install-browser.sh did not run: {exc}"
    return _on_path(), said


def browser() -> str:
    """The browser's path; skips the test, saying why, where none is installed and none can be."""
    path, said = _find()
    if path is None:
        pytest.skip(f"no headless browser ({', '.join(NAMES)}) and none could be installed: {said}")
    return path


def font_config(folder: Path) -> Path:
    """A fontconfig file under ``folder`` whose one font folder holds matplotlib's DejaVu Sans
    (no CJK font) and whose cache is its own."""
    import matplotlib

    fonts = folder / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    for name in ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf", "DejaVuSansMono.ttf"):
        target = fonts / name
        if not target.exists():
            shutil.copyfile(ttf / name, target)
    conf = folder / "fonts.conf"
    conf.write_text("<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"fonts.dtd\">\n"
                    f"<fontconfig><dir>{fonts}</dir><cachedir>{folder / 'fc-cache'}</cachedir></fontconfig>\n",
                    encoding="utf-8")
    return conf


def run_browser(page: Path, folder: Path, *, screenshot: Path | None = None, size: tuple[int, int] = (1000, 800),
                dump_dom: bool = False, timeout: float = 120) -> subprocess.CompletedProcess:
    """Load ``page`` in the headless browser under :func:`font_config` (its own profile folder
    under ``folder``): a PNG of the window to ``screenshot``, or the DOM on stdout."""
    path = browser()
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "FONTCONFIG_FILE": str(font_config(folder)), "HOME": str(folder)}
    command = [path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
               "--disable-extensions", "--hide-scrollbars", "--force-device-scale-factor=1",
               f"--user-data-dir={folder / 'profile'}", "--enable-logging=stderr", "--v=0",
               f"--window-size={size[0]},{size[1]}"]
    if screenshot is not None:
        command.append(f"--screenshot={screenshot}")
    if dump_dom:
        command.append("--dump-dom")
    command.append(page.resolve().as_uri())
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path} did not finish loading {page.name} within {timeout} s")
    assert run.returncode == 0, run.stderr[-3000:]
    if screenshot is not None:
        assert screenshot.is_file() and screenshot.stat().st_size > 0, run.stderr[-3000:]
    return run


def console_messages(stderr: str) -> list[str]:
    """The page's console lines in the browser's log (``...:CONSOLE:0] "message", source: ...``)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]
