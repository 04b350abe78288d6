"""The review page's words, pictures and font (issue 52, items 3 and 4).

No kernel runs here (positions are parsed, analyses faked): the pieces of
:mod:`simkit.studies.review_pictures` are checked as HTML, then in a headless Chromium
(``tests/browser.py``) under a fontconfig with no CJK font at all:

* every character at U+2E80 or above that the page can emit (its pieces for every card, action,
  group, pattern, kind and log event, and every string literal of the modules it draws its words
  from) is in the embedded font's cmap, and the page embeds exactly the bundled font;
* each Chinese character drawn with the embedded font has ink and a shape of its own, where the
  same characters in a family that does not exist all come out as one and the same box (the
  missing glyph): so the comparison can tell a glyph from tofu;
* a page whose font does not decode puts a console error in the browser's log, which the page
  tests read (so "no console error" can fail).
"""

from __future__ import annotations

import ast
import base64
import io
import math
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from fontTools.ttLib import TTFont

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser as chromium  # noqa: E402
from helpers import read_page, shown_text  # noqa: E402

from simkit import cards, exposed, glossary  # noqa: E402
from simkit.cards import N_TYPES, TYPE_NAMES, parse_counts, parse_type  # noqa: E402
from simkit.engine.position import parse_position  # noqa: E402
from simkit.evaluator import patterns  # noqa: E402
from simkit.evaluator.patterns import PATTERN_CHINESE  # noqa: E402
from simkit.glossary import ACTION_CHINESE, DECISION_CHINESE, NOWIN_CHINESE, WIN_KIND_CHINESE  # noqa: E402
from simkit.studies import review_page  # noqa: E402
from simkit.studies import review_pictures as rp  # noqa: E402

FIRST_CJK = 0x2E80
ACTION_WORDS = re.compile(r"\b(peng|chow|discards?|kong|zhan)\b")
CARD_CODE = re.compile(r"\b[YRWG][JSXCMPZ]\b")

CLAIM = ("seat=1; dealer=0; turn=claim; hand=YS YC YP YZ RJ RS*2 RX*2 RC*2 RZ WJ*2 WS WX*2 WC WM WP WZ GS*2 GC GM "
         "GZ*2; exposed1=peng:GX; exposed2=zhan:RM; dead=WS; stock=20; card=GS; source=discard; from=2; stage=peng; "
         "history=discard:0:GX:0 claim:1:GX:1 discard:1:WS:0 draw:2:RM:0 claim:2:RM:3 discard:2:GS:0")
DISCARD = ("seat=1; dealer=0; turn=discard; hand=YS YC YP YZ RJ RS*2 RX*2 RC*2 RZ WJ*2 WS*2 WX*2 WC WM WP WZ GS*2 GC "
           "GM GZ*2; exposed1=peng:GX; dead=; stock=21; got=discard:GX; history=discard:0:GX:0 claim:1:GX:1")


read = read_page
shown = shown_text


