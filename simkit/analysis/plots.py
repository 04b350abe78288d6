"""Analysis plots on matplotlib's object-oriented API (no pyplot, no backend selected).

Each plot function takes the table an analysis function returned and draws one chart with
labelled axes (units and sample sizes in the labels or title) on ``ax``; without one it makes
a new :class:`matplotlib.figure.Figure` of the chart's usual size.  It returns the Axes, so
charts compose with other matplotlib code (``fig, axes = plt.subplots(1, 2)``; ``plot(..., ax=axes[0])``).
Importing simkit, or plotting with it, never calls ``matplotlib.use`` nor imports pyplot.

:func:`save_figure` writes a figure as ``STEM.png`` and ``STEM.svg`` (120 dpi) atomically, as the
reports do; it needs no display.  Interval labels state the level of ``confidence``.

>>> ax = forest_plot(pd.DataFrame({"label": ["a - b"], "estimate": [0.1], "lo": [0.0], "hi": [0.2], "n": [100]}),
...                  "difference", "A against B")
>>> ax.get_title(), type(ax.figure).__name__
('A against B', 'Figure')
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from simkit.analysis.results import format_level
from simkit.storage.files import write_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "convergence_plot",
    "crosstable_plot",
    "dealt_distribution_plot",
    "forest_plot",
    "hu_distribution_plot",
    "new_axes",
    "payoff_by_policy_plot",
    "save_figure",
    "sprt_llr_plot",
    "tuning_plot",
    "win_rate_by_seat_plot",
]


def new_axes(figsize: tuple[float, float]) -> Axes:
    """The Axes of a new figure of ``figsize`` inches (``matplotlib.figure.Figure``, not pyplot:
    no backend is selected and nothing needs closing)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize).add_subplot()


def save_figure(figure: Figure, directory: str | Path, stem: str) -> Path:
    """Lay out ``figure`` (``tight_layout``) and write it as ``STEM.png`` and ``STEM.svg`` into
    ``directory`` (created if needed); returns the PNG's path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    write_figure(figure, directory, stem)
    return directory / f"{stem}.png"


def hu_distribution_plot(hu_of_wins: np.ndarray, ax: Axes | None = None, title: str = "hu of winning hands") -> Axes:
    """Histogram of the winner's hu (fraction of won deals per 5-hu bin)."""
    hu = np.asarray(hu_of_wins, dtype=float)
    ax = new_axes((7, 4)) if ax is None else ax
    top = max(60, int(np.quantile(hu, 0.99)) + 10) if hu.size else 60
    bins = np.arange(0, top + 5, 5)
    ax.hist(np.clip(hu, 0, bins[-1]), bins=bins, density=True)
    ax.axvline(48, color="k", linestyle="--", linewidth=1, label="48 hu")
    ax.set_xlabel("winner's hu (hu; clipped near the 99th percentile)")
    ax.set_ylabel("density (fraction of won deals per hu)")
    ax.set_title(f"{title} (n={hu.size:,} wins)")
    ax.legend(fontsize=8)
    return ax


def win_rate_by_seat_plot(rates: pd.DataFrame, ax: Axes | None = None, confidence: float = 0.95) -> Axes:
    """Win rate of each seat with its interval (the table of :func:`~simkit.analysis.win_rates`
    at ``confidence``)."""
    ax = new_axes((6, 4)) if ax is None else ax
    x = rates["seat"].to_numpy()
    y = rates["win_rate"].to_numpy()
    err = np.vstack([y - rates["win_rate_lo"].to_numpy(), rates["win_rate_hi"].to_numpy() - y])
    ax.errorbar(x, y, yerr=err, fmt="o", capsize=5)
    ax.set_xticks(x, [f"seat {s}{' (dealer)' if s == 0 else ''}\n{p}" for s, p in zip(rates["seat"], rates["policy"])])
    ax.set_ylabel(f"win rate (fraction of deals, {format_level(confidence)} Wilson)")
    ax.set_title(f"Win rate by seat (n={int(rates['deals'].iloc[0]):,} deals)")
    return ax


def payoff_by_policy_plot(by_policy: pd.DataFrame, ax: Axes | None = None, title: str = "Mean payoff by policy",
                          confidence: float = 0.95) -> Axes:
    """Mean payoff per seat-deal of each policy with its interval (``win_rates_by_policy`` table
    at ``confidence``, or any table with columns policy, mean_payoff, mean_payoff_lo,
    mean_payoff_hi, seat_deals)."""
    ax = new_axes((6.5, 0.6 * len(by_policy) + 1.6)) if ax is None else ax
    y = np.arange(len(by_policy))
    m = by_policy["mean_payoff"].to_numpy()
    err = np.vstack([m - by_policy["mean_payoff_lo"].to_numpy(), by_policy["mean_payoff_hi"].to_numpy() - m])
    ax.errorbar(m, y, xerr=err, fmt="o", capsize=4)
    ax.axvline(0, color="grey", linewidth=0.8)
    confounded = by_policy["confounded"] if "confounded" in by_policy else [False] * len(by_policy)
    ax.set_yticks(y, [f"{p}\n(n={int(n):,} seat-deals)" + ("\nconfounded with seat" if c else "")
                      for p, n, c in zip(by_policy["policy"], by_policy["seat_deals"], confounded)])
    ax.invert_yaxis()
    ax.set_xlabel(f"mean payoff (pai per seat per deal, {format_level(confidence)} interval)")
    ax.set_title(title)
    return ax


