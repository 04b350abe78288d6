"""Strategy comparison on a duplicate design (see :mod:`simkit.runner.duplicate`).

Per deal and seating, the A-minus-B difference is ``mean payoff of A's seats - mean payoff of
B's seats`` (牌 per seat); the deal's paired difference is the mean over the six seatings, in
which every seat is played by A three times and by B three times, so the cards' luck cancels.
Reported: the mean difference with a t interval and a paired bootstrap (BCa) interval over
deals, a t test, the variance reduction against unpaired play, and optionally a sequential
test (:class:`~simkit.analysis.sequential.EmpiricalMeanSPRT`, the generalised SPRT on the
empirical distribution of the per-deal differences) that stops as soon as one of H1: A - B =
delta and H0: A - B = 0 fits the differences decisively better than the other (a preference
between two means, not a bound on the difference: the interval says what it is).  After such a stop the report gives the median-unbiased
estimate and the interval that are valid under the stopping rule; the plain mean and the
fixed-sample intervals are shown only labelled as conditional on stopping and biased.

With a value model (``luck=``), the luck-adjusted differences (:mod:`simkit.runner.luck`: the
deals replayed with a correction at every draw) are reported next to the plain ones, with the
variance reduction of the adjustment over duplicate alone, and the SPRT runs on them.  With
``variance_reduction="regression"`` the adjusted estimate is the cross-fitted regression
adjustment on the dealt hands' features (:mod:`simkit.analysis.regression`,
:func:`simkit.studies.dealt.dealt_feature_matrix`); ``"none"`` (the default) is plain duplicate.

With ``design="pairs"`` each complementary pair of seatings plays deals of its own seed
(:func:`simkit.runner.duplicate.seating_seed`): a row is then three independent deals, one per
pair, and its difference the mean over the six seatings as before (unbiased for the same
difference); no adjustment, which needs a deal's six seatings.
"""

from __future__ import annotations

import dataclasses
import math
import os
import resource
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from simkit.analysis.plots import convergence_plot, decision_text, forest_plot, save_figure, sprt_llr_plot
from simkit.analysis.report import format_p, markdown_table
from simkit.analysis.regression import DEFAULT_FOLDS, cross_fitted_adjustment
from simkit.analysis.results import Interval, MeanTest, Result, VarianceReduction, finite_or_none, format_level
from simkit.analysis.sequential import EmpiricalMeanSPRT, SequentialEstimate
from simkit.analysis.stats import (
    check_confidence,
    convergence_curve,
    duplicate_variance_reduction,
    holm_adjust,
    paired_bootstrap_interval,
    paired_mean_test,
)
from simkit.defaults import DEFAULT_DUPLICATE_DESIGN
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec, is_python_policy, label_of_text, policy_label, policy_sources, \
    require_policy_sources
from simkit.rules import RuleSet
from simkit.runner.duplicate import SEATINGS, check_design, comparison_design, read_comparison, run_duplicate, \
    seating_dir, seating_policies
from simkit.jit import CompileTimer
from simkit.runner import luck as luck_module
from simkit.runner.luck import duplicate_luck
from simkit.runner.simulate import check_backend, dask_session, stream_dask_in_order, use_threads, warm_simulate
from simkit.progress import Progress, progress_enabled
from simkit.runner.value_model import ValueModel, value_model_for
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.storage import load_dataset
from simkit.storage.dataset import FILES, read_manifest
from simkit.storage.files import FileError, atomic_write, json_digest, read_checked_json, write_checked_json, \
    write_parquet, write_text
from simkit.studies.dealt import REGRESSION_FEATURES, dealt_feature_matrix


REFERENCE_FIRST_DEAL = 2**62  # the regression's reference deals: deals 2**62 + j of the seed, never played
REFERENCE_DEALS_PER_DEAL = 10  # reference deals per compared deal: their mean's noise costs 1/10 of the gain


def seating_differences(out: str | os.PathLike, batches: int | None = None) -> np.ndarray:
    """(deals, 6) array: per deal and seating, mean payoff of A's seats minus B's seats."""
    columns = []
    for seating in SEATINGS:
        df = load_dataset(seating_dir(out, seating), columns=[f"payoff_{k}" for k in range(3)], batches=batches)
        pay = np.stack([df[f"payoff_{k}"].to_numpy(dtype=float) for k in range(3)], axis=1)
        is_a = np.array([c == "A" for c in seating])
        columns.append(pay[:, is_a].mean(axis=1) - pay[:, ~is_a].mean(axis=1))
    return np.stack(columns, axis=1)


@dataclasses.dataclass(frozen=True)
class LuckAdjustment(Result):
    """The luck-adjusted comparison (:mod:`simkit.runner.luck`): the per-deal differences minus
    their luck, their t test (``test``) and paired bootstrap interval (``bootstrap``), and the
    variance reductions: ``reduction_factor`` = duplicate variance / adjusted variance (how many
    times fewer deals the adjusted estimate needs than the plain duplicate one), and
    ``overall_factor`` = that times the duplicate design's own factor against unpaired play."""

    model: str
    luck: np.ndarray = dataclasses.field(repr=False, compare=False)  # (deals used, 6) luck of A - B
    test: MeanTest
    bootstrap: Interval
    reduction_factor: float
    overall_factor: float
    method: str = "luck"  # "luck" (model: the value model) or "regression" (model: the fit's description)

    @property
    def adjective(self) -> str:
        """How the differences were adjusted, for the text: ``luck-adjusted`` or ``regression-adjusted``."""
        return f"{self.method}-adjusted"

    @property
    def deals_saved(self) -> float:
        """Share of the duplicate deals the adjusted estimate saves at the same standard error."""
        return 1.0 - 1.0 / self.reduction_factor if self.reduction_factor > 0 else math.nan


def luck_adjustment(per_seating: np.ndarray, luck: np.ndarray, model: str, seed: int, duplicate_factor: float,
                    confidence: float = 0.95, resamples: int = 5_000) -> LuckAdjustment:
    """Statistics of the adjusted differences ``per_seating - luck`` (both ``(deals, 6)``)."""
    d = per_seating.mean(axis=1)
    adjusted = d - luck.mean(axis=1)
    test = paired_mean_test(adjusted, confidence)
    boot = paired_bootstrap_interval(adjusted, confidence, resamples=resamples, seed=seed)
    variance, plain = float(adjusted.var(ddof=1)), float(d.var(ddof=1))
    # constant plain differences (a policy against its twin): no variance to reduce
    factor = plain / variance if variance > 0 and plain > 0 else math.nan
    return LuckAdjustment(model, luck, test, boot, factor, factor * duplicate_factor)


