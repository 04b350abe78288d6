"""A Markdown report with plots (PNG + SVG) of one simulation dataset."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from simkit.analysis.summary import exhausted_rate, hu_distribution, win_rates
from simkit.report import _save_figure, _write_text
from simkit.storage import load_dataset, read_manifest


def _plots(df, rates, directory: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    won = df[df["winner"] >= 0]
    fig, ax = plt.subplots(figsize=(7, 4))
    bins = np.arange(0, max(60, int(won["hu"].quantile(0.99)) + 10), 5)
    ax.hist(won["hu"].clip(upper=bins[-1]), bins=bins, density=True)
    ax.axvline(48, color="k", linestyle="--", linewidth=1, label="48 hu (1 pai without lou)")
    ax.set_xlabel("winner's hu (clipped at the 99th percentile)")
    ax.set_ylabel("fraction of won deals per hu")
    ax.set_title(f"hu of winning hands (n={len(won):,} wins)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save_figure(fig, directory, "hu_distribution")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    x = rates["seat"].to_numpy()
    y = rates["win_rate"].to_numpy()
    err = np.vstack([y - rates["win_rate_lo"].to_numpy(), rates["win_rate_hi"].to_numpy() - y])
    ax.errorbar(x, y, yerr=err, fmt="o", capsize=5)
    ax.set_xticks(x, [f"seat {s}\n{p}" for s, p in zip(rates["seat"], rates["policy"])])
    ax.set_ylabel("win rate (fraction of deals, 95% Wilson)")
    ax.set_title(f"Win rate by seat (n={int(rates['deals'].iloc[0]):,} deals)")
    fig.tight_layout()
    _save_figure(fig, directory, "win_rate_by_seat")
    plt.close(fig)


def write_report(dataset: str | os.PathLike, out: str | os.PathLike | None = None) -> Path:
    """Write ``report.md`` (and plots) for a dataset; into the dataset folder by default."""
    directory = Path(out) if out is not None else Path(dataset)
    directory.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(Path(dataset)) or {}
    cols = ["winner", "hu", "units", "turns"] + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
    df = load_dataset(dataset, columns=cols)
    rates = win_rates(df)
    exhausted, ex_lo, ex_hi = exhausted_rate(df)
    hu = hu_distribution(df)
    _plots(df, rates, directory)
    lines = [
        "# Simulation report",
        "",
        f"{len(df):,} deals, seed {manifest.get('seed')}, policies {', '.join(manifest.get('policies', []))}, "
        f"batch size {manifest.get('batch_size')}, simkit {manifest.get('simkit_version')}.",
        "",
        "## Seats (95% intervals: Wilson for win rates, t for mean payoffs in 牌 per deal)",
        "",
        "| seat | policy | win rate | interval | mean payoff | interval |",
        "|---|---|---|---|---|---|",
    ]
    for r in rates.itertuples():
        lines.append(f"| {r.seat} | {r.policy} | {r.win_rate:.4f} | [{r.win_rate_lo:.4f}, {r.win_rate_hi:.4f}] | "
                     f"{r.mean_payoff:+.4f} | [{r.mean_payoff_lo:+.4f}, {r.mean_payoff_hi:+.4f}] |")
    lines += [
        "",
        f"穿牌 (no winner): {exhausted:.4f} [{ex_lo:.4f}, {ex_hi:.4f}]; mean turns {df['turns'].mean():.2f}.",
        "",
        "## Winning hands",
        "",
        "| statistic | value |",
        "|---|---|",
    ]
    for key, value in hu.items():
        lines.append(f"| {key} | {value:.4f} |" if isinstance(value, float) and not value.is_integer() else f"| {key} | {value:g} |")
    lines += [
        "",
        "![win rate by seat](win_rate_by_seat.png)",
        "",
        "![hu distribution](hu_distribution.png)",
        "",
    ]
    _write_text(directory / "report.md", "\n".join(lines))
    return directory / "report.md"
