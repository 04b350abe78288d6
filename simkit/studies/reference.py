"""What a seat lost against a reference policy, decision by decision: the performance-difference
identity, estimated from the true states of a replay log.

For a seat that played policy X in a deal, let ``s_t`` be the states at its decisions and
``a_t`` its actions.  With ``Q(s, a)`` the expected payoff of the seat when it takes ``a`` in
``s`` and from then on the *reference* policy plays the seat (the table's policies the other
seats), and ``V(s)`` the same with the reference also taking the decision at ``s``, the
performance-difference identity (Kakade and Langford 2002, for any finite game) says

    E[ sum_t V(s_t) - Q(s_t, a_t) ] = E[payoff with the reference in the seat] - E[payoff with X],

the expectation over the deals (and their chance) as X plays them.  So the *reference loss*
of a deal, ``sum_t V(s_t) - Q(s_t, a_t)``, is an unbiased estimate of what the seat lost by
playing X instead of the reference; its mean over deals is checked against paired play (the
same deals with the reference in the seat) by :func:`calibrate` (``simkit calibrate``).

``V`` and ``Q`` are estimated from the log's *true* state (every hand as dealt and played,
which a replay log records) by rollouts that keep every hand and reorder only the stock's
remaining cards (:func:`simkit.runner.rollout.rollouts` with ``known``): no policy sees the
stock, so given the deal so far its order is uniform.  Both actions of a decision share each
sample's stock order and policy streams (common random numbers), so a decision where the seat
did what a deterministic reference does costs exactly 0.  Decision ``k``'s samples are
``k * samples ..`` of a seed of the deal's own (:func:`simkit.rng.deal_review_seed` of the
review's seed and the deal line's seed and deal number): the rollouts are keyed by (seed, deal,
decision), so they are independent between decisions, whose standard errors the deal's adds in
quadrature, and between deals, which :func:`calibrate`'s intervals over deals take as
independent.

Unlike a loss "against the best action" (:mod:`simkit.studies.review`), this loss needs no
argmax over noisy estimates (no winner's curse) and no belief over hidden cards; it measures
the gap to a named policy, never to an unknown optimum.  Nothing named in a log is imported or
opened: the table's policies must be built-in (:func:`simkit.policies.registry.builtin_names`,
``search`` and parameters such as ``mc:rollouts=8`` included), and ``learned:PATH`` is refused
before PATH is touched (:func:`table_from_log`); ``simkit review`` then goes on without the loss
against the default reference, saying why in one line (an explicitly named ``--reference`` fails
in one line).  The reference and :func:`calibrate`'s policy come from the user, not from a log:
any policy the rollouts play (:func:`reference_policy`: every built-in name, parameterised or not,
and ``learned:PATH``) may be the reference, and any compiled policy (an import path, a model file)
may be the policy :func:`calibrate` plays in the seat.

**A search reference** (``search``, any ``mc:...``): its rollouts would run a search at every
decision of every rollout, about a thousand times the cost of expert's.  So a search reference
decides the reviewed decision itself, as it would in play (its own determinisations of the
position, from stream :data:`~simkit.rng.STREAM_REFERENCE` keyed by the deal's review seed and
the decision), and the rollouts of both actions continue with each search seat's base policy
(``expert`` for ``search``; :func:`rollout_stand_in`).  ``V`` is then the value of the search's
choice with its base continuing, not with the search continuing: what the search adds at the
later decisions is left out of both ``V`` and ``Q`` alike, so the difference keeps its meaning
(the bias intervals of ``calibrate P --reference search`` are in reports/search_strength).
Cost per reviewed decision: expert's (2 x ``samples`` rollouts, about 3 ms at 64) plus one
search (about 0.1 s for ``search``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from simkit.analysis.plots import calibration_plot, save_figure
from simkit.analysis.results import Interval, finite_or_none
from simkit.analysis.stats import check_confidence, mean_interval, t_interval_or_nan
from simkit.cards import N_SEATS
from simkit.progress import Progress
from simkit.defaults import DEFAULT_REFERENCE, DEFAULT_SAMPLES
from simkit.engine.position import action_text, decision_kind
from simkit.errors import SimkitError
from simkit.engine.layout import N_ACTIONS
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.dispatch import builtin_act
from simkit.policies.mc import BASE_EXPERT
from simkit.policies.registry import (LEARNED, PolicyError, PolicySpec, builtin_names, builtin_policy_name,
                                      effective_params, param_index, parse_policy, policy_arrays, policy_label)
from simkit.replay import LoggedDecision, log_decisions, replay_jsonl
from simkit.rng import STREAM_REFERENCE, deal_review_seed, root_key, stream_state
from simkit.rules import RuleSet
from simkit.runner.rollout import OUT_ERROR, OUT_PAYOFF, POLICY_DECIDES, rollout_policy_arrays, rollouts
from simkit.runner.value_model import load_value_model
from simkit.specs.base import Execution
from simkit.specs.calibrate import CalibrateSpec
from simkit.studies.headline import log_luck
from simkit.storage.files import write_json, write_parquet, write_text
from simkit.storage.lock import FolderLock
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import CALIBRATION_FILE, check_run_folder



@dataclasses.dataclass(frozen=True)
class ReferenceLoss:
    """One decision: the action taken, the reference's value of the state and of the action,
    their difference (the loss, 牌) with its standard error and interval."""

    index: int
    line: int
    kind: str
    chosen: str
    value: float  # V(s): the reference decides
    chosen_value: float  # Q(s, chosen)
    loss: float
    se: float
    lo: float
    hi: float
    samples: int
    # the action the reference takes at the position the seat saw (its random numbers from
    # STREAM_REFERENCE keyed by the deal's review seed and the decision): "" where not asked
    reference_action: str = ""

    @property
    def agrees(self) -> bool:
        """The seat took the reference's action."""
        return self.reference_action == self.chosen


