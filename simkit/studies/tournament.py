"""Round-robin duplicate tournaments: every pair of policies on the same deals, a crosstable of
mean payoff differences and a Bradley–Terry rating per policy (:mod:`simkit.analysis.ratings`).

Each pairing is a duplicate comparison (:func:`simkit.studies.compare.compare`: the six
seatings of the pair on deals 0 .. N-1 of the tournament's seed, so every pairing plays the
*same* cards), stored as its own resumable folder of Parquet datasets ``OUT/pair-I-J`` (I < J
index the policies in the order given); ``OUT/tournament.json`` records what is played and a
re-run with other settings is refused.  With ``sprt=(delta, alpha, beta)`` every pairing runs
as a sequential test of "the first beats the second by >= delta" and stops when it decides.

>>> import tempfile
>>> result = run_tournament(["greedy", "random", "patient"], tempfile.mkdtemp(), deals=40, seed=1,
...                         batch_size=20, resamples=50, quiet=True)
>>> result.ladder()["policy"].tolist()[-1], result.crosstable().shape
('random', (3, 3))
"""

from __future__ import annotations

import dataclasses
import os
from itertools import combinations
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from simkit.studies.compare import ComparisonResult, compare
from simkit.analysis.plots import crosstable_plot, forest_plot, save_figure
from simkit.analysis.ratings import bootstrap_ratings, bradley_terry, deal_outcomes, points_matrix
from simkit.analysis.report import markdown_table
from simkit.analysis.results import format_level
from simkit.analysis.stats import check_confidence
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec, effective_params, params_by_name, parse_policy
from simkit.rules import RuleSet
from simkit.storage.dataset import POLICY_PARAMS, require_identity
from simkit.storage.files import write_text
from simkit.storage.lock import FolderLock
from simkit.storage.paths import check_out_dir, make_out_dir

__all__ = ["TOURNAMENT_FILE", "TournamentResult", "pairing_dir", "run_tournament", "write_tournament_report"]

TOURNAMENT_FILE = "tournament.json"
ANCHOR = "random"  # rated 0 when it plays


def pairing_dir(out: str | os.PathLike, i: int, j: int) -> Path:
    """Folder of the pairing of policies i < j (their indices in the tournament's list)."""
    return Path(out) / f"pair-{i}-{j}"


@dataclasses.dataclass(frozen=True)
class TournamentResult:
    """A finished tournament: the policies (as given), each pairing's comparison, the ratings
    (Elo scale, anchor at 0) with bootstrap draws, all at ``confidence``."""

    policies: tuple[str, ...]
    pairings: dict = dataclasses.field(repr=False)  # (i, j) -> ComparisonResult, i < j
    ratings: np.ndarray = dataclasses.field(repr=False)  # (k,)
    rating_draws: np.ndarray = dataclasses.field(repr=False)  # (resamples, k)
    anchor: str
    confidence: float = 0.95

    def ladder(self) -> pd.DataFrame:
        """One row per policy, best first: rating with its percentile bootstrap interval, the
        points scored (share of deals ahead of the opponent, draws half) and the deals played."""
        alpha = 1.0 - self.confidence
        lo, hi = np.quantile(self.rating_draws, [alpha / 2, 1 - alpha / 2], axis=0)
        k = len(self.policies)
        outcomes = {p: deal_outcomes(r.per_seating.mean(axis=1)) for p, r in self.pairings.items()}
        points, games = points_matrix(k, outcomes)
        frame = pd.DataFrame({
            "policy": list(self.policies), "rating": self.ratings, "lo": lo, "hi": hi,
            "score": points.sum(axis=1) / games.sum(axis=1), "deals": games.sum(axis=1).astype(int),
            "confidence": self.confidence,
        })
        return frame.sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)

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


def _identity(specs: Sequence[PolicySpec], deals: int, seed: int, rules: RuleSet, batch_size: int,
              sprt: tuple[float, float, float] | None) -> dict:
    return {"kind": "simkit.tournament",
            "policies": [PolicySpec(s.name, effective_params(s)).text() for s in specs],
            "deals": int(deals), "seed": int(seed), "rules": rules.to_dict(), "batch_size": int(batch_size),
            "sprt": list(sprt) if sprt is not None else None}