def _events() -> list[dict]:
    """One log line of every event kind ``simkit replay`` writes, every variant of each."""
    hands = ["YJ*2 YS*2 YX RC*3 RM RP*2 RZ WJ WS WX*2 WC*2 WM WP WZ GJ GS GX GC*2 GM GP GZ*2",
             "YC YM YP YZ*2 RJ*2 RS RX RC RM RP RZ*2 WJ WS WX WC WM WP WZ GJ*2 GS GX GC GM GP GZ*2",
             "YJ YS YX YC YM YP YZ RJ RS RX RC RM RP RZ WJ WS WX WC WM WP WZ GJ GS GX GC GM GP GZ YJ"]
    out = [{"event": "deal", "deal": 2, "seed": 9, "dealer": 0, "policies": ["expert", "random", "expert"],
            "rules": {}, "hands": hands, "stock": ["RJ"] * 21},
           {"event": "discard", "player": 0, "card": "RJ"}, {"event": "draw", "player": 1, "card": "GZ"},
           {"event": "table", "player": 1, "card": "WJ"}, {"event": "xianggong", "player": 2},
           {"event": "end", "result": "exhausted", "payoffs": [0, 0, 0]},
           {"event": "end", "result": "win", "winner": 2, "how": "draw", "concealed": "YJ*2 YS*2 RJ GP*2",
            "exposed": "zhan:RM peng:RZ chow:YC,YM,YP kong:WM table:GJ", "hu": 89, "lou": 1, "steps": 5,
            "units": 1, "patterns": list(PATTERN_CHINESE), "payoffs": [-1, -1, 2]}]
    out += [{"event": "end", "result": "win", "winner": 1, "how": how, "concealed": "YJ*2", "exposed": "",
             "hu": 1, "lou": 0, "steps": 0, "units": 1, "patterns": [], "payoffs": [1, -1, 0]} for how in WIN_KIND_CHINESE]
    out += [{"event": "claim", "player": 2, "kind": kind, "card": "YX", "cards": ["YX"] * n, "source": source}
            for kind, n in (("peng", 3), ("kong", 4), ("zhan", 2)) for source in ("discard", "draw")]
    out.append({"event": "claim", "player": 2, "kind": "chow", "card": "YZ", "cards": ["YZ", "RZ", "WZ"],
                "source": "discard"})
    out += [{"event": "pass", "player": 1, "card": "RJ", "stage": stage} for stage in ("peng", "chow", "chow_next")]
    out += [{"event": "nowin", "player": 1, "card": "RJ", "reason": reason} for reason in NOWIN_CHINESE]
    return out


def _analysis(position, payoffs: dict[str, float]):
    """A stand-in for a PositionAnalysis: the fields :func:`ranked_actions` reads."""
    actions = []
    for name, payoff in payoffs.items():
        actions.append(types.SimpleNamespace(
            name=name, payoff=payoff, payoff_lo=payoff - 1, payoff_hi=payoff + 1, difference=0.0, difference_lo=-1.0,
            difference_hi=1.0, vs_top=0.0, vs_top_lo=-1.0, vs_top_hi=1.0, p_win=0.25, p_win_lo=0.1, p_win_hi=0.4,
            p_loss=0.5, p_loss_lo=0.3, p_loss_hi=0.7, rollouts=8, status="open"))
    as_good = tuple(a.name for a in actions if math.isfinite(a.payoff) and a.payoff >= 0.0)  # the stand-in's verdict
    return types.SimpleNamespace(position=position, actions=tuple(actions),
                                 verdict=lambda: types.SimpleNamespace(as_good=as_good))


def vocabulary_page() -> str:
    """Every piece the review page draws, of every kind, in one page (with the page's style)."""
    claim, discard = parse_position(CLAIM), parse_position(DISCARD)
    pieces = [*rp.legend(), rp.hand_picture([1] * N_TYPES), rp.table_picture(claim),
              rp.table_picture(discard, "discard WS", "discard GZ")]
    pieces += [rp.card_picture(t) for t in range(N_TYPES)]
    pieces += [rp.action_picture(name, 5) for name in ("win", "pass", "peng", "kong", "zhan", "chow YZ,RZ,WZ", "discard RJ")]
    pieces += [rp.groups_picture(text) for text in ("chow:RJ,RS,RX peng:RC kong:YZ zhan:GM table:RJ", "")]
    pieces += [rp.kind_picture(k) for k in DECISION_CHINESE] + [rp.pattern_picture(p) for p in PATTERN_CHINESE]
    pieces += [rp.win_kind_picture(k) for k in WIN_KIND_CHINESE]
    pieces += [f"<p>{review_page.step_text(e)}</p>" for e in _events()]
    pieces += rp.ranked_actions(_analysis(claim, {"pass": 0.1, "peng": 0.3, "zhan": -0.2}), "pass", "peng", "peng",
                                "95%")
    body = "\n".join(pieces)
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>" + rp.font_face_css() + review_page._STYLE
            + rp.PICTURE_STYLE + "</style></head><body>" + body + "</body></html>")


