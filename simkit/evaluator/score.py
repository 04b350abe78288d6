"""``simkit score``: records ``{"hand", "exposed", "rules"}`` scored as JSON lines.

Two paths give the same bytes for every record (tests compare them line by line):

* :func:`score_record` — one record through :func:`simkit.evaluator.evaluate`: the
  reference, and what ``simkit score HAND`` runs;
* :func:`score_records` — many records at once (``simkit score --jsonl``): every record is
  checked and parsed in Python first (memoised card tokens, exposed strings and rule sets),
  then one compiled call evaluates all holdings (:func:`evaluate_rows_kernel`) and returns
  each one's best decomposition, which only complete holdings turn into text
  (:func:`simkit.evaluator.explain.explain`).

All or nothing: the first invalid record raises its error (the same one line as the
reference path) before anything is evaluated.

>>> text = score_records([(1, {"hand": "RJ RS RX"}), (2, {"hand": "RM RP"})], RuleSet(), "hands.jsonl")
>>> [json.loads(line)["hu"] for line in text.splitlines()]
[1, None]
>>> text.splitlines()[0] == json.dumps(score_record({"hand": "RJ RS RX"}, RuleSet()), ensure_ascii=False)
True
"""

from __future__ import annotations

import gc
import json
from typing import Any, Iterable

import numpy as np
from numba import njit

from simkit.cards import N_COPIES, N_TYPES, TYPE_NAMES, parse_count_list, parse_counts
from simkit.deck import DEALER_CARDS
from simkit.errors import CardError, SimkitError
from simkit.evaluator import kernel as K
from simkit.evaluator.api import evaluate
from simkit.evaluator.explain import explain
from simkit.evaluator.patterns import pattern_names
from simkit.exposed import exposed_arrays, format_exposed, parse_exposed
from simkit.rules import RuleSet


def _record_rules(record: dict[str, Any], base_rules: RuleSet, base_dict: dict[str, Any] | None = None) -> RuleSet:
    """The record's rule set: ``base_rules`` (whose ``to_dict()`` is ``base_dict``, if given)
    with the record's ``"rules"`` object applied."""
    rules = base_rules
    if record.get("rules"):
        merged = base_rules.to_dict() if base_dict is None else dict(base_dict)
        extra = record["rules"]
        if not isinstance(extra, dict):
            raise SimkitError("'rules' must be an object of option names")
        unknown = sorted(set(extra) - set(merged))
        if unknown:
            raise SimkitError(f"unknown rule option {unknown[0]!r}")
        merged.update(extra)
        rules = RuleSet.from_dict(merged)
    return rules


def _record_texts(record: dict[str, Any]) -> tuple[str, str]:
    hand = record.get("hand")
    if not isinstance(hand, str):
        raise SimkitError("'hand' must be a string of cards")
    exposed = record.get("exposed") or ""
    if not isinstance(exposed, str):
        raise SimkitError("'exposed' must be a string of kind:cards groups")
    return hand, exposed


def _too_many_cards(n: int) -> SimkitError:
    return SimkitError(f"a holding has at most {DEALER_CARDS} cards (concealed and exposed), got {n}")


def check_holding_size(hand: str, exposed: str) -> None:
    """A holding has at most the dealer's 31 cards, concealed and exposed together."""
    n = int(parse_counts(hand).sum()) + sum(group.n_cards for group in parse_exposed(exposed))
    if n > DEALER_CARDS:
        raise _too_many_cards(n)


def score_record(record: dict[str, Any], base_rules: RuleSet) -> dict[str, Any]:
    """One record's ``simkit score`` mapping, through :func:`simkit.evaluator.evaluate` (the
    reference of :func:`score_records`)."""
    rules = _record_rules(record, base_rules)
    hand, exposed = _record_texts(record)
    check_holding_size(hand, exposed)
    return evaluate(hand, exposed, rules).to_dict()


