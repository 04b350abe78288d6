"""Summaries of a simulation dataset: win rates (by seat, by policy), payoffs, 穿牌 rate,
dealer advantage, distributions of hu / units / 楼 / game length, pattern frequencies; for runs
in sessions (a rotating dealer): per-seat session results and how winner-deals-next compounds
the dealer's edge.

Every function takes a dataset folder or a DataFrame, reads only the columns it needs, and
returns a DataFrame (or, for a single figure, a frozen result with ``.to_frame()``) of estimates
with intervals (Wilson for proportions, Student t for means) at ``confidence`` (default 0.95).

Seat and policy (``simkit simulate --seating``): with fixed seats and different policies a
policy's figures are also its seat's (with independent deals seat 0 deals every deal).  Every
table that could show such a mix says so in the same row: ``confounded`` (True when the row's
figure mixes seat and policy: a seat that always holds the same policy while the policies
differ, a policy that does not sit at each seat a third of the time, a dealer whose policy is
not spread like the seats' policies; :data:`BALANCE_TOLERANCE`).  Rotated seating (the
default for different policies) or all six seatings compare like with like.  With seating
``all`` (six rows per deal) the intervals are clustered by deal.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pandas as pd
from scipy import stats

from simkit.analysis.results import Interval, Result
from simkit.analysis.stats import check_confidence, t_interval_or_nan, wilson_interval
from simkit.evaluator import PATTERN_NAMES
from simkit.storage import load_dataset


BALANCE_TOLERANCE = 0.01  # a policy's share of a seat (or of the dealer's seat) may differ from balance by this much


XIAOJIA_UNITS = 5  # a win of at least this many units is a 小甲 (docs/rules.md)
DAJIA_UNITS = 10  # ... and of at least this many a 大甲


def _frame(data: str | os.PathLike | pd.DataFrame, columns: list[str], optional: tuple[str, ...] = ()) -> pd.DataFrame:
    """The ``columns`` of a dataset folder or frame, and those of ``optional`` a frame has
    (a folder: all of them)."""
    if isinstance(data, pd.DataFrame):
        return data[columns + [c for c in optional if c in data.columns and c not in columns]]
    return load_dataset(data, columns=columns + [c for c in optional if c not in columns])


def _deal_groups(df: pd.DataFrame) -> np.ndarray | None:
    """Cluster of each row when rows of one deal repeat (seating ``all``: six rows per deal):
    the deal id; None when every row is its own deal (or the frame has no ``deal_id``)."""
    if "deal_id" not in df.columns:
        return None
    ids = df["deal_id"].to_numpy()
    return ids if np.unique(ids).size < ids.size else None


def _policy_matrix(df: pd.DataFrame) -> np.ndarray | None:
    """(rows, 3) policy names by seat as played, None without policy columns."""
    if not all(f"policy_{k}" in df.columns for k in range(3)):
        return None
    return np.stack([df[f"policy_{k}"].astype(str).to_numpy() for k in range(3)], axis=1)


def _seat_policy_label(policies: np.ndarray) -> str:
    """One seat's policy: its name when it always plays the same one, else ``rotated: a / b``."""
    names = list(dict.fromkeys(policies.tolist()))
    if len(names) == 1:
        return names[0]
    return "rotated: " + " / ".join(sorted(names)) if names else ""


def seat_balance(df: pd.DataFrame) -> pd.DataFrame:
    """Per policy: its share of each seat's rows (``seat_k_share``: the share of its seat-deals
    played at seat k, 1/3 each when balanced), its share of the dealer's seat against its share
    of all seats, and ``confounded`` (a seat share off 1/3, or its dealing share off its seat
    share, by more than :data:`BALANCE_TOLERANCE`).  Empty without policy columns.

    >>> df = pd.DataFrame({"dealer": [0, 0, 0], "policy_0": ["a", "b", "c"], "policy_1": ["b", "c", "a"],
    ...                    "policy_2": ["c", "a", "b"]})
    >>> seat_balance(df)[["policy", "seat_0_share", "confounded"]].values.tolist()
    [['a', 0.3333333333333333, False], ['b', 0.3333333333333333, False], ['c', 0.3333333333333333, False]]
    """
    pol = _policy_matrix(df)
    if pol is None or len(df) == 0:
        return pd.DataFrame(columns=["policy", "seat_deals", "seat_0_share", "seat_1_share", "seat_2_share",
                                     "dealer_share", "seat_share", "confounded"])
    dealer = df["dealer"].to_numpy().astype(np.int64) if "dealer" in df.columns else None
    rows = []
    for name in sorted(set(pol.ravel().tolist())):
        at = pol == name
        seat_deals = int(at.sum())
        shares = at.sum(axis=0) / seat_deals
        seat_share = seat_deals / at.size  # its share of all seat-deals
        dealer_share = float(at[np.arange(len(df)), dealer].mean()) if dealer is not None else np.nan
        unbalanced = bool(np.any(np.abs(shares - 1 / 3) > BALANCE_TOLERANCE)) or (
            dealer is not None and abs(dealer_share - seat_share) > BALANCE_TOLERANCE)
        rows.append({"policy": name, "seat_deals": seat_deals, "seat_0_share": float(shares[0]),
                     "seat_1_share": float(shares[1]), "seat_2_share": float(shares[2]),
                     "dealer_share": dealer_share, "seat_share": seat_share, "confounded": unbalanced})
    return pd.DataFrame(rows)


