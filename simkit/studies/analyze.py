"""``simkit analyze``: every legal action of a position, rolled out and raced.

For each legal action of a :class:`~simkit.engine.position.Position` the analysis estimates,
from rollouts over determinisations (:mod:`simkit.runner.rollout`), the player's expected
payoff (牌), P(win), P(another seat wins) and the mean units of its wins, each with an interval,
and the difference to the best action with its paired interval.

* **Determinisations** sample the hidden cards uniformly from the unseen ones consistent with
  the position (the other hands' sizes are public); the rollouts play out with ``policy`` at
  every seat (default ``expert``, the strongest fast bot).
* **Common random numbers**: every action sees the same determinisations and the same policy
  streams, so the differences between actions are paired.  ``crn_factor`` reports the variance
  of an action's difference to the best under independent samples over that under common
  ones.
* **Luck adjustment** (``luck``): with a value model each rollout's payoff is corrected by the
  luck of the player's draws (mean zero, :mod:`simkit.runner.luck`); ``luck_factor`` reports
  the variance saved on the differences.
* **Opponent model** (``sharpen``, :data:`DEFAULT_SHARPEN` steps): uniform determinisations give
  the opponents random hands, further from complete than hands kept through a deal of
  discarding, and overestimate the player's payoff by about 0.9 牌; ``mc``'s hill-climbing on
  each sampled opponent hand, at the calibrated strength, removes that bias (0: uniform).
* **Belief** (``belief``: a number of particles, 0: off): for a position of a played deal (it
  carries its public history), the hidden cards are drawn given what the other seats played,
  their moves replayed under ``policy`` (:mod:`simkit.runner.belief`); ``sharpen`` is then unused.
* **Racing**: determinisations come in rounds of ``batch``; after each round an action whose
  difference to the current best has an upper bound below 0 (at the racing level: the
  confidence Bonferroni-split over the other actions) stops as ``separated``, as GNU
  Backgammon's and mc's rollouts do, and one whose difference lies within ``± tolerance`` stops
  as ``equal``.  The analysis stops when only the best is left or ``rollouts``
  determinisations are spent.
* **Confirmation** (``confirm``, default on): the race picks the best on its determinisations, so
  its own estimate of the best's margin is biased upwards (the winner's curse: a third of the
  margin where analyze's best differed from expert's, docs/analysis.md).  Every action is then
  measured again on as many fresh determinisations as it raced (numbers from
  :data:`CONFIRM_FIRST` on), and those are the estimates reported.  The status stays the race's
  verdict: selecting on the fresh interval too (following the advice "where significant" by it)
  would bring the winner's curse back (measured: a predicted +0.43 a deal, +0.08 realised).

The settings (``policy``, ``rollouts``, ``seed``, ``luck``, ``batch``, ``race``, ``sharpen``,
``belief``, ...) are an :class:`~simkit.specs.analyze.AnalyzeSpec`, their defaults declared there.
A result is a pure function of the position and that spec: the same for any number of threads
(:class:`~simkit.specs.base.Execution`'s ``workers``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from simkit.defaults import (  # noqa: F401 - re-exported: the analysis settings' defaults
    DEFAULT_BATCH,
    DEFAULT_BELIEF,
    DEFAULT_BELIEF_NOISE,
    DEFAULT_POLICY,
    DEFAULT_ROLLOUTS,
    DEFAULT_SHARPEN,
    DEFAULT_TOLERANCE,
)
from simkit.analysis.results import finite_or_none
from simkit.analysis.stats import t_interval_or_nan, wilson_interval
from simkit.engine.position import Position, action_text, decision_kind
from simkit.glossary import action_words, pad
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec, policy_label
from simkit.runner.belief import belief_particles
from simkit.runner.rollout import (
    N_ROLLOUT_OUT,
    NO_DETERMINISATION,
    OUT_ERROR,
    OUT_LOSS,
    OUT_LUCK,
    OUT_PAYOFF,
    OUT_UNITS,
    OUT_WIN,
)
from simkit.runner.rollout import rollout_policy_arrays
from simkit.runner.rollout import rollouts as play_rollouts
from simkit.runner.value_model import value_model_for
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution

MIN_RACE = 128  # no action stops before this many determinisations
# the confirmation's determinisations start here (beyond any range a race or a review's measure uses)
CONFIRM_FIRST = 1 << 40
STATUS_BEST, STATUS_SEPARATED, STATUS_EQUAL, STATUS_OPEN = "best", "separated", "equal", "open"


def _race_z(confidence: float, n_actions: int) -> float:
    """The racing threshold: two-sided at ``confidence``, Bonferroni-split over the other actions."""
    alpha = (1.0 - confidence) / max(1, n_actions - 1)
    return float(stats.norm.ppf(1.0 - alpha / 2.0))


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else math.nan


@dataclasses.dataclass(frozen=True)
class ActionEstimate:
    """One action's estimates (``payoff``: luck-adjusted when the analysis has a value model;
    ``raw_payoff``: the plain mean), each with its interval bounds ``_lo`` / ``_hi``; the
    ``difference`` to the best action is paired over the determinisations both saw."""

    action: int
    name: str
    rollouts: int
    payoff: float
    payoff_lo: float
    payoff_hi: float
    raw_payoff: float
    p_win: float
    p_win_lo: float
    p_win_hi: float
    p_loss: float
    p_loss_lo: float
    p_loss_hi: float
    win_units: float
    win_units_lo: float
    win_units_hi: float
    difference: float
    difference_lo: float
    difference_hi: float
    status: str
    crn_factor: float
    luck_factor: float
    # the difference to the shown best (the action of the highest ``payoff``), paired over the
    # determinisations both were measured on (the first min of their counts); 0 for the shown best
    vs_top: float = math.nan
    vs_top_lo: float = math.nan
    vs_top_hi: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class PositionAnalysis:
    """The result of :func:`analyze_position`: ``actions`` sorted by expected payoff, best first.

    ``separated``: the best action's interval of difference separates it from every other
    action; ``determinisations``: the most any action used; ``luck``: the value model (its
    one-line description) or ``None``."""

    position: Position
    policy: str
    seed: int
    rollouts: int
    batch: int
    confidence: float
    luck: str | None
    determinisations: int
    actions: tuple[ActionEstimate, ...]
    sharpen: int = DEFAULT_SHARPEN
    belief: int = 0
    belief_noise: float = DEFAULT_BELIEF_NOISE
    belief_distinct: int = 0
    belief_acceptance: float = math.nan
    confirmed: bool = False  # the estimates come from fresh determinisations, not the race's

    @property
    def best(self) -> ActionEstimate:
        return self.actions[0]

    @property
    def separated(self) -> bool:
        return all(a.difference_hi < 0 for a in self.actions[1:])

    @property
    def shown_best(self) -> ActionEstimate:
        """The action of the highest shown payoff (:func:`shown_verdict`): what a player is told is
        best.  ``best`` is the race's pick, which a review's losses are measured against."""
        return self.estimate(self.verdict().best_action)

    def verdict(self, chosen: int | None = None) -> "Verdict":
        """:func:`shown_verdict` of this analysis's rows (payoff, and the paired interval of the
        difference to the shown best, ``vs_top_lo`` / ``vs_top_hi``), for action id ``chosen``."""
        return analysis_verdict(self, chosen)

    def estimate(self, action: int) -> ActionEstimate:
        """The estimates of action id ``action``."""
        for a in self.actions:
            if a.action == action:
                return a
        raise KeyError(f"action {action} is not legal in this position")

    def to_frame(self) -> pd.DataFrame:
        """One row per action, best first."""
        return pd.DataFrame([a.to_dict() for a in self.actions])

    def to_dict(self) -> dict[str, Any]:
        return {"position": self.position.text(), "kind": decision_kind(self.position), "policy": self.policy,
                "seed": self.seed, "rollouts": self.rollouts, "batch": self.batch, "confidence": self.confidence,
                "luck": self.luck, "sharpen": self.sharpen, "belief": self.belief, "belief_noise": self.belief_noise,
                "belief_distinct": self.belief_distinct, "belief_acceptance": self.belief_acceptance,
                "confirmed": self.confirmed,
                "determinisations": self.determinisations,
                "separated": self.separated,
                # the best named is the highest payoff shown (shown_verdict); the race's pick apart
                "best": self.verdict().best, "pick": self.best.name, "as_good_as_best": list(self.verdict().as_good),
                "actions": [a.to_dict() for a in self.actions]}

    def to_json(self) -> str:
        """JSON (NaN written as null)."""
        return json.dumps(finite_or_none(self.to_dict()), ensure_ascii=False)

    def table(self) -> str:
        """The analysis as a text table (what ``simkit analyze`` prints)."""
        level = f"{round(100 * self.confidence, 6):g}%"
        if self.belief:
            opponents = (f", belief: {self.belief} draws of the hidden cards given the table's play (noise "
                         f"{self.belief_noise:g}; {self.belief_distinct} distinct, {self.belief_acceptance:.0%} of "
                         "swaps accepted)")
        else:
            opponents = f", opponent model: sharpen {self.sharpen}" if self.sharpen else ""
        history = len(self.position.history)
        lines = [f"position: {self.position.text(history=False)}"
                 + (f" (and its history of {history} events)" if history else ""),
                 f"rollouts: {self.policy} at every seat, seed {self.seed}, up to {self.rollouts} determinisations "
                 f"per action ({self.determinisations} used"
                 + ("; the estimates below are from as many fresh ones" if self.confirmed else "")
                 + f"), luck adjustment: {self.luck or 'off'}" + opponents,
                 "",
                 f"{'action':<24} {'n':>5} {'payoff 牌':>8} {level + ' interval':>18} {'vs best':>8} "
                 f"{level + ' interval':>18} {'P(win)':>7} {'P(lose)':>7} {'units':>6}  verdict"]

        def iv(lo: float, hi: float) -> str:
            return "" if not (math.isfinite(lo) and math.isfinite(hi)) else f"[{lo:+.3f}, {hi:+.3f}]"

        # the one story (shown_verdict): highest payoff shown first, named the best; the others
        # "as good as the best" or "worse" by their paired interval against it
        verdict = self.verdict()
        as_good = set(verdict.as_good)
        for a in sorted(self.actions, key=lambda a: (a.name != verdict.best,
                                                     -a.payoff if math.isfinite(a.payoff) else math.inf)):
            units = f"{a.win_units:6.2f}" if math.isfinite(a.win_units) else f"{'-':>6}"
            word = "the best" if a.name == verdict.best else "as good as the best" if a.name in as_good else "worse"
            lines.append(f"{pad(action_words(a.name), 24)} {a.rollouts:>5} {a.payoff:>+8.3f} {iv(a.payoff_lo, a.payoff_hi):>18} "
                         f"{a.vs_top:>+8.3f} {iv(a.vs_top_lo, a.vs_top_hi):>18} {a.p_win:>7.3f} "
                         f"{a.p_loss:>7.3f} {units}  {word}")
        if self.best.name != verdict.best:
            lines.append(f"(the race's pick, {action_words(self.best.name)}, was chosen on other determinisations than "
                         "these estimates; the best named is the highest payoff shown)")
        return "\n".join(lines)


def _estimates(position: Position, actions: Sequence[int], out: np.ndarray, counts: np.ndarray, best: int,
               stopped: list[str], confidence: float, luck: bool) -> list[ActionEstimate]:
    rows = []
    base = out[best, : counts[best]]
    x_best = base[:, OUT_PAYOFF] - base[:, OUT_LUCK]
    for i, a in enumerate(actions):
        n = int(counts[i])
        o = out[i, :n]
        raw = o[:, OUT_PAYOFF]
        x = raw - o[:, OUT_LUCK]
        payoff, payoff_lo, payoff_hi = t_interval_or_nan(x, confidence)
        wins = o[:, OUT_WIN] > 0
        p_win = wilson_interval(int(wins.sum()), n, confidence)
        p_loss = wilson_interval(int(o[:, OUT_LOSS].sum()), n, confidence)
        units = t_interval_or_nan(o[wins, OUT_UNITS], confidence)
        crn = luck_factor = math.nan
        if i == best:
            diff = (0.0, 0.0, 0.0)
            status = STATUS_BEST
        else:
            d = x - x_best[:n]
            diff = t_interval_or_nan(d, confidence)
            status = stopped[i]
            if n >= 2:
                var_d = float(d.var(ddof=1))
                crn = _ratio(float(x.var(ddof=1) + x_best[:n].var(ddof=1)), var_d)
                if luck:
                    raw_d = raw - base[:n, OUT_PAYOFF]
                    luck_factor = _ratio(float(raw_d.var(ddof=1)), var_d)
        rows.append(ActionEstimate(
            action=int(a), name=action_text(int(a), position), rollouts=n, payoff=payoff, payoff_lo=payoff_lo,
            payoff_hi=payoff_hi, raw_payoff=float(raw.mean()), p_win=p_win.estimate, p_win_lo=p_win.lo,
            p_win_hi=p_win.hi, p_loss=p_loss.estimate, p_loss_lo=p_loss.lo, p_loss_hi=p_loss.hi, win_units=units[0], win_units_lo=units[1],
            win_units_hi=units[2], difference=diff[0], difference_lo=diff[1], difference_hi=diff[2], status=status,
            crn_factor=crn, luck_factor=luck_factor))
    return rows


def _with_vs_top(rows: list[ActionEstimate], out: np.ndarray, counts: np.ndarray, best: int,
                 confidence: float) -> list[ActionEstimate]:
    """``rows`` with each action's difference to the shown best (the highest ``payoff``; ties to
    the race's pick, then the lowest action id), paired over the determinisations of ``out`` both
    were measured on (the first min of their two counts), with its interval at ``confidence``."""
    top = _top_index([r.payoff for r in rows], best)
    x = out[:, :, OUT_PAYOFF] - out[:, :, OUT_LUCK]
    done = []
    for i, row in enumerate(rows):
        if i == top:
            vs = (0.0, 0.0, 0.0)
        else:
            m = int(min(counts[i], counts[top]))
            vs = t_interval_or_nan(x[i, :m] - x[top, :m], confidence) if m else (math.nan,) * 3
        done.append(dataclasses.replace(row, vs_top=float(vs[0]), vs_top_lo=float(vs[1]), vs_top_hi=float(vs[2])))
    return done


def _top_index(values: Sequence[float], pick: int | None = None) -> int:
    """The index of the highest finite value (ties: ``pick``, then the first); 0 when none is finite."""
    best_i, best_key = 0, None
    for i, v in enumerate(values):
        if v is None or not math.isfinite(v):
            continue
        key = (v, i == pick)
        if best_key is None or key > best_key:
            best_i, best_key = i, key
    return best_i


# ---------------------------------------------------------------------------- the best shown: one rule


@dataclasses.dataclass(frozen=True)
class ShownRow:
    """One action as a player is shown it: its name, its value (expected payoff, 牌) and the
    interval of its difference to the shown best (its value minus the best's, paired; NaN where
    not measured).  The shown best's own row has the interval [0, 0]."""

    name: str
    value: float
    lo: float = math.nan
    hi: float = math.nan


