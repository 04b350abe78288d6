"""``simkit review --html FILE``: a review as one self-contained HTML page.

:func:`review_html` renders a :class:`~simkit.studies.review.GameReview` (and, when given, the
log it reviewed) as a single HTML document that needs nothing else: no network, no script, no
external style sheet or font (the style is inline, in the page's ``<style>``).  Every text is
escaped (:func:`html.escape`).  The page holds:

* the headline, at the top (:mod:`simkit.studies.headline`): the result split into luck, the
  cards dealt and the skill loss against the reference, the agreement with it, and whom the
  seat played like; then the analysis's totals, labelled, with one sentence on how the best
  named and the unbiased totals both hold (decisions, as good as the best, errors, the total
  loss against the analysis's picks; errors by size; decisions and loss by kind), and a table of
  every decision linking to its section;
* the deal step by step: each line of a ``simkit replay`` log in words (cards by code and
  Chinese name, :func:`simkit.cards.type_name`), or each decision of a typed decision log,
  with the reviewed seat's decisions marked and linked;
* one section per reviewed decision (``id="decision-N"``, N the decision's number in the log):
  the hand and exposed groups, the position, the action chosen and its verdict (the best, as
  good as the best, or the best named: :func:`simkit.studies.analyze.shown_verdict`), the loss
  against the analysis's pick and against the reference (each with its interval), and every
  action's estimates by payoff (payoff, difference to the best, P(win), P(lose), with intervals).

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
from simkit.cards import N_TYPES, format_counts, parse_counts, parse_type, type_name
from simkit.engine.position import Position
from simkit.errors import CardError, SimkitError
from simkit.exposed import format_exposed
from simkit.rules import RuleSet
from simkit.storage.files import read_regular, write_text
from simkit.studies.reference import ReferenceLoss
from simkit.studies.review import TOTALS_NOTE, DecisionReview, GameReview

__all__ = ["review_html", "step_text", "write_review_html"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans", "PingFang SC", "Microsoft YaHei", sans-serif;
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
    """A card by its code and Chinese name (escaped HTML): ``RJ <span>红将</span>``."""
    try:
        t = parse_type(str(code))
    except CardError:
        return _e(code)
    return f"<code>{_e(type_name(t))}</code> <span class=\"zh\">{_e(type_name(t, chinese=True))}</span>"


def _cards(text: Any) -> str:
    """Cards in ``simkit score`` notation (``RJ*3 RS``) by code and Chinese name (escaped HTML)."""
    text = str(text or "").strip()
    if not text:
        return "—"
    try:
        chinese = format_counts(parse_counts(text), chinese=True)
    except (CardError, ValueError):
        return f"<code>{_e(text)}</code>"
    return f"<code>{_e(text)}</code> <span class=\"zh\">{_e(chinese)}</span>"


def _action(name: str) -> str:
    """An action's words (:func:`simkit.engine.position.action_text`), its cards also by their
    Chinese names (escaped HTML)."""
    head, _, rest = str(name).partition(" ")
    if head in ("discard", "chow") and rest:
        try:
            chinese = " ".join(type_name(parse_type(c), chinese=True) for c in rest.replace(",", " ").split())
        except CardError:
            return f"<code>{_e(name)}</code>"
        return f"<code>{_e(name)}</code> <span class=\"zh\">{_e(chinese)}</span>"
    return f"<code>{_e(name)}</code>"


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


_SOURCES = {"discard": "the discard", "draw": "the draw"}
_STAGES = {"peng": "a 碰 or 发子", "chow": "a 吃", "chow_next": "a 吃 (as the next player)"}
_NOWIN = {"unkonged_zi": "an un-konged 子 was claimed", "chariot_not_out": "the chariot is not out"}
_HOW = {"discard": "on a discard", "draw": "on a draw", "table": "on a card laid on the table",
        "tianhu": "with the hand dealt (天胡)"}


def step_text(entry: dict[str, Any]) -> str:
    """One line of a ``simkit replay`` log (:mod:`simkit.replay`'s schema) in words, as escaped
    HTML; an event this version does not know is shown as its JSON.

    >>> step_text({"event": "discard", "player": 1, "card": "RJ"})
    'seat 1 discards <code>RJ</code> <span class="zh">红将</span>'
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
        dealt = ("; dealt " + ", ".join(f"seat {k} {_cards(h)}" for k, h in enumerate(hands))
                 if isinstance(hands, list) else "")
        stock = entry.get("stock")
        left = f"; {len(stock)} cards in the stock" if isinstance(stock, list) else ""
        return f"{where}: seat {_e(dealer)} deals{seats}; {rule_text}{dealt}{left}"
    if event == "discard":
        return f"{who} discards {_card(entry.get('card'))}"
    if event == "draw":
        return f"{who} draws {_card(entry.get('card'))} (shown to all)"
    if event == "claim":
        cards = entry.get("cards") if isinstance(entry.get("cards"), list) else []
        group = " ".join(_e(c) for c in cards)
        return (f"{who} claims {_e(entry.get('kind'))} on {_card(entry.get('card'))} from "
                f"{_e(_SOURCES.get(entry.get('source'), entry.get('source')))}: exposes <code>{group}</code>")
    if event == "pass":
        stage = _STAGES.get(entry.get("stage"), entry.get("stage"))
        return f"{who} passes on {_card(entry.get('card'))} (declines {_e(stage)})"
    if event == "nowin":
        reason = _NOWIN.get(entry.get("reason"), entry.get("reason"))
        return f"{who} may no longer win ({_e(reason)}; card {_card(entry.get('card'))})"
    if event == "table":
        return f"{who} lays {_card(entry.get('card'))} on the table (an unclaimed drawn 将)"
    if event == "xianggong":
        return f"{who} becomes 相公 (can no longer win)"
    if event == "end":
        payoffs = entry.get("payoffs")
        pay = (", ".join(f"seat {k} {_e(p)}" for k, p in enumerate(payoffs)) if isinstance(payoffs, list) else "")
        if entry.get("result") == "win":
            patterns = entry.get("patterns") or []
            extra = f"; patterns {_e(', '.join(map(str, patterns)))}" if patterns else ""
            return (f"seat {_e(entry.get('winner'))} wins {_e(_HOW.get(entry.get('how'), entry.get('how')))}: "
                    f"胡 {_e(entry.get('hu'))}, 楼 {_e(entry.get('lou'))}, 步 {_e(entry.get('steps'))}, units "
                    f"{_e(entry.get('units'))}{extra}; concealed {_cards(entry.get('concealed'))}, exposed "
                    f"<code>{_e(entry.get('exposed', ''))}</code>; payoffs {pay}")
        return f"穿牌: the stock ran out, no winner; payoffs {pay}"
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


def _position_lines(p: Position, seat: int) -> list[str]:
    rows = [["hand", _cards(format_counts(p.hand))]]
    for q in range(len(p.exposed)):
        if p.exposed[q]:
            who = "exposed (this seat)" if q == seat else f"exposed by seat {q}"
            rows.append([who, f"<code>{_e(format_exposed(p.exposed[q]))}</code>"])
    if sum(p.dead):
        rows.append(["discarded and out of play", _cards(format_counts(p.dead))])
    rows.append(["stock", f"{p.stock} cards left"])
    if p.decision == "claim":
        rows.append(["to claim", f"{_card_index(p.card)} from {_e(p.source)} of seat {_e(p.source_player)}"])
    elif p.got_card >= 0:
        rows.append(["the card just taken", f"{_card_index(p.got_card)} (from the {_e(p.got)})"])
    out = ["<table class=\"position\"><tbody>"]
    out += [f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in rows]
    out += ["</tbody></table>",
            f"<p class=\"note\">position: <code>{_e(p.text())}</code></p>"]
    return out


def _card_index(t: int) -> str:
    return _card(type_name(int(t))) if 0 <= int(t) < N_TYPES else "—"


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
           f"<h3>Decision {d.index} <span class=\"note\">({_e(d.kind)}, log line {d.line})</span></h3>"]
    out += _position_lines(d.analysis.position, d.seat)
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
    rows, classes = [], []
    as_good = set(d.analysis.verdict().as_good)  # the one rule (simkit.studies.analyze.shown_verdict)
    for a in sorted(d.analysis.actions, key=lambda a: -a.payoff if math.isfinite(a.payoff) else math.inf):
        tags = [t for t, on in (("chosen", a.name == d.chosen), ("best", a.name == d.best),
                                ("the analysis's pick", a.name == d.pick)) if on]
        rows.append([_action(a.name) + (f" <em>({', '.join(tags)})</em>" if tags else ""), str(a.rollouts),
                     _number(a.payoff, signed=True), _interval(a.payoff_lo, a.payoff_hi, signed=True),
                     _number(a.vs_top, signed=True), _interval(a.vs_top_lo, a.vs_top_hi, signed=True),
                     f"{_number(a.p_win)} {_interval(a.p_win_lo, a.p_win_hi)}",
                     f"{_number(a.p_loss)} {_interval(a.p_loss_lo, a.p_loss_hi)}",
                     "yes" if a.name in as_good else "no"])
        classes.append("chosen-row" if a.name == d.chosen else "best-row" if a.name == d.best else "")
    out += _table(["action", "rollouts", "payoff (牌)", f"{level} interval", "vs best", f"{level} interval",
                   "P(win)", "P(lose)", "as good as the best"], rows, numeric=(1, 2, 3, 4, 5, 6, 7),
                  row_classes=classes,
                  cls="actions")
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
             f"<title>{_e(title)}</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
             "<header>", f"<h1>{_e(title)}</h1>", f"<p class=\"meta\">{meta}</p>", "</header>"]
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
