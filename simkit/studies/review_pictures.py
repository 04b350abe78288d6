"""The pictures and the player's words of ``simkit review --html`` (issue 52, item 3).

The review page (:mod:`simkit.studies.review_page`) draws with the pieces here, in HTML and
CSS only (no image, no script, nothing from the network):

* :func:`card_picture`: a card as a player holds it, a small upright card with the colour's
  character above the rank's (``红`` over ``将``), the rank drawn in the card's colour (黄 gold,
  红 red, 白 white on a slate card, 绿 green); its code and English name in a tooltip (the
  ``title`` attribute), e.g. ``RJ 红将 (red jiang)``;
* :func:`hand_picture`: cards grouped by colour, each colour's 将士相 / 车马炮 / 卒 apart;
* :func:`group_picture`: an exposed group with its kind (吃 碰 楼 占 将, :data:`GROUP_CHINESE`);
* :func:`action_picture`: an action in the player's word (:data:`ACTION_CHINESE`: 胡 过 碰 发子
  占 吃 打, the words the terminal table uses too), the engine's words in its tooltip;
* :func:`table_picture`: the table at a decision: the player's hand by colour, every seat's
  exposed groups and discards, the stock, the card in question highlighted;
* :func:`ranked_actions`: the candidate actions ranked by the payoff shown beside them;
* :func:`legend`: the words and the colours, with their English;
* :func:`font_face_css`: the bundled subset of Noto Sans SC
  (``simkit/analysis/fonts/NotoSansSC-simkit.otf``, made by ``tools/subset_font.py``, SIL OFL
  1.1) as an ``@font-face`` rule with a base64 ``data:`` URL, so the page draws its Chinese the
  same on a machine without a CJK font.  Every CJK character of simkit's string literals is in
  that font (``tests/test_plot_font.py``), and the page's words all come from those literals
  (``tests/test_review_pictures.py`` checks every character a page holds).

Every text is escaped (:func:`html.escape`).
"""

from __future__ import annotations

import base64
import functools
import html
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import simkit.analysis
from simkit.cards import COLOUR_CHINESE, N_COLOURS, N_RANKS, N_SEATS, N_TYPES, RANK_CHINESE, TYPE_NAMES, parse_type, type_name
from simkit.engine import layout as L
from simkit.engine.position import Position
from simkit.errors import CardError, GroupError
from simkit.evaluator.patterns import PATTERN_CHINESE
from simkit.exposed import ExposedGroup, parse_exposed
from simkit.glossary import ACTION_CHINESE, DECISION_CHINESE, GROUP_CHINESE, WIN_KIND_CHINESE

__all__ = [
    "ACTION_ENGLISH", "FONT_FAMILY", "FONT_FILE", "PICTURE_STYLE", "action_picture", "action_word", "action_text_shown",
    "card_picture", "cards_picture", "font_face_css", "group_picture", "groups_picture", "hand_picture",
    "kind_picture", "legend", "pattern_picture", "ranked_actions", "table_picture", "win_kind_picture",
]

FONT_FILE = Path(simkit.analysis.__file__).with_name("fonts") / "NotoSansSC-simkit.otf"
FONT_FAMILY = "simkit-cjk"
"""The family name the page gives the embedded font (first in every ``font-family``: with its
``unicode-range`` it draws only the CJK characters, the rest falls through to the system's)."""
# CJK radicals onward (U+2E80-9FFF), compatibility ideographs, CJK forms, full-width forms: what
# tools/subset_font.py keeps (every character at U+2E80 or above of simkit's strings)
UNICODE_RANGE = "U+2E80-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FFEF"

