"""A review's one headline: the game's result split into skill and luck, the agreement with the
reference, and whom the player played like.

For seat S of a replay log (its true cards known) reviewed against a reference policy R
(:mod:`simkit.studies.reference`):

* **result**: S's payoff in the deal (牌, the log's end line);
* **luck**: what the stock's draws gave or took, the sum over the deal's draws of the shipped
  value model's correction for S (:mod:`simkit.runner.luck`: the value after the card drawn
  minus its mean over the cards that could have come; mean zero whatever the play), computed by
  :func:`log_luck` from the log's cards and moves;
* **skill**: the loss against R (:class:`~simkit.studies.reference.ReferenceReview`: what R in
  S's seat would have gained, calibrated against paired play), per deal and per decision with a
  choice, with its interval;
* **the cards dealt**: ``result - luck + loss``: what R in S's seat would expect from the hands
  dealt (an estimate, with the noise of the other two);

so that, exactly, ``result = luck + cards dealt - loss``;

* **agreement**: the share of S's decisions with a choice at which S took the action R takes
  there (R asked at the position S saw: :attr:`~simkit.studies.reference.ReferenceLoss.reference_action`);
* **played like**: S's loss per decision and agreement beside those of the bots random, greedy,
  patient, expert and search (the strongest) reviewed the same way, from a table shipped with
  simkit (``simkit/studies/data/played_like.json``, made by ``experiments/played_like.py``, whose
  seed, deals and command it records); it is shown only when the review's settings (reference,
  stock orders per decision, default rules) are the table's, else the headline says it is not
  available for these settings.

A review with no reference review (a decision log typed in has no true cards; a replay log whose
table names a policy that is not built-in) has no luck or comparison: its headline is the loss against the analysis's picks (:mod:`simkit.studies.review`) and the
share of decisions where the chosen action was as good as the best shown
(:func:`simkit.studies.analyze.shown_verdict`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from simkit.cards import N_CARDS, N_SEATS
from simkit.engine import kernel as E
from simkit.engine.layout import EVENT_WIDTH, N_ACTIONS, N_STATE, PH_DRAW, PH_OVER, S_DEALER, S_DECK, S_PHASE
from simkit.glossary import wrap_line
from simkit.replay import log_decisions
from simkit.rules import RuleSet
from simkit.runner.luck import draw_luck, new_luck_scratch
from simkit.runner.value_model import ValueModel, load_value_model

PLAYED_LIKE_FILE = Path(__file__).resolve().parent / "data" / "played_like.json"
PLAYED_LIKE_BOTS = ("random", "greedy", "patient", "expert", "search")


# ---------------------------------------------------------------------------- the luck of a log's draws


def log_luck(lines: Sequence[str], model: ValueModel | None = None) -> np.ndarray:
    """Each seat's luck of the draws (3 numbers, 牌) in the deal a replay log records, under the
    value model ``model`` (default: the shipped one): the deal is followed with the log's moves
    (:func:`simkit.replay.log_decisions`, which checks each line against the deal) from its deck
    (the state before the first decision holds it), pausing before each stock draw for its
    correction (:func:`simkit.runner.luck.draw_luck`), as the luck of a simulated deal is
    computed (``tests/test_review_story.py`` checks the two agree)."""
    model = load_value_model() if model is None else model
    text = [line for line in lines if str(line).strip()]
    decisions = log_decisions(list(text))
    luck = np.zeros(N_SEATS, dtype=np.float64)
    if not decisions:  # a deal always has one (the dealer's first discard, or its win): nothing to follow
        return luck
    first = decisions[0].state
    deck = np.ascontiguousarray(first[S_DECK : S_DECK + N_CARDS])
    dealer = int(first[S_DEALER])
    rules_array = RuleSet.from_dict(json.loads(text[0]).get("rules", {})).to_array()
    s = np.zeros(N_STATE, dtype=np.int64)
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    work = E.new_engine_workspace()
    ev = np.zeros((0, EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    tab = new_luck_scratch()
    block = np.ascontiguousarray(model.block, dtype=np.float64)
    work[E.EW_CHANCE] = E.CHANCE_PAUSE
    E.start(s, deck, dealer, rules_array, mask, work, ev, ev_n)
    moves = iter(decisions)
    while s[S_PHASE] != PH_OVER:
        if s[S_PHASE] == PH_DRAW:
            draw_luck(s, rules_array, mask, work, tab, block, luck)
            E.advance(s, rules_array, mask, work, ev, ev_n)
            continue
        E.apply_legal(s, next(moves).action, rules_array, mask, work, ev, ev_n)
    return luck


# ---------------------------------------------------------------------------- intervals


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(0.5 + confidence / 2))


def ratio_interval(numerators: Sequence[float], denominators: Sequence[float],
                   confidence: float = 0.95) -> tuple[float, float, float]:
    """``sum(numerators) / sum(denominators)`` with its interval over the units (deals), by the
    delta method: the units independent, each unit's decisions not (a ratio estimator's
    standard error, ``sqrt(n / (n - 1) * sum((x_i - r d_i)^2)) / sum(d_i)``); NaN bounds for
    fewer than 2 units.

    >>> r, lo, hi = ratio_interval([1.0, 3.0], [2, 2])
    >>> r, lo < r < hi
    (1.0, True)
    """
    x = np.asarray(numerators, dtype=np.float64)
    d = np.asarray(denominators, dtype=np.float64)
    total = float(d.sum())
    if total <= 0:
        return math.nan, math.nan, math.nan
    r = float(x.sum()) / total
    n = x.size
    if n < 2:
        return r, math.nan, math.nan
    e = x - r * d
    se = math.sqrt(n / (n - 1) * float((e ** 2).sum())) / total
    half = _z(confidence) * se
    return r, r - half, r + half


# ---------------------------------------------------------------------------- the shipped table of the bots


@functools.lru_cache(maxsize=4)
def _read_table(path: str) -> dict[str, Any] | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def played_like_table(path: str | Path | None = None) -> dict[str, Any] | None:
    """The shipped table of the bots' figures (module docstring), None when missing or unreadable."""
    return _read_table(str(PLAYED_LIKE_FILE if path is None else path))