def _dealer_confounded(df: pd.DataFrame) -> bool:
    """The dealer's outcome mixes in a policy effect: some policy sits at the dealer's seat
    more or less often than at seats in general (fixed seats with different policies)."""
    balance = seat_balance(df)
    if not len(balance) or balance["dealer_share"].isna().all():
        return False
    return bool((np.abs(balance["dealer_share"] - balance["seat_share"]) > BALANCE_TOLERANCE).any())


def _seat_confounded(pol: np.ndarray, seat: int) -> bool:
    """A seat's figures are also a policy's: its mix of policies differs from all seats' mix."""
    names = set(pol.ravel().tolist())
    return any(abs(float((pol[:, seat] == name).mean()) - float((pol == name).mean())) > BALANCE_TOLERANCE
               for name in names)


def _policies_differ(df: pd.DataFrame) -> bool:
    pol = _policy_matrix(df)
    return pol is not None and len(set(pol.ravel().tolist())) > 1


def win_rates(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Win rate and mean payoff of each seat (and its policy), with intervals.

    ``policy`` is the seat's policy, or ``rotated: ...`` when the seat played several;
    ``confounded`` is True when the seat's figure is also a policy's: the seat's mix of
    policies differs from the run's (fixed seats with different policies).  With six rows per
    deal (seating ``all``) the intervals are clustered by deal."""
    cols = ["winner"] + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
    df = _frame(data, cols, optional=("deal_id",))
    n = len(df)
    groups = _deal_groups(df)
    pol = _policy_matrix(df)
    rows = []
    for k in range(3):
        wins = int((df["winner"] == k).sum())
        pay = df[f"payoff_{k}"].to_numpy(dtype=float)
        if groups is None:
            wilson = wilson_interval(wins, n, confidence)
            lo, hi = wilson.lo, wilson.hi
            mean = pay.mean() if n else np.nan
            half = stats.t.ppf(0.5 + confidence / 2, n - 1) * pay.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
            mean_lo, mean_hi = mean - half, mean + half
        else:
            _, lo, hi, _, _ = _cluster_mean((df["winner"].to_numpy() == k).astype(float), groups, confidence)
            mean, mean_lo, mean_hi, _, _ = _cluster_mean(pay, groups, confidence)
        rows.append({
            "seat": k, "policy": _seat_policy_label(pol[:, k]) if n else "", "deals": n,
            "wins": wins, "win_rate": wins / n if n else np.nan, "win_rate_lo": lo, "win_rate_hi": hi,
            "mean_payoff": mean, "mean_payoff_lo": mean_lo, "mean_payoff_hi": mean_hi,
            "confounded": _seat_confounded(pol, k) if n else False,
        })
    return pd.DataFrame(rows)


def exhausted_rate(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> Interval:
    """The 穿牌 (no winner) rate over all deals (``estimate``) with its Wilson interval.

    >>> rate = exhausted_rate(pd.DataFrame({"winner": [0, -1, 2, -1]}))
    >>> rate.estimate, rate.n, rate.method
    (0.5, 4, 'Wilson')
    """
    df = _frame(data, ["winner"])
    return wilson_interval(int((df["winner"] < 0).sum()), len(df), confidence)


@dataclasses.dataclass(frozen=True)
class HuDistribution(Result):
    """hu and units of the won deals (:func:`hu_distribution`): ``wins``, hu quantiles
    ``hu_q05`` .. ``hu_q99``, ``hu_mean``, ``units_mean`` and the shares of wins with units
    >= 5 (小甲, ``p_xiaojia``) and >= 10 (大甲, ``p_dajia``) with Wilson intervals at
    ``confidence``.  NaN where there is no win."""

    wins: int
    hu_q05: float
    hu_q25: float
    hu_q50: float
    hu_q75: float
    hu_q95: float
    hu_q99: float
    hu_mean: float
    units_mean: float
    p_xiaojia: float
    p_xiaojia_lo: float
    p_xiaojia_hi: float
    p_dajia: float
    p_dajia_lo: float
    p_dajia_hi: float
    confidence: float


def hu_distribution(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> HuDistribution:
    """Quantiles of hu and units among won deals, and the tail probabilities of 小甲 / 大甲.

    >>> hu = hu_distribution(pd.DataFrame({"winner": [0, 1, -1], "hu": [20, 60, -1], "units": [1, 5, 0]}))
    >>> hu.wins, hu.hu_mean, hu.p_xiaojia, hu.to_frame().shape
    (2, 40.0, 0.5, (1, 16))
    """
    df = _frame(data, ["winner", "hu", "units"])
    won = df[df["winner"] >= 0]
    n = len(won)
    nan = float("nan")
    quantiles = [float(won["hu"].quantile(q)) if n else nan for q in (0.05, 0.25, 0.5, 0.75, 0.95, 0.99)]
    tails = []
    for threshold in (XIAOJIA_UNITS, DAJIA_UNITS):
        k = int((won["units"] >= threshold).sum())
        wilson = wilson_interval(k, n, confidence)
        tails += [k / n, wilson.lo, wilson.hi] if n else [nan, nan, nan]
    return HuDistribution(n, *quantiles, float(won["hu"].mean()) if n else nan,
                          float(won["units"].mean()) if n else nan, *tails, float(confidence))


def win_rates_by_policy(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Win rate and mean payoff per seat-deal of each policy, pooled over the seats it plays.

    A policy in two seats contributes two seat-deals per deal. Its wins in one deal are
    mutually exclusive (at most one winner), which makes the binomial Wilson interval on
    seat-deals slightly conservative; the payoff interval is a t interval on per-deal means
    of the policy's seats (exact pairing within a deal).  With six rows per deal (seating
    ``all``) both intervals are clustered by deal (:func:`_cluster_mean`).

    ``dealt_share``: the share of the policy's seat-deals in which it dealt (1/3 when the
    seating is balanced); ``confounded`` (:func:`seat_balance`): True when the figures are
    also its seats' (fixed seats with different policies: the first policy deals every
    independent deal), so they do not compare policies like with like.

    >>> df = pd.DataFrame({"winner": [0, 1, -1, 2], "policy_0": "a", "policy_1": "b", "policy_2": "b",
    ...                    "payoff_0": [4, -2, 0, -1], "payoff_1": [-2, 4, 0, -1], "payoff_2": [-2, -2, 0, 2]})
    >>> win_rates_by_policy(df)[["policy", "seat_deals", "wins", "confounded"]].values.tolist()
    [['a', 4, 1, True], ['b', 8, 2, True]]
    """
    cols = ["winner"] + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
    df = _frame(data, cols, optional=("dealer", "deal_id"))
    groups = _deal_groups(df)
    balance = seat_balance(df).set_index("policy") if len(df) else None
    dealer = df["dealer"].to_numpy().astype(np.int64) if "dealer" in df.columns else None
    n = len(df)
    policies = [df[f"policy_{k}"].astype(str).to_numpy() for k in range(3)]
    names = sorted(set(np.concatenate(policies).tolist())) if n else []
    winner = df["winner"].to_numpy()
    rows = []
    for name in names:
        seats = [(policies[k] == name) for k in range(3)]
        seat_deals = int(sum(s.sum() for s in seats))
        wins = int(sum(((winner == k) & seats[k]).sum() for k in range(3)))
        total = sum(np.where(seats[k], df[f"payoff_{k}"].to_numpy(dtype=float), 0.0) for k in range(3))
        count = sum(seats[k].astype(float) for k in range(3))
        per_deal = total[count > 0] / count[count > 0]
        if groups is None:
            wilson = wilson_interval(wins, seat_deals, confidence)
            lo, hi = wilson.lo, wilson.hi
            mean, mlo, mhi = t_interval_or_nan(per_deal, confidence)
        else:  # rows of one deal are dependent: ratio estimators clustered by deal
            won = sum(((winner == k) & seats[k]).astype(float) for k in range(3))
            rate, lo, hi, _, _ = _cluster_mean(won[count > 0] / count[count > 0], groups[count > 0], confidence)
            mean, mlo, mhi, _, _ = _cluster_mean(per_deal, groups[count > 0], confidence)
        dealt = (np.nan if dealer is None else
                 float(sum((seats[k] & (dealer == k)).sum() for k in range(3)) / seat_deals))
        rows.append({"policy": name, "seat_deals": seat_deals, "wins": wins,
                     "win_rate": wins / seat_deals, "win_rate_lo": lo, "win_rate_hi": hi,
                     "mean_payoff": mean, "mean_payoff_lo": mlo, "mean_payoff_hi": mhi,
                     "dealt_share": dealt, "confounded": bool(balance.loc[name, "confounded"])})
    return pd.DataFrame(rows)


def dealer_advantage(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Dealer against the other two seats: win rate and mean payoff, difference, interval, test.

    Per deal, ``x = [dealer won] - ([seat a won] + [seat b won]) / 2`` (a, b the non-dealers)
    has mean ``p_dealer - p_non_dealer``; likewise ``payoff_dealer - mean(payoff_non_dealers)``.
    Both are tested against 0 with a one-sample t test (deals are independent; the pairing is
    within the deal, so the dependence of the three seats' outcomes is accounted for; with six
    rows per deal, seating ``all``, clustered by deal).  ``confounded`` (same row): True when
    the dealer's seat holds some policy more or less often than the seats do in general (fixed
    seats with different policies: the dealer's edge is then also that policy's edge); see
    :func:`dealer_advantage_by_policy` for the edge of each policy.  A frame without policy
    columns cannot tell (False).

    >>> df = pd.DataFrame({"dealer": [0] * 4, "winner": [0, 0, 1, -1],
    ...                    "payoff_0": [2, 2, -1, 0], "payoff_1": [-1, -1, 2, 0], "payoff_2": [-1, -1, -1, 0]})
    >>> dealer_advantage(df)[["measure", "dealer", "non_dealer", "difference"]].values.tolist()[0]
    ['win rate', 0.5, 0.125, 0.375]
    """
    df = _frame(data, ["dealer", "winner"] + [f"payoff_{k}" for k in range(3)],
                optional=tuple(f"policy_{k}" for k in range(3)) + ("deal_id",))
    groups = _deal_groups(df)
    confounded = _dealer_confounded(df)
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
        if groups is None:
            mean, lo, hi = t_interval_or_nan(x, confidence)
            test = stats.ttest_1samp(x, 0.0) if x.size > 1 and x.std() > 0 else None
            t, p = (float(test.statistic), float(test.pvalue)) if test is not None else (np.nan, np.nan)
        else:
            mean, lo, hi, t, p = _cluster_mean(x, groups, confidence)
        out.append({"measure": measure, "deals": int(x.size), "dealer": float(a.mean()), "non_dealer": float(b.mean()),
                    "difference": mean, "difference_lo": lo, "difference_hi": hi, "t": t, "p_value": p,
                    "confounded": confounded})
    return pd.DataFrame(out)


def _cluster_difference(y: np.ndarray, mask: np.ndarray, groups: np.ndarray,
                        confidence: float) -> tuple[float, float, float, float, float]:
    """mean(y[mask]) - mean(y[~mask]) with an interval and test whose variance is clustered by
    ``groups`` (linearised ratio estimators, t with G - 1 degrees of freedom for G clusters;
    with one observation per cluster close to Welch's): (difference, lo, hi, t, p).

    >>> d, lo, hi, t, p = _cluster_difference(np.array([1., 0., 1., 0., 0., 0.]),
    ...                                       np.array([True, True, True, False, False, False]), np.arange(6), 0.95)
    >>> round(d, 4), lo < d < hi
    (0.6667, True)
    """
    confidence = check_confidence(confidence)
    n_a, n_b = int(mask.sum()), int((~mask).sum())
    if n_a == 0 or n_b == 0:
        return (np.nan,) * 5
    mean_a, mean_b = float(y[mask].mean()), float(y[~mask].mean())
    diff = mean_a - mean_b
    codes, inverse = np.unique(groups, return_inverse=True)
    g = codes.size
    if g < 2:
        return (diff, np.nan, np.nan, np.nan, np.nan)
    influence = (np.bincount(inverse, weights=np.where(mask, y - mean_a, 0.0), minlength=g) / n_a
                 - np.bincount(inverse, weights=np.where(mask, 0.0, y - mean_b), minlength=g) / n_b)
    se = float(np.sqrt(g / (g - 1) * (influence ** 2).sum()))
    half = float(stats.t.ppf(0.5 + confidence / 2, g - 1)) * se
    if se > 0:
        t = diff / se
        p = float(2 * stats.t.sf(abs(t), g - 1))
    else:
        t, p = np.nan, (1.0 if diff == 0 else np.nan)
    return (diff, diff - half, diff + half, float(t), p)


def dealer_advantage_by_policy(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Each policy's own dealer advantage: its win rate and mean payoff in the seat-deals in
    which it deals against those in which it does not (same policy on both sides: like with
    like).  Intervals and tests cluster the seat-deals by deal (the seats of one deal, and the
    six rows of a deal with seating ``all``, are dependent) or, for runs in sessions, by session.

    With fixed seats and different policies a policy always or never deals (independent
    deals): its edge cannot be estimated (NaN, ``note`` says why); rotated or all seatings
    give every policy both kinds of seat-deals.

    >>> df = pd.DataFrame({"deal_id": [0, 1, 2], "dealer": [0, 0, 0], "winner": [0, 2, 0],
    ...                    "policy_0": ["a", "b", "c"], "policy_1": ["b", "c", "a"], "policy_2": ["c", "a", "b"],
    ...                    "payoff_0": [2, -1, 2], "payoff_1": [-1, -1, -1], "payoff_2": [-1, 2, -1]})
    >>> r = dealer_advantage_by_policy(df)
    >>> r[r.measure == "win rate"][["policy", "dealing_n", "dealing", "not_dealing_n", "not_dealing"]].values.tolist()
    [['a', 1, 1.0, 2, 0.5], ['b', 1, 0.0, 2, 0.0], ['c', 1, 1.0, 2, 0.0]]
    """
    cols = ["dealer", "winner"] + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
    df = _frame(data, cols, optional=("deal_id", "session", "deal_in_session"))
    n = len(df)
    pol = _policy_matrix(df)
    dealer = df["dealer"].to_numpy().astype(np.int64)
    winner = df["winner"].to_numpy().astype(np.int64)
    if has_sessions(df):
        groups = df["session"].to_numpy()
    elif "deal_id" in df.columns:
        groups = df["deal_id"].to_numpy()
    else:
        groups = np.arange(n)
    seat = np.tile(np.arange(3), n)  # flattened seat-deals: row-major (deal, seat)
    names = pol.ravel()
    deals = np.repeat(groups, 3)
    deals_it = np.repeat(dealer, 3) == seat
    won = (np.repeat(winner, 3) == seat).astype(float)
    pay = np.stack([df[f"payoff_{k}"].to_numpy(dtype=float) for k in range(3)], axis=1).ravel()
    out = []
    for name in sorted(set(names.tolist())):
        mine = names == name
        mask = deals_it[mine]
        note = ("always deals" if mask.all() else "never deals" if not mask.any() else "")
        if note:
            note += " (fixed seats: rotate them to estimate its edge)"
        for measure, y in (("win rate", won), ("mean payoff", pay)):
            diff, lo, hi, t, p = _cluster_difference(y[mine], mask, deals[mine], confidence)
            out.append({"policy": name, "measure": measure, "dealing_n": int(mask.sum()),
                        "dealing": float(y[mine][mask].mean()) if mask.any() else np.nan,
                        "not_dealing_n": int((~mask).sum()),
                        "not_dealing": float(y[mine][~mask].mean()) if (~mask).any() else np.nan,
                        "difference": diff, "difference_lo": lo, "difference_hi": hi, "t": t, "p_value": p,
                        "note": note})
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
        values = df[column].to_numpy(dtype=float, na_value=np.nan)[won if over_wins else slice(None)]
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
    events = [(f"小甲 (units >= {XIAOJIA_UNITS})", won["units"] >= XIAOJIA_UNITS),
              (f"大甲 (units >= {DAJIA_UNITS})", won["units"] >= DAJIA_UNITS),
              ("楼 >= 1", won["lou"] >= 1), ("hu >= 48", won["hu"] >= 48), ("hu >= 100", won["hu"] >= 100)]
    rows = []
    for name, mask in events:
        k = int(mask.sum())
        wilson = wilson_interval(k, n, confidence)
        lo, hi = wilson.lo, wilson.hi
        rows.append({"event": name, "wins": n, "hits": k, "p": k / n if n else np.nan, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def pattern_frequencies(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """How often each of the 18 patterns holds among won deals, with Wilson intervals.

    >>> from simkit.evaluator import PATTERN_NAMES
    >>> df = pd.DataFrame({"winner": [0, -1], **{f"pattern_{p}": [False, False] for p in PATTERN_NAMES}})
    >>> len(pattern_frequencies(df)), int(pattern_frequencies(df)["hits"].sum())
    (18, 0)
    """
    cols = [f"pattern_{p}" for p in PATTERN_NAMES]
    df = _frame(data, ["winner"] + cols)
    won = df[df["winner"] >= 0]
    n = len(won)
    rows = []
    for name, col in zip(PATTERN_NAMES, cols):
        k = int(won[col].sum())
        wilson = wilson_interval(k, n, confidence)
        lo, hi = wilson.lo, wilson.hi
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
        wilson = wilson_interval(k, n, confidence)
        lo, hi = wilson.lo, wilson.hi
        rows.append({"win_kind": kind, "deals": n, "hits": k, "p": k / n if n else np.nan, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


# ---- sessions (runs with session_length K > 1: a rotating dealer, docs/rules.md §8 next_dealer)

SESSION_COLUMNS = ["session", "deal_in_session", "dealer", "winner"] + [f"payoff_{k}" for k in range(3)]


def _session_frame(data: str | os.PathLike | pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The columns of a dataset in sessions; a frame without session columns is read as
    independent deals (each deal its own session).

    Adds ``cards``: the cluster of each row for intervals, the session of its cards.  With six
    rows per deal (seating ``all``: each session played under the six seatings) ``session`` is
    then the chain of one session under one seating (``6 * session + seating``), the unit whose
    deals follow one another, while ``cards`` stays the session: its six chains share their
    cards, so intervals cluster them together."""
    optional = ("deal_id", "seating") + tuple(f"policy_{k}" for k in range(3))
    if isinstance(data, pd.DataFrame) and not {"session", "deal_in_session"} <= set(data.columns):
        df = data[[c for c in columns if c not in ("session", "deal_in_session")]
                  + [c for c in optional if c in data.columns and c not in columns]].copy()
        deal = df["deal_id"].to_numpy() if "deal_id" in df.columns else np.arange(len(df), dtype=np.int64)
        df["session"] = deal.astype(np.int64)
        df["deal_in_session"] = np.zeros(len(df), dtype=np.int16)
    else:
        df = _frame(data, columns, optional=optional)
    df["cards"] = df["session"].to_numpy()
    if _deal_groups(df) is not None and "seating" in df.columns:  # six rows per deal
        df["session"] = df["session"].to_numpy() * 6 + df["seating"].to_numpy().astype(np.int64)
    return df


def has_sessions(df: pd.DataFrame) -> bool:
    """True when the frame holds deals in sessions of more than one deal."""
    return "deal_in_session" in df.columns and len(df) > 0 and int(df["deal_in_session"].max()) > 0


def _cluster_mean(x: np.ndarray, groups: np.ndarray, confidence: float,
                  null: float = 0.0) -> tuple[float, float, float, float, float]:
    """Mean of per-deal values ``x`` with deals clustered in sessions ``groups``: (mean, lo,
    hi, t, p) by the ratio estimator's linearised variance over sessions (t with S - 1 degrees
    of freedom, S sessions), testing ``mean == null``.  Deals of one session are dependent (the
    dealer follows from the previous deal), sessions are independent; with one deal per session
    this is the ordinary one-sample t interval and test.

    >>> m, lo, hi, t, p = _cluster_mean(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1, 2, 3]), 0.95)
    >>> r = stats.ttest_1samp([1.0, 2.0, 3.0, 4.0], 0.0)
    >>> round(m, 6), round(t, 6) == round(float(r.statistic), 6), round(p, 6) == round(float(r.pvalue), 6)
    (2.5, True, True)
    """
    confidence = check_confidence(confidence)
    n = x.size
    if n == 0:
        return (np.nan,) * 5
    mean = float(x.mean())
    codes, inverse = np.unique(groups, return_inverse=True)
    s = codes.size
    if s < 2:
        return (mean, np.nan, np.nan, np.nan, np.nan)
    sums = np.bincount(inverse, weights=x, minlength=s)
    counts = np.bincount(inverse, minlength=s).astype(float)
    resid = sums - mean * counts
    se = float(np.sqrt(s / (s - 1) * (resid ** 2).sum()) / n)
    half = float(stats.t.ppf(0.5 + confidence / 2, s - 1)) * se
    if se > 0:
        t = (mean - null) / se
        p = float(2 * stats.t.sf(abs(t), s - 1))
    else:  # no variation: p = 1 when every value is the null itself
        t, p = np.nan, (1.0 if mean == null else np.nan)
    return (mean, mean - half, mean + half, float(t), p)


def _full_sessions(df: pd.DataFrame) -> tuple[int, np.ndarray]:
    """(session length K, mask of the deals in full sessions): a run whose deal count is not a
    multiple of K ends with a cut session, left out of the per-session sums."""
    session = df["session"].to_numpy()
    sizes = pd.Series(session).map(pd.Series(session).value_counts()).to_numpy()
    k = int(df["deal_in_session"].max()) + 1 if len(df) else 1
    return k, sizes == k


def session_seat_results(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per seat (a fixed player across a session): share of deals dealt (against 1/3), win
    rate, and the mean session payoff (sum of the seat's payoffs over a session's deals).

    Shares and rates pool all deals with intervals clustered by session (:func:`_cluster_mean`;
    ``dealt_share_p`` tests share = 1/3); the session payoff is over full sessions (a cut last
    session is left out) with a t interval over sessions.

    >>> df = pd.DataFrame({"session": [0, 0, 1, 1], "deal_in_session": [0, 1, 0, 1], "dealer": [0, 1, 0, 0],
    ...                    "winner": [1, -1, 0, 2], "payoff_0": [-1, 0, 2, -1], "payoff_1": [2, 0, -1, -1],
    ...                    "payoff_2": [-1, 0, -1, 2], "policy_0": "g", "policy_1": "g", "policy_2": "g"})
    >>> r = session_seat_results(df)
    >>> r["dealt"].tolist(), r["dealt_share"].tolist(), r["wins"].tolist(), r["mean_session_payoff"].tolist()
    ([3, 1, 0], [0.75, 0.25, 0.0], [1, 1, 1], [0.0, 0.0, 0.0])
    """
    cols = SESSION_COLUMNS + [f"policy_{k}" for k in range(3)]
    df = _session_frame(data, cols)
    pol = _policy_matrix(df)
    session = df["session"].to_numpy()
    cards = df["cards"].to_numpy()
    dealer = df["dealer"].to_numpy()
    winner = df["winner"].to_numpy()
    k, full = _full_sessions(df)
    full_sessions = session[full]
    full_cards = pd.Series(cards[full]).groupby(full_sessions).first().to_numpy()
    rows = []
    for seat in range(3):
        dealt = (dealer == seat).astype(float)
        won = (winner == seat).astype(float)
        share, share_lo, share_hi, _, share_p = _cluster_mean(dealt, cards, confidence, null=1.0 / 3.0)
        rate, rate_lo, rate_hi, _, _ = _cluster_mean(won, cards, confidence)
        pay = df[f"payoff_{seat}"].to_numpy(dtype=float)
        per_session = pd.Series(pay[full]).groupby(full_sessions).sum().to_numpy(dtype=float)
        mean, lo, hi, _, _ = _cluster_mean(per_session, full_cards, confidence)
        rows.append({
            "seat": seat, "policy": _seat_policy_label(df[f"policy_{seat}"].astype(str).to_numpy()) if len(df) else "",
            "session_length": k, "sessions": int(np.unique(session).size), "full_sessions": int(per_session.size),
            "deals": int(len(df)), "dealt": int(dealt.sum()),
            "dealt_share": share, "dealt_share_lo": share_lo, "dealt_share_hi": share_hi, "dealt_share_p": share_p,
            "wins": int(won.sum()), "win_rate": rate, "win_rate_lo": rate_lo, "win_rate_hi": rate_hi,
            "mean_session_payoff": mean, "mean_session_payoff_lo": lo, "mean_session_payoff_hi": hi,
            "confounded": _seat_confounded(pol, seat) if len(df) else False,
        })
    return pd.DataFrame(rows)


def first_winner_dealing(data: str | os.PathLike | pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """How the winner of a session's first deal keeps the deal: over full sessions whose deal 0
    had a winner, the deals 1 .. K-1 dealt by that seat and its payoff over them, against the
    mean of the two other seats (paired within the session, t interval and test over sessions).

    >>> df = pd.DataFrame({"session": [0, 0, 0], "deal_in_session": [0, 1, 2], "dealer": [0, 2, 2],
    ...                    "winner": [2, 2, 1], "payoff_0": [-1, -1, -1], "payoff_1": [-1, -1, 2],
    ...                    "payoff_2": [2, 2, -1]})
    >>> first_winner_dealing(df)[["measure", "sessions", "first_winner", "other_seat"]].values.tolist()
    [['deals dealt after deal 0', 1, 2.0, 0.0], ['payoff after deal 0', 1, 1.0, -0.5]]
    """
    df = _session_frame(data, SESSION_COLUMNS)
    mixed = _policies_differ(df)
    k, full = _full_sessions(df)
    df = df[full]
    first = df[df["deal_in_session"] == 0].set_index("session")["winner"]
    first = first[first >= 0]
    later = df[(df["deal_in_session"] > 0) & df["session"].isin(first.index)]
    w0 = later["session"].map(first).to_numpy().astype(np.int64)
    dealer = later["dealer"].to_numpy()
    payoff = np.stack([later[f"payoff_{p}"].to_numpy(dtype=float) for p in range(3)], axis=1)
    rows_index = np.arange(len(later))
    sessions = later["session"].to_numpy()
    cards = pd.Series(later["cards"].to_numpy()).groupby(sessions).first().to_numpy()
    out = []
    for measure, mine, total in (
        ("deals dealt after deal 0", (dealer == w0).astype(float), np.ones(len(later))),
        ("payoff after deal 0", payoff[rows_index, w0] if len(later) else np.zeros(0), payoff.sum(axis=1)),
    ):
        a = pd.Series(mine).groupby(sessions).sum().to_numpy(dtype=float)
        b = (pd.Series(total).groupby(sessions).sum().to_numpy(dtype=float) - a) / 2.0
        x = a - b
        if np.unique(cards).size == cards.size:
            mean, lo, hi = t_interval_or_nan(x, confidence)
            test = stats.ttest_1samp(x, 0.0) if x.size > 1 and x.std() > 0 else None
            t, p = (float(test.statistic), float(test.pvalue)) if test is not None else (np.nan, np.nan)
        else:  # seating all: the six chains of a session share its cards
            mean, lo, hi, t, p = _cluster_mean(x, cards, confidence)
        out.append({"measure": measure, "session_length": k, "sessions": int(x.size),
                    "first_winner": float(a.mean()) if a.size else np.nan,
                    "other_seat": float(b.mean()) if b.size else np.nan,
                    "difference": mean, "difference_lo": lo, "difference_hi": hi, "t": t, "p_value": p,
                    "confounded": mixed})
    return pd.DataFrame(out)


def _dealer_edges(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per deal: (dealer won, mean non-dealer won, dealer payoff, mean non-dealer payoff)."""
    dealer = df["dealer"].to_numpy().astype(np.int64)
    winner = df["winner"].to_numpy().astype(np.int64)
    payoff = np.stack([df[f"payoff_{k}"].to_numpy(dtype=float) for k in range(3)], axis=1)
    dealer_won = (winner == dealer).astype(float)
    other_won = ((winner >= 0) & (winner != dealer)).astype(float) / 2.0
    dealer_pay = payoff[np.arange(len(df)), dealer]
    other_pay = (payoff.sum(axis=1) - dealer_pay) / 2.0
    return dealer_won, other_won, dealer_pay, other_pay


def session_dealer_advantage(data: str | os.PathLike | pd.DataFrame, independent: pd.DataFrame | None = None,
                             confidence: float = 0.95) -> pd.DataFrame:
    """Per-deal dealer advantage (dealer minus the mean non-dealer, paired within the deal; win
    rate and payoff) in a run in sessions: over all its deals, over the first deals of the
    sessions (seat 0 deals a fresh deal, as in independent deals) and over the later ones
    (dealt by the previous winner).  Intervals and tests are clustered by session
    (:func:`_cluster_mean`).

    ``independent``: the same deals played independently (a K = 1 run of the same seed, deal
    count, policies and rules, in deal order): adds its value and the paired per-deal change
    sessions − independent (deal N has the same cards in both; only the dealer differs).
    """
    df = _session_frame(data, SESSION_COLUMNS)
    session = df["cards"].to_numpy()  # clusters: a session's deals (and, with seating all, its six chains)
    deals = _deal_groups(df)
    deals = np.arange(len(df)) if deals is None else deals
    confounded = _dealer_confounded(df)
    first = df["deal_in_session"].to_numpy() == 0
    dw, ow, dp, op = _dealer_edges(df)
    measures = [("win rate", dw, ow, None, None), ("mean payoff", dp, op, None, None)]
    if independent is not None:
        ind = independent[["dealer", "winner"] + [f"payoff_{k}" for k in range(3)]]
        if len(ind) != len(df):
            raise ValueError(f"independent run has {len(ind)} deals, the sessions run {len(df)}")
        idw, iow, idp, iop = _dealer_edges(ind)
        measures = [("win rate", dw, ow, idw, iow), ("mean payoff", dp, op, idp, iop)]
    out = []
    for measure, a, b, ia, ib in measures:
        subsets = [("sessions: all deals", np.ones(len(df), dtype=bool)),
                   ("sessions: first deals (seat 0 deals)", first),
                   ("sessions: later deals (dealt by next_dealer)", ~first)]
        for label, mask in subsets:
            mean, lo, hi, t, p = _cluster_mean((a - b)[mask], session[mask], confidence)
            out.append({"measure": measure, "deals": label, "n": int(mask.sum()),
                        "dealer": float(a[mask].mean()) if mask.any() else np.nan,
                        "non_dealer": float(b[mask].mean()) if mask.any() else np.nan,
                        "difference": mean, "difference_lo": lo, "difference_hi": hi, "t": t, "p_value": p,
                        "confounded": confounded})
        if ia is not None:
            mean, lo, hi, t, p = _cluster_mean(ia - ib, deals, confidence)
            out.append({"measure": measure, "deals": "independent deals (same deals, K = 1)", "n": len(df),
                        "dealer": float(ia.mean()), "non_dealer": float(ib.mean()),
                        "difference": mean, "difference_lo": lo, "difference_hi": hi, "t": t, "p_value": p,
                        "confounded": confounded})
            mean, lo, hi, t, p = _cluster_mean((a - b) - (ia - ib), session, confidence)
            out.append({"measure": measure, "deals": "change: sessions − independent (paired per deal)",
                        "n": len(df), "dealer": np.nan, "non_dealer": np.nan,
                        "difference": mean, "difference_lo": lo, "difference_hi": hi, "t": t, "p_value": p,
                        "confounded": confounded})
    return pd.DataFrame(out)