@njit(cache=True, nogil=True)
def evaluate_rows_kernel(conc, exposed, n_chow, exposed_row, rules, rules_row, out, choice):
    """Evaluate holding i = ``conc[i]`` with the exposed groups ``exposed[exposed_row[i]]``,
    ``n_chow[exposed_row[i]]`` and the rule set ``rules[rules_row[i]]`` (patterns always
    computed, as :func:`simkit.evaluator.evaluate` does): ``out[i]`` gets its ``OUT_*``
    fields, ``choice[i]`` its best decomposition.  One thread: a scored file's time is
    Python's, and a plain kernel compiles in a fraction of a parallel one's time."""
    work = np.empty(K.WORK_SIZE, dtype=np.int64)
    for i in range(conc.shape[0]):
        e = exposed_row[i]
        K.evaluate_kernel(conc[i], exposed[e], n_chow[e], rules[rules_row[i]], 1, out[i], choice[i], work)


class _Exposed:
    """One distinct ``exposed`` string, parsed once: its groups, their card counts per type,
    their kernel form and their canonical text."""

    __slots__ = ("groups", "n_cards", "cards", "row", "text")

    def __init__(self, text: str, row: int, items: dict[str, list]) -> None:
        # parse_exposed reads each item on its own: parse each distinct item once
        groups = []
        texts = []
        for item in text.split():
            parsed = items.get(item)
            if parsed is None:
                group = parse_exposed(item)
                parsed = items[item] = (group, format_exposed(group))
            groups.extend(parsed[0])
            texts.append(parsed[1])
        self.groups = tuple(groups)
        self.n_cards = sum(group.n_cards for group in self.groups)
        cards: dict[int, int] = {}
        for group in self.groups:
            if group.kind == "chow":
                for t in group.types:
                    cards[t] = cards.get(t, 0) + 1
            else:
                cards[group.types[0]] = cards.get(group.types[0], 0) + group.n_cards
        self.cards = sorted(cards.items())  # (type, exposed cards), types in order
        self.row = row
        self.text = " ".join(texts)  # format_exposed(self.groups)


_HAND_TOKEN = tuple(tuple(["", name] + [f"{name}*{k}" for k in range(2, 5)]) for name in TYPE_NAMES)


def _hand_text(counts: list[int]) -> str:
    """:func:`simkit.cards.format_counts` of a holding's counts (at most 4 of a type)."""
    return " ".join([_HAND_TOKEN[t][n] for t, n in enumerate(counts) if n])


def score_records(records: Iterable[tuple[int, dict[str, Any]]], base_rules: RuleSet, source: str) -> str:
    """The ``simkit score`` JSON lines of ``(line number, record)`` pairs, batched (see the
    module docstring); byte for byte the lines of :func:`score_record`.  The first invalid
    record raises ``SimkitError("<source> line <n>: <why>")`` and nothing is evaluated."""
    # millions of small lists and strings, none of them in a reference cycle: the cyclic
    # garbage collector would only rescan them (a third of the time), so it pauses meanwhile
    paused = gc.isenabled()
    gc.disable()
    try:
        return _score_records(records, base_rules, source)
    finally:
        if paused:
            gc.enable()