def _literal_characters(*modules) -> dict[str, str]:
    """CJK characters of every string literal of ``modules``, each with a ``file:line`` holding it."""
    found: dict[str, str] = {}
    for module in modules:
        path = Path(module.__file__)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for ch in node.value:
                    if ord(ch) >= FIRST_CJK:
                        found.setdefault(ch, f"{path.name}:{node.lineno}")
    return found


def _embedded_font() -> TTFont:
    match = re.search(r"url\(data:font/otf;base64,([A-Za-z0-9+/=]+)\)", rp.font_face_css())
    assert match, rp.font_face_css()[:200]
    return TTFont(io.BytesIO(base64.b64decode(match.group(1))))


# ---------------------------------------------------------------------------- the font


def test_the_page_embeds_the_bundled_font_for_every_cjk_character():
    css = rp.font_face_css()
    match = re.search(r"base64,([A-Za-z0-9+/=]+)\)", css)
    assert base64.b64decode(match.group(1)) == rp.FONT_FILE.read_bytes()
    assert rp.FONT_FILE.stat().st_size < 200_000 and len(css) < 60_000  # a subset, not the 8 MB font
    assert "http" not in css and f'font-family: "{rp.FONT_FAMILY}"' in css
    # its unicode-range covers each CJK character the font holds, and the page asks for the family first
    ranges = [tuple(int(x, 16) for x in r.strip()[2:].split("-")) for r in rp.UNICODE_RANGE.split(",")]
    cjk = [c for c in _embedded_font().getBestCmap() if c >= FIRST_CJK]
    assert cjk and all(any(lo <= c <= hi for lo, hi in ranges) for c in cjk)
    assert review_page._STYLE.split("font-family:", 1)[1].strip().startswith(f'"{rp.FONT_FAMILY}"')


def test_every_character_the_page_can_emit_is_in_the_embedded_font():
    """Catches a Chinese word (a new action, pattern, label) that the embedded font cannot draw:
    regenerate it with tools/subset_font.py (docs/statistics.md says how)."""
    cmap = _embedded_font().getBestCmap()
    assert ord("龘") not in cmap  # the font is a subset: the check below can fail
    emitted = {ch: "vocabulary_page()" for ch in vocabulary_page() if ord(ch) >= FIRST_CJK}
    emitted.update(_literal_characters(review_page, rp, glossary, cards, exposed, patterns))
    for word in [*ACTION_CHINESE.values(), *PATTERN_CHINESE.values(), *cards.TYPE_NAMES_CHINESE]:
        assert all(ch in emitted for ch in word), word
    missing = {ch: where for ch, where in emitted.items() if ord(ch) not in cmap}
    assert not missing, ("characters the review page can emit but the embedded font lacks: "
                         + ", ".join(f"{ch!r} (U+{ord(ch):04X}, {where})" for ch, where in sorted(missing.items()))
                         + "; regenerate it: python tools/subset_font.py NotoSansSC-Regular.otf "
                           "--license simkit/analysis/fonts/OFL.txt")


# ---------------------------------------------------------------------------- the pictures


def test_each_card_is_drawn_in_its_colour_with_its_code_in_the_tooltip():
    seen = set()
    for t in range(N_TYPES):
        html = rp.card_picture(t)
        page = read(html)
        colour, rank = divmod(t, 7)
        assert page.classes[0] == f"card c-{'yrwg'[colour]}"
        assert "".join(page.shown) == cards.TYPE_NAMES_CHINESE[t]  # 红将: the colour's character, the rank's
        assert page.titles[0].startswith(f"{TYPE_NAMES[t]} {cards.TYPE_NAMES_CHINESE[t]} (")
        seen.add(html)
    assert len(seen) == N_TYPES
    assert "hot" in read(rp.card_picture(3, "hot")).classes[0].split()


