"""Summaries of a simulation dataset: win rates (by seat, by policy), payoffs, 穿牌 rate,
dealer advantage, distributions of hu / units / 楼 / game length, pattern frequencies.

Every function takes a dataset folder or a DataFrame, reads only the columns it needs, and
returns estimates with intervals (Wilson for proportions, Student t for means; 95% unless
``confidence`` says otherwise).
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


def win_rates_by_policy(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Win rate and mean payoff per seat-deal of each policy, pooled over the seats it plays.

    A policy in two seats contributes two seat-deals per deal. Its wins in one deal are
    mutually exclusive (at most one winner), which makes the binomial Wilson interval on
    seat-deals slightly conservative; the payoff interval is a t interval on per-deal means
    of the policy's seats (exact pairing within a deal).

    >>> df = pd.DataFrame({"winner": [0, 1, -1, 2], "policy_0": "a", "policy_1": "b", "policy_2": "b",
    ...                    "payoff_0": [4, -2, 0, -1], "payoff_1": [-2, 4, 0, -1], "payoff_2": [-2, -2, 0, 2]})
    >>> win_rates_by_policy(df)[["policy", "seat_deals", "wins"]].values.tolist()
    [['a', 4, 1], ['b', 8, 2]]
    """
    cols = ["winner"] + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
    df = _frame(data, cols)
    n = len(df)
    policies = [df[f"policy_{k}"].astype(str).to_numpy() for k in range(3)]
    names = sorted(set(np.concatenate(policies).tolist())) if n else []
    winner = df["winner"].to_numpy()
    rows = []
    for name in names:
        seats = [(policies[k] == name) for k in range(3)]
        seat_deals = int(sum(s.sum() for s in seats))
        wins = int(sum(((winner == k) & seats[k]).sum() for k in range(3)))
        lo, hi = wilson_interval(wins, seat_deals, confidence)
        total = sum(np.where(seats[k], df[f"payoff_{k}"].to_numpy(dtype=float), 0.0) for k in range(3))
        count = sum(seats[k].astype(float) for k in range(3))
        per_deal = total[count > 0] / count[count > 0]
        mean, mlo, mhi = _t_interval(per_deal, confidence)
        rows.append({"policy": name, "seat_deals": seat_deals, "wins": wins,
                     "win_rate": wins / seat_deals, "win_rate_lo": lo, "win_rate_hi": hi,
                     "mean_payoff": mean, "mean_payoff_lo": mlo, "mean_payoff_hi": mhi})
    return pd.DataFrame(rows)


def _t_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    n = values.size
    if n == 0:
        return (np.nan, np.nan, np.nan)
    mean = float(values.mean())
    if n < 2:
        return (mean, np.nan, np.nan)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return (mean, mean - half, mean + half)