COLOUR_ENGLISH = ("yellow", "red", "white", "green")
RANK_ENGLISH = ("jiang", "shi", "xiang", "che", "ma", "pao", "zu")
_COLOUR_CLASS = "yrwg"  # the card's CSS class: c-y, c-r, c-w, c-g
_RANK_BLOCKS = ((0, 1, 2), (3, 4, 5), (6,))  # 将士相 | 车马炮 | 卒
# the engine's action words in English, for the tooltips and the legend
ACTION_ENGLISH = {
    "win": "win (胡): declare the hand complete",
    "pass": "pass (过): let the card go",
    "peng": "peng (碰): claim the card onto a pair in hand, exposing three of a kind",
    "kong": "kong (发子): claim the fourth card onto a 子 in hand, laying a 楼",
    "zhan": "zhan (占): claim the card onto a single copy in hand, exposing a 占 pair",
    "chow": "chow (吃): claim the card into a 圆 set with cards from the hand",
    "discard": "discard (打): throw a card out",
}
GROUP_ENGLISH = {"chow": "chow (a 圆 set)", "peng": "peng (three of a kind)", "kong": "lou (four of a kind)",
                 "zhan": "zhan (a pair)", "table": "a drawn 将 laid on the table"}

PICTURE_STYLE = """
.card { display: inline-flex; flex-direction: column; align-items: center; justify-content: center;
        width: 1.55em; height: 2.5em; margin: 0 1px; border: 1px solid #9a8f78; border-radius: 3px;
        background: #fffdf4; box-shadow: 0 1px 1px rgba(0,0,0,0.15); vertical-align: middle; line-height: 1;
        font-family: "simkit-cjk", system-ui, sans-serif; }
.card .co { font-size: 0.6em; color: #6d6453; margin-bottom: 0.12em; }
.card .ch { font-size: 1.1em; }
.c-y .ch { color: #b07d00; } .c-r .ch { color: #c4161c; } .c-g .ch { color: #18804a; }
.c-w { background: #6f7a8b; border-color: #4f5866; } .c-w .ch { color: #fff; } .c-w .co { color: #e8ebf0; }
.card.hot { outline: 3px solid #e08600; outline-offset: 1px; }
.card.chosen-card { box-shadow: 0 0 0 3px #3d6fd6; } .card.best-card { box-shadow: 0 0 0 3px #2e9a3e; }
.card.claimed { opacity: 0.45; }
.cards { white-space: nowrap; } .small .card { font-size: 0.8em; }
.suit { display: inline-block; margin-right: 0.7em; white-space: nowrap; }
.suit .gap { display: inline-block; width: 0.35em; }
.meld { display: inline-block; margin: 0 0.6em 0.2em 0; padding: 1px 3px; border: 1px dashed #b9b2a0;
        border-radius: 4px; white-space: nowrap; }
.meld .kind, .act { font-family: "simkit-cjk", system-ui, sans-serif; font-weight: 700; color: #3b2f1c; }
.act { cursor: help; }
.table-picture { border: 1px solid #c9c1ad; background: #f4f7f1; border-radius: 8px; padding: 0.5rem 0.8rem;
                 margin: 0.5rem 0 0.8rem; }
.table-picture .seat { padding: 0.3rem 0; border-bottom: 1px solid #dde3d6; }
.table-picture .seat:last-child { border-bottom: none; }
.table-picture .seat.me { background: #fffbe9; margin: 0 -0.8rem; padding: 0.4rem 0.8rem; }
.table-picture .who { font-weight: 600; margin-right: 0.6em; }
.table-picture .row { margin: 0.2rem 0; } .table-picture .label { color: #556; font-size: 0.85rem; margin-right: 0.5em; }
.question { font-size: 1.05rem; margin: 0.3rem 0; } .question .card { font-size: 1.25em; }
table.actions .rank { font-weight: 700; text-align: center; }
.legend { font-size: 0.9rem; } .legend td, .legend th { padding: 0.15rem 0.5rem; }
"""


# ---------------------------------------------------------------------------- small pieces


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def card_title(t: int) -> str:
    """A card's tooltip: its code, its Chinese name and its English (``RJ 红将 (red jiang)``)."""
    c, r = divmod(int(t), N_RANKS)
    return f"{TYPE_NAMES[t]} {COLOUR_CHINESE[c]}{RANK_CHINESE[r]} ({COLOUR_ENGLISH[c]} {RANK_ENGLISH[r]})"