def test_the_hand_is_grouped_by_colour_in_rank_order():
    counts = parse_counts("GZ*2 RJ YP WC*3 YJ RX")
    html = rp.hand_picture(counts, hot=[parse_type("WC")], marks={parse_type("YP"): "chosen-card"})
    page = read(html)
    suits = [c for c in page.titles if c and not re.search(r"[\u2e80-\uffff]", c)]
    assert suits == ["YJ YP", "RJ RX", "WC*3", "GZ*2"]  # yellow, red, white, green; 将 … 卒 within each
    assert "".join(page.shown) == "黄将黄炮红将红相白车白车白车绿卒绿卒"
    card_classes = [c for c in page.classes if c.startswith("card ")]
    assert len(card_classes) == sum(counts) == 9
    assert sum("hot" in c.split() for c in card_classes) == 1 and sum("chosen-card" in c.split() for c in card_classes) == 1
    assert CARD_CODE.search("".join(page.shown)) is None


def test_actions_are_the_players_words_shared_with_the_terminal():
    from simkit.studies import table

    assert table.ACTION_CHINESE is glossary.ACTION_CHINESE  # the terminal table and the page read one table
    assert set(ACTION_CHINESE.values()) == {"胡", "过", "碰", "发子", "占", "吃", "打"}
    for name, words in (("discard RJ", "打 红将"), ("chow YZ,RZ,WZ", "吃 黄卒红卒白卒"), ("peng", "碰"),
                        ("kong", "发子"), ("zhan", "占"), ("pass", "过"), ("win", "胡")):
        page = read(rp.action_picture(name))
        assert shown(rp.action_picture(name)) == words == rp.action_text_shown(name), name
        assert page.titles[0].startswith(name) and "(" + words.split()[0] + ")" in page.titles[0], page.titles
        assert ACTION_WORDS.search(" ".join(page.shown)) is None
    assert shown(rp.action_picture("peng", parse_type("GS"))) == "碰 绿士"  # the claimed card beside the word
    for odd in ("shout RJ", "discard QQ", "peng RJ", "chow", "<b>x</b>"):  # not an action: shown as text, escaped
        assert rp.action_picture(odd) == f"<code>{review_page._e(odd)}</code>"


def test_the_table_at_a_claim_shows_every_seat_and_the_card_in_question():
    p = parse_position(CLAIM)
    html = rp.table_picture(p)
    text = shown(html)
    page = read(html)
    assert text.startswith("to claim 绿士 seat 2 打出")
    assert [c for c in page.classes if "hot" in c.split()] == ["card c-g hot"]  # the card to claim, ringed
    seats = [m.group(1) for m in re.finditer(r'data-seat="(\d)"', html)]
    assert seats == ["1", "2", "0"]  # the player first, then the others in turn
    assert "seat 1 — this player 手牌" in text and "seat 2 28 cards in hand" in text and "seat 0 (庄)" in text
    assert "桌上 碰 绿相绿相绿相" in text and "桌上 占 红马红马" in text  # every seat's exposed groups
    # discards in order per seat; seat 0's 绿相 was claimed by seat 1
    assert "seat 0 (庄) 30 cards in hand 打出的牌 绿相" in text
    assert any("claimed" in c.split() for c in page.classes)
    assert any(t.startswith("GX 绿相") and "claimed by seat 1" in t for t in page.titles)
    assert "打出的牌 白士" in text and "stock 20 cards; out of play 白士" in text
    assert CARD_CODE.search(text) is None and ACTION_WORDS.search(text) is None


def test_the_table_in_a_discard_phase_rings_the_chosen_and_the_best_discard():
    p = parse_position(DISCARD)
    html = rp.table_picture(p, chosen="discard WS", best="discard GZ")
    text = shown(html)
    assert text.startswith("just taken 绿相 (claimed)")
    rings = re.findall(r'class="card (c-\w) ([\w -]+)" title="(\w\w)', html)
    assert ("c-w", "chosen-card", "WS") in rings and ("c-g", "best-card", "GZ") in rings
    same = rp.table_picture(p, chosen="discard GZ", best="discard GZ")
    assert re.findall(r'class="card c-g (best-card chosen-card)" title="GZ', same)


