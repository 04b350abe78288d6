"""Strategy comparison on a duplicate design (see :mod:`simkit.runner.duplicate`).

Per deal and seating, the A-minus-B difference is ``mean payoff of A's seats - mean payoff of
B's seats`` (牌 per seat); the deal's paired difference is the mean over the six seatings, in
which every seat is played by A three times and by B three times, so the cards' luck cancels.
Reported: the mean difference with a t interval and a paired bootstrap (BCa) interval over
deals, a t test, the variance reduction against unpaired play, and optionally a sequential
test (:class:`~simkit.analysis.sequential.EmpiricalMeanSPRT`, the generalised SPRT on the
empirical distribution of the per-deal differences) that stops as soon as "A beats B by >= delta"
or "A does not beat B" is decided.  After such a stop the report gives the median-unbiased
estimate and the interval that are valid under the stopping rule; the plain mean and the
fixed-sample intervals are shown only labelled as conditional on stopping and biased.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from simkit.analysis.plots import convergence_plot, decision_text, forest_plot, save_figure, sprt_llr_plot
from simkit.analysis.report import format_p, markdown_table
from simkit.analysis.results import Interval, MeanTest, Result, VarianceReduction, format_level
from simkit.analysis.sequential import EmpiricalMeanSPRT, SequentialEstimate
from simkit.analysis.stats import (
    check_confidence,
    convergence_curve,
    duplicate_variance_reduction,
    paired_bootstrap_interval,
    paired_mean_test,
)
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec
from simkit.rules import RuleSet
from simkit.runner.duplicate import SEATINGS, read_comparison, run_duplicate, seating_dir
from simkit.storage import load_dataset
from simkit.storage.files import write_text


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

    @property
    def deals(self) -> int:
        return int(self.per_seating.shape[0])

    def summary_row(self) -> dict:
        """One row of the comparison table; after an SPRT, ``estimate``/``lo``/``hi`` are the
        estimate and interval under the stopping rule (``plain_mean`` is the biased sample mean)."""
        row = {"label": f"{self.policy_a} - {self.policy_b}", "estimate": self.test.mean,
               "lo": self.bootstrap.lo, "hi": self.bootstrap.hi, "n": self.deals,
               "t_lo": self.test.lo, "t_hi": self.test.hi, "p_value": self.test.p_value,
               "reduction_factor": self.variance.reduction_factor,
               "decision": self.sprt.decision if self.sprt is not None else "",
               "plain_mean": self.test.mean, "confidence": self.confidence}
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
            f"{self.policy_a} - {self.policy_b}: {self.test.mean:+.4f} 牌 per seat per deal over {self.deals:,} deals "
            f"x 6 seatings",
            f"  {format_level(self.confidence)} paired bootstrap (BCa) [{self.bootstrap.lo:+.4f}, "
            f"{self.bootstrap.hi:+.4f}]; t interval [{self.test.lo:+.4f}, {self.test.hi:+.4f}], t = {self.test.t:.2f}, "
            f"p = {format_p(self.test.p_value)}",
            f"  variance reduction of the duplicate design vs unpaired play: "
            f"{self.variance.reduction_factor:.2f}x fewer deals for the same standard error",
        ]
        return "\n".join(lines)

    def _sprt_text(self) -> str:
        test, estimate = self.sprt, self.sequential
        level = format_level(estimate.confidence)
        decision = {"accept_h1": f"accept H1 (A beats B by >= {test.delta:g})",
                    "accept_h0": "accept H0 (A does not beat B)"}.get(test.decision, "no decision (deals cap reached)")
        return "\n".join([
            f"{self.policy_a} - {self.policy_b}: SPRT H0: mean = {test.mu0:g} vs H1: mean = {test.mu1:g} "
            f"(alpha {test.alpha:g}, beta {test.beta:g}): {decision} after {test.n:,} deals x 6 seatings "
            f"(llr {test.llr:+.2f}, bounds {test.lower_boundary:+.2f} / {test.upper_boundary:+.2f})",
            f"  estimate under the stopping rule: {estimate.estimate:+.4f} 牌 per seat per deal, {level} interval "
            f"[{estimate.lo:+.4f}, {estimate.hi:+.4f}] (median-unbiased, stage-wise ordering)",
            f"  plain mean {self.test.mean:+.4f}, bootstrap (BCa) [{self.bootstrap.lo:+.4f}, {self.bootstrap.hi:+.4f}], "
            f"t [{self.test.lo:+.4f}, {self.test.hi:+.4f}]: fixed-sample figures, conditional on stopping, biased",
            f"  variance reduction of the duplicate design vs unpaired play: "
            f"{self.variance.reduction_factor:.2f}x fewer deals for the same standard error",
        ])


def summarise(per_seating: np.ndarray, policy_a: str, policy_b: str, seed: int, confidence: float = 0.95,
              resamples: int = 5_000, sprt: EmpiricalMeanSPRT | None = None,
              deals_computed: int | None = None) -> ComparisonResult:
    """Statistics of a (deals, seatings) difference array (``sprt``: the test that chose the deals;
    ``deals_computed``: the deals simulated, default all of ``per_seating``'s).

    Per-deal differences that are all equal (a policy against itself) have no bootstrap
    interval: NaN bounds and a :class:`~simkit.errors.DegenerateDataWarning`."""
    confidence = check_confidence(confidence)
    if per_seating.shape[0] < 2:
        raise SimkitError("a comparison needs at least 2 deals")
    d = per_seating.mean(axis=1)
    test = paired_mean_test(d, confidence)
    boot = paired_bootstrap_interval(d, confidence, resamples=resamples, seed=seed)
    variance = duplicate_variance_reduction(per_seating)
    sequential = sprt.estimate(confidence) if sprt is not None else None
    computed = per_seating.shape[0] if deals_computed is None else int(deals_computed)
    return ComparisonResult(policy_a, policy_b, seed, per_seating, test, boot, variance, sprt, computed,
                            sequential, confidence)


def compare(
    policy_a: str | PolicySpec,
    policy_b: str | PolicySpec,
    out: str | os.PathLike,
    deals: int = 10_000,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 2_000,
    workers: int = 1,
    sprt: tuple[float, float, float] | None = None,
    confidence: float = 0.95,
    quiet: bool = False,
) -> ComparisonResult:
    """Compare A with B on ``deals`` duplicate deals (or, with ``sprt=(delta, alpha, beta)``,
    sequentially, batch by batch, until the SPRT decides or ``deals`` are used up; the test
    checks after every deal, in deal order, and decides no earlier than its ``min_n`` = 100 deals).

    >>> import tempfile
    >>> result = compare("greedy", "random", tempfile.mkdtemp(), deals=200, seed=1, batch_size=100, quiet=True)
    >>> result.deals, result.test.mean > 0, result.to_frame()["n"].tolist()
    (200, True, [200])
    """
    text_a = policy_a.text() if isinstance(policy_a, PolicySpec) else str(policy_a)
    text_b = policy_b.text() if isinstance(policy_b, PolicySpec) else str(policy_b)
    if sprt is None:
        run_duplicate(policy_a, policy_b, deals, seed, out, rules, batch_size, workers, quiet)
        return summarise(seating_differences(out), text_a, text_b, seed, confidence)
    delta, alpha, beta = sprt
    test = EmpiricalMeanSPRT(delta, alpha, beta)
    n_batches = math.ceil(deals / batch_size)
    fed = 0
    per_parts = []
    for k in range(1, n_batches + 1):
        run_duplicate(policy_a, policy_b, deals, seed, out, rules, batch_size, workers, quiet, max_batches=k)
        per = seating_differences(out, batches=k)
        new = per[fed:]
        fed = per.shape[0]
        before = test.n
        decision = test.update(new.mean(axis=1))
        per_parts.append(new[: test.n - before])
        if decision != "continue":
            break
    per_seating = np.concatenate(per_parts, axis=0)
    return summarise(per_seating, text_a, text_b, seed, confidence, sprt=test, deals_computed=fed)


def load_comparison(out: str | os.PathLike, confidence: float = 0.95) -> ComparisonResult:
    """Statistics of a finished comparison folder."""
    identity = read_comparison(out)
    return summarise(seating_differences(out), identity["policy_a"], identity["policy_b"], identity["seed"], confidence)


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
    forest = forest_plot(rows, f"mean payoff difference A - B (pai per seat per deal, {level} paired bootstrap"
                         + ("; SPRT rows: interval under the stopping rule)" if any(sequential) else ")"),
                         "Duplicate comparisons")
    save_figure(forest.figure, directory, f"{prefix}comparison_forest")
    mark = ["†" if flag else "" for flag in sequential]
    table = pd.DataFrame({
        "A - B": rows["label"], "deals (x6 seatings)": rows["n"].map("{:,}".format),
        "mean difference": [f"{m:+.4f}{x}" for m, x in zip(rows["plain_mean"], mark)],
        f"{level} bootstrap (BCa)": [f"[{r.bootstrap.lo:+.4f}, {r.bootstrap.hi:+.4f}]{x}" for r, x in zip(results, mark)],
        f"{level} t": [f"[{r.test.lo:+.4f}, {r.test.hi:+.4f}]{x}" for r, x in zip(results, mark)],
        "p-value": [f"{format_p(p)}{x}" for p, x in zip(rows["p_value"], mark)],
        "variance reduction": rows["reduction_factor"].map("{:.2f}x".format),
    })
    if any(sequential):
        table["SPRT: decision; estimate and interval under the stopping rule"] = [
            f"{decision_text(r.sprt.decision, r.sprt.mu0, r.sprt.mu1)} at {r.sprt.n:,}; {r.sequential.estimate:+.4f} "
            f"[{r.sequential.lo:+.4f}, {r.sequential.hi:+.4f}]" if r.sprt is not None else "" for r in results]
    lines = [f"{heading} Pairwise duplicate comparisons", "",
             "Each deal is played under the six seatings of A and B; the per-deal difference is the mean over "
             "seatings of (A's mean seat payoff - B's). Variance reduction = how many times more deals unpaired "
             "play (each game on a fresh deal) would need for the same standard error.", ""]
    lines += markdown_table(table) + [""]
    if any(sequential):
        lines += ["† Stopped by a sequential test (SPRT): the plain mean, the fixed-sample intervals and the p-value "
                  "are conditional on stopping and biased (a test stops early on a lucky run). The SPRT column gives "
                  "the median-unbiased estimate and the confidence interval that are valid under the stopping rule "
                  "(docs/analysis.md).", ""]
    lines += [f"![comparison forest plot]({prefix}comparison_forest.png)", ""]
    for i, result in enumerate(results):
        d = result.per_seating.mean(axis=1)
        if d.size >= 100:
            stem = f"{prefix}comparison_convergence_{i}"
            curve = convergence_curve(d, confidence)
            save_figure(convergence_plot(curve, "mean difference A - B (pai per seat per deal)",
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


def write_comparison_report(result: ComparisonResult, directory: str | os.PathLike) -> Path:
    """``report.md`` of one comparison, with per-seating means, forest and convergence plots."""
    directory = Path(directory)
    per = pd.DataFrame({"seating": list(SEATINGS), "mean A - B": result.per_seating.mean(axis=0)})
    lines = ["# Duplicate comparison", "", "```", result.text(), "```", ""]
    lines += comparison_section([result], directory)
    lines += ["## Per seating", ""] + markdown_table(per, {"mean A - B": "+.4f"}) + [""]
    path = directory / "report.md"
    write_text(path, "\n".join(lines))
    return path
