"""The player's words: the Chinese name of every code a player reads (actions, exposed groups,
how a deal ended, the dealt-hand measures), in one place, with :func:`in_words` that writes
``中文 (code)`` so the code a program or a dataset uses stays beside it.

Card names are in :mod:`simkit.cards` (``TYPE_NAMES_CHINESE``), pattern names in
:mod:`simkit.evaluator.patterns` (``PATTERN_CHINESE``); this module holds the rest and is
numba-free, so reports, the command line and ``simkit play`` all read it.

>>> in_words("peng", ACTION_CHINESE), in_words("tianhu", WIN_KIND_CHINESE)
('碰 (peng)', '天胡 (tianhu)')
>>> in_words("unknown", ACTION_CHINESE)
'unknown'
>>> action_words("discard RJ"), action_words("chow YZ,RZ,WZ"), action_words("pass")
('打 RJ (discard)', '吃 YZ,RZ,WZ (chow)', '过 (pass)')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

# actions as the engine names them (simkit.engine.position.action_text's first word)
ACTION_CHINESE: Mapping[str, str] = {
    "win": "胡", "pass": "过", "peng": "碰", "kong": "发子", "zhan": "占", "chow": "吃", "discard": "打",
}
# exposed groups as a table shows them (simkit.exposed's kinds): a 发子 lies on the table as a 楼
GROUP_CHINESE: Mapping[str, str] = {"chow": "吃", "peng": "碰", "kong": "楼", "zhan": "占", "table": "将"}
# why a seat may no longer win (the replay log's ``nowin`` reasons)
NOWIN_CHINESE: Mapping[str, str] = {"unkonged_zi": "有子不发", "chariot_not_out": "有车子不出车"}
# a decision's kind (``simkit.engine.position.decision_kind``): a claim on a discard or a drawn card,
# a discard phase in which the player may win, a plain discard phase
DECISION_CHINESE: Mapping[str, str] = {"claim": "吃碰", "win": "可胡", "discard": "出牌"}
# how a deal ended (the datasets' ``win_kind``): the winner's 31st card, or no winner
WIN_KIND_CHINESE: Mapping[str, str] = {
    "discard": "胡打出的牌", "draw": "胡摸到的牌", "table": "胡上桌的将", "tianhu": "天胡", "none": "穿牌",
}
# the won hand's measures (dataset columns)
MEASURE_CHINESE: Mapping[str, str] = {
    "hu": "胡数", "units": "牌数", "lou": "楼", "steps": "步", "turns": "轮数", "draws": "摸牌次数",
    "claims": "吃碰次数",
}


def in_words(code: str, names: Mapping[str, str]) -> str:
    """``中文 (code)`` where ``names`` has the code, else the code as it is."""
    name = names.get(code)
    return f"{name} ({code})" if name else code


def action_words(text: str) -> str:
    """An action in the engine's words (``discard RJ``, ``peng``, ``chow YZ,RZ,WZ``) with its
    Chinese name first and the code word beside it; the cards keep their codes."""
    head, _, rest = str(text).partition(" ")
    name = ACTION_CHINESE.get(head)
    if name is None:
        return text
    return f"{name} {rest} ({head})" if rest else f"{name} ({head})"


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal (a Chinese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


TERMINAL_WIDTH = 80  # columns a terminal line of simkit's fills at most (play's table, the review's text)


def wrap_line(text: str, width: int = TERMINAL_WIDTH, indent: str | None = None, sep: str = " ") -> list[str]:
    """``text`` as lines of at most ``width`` terminal columns (:func:`simkit.glossary.display_width`:
    a Chinese character takes two), broken where ``sep`` is (the spaces as they were kept within
    a line), each next line starting with ``indent`` (default: the line's own leading spaces and
    four more); a piece wider than a line is broken at its spaces, then cut.

    >>> wrap_line("seat 1 (expert)  打 红士(RS)", 16)
    ['seat 1 (expert)', '    打 红士(RS)']
    >>> wrap_line("exposed: 碰 红车(RC)×3, 吃 黄将(YJ) 黄士(YS) 黄相(YX)", 40, "  ", sep=", ")
    ['exposed: 碰 红车(RC)×3,', '  吃 黄将(YJ) 黄士(YS) 黄相(YX)']
    """
    if display_width(text) <= width:
        return [text]
    lead = text[: len(text) - len(text.lstrip(" "))]
    indent = lead + "    " if indent is None else indent
    if display_width(indent) > width // 2:
        indent = " " * (width // 2)
    if sep == " ":
        pieces = re.findall(r" *[^ ]+", text[len(lead):])  # each word with the spaces before it
        pieces[0] = lead + pieces[0]
        glue = ""
    else:
        pieces = text.split(sep)
        glue = sep.rstrip() if sep.strip() else ""
        pieces = [p + glue if k < len(pieces) - 1 else p for k, p in enumerate(pieces)]
        pieces = [pieces[0]] + [" " * (len(sep) - len(sep.rstrip())) + p for p in pieces[1:]]
    lines: list[str] = []
    line = ""
    for piece in pieces:
        if line and display_width(line + piece) <= width:
            line += piece
            continue
        if line:
            lines.append(line)
            piece = indent + piece.lstrip(" ")
        line = piece
        if display_width(line) > width:  # one piece wider than a line: broken at its spaces, then cut
            parts = wrap_line(line, width, indent) if sep != " " else _cut(line, width, indent)
            lines += parts[:-1]
            line = parts[-1]
    if line.strip():
        lines.append(line)
    return lines


def _cut(text: str, width: int, indent: str) -> list[str]:
    """A word wider than a line, cut into lines of ``width`` columns (the next ones after ``indent``)."""
    lines = []
    while display_width(text) > width:
        cut = 0
        while display_width(text[: cut + 1]) <= width:
            cut += 1
        lines.append(text[:cut])
        text = indent + text[cut:]
    return lines + [text]


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (:func:`display_width`).

    >>> pad("碰 (peng)", 12) + "|"
    '碰 (peng)   |'
    """
    return text + " " * max(0, width - display_width(text))