@dataclasses.dataclass(frozen=True)
class ReferenceReview:
    """A seat's decisions in one deal against the reference, and the deal's total."""

    seat: int
    reference: str
    table: tuple[str, ...]
    seed: int
    samples: int
    confidence: float
    decisions: tuple[ReferenceLoss, ...]
    # from the log (review_against_reference): the seat's payoff in the deal, its luck of the draws
    # under the shipped value model (simkit.studies.headline.log_luck) and that model's description;
    # whether the deal was played under the default rules (the bots' table of the headline is)
    result: float = math.nan
    luck: float = math.nan
    luck_model: str | None = None
    default_rules: bool = True

    @property
    def total(self) -> float:
        return float(sum(d.loss for d in self.decisions))

    @property
    def agree(self) -> int:
        """The decisions at which the seat took the reference's action."""
        return sum(d.agrees for d in self.decisions)

    @property
    def total_se(self) -> float:
        return float(math.sqrt(sum(d.se ** 2 for d in self.decisions)))

    def total_interval(self) -> tuple[float, float]:
        half = _z(self.confidence) * self.total_se
        return self.total - half, self.total + half

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.total_interval()
        return {"seat": self.seat, "reference": self.reference, "table": list(self.table), "seed": self.seed,
                "samples": self.samples, "confidence": self.confidence, "total": self.total, "total_se": self.total_se,
                "total_lo": lo, "total_hi": hi, "agree": self.agree, "result": self.result, "luck": self.luck,
                "luck_model": self.luck_model, "default_rules": self.default_rules,
                "decisions": [dict(dataclasses.asdict(d), agrees=d.agrees) for d in self.decisions]}


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(0.5 + confidence / 2))


def _check_confidence(confidence: float) -> float:
    """:func:`~simkit.analysis.stats.check_confidence`, as a one-line :class:`SimkitError`."""
    try:
        return check_confidence(confidence)
    except ValueError as exc:
        raise SimkitError(str(exc), parameters=("confidence",)) from None