def _score_records(records: Iterable[tuple[int, dict[str, Any]]], base_rules: RuleSet, source: str) -> str:
    base_dict = base_rules.to_dict()
    rule_sets: dict[str, int] = {}  # record rules (canonical JSON) -> row of rules_table
    rules_list: list[RuleSet] = []
    rules_index: dict[RuleSet, int] = {}
    exposed_cache: dict[str, _Exposed] = {}
    exposed_items: dict[str, list] = {}
    exposed_list: list[_Exposed] = []
    counts_rows: list[list[int]] = []
    exp_rows: list[int] = []
    rule_rows: list[int] = []
    for lineno, record in records:
        try:
            extra = record.get("rules")
            # the record's rule set, by the canonical JSON of its "rules" ("" for none)
            if not extra:
                key = ""
            elif isinstance(extra, dict):
                key = json.dumps(extra, sort_keys=True)
            else:
                key = None  # not an object: _record_rules raises
            r = rule_sets.get(key)
            if r is None:
                rules = _record_rules(record, base_rules, base_dict)  # raises for a bad "rules"
                r = rules_index.setdefault(rules, len(rules_list))
                if r == len(rules_list):
                    rules_list.append(rules)
                rule_sets[key] = r
            hand, exposed = _record_texts(record)
            counts = parse_count_list(hand)
            ex = exposed_cache.get(exposed)
            if ex is None:
                ex = exposed_cache[exposed] = _Exposed(exposed, len(exposed_list), exposed_items)
                exposed_list.append(ex)
            n = sum(counts) + ex.n_cards
            if n > DEALER_CARDS:
                raise _too_many_cards(n)
            for t, k in ex.cards:
                if counts[t] + k > N_COPIES:
                    raise CardError(f"{counts[t] + k} copies of {TYPE_NAMES[t]} across hand and exposed groups "
                                    f"(at most {N_COPIES} exist)")
        except SimkitError as exc:
            raise SimkitError(f"{source} line {lineno}: {exc}") from None
        counts_rows.append(counts)
        exp_rows.append(ex.row)
        rule_rows.append(r)
    n = len(counts_rows)
    if n == 0:
        return ""
    conc = np.array(counts_rows, dtype=np.int64).reshape(n, N_TYPES)
    exposed_table = np.zeros((len(exposed_list), K.N_EXP_ROWS, N_TYPES), dtype=np.int64)
    n_chow = np.zeros(len(exposed_list), dtype=np.int64)
    for ex in exposed_list:
        exposed_table[ex.row], n_chow[ex.row] = exposed_arrays(ex.groups)
    rules_table = np.stack([rules.to_array() for rules in rules_list])
    out = np.zeros((n, K.N_OUT), dtype=np.int64)
    choice = np.zeros((n, K.N_CHOICE), dtype=np.int64)
    evaluate_rows_kernel(conc, exposed_table, n_chow, np.array(exp_rows, dtype=np.int64), rules_table,
                         np.array(rule_rows, dtype=np.int64), out, choice)
    # each line as json.dumps(score_record(...), ensure_ascii=False) writes it: the hand, the
    # exposed groups, pattern and rule names are plain ASCII names, the best lines carry no
    # character JSON escapes, and the pattern list and rules object are built once each
    rules_json = [json.dumps(rules.to_dict(), ensure_ascii=False) for rules in rules_list]
    rules_rows = rules_table.tolist()
    patterns: dict[int, str] = {}
    lines = []
    dumps = json.dumps
    for o, counts, choice_row, e, r in zip(out.tolist(), counts_rows, choice.tolist(), exp_rows, rule_rows):
        ex = exposed_list[e]
        mask = o[K.OUT_PATTERNS]
        names = patterns.get(mask)
        if names is None:
            names = patterns[mask] = dumps(list(pattern_names(mask)))
        if o[K.OUT_COMPLETE] == 1:
            verdict = f'true, "hu": {o[K.OUT_HU]}'
            best = dumps(explain(counts, ex.groups, rules_rows[r], choice_row), ensure_ascii=False)
        else:
            verdict = 'false, "hu": null'
            best = "null"
        lines.append(
            f'{{"hand": "{_hand_text(counts)}", "exposed": "{ex.text}", "complete": {verdict}, '
            f'"lou": {o[K.OUT_LOU]}, "steps": {o[K.OUT_STEPS]}, "units": {o[K.OUT_UNITS]}, '
            f'"wins": {"true" if o[K.OUT_WINS] == 1 else "false"}, "patterns": {names}, '
            f'"min_idle": {o[K.OUT_MIN_IDLE]}, "best": {best}, "rules": {rules_json[r]}}}\n'
        )
    return "".join(lines)