def dealer_advantage(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Dealer against the other two seats: win rate and mean payoff, difference, interval, test.

    Per deal, ``x = [dealer won] - ([seat a won] + [seat b won]) / 2`` (a, b the non-dealers)
    has mean ``p_dealer - p_non_dealer``; likewise ``payoff_dealer - mean(payoff_non_dealers)``.
    Both are tested against 0 with a one-sample t test (deals are independent; the pairing is
    within the deal, so the dependence of the three seats' outcomes is accounted for). Only
    meaningful when every seat plays the same policy (otherwise seat and policy are confounded).

    >>> df = pd.DataFrame({"dealer": [0] * 4, "winner": [0, 0, 1, -1],
    ...                    "payoff_0": [2, 2, -1, 0], "payoff_1": [-1, -1, 2, 0], "payoff_2": [-1, -1, -1, 0]})
    >>> dealer_advantage(df)[["measure", "dealer", "non_dealer", "difference"]].values.tolist()[0]
    ['win rate', 0.5, 0.125, 0.375]
    """
    df = _frame(data, ["dealer", "winner"] + [f"payoff_{k}" for k in range(3)])
    dealer = df["dealer"].to_numpy().astype(np.int64)
    winner = df["winner"].to_numpy().astype(np.int64)
    payoff = np.stack([df[f"payoff_{k}"].to_numpy(dtype=float) for k in range(3)], axis=1)
    rows_index = np.arange(len(df))
    dealer_won = (winner == dealer).astype(float)
    other_won = ((winner >= 0) & (winner != dealer)).astype(float)
    dealer_pay = payoff[rows_index, dealer]
    other_pay = (payoff.sum(axis=1) - dealer_pay) / 2.0
    out = []
    for measure, a, b in (("win rate", dealer_won, other_won / 2.0), ("mean payoff", dealer_pay, other_pay)):
        x = a - b
        mean, lo, hi = _t_interval(x, confidence)
        test = stats.ttest_1samp(x, 0.0) if x.size > 1 and x.std() > 0 else None
        out.append({"measure": measure, "deals": int(x.size), "dealer": float(a.mean()), "non_dealer": float(b.mean()),
                    "difference": mean, "difference_lo": lo, "difference_hi": hi,
                    "t": float(test.statistic) if test is not None else np.nan,
                    "p_value": float(test.pvalue) if test is not None else np.nan})
    return pd.DataFrame(out)


DISTRIBUTION_COLUMNS = ("hu", "units", "lou", "steps", "turns", "draws", "claims")
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95, 0.99)


def distributions(data: str | os.PathLike | pd.DataFrame, columns: tuple[str, ...] = DISTRIBUTION_COLUMNS) -> pd.DataFrame:
    """Mean, standard deviation, quantiles and maximum of each column.

    hu, units, 楼 and 步 are taken over won deals (they describe the winning hand); game-length
    columns (turns, draws, claims) over all deals.

    >>> df = pd.DataFrame({"winner": [0, -1, 1], "hu": [20, -1, 30], "turns": [5, 9, 7]})
    >>> distributions(df, ("hu", "turns"))[["column", "over", "n", "mean"]].values.tolist()
    [['hu', 'won deals', 2, 25.0], ['turns', 'all deals', 3, 7.0]]
    """
    df = _frame(data, ["winner"] + list(columns))
    won = df["winner"].to_numpy() >= 0
    rows = []
    for column in columns:
        over_wins = column in ("hu", "units", "lou", "steps")
        values = df[column].to_numpy(dtype=float)[won if over_wins else slice(None)]
        row = {"column": column, "over": "won deals" if over_wins else "all deals", "n": int(values.size),
               "mean": float(values.mean()) if values.size else np.nan,
               "std": float(values.std(ddof=1)) if values.size > 1 else np.nan}
        for q in QUANTILES:
            row[f"q{int(round(q * 100)):02d}"] = float(np.quantile(values, q)) if values.size else np.nan
        row["max"] = float(values.max()) if values.size else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def tail_probabilities(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """P(小甲) = P(units >= 5) and P(大甲) = P(units >= 10) among wins, P(楼 >= 1), P(hu >= h).

    >>> df = pd.DataFrame({"winner": [0, 1, -1], "hu": [48, 20, -1], "units": [10, 2, 0], "lou": [1, 0, 0]})
    >>> tail_probabilities(df)["hits"].tolist()[:2]
    [1, 1]
    """
    df = _frame(data, ["winner", "hu", "units", "lou"])
    won = df[df["winner"] >= 0]
    n = len(won)
    events = [("小甲 (units >= 5)", won["units"] >= 5), ("大甲 (units >= 10)", won["units"] >= 10),
              ("楼 >= 1", won["lou"] >= 1), ("hu >= 48", won["hu"] >= 48), ("hu >= 100", won["hu"] >= 100)]
    rows = []
    for name, mask in events:
        k = int(mask.sum())
        lo, hi = wilson_interval(k, n, confidence)
        rows.append({"event": name, "wins": n, "hits": k, "p": k / n if n else np.nan, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def pattern_frequencies(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """How often each of the 18 patterns holds among won deals, with Wilson intervals.

    >>> from simkit.evaluator import PATTERN_NAMES
    >>> df = pd.DataFrame({"winner": [0, -1], **{f"pattern_{p}": [False, False] for p in PATTERN_NAMES}})
    >>> len(pattern_frequencies(df)), int(pattern_frequencies(df)["hits"].sum())
    (18, 0)
    """
    from simkit.evaluator import PATTERN_NAMES

    cols = [f"pattern_{p}" for p in PATTERN_NAMES]
    df = _frame(data, ["winner"] + cols)
    won = df[df["winner"] >= 0]
    n = len(won)
    rows = []
    for name, col in zip(PATTERN_NAMES, cols):
        k = int(won[col].sum())
        lo, hi = wilson_interval(k, n, confidence)
        rows.append({"pattern": name, "wins": n, "hits": k, "p": k / n if n else np.nan, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def win_kinds(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Share of deals ending each way (discard, draw, table 将, 天胡, none = 穿牌)."""
    df = _frame(data, ["win_kind"])
    n = len(df)
    counts = df["win_kind"].astype(str).value_counts()
    rows = []
    for kind in ("discard", "draw", "table", "tianhu", "none"):
        k = int(counts.get(kind, 0))
        lo, hi = wilson_interval(k, n, confidence)
        rows.append({"win_kind": kind, "deals": n, "hits": k, "p": k / n if n else np.nan, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)