@dataclasses.dataclass(frozen=True)
class Verdict:
    """:func:`shown_verdict`'s answer: the shown best (``best``, its ``best_value``), and for the
    chosen action (None when none was given) its value, its difference to the best with the
    interval, whether it is the best (``chosen_is_best``) and whether it is as good as the best
    (``as_good_as_best``); ``as_good``: every action as good as the best, the best first."""

    best: str
    best_value: float
    best_action: int | None = None
    chosen: str | None = None
    chosen_value: float = math.nan
    chosen_is_best: bool = False
    as_good_as_best: bool = False
    difference: float = math.nan
    difference_lo: float = math.nan
    difference_hi: float = math.nan
    as_good: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _as_good(row: ShownRow) -> bool:
    """The evidence does not put the row below the best: its interval of difference does not lie
    wholly below 0 (NaN, not measured, does not separate either)."""
    return not (row.hi < 0)


def shown_verdict(rows: Sequence[ShownRow | tuple], chosen: str | None = None) -> Verdict:
    """**The one rule** for naming a best action wherever simkit names one (review text, JSON,
    page; the play hint):

    * the *shown best* is the row of the highest value (ties: the first row; a row of NaN value
      is never the best);
    * an action is *as good as the best* when it is the best, or when the interval of its
      difference to the best (``lo``, ``hi``: paired, at the analysis's confidence) does not
      lie wholly below 0 (``hi >= 0``, or not measured): the evidence does not separate it
      from the best.  Then a verdict says "as good as the best" and names no other action.

    ``rows``: :class:`ShownRow` or ``(name, value, lo, hi)`` tuples; ``chosen``: the name of the
    action taken (None: none).

    >>> v = shown_verdict([("discard RS", 3.9, -0.5, 0.1), ("discard WX", 4.3, 0.0, 0.0),
    ...                    ("pass", 1.0, -4.0, -2.6)], chosen="discard RS")
    >>> v.best, v.chosen_is_best, v.as_good_as_best, v.as_good
    ('discard WX', False, True, ('discard WX', 'discard RS'))
    >>> shown_verdict([("a", 1.0, 0, 0), ("b", 0.2, -1.2, -0.4)], chosen="b").as_good_as_best
    False
    """
    shown = [r if isinstance(r, ShownRow) else ShownRow(*r) for r in rows]
    if not shown:
        raise ValueError("no rows to name a best among")
    values = [float(r.value) for r in shown]
    top = _top_index(values)
    best = shown[top]
    as_good = (best.name,) + tuple(r.name for i, r in enumerate(shown) if i != top and _as_good(r))
    if chosen is None:
        return Verdict(best=best.name, best_value=best.value, as_good=as_good)
    row = next((r for r in shown if r.name == chosen), None)
    if row is None:
        raise ValueError(f"the chosen action {chosen!r} is not among the rows")
    is_best = row.name == best.name
    lo, hi = (0.0, 0.0) if is_best else (float(row.lo), float(row.hi))
    difference = 0.0 if is_best else float(row.value) - float(best.value)
    return Verdict(best=best.name, best_value=float(best.value), chosen=row.name, chosen_value=float(row.value),
                   chosen_is_best=is_best, as_good_as_best=is_best or _as_good(row), difference=difference,
                   difference_lo=lo, difference_hi=hi, as_good=as_good)


