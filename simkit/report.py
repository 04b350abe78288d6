"""Storage and report of a dealt-hand run: zstd Parquet, a manifest and a Markdown report
with PNG + SVG plots.  Everything is written to a temporary name and renamed, so an
interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from scipy import stats

import simkit
from simkit.rules import RuleSet
from simkit.storage.dataset import atomic_write


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion.

    >>> lo, hi = wilson_interval(0, 100)
    >>> (lo, round(hi, 4))
    (0.0, 0.037)
    """
    if n <= 0:
        return (0.0, 1.0)
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, float(centre - half))
    hi = 1.0 if successes == n else min(1.0, float(centre + half))
    return (lo, hi)


def prob_at_least_k_jiang(k: int, hand_size: int = 31) -> float:
    """Exact P(a hand of ``hand_size`` cards holds >= k 将): hypergeometric, 16 将 in 112.

    >>> round(prob_at_least_k_jiang(0), 12)
    1.0
    """
    return float(stats.hypergeom.sf(k - 1, 112, 16, hand_size))


EXACT: dict[str, Callable[[], float]] = {"dealer dealt >= 8 将": lambda: prob_at_least_k_jiang(8)}


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """zstd Parquet, atomically."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def _write_text(path: Path, text: str) -> None:
    def writer(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    atomic_write(path, writer)


def _save_figure(fig, directory: Path, stem: str) -> None:
    for ext in ("png", "svg"):
        atomic_write(directory / f"{stem}.{ext}", lambda tmp, ext=ext: fig.savefig(tmp, format=ext, dpi=120))


def _plot_distribution(frame: pd.DataFrame, column: str, xlabel: str, title: str, directory: Path, stem: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig.tight_layout()
    _save_figure(fig, directory, stem)
    plt.close(fig)


def write_deal_report(frame: pd.DataFrame, out_dir: str | os.PathLike, seed: int, batch_size: int, rules: RuleSet) -> Path:
    """Write ``deals.parquet``, ``manifest.json``, plots and ``report.md`` into out_dir."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    n_deals = int(frame["deal_id"].nunique())
    write_parquet(frame, directory / "deals.parquet")
    manifest = {
        "kind": "dealt_hands",
        "schema_version": 1,
        "simkit_version": simkit.__version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "deals": n_deals,
        "batch_size": batch_size,
        "rules": rules.to_dict(),
    }
    _write_text(directory / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    _plot_distribution(frame, "min_idle", "idle cards (fewest over all decompositions)",
                       "Distance of the dealt hand from complete", directory, "min_idle")
    _plot_distribution(frame, "n_jiang", "generals (jiang) in the dealt hand (cards)",
                       "Generals dealt per seat", directory, "n_jiang")
    dealer = frame[frame["seat"] == 0]
    rows = []
    for label, k in (
        ("dealer dealt a complete hand", int(dealer["complete"].sum())),
        ("dealer dealt a winning hand (天胡)", int(dealer["wins"].sum())),
        ("dealer dealt >= 8 将", int((dealer["n_jiang"] >= 8).sum())),
        ("dealer dealt a 闹 (4 of a kind)", int((dealer["n_nao"] >= 1).sum())),
    ):
        lo, hi = wilson_interval(k, len(dealer))
        exact = EXACT.get(label)
        exact_text = f"{exact():.5f}" if exact else "—"
        rows.append(
            f"| {label} | {k:,} / {len(dealer):,} | {k / len(dealer):.5f} | [{lo:.5f}, {hi:.5f}] | {exact_text} |"
        )
    seat_rows = []
    for seat, sub in frame.groupby("seat"):
        q = sub["min_idle"].quantile([0.05, 0.5, 0.95]).tolist()
        seat_rows.append(
            f"| {seat} | {len(sub):,} | {sub['min_idle'].mean():.3f} | {q[0]:.0f} / {q[1]:.0f} / {q[2]:.0f} "
            f"| {sub['n_jiang'].mean():.3f} | {sub['n_pairs'].mean():.3f} | {sub['n_zi'].mean():.3f} |"
        )
    text = "\n".join(
        [
            "# Dealt hands",
            "",
            f"{n_deals:,} deals, seed {seed}, batch size {batch_size}, simkit {simkit.__version__}; "
            f"rules: {', '.join(rules.to_strings()) or 'defaults'}.",
            "",
            "## Dealer's dealt 31 cards (95% Wilson intervals)",
            "",
            "| event | count | probability | 95% interval | exact |",
            "|---|---|---|---|---|",
            *rows,
            "",
            "## Per seat",
            "",
            "| seat | hands | mean idle cards | idle 5% / 50% / 95% | mean 将 | mean pairs | mean 子 |",
            "|---|---|---|---|---|---|---|",
            *seat_rows,
            "",
            "![idle cards](min_idle.png)",
            "",
            "![将 per seat](n_jiang.png)",
            "",
            "Data: `deals.parquet` (one row per deal and seat), `manifest.json`.",
            "",
        ]
    )
    _write_text(directory / "report.md", text)
    return directory / "report.md"