def _check_count(value: object, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < least:
        raise SimkitError(f"{name} must be an integer >= {least}, got {value!r}", parameters=(name,))
    return int(value)


class NotBuiltinPolicyError(SimkitError):
    """A policy named where only simkit's built-in policies are taken (a log's deal line)."""


class LogPolicyError(NotBuiltinPolicyError):
    """A policy in a log's deal line that is no built-in one (:func:`builtin_policy` with
    ``from_log``): the rollouts of a review against a reference cannot seat it, and a review
    that asked for no particular reference goes on without that loss."""


def builtin_policy(text: str, where: str, from_log: bool = False) -> PolicySpec:
    """A built-in policy named in ``where`` (a log's deal line, say), parsed without importing
    anything: a name that is not one of simkit's built-in policies
    (:func:`~simkit.policies.registry.builtin_names`: ``search`` too, with or without parameters)
    is refused in one line.  ``from_log``: ``text`` comes from a file simkit reads (a log), which
    must never make it open a file either: ``learned:PATH`` (a model file) is refused before PATH
    is touched."""
    name = str(text).partition(":")[0].strip()
    error = LogPolicyError if from_log else NotBuiltinPolicyError
    if from_log and name == LEARNED and str(text).strip() != LEARNED:
        raise error(f"{where}: policy {_shown(text)} names a model file; nothing named in a log is "
                                    "opened or imported")
    builtin = builtin_names()
    if name not in builtin:
        raise error(f"{where}: policy {_shown(text)} is not one of simkit's built-in policies "
                                    f"({', '.join(builtin)}); nothing named in a log is imported")
    return parse_policy(str(text))


def reference_policy(policy: str | PolicySpec, where: str = "the reference") -> PolicySpec:
    """A reference named by the user (not by a log): any policy the rollouts play, every
    built-in name with or without parameters (``search``, ``mc:rollouts=8``,
    ``expert:danger=20``) and ``learned:PATH``; a user policy by import path is refused in one
    line saying why (the rollouts run in one compiled kernel of built-in policies)."""
    spec = parse_policy(policy) if isinstance(policy, str) else policy
    try:
        rollout_policy_arrays(spec)
    except PolicyError as exc:
        raise PolicyError(f"{where}: {exc} (it plays the rollouts of every decision)") from None
    return spec


def seat_policy(policy: str | PolicySpec, where: str = "the policy") -> PolicySpec:
    """The policy :func:`calibrate` plays in the seat, named by the user: any compiled policy (a
    built-in name with or without parameters, ``learned:PATH``, a user ``@njit`` policy by import
    path); a Python policy is refused in one line (the deals are replay logs, played compiled)."""
    spec = parse_policy(policy) if isinstance(policy, str) else policy
    try:
        policy_arrays([spec] * N_SEATS)
    except PolicyError as exc:
        raise PolicyError(f"{where}: {exc}") from None
    return spec


def _shown(text: str) -> str:
    """A policy name from a file, in a message (200 characters at most)."""
    shown = repr(str(text))
    return shown if len(shown) <= 200 else shown[:197] + "..."


def table_from_log(header: dict[str, Any], seat: int, reference: PolicySpec) -> tuple[PolicySpec, ...]:
    """The policies of the rollouts: the log's (by seat, as played) with ``reference`` in
    ``seat``; each other seat's must be built-in (:func:`builtin_policy`).  The seat's own
    policy never plays in them (its actions are the log's, then the reference's), so it may be
    anything: a person's seat (``human``, :mod:`simkit.studies.table`) included."""
    policies = header.get("policies")
    if not isinstance(policies, list) or len(policies) != N_SEATS:
        raise SimkitError("the log's deal line names no three policies (by seat): a review against a reference "
                          "continues with the table's policies")
    return tuple(reference if k == seat else builtin_policy(p, "the log's deal line", from_log=True)
                 for k, p in enumerate(policies))


def review_against_reference(
    lines: Sequence[str],
    seat: int,
    reference: str | PolicySpec = DEFAULT_REFERENCE,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
    workers: int = 1,
    decisions: Sequence[LoggedDecision] | None = None,
) -> ReferenceReview:
    """The reference loss of seat ``seat``'s decisions in a replay log (module docstring).
    ``decisions``: the log's decisions when already followed (:func:`simkit.replay.log_decisions`).
    A pure function of its arguments, whatever ``workers``; the rollouts draw from the deal's own
    seed (:func:`simkit.rng.deal_review_seed`: ``seed`` and the deal line's seed and deal)."""
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < N_SEATS:
        raise SimkitError(f"seat must be 0, 1 or 2, got {seat!r}", parameters=("seat",))
    samples = _check_count(samples, "samples", 2)
    seed = _check_count(seed, "seed", 0)
    workers = _check_count(workers, "workers", 1)
    confidence = _check_confidence(confidence)
    spec = reference_policy(reference)
    text_lines, header = _deal_log(lines)
    measure = _Measure(int(seat), spec, table_from_log(header, int(seat), spec), samples, seed, confidence)
    review = _review(text_lines, header, measure, workers, decisions, actions=True)
    return dataclasses.replace(review, **_deal_result(text_lines, header, int(seat)))


def _deal_result(text_lines: list[str], header: dict[str, Any], seat: int) -> dict[str, Any]:
    """The seat's payoff in the logged deal, its luck of the draws under the shipped value model
    (:func:`simkit.studies.headline.log_luck`) and whether the rules are the default ones."""
    model = load_value_model()
    try:
        result = float(json.loads(text_lines[-1])["payoffs"][seat])
    except (ValueError, KeyError, TypeError, IndexError):
        result = math.nan
    return {"result": result, "luck": float(log_luck(text_lines, model)[seat]), "luck_model": model.describe(),
            "default_rules": rules_of(header) == RuleSet()}


def _deal_log(lines: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """A replay log's non-blank lines and its deal line (a one-line error for anything else)."""
    text_lines = [line for line in lines if str(line).strip()]
    if not text_lines:
        raise SimkitError("the log is empty")
    try:
        header = json.loads(text_lines[0])
    except (json.JSONDecodeError, RecursionError):
        raise SimkitError("line 1: not JSON") from None
    if not isinstance(header, dict) or header.get("event") != "deal":
        raise SimkitError("a review against a reference needs a simkit replay log (first line: the deal), whose "
                          "hands it rolls out from")
    return text_lines, header


@dataclasses.dataclass(frozen=True)
class _Measure:
    """What a review against a reference measures with (checked): the ``seat`` reviewed, the
    ``reference``, the rollouts' ``table`` (the log's, or the one :func:`calibrate` played the deal
    with), ``samples`` stock orders per decision, the review ``seed`` and the ``confidence``."""

    seat: int
    reference: PolicySpec
    table: tuple[PolicySpec, ...]
    samples: int
    seed: int
    confidence: float


def _review(text_lines: list[str], header: dict[str, Any], measure: _Measure, workers: int,
            decisions: Sequence[LoggedDecision] | None = None, actions: bool = False) -> ReferenceReview:
    """:func:`review_against_reference` of checked arguments (``measure``); ``actions``: also ask
    the reference its action at each decision (:attr:`ReferenceLoss.reference_action`; a search
    reference's is the one it decides with)."""
    seat, spec, table = measure.seat, measure.reference, measure.table
    samples, seed, confidence = measure.samples, measure.seed, measure.confidence
    rules = rules_of(header)
    rollout_table = tuple(rollout_stand_in(p) for p in table)
    decides = reference_decider(spec, rules) if rollout_stand_in(spec) != spec else None
    asks = decides if decides is not None else reference_decider(spec, rules) if actions else None
    rollout_seed = deal_review_seed(seed, *deal_identity(header))
    if decisions is None:
        decisions = log_decisions(list(text_lines))
    z = _z(confidence)
    rows = []
    for d in decisions:
        if d.seat != seat:
            continue
        legal = d.position.legal_actions()
        if len(legal) < 2:
            continue
        first = POLICY_DECIDES if decides is None else decides(d, rollout_seed)
        own = first if decides is not None else asks(d, rollout_seed) if asks is not None else None
        out = rollouts(d.position.observation(), [first, d.action], [True, True], d.index * samples, samples,
                       rollout_seed, rollout_table, rules, workers=workers, known=d.state)
        if (out[..., OUT_ERROR] != 0).any():
            raise SimkitError(f"decision {d.index}: a rollout stopped early (error code "
                              f"{int(out[..., OUT_ERROR][out[..., OUT_ERROR] != 0][0])})")
        value, chosen = out[0, :, OUT_PAYOFF], out[1, :, OUT_PAYOFF]
        difference = value - chosen
        loss = float(difference.mean())
        se = float(difference.std(ddof=1) / math.sqrt(samples))
        rows.append(ReferenceLoss(index=d.index, line=d.line, kind=decision_kind(d.position),
                                  chosen=action_text(d.action, d.position), value=float(value.mean()),
                                  chosen_value=float(chosen.mean()), loss=loss, se=se, lo=loss - z * se,
                                  hi=loss + z * se, samples=samples,
                                  reference_action="" if own is None else action_text(int(own), d.position)))
    return ReferenceReview(seat=int(seat), reference=policy_label(spec), table=tuple(policy_label(p) for p in table),
                           seed=seed, samples=samples, confidence=confidence, decisions=tuple(rows))


def rollout_stand_in(spec: PolicySpec) -> PolicySpec:
    """The policy that plays ``spec``'s seat in a review's rollouts: ``spec`` itself, except a
    search (``mc``'s family: ``search``, ``mc:...``), which its base policy stands in for
    (``expert`` when its ``base`` is 1, else ``greedy``; module docstring).

    >>> rollout_stand_in(parse_policy("search")).name, rollout_stand_in(parse_policy("mc")).name
    ('expert', 'greedy')
    >>> rollout_stand_in(parse_policy("patient:min_units=3")).text()
    'patient:3'
    """
    if spec.is_import_path or builtin_policy_name(int(policy_arrays([spec] * N_SEATS)[0][0])) != "mc":
        return spec
    base = effective_params(spec)[param_index("mc", "base")]
    return parse_policy("expert" if int(base) == BASE_EXPERT else "greedy")


def reference_decider(spec: PolicySpec, rules: RuleSet) -> Callable[[LoggedDecision, int], int]:
    """``decide(decision, rollout_seed)``: the action a search reference ``spec`` takes at a logged
    decision, from the position the player saw (not the log's true state), its random numbers from
    :data:`~simkit.rng.STREAM_REFERENCE` keyed by ``rollout_seed`` and the decision's index."""
    ids, params, _ = policy_arrays([spec] * N_SEATS)
    rules_array = rules.to_array()

    def decide(d: LoggedDecision, rollout_seed: int) -> int:
        mask = np.zeros(N_ACTIONS, dtype=np.bool_)
        mask[list(d.position.legal_actions())] = True
        rng = np.empty(4, dtype=np.uint64)
        stream_state(root_key(rollout_seed), d.index, STREAM_REFERENCE, rng)
        work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
        return int(builtin_act(int(ids[0]), d.position.observation(), mask, params[0], rng, rules_array, work))

    return decide


def rules_of(header: dict[str, Any]) -> RuleSet:
    """The rules of a log's deal line."""
    return RuleSet.from_dict(header.get("rules", {}))


def deal_identity(header: dict[str, Any]) -> tuple[int, int]:
    """(seed, deal number) of a log's deal line: what a review keys the deal's rollouts by."""
    identity = header.get("seed"), header.get("deal")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in identity):
        raise SimkitError("the log's deal line names no seed and deal number (integers >= 0): a review against a "
                          "reference keys the deal's rollouts by them")
    return identity


# ---------------------------------------------------------------------------- calibration against paired play


def interval_text(interval: Interval, digits: int = 3) -> str:
    """``+m [+lo, +hi]`` of an interval."""
    return f"{interval.estimate:+.{digits}f} [{interval.lo:+.{digits}f}, {interval.hi:+.{digits}f}]"


@dataclasses.dataclass(frozen=True)
class Calibration:
    """Predicted losses (the reference review of each deal as X played it) against realised
    ones (the same deal with the reference in the seat, minus the deal as X played it), per
    deal; the headline intervals compare their means."""

    policy: str
    reference: str
    seat: int
    seed: int
    first_deal: int
    samples: int
    confidence: float
    predicted: np.ndarray
    predicted_se: np.ndarray
    realised: np.ndarray
    decisions: np.ndarray  # the seat's reviewed decisions per deal
    # CPU seconds of each deal's two plays (the policy in the seat; the reference there), in the
    # process that played them; None where not measured (a calibration read back from an older file)
    cpu_played: np.ndarray | None = dataclasses.field(default=None, compare=False)
    cpu_reference: np.ndarray | None = dataclasses.field(default=None, compare=False)

    def cpu_per_decision(self) -> float:
        """The policy's CPU seconds per reviewed decision of its seat (a decision with a choice):
        the plays with the policy in the seat minus those with the reference there, over the
        seat's decisions; NaN when not measured."""
        if self.cpu_played is None or self.cpu_reference is None or not self.decisions.sum():
            return math.nan
        return float((self.cpu_played.sum() - self.cpu_reference.sum()) / self.decisions.sum())

    @property
    def deals(self) -> int:
        return int(self.predicted.size)

    def predicted_mean(self) -> Interval:
        return mean_interval(self.predicted, self.confidence)

    def realised_mean(self) -> Interval:
        return mean_interval(self.realised, self.confidence)

    def bias(self) -> Interval:
        """Mean of realised - predicted, paired by deal: 0 for a calibrated review."""
        return mean_interval(self.realised - self.predicted, self.confidence)

    def variance_ratio(self) -> float:
        """Variance of the realised paired differences over that of the predicted losses: how
        many paired deals one reviewed deal is worth for estimating the mean loss."""
        v = float(np.var(self.predicted, ddof=1))
        return float(np.var(self.realised, ddof=1)) / v if v > 0 else math.inf

    def calibrated(self) -> bool:
        """Each mean lies within the other's interval (the issue's criterion)."""
        p, r = self.predicted_mean(), self.realised_mean()
        return r.lo <= p.estimate <= r.hi and p.lo <= r.estimate <= p.hi

    def bins(self, count: int = 5) -> list[dict[str, float]]:
        """Deals grouped by predicted loss (quantiles): each group's mean predicted and realised
        loss with the realised interval (a calibration table)."""
        order = np.argsort(self.predicted, kind="stable")
        groups = [g for g in np.array_split(order, min(count, self.deals)) if g.size]
        rows = []
        for g in groups:
            r = Interval(*t_interval_or_nan(self.realised[g], self.confidence), self.confidence, "t", int(g.size))
            rows.append({"deals": int(g.size), "predicted": float(self.predicted[g].mean()), "realised": r.estimate,
                         "realised_lo": r.lo, "realised_hi": r.hi})
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "reference": self.reference, "seat": self.seat, "seed": self.seed,
                "first_deal": self.first_deal, "deals": self.deals, "samples": self.samples,
                "confidence": self.confidence,
                "predicted": dataclasses.asdict(self.predicted_mean()),
                "realised": dataclasses.asdict(self.realised_mean()), "bias": dataclasses.asdict(self.bias()),
                "variance_ratio": self.variance_ratio(), "calibrated": self.calibrated(), "bins": self.bins(),
                "cpu_per_decision": finite_or_none(self.cpu_per_decision()),
                "per_deal": {"predicted": self.predicted.tolist(), "predicted_se": self.predicted_se.tolist(),
                             "realised": self.realised.tolist(), "decisions": self.decisions.tolist(),
                             **({"cpu_played": self.cpu_played.tolist(), "cpu_reference": self.cpu_reference.tolist()}
                                if self.cpu_played is not None and self.cpu_reference is not None else {})}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Calibration":
        """The calibration of :meth:`to_dict`'s object (its per-deal arrays; the rest recomputed)."""
        per_deal = data["per_deal"]
        cpu = {k: np.array(per_deal[k], dtype=np.float64) for k in ("cpu_played", "cpu_reference") if k in per_deal}
        return cls(policy=data["policy"], reference=data["reference"], seat=int(data["seat"]), seed=int(data["seed"]),
                   first_deal=int(data["first_deal"]), samples=int(data["samples"]),
                   confidence=float(data["confidence"]),
                   predicted=np.array(per_deal["predicted"], dtype=np.float64),
                   predicted_se=np.array(per_deal["predicted_se"], dtype=np.float64),
                   realised=np.array(per_deal["realised"], dtype=np.float64),
                   decisions=np.array(per_deal["decisions"], dtype=np.int64),
                   cpu_played=cpu.get("cpu_played"), cpu_reference=cpu.get("cpu_reference"))

    def text(self) -> str:
        lines = [f"{self.policy} in seat {self.seat} against {self.reference} (the other seats {self.reference}), "
                 f"{self.deals:,} deals from deal {self.first_deal} of seed {self.seed}, {self.samples} stock orders "
                 f"per decision:",
                 f"  predicted loss per deal (reference review) {interval_text(self.predicted_mean())} 牌",
                 f"  realised loss per deal (paired play)      {interval_text(self.realised_mean())} 牌",
                 f"  realised - predicted, paired by deal       {interval_text(self.bias())} 牌",
                 f"  calibrated (each mean within the other's {self.confidence:.0%} interval): "
                 f"{'yes' if self.calibrated() else 'NO'}; one reviewed deal is worth "
                 f"{self.variance_ratio():.1f} paired deals",
                 "  by predicted loss: " + "; ".join(f"{b['predicted']:+.2f} -> {b['realised']:+.2f} "
                                                     f"[{b['realised_lo']:+.2f}, {b['realised_hi']:+.2f}]"
                                                     for b in self.bins())]
        if math.isfinite(self.cpu_per_decision()):
            lines.append(f"  {self.policy}'s CPU per reviewed decision of seat {self.seat}: "
                         f"{self.cpu_per_decision():.4f} s (its plays minus the reference's, one core)")
        return "\n".join(lines)


def _payoff(lines: Sequence[str], seat: int) -> float:
    end = json.loads(lines[-1])
    return float(end["payoffs"][seat])


def calibrate(spec: CalibrateSpec, execution: Execution = Execution()) -> Calibration:
    """Play deals ``spec.first_deal ..`` of ``spec.seed`` twice, with ``spec.policy`` in
    ``spec.seat`` and with ``spec.reference`` there (the reference in the other seats both times,
    seats fixed, the dealer rotating by deal), review the seat's decisions of the first against
    the reference (:func:`review_against_reference`, review seed ``spec.seed``: deal N's rollouts
    are keyed by (seed, deal N, decision), so the deals' errors are independent) and compare
    predicted and realised losses deal by deal.  The policy: any compiled policy
    (:func:`seat_policy`: a built-in name with or without parameters, ``search`` included,
    ``learned:PATH``, a user ``@njit`` policy by import path); the reference: any policy the
    rollouts play (:func:`reference_policy`).  ``execution.workers``: processes, each playing
    and reviewing whole deals (the result is the same for any; ``backend`` local); progress
    (deals played and reviewed) shows unless ``execution.quiet``."""
    if not isinstance(spec, CalibrateSpec):
        raise SimkitError(f"spec must be a CalibrateSpec, got {type(spec).__name__}", parameters=("spec",))
    seat_policy(spec.policy)
    reference_policy(spec.reference)
    if execution.backend != "local":
        raise SimkitError("a calibration plays its deals in local worker processes: backend must be local",
                          parameters=("backend",))
    deals, workers = spec.deals, execution.workers
    task = functools.partial(_calibration_deal, spec)
    numbers = range(spec.first_deal, spec.first_deal + deals)
    rows = []
    if workers == 1:
        results = map(task, numbers)
    else:  # whole deals in worker processes (each keyed by its own number: the same rows, whatever workers)
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=min(workers, deals), return_as="generator")(delayed(task)(k) for k in numbers)
    with Progress(deals, "deals", "played and reviewed", not execution.quiet) as progress:
        for row in results:
            rows.append(row)
            progress.update()
    predicted, predicted_se, realised, counts, cpu_played, cpu_reference = (list(column) for column in zip(*rows))
    return Calibration(policy=policy_label(spec.policy), reference=policy_label(spec.reference), seat=spec.seat,
                       seed=spec.seed, first_deal=spec.first_deal, samples=spec.samples, confidence=spec.confidence,
                       predicted=np.array(predicted), predicted_se=np.array(predicted_se),
                       realised=np.array(realised), decisions=np.array(counts, dtype=np.int64),
                       cpu_played=np.array(cpu_played), cpu_reference=np.array(cpu_reference))