def analysis_rows(analysis: "PositionAnalysis") -> list[ShownRow]:
    """The rows a player is shown of an analysis, highest payoff first: each action's name, its
    expected payoff and the paired interval of its difference to the shown best."""
    rows = [ShownRow(a.name, a.payoff, a.vs_top_lo, a.vs_top_hi) for a in analysis.actions]
    order = sorted(range(len(rows)), key=lambda i: (-(rows[i].value if math.isfinite(rows[i].value) else -math.inf),
                                                    analysis.actions[i].action != analysis.best.action, i))
    return [rows[i] for i in order]


def analysis_verdict(analysis: "PositionAnalysis", chosen: int | None = None) -> Verdict:
    """:func:`shown_verdict` of an analysis (:func:`analysis_rows`) for action id ``chosen``
    (None: none), with the best's action id; the difference to the best is the paired
    ``vs_top`` of the chosen action (the same determinisations), not the difference of two
    payoffs measured on different numbers of them."""
    rows = analysis_rows(analysis)
    name = None if chosen is None else analysis.estimate(chosen).name
    verdict = shown_verdict(rows, name)
    best = next(a for a in analysis.actions if a.name == verdict.best)
    if name is not None and not verdict.chosen_is_best:
        a = analysis.estimate(chosen)
        if math.isfinite(a.vs_top):
            verdict = dataclasses.replace(verdict, difference=a.vs_top)
    return dataclasses.replace(verdict, best_action=best.action)