def regression_adjustment(per_seating: np.ndarray, seed: int, duplicate_factor: float, confidence: float = 0.95,
                          resamples: int = 5_000, folds: int = DEFAULT_FOLDS) -> LuckAdjustment:
    """The cross-fitted regression adjustment (:func:`~simkit.analysis.regression.cross_fitted_adjustment`)
    of the per-deal differences of deals 0 .. n-1 of ``seed`` (rows of ``per_seating``) on each
    seat's dealt-hand features (:func:`~simkit.studies.dealt.dealt_feature_matrix`), centred on
    the features of :data:`REFERENCE_DEALS_PER_DEAL` x n reference deals (deal numbers
    :data:`REFERENCE_FIRST_DEAL` + j of the same seed: dealt, never played), folds by deal
    number.  A pure function of (seed, deals, the differences).  Returned as a
    :class:`LuckAdjustment` with ``method="regression"``: ``luck`` holds the per-deal adjustment
    in every seating's column, ``reduction_factor`` is the plain duplicate variance of the mean
    over the adjusted one (the reference's noise included)."""
    deals = per_seating.shape[0]
    d = per_seating.mean(axis=1)
    features = dealt_feature_matrix(seed, deals)
    reference = dealt_feature_matrix(seed, REFERENCE_DEALS_PER_DEAL * deals, REFERENCE_FIRST_DEAL)
    fit = cross_fitted_adjustment(d, features, reference, np.arange(deals), folds, confidence)
    boot = paired_bootstrap_interval(fit.adjusted, confidence, resamples=resamples, seed=seed)
    plain = float(d.var(ddof=1)) / deals
    variance = fit.test.standard_error ** 2
    factor = plain / variance if variance > 0 and plain > 0 else math.nan
    model = (f"cross-fitted regression on {features.shape[1]} dealt-hand features "
             f"({', '.join(name for name, _ in REGRESSION_FEATURES)} of each seat), {folds} folds by deal number, "
             f"centred on {reference.shape[0]:,} reference deals")
    luck = np.repeat(fit.adjustment[:, None], per_seating.shape[1], axis=1)
    return LuckAdjustment(model, luck, fit.test, boot, factor, factor * duplicate_factor, method="regression")


