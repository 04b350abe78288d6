"""``simkit review --html FILE``: a review as one self-contained HTML page.

:func:`review_html` renders a :class:`~simkit.studies.review.GameReview` (and, when given, the
log it reviewed) as a single HTML document that needs nothing else: no network, no script, no
external style sheet; its font is in it (the style is inline, in the page's ``<style>``, with
the bundled subset of Noto Sans SC as a base64 ``data:`` URL, so its Chinese draws the same on a
machine with no CJK font).  Every text is escaped (:func:`html.escape`).  The words and the
pictures are the player's (:mod:`simkit.studies.review_pictures`): actions in Chinese (胡 过 碰
发子 占 吃 打, the terminal table's words, :data:`simkit.glossary.ACTION_CHINESE`) with the
engine's words and their English in tooltips and a legend, cards drawn as four-colour cards with
their codes in tooltips.  The page holds:

* a legend of the words and the colours;
* the headline, at the top (:mod:`simkit.studies.headline`): the result split into luck, the
  cards dealt and the skill loss against the reference, the agreement with it, and whom the
  seat played like; then the analysis's totals, labelled, with one sentence on how the best
  named and the unbiased totals both hold (decisions, as good as the best, errors, the total
  loss against the analysis's picks; errors by size; decisions and loss by kind), and a table of
  every decision linking to its section;
* the deal step by step: each line of a ``simkit replay`` log in the player's words and
  pictures (the dealt hands grouped by colour, the win's patterns by their Chinese names), or
  each decision of a typed decision log, with the reviewed seat's decisions marked and linked;
* one section per reviewed decision (``id="decision-N"``, N the decision's number in the log):
  a drawing of the table (the hand grouped by colour, every seat's exposed groups and discards,
  the card in question highlighted), the position's text, the action chosen and its verdict (the
  best, as good as the best, or the best named: :func:`simkit.studies.analyze.shown_verdict`),
  the loss against the analysis's pick and against the reference (each with its interval), and
  the candidate actions ranked by their payoff (payoff, difference to the best, P(win), P(lose),
  with intervals, and whether each is as good as the best).

:func:`write_review_html` writes it atomically (:func:`simkit.storage.files.write_text`).
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import simkit
from simkit.cards import parse_counts, parse_type
from simkit.engine.position import Position
from simkit.errors import CardError, SimkitError
from simkit.replay import log_decisions
from simkit.rules import RuleSet
from simkit.storage.files import read_regular, write_text
from simkit.glossary import ACTION_CHINESE, NOWIN_CHINESE
from simkit.studies.reference import ReferenceLoss
from simkit.studies.review import TOTALS_NOTE, DecisionReview, GameReview
from simkit.studies.review_pictures import (
    PICTURE_STYLE,
    action_picture,
    action_word,
    card_picture,
    font_face_css,
    groups_picture,
    hand_picture,
    kind_picture,
    legend,
    pattern_picture,
    ranked_actions,
    table_picture,
    win_kind_picture,
)

__all__ = ["review_html", "step_text", "write_review_html"]

_STYLE = """
body { font-family: "simkit-cjk", system-ui, -apple-system, "Segoe UI", "Noto Sans", "PingFang SC", "Microsoft YaHei", sans-serif;
       margin: 0 auto; max-width: 64rem; padding: 1rem 1.5rem 3rem; color: #1d2330; background: #fff; line-height: 1.45; }
h1 { margin-bottom: 0.2rem; } h2 { border-bottom: 2px solid #d8dde6; padding-bottom: 0.2rem; margin-top: 2rem; }
.meta, .note { color: #556; font-size: 0.92rem; }
table { border-collapse: collapse; margin: 0.6rem 0 1rem; font-size: 0.92rem; }
th, td { border: 1px solid #d8dde6; padding: 0.25rem 0.55rem; text-align: left; vertical-align: top; }
th { background: #f2f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.88rem; }
.zh { color: #7a3e00; } .error { color: #b00020; font-weight: 600; }
ol.steps { padding-left: 3rem; } ol.steps li { margin: 0.1rem 0; }
ol.steps li.mine { background: #fff6d6; } ol.steps li.reviewed { background: #ffe7a3; font-weight: 600; }
section.decision { border: 1px solid #d8dde6; border-radius: 6px; padding: 0.4rem 1rem 0.6rem; margin: 1rem 0; }
section.decision.flagged { border-color: #b00020; }
.verdict { font-size: 1.02rem; } .chosen-row td { background: #eef4ff; } .best-row td { background: #eaf7ea; }
"""


# ---------------------------------------------------------------------------- small pieces


def _e(value: Any) -> str:
    """``value`` as escaped text (quotes too: safe in an attribute)."""
    return html.escape(str(value), quote=True)


def _number(value: float, places: int = 3, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:+.{places}f}" if signed else f"{value:.{places}f}"


def _interval(lo: float, hi: float, places: int = 3, signed: bool = False) -> str:
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return "–"
    return f"[{_number(lo, places, signed)}, {_number(hi, places, signed)}]"


def _level(confidence: float) -> str:
    return f"{confidence:.0%}"


def _card(code: Any) -> str:
    """A card drawn as a player holds it (:func:`~simkit.studies.review_pictures.card_picture`,
    its code in the tooltip); a code that is no card, as escaped text."""
    try:
        t = parse_type(str(code))
    except CardError:
        return _e(code)
    return card_picture(t)


def _cards(text: Any) -> str:
    """Cards in ``simkit score`` notation (``RJ*3 RS``) drawn grouped by colour (each colour's
    codes in its tooltip); text that does not parse, as escaped code."""
    text = str(text or "").strip()
    if not text:
        return "—"
    try:
        counts = parse_counts(text)
    except (CardError, ValueError):
        return f"<code>{_e(text)}</code>"
    return hand_picture(counts, small=True)


def _action(name: str) -> str:
    """An action (:func:`simkit.engine.position.action_text`'s words) in the player's word and
    its cards drawn (:func:`~simkit.studies.review_pictures.action_picture`; the words in the
    tooltip)."""
    return action_picture(name)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = (),
           row_classes: Sequence[str] | None = None, cls: str = "") -> list[str]:
    """An HTML table; ``header`` is escaped here, ``rows`` hold HTML already escaped."""
    out = [f"<table{f' class={_q(cls)}' if cls else ''}>", "<thead><tr>"
           + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead>", "<tbody>"]
    for k, row in enumerate(rows):
        css = row_classes[k] if row_classes is not None and row_classes[k] else ""
        cells = "".join(f"<td class=\"num\">{c}</td>" if i in numeric else f"<td>{c}</td>" for i, c in enumerate(row))
        out.append(f"<tr{f' class={_q(css)}' if css else ''}>{cells}</tr>")
    out += ["</tbody>", "</table>"]
    return out


def _q(value: Any) -> str:
    """An attribute value, quoted and escaped."""
    return f"\"{_e(value)}\""


def _seat(player: Any) -> str:
    return f"seat {_e(player)}"


# ---------------------------------------------------------------------------- the deal in words


_SOURCES = {"discard": ("打出", "the discard"), "draw": ("摸", "the draw")}
_STAGES = {"peng": "a 碰 or 发子", "chow": "a 吃", "chow_next": "a 吃 (as the next player)"}
_NOWIN = {"unkonged_zi": "an un-konged 子 was claimed", "chariot_not_out": "the chariot is not out"}
_MEASURES = (("hu", "胡数"), ("lou", "楼"), ("steps", "步"), ("units", "牌数"))


def step_text(entry: dict[str, Any]) -> str:
    """One line of a ``simkit replay`` log (:mod:`simkit.replay`'s schema) in the player's words
    and pictures (the engine's words and the cards' codes in tooltips), as escaped HTML; an event
    this version does not know is shown as its JSON.

    >>> step_text({"event": "pass", "player": 1, "card": "RJ", "stage": "chow"})  # doctest: +ELLIPSIS
    'seat 1 <span class="act" title="passes...">过</span> <span class="card c-r" ...>...</span> (declines a 吃)'
    """
    event = entry.get("event")
    who = _seat(entry.get("player"))
    if event == "deal":
        dealer = entry.get("dealer")
        policies = entry.get("policies")
        seats = ("; policies " + ", ".join(f"seat {k} <code>{_e(p)}</code>" for k, p in enumerate(policies))
                 if isinstance(policies, list) else "")
        where = f"deal {_e(entry.get('deal'))} of seed {_e(entry.get('seed'))}"
        if "session" in entry:
            where += f" (session {_e(entry.get('session'))}, deal {_e(entry.get('deal_in_session'))} in it)"
        rules = entry.get("rules") if isinstance(entry.get("rules"), dict) else {}
        try:
            defaults = RuleSet().to_dict()
            changed = {k: v for k, v in rules.items() if defaults.get(k) != v}
        except (SimkitError, TypeError, ValueError):  # pragma: no cover - an odd header: shown as given
            changed = rules
        rule_text = ("default rules" if not changed else
                     "rules " + ", ".join(f"<code>{_e(k)}={_e(v)}</code>" for k, v in changed.items()))
        hands = entry.get("hands")
        dealt = ("; dealt:" + "".join(f"<div class=\"dealt\">seat {k} {_cards(h)}</div>" for k, h in enumerate(hands))
                 if isinstance(hands, list) else "")
        stock = entry.get("stock")
        left = f"{len(stock)} cards in the stock; " if isinstance(stock, list) else ""
        return f"{where}: seat {_e(dealer)} deals (庄){seats}; {left}{rule_text}{dealt}"
    if event == "discard":
        return f"{who} {action_word('discard', 'discards')} {_card(entry.get('card'))}"
    if event == "draw":
        return f"{who} <span class=\"act\" title=\"draws (shown to all)\">摸</span> {_card(entry.get('card'))}"
    if event == "claim":
        cards = entry.get("cards") if isinstance(entry.get("cards"), list) else []
        kind = entry.get("kind")
        word = action_word(kind, f"claims {kind}") if kind in ACTION_CHINESE else f"claims <code>{_e(kind)}</code>"
        source = _SOURCES.get(entry.get("source"))
        where = (f"<span class=\"act\" title=\"{source[1]}\">{source[0]}</span>" if source
                 else _e(entry.get("source")))
        return (f"{who} {word} {_card(entry.get('card'))} ({where}), exposing "
                f"{' '.join(_card(c) for c in cards) or '—'}")
    if event == "pass":
        stage = _STAGES.get(entry.get("stage"), entry.get("stage"))
        return f"{who} {action_word('pass', 'passes')} {_card(entry.get('card'))} (declines {_e(stage)})"
    if event == "nowin":
        reason = entry.get("reason")
        name = NOWIN_CHINESE.get(reason)
        words = (f"<span class=\"act\" title=\"{_e(_NOWIN.get(reason, reason))}\">{name}</span>" if name
                 else _e(reason))
        return f"{who} may no longer win ({words}; card {_card(entry.get('card'))})"
    if event == "table":
        return f"{who} lays {_card(entry.get('card'))} on the table (an unclaimed drawn 将)"
    if event == "xianggong":
        return f"{who} becomes 相公 (can no longer win)"
    if event == "end":
        payoffs = entry.get("payoffs")
        pay = (", ".join(f"seat {k} {_e(p)}" for k, p in enumerate(payoffs)) if isinstance(payoffs, list) else "")
        if entry.get("result") == "win":
            patterns = entry.get("patterns") if isinstance(entry.get("patterns"), list) else []
            extra = f"; patterns {' '.join(pattern_picture(x) for x in patterns)}" if patterns else ""
            measures = ", ".join(f"<span title=\"{key}\">{name}</span> {_e(entry.get(key))}" for key, name in _MEASURES)
            return (f"seat {_e(entry.get('winner'))} {action_word('win', 'wins')} "
                    f"({win_kind_picture(entry.get('how'))}): {measures}{extra}; concealed "
                    f"{_cards(entry.get('concealed'))}, exposed {groups_picture(str(entry.get('exposed', '')))}; "
                    f"payoffs {pay}")
        return f"<span class=\"act\" title=\"the stock ran out, no winner\">穿牌</span>: payoffs {pay}"
    return f"<code>{_e(json.dumps(entry, ensure_ascii=False))}</code>"


def _log_entries(log: str | os.PathLike | Sequence[str] | None) -> list[tuple[int, dict[str, Any]]]:
    """(line number, JSON object) of a log's non-empty lines; [] without a log."""
    if log is None:
        return []
    if isinstance(log, (str, os.PathLike)):
        lines = read_regular(log).decode("utf-8").splitlines()
    else:
        lines = list(log)
    out = []
    for number, line in enumerate(lines, 1):
        if not str(line).strip():
            continue
        try:
            entry = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            entry = {"event": "?", "text": str(line)}
        out.append((number, entry if isinstance(entry, dict) else {"event": "?", "value": entry}))
    if out and out[0][1].get("event") == "deal":
        log_decisions(lines)  # a replay log is checked whole (its end line the replay's) before it is drawn
    return out


def _deal_steps(review: GameReview, entries: list[tuple[int, dict[str, Any]]]) -> list[str]:
    """The deal step by step: an ordered list of the log's lines in words, the reviewed seat's
    decisions marked and linked to their sections."""
    by_line = {d.line: d for d in review.decisions}
    if not entries:
        return ["<p class=\"note\">No log was given: the decisions below are all the page shows.</p>"]
    replay = entries[0][1].get("event") == "deal"
    out = ["<ol class=\"steps\">"]
    for number, entry in entries:
        d = by_line.get(number)
        if replay:
            text = step_text(entry)
            mine = entry.get("player", entry.get("winner")) == review.seat
        else:  # a typed decision log: {"position": ..., "chosen": ...}
            position = entry.get("position")
            seat = position.get("seat") if isinstance(position, dict) else _position_seat(str(position))
            mine = str(seat) == str(review.seat)
            text = f"seat {_e(seat)} chooses {_action(str(entry.get('chosen', '')))}"
        css = "reviewed" if d is not None else "mine" if mine else ""
        if d is not None:
            text += (f" — <a href=\"#decision-{d.index}\">decision {d.index}</a>: chosen {_action(d.chosen)}, "
                     f"{_verdict(d)}, loss {_number(d.loss)} 牌")
        out.append(f"<li value=\"{number}\"{f' class={_q(css)}' if css else ''}>{text}</li>")
    out.append("</ol>")
    return out


def _position_seat(text: str) -> str:
    for part in text.split(";"):
        key, _, value = part.partition("=")
        if key.strip() == "seat":
            return value.strip()
    return "?"


# ---------------------------------------------------------------------------- the page


def _verdict(d: DecisionReview) -> str:
    """The decision's verdict (escaped HTML): the chosen action is the best, as good as the best
    (nothing else named), or the best is named (:func:`simkit.studies.analyze.shown_verdict`)."""
    if d.chosen == d.best:
        return "<span class=\"verdict-best\">the best</span>"
    if d.as_good_as_best:
        return "<span class=\"verdict-as-good\">as good as the best</span>"
    return f"best: <strong class=\"recommended\">{_action(d.best)}</strong>"


def _headline(review: GameReview) -> list[str]:
    """The one headline (:mod:`simkit.studies.headline`): result = luck + cards dealt - skill
    loss, the agreement, and whom the seat played like."""
    h = review.headline()
    level = _level(h.confidence)
    per, per_lo, per_hi = h.per_decision
    out = ["<section id=\"headline\">", "<h2>Headline</h2>", "<ul class=\"headline\">"]
    if h.source == "reference" and math.isfinite(h.result) and math.isfinite(h.luck):
        out.append(f"<li>result <span class=\"result\" data-value={_q(repr(h.result))}>{_number(h.result, signed=True)}"
                   f"</span> 牌 = luck of the draws <span class=\"luck\" data-value={_q(repr(h.luck))}>"
                   f"{_number(h.luck, signed=True)}</span> + the cards dealt <span class=\"dealt\" "
                   f"data-value={_q(repr(h.dealt))}>{_number(h.dealt, signed=True)}</span> − skill loss "
                   f"<span class=\"skill\" data-value={_q(repr(h.loss))}>{_number(h.loss)}</span> "
                   f"<span class=\"note\">(luck: what the draws gave or took, value model {_e(h.luck_model)}; the "
                   f"cards dealt: what {_e(h.reference)} would expect in this seat, result − luck + loss)</span></li>")
    against = f"<code>{_e(h.reference)}</code>" if h.source == "reference" else "the analysis's picks"
    out.append(f"<li>skill: lost <span class=\"skill-loss\" data-value={_q(repr(h.loss))}>{_number(h.loss)}</span> "
               f"{_interval(h.loss_lo, h.loss_hi)} 牌 against {against} in this deal ({level} interval), "
               f"<span class=\"skill-per-decision\" data-value={_q(repr(per))}>{_number(per)}</span> "
               f"{_interval(per_lo, per_hi)} per decision ({h.decisions} decisions with a choice)</li>")
    what = f"took {_e(h.reference)}'s action" if h.source == "reference" else "chose an action as good as the best"
    out.append(f"<li>agreement: <span class=\"agreement\" data-value={_q(repr(h.agreement))}>{h.agree} of "
               f"{h.decisions}</span> ({_number(100 * h.agreement, 0)}%) {what}</li>")
    if not h.bots:
        out.append(f"<li>played like: {_e(h.bots_note)}</li></ul>")
    else:
        out.append(f"<li>played like: <strong class=\"closest\">{_e(h.closest())}</strong> (the bot of the nearest "
                   "loss per decision)</li></ul>")
        rows = [["<strong>you</strong>", f"{_number(per)} {_interval(per_lo, per_hi)}",
                 f"{_number(100 * h.agreement, 0)}%"]]
        rows += [[f"<code>{_e(b['bot'])}</code>", f"{_number(b['loss_per_decision'])} "
                  f"{_interval(b['loss_per_decision_lo'], b['loss_per_decision_hi'])}",
                  f"{_number(100 * b['agreement'], 0)}%"] for b in h.bots]
        out += _table(["player", f"loss per decision against {h.reference} ({level} interval)", "agreement"], rows,
                      numeric=(1, 2), cls="played-like")
        out.append(f"<p class=\"note\">{_e(h.bots_about)}</p>")
    out.append("</section>")
    return out


def _summary(review: GameReview) -> list[str]:
    s = review.summary()
    level = _level(review.confidence)
    out = _headline(review)
    out += ["<section id=\"summary\">", "<h2>The analysis's totals</h2>", f"<p class=\"note\">{_e(TOTALS_NOTE)}</p>"]
    rows = []
    if review.reference is not None:
        r = review.reference
        lo, hi = r.total_interval()
        rows.append([f"loss against <code>{_e(r.reference)}</code> (the headline's skill: what playing "
                     f"{_e(r.reference)} in this seat would have gained, from the deal's true cards; "
                     f"{_e(_level(r.confidence))} interval)",
                     f"<span class=\"reference-total\" data-value={_q(repr(r.total))}>{_number(r.total)}</span> "
                     f"{_interval(lo, hi)} 牌"])
    rows += [["decisions reviewed", f"<span class=\"decision-count\">{s['decisions']}</span>"],
             ["chosen action as good as the best", f"<span class=\"as-good-count\">{s['as_good_as_best']}</span>"],
             [f"errors (a loss whose {level} interval excludes 0, the choice not as good as the best)",
              str(s["errors"])],
             [f"total loss against the analysis's picks ({level} interval)",
              f"<span class=\"total-loss\" data-value={_q(repr(s['total_loss']))}>{_number(s['total_loss'])}</span> "
              f"{_interval(s['total_loss_lo'], s['total_loss_hi'])} 牌"]]
    out.append("<table class=\"totals\"><tbody>")
    out += [f"<tr><th>{label}</th><td class=\"num\">{value}</td></tr>" for label, value in rows]
    out.append("</tbody></table>")
    out.append("<h3>Errors by size</h3>")
    out += _table(["size of the loss (牌)", "errors"], [[_e(k), str(v)] for k, v in s["errors_by_size"].items()],
                  numeric=(1,))
    out.append("<h3>By kind of decision</h3>")
    out += _table(["kind", "decisions", "errors", "loss (牌)"],
                  [[_e(k), str(v["decisions"]), str(v["errors"]), _number(v["loss"])] for k, v in s["by_kind"].items()],
                  numeric=(1, 2, 3))
    out.append("<h3>Every decision</h3>")
    rows, classes = [], []
    for d in review.decisions:
        ref = _reference_row(review, d)
        rows.append([f"<a href=\"#decision-{d.index}\">{d.index}</a>", _e(d.kind), _action(d.chosen), _verdict(d),
                     _number(d.loss), _interval(d.loss_lo, d.loss_hi),
                     "–" if ref is None else f"{_number(ref.loss)} {_interval(ref.lo, ref.hi)}",
                     "<span class=\"error\">error</span>" if d.error else ""])
        classes.append("flagged" if d.error else "")
    reference = f"loss against {review.reference.reference}" if review.reference is not None else "loss against the reference"
    out += _table(["#", "kind", "chosen", "verdict", "loss against the pick (牌)", f"{level} interval", reference, ""],
                  rows,
                  numeric=(0, 4, 5, 6), row_classes=classes)
    out.append("</section>")
    return out


def _reference_row(review: GameReview, d: DecisionReview) -> ReferenceLoss | None:
    if review.reference is None:
        return None
    return next((r for r in review.reference.decisions if r.index == d.index), None)


def _position_lines(p: Position, chosen: str = "", best: str = "") -> list[str]:
    """The table at the decision, drawn (:func:`~simkit.studies.review_pictures.table_picture`),
    and the position's text (what ``simkit analyze`` reads)."""
    return [table_picture(p, chosen, best),
            f"<p class=\"note\">position: <code>{_e(p.text())}</code></p>"]


def _decision(review: GameReview, d: DecisionReview) -> list[str]:
    level = _level(review.confidence)
    ref = _reference_row(review, d)
    attrs = {"id": f"decision-{d.index}", "data-index": d.index, "data-line": d.line, "data-chosen": d.chosen,
             "data-best": d.best, "data-as-good-as-best": "true" if d.as_good_as_best else "false",
             "data-pick": d.pick, "data-loss": repr(d.loss)}
    if ref is not None:
        attrs["data-reference-loss"] = repr(ref.loss)
    head = " ".join(f"{k}={_q(v)}" for k, v in attrs.items())
    out = [f"<section class=\"decision{' flagged' if d.error else ''}\" {head}>",
           f"<h3>Decision {d.index} <span class=\"note\">({kind_picture(d.kind)}, log line {d.line})</span></h3>"]
    out += _position_lines(d.analysis.position, d.chosen, d.best)
    out.append(f"<p class=\"verdict\">chosen: <strong class=\"chosen\">{_action(d.chosen)}</strong> — "
               f"{_verdict(d)}</p>")
    out.append("<ul class=\"losses\">")
    out.append(f"<li>loss against the analysis's pick {_action(d.pick)} (measured apart from that pick): "
               f"<span class=\"loss\" data-value={_q(repr(d.loss))}>"
               f"{_number(d.loss)}</span> 牌, {level} interval {_interval(d.loss_lo, d.loss_hi)}"
               + (" — <span class=\"error\">an error</span> (the interval excludes 0)" if d.error else "") + "</li>")
    if ref is not None:
        out.append(f"<li>loss against <code>{_e(review.reference.reference)}</code>: <span class=\"reference-loss\" "
                   f"data-value={_q(repr(ref.loss))}>{_number(ref.loss)}</span> 牌, "
                   f"{_e(_level(review.reference.confidence))} interval {_interval(ref.lo, ref.hi)} "
                   f"({ref.samples} stock orders)</li>")
    out.append("</ul>")
    out += ranked_actions(d.analysis, d.chosen, d.best, d.pick, level)
    out.append("</section>")
    return out


def review_html(review: GameReview, log: str | os.PathLike | Sequence[str] | None = None,
                title: str | None = None) -> str:
    """The review as one self-contained HTML page (module docstring); ``log``: the reviewed
    log (its path or its lines), for the deal step by step."""
    entries = _log_entries(log)
    title = title or f"Review of seat {review.seat}"
    level = _level(review.confidence)
    meta = (f"Rollouts: <code>{_e(review.policy)}</code> at every seat, up to {review.rollouts} determinisations per "
            f"action, seed {review.seed}; luck adjustment of the rollouts: {_e(review.luck or 'off')}. Loss = the "
            f"analysis's pick's expected payoff minus the chosen one's (牌), paired over the same determinisations; "
            f"an error is a loss whose {level} interval excludes 0 where the choice is not as good as the best.")
    parts = ["<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">",
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
             f"<title>{_e(title)}</title>", f"<style>{font_face_css()}\n{_STYLE}{PICTURE_STYLE}</style>", "</head>",
             "<body>", "<header>", f"<h1>{_e(title)}</h1>", f"<p class=\"meta\">{meta}</p>", "</header>"]
    parts += legend()
    parts += _summary(review)
    parts += ["<section id=\"deal\">", "<h2>The deal step by step</h2>",
              "<p class=\"note\">Numbered by the log's lines; this seat's moves are shaded, its reviewed decisions "
              "marked and linked.</p>"]
    parts += _deal_steps(review, entries)
    parts += ["</section>", "<section id=\"decisions\">", f"<h2>Seat {review.seat}'s decisions</h2>",
              "<p class=\"note\">Each decision's table lists the actions by payoff, the best first; \"vs best\" is "
              "an action's payoff minus the best's, paired over the determinisations both were measured on. An "
              "action whose interval there does not lie wholly below 0 is as good as the best. "
              f"{_e(TOTALS_NOTE)}</p>"]
    for d in review.decisions:
        parts += _decision(review, d)
    parts += ["</section>", f"<footer class=\"note\"><p>simkit {_e(simkit.__version__)}</p></footer>", "</body>",
              "</html>"]
    return "\n".join(parts) + "\n"


def write_review_html(review: GameReview, path: str | os.PathLike,
                      log: str | os.PathLike | Sequence[str] | None = None) -> Path:
    """Write :func:`review_html` to ``path`` atomically; returns the path."""
    path = Path(path)
    write_text(path, review_html(review, log))
    return path
