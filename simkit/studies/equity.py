"""Hand equity: "how good is this hand?" for one seat's dealt hand, against the seat's baseline.

:func:`equity` fixes ``seat``'s dealt hand, deals the other 81 or 82 cards at random, plays
``deals`` deals to the end with the three policies (seat 0 deals every deal) and reports, for
that seat:

* the win rate (Wilson score interval),
* the mean payoff in 牌 (Student t interval),
* P(小甲): the share of deals the seat wins with units U >= 5 (Wilson),
* the hu of its wins: mean (t interval) and quantiles, each with a distribution-free interval
  from order statistics (:func:`quantile_interval`),

and the same figures for the seat's *unconditional baseline*: the ordinary deals 0 .. N - 1 of
the same seed with the same policies (``simkit simulate --seed S``, dealt hands at random), with
the difference equity - baseline and its interval: Newcombe's hybrid score interval and the
pooled z test for the rates (:func:`simkit.analysis.stats.two_proportion_test`), Welch's
interval and test for the means (:func:`welch_test`).  See docs/probability.md, "Hand equity".

Deal N of the equity run is a pure function of (seed, N, hand, seat)
(:mod:`simkit.runner.equity`), so the result is the same for any batch size, thread or worker
count.  With ``out`` the deals are kept as two resumable datasets in the row format of
``simkit simulate``: ``OUT/equity`` and ``OUT/baseline`` (a ``simkit simulate`` dataset).

>>> hand = "YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2"  # wins on the deal (天胡)
>>> result = equity(EquitySpec(hand, seat=0, policies="greedy,greedy,greedy", deals=40, seed=1, baseline=False))
>>> result.win_rate, result.wins, result.deals
(1.0, 40, 40)
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy import stats

from simkit.analysis.plots import new_axes, overflow_edge, overflow_histogram, save_figure
from simkit.analysis.results import Interval, Result, WelchTest, format_level
from simkit.analysis.stats import check_confidence, t_interval_or_nan, two_proportion_test, wilson_interval
from simkit.policies.registry import is_user_policy, policy_arrays
from simkit.runner.equity import QUIET, play_equity, run_equity
from simkit.runner.equity import compute_batch as equity_batch
from simkit.runner.play import R_HU, R_PAYOFF, R_UNITS, R_WINNER, play_deals
from simkit.runner.simulate import check_backend, dask_session, run_dask, simulate
from simkit.runner.simulate import compute_batch as simulate_batch
from simkit.specs.base import Execution
from simkit.specs.equity import EquitySpec
from simkit.storage import load_dataset
from simkit.storage.files import atomic_write
from simkit.storage.runs import EQUITY_FOLDER, check_run_folder

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["EquityResult", "SeatOutcome", "equity", "hu_plot", "quantile_interval", "welch_test", "write_equity_outputs"]

XIAOJIA_UNITS = 5  # 小甲: a win of U >= 5 units (as in simkit.analysis.summary.tail_probabilities)
HU_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
BASELINE_FOLDER = "baseline"


# ----------------------------------------------------------------------------- statistics


def quantile_interval(values: np.ndarray, q: float, confidence: float = 0.95) -> Interval:
    """The ``q`` sample quantile (``estimate``; linear interpolation, as pandas) and a
    distribution-free interval from order statistics: with n values sorted, the number below
    the true quantile is Binomial(n, q), so [x_(l), x_(u)] with l = B^-1((1 - c) / 2) and
    u = B^-1((1 + c) / 2) + 1 (1-based, clipped to 1..n) covers it with probability >= c
    (approximately c for discrete data; exact for continuous).  NaNs for no values.

    >>> interval = quantile_interval(np.arange(1, 101), 0.5)
    >>> interval.estimate, interval.lo, interval.hi, interval.method
    (50.5, 40.0, 61.0, 'order statistics')
    """
    confidence = check_confidence(confidence)
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, confidence, "order statistics", 0)
    tail = (1.0 - confidence) / 2
    lo_rank = int(stats.binom.ppf(tail, n, q))
    hi_rank = int(stats.binom.ppf(1.0 - tail, n, q)) + 1
    lo_rank = min(max(lo_rank, 1), n)
    hi_rank = min(max(hi_rank, 1), n)
    return Interval(float(np.quantile(x, q)), float(x[lo_rank - 1]), float(x[hi_rank - 1]), confidence,
                    "order statistics", int(n))


def welch_test(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> WelchTest:
    """Welch's two-sample comparison of means: ``difference`` = mean(a) - mean(b), its interval
    ``lo``/``hi`` (t with Welch-Satterthwaite degrees of freedom ``dof``), ``t`` and the
    two-sided ``p_value`` (as ``scipy.stats.ttest_ind(a, b, equal_var=False)``).  With zero
    spread in both samples the interval is the point and p is 1 (equal means) or 0.

    >>> r = welch_test([1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 0.5])
    >>> round(r.difference, 3), round(r.p_value, 4)
    (2.0, 0.0464)
    """
    confidence = check_confidence(confidence)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        nan = math.nan
        diff = float(a.mean() - b.mean()) if a.size and b.size else nan
        return WelchTest(diff, nan, nan, nan, nan, nan, confidence)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    diff = float(a.mean() - b.mean())
    se = math.sqrt(va + vb)
    if se == 0.0:
        return WelchTest(diff, diff, diff, 0.0 if diff == 0 else math.copysign(math.inf, diff),
                         1.0 if diff == 0 else 0.0, math.nan, confidence)
    dof = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, dof)) * se
    t = diff / se
    return WelchTest(diff, diff - half, diff + half, float(t), float(2.0 * stats.t.sf(abs(t), dof)), float(dof),
                     confidence)


# ----------------------------------------------------------------------------- results


@dataclasses.dataclass(frozen=True)
class SeatOutcome(Result):
    """One seat's results over a set of deals (the equity deals or the baseline's); intervals
    at the confidence of the :class:`EquityResult`.  :meth:`to_frame`: one row of the scalar
    fields (not ``hu_quantiles``, ``payoffs``, ``hu_of_wins``)."""

    deals: int
    wins: int
    win_rate: float
    win_rate_lo: float
    win_rate_hi: float
    mean_payoff: float
    mean_payoff_lo: float
    mean_payoff_hi: float
    xiaojia: int  # deals the seat won with U >= 5
    p_xiaojia: float
    p_xiaojia_lo: float
    p_xiaojia_hi: float
    hu_mean: float  # over the seat's wins
    hu_mean_lo: float
    hu_mean_hi: float
    hu_quantiles: tuple[tuple[float, float, float, float], ...] = dataclasses.field(
        metadata={"frame": False})  # (q, value, lo, hi)
    payoffs: np.ndarray = dataclasses.field(repr=False, compare=False, metadata={"frame": False})  # per deal
    hu_of_wins: np.ndarray = dataclasses.field(repr=False, compare=False, metadata={"frame": False})

    @classmethod
    def from_arrays(cls, winner: np.ndarray, payoff: np.ndarray, units: np.ndarray, hu: np.ndarray, seat: int,
                    confidence: float = 0.95) -> "SeatOutcome":
        """From per-deal ``winner``, the seat's ``payoff`` and the winner's ``units`` and ``hu``."""
        winner = np.asarray(winner)
        n = int(winner.size)
        won = winner == seat
        wins = int(won.sum())
        big = int((won & (np.asarray(units) >= XIAOJIA_UNITS)).sum())
        payoff = np.asarray(payoff, dtype=np.int64)
        hu_wins = np.asarray(hu)[won].astype(np.int64)
        mean, mlo, mhi = t_interval_or_nan(payoff.astype(float), confidence)
        hmean, hlo, hhi = t_interval_or_nan(hu_wins.astype(float), confidence)
        by_q = {q: quantile_interval(hu_wins, q, confidence) for q in HU_QUANTILES}
        quantiles = tuple((q, i.estimate, i.lo, i.hi) for q, i in by_q.items())
        win_rate = wilson_interval(wins, n, confidence)
        xiaojia = wilson_interval(big, n, confidence)
        return cls(n, wins, wins / n if n else math.nan, win_rate.lo, win_rate.hi, mean, mlo, mhi,
                   big, big / n if n else math.nan, xiaojia.lo, xiaojia.hi, hmean, hlo, hhi, quantiles,
                   payoff, hu_wins)


@dataclasses.dataclass(frozen=True)
class _PointDifference:
    """A difference without an interval (hu quantiles)."""

    difference: float


@dataclasses.dataclass(frozen=True)
class EquityResult:
    """The equity of ``hand`` in ``seat`` (and, unless disabled, its baseline comparison).

    ``equity`` and ``baseline`` are :class:`SeatOutcome`; :meth:`to_frame` puts every measure
    in one table with the differences; the attributes ``win_rate``, ``mean_payoff``, ... are
    the equity figures."""

    hand: str
    seat: int
    policies: tuple[str, str, str]
    deals: int
    seed: int
    confidence: float
    equity: SeatOutcome
    baseline: SeatOutcome | None = None
    out: str | None = None

    def __getattr__(self, name: str):
        # win_rate, win_rate_lo, mean_payoff, p_xiaojia, hu_quantiles, ... of the equity deals
        if name in SeatOutcome.__dataclass_fields__:
            return getattr(self.equity, name)
        raise AttributeError(name)

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: ``estimate`` / ``lo`` / ``hi`` (equity), ``baseline`` /
        ``baseline_lo`` / ``baseline_hi``, ``difference`` / ``difference_lo`` /
        ``difference_hi``, ``p_value``, ``n`` (deals, or the seat's wins for hu) and
        ``method``: the interval and test used.  Quantile rows have a difference without an
        interval (see docs/probability.md)."""
        e, b, c = self.equity, self.baseline, self.confidence
        rows = []

        def row(measure, n, est, lo, hi, method, base=None, diff=None):
            out = {"measure": measure, "n": n, "estimate": est, "lo": lo, "hi": hi,
                   "baseline": math.nan, "baseline_lo": math.nan, "baseline_hi": math.nan,
                   "difference": math.nan, "difference_lo": math.nan, "difference_hi": math.nan,
                   "p_value": math.nan, "method": method}
            if base is not None:
                out.update(baseline=base[0], baseline_lo=base[1], baseline_hi=base[2])
            if diff is not None:
                out.update(difference=diff.difference, difference_lo=getattr(diff, "lo", math.nan),
                           difference_hi=getattr(diff, "hi", math.nan), p_value=getattr(diff, "p_value", math.nan))
            rows.append(out)

        def prop(k1, n1, k2, n2):
            return two_proportion_test(int(k1), int(n1), int(k2), int(n2), c) if n1 and n2 else None

        row("win rate", e.deals, e.win_rate, e.win_rate_lo, e.win_rate_hi,
            "Wilson; difference: Newcombe hybrid score, pooled z test",
            None if b is None else (b.win_rate, b.win_rate_lo, b.win_rate_hi),
            None if b is None else prop(e.wins, e.deals, b.wins, b.deals))
        row("mean payoff", e.deals, e.mean_payoff, e.mean_payoff_lo, e.mean_payoff_hi, "t; difference: Welch",
            None if b is None else (b.mean_payoff, b.mean_payoff_lo, b.mean_payoff_hi),
            None if b is None else welch_test(e.payoffs, b.payoffs, c))
        row("P(小甲)", e.deals, e.p_xiaojia, e.p_xiaojia_lo, e.p_xiaojia_hi,
            "Wilson (wins with U >= 5, per deal); difference: Newcombe, pooled z test",
            None if b is None else (b.p_xiaojia, b.p_xiaojia_lo, b.p_xiaojia_hi),
            None if b is None else prop(e.xiaojia, e.deals, b.xiaojia, b.deals))
        row("hu mean (wins)", e.wins, e.hu_mean, e.hu_mean_lo, e.hu_mean_hi, "t over the seat's wins; difference: Welch",
            None if b is None else (b.hu_mean, b.hu_mean_lo, b.hu_mean_hi),
            None if b is None else welch_test(e.hu_of_wins, b.hu_of_wins, c))
        for i, (q, value, lo, hi) in enumerate(e.hu_quantiles):
            base = None if b is None else b.hu_quantiles[i][1:]
            row(f"hu q{int(round(q * 100)):02d} (wins)", e.wins, value, lo, hi,
                "order-statistic (binomial) interval; difference: point only", base,
                None if b is None else _PointDifference(value - base[0]))
        return pd.DataFrame(rows)

    def text(self) -> str:
        """A few lines for the terminal."""
        pct = format_level(self.confidence)
        lines = [f"hand equity of seat {self.seat}{' (dealer)' if self.seat == 0 else ''}: {self.hand}",
                 f"policies {seats_text(self.policies)}; {self.deals:,} deals, seed {self.seed}; "
                 f"intervals at {pct}"]
        frame = self.to_frame()
        show = frame[["measure", "n", "estimate", "lo", "hi"] + (
            ["baseline", "difference", "difference_lo", "difference_hi", "p_value"] if self.baseline is not None
            else [])]
        with pd.option_context("display.width", 200, "display.max_columns", None):
            lines.append(show.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
        return "\n".join(lines)


def seats_text(policies: Sequence[str]) -> str:
    """The seats' policies with each distinct policy (and its parameters) written once.

    >>> seats_text(["expert:1,2", "expert:1,2", "expert:1,2"])
    'expert:1,2 in every seat'
    >>> seats_text(["expert:1,2", "greedy", "expert:1,2"])
    'expert:1,2 (seats 0, 2), greedy (seat 1)'
    """
    seats: dict[str, list[int]] = {}
    for k, text in enumerate(policies):
        seats.setdefault(str(text), []).append(k)
    if len(seats) == 1:
        return f"{next(iter(seats))} in every seat"
    return ", ".join(f"{text} (seat{'s' if len(ks) > 1 else ''} {', '.join(map(str, ks))})"
                     for text, ks in seats.items())


# ----------------------------------------------------------------------------- running


def _outcome(winner, payoff, units, hu, seat, confidence) -> SeatOutcome:
    return SeatOutcome.from_arrays(winner, payoff, units, hu, seat, confidence)


def _rows_outcome(rows: list[np.ndarray], seat: int, confidence: float) -> SeatOutcome:
    rows = np.concatenate(rows)
    return _outcome(rows[:, R_WINNER], rows[:, R_PAYOFF + seat], rows[:, R_UNITS], rows[:, R_HU], seat, confidence)


def _dataset_outcome(path: Path, seat: int, confidence: float) -> SeatOutcome:
    return _frame_outcome(load_dataset(path, columns=["winner", f"payoff_{seat}", "units", "hu"]), seat, confidence)


def _tables_outcome(stream, seat: int, confidence: float) -> SeatOutcome:
    """The outcome of batch tables ``(batch, table)`` arriving in any order (from a Dask
    cluster), put back in batch order: the rows of a dataset of the same run."""
    tables = [table for _, table in sorted(stream, key=lambda item: item[0])]
    frame = pa.concat_tables(tables).select(["winner", f"payoff_{seat}", "units", "hu"]).to_pandas()
    return _frame_outcome(frame, seat, confidence)


def _frame_outcome(frame: pd.DataFrame, seat: int, confidence: float) -> SeatOutcome:
    winner = frame["winner"].to_numpy()
    won = winner == seat
    hu = np.zeros(winner.size, dtype=np.int64)
    units = np.zeros(winner.size, dtype=np.int64)
    # the winner's hu / units: read on the seat's wins only (they may be null on 穿牌)
    hu[won] = frame["hu"][won].to_numpy(dtype=np.int64)
    units[won] = frame["units"][won].to_numpy(dtype=np.int64)
    return _outcome(winner, frame[f"payoff_{seat}"].to_numpy(), units, hu, seat, confidence)


def _kept(rows: np.ndarray) -> np.ndarray:
    """The columns the statistics read, winner .. payoffs (a deal that stopped before its end
    raised DealError in the play loop: no row here has ``R_ERROR``)."""
    return rows[:, : R_PAYOFF + 3].copy()


def equity(spec: EquitySpec, out: str | os.PathLike | None = None, execution: Execution = QUIET, *,
           client=None) -> EquityResult:
    """The equity of ``spec``'s seat's dealt hand (:class:`~simkit.specs.equity.EquitySpec`:
    the hand, seat, policies, deals, seed, rules, batch size, baseline and confidence).

    ``spec.baseline``: also play the ordinary deals 0 .. deals - 1 of the same seed and
    policies and compare.  ``out``: keep the deals in ``OUT/equity`` and ``OUT/baseline``
    (resumable: a re-run computes only what is missing); without it nothing is written.
    ``execution``: worker processes (with ``out``), the backend and progress (quiet unless
    asked).  Errors (a bad hand, seat, policy or count) are one-line
    :class:`~simkit.errors.SimkitError`, raised when the spec is made.

    ``execution.backend='dask'``: the equity deals and the baseline run on a Dask cluster, its
    client connected once (``client`` when given; else to ``execution.scheduler``, or a
    ``LocalCluster`` of ``execution.workers``); the batches' tables come back to this process
    (which writes them with ``out``), so the result and the files are the same as local.
    """
    check_backend(execution.backend, execution.workers, execution.scheduler)
    if out is None and execution.backend == "dask" and any(is_user_policy(s) and not s.is_import_path
                                                            for s in spec.policies):
        # a policy registered by name exists in this process only: played here
        execution = dataclasses.replace(execution, backend="local")
    with dask_session(execution.backend, execution.workers, execution.scheduler, client) as client:
        return _equity(spec, out, execution, client)  # connected once for the deals and the baseline


def _equity(spec: EquitySpec, out, execution: Execution, client) -> EquityResult:
    """:func:`equity` with its Dask client (or None) connected."""
    base, confidence = spec.simulation, spec.confidence
    if out is not None:
        folder = check_run_folder(out, "equity", finished_readable=True)
        path = run_equity(spec, folder / EQUITY_FOLDER, execution, client=client)
        result_equity = _dataset_outcome(path, spec.seat, confidence)
        result_baseline = None
        if spec.baseline:
            # fixed seats: seat K plays policy K in every deal, as in the equity deals
            path = simulate(base, folder / BASELINE_FOLDER, execution, client=client)
            result_baseline = _dataset_outcome(path, spec.seat, confidence)
    elif client is not None:  # on Dask, nothing written: the batches' tables come back, put in order
        batches = range(base.n_batches)
        result_equity = _tables_outcome(run_dask(equity_batch, spec, batches, client), spec.seat, confidence)
        result_baseline = (_tables_outcome(run_dask(simulate_batch, base, batches, client),
                                           spec.seat, confidence) if spec.baseline else None)
    else:
        ids, params, user = policy_arrays(base.policies)
        rules_array, texts = base.rules.to_array(), base.policy_texts()
        equity_rows, baseline_rows = [], []
        for b in range(base.n_batches):
            first, stop = base.batch_range(b)
            equity_rows.append(_kept(play_equity(spec, stop - first, first)))
            if spec.baseline:
                baseline_rows.append(_kept(play_deals(stop - first, base.seed, ids, params, rules_array,
                                                      first_deal=first, user_functions=user, policies=texts)))
        result_equity = _rows_outcome(equity_rows, spec.seat, confidence)
        result_baseline = _rows_outcome(baseline_rows, spec.seat, confidence) if spec.baseline else None
    return EquityResult(spec.hand_text, spec.seat, tuple(base.policy_labels()), base.deals, base.seed,
                        float(confidence), result_equity, result_baseline,
                        None if out is None else os.fspath(out))


# ----------------------------------------------------------------------------- plot


def hu_plot(result: EquityResult, ax: Axes | None = None) -> Axes:
    """Histogram of the hu of the seat's wins, equity deals against the baseline (fraction of
    the seat's wins per 5-hu bin), drawn on ``ax`` (a new 7 x 4 inch figure without one, no
    pyplot); returns the Axes."""
    if ax is None:
        ax = new_axes((7, 4))
    samples = [("this hand", result.equity.hu_of_wins, "tab:blue")]
    if result.baseline is not None:
        samples.append(("baseline (random hands)", result.baseline.hu_of_wins, "tab:orange"))
    every = np.concatenate([s for _, s, _ in samples]) if samples else np.zeros(0)
    edge = overflow_edge(every)
    for label, hu, colour in samples:
        if hu.size:
            overflow_histogram(ax, hu, edge, label=f"{label} (n={hu.size:,} wins)", color=colour, filled=False,
                               unit=" 胡", noun="wins", prefix=f"{label.split(' (')[0]}: ")
    ax.set_xlabel("胡数 (hu) of the seat's wins")
    ax.set_ylabel("density (fraction of wins per 胡)")
    ax.set_title(f"seat {result.seat}: 胡数 (hu) of its wins ({result.deals:,} deals each)")
    ax.legend(fontsize=8)
    return ax


def write_equity_outputs(result: EquityResult, directory: str | os.PathLike) -> list[Path]:
    """``equity.csv`` (:meth:`EquityResult.to_frame`) and the hu plot (``hu_distribution.png``
    / ``.svg``) in ``directory``; their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    table = directory / "equity.csv"
    frame = result.to_frame()
    atomic_write(table, lambda tmp: frame.to_csv(tmp, index=False))
    return [table, save_figure(hu_plot(result).figure, directory, "hu_distribution")]