def card_picture(t: int, css: str = "", note: str = "") -> str:
    """One card as a player holds it (module docstring); ``css``: extra classes (``hot`` for the
    card in question); ``note``: added to the tooltip.

    >>> card_picture(7)
    '<span class="card c-r" title="RJ 红将 (red jiang)"><span class="co">红</span><span class="ch">将</span></span>'
    """
    t = int(t)
    c, r = divmod(t, N_RANKS)
    title = card_title(t) + (f"; {note}" if note else "")
    return (f"<span class=\"card c-{_COLOUR_CLASS[c]}{' ' + css if css else ''}\" title=\"{_e(title)}\">"
            f"<span class=\"co\">{COLOUR_CHINESE[c]}</span><span class=\"ch\">{RANK_CHINESE[r]}</span></span>")


def cards_picture(types: Iterable[int], css: str = "") -> str:
    """Cards in the order given, side by side."""
    return "<span class=\"cards\">" + "".join(card_picture(t, css) for t in types) + "</span>"


def hand_picture(counts: Sequence[int] | np.ndarray, hot: Iterable[int] = (), marks: dict[int, str] | None = None,
                 small: bool = False) -> str:
    """Cards by their counts (28 types), grouped by colour as a player sorts them: each colour's
    将士相, 车马炮 and 卒 apart.  One copy of each type in ``hot`` is drawn highlighted (the card
    just taken); ``marks``: a CSS class for one copy of a type (the chosen, the best discard).
    The tooltip of each colour's group holds its cards in codes (``RJ*2 RS``)."""
    counts = [int(x) for x in counts]
    hot, marks = set(int(t) for t in hot), dict(marks or {})
    suits = []
    for c in range(N_COLOURS):
        blocks, codes = [], []
        for ranks in _RANK_BLOCKS:
            cards = []
            for r in ranks:
                t = c * N_RANKS + r
                for k in range(counts[t]):
                    css = " ".join(x for x in (("hot" if t in hot and k == 0 else ""),
                                               (marks.get(t, "") if k == counts[t] - 1 else "")) if x)
                    cards.append(card_picture(t, css))
                if counts[t]:
                    codes.append(TYPE_NAMES[t] + (f"*{counts[t]}" if counts[t] > 1 else ""))
            if cards:
                blocks.append("".join(cards))
        if blocks:
            suits.append(f"<span class=\"suit\" title=\"{_e(' '.join(codes))}\">"
                         + "<span class=\"gap\"></span>".join(blocks) + "</span>")
    if not suits:
        return "<span class=\"note\">none</span>"
    return f"<span class=\"hand{' small' if small else ''}\">" + "".join(suits) + "</span>"


def group_picture(group: ExposedGroup) -> str:
    """An exposed group: its kind in the player's word, then its cards (a 楼 as four cards)."""
    types = list(group.types) if group.kind == "chow" else [group.types[0]] * group.n_cards
    code = f"{group.kind}:{','.join(TYPE_NAMES[t] for t in group.types)}"
    return (f"<span class=\"meld\" title=\"{_e(code + ' — ' + GROUP_ENGLISH[group.kind])}\">"
            f"<span class=\"kind\">{GROUP_CHINESE[group.kind]}</span> {cards_picture(types)}</span>")


def groups_picture(groups: Iterable[ExposedGroup] | str) -> str:
    """Exposed groups (objects, or their text ``peng:RC chow:YZ,RZ,GZ``); the text as it is,
    escaped, where it does not parse."""
    if isinstance(groups, str):
        if not groups.strip():
            return "<span class=\"note\">none</span>"
        try:
            groups = parse_exposed(groups)
        except (GroupError, CardError, ValueError):
            return f"<code>{_e(groups)}</code>"
    groups = list(groups)
    return "".join(group_picture(g) for g in groups) if groups else "<span class=\"note\">none</span>"


def kind_picture(kind: str) -> str:
    """A decision's kind in the player's word (出牌 / 吃碰 / 可胡), the code in its tooltip."""
    name = DECISION_CHINESE.get(kind)
    return f"<span class=\"act\" title=\"{_e(kind)}\">{name}</span>" if name else _e(kind)