def convergence_plot(curve: pd.DataFrame, ylabel: str, title: str, ax: Axes | None = None,
                     reference: float | None = None, reference_label: str = "exact",
                     confidence: float = 0.95) -> Axes:
    """Running estimate and its interval (at ``confidence``) against the number of deals (log x axis).

    ``curve`` has columns n, mean (or p), lo, hi (see :func:`simkit.analysis.stats.convergence_curve`).
    """
    value = curve["mean"] if "mean" in curve else curve["p"]
    ax = new_axes((7, 4)) if ax is None else ax
    ax.fill_between(curve["n"], curve["lo"], curve["hi"], alpha=0.3, label=f"{format_level(confidence)} interval")
    ax.plot(curve["n"], value, label="estimate")
    if reference is not None:
        ax.axhline(reference, color="k", linestyle="--", linewidth=1, label=reference_label)
    ax.set_xscale("log")
    ax.set_xlabel("number of deals (log scale)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} (n up to {int(curve['n'].max()):,})")
    ax.legend(fontsize=8)
    return ax


def forest_plot(rows: pd.DataFrame, xlabel: str, title: str, ax: Axes | None = None,
                null: float | None = 0.0) -> Axes:
    """One line per comparison: estimate with its interval (columns label, estimate, lo, hi, n)."""
    ax = new_axes((7.5, 0.55 * len(rows) + 1.6)) if ax is None else ax
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
    return ax


def sprt_llr_plot(llr_path: np.ndarray, lower: float, upper: float, title: str, ax: Axes | None = None,
                  min_n: int = 0, decision: str = "") -> Axes:
    """Log-likelihood ratio of a sequential test against the number of deals, with its two
    boundaries (and the deals before ``min_n``, where no decision is taken, shaded).

    ``llr_path[i]`` is the llr after deal i + 1; +-inf values (only one hypothesis possible on
    the values seen) are drawn just beyond the boundary.  Long paths are thinned for drawing."""
    path = np.asarray(llr_path, dtype=float)
    deals = np.arange(1, path.size + 1)
    step = max(1, path.size // 20_000)
    keep = np.unique(np.r_[np.arange(0, path.size, step), path.size - 1]) if path.size else np.zeros(0, dtype=int)
    margin = 0.25 * (upper - lower)
    shown = np.clip(np.nan_to_num(path[keep], nan=0.0, posinf=upper + margin, neginf=lower - margin),
                    lower - margin, upper + margin)
    ax = new_axes((7, 4)) if ax is None else ax
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
    return ax


def dealt_distribution_plot(frame: pd.DataFrame, column: str, xlabel: str, title: str,
                            ax: Axes | None = None) -> Axes:
    """Bars per seat of the distribution of a dealt-hand feature (a column of
    :func:`simkit.studies.dealt.deal_table`), as fractions of each seat's dealt hands."""
    ax = new_axes((7, 4)) if ax is None else ax
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
    return ax


def tuning_plot(trajectory: pd.DataFrame, column: str, ylabel: str, title: str, ax: Axes | None = None,
                bounds: tuple[float, float] | None = None, window: int | None = None,
                marks: dict[str, float] | None = None) -> Axes:
    """One column of a tuning trajectory (:func:`simkit.studies.tuning.tune`: one row per SPSA
    iteration, column ``iteration``) against the iteration: the values, with ``window`` their
    trailing moving average over that many iterations, ``bounds`` (the parameter's range) as
    grey lines and ``marks`` (label -> value, e.g. start and tuned) as dashed lines."""
    ax = new_axes((7, 3.5)) if ax is None else ax
    x = trajectory["iteration"].to_numpy() + 1
    y = trajectory[column].to_numpy(dtype=float)
    ax.plot(x, y, linewidth=0.8 if window else 1.2, alpha=0.5 if window else 1.0,
            label=f"{column} per iteration" if window else column)
    if window and y.size:
        kernel = np.ones(min(window, y.size))
        sums = np.convolve(y, kernel, mode="full")[: y.size]
        average = sums / np.convolve(np.ones(y.size), kernel, mode="full")[: y.size]  # trailing mean
        ax.plot(x, average, linewidth=1.8, label=f"moving average ({min(window, y.size)} iterations)")
    if bounds is not None:
        for value in bounds:
            ax.axhline(value, color="grey", linewidth=0.8)
    for (label, value), colour in zip((marks or {}).items(), ("tab:red", "tab:green", "tab:purple", "tab:brown")):
        ax.axhline(value, color=colour, linestyle="--", linewidth=1, label=f"{label}: {value:.4g}")
    ax.set_xlabel(f"SPSA iteration (n={len(trajectory):,})")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best")
    return ax


def crosstable_plot(estimate: pd.DataFrame, lo: pd.DataFrame, hi: pd.DataFrame, colorbar_label: str, title: str,
                    ax: Axes | None = None) -> Axes:
    """Heat map of a square row-minus-column table (:meth:`~simkit.studies.tournament.TournamentResult.crosstable`),
    each cell annotated with its estimate and interval; a diverging colour scale centred at 0."""
    k = estimate.shape[0]
    ax = new_axes((1.6 * k + 2.6, 1.2 * k + 1.4)) if ax is None else ax
    values = estimate.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    image = ax.imshow(values, cmap="RdBu", vmin=-bound, vmax=bound)
    ax.figure.colorbar(image, ax=ax, label=colorbar_label, shrink=0.8)
    for i in range(k):
        for j in range(k):
            text = "—" if i == j else f"{values[i, j]:+.3f}\n[{lo.iat[i, j]:+.3f}, {hi.iat[i, j]:+.3f}]"
            dark = np.isfinite(values[i, j]) and abs(values[i, j]) > 0.6 * bound
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if dark else "black")
    ax.set_xticks(range(k), [str(c) for c in estimate.columns])
    ax.set_yticks(range(k), [str(r) for r in estimate.index])
    ax.set_xlabel("column policy")
    ax.set_ylabel("row policy")
    ax.set_title(title)
    return ax
