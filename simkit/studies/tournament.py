"""Round-robin duplicate tournaments: every pair of policies on the same deals, a crosstable of
mean payoff differences, and two ratings per policy (:mod:`simkit.analysis.ratings`):

* the **payoff rating** (primary): additive ratings in 牌 per seat per deal fitted to the
  pairings' mean duplicate differences (weighted by their precision), so that a gap between two
  ratings reads as the payoff one policy takes from the other per deal;
* the **Davidson rating**: Bradley–Terry with ties (Davidson 1970) on the per-deal outcome (ahead,
  level or behind the opponent on the same cards), on the Elo scale: how often a policy comes
  out ahead, whatever the sizes.

Both have percentile bootstrap intervals over deals, resampled jointly across the pairings that
played the same deals, for every rating and for every pairwise gap (:meth:`TournamentResult.gaps`).

Each pairing is a duplicate comparison (:func:`simkit.studies.compare.compare`: the six
seatings of the pair on deals 0 .. N-1 of the tournament's seed, so every pairing plays the
*same* cards), stored as its own resumable folder of Parquet datasets ``OUT/pair-I-J`` (I < J
index the policies in the order given); ``OUT/tournament.json`` records what is played and a
re-run with other settings is refused.  The tournament is a
:class:`~simkit.specs.tournament.TournamentSpec`: with ``sprt=(delta, alpha, beta)`` every
pairing runs as a sequential test (H1: first - second = delta against H0: 0) and stops when it
decides; with a value model (``luck=``), every pairing is also luck-adjusted and the payoff
ratings are fitted to the adjusted differences.

>>> import tempfile
>>> spec = TournamentSpec(["greedy", "random", "patient"], deals=40, seed=1, batch_size=20, resamples=50)
>>> result = run_tournament(spec, tempfile.mkdtemp(), Execution(quiet=True))
>>> result.ladder()["policy"].tolist()[-1], result.crosstable().shape
('random', (3, 3))
"""

from __future__ import annotations

import dataclasses
import os
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from simkit.studies.compare import ComparisonResult, compare
from simkit.analysis.plots import crosstable_plot, forest_plot, save_figure
from simkit.analysis.ratings import (
    AdditiveFit,
    additive_fit,
    bootstrap_davidson,
    bootstrap_payoff_ratings,
    davidson,
    deal_outcomes,
    outcome_counts,
    pairwise_tests,
    payoff_ratings,
    points_matrix,
)
from simkit.analysis.report import format_p, markdown_table
from simkit.analysis.results import format_level
from simkit.policies.registry import params_by_name, policy_label
from simkit.runner.batch import check_batch_memory
from simkit.defaults import DEFAULT_DUPLICATE_DESIGN
from simkit.runner.duplicate import IMPLIED, submit_duplicate_ahead
from simkit.runner.simulate import check_backend, dask_session, run_dask_in_order
from simkit.storage.dataset import POLICY_PARAMS
from simkit.storage.files import write_text
from simkit.storage.lock import FolderLock
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import TOURNAMENT_FILE, check_run_folder, check_run_identity
from simkit.specs.base import Execution
from simkit.specs.tournament import TournamentSpec

__all__ = ["TOURNAMENT_FILE", "TournamentResult", "console_lines", "pairing_dir", "run_tournament", "write_tournament_report"]

ANCHOR = "random"  # rated 0 when it plays


def pairing_dir(out: str | os.PathLike, i: int, j: int) -> Path:
    """Folder of the pairing of policies i < j (their indices in the tournament's list)."""
    return Path(out) / f"pair-{i}-{j}"