_WARM: set[tuple] = set()  # the plays whose kernels this process has run once (calibrate's clocks start warm)


def _calibration_deal(spec: CalibrateSpec, deal: int) -> tuple[float, float, float, int, float, float]:
    """Deal ``deal`` of a calibration: (predicted loss, its standard error, realised loss, decisions
    reviewed, CPU seconds of the play with the policy in the seat, of the play with the
    reference there)."""
    seat, seed, rules, reference = spec.seat, spec.seed, spec.rules, spec.reference
    dealer = deal % N_SEATS
    played = [reference] * N_SEATS
    played[seat] = spec.policy
    warm = (tuple(s.text() for s in played), reference.text(), rules.to_json())
    if warm not in _WARM:  # compile (or load) the kernels of both plays before either is timed
        replay_jsonl(seed, deal, played, rules, dealer=dealer, seating="fixed")
        replay_jsonl(seed, deal, [reference] * N_SEATS, rules, dealer=dealer, seating="fixed")
        _WARM.add(warm)
    start = time.process_time()
    lines = replay_jsonl(seed, deal, played, rules, dealer=dealer, seating="fixed").splitlines()
    middle = time.process_time()
    base = replay_jsonl(seed, deal, [reference] * N_SEATS, rules, dealer=dealer, seating="fixed").splitlines()
    end = time.process_time()
    # the table is the one the deal was played with (the reference at the other seats), not read
    # back from the log written here: any reference the rollouts play goes
    measure = _Measure(seat, reference, (reference,) * N_SEATS, spec.samples, seed, spec.confidence)
    review = _review(*_deal_log(lines), measure, 1)
    return (review.total, review.total_se, _payoff(base, seat) - _payoff(lines, seat), len(review.decisions),
            middle - start, end - middle)


