"""Summaries of a simulation dataset: win rates, payoffs, 穿牌 rate, hu distribution.

Every function takes a dataset folder or a DataFrame, reads only the columns it needs, and
returns a DataFrame with estimates and 95% intervals (Wilson for proportions, t for means).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from scipy import stats

from simkit.report import wilson_interval
from simkit.storage import load_dataset


def _frame(data: str | os.PathLike | pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data[columns]
    return load_dataset(data, columns=columns)


def win_rates(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Win rate and mean payoff of each seat (and its policy), with intervals."""
    cols = ["winner"] + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
    df = _frame(data, cols)
    n = len(df)
    rows = []
    for k in range(3):
        wins = int((df["winner"] == k).sum())
        lo, hi = wilson_interval(wins, n, confidence)
        pay = df[f"payoff_{k}"].to_numpy(dtype=float)
        mean = pay.mean()
        half = stats.t.ppf(0.5 + confidence / 2, n - 1) * pay.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
        rows.append({
            "seat": k, "policy": str(df[f"policy_{k}"].iloc[0]) if n else "", "deals": n,
            "wins": wins, "win_rate": wins / n if n else np.nan, "win_rate_lo": lo, "win_rate_hi": hi,
            "mean_payoff": mean, "mean_payoff_lo": mean - half, "mean_payoff_hi": mean + half,
        })
    return pd.DataFrame(rows)


def exhausted_rate(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> tuple[float, float, float]:
    """(穿牌 rate, low, high)."""
    df = _frame(data, ["winner"])
    k = int((df["winner"] < 0).sum())
    lo, hi = wilson_interval(k, len(df), confidence)
    return k / len(df), lo, hi


def hu_distribution(data: str | os.PathLike | pd.DataFrame) -> dict[str, float]:
    """Quantiles of hu and units among won deals, and the tail probabilities of 小甲 / 大甲."""
    df = _frame(data, ["winner", "hu", "units"])
    won = df[df["winner"] >= 0]
    n = len(won)
    out: dict[str, float] = {"wins": float(n)}
    if n == 0:
        return out
    for q in (0.05, 0.25, 0.5, 0.75, 0.95, 0.99):
        out[f"hu_q{int(q * 100):02d}"] = float(won["hu"].quantile(q))
    out["hu_mean"] = float(won["hu"].mean())
    out["units_mean"] = float(won["units"].mean())
    for name, threshold in (("xiaojia", 5), ("dajia", 10)):
        k = int((won["units"] >= threshold).sum())
        lo, hi = wilson_interval(k, n)
        out[f"p_{name}"] = k / n
        out[f"p_{name}_lo"] = lo
        out[f"p_{name}_hi"] = hi
    return out