@dataclasses.dataclass(frozen=True)
class ComparisonResult(Result):
    """Everything a comparison report shows: the per-deal differences ``per_seating``, the t
    test and interval (``test``), the paired bootstrap interval (``bootstrap``, BCa), the
    variance reduction of the duplicate design, all at ``confidence``; after a sequential test
    (``sprt``), ``sequential``: the estimate and interval valid under its stopping rule.
    :meth:`to_frame` is the comparison's row of the report's table (:meth:`summary_row`)."""

    policy_a: str
    policy_b: str
    seed: int
    per_seating: np.ndarray = dataclasses.field(repr=False, compare=False)  # (deals used, 6)
    test: MeanTest
    bootstrap: Interval
    variance: VarianceReduction
    sprt: EmpiricalMeanSPRT | None = dataclasses.field(default=None, repr=False, compare=False)
    deals_computed: int = 0
    sequential: SequentialEstimate | None = None  # estimate and interval under the SPRT's stopping rule
    confidence: float = 0.95
    adjusted: LuckAdjustment | None = None  # the luck-adjusted estimate, when a value model was given
    cpu_seconds: float = math.nan  # CPU time of this run (process and reaped workers), luck replay included
    cpu_duplicate: float = math.nan  # of which the plain duplicate deals
    # CPU a duplicate deal (6 seatings) cost, and its adjustment, when they were played: from the
    # folder's CPU record (CPU_RECORD) over every deal it holds, NaN where unknown (cpu_unmeasured)
    cpu_per_deal_duplicate: float = math.nan
    cpu_per_deal_adjustment: float = math.nan
    cpu_unmeasured: str = ""  # why the per-deal CPU is unknown, for the text
    design: str = DEFAULT_DUPLICATE_DESIGN  # six: a row is one deal; pairs: three, one per seating pair

    @property
    def deals(self) -> int:
        return int(self.per_seating.shape[0])

    @property
    def variance_reduction_method(self) -> str:
        """The adjustment of this result: ``none`` (plain duplicate), ``regression`` or ``luck``."""
        return "none" if self.adjusted is None else self.adjusted.method

    @property
    def efficiency(self) -> float:
        """Efficiency of the adjustment (luck or regression) against plain duplicate: its variance
        reduction per deal times plain duplicate's CPU per deal over both together (1 / (variance
        x CPU), plain = 1); NaN without an adjustment or where the CPU is unknown.  Above 1 the
        adjustment pays for its CPU.  The CPU is what playing the deals and their luck cost when
        they were played (:data:`CPU_RECORD`), so a re-run over a finished folder measures the
        same."""
        if self.adjusted is None:
            return math.nan
        d, a = self.cpu_per_deal_duplicate, self.cpu_per_deal_adjustment
        if not (d > 0 and a >= 0 and math.isfinite(d) and math.isfinite(a)):
            return math.nan
        return self.adjusted.reduction_factor * d / (d + a)

    def summary_row(self) -> dict:
        """One row of the comparison table; after an SPRT, ``estimate``/``lo``/``hi`` are the
        estimate and interval under the stopping rule (``plain_mean`` is the biased sample mean)."""
        row = {"label": f"{self.policy_a} - {self.policy_b}" + (" (pairs design)" if self.design == "pairs" else ""),
               "estimate": self.test.mean,
               "lo": self.bootstrap.lo, "hi": self.bootstrap.hi, "n": self.deals,
               "t_lo": self.test.lo, "t_hi": self.test.hi, "p_value": self.test.p_value,
               "reduction_factor": self.variance.reduction_factor,
               "decision": self.sprt.decision if self.sprt is not None else "",
               "plain_mean": self.test.mean, "confidence": self.confidence}
        if self.adjusted is not None:
            row.update(adjusted_estimate=self.adjusted.test.mean, adjusted_lo=self.adjusted.bootstrap.lo,
                       adjusted_hi=self.adjusted.bootstrap.hi, adjusted_reduction=self.adjusted.reduction_factor,
                       overall_reduction=self.adjusted.overall_factor)
        if self.sequential is not None:
            row.update(label=f"{self.policy_a} - {self.policy_b} (SPRT)", estimate=self.sequential.estimate,
                       lo=self.sequential.lo, hi=self.sequential.hi)
        return row

    def to_dict(self) -> dict:
        return self.summary_row()

    def text(self) -> str:
        if self.sprt is not None:
            return self._sprt_text()
        lines = [
            f"{self.policy_a} - {self.policy_b}: {self.test.mean:+.4f} 牌 per seat per deal over {self._rows_text()}",
            f"  {format_level(self.confidence)} paired bootstrap (BCa) {interval_text(self.bootstrap.lo, self.bootstrap.hi)}"
            f"; t interval [{self.test.lo:+.4f}, {self.test.hi:+.4f}], t = {self.test.t:.2f}, "
            f"p = {format_p(self.test.p_value)}",
            self._duplicate_reduction_line(),
        ]
        return "\n".join(lines + (self._adjusted_lines() if self.adjusted is not None else self._cpu_lines()))

    def _unit(self) -> str:
        """What one row of the differences is, after its count."""
        return "rows x 3 seating pairs" if self.design == "pairs" else "deals x 6 seatings"

    def _rows_text(self) -> str:
        if self.design == "pairs":
            return (f"{self.deals:,} {self._unit()}, each pair on deals of its own seed "
                    f"({3 * self.deals:,} deals, design pairs)")
        return f"{self.deals:,} {self._unit()}"

    def _duplicate_reduction_line(self) -> str:
        factor = self.variance.reduction_factor
        if not math.isfinite(factor):
            return ("  variance reduction of the duplicate design vs unpaired play: undefined (the paired differences "
                    "are constant: the two policies scored alike on every deal)")
        return (f"  variance reduction of the duplicate design vs unpaired play: {factor:.2f}x fewer deals for the "
                f"same standard error")

    def _adjusted_lines(self) -> list[str]:
        if self.adjusted is None:
            return []
        a = self.adjusted
        return [
            f"  {a.adjective}: {a.test.mean:+.4f}, {format_level(self.confidence)} paired bootstrap (BCa) "
            f"[{a.bootstrap.lo:+.4f}, {a.bootstrap.hi:+.4f}]; t interval [{a.test.lo:+.4f}, {a.test.hi:+.4f}], "
            f"p = {format_p(a.test.p_value)}",
            (f"  variance reduction of the {a.method} adjustment vs duplicate alone: {a.reduction_factor:.2f}x "
             f"({100 * a.deals_saved:.0f} % of the deals saved); vs unpaired play: {a.overall_factor:.2f}x"
             if math.isfinite(a.reduction_factor) else
             f"  variance reduction of the {a.method} adjustment: undefined (the plain differences are constant)"),
            f"  {'value model' if a.method == 'luck' else 'adjustment'}: {a.model}",
        ] + self._cpu_lines()

    def _cpu_lines(self) -> list[str]:
        if not math.isfinite(self.cpu_seconds):
            return []
        line = f"  CPU: {self.cpu_seconds:.1f} s this run"
        if self.adjusted is not None:
            method = self.adjusted.method
            if math.isfinite(self.efficiency):
                line += (f"; a duplicate deal cost {1000 * self.cpu_per_deal_duplicate:.2f} ms and its {method} "
                         f"adjustment {1000 * self.cpu_per_deal_adjustment:.2f} ms; efficiency of the {method} "
                         f"adjustment per CPU-second vs plain duplicate: {self.efficiency:.2f}x "
                         f"({'it pays' if self.efficiency > 1 else 'it costs more than it saves'})")
            elif not math.isfinite(self.adjusted.reduction_factor):
                line += (f"; efficiency of the {method} adjustment per CPU-second: undefined (so is its variance "
                         "reduction: the plain differences are constant)")
            else:
                line += (f"; efficiency of the {method} adjustment per CPU-second: not measured "
                         f"({self.cpu_unmeasured or 'the CPU of its deals is unknown'})")
        return [line]

    def to_json(self) -> dict:
        """The comparison as one JSON-ready object (``simkit compare --json``); a figure that is
        undefined (NaN, or an infinite variance reduction) is None, so the JSON stays standard."""
        return finite_or_none(self._json_fields())

    def _json_fields(self) -> dict:
        def interval(test: MeanTest, boot: Interval) -> dict:
            return {"estimate": test.mean, "bootstrap_lo": boot.lo, "bootstrap_hi": boot.hi, "t_lo": test.lo,
                    "t_hi": test.hi, "p_value": test.p_value, "standard_error": test.standard_error}

        out = {"policy_a": self.policy_a, "policy_b": self.policy_b, "seed": self.seed, "deals": self.deals,
               "deals_computed": self.deals_computed, "seatings": len(SEATINGS), "design": self.design,
               "confidence": self.confidence,
               "duplicate": interval(self.test, self.bootstrap),
               "variance_reduction": {"duplicate_vs_unpaired": self.variance.reduction_factor,
                                      "adjusted_vs_duplicate": None, "adjusted_vs_unpaired": None},
               "adjusted": None, "value_model": None, "sprt": None,
               "cpu_seconds": self.cpu_seconds, "cpu_duplicate_seconds": self.cpu_duplicate,
               "cpu_per_deal_duplicate_seconds": self.cpu_per_deal_duplicate,
               "cpu_per_deal_adjustment_seconds": self.cpu_per_deal_adjustment,
               "efficiency_vs_duplicate": self.efficiency, "variance_reduction_method": self.variance_reduction_method,
               "regression": None}
        if self.adjusted is not None:
            out["adjusted"] = interval(self.adjusted.test, self.adjusted.bootstrap)
            out["adjusted"]["deals_saved_vs_duplicate"] = self.adjusted.deals_saved
            out["variance_reduction"].update(adjusted_vs_duplicate=self.adjusted.reduction_factor,
                                             adjusted_vs_unpaired=self.adjusted.overall_factor)
            if self.adjusted.method == "luck":
                out["value_model"] = self.adjusted.model
            else:
                out["regression"] = {"description": self.adjusted.model, "folds": DEFAULT_FOLDS,
                                     "features": [f"{name}_{seat}" for seat in range(3)
                                                  for name, _ in REGRESSION_FEATURES],
                                     "reference_deals": REFERENCE_DEALS_PER_DEAL * self.deals,
                                     "reference_first_deal": REFERENCE_FIRST_DEAL}
        if self.sprt is not None:
            out["sprt"] = {"decision": self.sprt.decision, "h0_mean": self.sprt.mu0, "h1_mean": self.sprt.mu1,
                           "alpha": self.sprt.alpha, "beta": self.sprt.beta, "deals": self.sprt.n,
                           "burn_in": self.sprt.min_n,
                           "estimate": self.sequential.estimate if self.sequential else None,
                           "lo": self.sequential.lo if self.sequential else None,
                           "hi": self.sequential.hi if self.sequential else None}
        return out

    def _sprt_text(self) -> str:
        test, estimate = self.sprt, self.sequential
        level = format_level(estimate.confidence)
        decision = {"accept_h1": f"H1 (A - B = {test.mu1:g}) preferred over H0 (A - B = {test.mu0:g})",
                    "accept_h0": f"H0 (A - B = {test.mu0:g}) preferred over H1 (A - B = {test.mu1:g})"}.get(
            test.decision, "no decision (deals cap reached)")
        tested = self.adjusted.adjective if self.adjusted is not None else "duplicate"
        return "\n".join([
            f"{self.policy_a} - {self.policy_b}: SPRT on the {tested} per-deal differences, H0: mean = {test.mu0:g} "
            f"vs H1: mean = {test.mu1:g} (alpha {test.alpha:g}, beta {test.beta:g}, burn-in {test.min_n:,} deals): "
            f"{decision} after {test.n:,} {self._unit()} (llr {test.llr:+.2f}, bounds "
            f"{test.lower_boundary:+.2f} / {test.upper_boundary:+.2f})",
            f"  estimate under the stopping rule: {estimate.estimate:+.4f} 牌 per seat per deal, {level} interval "
            f"[{estimate.lo:+.4f}, {estimate.hi:+.4f}] (median-unbiased, stage-wise ordering); the test only weighs "
            f"the two means, the interval says what the difference is",
            f"  plain mean {self.test.mean:+.4f}, bootstrap (BCa) [{self.bootstrap.lo:+.4f}, {self.bootstrap.hi:+.4f}], "
            f"t [{self.test.lo:+.4f}, {self.test.hi:+.4f}]: fixed-sample figures, conditional on stopping, biased",
            self._duplicate_reduction_line(),
        ] + self._adjusted_lines())