def test_candidate_actions_are_ranked_by_the_payoff_shown():
    p = parse_position(CLAIM)
    analysis = _analysis(p, {"pass": 0.1, "zhan": math.nan, "peng": 0.3, "kong": -0.2})
    rows = [line for line in rp.ranked_actions(analysis, "pass", "peng", "pass", "95%") if line.startswith("<tr data-")]
    order = [re.search(r'data-action="(\w+)" data-rank="(\d)"', r).groups() for r in rows]
    assert order == [("peng", "1"), ("pass", "2"), ("kong", "3"), ("zhan", "4")]  # highest first, no value last
    # equal payoffs share a rank; among them the best named first, then the chosen
    tied = _analysis(p, {"pass": 0.1, "zhan": 0.3, "kong": 0.3, "peng": 0.3})
    rows_tied = [line for line in rp.ranked_actions(tied, "peng", "kong", "kong", "95%") if line.startswith("<tr data-")]
    assert [re.search(r'data-action="(\w+)" data-rank="(\d)"', r).groups() for r in rows_tied] == [
        ("kong", "1"), ("peng", "1"), ("zhan", "1"), ("pass", "4")]
    assert 'class="best-row"' in rows[0] and "碰 绿士 (best)" in shown(rows[0])
    assert 'class="chosen-row"' in rows[1] and "(chosen, the analysis's pick)" in rows[1]
    assert [r.endswith("<td>yes</td></tr>") for r in rows] == [True, True, False, False]  # as good as the best
    assert "+0.300" in rows[0] and "[-0.700, +1.300]" in rows[0] and "–" in rows[3]


def test_the_deal_steps_speak_the_players_words():
    for entry in _events():
        html = review_page.step_text(entry)
        page = read(html)
        text = " ".join("".join(page.shown).split())
        assert ACTION_WORDS.search(text) is None, (entry, text)
        assert CARD_CODE.search(text) is None, (entry, text)
    win = review_page.step_text(_events()[6])
    text = shown(win)
    assert "两楼" in text and "two_lou" not in text and 'title="two_lou"' in win  # patterns by name, code in tooltip
    assert "seat 2 胡 (胡摸到的牌)" in text and "胡数 89" in text
    assert "楼 白马白马白马白马" in text and "将 绿将" in text  # a 发子 lies as a 楼 of four; a table 将
    deal = review_page.step_text(_events()[0])
    assert deal.count('class="card ') == sum(int(parse_counts(h).sum()) for h in _events()[0]["hands"]) and "seat 0 (庄)" not in deal and "deals (庄)" in deal


# ---------------------------------------------------------------------------- in the browser


def _cell_sheet(characters: str, family: str, size: int = 44) -> str:
    """Each character in a cell of its own, at a fixed place, in ``family``."""
    cells = "".join(f"<div style=\"position:absolute; left:{(k % 16) * size}px; top:{(k // 16) * size}px; "
                    f"width:{size}px; height:{size}px; font: 32px/{size}px '{family}'; text-align:center\">{ch}</div>"
                    for k, ch in enumerate(characters))
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>" + rp.font_face_css()
            + " body { margin: 0; background: #fff; color: #000; }</style></head><body>" + cells + "</body></html>")