def run_tournament(
    policies: Sequence[str | PolicySpec],
    out: str | os.PathLike,
    deals: int = 2_000,
    seed: int = 0,
    rules: RuleSet | None = None,
    batch_size: int = 1_000,
    workers: int = 1,
    sprt: tuple[float, float, float] | None = None,
    confidence: float = 0.95,
    resamples: int = 2_000,
    prior_draws: float = 1.0,
    quiet: bool = False,
) -> TournamentResult:
    """Play every pairing of ``policies`` (2 or more, all different) on duplicate deals
    0 .. ``deals`` - 1 (resumable: a pairing already played is read back) and rate them."""
    confidence = check_confidence(confidence)
    specs = [p if isinstance(p, PolicySpec) else parse_policy(p) for p in policies]
    texts = [PolicySpec(s.name, effective_params(s)).text() for s in specs]
    if len(specs) < 2:
        raise SimkitError(f"a tournament needs 2 or more policies, got {len(specs)}")
    if len(set(texts)) != len(texts):
        raise SimkitError(f"a tournament's policies must differ, got {', '.join(texts)}")
    if int(deals) < 2:
        raise SimkitError(f"a tournament needs deals >= 2, got {deals}")
    rules = rules if rules is not None else RuleSet()
    directory = check_out_dir(out)
    with FolderLock(make_out_dir(directory)):
        require_identity(directory / TOURNAMENT_FILE, _identity(specs, deals, seed, rules, batch_size, sprt),
                         "tournament", recorded={POLICY_PARAMS: [params_by_name(s) for s in specs]})
    pairings: dict[tuple[int, int], ComparisonResult] = {}
    for i, j in combinations(range(len(specs)), 2):
        if not quiet:
            print(f"tournament: {texts[i]} vs {texts[j]}", flush=True)
        pairings[(i, j)] = compare(specs[i], specs[j], pairing_dir(directory, i, j), deals=deals, seed=seed,
                                   rules=rules, batch_size=batch_size, workers=workers, sprt=sprt,
                                   confidence=confidence, quiet=quiet)
    outcomes = {p: deal_outcomes(r.per_seating.mean(axis=1)) for p, r in pairings.items()}
    points, _ = points_matrix(len(specs), outcomes)
    anchor = texts.index(ANCHOR) if ANCHOR in texts else 0
    ratings = bradley_terry(points, prior_draws=prior_draws)
    draws = bootstrap_ratings(len(specs), outcomes, resamples=resamples, seed=seed, prior_draws=prior_draws)
    return TournamentResult(tuple(texts), pairings, ratings - ratings[anchor], draws - draws[:, [anchor]],
                            texts[anchor], confidence)


def tournament_section(result: TournamentResult, directory: str | os.PathLike, prefix: str = "",
                       heading: str = "##") -> list[str]:
    """Markdown lines and figures (ladder with intervals, crosstable heat map) of a tournament."""
    directory = Path(directory)
    level = format_level(result.confidence)
    ladder = result.ladder()
    rows = pd.DataFrame({"label": ladder["policy"], "estimate": ladder["rating"], "lo": ladder["lo"],
                         "hi": ladder["hi"], "n": ladder["deals"]})
    save_figure(forest_plot(rows, f"Bradley-Terry rating (Elo scale, {result.anchor} = 0; {level} bootstrap)",
                            "Tournament ladder", null=0.0).figure, directory, f"{prefix}tournament_ratings")
    save_figure(crosstable_plot(result.crosstable(), result.crosstable("lo"), result.crosstable("hi"),
                                "mean payoff difference, row - column (pai per seat per deal)",
                                "Tournament crosstable").figure, directory, f"{prefix}tournament_crosstable")
    table = pd.DataFrame({
        "rank": range(1, len(ladder) + 1), "policy": ladder["policy"],
        f"rating [{level}]": ["0 (anchor)" if p == result.anchor else f"{r:+.0f} [{lo:+.0f}, {hi:+.0f}]"
                              for p, r, lo, hi in zip(ladder["policy"], ladder["rating"], ladder["lo"], ladder["hi"])],
        "score (deals ahead, draws ½)": ladder["score"].map("{:.3f}".format),
        "deals played": ladder["deals"].map("{:,}".format),
    })
    est, lo, hi, n = (result.crosstable(c) for c in ("estimate", "lo", "hi", "n"))
    cross = pd.DataFrame({"": list(result.policies)})
    for col in result.policies:
        cross[col] = [("—" if a == col else f"{est.loc[a, col]:+.3f} [{lo.loc[a, col]:+.3f}, {hi.loc[a, col]:+.3f}]")
                      for a in result.policies]
    sequential = any(r.sprt is not None for r in result.pairings.values())
    deals = sorted({int(x) for x in n.to_numpy().ravel() if np.isfinite(x)})
    lines = [f"{heading} Tournament", "",
             f"Round robin of {len(result.policies)} policies, every pairing on the same duplicate deals (six seatings "
             f"each; {', '.join(f'{d:,}' for d in deals)} deals per pairing"
             + ("; pairings stopped by their sequential test" if sequential else "") + "). "
             f"Ratings: Bradley–Terry on per-deal outcomes (ahead / level / behind the opponent on the same cards), "
             f"Elo scale (400 points = odds of 10 to 1), {result.anchor} = 0, {level} percentile bootstrap over deals "
             "(docs/analysis.md).", ""]
    lines += markdown_table(table) + [""]
    lines += [f"Crosstable: mean payoff difference row - column, 牌 per seat per deal, {level} interval "
              "(paired bootstrap BCa; under the stopping rule for a pairing stopped by its SPRT).", ""]
    lines += markdown_table(cross) + [""]
    lines += [f"![tournament ladder]({prefix}tournament_ratings.png)", "",
              f"![tournament crosstable]({prefix}tournament_crosstable.png)", ""]
    return lines


def write_tournament_report(result: TournamentResult, directory: str | os.PathLike) -> Path:
    """``report.md`` of a tournament (with its figures) and ``ladder.csv`` / ``crosstable.csv``."""
    directory = Path(directory)
    lines = tournament_section(result, directory, heading="#")
    write_text(directory / "ladder.csv", result.ladder().to_csv(index=False))
    write_text(directory / "crosstable.csv", result.crosstable().to_csv())
    path = directory / "report.md"
    write_text(path, "\n".join(lines))
    return path