def pattern_picture(pattern: str) -> str:
    """A winning pattern's name in the player's words (两楼), its code in the tooltip."""
    name = PATTERN_CHINESE.get(str(pattern))
    return f"<span class=\"act\" title=\"{_e(pattern)}\">{name}</span>" if name else f"<code>{_e(pattern)}</code>"


def win_kind_picture(how: str) -> str:
    name = WIN_KIND_CHINESE.get(str(how))
    return f"<span class=\"act\" title=\"{_e(how)}\">{name}</span>" if name else _e(how)


def action_word(code: str, text: str = "") -> str:
    """An action's Chinese word (the engine's ``code``: ``peng`` -> 碰) with ``text`` and the
    word's English in the tooltip."""
    title = (text + " — " if text and text != code else "") + ACTION_ENGLISH.get(code, code)
    return f"<span class=\"act\" title=\"{_e(title)}\">{ACTION_CHINESE[code]}</span>"


def action_picture(name: str, card: int = -1) -> str:
    """An action in the engine's words (``discard RJ``, ``chow YZ,RZ,WZ``, ``peng``) drawn in the
    player's: its Chinese word (the engine's words and their English in the tooltip), then its
    cards (``card``: the claimed card, drawn after 碰 / 发子 / 占 where given); an action this
    version does not know, as its text.

    >>> action_picture("pass")
    '<span class="action"><span class="act" title="pass (过): let the card go">过</span></span>'
    """
    text = str(name)
    head, _, rest = text.partition(" ")
    if head not in ACTION_CHINESE or (bool(rest) != (head in ("discard", "chow"))):
        return f"<code>{_e(text)}</code>"
    if rest:
        try:
            types = [parse_type(c) for c in rest.replace(",", " ").split()]
        except CardError:
            return f"<code>{_e(text)}</code>"
        return f"<span class=\"action\">{action_word(head, text)} {cards_picture(types)}</span>"
    if head in ("peng", "kong", "zhan") and 0 <= int(card) < N_TYPES:
        return f"<span class=\"action\">{action_word(head, text)} {card_picture(card)}</span>"
    return f"<span class=\"action\">{action_word(head, text)}</span>"


def action_text_shown(name: str) -> str:
    """The text :func:`action_picture` shows (without a claimed card): ``打 红将``, ``吃 黄卒红卒白卒``.

    >>> action_text_shown("chow YZ,RZ,WZ"), action_text_shown("peng"), action_text_shown("shout")
    ('吃 黄卒红卒白卒', '碰', 'shout')
    """
    head, _, rest = str(name).partition(" ")
    if head not in ACTION_CHINESE:
        return str(name)
    cards = "".join(type_name(parse_type(c), chinese=True) for c in rest.replace(",", " ").split())
    return f"{ACTION_CHINESE[head]} {cards}" if cards else ACTION_CHINESE[head]


# ---------------------------------------------------------------------------- the table


def _discards(p: Position) -> list[list[tuple[int, str]]]:
    """Each seat's discards in order from the position's public history: (type, tooltip note), a
    discard another seat claimed noted so."""
    out: list[list[tuple[int, str]]] = [[] for _ in range(N_SEATS)]
    rows = list(p.history)
    for k, (kind, seat, card, _) in enumerate(rows):
        if kind != L.E_DISCARD or card < 0:
            continue
        note = ""
        for later in rows[k + 1:]:
            if later[0] == L.E_CLAIM and later[2] == card and later[1] != seat:
                note = f"claimed by seat {later[1]}"
                break
            if later[0] in (L.E_DISCARD, L.E_DRAW):
                break
        out[seat].append((card, note))
    return out


