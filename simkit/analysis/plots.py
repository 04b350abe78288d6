"""Analysis plots (matplotlib, Agg backend; every figure saved as PNG and SVG).

Each function takes the table an analysis function returned, draws one figure with labelled
axes (units and sample sizes in the labels or title) and writes ``STEM.png`` and ``STEM.svg``
into ``directory`` atomically; it returns the PNG path. No display is needed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from simkit.storage.files import write_figure


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _finish(fig, directory: str | Path, stem: str) -> Path:
    plt = _pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    write_figure(fig, directory, stem)
    plt.close(fig)
    return directory / f"{stem}.png"


def hu_distribution_plot(hu_of_wins: np.ndarray, directory: str | Path, stem: str = "hu_distribution",
                         title: str = "hu of winning hands") -> Path:
    """Histogram of the winner's hu (fraction of won deals per 5-hu bin)."""
    plt = _pyplot()
    hu = np.asarray(hu_of_wins, dtype=float)
    fig, ax = plt.subplots(figsize=(7, 4))
    top = max(60, int(np.quantile(hu, 0.99)) + 10) if hu.size else 60
    bins = np.arange(0, top + 5, 5)
    ax.hist(np.clip(hu, 0, bins[-1]), bins=bins, density=True)
    ax.axvline(48, color="k", linestyle="--", linewidth=1, label="48 hu")
    ax.set_xlabel("winner's hu (hu; clipped near the 99th percentile)")
    ax.set_ylabel("density (fraction of won deals per hu)")
    ax.set_title(f"{title} (n={hu.size:,} wins)")
    ax.legend(fontsize=8)
    return _finish(fig, directory, stem)


def win_rate_by_seat_plot(rates: pd.DataFrame, directory: str | Path, stem: str = "win_rate_by_seat") -> Path:
    """Win rate of each seat with its interval (the table of :func:`~simkit.analysis.win_rates`)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    x = rates["seat"].to_numpy()
    y = rates["win_rate"].to_numpy()
    err = np.vstack([y - rates["win_rate_lo"].to_numpy(), rates["win_rate_hi"].to_numpy() - y])
    ax.errorbar(x, y, yerr=err, fmt="o", capsize=5)
    ax.set_xticks(x, [f"seat {s}{' (dealer)' if s == 0 else ''}\n{p}" for s, p in zip(rates["seat"], rates["policy"])])
    ax.set_ylabel("win rate (fraction of deals, 95% Wilson)")
    ax.set_title(f"Win rate by seat (n={int(rates['deals'].iloc[0]):,} deals)")
    return _finish(fig, directory, stem)


def payoff_by_policy_plot(by_policy: pd.DataFrame, directory: str | Path, stem: str = "payoff_by_policy",
                          title: str = "Mean payoff by policy") -> Path:
    """Mean payoff per seat-deal of each policy with its interval (``win_rates_by_policy`` table,
    or any table with columns policy, mean_payoff, mean_payoff_lo, mean_payoff_hi, seat_deals)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 0.6 * len(by_policy) + 1.6))
    y = np.arange(len(by_policy))
    m = by_policy["mean_payoff"].to_numpy()
    err = np.vstack([m - by_policy["mean_payoff_lo"].to_numpy(), by_policy["mean_payoff_hi"].to_numpy() - m])
    ax.errorbar(m, y, xerr=err, fmt="o", capsize=4)
    ax.axvline(0, color="grey", linewidth=0.8)
    confounded = by_policy["confounded"] if "confounded" in by_policy else [False] * len(by_policy)
    ax.set_yticks(y, [f"{p}\n(n={int(n):,} seat-deals)" + ("\nconfounded with seat" if c else "")
                      for p, n, c in zip(by_policy["policy"], by_policy["seat_deals"], confounded)])
    ax.invert_yaxis()
    ax.set_xlabel("mean payoff (pai per seat per deal, 95% interval)")
    ax.set_title(title)
    return _finish(fig, directory, stem)