@dataclasses.dataclass(frozen=True)
class TournamentResult:
    """A finished tournament: the policies (their plain labels, :func:`~simkit.policies.registry.policy_label`;
    ``tournament.json`` keeps their full parameters), each pairing's comparison, the payoff
    ratings (牌 per seat per deal) and the Davidson ratings (Elo scale, tie parameter
    ``tie_parameter``), each anchored at ``anchor`` = 0 with its bootstrap draws, all at
    ``confidence``."""

    policies: tuple[str, ...]
    pairings: dict = dataclasses.field(repr=False)  # (i, j) -> ComparisonResult, i < j
    ratings: np.ndarray = dataclasses.field(repr=False)  # (k,) Davidson, Elo scale
    rating_draws: np.ndarray = dataclasses.field(repr=False)  # (resamples, k)
    anchor: str
    confidence: float = 0.95
    payoff_ratings: np.ndarray = dataclasses.field(default=None, repr=False)  # (k,) 牌 per seat per deal
    payoff_draws: np.ndarray = dataclasses.field(default=None, repr=False)  # (resamples, k)
    tie_parameter: float = float("nan")
    adjusted: bool = False  # payoff ratings fitted to luck-adjusted differences

    @property
    def design(self) -> str:
        """The pairings' design (:mod:`simkit.runner.duplicate`): ``six`` or ``pairs``."""
        return next(iter(self.pairings.values())).design if self.pairings else DEFAULT_DUPLICATE_DESIGN

    def _bounds(self, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        alpha = 1.0 - self.confidence
        lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
        return lo, hi

    def ladder(self) -> pd.DataFrame:
        """One row per policy, best payoff rating first: the payoff rating (``payoff``, 牌 per
        seat per deal, with ``payoff_lo`` / ``payoff_hi``), the Davidson rating (``rating``,
        Elo scale, ``lo`` / ``hi``), the share of deals ahead of the opponent (``ahead``) and
        level (``level``), the points (ahead + level / 2, ``score``) and the deals played."""
        lo, hi = self._bounds(self.rating_draws)
        payoff_lo, payoff_hi = self._bounds(self.payoff_draws)
        k = len(self.policies)
        outcomes = {p: deal_outcomes(r.per_seating.mean(axis=1)) for p, r in self.pairings.items()}
        points, games = points_matrix(k, outcomes)
        wins, ties = outcome_counts(k, {p: r.per_seating.mean(axis=1) for p, r in self.pairings.items()})
        played = games.sum(axis=1)
        frame = pd.DataFrame({
            "policy": list(self.policies), "payoff": self.payoff_ratings, "payoff_lo": payoff_lo,
            "payoff_hi": payoff_hi, "rating": self.ratings, "lo": lo, "hi": hi,
            "ahead": wins.sum(axis=1) / played, "level": ties.sum(axis=1) / played,
            "score": points.sum(axis=1) / played, "deals": played.astype(int), "confidence": self.confidence,
        })
        return frame.sort_values("payoff", ascending=False, kind="stable").reset_index(drop=True)

    def gaps(self) -> pd.DataFrame:
        """Every pairwise gap of the payoff ratings (and of the Davidson ratings), better policy
        first, with its percentile bootstrap interval from the joint draws: the intervals rank
        neighbours, not only each policy against the anchor."""
        order = np.argsort(-self.payoff_ratings, kind="stable")
        rows = []
        alpha = 1.0 - self.confidence
        for a in range(len(order)):
            for b in range(a + 1, len(order)):
                i, j = int(order[a]), int(order[b])
                payoff = self.payoff_draws[:, i] - self.payoff_draws[:, j]
                elo = self.rating_draws[:, i] - self.rating_draws[:, j]
                rows.append({"better": self.policies[i], "worse": self.policies[j],
                             "payoff_gap": self.payoff_ratings[i] - self.payoff_ratings[j],
                             "payoff_lo": np.quantile(payoff, alpha / 2), "payoff_hi": np.quantile(payoff, 1 - alpha / 2),
                             "rating_gap": self.ratings[i] - self.ratings[j],
                             "rating_lo": np.quantile(elo, alpha / 2), "rating_hi": np.quantile(elo, 1 - alpha / 2),
                             "confidence": self.confidence})
        return pd.DataFrame(rows)

    def crosstable(self, column: str = "estimate") -> pd.DataFrame:
        """(k, k) table, row policy minus column policy, of a comparison figure per pairing:
        ``estimate`` (mean payoff difference, 牌 per seat per deal; for a pairing stopped by its
        SPRT the estimate under the stopping rule), ``lo`` / ``hi`` (its interval: BCa bootstrap,
        or the one valid under the stopping rule) or ``n`` (deals).  The diagonal is NaN; the
        lower triangle is the upper one negated (for ``lo`` / ``hi``: the bounds swapped)."""
        if column not in ("estimate", "lo", "hi", "n"):
            raise ValueError(f"crosstable: column must be estimate, lo, hi or n, got {column!r}")
        k = len(self.policies)
        table = np.full((k, k), np.nan)
        mirror = {"estimate": "estimate", "lo": "hi", "hi": "lo", "n": "n"}[column]
        for (i, j), result in self.pairings.items():
            row = result.summary_row()
            table[i, j] = row[column]
            table[j, i] = row[mirror] if column == "n" else -row[mirror]
        return pd.DataFrame(table, index=list(self.policies), columns=list(self.policies))

    def to_frame(self) -> pd.DataFrame:
        """The ladder (:meth:`ladder`)."""
        return self.ladder()

    def _differences(self) -> dict[tuple[int, int], np.ndarray]:
        """The per-deal differences the payoff ratings were fitted to (luck-adjusted when so)."""
        out = {}
        for p, r in self.pairings.items():
            d = r.per_seating.mean(axis=1)
            out[p] = d - r.adjusted.luck.mean(axis=1) if self.adjusted and r.adjusted is not None else d
        return out

    def fit(self) -> AdditiveFit:
        """Goodness of fit of an additive model (the payoff ratings') to the pairings, the
        covariance of the pairings' shared deals accounted for
        (:func:`~simkit.analysis.ratings.additive_fit`)."""
        return additive_fit(len(self.policies), self._differences())

    def pairwise(self) -> pd.DataFrame:
        """Every pairing, better policy first: the direct mean difference with its marginal and
        simultaneous (Bonferroni) intervals, the t test's p-value and Holm's adjusted p-value,
        beside the ladder's gap for the same two policies."""
        rows = []
        for row in pairwise_tests(self._differences(), self.confidence):
            i, j = row["pair"]
            sign = 1.0 if row["estimate"] >= 0 else -1.0
            better, worse = (i, j) if sign > 0 else (j, i)
            lo, hi = (row["lo"], row["hi"]) if sign > 0 else (-row["hi"], -row["lo"])
            slo, shi = ((row["simultaneous_lo"], row["simultaneous_hi"]) if sign > 0
                        else (-row["simultaneous_hi"], -row["simultaneous_lo"]))
            rows.append({"better": self.policies[better], "worse": self.policies[worse],
                         "difference": sign * row["estimate"], "lo": lo, "hi": hi, "simultaneous_lo": slo,
                         "simultaneous_hi": shi, "p_value": row["p_value"], "p_holm": row["p_holm"],
                         "ladder_gap": float(self.payoff_ratings[better] - self.payoff_ratings[worse]),
                         "deals": row["deals"], "confidence": self.confidence})
        return pd.DataFrame(rows)


def run_tournament(spec: TournamentSpec, out: str | os.PathLike, execution: Execution = Execution(), *,
                   client=None) -> TournamentResult:
    """Play every pairing of the spec's policies (:class:`~simkit.specs.tournament.TournamentSpec`)
    on duplicate deals 0 .. ``spec.deals`` - 1, each pairing a comparison in ``out``
    (:func:`~simkit.studies.compare.compare` of :meth:`~simkit.specs.tournament.TournamentSpec.pairing`;
    resumable: a pairing already played is read back), and rate them.

    ``execution.backend='dask'``: every pairing's deals run on one Dask cluster, its client
    connected once for the whole tournament (``client`` when given; else to
    ``execution.scheduler``, or a ``LocalCluster`` of ``execution.workers``); the result is the
    same as local.  So is the luck replay of ``spec.luck``.  The next pairing's batches are
    submitted while one is played (without ``spec.sprt``), and the Davidson bootstrap's fits run
    on the cluster too."""
    labels = [policy_label(s) for s in spec.policies]  # what the ladder, crosstable and plots name them
    check_backend(execution.backend, execution.workers, execution.scheduler)
    if execution.backend == "local":  # (a Dask worker's memory is its machine's)
        check_batch_memory(min(spec.batch_size, spec.deals),
                           min(execution.workers, -(-spec.deals // max(1, spec.batch_size))))
    directory = check_run_folder(out, "tournament")
    with dask_session(execution.backend, execution.workers, execution.scheduler, client) as client:  # before writing
        with FolderLock(make_out_dir(directory)):
            check_run_identity(directory, "tournament", spec.identity(),
                               recorded={POLICY_PARAMS: [params_by_name(s) for s in spec.policies]}, implied=IMPLIED)
        pairings = _play_pairings(spec, directory, execution, client, labels)
        differences = {p: r.per_seating.mean(axis=1) for p, r in pairings.items()}
        # on Dask the bootstrap's fits run on the cluster too (the same draws)
        in_order = None if client is None else (
            lambda function, config, pieces: run_dask_in_order(function, config, pieces, client))
        draws = bootstrap_davidson(len(spec.policies), differences, resamples=spec.resamples, seed=spec.seed,
                                   prior_ties=spec.prior_draws, run_in_order=in_order)
    return _rated(spec, labels, pairings, draws)


def _play_pairings(spec: TournamentSpec, directory: Path, execution: Execution, client,
                   labels: list[str]) -> dict[tuple[int, int], ComparisonResult]:
    """Every pairing's comparison, in order; on Dask the next pairing's batches are submitted
    while one is played (without an SPRT)."""
    pairings: dict[tuple[int, int], ComparisonResult] = {}
    order = list(combinations(range(len(spec.policies)), 2))
    ahead: dict[tuple[int, int], list] = {}  # on Dask: the batches of this pairing and the next, submitted

    def submit(n: int) -> None:
        if client is not None and spec.sprt is None and n < len(order) and order[n] not in ahead:
            i, j = order[n]
            ahead[order[n]] = submit_duplicate_ahead(spec.pairing(i, j), pairing_dir(directory, i, j), client)

    for n, (i, j) in enumerate(order):
        submit(n)
        submit(n + 1)  # the workers play it while this process writes, reads and rates this one
        if not execution.quiet:
            print(f"tournament: {labels[i]} vs {labels[j]}", flush=True)
        pairings[(i, j)] = compare(spec.pairing(i, j), pairing_dir(directory, i, j), execution, client=client)
        ahead.pop((i, j), None)  # consumed: its tables leave the workers
    return pairings


def _rated(spec: TournamentSpec, labels: list[str], pairings: dict[tuple[int, int], ComparisonResult],
           draws: np.ndarray) -> TournamentResult:
    """The tournament's result: the pairings and their ratings (``draws``: the Davidson
    bootstrap's), anchored at :data:`ANCHOR` when it plays, else at the first policy."""
    k = len(spec.policies)
    differences = {p: r.per_seating.mean(axis=1) for p, r in pairings.items()}
    adjusted = {p: d - r.adjusted.luck.mean(axis=1) if r.adjusted is not None else d
                for (p, d), r in zip(differences.items(), pairings.values())}
    anchor = labels.index(ANCHOR) if ANCHOR in labels else 0
    ratings, nu = davidson(*outcome_counts(k, differences), prior_ties=spec.prior_draws)
    payoff = payoff_ratings(k, adjusted)
    payoff_draws = bootstrap_payoff_ratings(k, adjusted, resamples=spec.resamples, seed=spec.seed)
    return TournamentResult(tuple(labels), pairings, ratings - ratings[anchor], draws - draws[:, [anchor]],
                            labels[anchor], spec.confidence, payoff - payoff[anchor],
                            payoff_draws - payoff_draws[:, [anchor]], nu, spec.luck is not None)


def tournament_section(result: TournamentResult, directory: str | os.PathLike, prefix: str = "",
                       heading: str = "##") -> list[str]:
    """Markdown lines and figures (ladder with intervals, crosstable heat map) of a tournament."""
    directory = Path(directory)
    level = format_level(result.confidence)
    ladder = result.ladder()
    rows = pd.DataFrame({"label": ladder["policy"], "estimate": ladder["payoff"], "lo": ladder["payoff_lo"],
                         "hi": ladder["payoff_hi"], "n": ladder["deals"]})
    save_figure(forest_plot(rows, f"payoff rating (牌 per seat per deal, {result.anchor} = 0; {level} bootstrap)",
                            "Tournament ladder", null=0.0).figure, directory, f"{prefix}tournament_ratings")
    save_figure(crosstable_plot(result.crosstable(), result.crosstable("lo"), result.crosstable("hi"),
                                "mean payoff difference, row - column (牌 per seat per deal)",
                                "Tournament crosstable").figure, directory, f"{prefix}tournament_crosstable")
    table = pd.DataFrame({
        "rank": range(1, len(ladder) + 1), "policy": ladder["policy"],
        f"payoff rating, 牌 per seat per deal [{level}]": [
            "0 (anchor)" if p == result.anchor else f"{r:+.3f} [{lo:+.3f}, {hi:+.3f}]"
            for p, r, lo, hi in zip(ladder["policy"], ladder["payoff"], ladder["payoff_lo"], ladder["payoff_hi"])],
        f"Davidson rating, Elo [{level}]": ["0 (anchor)" if p == result.anchor else f"{r:+.0f} [{lo:+.0f}, {hi:+.0f}]"
                                          for p, r, lo, hi in zip(ladder["policy"], ladder["rating"], ladder["lo"],
                                                                  ladder["hi"])],
        "deals ahead / level": [f"{a:.3f} / {t:.3f}" for a, t in zip(ladder["ahead"], ladder["level"])],
        "deals played": ladder["deals"].map("{:,}".format),
    })
    def signed(value: float, places: int) -> str:
        """``value`` with its sign, a rounding of zero written +0 (never -0)."""
        text = f"{value:+.{places}f}"
        return "+" + text[1:] if float(text) == 0.0 else text

    gaps = result.gaps()
    neighbours = gaps.iloc[[sum(len(ladder) - 1 - m for m in range(a)) for a in range(len(ladder) - 1)]]
    gap_table = pd.DataFrame({
        "better - worse": [f"{b} - {w}" for b, w in zip(neighbours["better"], neighbours["worse"])],
        f"payoff gap [{level}]": [f"{signed(g, 3)} [{signed(lo, 3)}, {signed(hi, 3)}]" for g, lo, hi in
                                  zip(neighbours["payoff_gap"], neighbours["payoff_lo"], neighbours["payoff_hi"])],
        f"Davidson gap [{level}]": [f"{signed(g, 0)} [{signed(lo, 0)}, {signed(hi, 0)}]" for g, lo, hi in
                                    zip(neighbours["rating_gap"], neighbours["rating_lo"], neighbours["rating_hi"])],
    })
    est, lo, hi, n = (result.crosstable(c) for c in ("estimate", "lo", "hi", "n"))
    cross = pd.DataFrame({"": list(result.policies)})
    for col in result.policies:
        cross[col] = [("—" if a == col else f"{est.loc[a, col]:+.3f} [{lo.loc[a, col]:+.3f}, {hi.loc[a, col]:+.3f}]")
                      for a in result.policies]
    sequential = any(r.sprt is not None for r in result.pairings.values())
    deals = sorted({int(x) for x in n.to_numpy().ravel() if np.isfinite(x)})
    lines = [f"{heading} Tournament", "",
             f"Round robin of {len(result.policies)} policies, every pairing on the same duplicate deals ("
             + ("each pair of seatings on deals of its own seed, the same in every pairing; rows of three deals: "
                if result.design == "pairs" else "six seatings each; ")
             + f"{', '.join(f'{d:,}' for d in deals)} {'rows' if result.design == 'pairs' else 'deals'} per pairing"
             + ("; pairings stopped by their sequential test" if sequential else "") + "). "
             "Payoff rating: additive ratings in 牌 per seat per deal fitted to the pairings' mean duplicate "
             + ("luck-adjusted " if result.adjusted else "") + "differences, weighted by their precision: a gap "
             "is the payoff one policy takes from the other per deal. Davidson rating: Bradley–Terry with ties on "
             "the per-deal outcome (ahead / level / behind on the same cards), Elo scale (400 points = odds of 10 "
             f"to 1), tie parameter ν = {result.tie_parameter:.2f}. {result.anchor} = 0; {level} percentile "
             "bootstrap over deals, jointly across pairings (docs/tournaments.md).", ""]
    lines += markdown_table(table) + [""]
    lines += [f"Gaps between neighbours on the ladder, with their own {level} intervals (all pairs: "
              "`gaps.csv`):", ""]
    lines += markdown_table(gap_table) + [""]
    fit = result.fit()
    pairwise = result.pairwise()
    lines += [f"Every pairing directly: its mean difference with its {level} interval and its simultaneous interval "
              f"(Bonferroni over the {len(pairwise)} pairings: all cover together at {level} or more), the t test's "
              "p-value and Holm's adjusted p-value (family-wise error), beside the ladder's gap. Fit of the additive "
              f"payoff ratings to the pairings: χ² = {fit.chi2:.2f} on {fit.df} degrees of freedom, p = "
              f"{format_p(fit.p_value) if np.isfinite(fit.p_value) else 'undefined (no contrast of the pairings varies)'}"
              " (Wald test of the pairings' cycle contrasts, with the covariance of the pairings' means estimated "
              "from their per-deal differences on the deals they share; "
              + (f"Hotelling's T² with its F reference, every pairing on the same {fit.deals:,} "
                 f"{'rows' if result.design == 'pairs' else 'deals'})" if fit.reference == "F" else "χ² reference)")
              + (" — **the ratings do not fit the pairings: read the direct differences, not the ladder's gaps**."
                 if not fit.fits else "."), ""]
    lines += markdown_table(pd.DataFrame({
        "better - worse": [f"{b} - {w}" for b, w in zip(pairwise["better"], pairwise["worse"])],
        f"direct [{level}]": [f"{signed(d, 3)} [{signed(lo, 3)}, {signed(hi, 3)}]" for d, lo, hi in
                              zip(pairwise["difference"], pairwise["lo"], pairwise["hi"])],
        "simultaneous": [f"[{signed(lo, 3)}, {signed(hi, 3)}]" for lo, hi in
                         zip(pairwise["simultaneous_lo"], pairwise["simultaneous_hi"])],
        "p / Holm": [f"{format_p(p)} / {format_p(h)}" for p, h in zip(pairwise["p_value"], pairwise["p_holm"])],
        "ladder gap": [signed(g, 3) for g in pairwise["ladder_gap"]],
    })) + [""]
    lines += [f"Crosstable: mean payoff difference row - column, 牌 per seat per deal, {level} interval "
              "(paired bootstrap BCa; under the stopping rule for a pairing stopped by its SPRT).", ""]
    lines += markdown_table(cross) + [""]
    lines += [f"![tournament ladder]({prefix}tournament_ratings.png)", "",
              f"![tournament crosstable]({prefix}tournament_crosstable.png)", ""]
    return lines


def console_lines(result: TournamentResult) -> list[str]:
    """What ``simkit tournament`` prints under the ladder: the fit of the additive payoff ratings
    to the pairings (:meth:`TournamentResult.fit`, one line) and, when the pairings reject it, a
    warning and every pairing's direct mean difference with its interval, Holm's adjusted p-value
    and the ladder's gap for the same two policies (within 100 columns for labels of up to 16
    characters)."""
    fit = result.fit()
    p = format_p(fit.p_value) if np.isfinite(fit.p_value) else "undefined"
    statistic = f"χ² {fit.chi2:.1f} on {fit.df} df, p {p}"
    if fit.fits:
        return [f"additive fit: {statistic} (shared deals' covariance): the pairings do not reject the ladder"]
    level = format_level(result.confidence)
    pairwise = result.pairwise()
    names = [f"{b} - {w}" for b, w in zip(pairwise["better"], pairwise["worse"])]
    width = max(len(n) for n in names + ["better - worse"])
    lines = [f"WARNING: the ladder misleads: the pairings are not additive ({statistic},",
             "shared deals' covariance). Read each pairing directly, not the ladder's gaps:",
             f"  {'better - worse':<{width}}  {'direct [' + level + ']':<24} {'Holm p':>9} {'ladder gap':>11}"]
    for name, row in zip(names, pairwise.itertuples()):
        lines.append(f"  {name:<{width}}  {row.difference:+.3f} [{row.lo:+.3f}, {row.hi:+.3f}]  "
                     f"{format_p(row.p_holm):>9} {row.ladder_gap:+11.3f}")
    return lines


def write_tournament_report(result: TournamentResult, directory: str | os.PathLike) -> Path:
    """``report.md`` of a tournament (with its figures) and ``ladder.csv`` / ``crosstable.csv``."""
    directory = Path(directory)
    lines = tournament_section(result, directory, heading="#")
    write_text(directory / "ladder.csv", result.ladder().to_csv(index=False))
    write_text(directory / "crosstable.csv", result.crosstable().to_csv())
    write_text(directory / "gaps.csv", result.gaps().to_csv(index=False))
    write_text(directory / "pairwise.csv", result.pairwise().to_csv(index=False))
    path = directory / "report.md"
    write_text(path, "\n".join(lines))
    return path