def write_calibration_report(calibration: Calibration, out: str | os.PathLike) -> Path:
    """Write ``OUT/calibration.json`` (first: it marks the folder), ``deals.parquet`` (per
    deal: predicted loss, its standard error, realised loss, decisions), ``calibration.png``/
    ``.svg`` and ``report.md``; returns the report's path."""
    folder = make_out_dir(check_run_folder(out, "calibration"))
    with FolderLock(folder):
        return _write_calibration_files(calibration, folder)


def _write_calibration_files(calibration: Calibration, folder: Path) -> Path:
    """:func:`write_calibration_report`'s files, in ``folder`` (locked)."""
    write_json(folder / CALIBRATION_FILE, calibration.to_dict())
    frame = pd.DataFrame({"deal": np.arange(calibration.deals) + calibration.first_deal,
                          "predicted": calibration.predicted, "predicted_se": calibration.predicted_se,
                          "realised": calibration.realised, "decisions": calibration.decisions})
    write_parquet(frame, folder / "deals.parquet")
    save_figure(calibration_plot(calibration.bins()).figure, folder, "calibration")
    c = calibration
    level = f"{c.confidence:.0%}"
    table = ["| deals | predicted (牌) | realised (牌) | realised interval |", "|---:|---:|---:|---|"]
    table += [f"| {b['deals']} | {b['predicted']:+.3f} | {b['realised']:+.3f} | "
              f"[{b['realised_lo']:+.3f}, {b['realised_hi']:+.3f}] |" for b in c.bins()]
    md = [f"# Calibration: {c.policy} in seat {c.seat} against {c.reference}", "",
          f"{c.deals:,} deals (from deal {c.first_deal} of seed {c.seed}, seats fixed, the dealer rotating) were "
          f"played twice: with {c.policy} in seat {c.seat} and with {c.reference} there ({c.reference} in the other "
          f"seats both times). The *predicted* loss of a deal is the review of seat {c.seat}'s decisions against "
          f"{c.reference} (the performance-difference estimate, {c.samples} stock orders per decision); the "
          f"*realised* loss is the seat's payoff with {c.reference} minus its payoff with {c.policy}, on the same "
          f"cards. Intervals: {level}, Student t over deals.", "",
          f"- predicted loss per deal: {interval_text(c.predicted_mean())} 牌",
          f"- realised loss per deal: {interval_text(c.realised_mean())} 牌",
          f"- realised minus predicted, paired by deal: {interval_text(c.bias())} 牌",
          f"- calibrated (each mean within the other's interval): {'yes' if c.calibrated() else 'no'}",
          f"- variance of the realised over the predicted losses: {c.variance_ratio():.2f} (a reviewed deal is "
          f"worth that many paired deals)", "",
          "## By predicted loss", "", *table, "", "![calibration](calibration.png)", ""]
    path = folder / "report.md"
    write_text(path, "\n".join(md))
    return path
