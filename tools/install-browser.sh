#!/usr/bin/env bash
# Install a headless browser for the page tests (tests/test_review_html.py,
# tests/test_review_pictures.py): Debian's `chromium`, with apt-get, where no Chromium or
# Chrome is on PATH.  Where it cannot (no apt-get, not root and no password-less sudo, the
# install fails) it says why and exits 0: the browser tests then skip, saying so.
#
#   bash tools/install-browser.sh
#
# The tests also run it themselves when they find no browser (an install under the dpkg lock
# waits for a concurrent one).  No CJK font is installed: the page brings its own.
set -u
for name in chromium chromium-browser google-chrome google-chrome-stable chrome; do
  if path=$(command -v "$name" 2>/dev/null); then
    echo "install-browser: $name is already installed ($path)"
    exit 0
  fi
done
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: cannot install chromium: no apt-get on this machine (install Chromium or Chrome by hand)"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "install-browser: cannot install chromium: not root and no password-less sudo (run: sudo apt-get install chromium)"
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
lock=(-o DPkg::Lock::Timeout=600)
log=$(mktemp)
if $sudo apt-get "${lock[@]}" update -qq >"$log" 2>&1 \
   && $sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends chromium >>"$log" 2>&1 \
   && command -v chromium >/dev/null 2>&1; then
  echo "install-browser: installed $(chromium --version 2>/dev/null | head -n 1)"
else
  echo "install-browser: cannot install chromium: apt-get failed: $(tail -n 1 "$log")"
fi
rm -f "$log"
exit 0