def interval_text(lo: float, hi: float) -> str:
    """``[lo, hi]`` with signs and 4 decimals, or "undefined" where a bound is NaN (a bootstrap
    of constant differences).

    >>> interval_text(-0.25, 0.5), interval_text(float("nan"), float("nan"))
    ('[-0.2500, +0.5000]', 'undefined')
    """
    if math.isnan(lo) or math.isnan(hi):
        return "undefined"
    return f"[{lo:+.4f}, {hi:+.4f}]"


@dataclasses.dataclass(frozen=True)
class LuckTable:
    """The luck of a comparison's per-deal differences under a value model (:mod:`simkit.runner.luck`):
    ``luck``, (deals, 6) like the differences, and ``model``, the model's description."""

    luck: np.ndarray = dataclasses.field(repr=False)
    model: str = ""


REGRESSION = "regression"  # summarise's adjustment: the cross-fitted regression (regression_adjustment)


def summarise(per_seating: np.ndarray, policy_a: str, policy_b: str, seed: int, confidence: float = 0.95,
              resamples: int = 5_000, adjustment: LuckTable | str | None = None,
              design: str = DEFAULT_DUPLICATE_DESIGN) -> ComparisonResult:
    """Statistics of a (deals, seatings) difference array (all of it: :func:`stopped_by` adds
    the sequential test that chose the deals).  ``adjustment``: a :class:`LuckTable` (the
    differences' luck under a value model, for the luck-adjusted figures) or :data:`REGRESSION`
    (the regression-adjusted figures, :func:`regression_adjustment`, the rows being deals
    0 .. n-1 of ``seed``); ``design``: the comparison's (a ``pairs`` row is three deals, and
    takes no adjustment).

    Per-deal differences that are all equal (a policy against itself) have no bootstrap
    interval: NaN bounds and a :class:`~simkit.errors.DegenerateDataWarning`."""
    confidence = check_confidence(confidence)
    if per_seating.shape[0] < 2:
        raise SimkitError("a comparison needs at least 2 deals")
    d = per_seating.mean(axis=1)
    test = paired_mean_test(d, confidence)
    boot = paired_bootstrap_interval(d, confidence, resamples=resamples, seed=seed)
    variance = duplicate_variance_reduction(per_seating)
    if check_design(design) == "pairs" and adjustment is not None:
        raise SimkitError("an adjustment (luck, regression) adjusts the six seatings of one deal: not with design pairs")
    adjusted = None
    if isinstance(adjustment, LuckTable):
        adjusted = luck_adjustment(per_seating, adjustment.luck, adjustment.model, seed, variance.reduction_factor,
                                   confidence, resamples)
    elif adjustment == REGRESSION:
        adjusted = regression_adjustment(per_seating, seed, variance.reduction_factor, confidence, resamples)
    elif adjustment is not None:
        raise ValueError(f"adjustment must be a LuckTable, {REGRESSION!r} or None, got {adjustment!r}")
    return ComparisonResult(policy_a, policy_b, seed, per_seating, test, boot, variance, None, per_seating.shape[0],
                            None, confidence, adjusted, design=design)


def stopped_by(result: ComparisonResult, test: EmpiricalMeanSPRT, deals_computed: int) -> ComparisonResult:
    """``result`` (:func:`summarise` of the deals the sequential ``test`` used) with the test,
    the estimate and interval valid under its stopping rule, and the deals simulated
    (``deals_computed``: a batch's deals after the stop are simulated, not used)."""
    return dataclasses.replace(result, sprt=test, deals_computed=int(deals_computed),
                               sequential=test.estimate(result.confidence))


def _luck_key(model: ValueModel) -> str:
    """The name of a value model's luck in a comparison folder: its file's stem, its CPU record's entry."""
    return f"luck-{model.digest[:16]}"


def _luck_file(out: str | os.PathLike, model: ValueModel) -> Path:
    """Where a comparison folder keeps the luck of its deals under one value model."""
    return Path(out) / f"{_luck_key(model)}.npy"


CPU_RECORD = "cpu.json"  # a comparison folder's record of what its deals and their luck cost to play
CPU_DUPLICATE = "duplicate"  # its entry for the duplicate deals; "luck-<model digest>" for a luck replay
CPU_COMPARISON = "comparison"  # the record's field naming its comparison: the digest of comparison.json's identity
CPU_ENTRIES = "entries"  # the record's field of entries


def _comparison_digest(out: str | os.PathLike) -> str | None:
    """The digest of the identity in the folder's ``comparison.json`` (what its CPU record is
    bound to), None when that file cannot be read."""
    try:
        return json_digest(read_comparison(out))
    except (SimkitError, OSError):
        return None


def _cpu_record(out: str | os.PathLike) -> tuple[dict[str, dict[str, float]], str]:
    """The folder's CPU record (:func:`read_cpu_record`) and, when a ``cpu.json`` is there but
    cannot be used (edited, damaged, without its digest, or bound to another comparison), why."""
    path = Path(out) / CPU_RECORD
    if not os.path.lexists(path):
        return {}, ""
    problem = (f"its CPU record {CPU_RECORD} was edited, damaged or written for another comparison; play the deals "
               "in a new folder to measure it")
    try:
        data = read_checked_json(path, "a comparison's CPU record", require_digest=True)
    except (FileError, OSError):
        return {}, problem
    owner = _comparison_digest(out)
    entries = data.get(CPU_ENTRIES)
    if owner is None or data.get(CPU_COMPARISON) != owner or not isinstance(entries, dict):
        return {}, problem
    return {key: {"deals": int(entry["deals"]), "seconds": float(entry["seconds"])} for key, entry in entries.items()
            if isinstance(entry, dict) and isinstance(entry.get("deals"), int) and entry["deals"] > 0
            and isinstance(entry.get("seconds"), (int, float)) and math.isfinite(entry["seconds"])
            and entry["seconds"] >= 0}, ""