def table_picture(p: Position, chosen: str = "", best: str = "") -> str:
    """The table at a decision of ``p.seat``: every seat (the player's first) with its hand (the
    player's by colour; another's as its size), exposed groups and discards, then the stock and
    the cards out of play, the card in question highlighted (the card to claim, or the card just
    taken in the hand); in a discard phase the chosen and the best discard are ringed (blue, green).
    """
    seat = int(p.seat)
    sizes = p.concealed_sizes
    discards = _discards(p) if p.history else None
    marks: dict[int, str] = {}
    for name, css in ((best, "best-card"), (chosen, "chosen-card")):
        head, _, rest = str(name).partition(" ")
        if head == "discard":
            try:
                t = parse_type(rest)
            except CardError:
                continue
            marks[t] = (marks.get(t, "") + " " + css).strip()
    hot = [p.got_card] if p.decision == "discard" and 0 <= p.got_card < N_TYPES else []
    out = ["<div class=\"table-picture\">"]
    if p.decision == "claim" and 0 <= p.card < N_TYPES:
        word, source = ("打出", "discarded") if p.source == "discard" else ("摸", "drawn")
        out.append(f"<div class=\"question\"><span class=\"label\">to claim</span> "
                   f"{card_picture(p.card, 'hot', f'{source} by seat {p.source_player}')} "
                   f"<span class=\"note\">seat {_e(p.source_player)} <span class=\"act\" title=\"{source}\">"
                   f"{word}</span></span></div>")
    elif hot:
        got = {"draw": "摸 (drawn)", "discard": "claimed", "table": "from the table"}.get(p.got, p.got)
        out.append(f"<div class=\"question\"><span class=\"label\">just taken</span> "
                   f"{card_picture(p.got_card, 'hot', str(got))} <span class=\"note\">({_e(got)})</span></div>")
    for q in [seat, *[(seat + k) % N_SEATS for k in range(1, N_SEATS)]]:
        who = f"seat {q}" + (" (庄)" if q == p.dealer else "") + (" — this player" if q == seat else "")
        if p.xianggong[q]:
            who += " 相公"
        rows = [f"<div class=\"seat{' me' if q == seat else ''}\" data-seat=\"{q}\"><span class=\"who\">{_e(who)}</span> "]
        if q == seat:
            rows.append(f"<div class=\"row\"><span class=\"label\" title=\"the hand\">手牌</span> "
                        f"{hand_picture(p.hand, hot, marks)}</div>")
        else:
            rows.append(f"<span class=\"note\">{sizes[q]} cards in hand</span>")
        if p.exposed[q]:
            rows.append(f"<div class=\"row\"><span class=\"label\" title=\"exposed groups\">桌上</span> "
                        f"{groups_picture(p.exposed[q])}</div>")
        if discards is not None and discards[q]:
            cards = "".join(card_picture(t, "claimed" if note else "", note) for t, note in discards[q])
            rows.append(f"<div class=\"row small\"><span class=\"label\" title=\"discards, in order\">打出的牌</span> "
                        f"<span class=\"cards\">{cards}</span></div>")
        rows.append("</div>")
        out.append(" ".join(rows))
    dead = f"{hand_picture(p.dead, small=True)}" if sum(p.dead) else "<span class=\"note\">none</span>"
    out.append(f"<div class=\"row\"><span class=\"label\">stock</span> {p.stock} cards; "
               f"<span class=\"label\" title=\"discarded and out of play\">out of play</span> {dead}</div>")
    out.append("</div>")
    return "\n".join(out)


def _num(value: float, places: int = 3, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:+.{places}f}" if signed else f"{value:.{places}f}"


def _iv(lo: float, hi: float, signed: bool = False) -> str:
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return "–"
    return f"[{_num(lo, signed=signed)}, {_num(hi, signed=signed)}]"