_BELIEFS: dict[tuple, Any] = {}  # the last few beliefs drawn (a review analyses each position twice)


def _belief(position: Position, spec: PolicySpec, particles: int, seed: int, noise: float, workers: int) -> Any:
    """:func:`~simkit.runner.belief.belief_particles` of the position, kept for the next call with
    the same arguments (the result does not depend on ``workers``)."""
    key = (position, spec.text(), particles, seed, noise)
    if key not in _BELIEFS:
        ids, params = rollout_policy_arrays(spec)
        while len(_BELIEFS) >= 4:
            _BELIEFS.pop(next(iter(_BELIEFS)))
        _BELIEFS[key] = belief_particles(position.observation(), position.state(), particles, seed, ids, params,
                                         position.rules, noise, workers)
    return _BELIEFS[key]


def _check_rollouts(rows: np.ndarray, alive: np.ndarray) -> None:
    """A one-line error when a rollout of an alive action stopped early."""
    errors = rows[alive][:, :, OUT_ERROR]
    if (errors != 0).any():
        code = int(errors[errors != 0][0])
        why = ("no determinisation fits the position" if code == NO_DETERMINISATION
               else f"a rollout stopped early (error code {code})")
        raise SimkitError(f"the analysis failed: {why}")


def analyze_position(position: Position, spec: AnalyzeSpec | None = None,
                     execution: Execution = Execution()) -> PositionAnalysis:
    """Roll out every legal action of ``position`` (or the ``spec.actions`` given) and race them
    (see the module docstring; :class:`~simkit.specs.analyze.AnalyzeSpec` says what each setting
    does; None: the defaults); a :class:`PositionAnalysis`.  The analysis uses determinisations
    ``spec.first .. spec.first + spec.rollouts - 1`` of ``spec.seed`` (another range of the same
    seed is independent of it: the review measures its losses there), and with ``spec.confirm``
    every estimate is measured again on as many fresh determinisations as the action used (from
    ``first + CONFIRM_FIRST``), so the best, chosen on the race's, carries no winner's curse.
    ``execution.workers``: threads (the result is the same for any); an analysis runs in this
    process (``backend`` local)."""
    if not isinstance(position, Position):
        raise SimkitError(f"position must be a Position, got {type(position).__name__}", parameters=("position",))
    spec = AnalyzeSpec() if spec is None else spec
    if not isinstance(spec, AnalyzeSpec):
        raise SimkitError(f"spec must be an AnalyzeSpec, got {type(spec).__name__}", parameters=("spec",))
    if execution.backend != "local":
        raise SimkitError("an analysis runs in this process: backend must be local", parameters=("backend",))
    policy, rollouts, batch, seed = spec.policy, spec.rollouts, spec.batch, spec.seed
    workers, sharpen, first, belief = execution.workers, spec.sharpen, spec.first, spec.belief
    belief_noise, tolerance, confidence, race = spec.belief_noise, spec.tolerance, spec.confidence, spec.race
    actions, confirm, luck = spec.actions, spec.confirm, spec.luck
    legal = position.legal_actions()
    if actions is None:
        chosen = legal
    else:
        chosen = sorted({int(a) for a in actions})
        bad = [a for a in chosen if a not in legal]
        if bad or not chosen:
            raise SimkitError(f"actions must be legal in the position: {bad or 'none given'} "
                              f"(legal: {', '.join(action_text(a, position) for a in legal)})",
                              parameters=("actions",))
    model = value_model_for(luck, seed)
    if model is not None and model.is_playouts:
        raise SimkitError(f"luck {model.path}: play-out values adjust comparisons of whole deals, not the rollouts of "
                          "a position (a play-out per card at every draw of every rollout): use the network value "
                          "model", parameters=("luck",))
    block = model.block if model is not None else None
    obs = position.observation()
    particles = weights = None
    distinct, acceptance = 0, math.nan
    if belief:
        drawn = _belief(position, policy, belief, seed, float(belief_noise), workers)
        if not drawn.states.shape[0]:
            raise SimkitError("belief: no hidden cards fit the position's public history"
                              + ("" if position.history else " (the position has none: a typed position without "
                                 "history= is the start of a deal only)"), parameters=("belief",))
        particles = drawn.states
        weights = np.arange(1, particles.shape[0] + 1, dtype=np.float64) / particles.shape[0]
        distinct, acceptance = drawn.distinct, drawn.acceptance
        sharpen = 0
    k = len(chosen)
    out = np.zeros((k, rollouts, N_ROLLOUT_OUT), dtype=np.float64)
    counts = np.zeros(k, dtype=np.int64)
    alive = np.ones(k, dtype=np.bool_)
    stopped = [STATUS_OPEN] * k  # why an action left the race
    z_race = _race_z(confidence, k)
    done = 0
    best = 0
    while done < rollouts and alive.any():
        size = min(batch, rollouts - done) if race else rollouts
        rows = play_rollouts(obs, chosen, alive, first + done, size, seed, policy, position.rules, block, workers,
                             sharpen, known=particles, weights=weights)
        _check_rollouts(rows, alive)
        out[alive, done : done + size] = rows[alive]
        counts[alive] += size
        done += size
        x = out[:, :done, OUT_PAYOFF] - out[:, :done, OUT_LUCK]
        means = np.where(alive, x.mean(axis=1) if done else 0.0, -np.inf)
        best = int(np.argmax(means))
        if not race or k == 1:
            continue
        if done >= MIN_RACE:
            for i in np.flatnonzero(alive):
                if i == best:
                    continue
                d = x[i] - x[best]
                se = float(d.std(ddof=1)) / math.sqrt(done)
                lo, hi = float(d.mean()) - z_race * se, float(d.mean()) + z_race * se
                if hi < 0:
                    alive[i] = False
                    stopped[i] = STATUS_SEPARATED
                elif -tolerance < lo and hi < tolerance:
                    alive[i] = False
                    stopped[i] = STATUS_EQUAL
        if alive.sum() == 1:
            break
    confirmed = bool(confirm) and k > 1
    race_difference_hi = [r.difference_hi for r in _estimates(position, chosen, out, counts, best, stopped, confidence,
                                                              model is not None)] if confirmed else []
    if confirmed:  # the same counts again on fresh determinisations: estimates apart from the choice
        fresh = np.zeros_like(out)
        done = 0
        for n in sorted(set(counts.tolist())):
            live = counts > done
            rows = play_rollouts(obs, chosen, live, first + CONFIRM_FIRST + done, n - done, seed, policy, position.rules,
                                 block, workers, sharpen, known=particles, weights=weights)
            _check_rollouts(rows, live)
            fresh[live, done:n] = rows[live, : n - done]
            done = n
        out = fresh
    rows = _estimates(position, chosen, out, counts, best, stopped, confidence, model is not None)
    for i, row in enumerate(rows):  # an action still racing at the end is separated if its interval says so
        if row.status == STATUS_OPEN and (race_difference_hi[i] if confirmed else row.difference_hi) < 0:
            rows[i] = dataclasses.replace(row, status=STATUS_SEPARATED)
    rows = _with_vs_top(rows, out, counts, best, confidence)
    order = sorted(range(k), key=lambda i: (i != best, -rows[i].payoff if math.isfinite(rows[i].payoff) else 0.0,
                                            rows[i].action))
    return PositionAnalysis(position=position, policy=policy_label(policy), seed=seed, rollouts=rollouts, batch=batch,
                            confidence=confidence, luck=model.describe() if model is not None else None,
                            determinisations=int(counts.max()), actions=tuple(rows[i] for i in order),
                            sharpen=sharpen, belief=belief, belief_noise=float(belief_noise), confirmed=confirmed,
                            belief_distinct=distinct, belief_acceptance=acceptance)