def read_cpu_record(out: str | os.PathLike) -> dict[str, dict[str, float]]:
    """A comparison folder's CPU record: per entry (:data:`CPU_DUPLICATE`, ``luck-<digest>``) the
    deals it covers (from deal 0) and the CPU seconds they took to play.  ``cpu.json`` carries
    its digest (:func:`~simkit.storage.files.write_checked_json`, as ``comparison.json`` does)
    and the digest of the folder's comparison identity (:data:`CPU_COMPARISON`): a record that
    is missing, edited, damaged, without its digest or copied from another comparison is
    empty, and entries that are malformed are left out (their CPU is then unknown, never
    guessed: the efficiency is "not measured")."""
    return _cpu_record(out)[0]


def _record_cpu(out: str | os.PathLike, key: str, before: int, after: int, seconds: float) -> None:
    """Add to entry ``key`` of the folder's CPU record the ``seconds`` that took its deals from
    ``before`` to ``after``.  Deals played before the record knew them (a folder from an older
    version, or played on a Dask cluster, whose workers' CPU this process does not see, or
    while kernels compiled: ``before`` -1) make the entry unknown: it is dropped, not guessed."""
    if 0 <= before and after <= before:
        return
    record = read_cpu_record(out)
    entry = record.get(key)
    if before < 0:  # unknown
        record.pop(key, None)
    elif before == 0:
        record[key] = {"deals": after, "seconds": seconds}
    elif entry is not None and entry["deals"] == before:
        record[key] = {"deals": after, "seconds": entry["seconds"] + seconds}
    else:
        record.pop(key, None)
    _write_cpu_record(out, record)


def _forget_cpu(out: str | os.PathLike, key: str) -> None:
    """Drop entry ``key`` of the folder's CPU record: its deals were played where this process
    cannot see the CPU (a Dask cluster)."""
    record = read_cpu_record(out)
    if key in record:
        record.pop(key)
        _write_cpu_record(out, record)


def _write_cpu_record(out: str | os.PathLike, record: dict[str, dict[str, float]]) -> None:
    """Write the folder's CPU record with its digest, bound to the folder's comparison; in a
    folder this process may only read, or without a readable ``comparison.json``, nothing is written."""
    owner = _comparison_digest(out)
    if owner is None:
        return
    try:
        write_checked_json(Path(out) / CPU_RECORD, {CPU_COMPARISON: owner, CPU_ENTRIES: record})
    except (OSError, FileError):
        pass


def cpu_per_deal(out: str | os.PathLike, key: str, deals: int) -> float:
    """CPU seconds one deal of entry ``key`` cost, from the folder's record, when the record
    covers at least the first ``deals`` deals; NaN otherwise."""
    entry = read_cpu_record(out).get(key)
    if entry is None or entry["deals"] < deals:
        return math.nan
    return entry["seconds"] / entry["deals"]


def _deals_played(out: str | os.PathLike) -> int:
    """Deals (from deal 0, every seating) a comparison folder holds: its batch files' records;
    0 for a folder not yet made, -1 when a record cannot be read (the run itself then says why)."""
    if not Path(out).is_dir():
        return 0
    counts = []
    try:
        for seating in SEATINGS:
            directory = seating_dir(out, seating)
            manifest = read_manifest(directory) if directory.is_dir() else None
            files = (manifest or {}).get(FILES) or {}
            counts.append(sum(int(record.get("deals", 0)) for record in files.values() if isinstance(record, dict)))
    except (SimkitError, OSError, TypeError, ValueError):
        return -1
    return min(counts)


LUCK_SLICE_PLAYOUTS = 20  # deals replayed (and kept) at a time under play-out values: progress, and a resume point
LUCK_SLICE_DASK = 250  # deals of a network luck replay per Dask task


@dataclasses.dataclass(frozen=True)
class _LuckTasks:
    """What every task of a luck replay on Dask shares: the two policies, the seed, the rules,
    the value model's block, and the user policies' source digests where the comparison
    started (checked where each slice is replayed)."""

    policy_a: PolicySpec
    policy_b: PolicySpec
    seed: int
    rules: RuleSet | None
    block: np.ndarray
    sources: tuple[tuple[str, str], ...]


def _luck_task(config: _LuckTasks, task: tuple[int, tuple[int, int]], threads: int | None = None
               ) -> tuple[int, tuple[np.ndarray, np.ndarray]]:
    """Deals ``lo .. hi - 1`` of a luck replay (:func:`duplicate_luck`) as
    :func:`~simkit.runner.simulate.run_dask` runs it, tagged with its number."""
    use_threads(threads)
    number, (lo, hi) = task
    require_policy_sources((config.policy_a, config.policy_b), config.sources, started="the comparison")
    return number, duplicate_luck(config.policy_a, config.policy_b, config.seed, hi - lo, config.block, config.rules,
                                  lo)