def convergence_plot(curve: pd.DataFrame, directory: str | Path, stem: str, ylabel: str,
                     title: str, reference: float | None = None, reference_label: str = "exact") -> Path:
    """Running estimate and its interval against the number of deals (log x axis).

    ``curve`` has columns n, mean (or p), lo, hi (see :func:`simkit.analysis.stats.convergence_curve`).
    """
    plt = _pyplot()
    value = curve["mean"] if "mean" in curve else curve["p"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(curve["n"], curve["lo"], curve["hi"], alpha=0.3, label="95% interval")
    ax.plot(curve["n"], value, label="estimate")
    if reference is not None:
        ax.axhline(reference, color="k", linestyle="--", linewidth=1, label=reference_label)
    ax.set_xscale("log")
    ax.set_xlabel("number of deals (log scale)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} (n up to {int(curve['n'].max()):,})")
    ax.legend(fontsize=8)
    return _finish(fig, directory, stem)


def forest_plot(rows: pd.DataFrame, directory: str | Path, stem: str, xlabel: str, title: str,
                null: float | None = 0.0) -> Path:
    """One line per comparison: estimate with its interval (columns label, estimate, lo, hi, n)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * len(rows) + 1.6))
    y = np.arange(len(rows))
    m = rows["estimate"].to_numpy(dtype=float)
    err = np.vstack([m - rows["lo"].to_numpy(dtype=float), rows["hi"].to_numpy(dtype=float) - m])
    ax.errorbar(m, y, xerr=err, fmt="s", capsize=4)
    if null is not None:
        ax.axvline(null, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yticks(y, [f"{label}\n(n={int(n):,})" for label, n in zip(rows["label"], rows["n"])])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return _finish(fig, directory, stem)


def sprt_llr_plot(llr_path: np.ndarray, lower: float, upper: float, directory: str | Path, stem: str,
                  title: str, min_n: int = 0, decision: str = "") -> Path:
    """Log-likelihood ratio of a sequential test against the number of deals, with its two
    boundaries (and the deals before ``min_n``, where no decision is taken, shaded).

    ``llr_path[i]`` is the llr after deal i + 1; +-inf values (only one hypothesis possible on
    the values seen) are drawn just beyond the boundary.  Long paths are thinned for drawing."""
    plt = _pyplot()
    path = np.asarray(llr_path, dtype=float)
    deals = np.arange(1, path.size + 1)
    step = max(1, path.size // 20_000)
    keep = np.unique(np.r_[np.arange(0, path.size, step), path.size - 1]) if path.size else np.zeros(0, dtype=int)
    margin = 0.25 * (upper - lower)
    shown = np.clip(np.nan_to_num(path[keep], nan=0.0, posinf=upper + margin, neginf=lower - margin),
                    lower - margin, upper + margin)
    fig, ax = plt.subplots(figsize=(7, 4))
    if min_n > 1:
        ax.axvspan(0, min(min_n, max(path.size, 1)), color="grey", alpha=0.15, label=f"no decision before {min_n:,} deals")
    infinite = np.isinf(path[keep])
    ax.plot(deals[keep], shown, linewidth=1, label="log-likelihood ratio")
    if infinite.any():
        ax.plot(deals[keep][infinite], shown[infinite], ".", markersize=3, color="tab:blue",
                label="+-inf (one mean impossible on the values seen)")
    ax.axhline(upper, color="tab:green", linestyle="--", linewidth=1, label=f"accept H1 at {upper:+.2f}")
    ax.axhline(lower, color="tab:red", linestyle="--", linewidth=1, label=f"accept H0 at {lower:+.2f}")
    if path.size and decision in ("accept_h1", "accept_h0"):
        ax.plot([path.size], [shown[-1]], "o", color="k", label=f"{decision} after {path.size:,} deals")
    ax.set_xlabel("number of deals")
    ax.set_ylabel("log-likelihood ratio H1 vs H0")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="best")
    return _finish(fig, directory, stem)


def dealt_distribution_plot(frame: pd.DataFrame, column: str, xlabel: str, title: str, directory: str | Path,
                            stem: str) -> Path:
    """Bars per seat of the distribution of a dealt-hand feature (a column of
    :func:`simkit.analysis.dealt.deal_table`), as fractions of each seat's dealt hands."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    values = np.arange(int(frame[column].min()), int(frame[column].max()) + 1)
    width = 0.27
    for seat in range(3):
        sub = frame.loc[frame["seat"] == seat, column]
        freq = sub.value_counts(normalize=True).reindex(values, fill_value=0.0)
        label = f"seat {seat} ({'dealer, 31 cards' if seat == 0 else '30 cards'}), n={len(sub):,}"
        ax.bar(values + (seat - 1) * width, freq.to_numpy(), width=width, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of dealt hands")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _finish(fig, directory, stem)