def _cells(png: Path, n: int, size: int = 44) -> list[np.ndarray]:
    from PIL import Image

    image = np.asarray(Image.open(png).convert("L"), dtype=np.int16)
    return [image[(k // 16) * size:(k // 16 + 1) * size, (k % 16) * size:(k % 16 + 1) * size] for k in range(n)]


def test_chinese_glyphs_render_from_the_embedded_font_not_as_the_missing_glyph_box(tmp_path):
    """Every CJK character the page can emit, once in the embedded family and once in a family
    that does not exist, under a fontconfig with no CJK font: without the font every character
    is the same box; with it each has ink, and a shape unlike the box and unlike every other's."""
    characters = "".join(sorted({ch for ch in vocabulary_page() if ord(ch) >= FIRST_CJK}))
    rows = math.ceil(len(characters) / 16)
    shots = {}
    for family in (rp.FONT_FAMILY, "no-such-family"):
        page, png = tmp_path / f"{family}.html", tmp_path / f"{family}.png"
        page.write_text(_cell_sheet(characters, family), encoding="utf-8")
        run = chromium.run_browser(page, tmp_path / "browser", screenshot=png, size=(16 * 44, rows * 44 + 20))
        assert chromium.console_messages(run.stderr) == []
        shots[family] = _cells(png, len(characters))
    tofu, drawn = shots["no-such-family"], shots[rp.FONT_FAMILY]
    ink = [int((cell < 128).sum()) for cell in drawn]
    assert min(ink) > 20, dict(zip(characters, ink))  # every glyph has ink
    # without the font: one missing-glyph box for every character (so the comparison sees tofu)
    assert (tofu[0] < 250).any() and all(np.array_equal(cell, tofu[0]) for cell in tofu)
    box = [ch for ch, cell in zip(characters, drawn) if np.array_equal(cell, tofu[0])]
    assert box == [], f"drawn as the missing-glyph box: {box}"
    distinct = {cell.tobytes() for cell in drawn}
    assert len(distinct) == len(characters)  # each character its own glyph


def test_a_page_whose_font_does_not_decode_logs_a_console_error(tmp_path):
    """The console check of the page tests can fail: a broken embedded font is reported."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>@font-face { font-family: 'x'; "
                    "src: url(data:font/otf;base64,AAAAAAAA) format('opentype'); } body { font-family: 'x'; }"
                    "</style></head><body>将</body></html>", encoding="utf-8")
    run = chromium.run_browser(page, tmp_path / "browser", screenshot=tmp_path / "broken.png", size=(200, 100))
    messages = chromium.console_messages(run.stderr)
    assert any("Failed to decode downloaded font" in m or "OTS parsing error" in m for m in messages), run.stderr[-2000:]


# ---------------------------------------------------------------------------- the set-up script


def _bin(folder: Path, fakes: dict[str, str]) -> str:
    """A PATH of one folder: bash and the few tools the script uses, and ``fakes`` (name -> script)."""
    import shutil
    import stat

    folder.mkdir()
    for tool in ("bash", "mktemp", "tail", "rm", "head", "id"):
        (folder / tool).symlink_to(shutil.which(tool))
    for name, body in fakes.items():
        (folder / name).unlink(missing_ok=True)
        (folder / name).write_text("#!" + shutil.which("bash") + "\n" + body + "\n", encoding="utf-8")
        (folder / name).chmod(stat.S_IRWXU)
    return str(folder)


@pytest.mark.parametrize("fakes, says", [
    ({}, "cannot install chromium: no apt-get"),
    ({"apt-get": "exit 0", "id": "echo 1000"}, "cannot install chromium: not root and no password-less sudo"),
    ({"apt-get": "echo 'E: Unable to locate package chromium' >&2; exit 100", "id": "echo 0"},
     "cannot install chromium: apt-get failed: E: Unable to locate package chromium"),
    ({"chromium": "exit 0"}, "chromium is already installed"),
])
def test_the_install_script_says_why_it_cannot_install_and_exits_0(tmp_path, fakes, says):
    """tools/install-browser.sh never fails the test command: where it cannot install it says why
    (the browser tests then skip with that line)."""
    import subprocess

    path = _bin(tmp_path / "bin", fakes)
    run = subprocess.run(["bash", str(chromium.INSTALL)], capture_output=True, text=True, timeout=60,
                         env={"PATH": path, "HOME": str(tmp_path)})
    assert run.returncode == 0 and run.stdout.startswith("install-browser: ") and says in run.stdout, run