def settings_identity(reference: str, samples: int, default_rules: bool) -> dict[str, Any]:
    """What a review's figures depend on that the bots' table must share: the reference, the
    stock orders per decision, and the rules (the default ones)."""
    return {"reference": str(reference), "samples": int(samples), "rules": "default" if default_rules else "other"}


def played_like(reference: str, samples: int, default_rules: bool,
                path: str | Path | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """(the bots' rows, None) when the shipped table was made under the same settings
    (:func:`settings_identity`), else ([], why not)."""
    table = played_like_table(path)
    if table is None:
        return [], "the bots' table is missing"
    want = settings_identity(reference, samples, default_rules)
    if table.get("settings") != want:
        have = table.get("settings") or {}
        return [], (f"not available for these settings (the bots were reviewed against {have.get('reference')} with "
                    f"{have.get('samples')} stock orders per decision and default rules; this review: against "
                    f"{want['reference']}, {want['samples']} stock orders, {want['rules']} rules)")
    return [{k: v for k, v in row.items() if k != "per_deal"} for row in table.get("bots", [])], None


# ---------------------------------------------------------------------------- the headline


@dataclasses.dataclass(frozen=True)
class Headline:
    """A review's headline (module docstring).  ``source``: ``reference`` (a replay log reviewed
    against ``reference``) or ``analysis`` (a typed decision log: skill is the loss against the
    analysis's picks, agreement the share as good as the best; no result, luck or comparison)."""

    seat: int
    source: str
    reference: str
    decisions: int
    loss: float
    loss_lo: float
    loss_hi: float
    agree: int
    confidence: float = 0.95
    result: float = math.nan
    luck: float = math.nan
    luck_model: str | None = None
    bots: tuple[dict[str, Any], ...] = ()
    bots_note: str | None = None
    bots_about: str | None = None

    @property
    def per_decision(self) -> tuple[float, float, float]:
        n = self.decisions
        return (self.loss / n, self.loss_lo / n, self.loss_hi / n) if n else (math.nan,) * 3

    @property
    def agreement(self) -> float:
        return self.agree / self.decisions if self.decisions else math.nan

    @property
    def dealt(self) -> float:
        """The cards dealt: ``result - luck + loss`` (so ``result = luck + dealt - loss``)."""
        return self.result - self.luck + self.loss

    def closest(self) -> str | None:
        """The bot whose loss per decision is nearest the player's (None without bots)."""
        if not self.bots or not math.isfinite(self.per_decision[0]):
            return None
        return min(self.bots, key=lambda b: abs(b["loss_per_decision"] - self.per_decision[0]))["bot"]

    def to_dict(self) -> dict[str, Any]:
        per, per_lo, per_hi = self.per_decision
        data = {"seat": self.seat, "source": self.source, "reference": self.reference, "decisions": self.decisions,
                "confidence": self.confidence,
                "skill": {"loss": self.loss, "loss_lo": self.loss_lo, "loss_hi": self.loss_hi,
                          "loss_per_decision": per, "loss_per_decision_lo": per_lo, "loss_per_decision_hi": per_hi},
                "agreement": {"agree": self.agree, "decisions": self.decisions, "share": self.agreement,
                              "with": "reference" if self.source == "reference" else "as good as the best"},
                "result": self.result, "luck": self.luck, "dealt": self.dealt, "luck_model": self.luck_model,
                "played_like": {"bots": list(self.bots), "note": self.bots_note, "about": self.bots_about,
                                "closest": self.closest()}}
        return data

    def lines(self) -> list[str]:
        """The headline as text lines of at most 80 columns."""
        level = f"{self.confidence:.0%}"
        per, per_lo, per_hi = self.per_decision
        out = []
        against = self.reference if self.source == "reference" else "the analysis's picks"
        if self.source == "reference" and math.isfinite(self.result) and math.isfinite(self.luck):
            out.append(f"seat {self.seat}: result {self.result:+.3f} 牌")
            out.append(f"  = luck {self.luck:+.3f} + cards dealt {self.dealt:+.3f} - skill loss {self.loss:.3f}")
            out.append("  luck: what the draws gave or took (the shipped value model)")
            out.append(f"  cards dealt: what {self.reference} would expect here from these hands")
            out.append("    (result - luck + loss)")
        else:
            out.append(f"seat {self.seat}: no result or luck: no review against a reference (that needs a replay "
                       "log whose table plays built-in policies)")
        out.append(f"  skill: lost {self.loss:.3f} [{self.loss_lo:.3f}, {self.loss_hi:.3f}] 牌 against {against} "
                   f"({level})")
        out.append(f"    {per:.3f} [{per_lo:.3f}, {per_hi:.3f}] per decision, {self.decisions} decisions with a "
                   "choice")
        what = f"took {self.reference}'s action" if self.source == "reference" else "as good as the best"
        out.append(f"  agreement: {self.agree} of {self.decisions} ({self.agreement:.0%}) {what}")
        if self.bots:
            out.append(f"  played like (loss per decision against {self.reference}, agreement):")
            out.append(f"    {'you':<8} {per:>6.3f} [{per_lo:.3f}, {per_hi:.3f}]  {self.agreement:>4.0%}")
            for b in self.bots:
                out.append(f"    {b['bot']:<8} {b['loss_per_decision']:>6.3f} [{b['loss_per_decision_lo']:.3f}, "
                           f"{b['loss_per_decision_hi']:.3f}]  {b['agreement']:>4.0%}")
            out.append(f"    closest: {self.closest()}; {self.bots_about}")
        elif self.bots_note:
            out.append(f"  played like: {self.bots_note}")
        return _wrapped(out)


def _wrapped(lines: list[str], width: int = 80) -> list[str]:
    """``lines``, each wider than ``width`` columns wrapped, its continuation indented two more spaces."""
    out = []
    for line in lines:
        indent = " " * (len(line) - len(line.lstrip()))
        out += wrap_line(line, width, indent + "  ")
    return out


def reference_headline(review: Any) -> Headline:
    """The headline of a :class:`~simkit.studies.review.GameReview` that has its reference
    review (a replay log)."""
    r = review.reference
    lo, hi = r.total_interval()
    bots, note = played_like(r.reference, r.samples, r.default_rules)
    table = played_like_table() if bots else None
    about = None
    if table:
        about = (f"bots: {table['deals']} deals each in seat {table['table']['seat']} against "
                 f"{', '.join(table['table']['others'])}, {table['settings']['samples']} stock orders "
                 f"({table['command']})")
    return Headline(seat=r.seat, source="reference", reference=r.reference, decisions=len(r.decisions),
                    loss=r.total, loss_lo=lo, loss_hi=hi, agree=r.agree, confidence=r.confidence, result=r.result,
                    luck=r.luck, luck_model=r.luck_model, bots=tuple(bots), bots_note=note, bots_about=about)


def analysis_headline(review: Any) -> Headline:
    """The headline of a review with no reference review (a typed decision log)."""
    lo, hi = review.total_interval()
    return Headline(seat=review.seat, source="analysis", reference="the best action", decisions=len(review.decisions),
                    loss=review.total_loss, loss_lo=lo, loss_hi=hi,
                    agree=sum(d.as_good_as_best for d in review.decisions), confidence=review.confidence,
                    bots_note="not available without a review against a reference (the bots were measured "
                              "against one)")


def headline(review: Any) -> Headline:
    """:func:`reference_headline` when the review has its reference review, else
    :func:`analysis_headline`."""
    return reference_headline(review) if review.reference is not None else analysis_headline(review)
