"""Make the font simkit's plots use for Chinese text: a subset of Noto Sans SC (issue 40).

Matplotlib's own DejaVu Sans has no Chinese glyphs, so a plot label such as
``mean payoff (牌 per seat per deal)`` needs a CJK font on every machine.  simkit bundles
``simkit/analysis/fonts/NotoSansSC-simkit.otf``: Noto Sans SC Regular cut down (with fontTools'
subsetter) to the glyphs of every CJK character in a string literal of simkit's sources (a
character at U+2E80 or above; everything below that, ``·``, ``×``, ``−``, ``≥``, Greek, is in
DejaVu Sans, which draws first), and its licence, the SIL Open Font License 1.1, as
``simkit/analysis/fonts/OFL.txt``.  The OFL allows subsetting and redistribution with the licence.

Rerun this script whenever a new Chinese character enters simkit's sources
(``tests/test_plot_font.py`` fails, naming the character, until you do):

    python tools/subset_font.py FONT [--license FILE]

FONT is ``NotoSansSC-Regular.otf`` (the licence then from ``--license``, e.g. the bundled
``simkit/analysis/fonts/OFL.txt``, or an ``OFL.txt`` or ``LICENSE`` beside it), or a wheel / zip
holding both (e.g. ``pylopdf_fonts_zh_cn``'s wheel).  The same inputs give the same files.
fontTools comes with matplotlib.
"""

from __future__ import annotations

import argparse
import ast
import io
import pathlib
import sys
import zipfile

from fontTools import subset
from fontTools.ttLib import TTFont

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ROOT / "simkit"
FONT_DIR = ROOT / "simkit" / "analysis" / "fonts"
FONT_FILE = FONT_DIR / "NotoSansSC-simkit.otf"
LICENSE_FILE = FONT_DIR / "OFL.txt"
FIRST_CJK = 0x2E80  # CJK radicals onward: ideographs, CJK punctuation, full-width forms
FONT_NAME = "NotoSansSC-Regular.otf"
LICENSE_NAMES = ("OFL.txt", "LICENSE", "LICENSE.txt")
# name records kept: family, style, version, PostScript name; copyright (0) and licence (13, 14)
NAME_IDS = [0, 1, 2, 3, 4, 5, 6, 13, 14]


def cjk_characters(sources: pathlib.Path = SOURCES) -> dict[str, str]:
    """Every CJK character (U+2E80 or above) in a string literal of the ``.py`` files under
    ``sources`` (f-strings' literal parts and docstrings included), sorted, each with the first
    ``file:line`` that has it."""
    found: dict[str, str] = {}
    for path in sorted(sources.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for ch in node.value:
                    if ord(ch) >= FIRST_CJK and ch not in found:
                        found[ch] = f"{path.relative_to(sources.parent).as_posix()}:{node.lineno}"
    return dict(sorted(found.items()))


def _read_inputs(font: pathlib.Path, license_path: pathlib.Path | None) -> tuple[bytes, str]:
    """The full font's bytes and the licence's text, from a font file or from a wheel / zip."""
    if zipfile.is_zipfile(font):
        with zipfile.ZipFile(font) as archive:
            names = archive.namelist()
            fonts = [n for n in names if n.rsplit("/", 1)[-1] == FONT_NAME]
            licenses = [n for n in names if n.rsplit("/", 1)[-1] in LICENSE_NAMES]
            if not fonts:
                sys.exit(f"subset_font: no {FONT_NAME} in {font}")
            data = archive.read(fonts[0])
            text = license_path.read_text(encoding="utf-8") if license_path else (
                archive.read(licenses[0]).decode("utf-8") if licenses else None)
    else:
        data = font.read_bytes()
        if license_path is None:
            license_path = next((font.parent / n for n in LICENSE_NAMES if (font.parent / n).is_file()), None)
        text = license_path.read_text(encoding="utf-8") if license_path else None
    if text is None:
        sys.exit(f"subset_font: no licence found for {font}; pass --license FILE (the SIL Open Font License)")
    if "Open Font License" not in text:
        sys.exit("subset_font: the licence text is not the SIL Open Font License")
    return data, text


def make_subset(data: bytes, characters: str) -> TTFont:
    """The font of ``data`` cut to the glyphs of ``characters`` (and .notdef), with fontTools."""
    options = subset.Options()
    options.name_IDs = NAME_IDS
    options.notdef_outline = True
    options.recalc_bounds = True
    font = TTFont(io.BytesIO(data), recalcTimestamp=False)  # the same input gives the same file
    subsetter = subset.Subsetter(options=options)
    subsetter.populate(unicodes=[ord(c) for c in characters])
    subsetter.subset(font)
    return font


def license_text(font: TTFont, original: str, characters: str) -> str:
    """OFL.txt: what the file is, the font's copyright notice, then the licence unchanged (from a
    previous OFL.txt of this script too: its two paragraphs of header are dropped first)."""
    if original.startswith(FONT_FILE.name):
        original = original.split("\n\n", 2)[2]
    names = font["name"]
    return (f"{FONT_FILE.name} is a subset of {names.getDebugName(4)} ({names.getDebugName(5)}),\n"
            f"made by tools/subset_font.py with fontTools: the glyphs of the {len(characters)} CJK\n"
            f"characters in simkit's sources only.  It is licensed, as the original, under the\n"
            f"SIL Open Font License 1.1 below.\n\n"
            f"Copyright notice of the font: {names.getDebugName(0)}\n\n"
            f"{original.strip()}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("font", type=pathlib.Path, help=f"{FONT_NAME}, or a wheel / zip that holds it and its licence")
    parser.add_argument("--license", type=pathlib.Path, default=None, help="the font's licence (SIL OFL 1.1)")
    parser.add_argument("--out", type=pathlib.Path, default=FONT_DIR, help="output folder (default: %(default)s)")
    args = parser.parse_args(argv)
    data, original = _read_inputs(args.font, args.license)
    characters = "".join(cjk_characters())
    font = make_subset(data, characters)
    missing = [c for c in characters if ord(c) not in font.getBestCmap()]
    if missing:
        sys.exit(f"subset_font: the font has no glyph for {''.join(missing)}")
    args.out.mkdir(parents=True, exist_ok=True)
    font_path = args.out / FONT_FILE.name
    font.save(font_path)
    (args.out / LICENSE_FILE.name).write_text(license_text(font, original, characters), encoding="utf-8")
    print(f"{font_path}: {len(characters)} characters, {len(font.getGlyphOrder())} glyphs, "
          f"{font_path.stat().st_size:,} bytes; family {font['name'].getDebugName(1)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
