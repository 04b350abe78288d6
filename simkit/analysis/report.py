"""Markdown reports with plots (PNG + SVG) of simulation datasets.

:func:`dataset_section` turns one dataset into Markdown (tables + figures); :func:`write_report`
writes it as ``report.md``. Experiment reports (:mod:`simkit.experiment`) reuse the sections.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from simkit.analysis.plots import (
    convergence_plot,
    hu_distribution_plot,
    payoff_by_policy_plot,
    win_rate_by_seat_plot,
)
from simkit.analysis.stats import proportion_convergence
from simkit.analysis.summary import (
    dealer_advantage,
    distributions,
    exhausted_rate,
    pattern_frequencies,
    tail_probabilities,
    win_kinds,
    win_rates,
    win_rates_by_policy,
)
from simkit.evaluator import PATTERN_NAMES
from simkit.report import _write_text
from simkit.storage import load_dataset, read_manifest

REPORT_COLUMNS = (["dealer", "winner", "win_kind", "hu", "units", "lou", "steps", "turns", "draws", "claims"]
                  + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
                  + [f"pattern_{p}" for p in PATTERN_NAMES])


def format_p(p: float) -> str:
    """A p-value for tables; values that underflow double precision read ``< 1e-300``.

    >>> format_p(0.0123456), format_p(0.0), format_p(float("nan"))
    ('0.0123', '< 1e-300', 'nan')
    """
    if p != p:
        return "nan"
    return "< 1e-300" if p < 1e-300 else f"{p:.3g}"


def markdown_table(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> list[str]:
    """A DataFrame as Markdown table lines; ``formats`` maps columns to format specs.

    >>> markdown_table(pd.DataFrame({"a": [1.23456], "b": ["x"]}), {"a": ".2f"})
    ['| a | b |', '|---|---|', '| 1.23 | x |']
    """
    formats = formats or {}
    lines = ["| " + " | ".join(str(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row):
            spec = formats.get(column)
            cells.append(format(value, spec) if spec and pd.notna(value) else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _interval(frame: pd.DataFrame, value: str, lo: str, hi: str, spec: str) -> pd.Series:
    return frame.apply(lambda r: f"{r[value]:{spec}} [{r[lo]:{spec}}, {r[hi]:{spec}}]", axis=1)


def dataset_section(df: pd.DataFrame, directory: str | Path, prefix: str = "", heading: str = "##",
                    convergence: bool = True) -> list[str]:
    """Markdown lines (and figures named ``PREFIX*.png/svg`` in ``directory``) for one dataset.

    Sections: seats, policies, dealer advantage, how deals end, distributions, tail
    probabilities, pattern frequencies; figures: win rate by seat, payoff by policy, hu
    distribution and (``convergence``) the dealer's running win rate against deals.
    """
    directory = Path(directory)
    n = len(df)
    rates = win_rates(df)
    by_policy = win_rates_by_policy(df)
    advantage = dealer_advantage(df)
    exhausted, ex_lo, ex_hi = exhausted_rate(df)
    win_rate_by_seat_plot(rates, directory, f"{prefix}win_rate_by_seat")
    payoff_by_policy_plot(by_policy, directory, f"{prefix}payoff_by_policy", f"Mean payoff by policy (n={n:,} deals)")
    hu_distribution_plot(df.loc[df["winner"] >= 0, "hu"].to_numpy(), directory, f"{prefix}hu_distribution")
    seats = pd.DataFrame({"seat": rates["seat"], "policy": rates["policy"], "wins": rates["wins"],
                          "win rate [95% Wilson]": _interval(rates, "win_rate", "win_rate_lo", "win_rate_hi", ".4f"),
                          "mean payoff 牌 [95% t]": _interval(rates, "mean_payoff", "mean_payoff_lo", "mean_payoff_hi", "+.4f")})
    policies = pd.DataFrame({"policy": by_policy["policy"], "seat-deals": by_policy["seat_deals"],
                             "win rate [95% Wilson]": _interval(by_policy, "win_rate", "win_rate_lo", "win_rate_hi", ".4f"),
                             "mean payoff 牌 [95% t]": _interval(by_policy, "mean_payoff", "mean_payoff_lo",
                                                                  "mean_payoff_hi", "+.4f")})
    adv = pd.DataFrame({"measure": advantage["measure"], "dealer": advantage["dealer"].map("{:.4f}".format),
                        "non-dealer (per seat)": advantage["non_dealer"].map("{:.4f}".format),
                        "difference [95% t]": _interval(advantage, "difference", "difference_lo", "difference_hi", "+.4f"),
                        "t": advantage["t"].map("{:.2f}".format), "p-value": advantage["p_value"].map(format_p)})
    kinds = win_kinds(df)
    kinds_table = pd.DataFrame({"ending": kinds["win_kind"], "deals": kinds["hits"],
                                "share [95% Wilson]": _interval(kinds, "p", "lo", "hi", ".4f")})
    dist = distributions(df)
    tails = tail_probabilities(df)
    tails_table = pd.DataFrame({"event (among wins)": tails["event"], "hits": tails["hits"],
                                "probability [95% Wilson]": _interval(tails, "p", "lo", "hi", ".4f")})
    patterns = pattern_frequencies(df)
    patterns = patterns[patterns["hits"] > 0]
    patterns_table = pd.DataFrame({"pattern": patterns["pattern"], "wins with it": patterns["hits"],
                                   "share of wins [95% Wilson]": _interval(patterns, "p", "lo", "hi", ".5f")})
    h = heading
    lines = [f"{h} Seats ({n:,} deals)", ""] + markdown_table(seats) + [
        "", f"![win rate by seat]({prefix}win_rate_by_seat.png)", "",
        f"{h} Policies (pooled over their seats)", ""] + markdown_table(policies) + [
        "", f"![payoff by policy]({prefix}payoff_by_policy.png)", "",
        f"{h} Dealer advantage", "",
        "Per deal: dealer's outcome minus the mean of the two other seats' (one-sample t test on the "
        "per-deal differences; seat and policy are confounded unless all seats play the same policy).", ""
    ] + markdown_table(adv)
    if convergence and n >= 100:
        dealer_won = (df["winner"].to_numpy() == df["dealer"].to_numpy())
        curve = proportion_convergence(dealer_won)
        convergence_plot(curve, directory, f"{prefix}dealer_win_convergence", "dealer's win rate (95% Wilson)",
                         "Dealer's win rate against deals")
        lines += ["", f"![dealer win rate convergence]({prefix}dealer_win_convergence.png)"]
    lines += ["", f"{h} How deals end", "",
              f"穿牌 (no winner): {exhausted:.4f} [{ex_lo:.4f}, {ex_hi:.4f}].", ""] + markdown_table(kinds_table) + [
        "", f"{h} Distributions", "",
        "hu, units, 楼 and 步 over won deals; turns (discard phases), draws and claims over all deals.", ""
    ] + markdown_table(dist, {c: ".2f" for c in dist.columns if c not in ("column", "over", "n")}) + [
        "", f"![hu distribution]({prefix}hu_distribution.png)", "",
        f"{h} Tail probabilities", ""] + markdown_table(tails_table) + [
        "", f"{h} Pattern frequencies among wins", ""] + markdown_table(patterns_table) + [""]
    return lines


def write_report(dataset: str | os.PathLike, out: str | os.PathLike | None = None) -> Path:
    """Write ``report.md`` (and plots) for a dataset; into the dataset folder by default."""
    directory = Path(out) if out is not None else Path(dataset)
    directory.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(Path(dataset)) or {}
    df = load_dataset(dataset, columns=REPORT_COLUMNS)
    lines = [
        "# Simulation report",
        "",
        f"{len(df):,} deals, seed {manifest.get('seed')}, policies {', '.join(manifest.get('policies', []))}, "
        f"batch size {manifest.get('batch_size')}, simkit {manifest.get('simkit_version')}. "
        "Intervals are 95%: Wilson for proportions, Student t for means; payoffs in 牌 per deal.",
        "",
    ] + dataset_section(df, directory)
    _write_text(directory / "report.md", "\n".join(lines))
    return directory / "report.md"