def ranked_actions(analysis: Any, chosen: str, best: str, pick: str, level: str) -> list[str]:
    """The candidate actions of a decision ranked by the payoff shown (highest first; equal
    payoffs share a rank, the best named then the chosen first among them; no value last), each
    drawn in the player's words, the chosen, the best named (``best``, the highest payoff shown)
    and the analysis's pick (``pick``, what the loss is measured against) tagged, with the
    difference to the best and whether each is as good as the best
    (:func:`simkit.studies.analyze.shown_verdict`, the one rule; HTML lines of a
    ``<table class="actions">``)."""
    p = analysis.position
    card = p.card if p.decision == "claim" else -1
    as_good = set(analysis.verdict().as_good)

    def value(a: Any) -> float:
        return a.payoff if a.payoff is not None and math.isfinite(a.payoff) else -math.inf

    # highest payoff first; among equal payoffs the best named, then the chosen, then the analysis' order
    actions = sorted(analysis.actions, key=lambda a: (-value(a), a.name != best, a.name != chosen))
    out = ["<table class=\"actions\">", "<thead><tr>" + "".join(
        f"<th>{_e(h)}</th>" for h in ("rank", "action", f"payoff (牌), {level} interval",
                                      f"vs the best, {level} interval", "P(win)", "P(lose)", "rollouts",
                                      "as good as the best")) + "</tr></thead>", "<tbody>"]
    for a in actions:
        rank = 1 + sum(value(b) > value(a) for b in actions)  # equal payoffs, equal ranks
        tags = [t for t, on in (("chosen", a.name == chosen), ("best", a.name == best),
                                ("the analysis's pick", a.name == pick)) if on]
        css = "chosen-row" if a.name == chosen else "best-row" if a.name == best else ""
        cells = [f"<td class=\"rank\">{rank}</td>",
                 f"<td>{action_picture(a.name, card)}" + (f" <em>({', '.join(tags)})</em>" if tags else "") + "</td>",
                 f"<td class=\"num\">{_num(a.payoff, signed=True)}<br><small>{_iv(a.payoff_lo, a.payoff_hi, True)}</small></td>",
                 f"<td class=\"num\">{_num(a.vs_top, signed=True)}<br>"
                 f"<small>{_iv(a.vs_top_lo, a.vs_top_hi, True)}</small></td>",
                 f"<td class=\"num\">{_num(a.p_win)}<br><small>{_iv(a.p_win_lo, a.p_win_hi)}</small></td>",
                 f"<td class=\"num\">{_num(a.p_loss)}<br><small>{_iv(a.p_loss_lo, a.p_loss_hi)}</small></td>",
                 f"<td class=\"num\">{a.rollouts}</td>", f"<td>{'yes' if a.name in as_good else 'no'}</td>"]
        out.append(f"<tr data-action=\"{_e(a.name)}\" data-rank=\"{rank}\"{f' class={chr(34)}{css}{chr(34)}' if css else ''}>"
                   + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>"]
    return out


# ---------------------------------------------------------------------------- legend and font


def legend() -> list[str]:
    """The page's words and colours with their English (HTML lines)."""
    out = ["<section id=\"legend\" class=\"legend\">", "<h2>How to read the page</h2>",
           "<p class=\"note\">Actions and cards are shown as a player says and holds them; point at one for its "
           "code and English.</p>", "<table><thead><tr><th>word</th><th>action</th></tr></thead><tbody>"]
    for code in ("win", "pass", "peng", "kong", "zhan", "chow", "discard"):
        out.append(f"<tr><td>{action_word(code)}</td>\n<td>{_e(ACTION_ENGLISH[code])}</td></tr>")
    out.append("</tbody></table>")
    colours = " ".join(f"{card_picture(c * N_RANKS)} {COLOUR_ENGLISH[c]}" for c in range(N_COLOURS))
    ranks = " ".join(f"{RANK_CHINESE[r]} {RANK_ENGLISH[r]}" for r in range(N_RANKS))
    out.append(f"<p>Colours: {colours}. Ranks: {_e(ranks)}. A ringed card is the one in question (orange), "
               f"the chosen discard (blue) or the best named (green).</p>")
    out.append("</section>")
    return out


@functools.lru_cache(maxsize=1)
def font_face_css() -> str:
    """The ``@font-face`` rule of the embedded font (:data:`FONT_FAMILY`, a base64 ``data:`` URL
    of :data:`FONT_FILE`)."""
    data = base64.b64encode(FONT_FILE.read_bytes()).decode("ascii")
    return (f"@font-face {{ font-family: \"{FONT_FAMILY}\"; src: url(data:font/otf;base64,{data}) format(\"opentype\"); "
            f"unicode-range: {UNICODE_RANGE}; font-display: block; }}")