def _luck_slices(run: "_Run", slices: list[tuple[int, int]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(replayed differences, luck) of each slice (lo, hi) of deals, in the order of
    ``slices``: replayed here, or with the run's Dask client as tasks on its cluster (all
    submitted at once; each yielded as soon as it and every slice before it are back; a killed
    worker's tasks run again elsewhere, and give the same arrays)."""
    spec, model = run.spec, run.model
    if run.client is None:
        for lo, hi in slices:
            yield duplicate_luck(spec.policy_a, spec.policy_b, spec.seed, hi - lo, model.block, spec.rules, lo)
        return
    config = _LuckTasks(spec.policy_a, spec.policy_b, spec.seed, spec.rules, model.block,
                        policy_sources((spec.policy_a, spec.policy_b)))
    yield from stream_dask_in_order(_luck_task, config, slices, run.client)


def _kept_luck(path: Path) -> np.ndarray:
    """The luck a comparison folder keeps under one value model (deals x 6), none when the file
    is missing, unreadable or malformed (then replayed and rewritten)."""
    empty = np.zeros((0, len(SEATINGS)))
    if not path.is_file():
        return empty
    try:
        kept = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return empty
    return kept if kept.ndim == 2 and kept.shape[1] == len(SEATINGS) else empty


def _replayed_luck(run: "_Run", per_seating: np.ndarray, first_deal: int = 0) -> np.ndarray:
    """The luck of deals ``first_deal ..`` of a comparison (rows of ``per_seating``), replayed
    under every seating; the replay must give the stored differences exactly.  The luck is kept
    in the comparison's folder (``luck-<model digest>.npy``, deals x 6) and the deals already
    there are read back instead of replayed (a re-run, or a later batch of an SPRT).
    Play-out values, slow, are replayed :data:`LUCK_SLICE_PLAYOUTS` deals at a time, each slice
    kept as it ends (an interrupted replay resumes there), with a progress bar unless quiet.
    With a Dask client the slices (:data:`LUCK_SLICE_DASK` deals under a network) are tasks
    on its cluster, kept in deal order as they come back: the same luck, byte for byte (each
    deal's luck depends on its seed and number only)."""
    model, out, client = run.model, run.out, run.client
    count = per_seating.shape[0]
    path = _luck_file(out, model)
    kept = _kept_luck(path)
    have = kept.shape[0]
    if have >= first_deal + count:
        return kept[first_deal : first_deal + count].copy()
    start = max(first_deal, have)  # replay from the first deal not kept
    stop = first_deal + count
    keep = have == start and os.access(path.parent, os.W_OK)
    if model.is_playouts:
        step = LUCK_SLICE_PLAYOUTS
    else:
        step = LUCK_SLICE_DASK if client is not None else max(1, stop - start)
    progress = Progress(stop - start, "deals", "luck replayed",
                        progress_enabled(run.execution.quiet) and (model.is_playouts or client is not None))
    slices = [(lo, min(stop, lo + step)) for lo in range(start, stop, step)]
    parts = [np.zeros((0, len(SEATINGS)))]
    replays = _luck_slices(run, slices)
    if keep and client is not None:
        _forget_cpu(out, _luck_key(model))  # the replay's CPU is spent on the cluster's workers
    if keep and client is None and slices:  # compiled before the clock starts: never counted as the luck's CPU
        _warm_luck(run.spec, model)
    # a kernel compiled while the clock runs (one the warm-up missed) makes the record unknown
    with CompileTimer() as compiling:
        clock = cpu_seconds()
        try:
            for (lo, hi), (replayed, luck) in zip(slices, replays):
                expected = per_seating[lo - first_deal : hi - first_deal]
                if not np.array_equal(replayed, expected):
                    bad = int(np.argwhere(np.any(replayed != expected, axis=1))[0, 0]) + lo
                    raise SimkitError(f"the luck replay of deal {bad} differs from the stored comparison: the folder "
                                      "was written by another simkit version or its files were changed")
                parts.append(luck)
                progress.update(hi - lo)
                if keep:
                    _save_luck(path, np.concatenate([kept] + parts))
                    if client is None:  # what the slice cost, kept beside it
                        now = cpu_seconds()
                        _record_cpu(out, _luck_key(model), -1 if compiling.compiled else lo, hi, now - clock)
                        clock = now
        finally:
            replays.close()  # on Dask: the slices not yet back are cancelled
            progress.close()
    luck = np.concatenate(parts)
    if start > first_deal:
        return np.concatenate([kept[first_deal:start], luck])
    return luck


def _save_luck(path: Path, luck: np.ndarray) -> None:
    """Keep a comparison's luck (deals x 6) in ``path``, atomically."""

    def save(temporary: str) -> None:
        with open(temporary, "wb") as handle:
            np.save(handle, luck, allow_pickle=False)

    atomic_write(path, save)


def compare(spec: CompareSpec, out: str | os.PathLike, execution: Execution = Execution(), *,
            client=None) -> ComparisonResult:
    """Compare A with B (:class:`~simkit.specs.compare.CompareSpec`) on ``spec.deals`` duplicate
    deals kept in ``out`` (resumable), or, with ``spec.sprt=(delta, alpha, beta)``,
    sequentially, batch by batch, until the SPRT decides or the deals are used up (the test
    checks after every deal, in deal order, and decides no earlier than ``spec.burn_in`` deals;
    default :func:`simkit.analysis.sequential.default_burn_in` of delta).

    ``spec.luck``: also give the luck-adjusted estimate (:mod:`simkit.runner.luck`) under a
    value model (refused if it was trained on the seed); with an SPRT the test then runs on
    the adjusted differences.  ``spec.variance_reduction`` ``regression``: the cross-fitted
    regression adjustment on the dealt hands (:func:`regression_adjustment`) beside plain
    duplicate's.  ``spec.design`` ``pairs``: each complementary pair of seatings on deals of its
    own seed (:mod:`simkit.runner.duplicate`: more precise per CPU-second where a deal's pairs
    are positively correlated; no adjustment with it).

    ``execution.backend='dask'``: the duplicate deals run on a Dask cluster (``client``, else
    one client connected once for the whole comparison, an SPRT's batches included: to
    ``execution.scheduler``, or a ``LocalCluster`` of ``execution.workers``); the result is the
    same as local, byte for byte, and so is the luck replay, in slices of deals on the same
    cluster (:func:`_replayed_luck`).

    >>> import tempfile
    >>> spec = CompareSpec("greedy", "random", deals=200, seed=1, batch_size=100)
    >>> result = compare(spec, tempfile.mkdtemp(), Execution(quiet=True))
    >>> result.deals, result.test.mean > 0, result.to_frame()["n"].tolist()
    (200, True, [200])
    """
    check_backend(execution.backend, execution.workers, execution.scheduler)
    model = value_model_for(spec.luck, spec.seed)
    with dask_session(execution.backend, execution.workers, execution.scheduler, client) as client:  # once
        run = _Run(spec, out, execution, client, model)
        if client is None:  # compiled (or loaded from the cache) before any CPU is counted
            _warm_duplicate(spec)
        start = cpu_seconds()
        result, duplicate_cpu = _sequential(run) if spec.sprt is not None else _fixed(run)
        result = dataclasses.replace(result, cpu_seconds=cpu_seconds() - start, cpu_duplicate=duplicate_cpu)
        return _with_cpu_per_deal(run, result)


@dataclasses.dataclass(frozen=True)
class _Run:
    """One comparison as it runs: its spec, its folder, how it executes, its Dask client (or
    None) and its value model (or None)."""

    spec: CompareSpec
    out: str | os.PathLike
    execution: Execution
    client: Any
    model: ValueModel | None


def _play_duplicate(run: _Run, max_batches: int | None = None) -> tuple[np.ndarray, float]:
    """Play the comparison's duplicate deals (the first ``max_batches`` batches of each
    seating), recording their CPU in the folder: (their per-seating differences, the CPU
    seconds this took)."""
    clock = cpu_seconds()
    before = _deals_played(run.out)
    with CompileTimer() as compiling:
        run_duplicate(run.spec, run.out, run.execution, client=run.client, max_batches=max_batches)
    per_seating = seating_differences(run.out, batches=max_batches)
    seconds = cpu_seconds() - clock
    _note_duplicate_cpu(run.out, -1 if compiling.compiled else before, seconds, run.client)
    return per_seating, seconds


def _summarise(run: _Run, per_seating: np.ndarray, luck: np.ndarray | None = None) -> ComparisonResult:
    """:func:`summarise` of the comparison's differences (with their ``luck`` under its value
    model, or its regression adjustment)."""
    spec = run.spec
    adjustment = (LuckTable(luck, run.model.describe()) if luck is not None
                  else REGRESSION if spec.regression else None)
    return summarise(per_seating, policy_label(spec.policy_a), policy_label(spec.policy_b), spec.seed,
                     spec.confidence, adjustment=adjustment, design=spec.design)


def _fixed(run: _Run) -> tuple[ComparisonResult, float]:
    """A comparison of every deal of the spec: (its result, the CPU of its duplicate deals)."""
    per_seating, duplicate_cpu = _play_duplicate(run)
    luck = _replayed_luck(run, per_seating) if run.model is not None else None
    return _summarise(run, per_seating, luck), duplicate_cpu


def _sequential(run: _Run) -> tuple[ComparisonResult, float]:
    """A comparison under the spec's SPRT, batch by batch until it decides (on the
    luck-adjusted differences with a value model): (its result, the CPU of its duplicate deals)."""
    spec = run.spec
    delta, alpha, beta = spec.sprt
    test = EmpiricalMeanSPRT(delta, alpha, beta, min_n=spec.burn_in)
    fed = 0
    duplicate_cpu = 0.0
    per_parts, luck_parts = [], []
    for k in range(1, math.ceil(spec.deals / spec.batch_size) + 1):
        per, seconds = _play_duplicate(run, k)
        duplicate_cpu += seconds
        new = per[fed:]
        new_luck = _replayed_luck(run, new, fed) if run.model is not None else np.zeros_like(new)
        fed = per.shape[0]
        before = test.n
        decision = test.update((new - new_luck).mean(axis=1))
        per_parts.append(new[: test.n - before])
        luck_parts.append(new_luck[: test.n - before])
        if decision != "continue":
            break
    per_seating = np.concatenate(per_parts, axis=0)
    luck = np.concatenate(luck_parts, axis=0) if run.model is not None else None
    return stopped_by(_summarise(run, per_seating, luck), test, fed), duplicate_cpu


def _warm_duplicate(spec: CompareSpec) -> None:
    """Compile (or load from the cache) the deal kernels of A and B before the duplicate deals'
    CPU clock starts (:func:`~simkit.runner.simulate.warm_simulate`: one deal, in a temporary
    folder), so that compilation is never counted as their CPU.  A Python-tier policy's deals
    are played in Python (:mod:`simkit.runner.python_play`): no deal kernel to warm."""
    if not any(is_python_policy(policy) for policy in (spec.policy_a, spec.policy_b)):
        warm_simulate([spec.policy_a, spec.policy_b, spec.policy_b], spec.rules, 1, "fixed")


_WARM_LUCK: set[tuple] = set()  # (policies, value model, rules) whose luck kernels this process has run


def _warm_luck(spec: CompareSpec, model: ValueModel) -> None:
    """Compile (or load from the cache) the luck replay's kernels of the spec's A and B under
    ``model`` before its CPU clock starts: one deal of one seating replayed
    (:func:`simkit.runner.luck.luck_rows`; every seating runs the same kernels), once per process."""
    key = (spec.policy_a.text(), spec.policy_b.text(), model.digest, tuple(spec.rules.to_array().tolist()))
    if key in _WARM_LUCK:
        return
    luck_module.luck_rows(seating_policies(spec.policy_a, spec.policy_b, SEATINGS[0]), spec.seed, 1, model.block,
                          spec.rules)
    _WARM_LUCK.add(key)


def _note_duplicate_cpu(out, before: int, seconds: float, client) -> None:
    """Record in the comparison folder what its new duplicate deals cost (:func:`_record_cpu`;
    ``before`` -1 when kernels compiled meanwhile: unknown); on a Dask cluster the workers' CPU
    is not seen here, so the record forgets them."""
    if client is not None:
        _forget_cpu(out, CPU_DUPLICATE)
    else:
        _record_cpu(out, CPU_DUPLICATE, before, _deals_played(out), seconds)


def _with_cpu_per_deal(run: _Run, result: ComparisonResult) -> ComparisonResult:
    """``result`` with the CPU per deal of its duplicate deals and of its adjustment: from the
    folder's CPU record (the luck replay's entry under the run's value model), or this run's for
    the regression (fitted anew each run); NaN, with the reason, where they are unknown."""
    if result.adjusted is None:
        return result
    out, model, client = run.out, run.model, run.client
    deals = result.deals_computed or result.deals
    duplicate = cpu_per_deal(out, CPU_DUPLICATE, deals)
    if model is not None:
        adjustment = cpu_per_deal(out, _luck_key(model), deals)
    else:
        adjustment = (result.cpu_seconds - result.cpu_duplicate) / result.deals
    why = ""
    if not (math.isfinite(duplicate) and math.isfinite(adjustment)):
        why = ("its deals or their luck were played on a Dask cluster, whose workers' CPU is not measured here"
               if client is not None else _cpu_record(out)[1] or
               "the folder holds deals or luck played without a CPU record (by an older simkit, or while kernels "
               "compiled); play them in a new folder to measure it")
    return dataclasses.replace(result, cpu_per_deal_duplicate=duplicate, cpu_per_deal_adjustment=adjustment,
                               cpu_unmeasured=why)


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its reaped child processes: what a
    comparison costs (worker processes still alive are not counted until they exit)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def load_comparison(out: str | os.PathLike, confidence: float = 0.95) -> ComparisonResult:
    """Statistics of a finished comparison folder."""
    identity = read_comparison(out)
    return summarise(seating_differences(out), label_of_text(identity["policy_a"]), label_of_text(identity["policy_b"]),
                     identity["seed"], confidence, design=comparison_design(identity))


def sprt_plot_stem(prefix: str, index: int) -> str:
    """File stem of the log-likelihood-ratio path plot of the ``index``-th comparison of a section."""
    return f"{prefix}comparison_sprt_llr_{index}"


def comparison_section(results: list[ComparisonResult], directory: str | Path, prefix: str = "",
                       heading: str = "##") -> list[str]:
    """Markdown lines and figures (forest plot; convergence of each result; the llr path of each
    sequential test) for comparisons, all at the same confidence (the results')."""
    directory = Path(directory)
    levels = {r.confidence for r in results}
    if len(levels) > 1:
        raise ValueError(f"comparisons at different confidence levels cannot share a table, got {sorted(levels)}")
    confidence = levels.pop() if levels else 0.95
    level = format_level(confidence)
    rows = pd.DataFrame([r.summary_row() for r in results])
    sequential = [r.sprt is not None for r in results]
    forest = forest_plot(rows, f"mean payoff difference A - B (牌 per seat per deal, {level} paired bootstrap"
                         + ("; SPRT rows: interval under the stopping rule)" if any(sequential) else ")"),
                         "Duplicate comparisons")
    save_figure(forest.figure, directory, f"{prefix}comparison_forest")
    mark = ["†" if flag else "" for flag in sequential]
    table = pd.DataFrame({
        "A - B": rows["label"], "deals (x6 seatings)": rows["n"].map("{:,}".format),
        "mean difference": [f"{m:+.4f}{x}" for m, x in zip(rows["plain_mean"], mark)],
        f"{level} bootstrap (BCa)": [f"{interval_text(r.bootstrap.lo, r.bootstrap.hi)}{x}" for r, x in zip(results, mark)],
        f"{level} t": [f"[{r.test.lo:+.4f}, {r.test.hi:+.4f}]{x}" for r, x in zip(results, mark)],
        "p-value": [f"{format_p(p)}{x}" for p, x in zip(rows["p_value"], mark)],
        "variance reduction": rows["reduction_factor"].map(lambda f: f"{f:.2f}x" if math.isfinite(f) else "undefined"),
    })
    if len(results) > 1:
        table.insert(table.columns.get_loc("p-value") + 1, "Holm p",
                     [f"{format_p(p)}{x}" for p, x in zip(holm_adjust(rows["p_value"].to_numpy()), mark)])
    if any(r.adjusted is not None for r in results):
        methods = sorted({r.adjusted.method for r in results if r.adjusted is not None})
        table[f"{'/'.join(methods)}-adjusted [" + level + " bootstrap]"] = [
            f"{r.adjusted.test.mean:+.4f} [{r.adjusted.bootstrap.lo:+.4f}, {r.adjusted.bootstrap.hi:+.4f}]"
            if r.adjusted is not None else "—" for r in results]
        table["adjusted vs duplicate"] = [f"{r.adjusted.reduction_factor:.2f}x" if r.adjusted is not None
                                          and math.isfinite(r.adjusted.reduction_factor) else "—" for r in results]
        table["efficiency per CPU-second"] = [
            "—" if r.adjusted is None or not math.isfinite(r.adjusted.reduction_factor)
            else f"{r.efficiency:.2f}x" if math.isfinite(r.efficiency) else "not measured" for r in results]
    if any(sequential):
        table["SPRT: decision; estimate and interval under the stopping rule"] = [
            f"{decision_text(r.sprt.decision, r.sprt.mu0, r.sprt.mu1)} at {r.sprt.n:,}; {r.sequential.estimate:+.4f} "
            f"[{r.sequential.lo:+.4f}, {r.sequential.hi:+.4f}]" if r.sprt is not None else "" for r in results]
    lines = [f"{heading} Pairwise duplicate comparisons", "",
             "Each deal is played under the six seatings of A and B; the per-deal difference is the mean over "
             "seatings of (A's mean seat payoff - B's). Variance reduction = how many times more deals unpaired "
             "play (each game on a fresh deal) would need for the same standard error."
             + (" A row marked (pairs design) plays each complementary pair of seatings (A alone at a seat, then "
                "B alone there) on deals of its own seed: its deals column counts rows of three deals."
                if any(r.design == "pairs" for r in results) else "")
             + (f" Holm p: Holm-adjusted over the family of these {len(results)} comparisons' tests." if len(results) > 1
                else "")
             + (" Luck-adjusted: the same deals with the luck of every draw taken out (docs/compare.md); "
                "adjusted vs duplicate: the variance reduction of that adjustment per deal; efficiency per "
                "CPU-second: that reduction times plain duplicate's share of the CPU the deals and their luck cost "
                "when played (above 1 the adjustment pays for its CPU)." if any(
                    r.adjusted is not None for r in results) else ""), ""]
    lines += markdown_table(table) + [""]
    if any(sequential):
        lines += ["† Stopped by a sequential test (SPRT): the plain mean, the fixed-sample intervals and the p-value "
                  "are conditional on stopping and biased (a test stops early on a lucky run). The SPRT column gives "
                  "the median-unbiased estimate and the confidence interval that are valid under the stopping rule "
                  "(docs/methods.md).", ""]
    lines += [f"![comparison forest plot]({prefix}comparison_forest.png)", ""]
    for i, result in enumerate(results):
        d = result.per_seating.mean(axis=1)
        if d.size >= 100:
            stem = f"{prefix}comparison_convergence_{i}"
            curve = convergence_curve(d, confidence)
            save_figure(convergence_plot(curve, "mean difference A - B (牌 per seat per deal)",
                                         f"{result.policy_a} - {result.policy_b}: running estimate", reference=0.0,
                                         reference_label="no difference", confidence=confidence).figure,
                        directory, stem)
            lines += [f"![convergence {result.policy_a} - {result.policy_b}]({stem}.png)", ""]
        if result.sprt is not None:
            test = result.sprt
            stem = sprt_plot_stem(prefix, i)
            llr = sprt_llr_plot(test.path, test.lower_boundary, test.upper_boundary,
                                f"{result.policy_a} - {result.policy_b}: SPRT, H0 mean {test.mu0:g} vs H1 mean {test.mu1:g}",
                                min_n=test.min_n, decision=test.decision, mu0=test.mu0, mu1=test.mu1)
            save_figure(llr.figure, directory, stem)
            lines += [f"![SPRT log-likelihood ratio {result.policy_a} - {result.policy_b}]({stem}.png)", ""]
    return lines


LUCK_TABLE = "luck.parquet"  # per deal and seating: A - B, its luck and the adjusted difference


def write_comparison_report(result: ComparisonResult, directory: str | os.PathLike) -> Path:
    """``report.md`` of one comparison, with per-seating means, forest and convergence plots;
    with the luck adjustment also ``luck.parquet`` (deal, seating, difference, luck, adjusted)."""
    directory = Path(directory)
    per = pd.DataFrame({"seating": list(SEATINGS), "mean A - B": result.per_seating.mean(axis=0)})
    if result.adjusted is not None and result.adjusted.method == "luck":  # per deal: how much of it was draws
        deals, seatings = result.per_seating.shape
        write_parquet(pd.DataFrame({
            "deal": np.repeat(np.arange(deals, dtype=np.int64), seatings),
            "seating": np.tile(np.array(SEATINGS), deals),
            "difference": result.per_seating.ravel(), "luck": result.adjusted.luck.ravel(),
            "adjusted": (result.per_seating - result.adjusted.luck).ravel()}), directory / LUCK_TABLE)
    lines = ["# Duplicate comparison", "", "```", result.text(), "```", ""]
    lines += comparison_section([result], directory)
    lines += ["## Per seating", ""] + markdown_table(per, {"mean A - B": "+.4f"}) + [""]
    path = directory / "report.md"
    write_text(path, "\n".join(lines))
    return path
