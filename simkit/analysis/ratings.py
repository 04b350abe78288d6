"""Ratings of policies from their pairwise duplicate comparisons.

* :func:`payoff_ratings` — additive ratings in 牌 per seat per deal, fitted by weighted least
  squares to the pairings' mean differences (what a tournament ranks by);
* :func:`davidson` — Bradley–Terry with ties (Davidson 1970) on the per-deal outcome, Elo scale;
* :func:`bradley_terry` — the plain model with a tie counted as half a win to each side
  (described below; kept for comparison).

All three have bootstraps that resample the deals jointly across pairings that played the same
deals.  The rest of this docstring is about :func:`bradley_terry`.

A tournament (:mod:`simkit.studies.tournament`) plays every pair of policies on the same
duplicate deals.  For pairing (i, j) and deal d the outcome is the sign of the deal's duplicate
difference (i's mean payoff per seat minus j's, averaged over the six seatings): a win for i
(1), a draw (½: the difference is exactly 0, e.g. no one wins the deal in any seating) or a loss
(0).  The Bradley–Terry model (Bradley & Terry 1952) gives

    P(i beats j) = γ_i / (γ_i + γ_j),    rating R_i = 400 · log10(γ_i)

(the Elo scale: 400 points = odds of 10 to 1), with a draw counted as half a win for each side
as Elo does.  γ is the maximum-likelihood estimate, computed by the MM algorithm of Hunter
(2004, "MM algorithms for generalized Bradley–Terry models", Ann. Statist. 32:384–406).
Ratings are differences only: they are anchored by subtracting the anchor's rating (``random``
when it plays, else the first policy), so the anchor reads 0.

A policy that wins every deal it plays has an infinite MLE; as BayesElo does, every pairing
gets ``prior_draws`` virtual draws (default 1, i.e. half a point each), which keeps every
rating finite and moves well-measured ratings by a negligible amount.

Why per-deal outcomes, not payoffs: the rating then answers "how often does i come out ahead
of j on the same cards", a scale on which policies of different styles (a cautious one that
wins small, a bold one that wins big) compare; the payoff sizes are in the crosstable
(:func:`simkit.studies.tournament.crosstable`).  Intervals: percentile bootstrap over deals
(Efron & Tibshirani 1993), the deals resampled *jointly* across pairings when all pairings
played the same deals (the usual case), so that the correlation the shared cards induce is
kept; each pairing on its own otherwise (pairings stopped early by a sequential test).

Two policies, 9 points of 10 to the first: odds 9 to 1, 400 · log10(9) = 381.7 points apart.

>>> r = bradley_terry(np.array([[0.0, 9.0], [1.0, 0.0]]), prior_draws=0.0)
>>> round(float(r[0] - r[1]), 1)
381.7
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

__all__ = ["ELO_SCALE", "AdditiveFit", "additive_fit", "holm_adjusted", "pairwise_tests", "bootstrap_davidson", "bootstrap_payoff_ratings", "bootstrap_ratings", "bradley_terry",
           "davidson", "deal_outcomes", "outcome_counts", "payoff_ratings", "points_matrix"]

ELO_SCALE = 400.0  # rating points per factor 10 in the odds


def deal_outcomes(differences: np.ndarray) -> np.ndarray:
    """Per-deal outcome of a pairing from its duplicate differences (row policy minus column
    policy): 1 win, 0.5 draw (exactly 0), 0 loss.

    >>> deal_outcomes(np.array([0.5, 0.0, -2.0]))
    array([1. , 0.5, 0. ])
    """
    d = np.asarray(differences, dtype=float)
    if np.isnan(d).any():
        raise ValueError("deal_outcomes: the differences hold NaN")
    return np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5))


def points_matrix(n_policies: int, outcomes: dict[tuple[int, int], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(points, games): points[i, j] = points of i against j (wins + draws / 2), games[i, j] =
    deals the pair played; ``outcomes[(i, j)]`` (i < j) are i's per-deal outcomes against j."""
    points = np.zeros((n_policies, n_policies))
    games = np.zeros((n_policies, n_policies))
    for (i, j), o in outcomes.items():
        if not 0 <= i < j < n_policies:
            raise ValueError(f"points_matrix: pairing {(i, j)} is not (i, j) with 0 <= i < j < {n_policies}")
        o = np.asarray(o, dtype=float)
        points[i, j] += o.sum()
        points[j, i] += o.size - o.sum()
        games[i, j] += o.size
        games[j, i] += o.size
    return points, games


def bradley_terry(points: np.ndarray, prior_draws: float = 1.0, tol: float = 1e-10,
                  max_iter: int = 100_000) -> np.ndarray:
    """Bradley–Terry maximum-likelihood ratings (Elo scale, mean 0) from a points matrix.

    ``points[i, j]``: points i scored against j (a draw is half a point to each); ``prior_draws``
    virtual draws are added to every pair that played.  Raises ``ValueError`` when the pairs
    that played do not connect all policies (their ratings would not be comparable)."""
    w = np.array(points, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        raise ValueError(f"bradley_terry: points must be a square matrix of 2 or more policies, got shape {w.shape}")
    if (w < 0).any() or not np.isfinite(w).all():
        raise ValueError("bradley_terry: points must be finite and >= 0")
    if prior_draws < 0:
        raise ValueError(f"bradley_terry: prior_draws must be >= 0, got {prior_draws}")
    k = w.shape[0]
    np.fill_diagonal(w, 0.0)
    games = w + w.T
    played = games > 0
    w = w + 0.5 * prior_draws * played
    games = w + w.T
    _check_connected(played)
    wins = w.sum(axis=1)
    if (wins <= 0).any():
        raise ValueError("bradley_terry: a policy scored no point at all (use prior_draws > 0)")
    gamma = np.ones(k)
    for _ in range(max_iter):
        denominator = (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = wins / denominator
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(gamma))) < tol:
            gamma = new
            break
        gamma = new
    rating = ELO_SCALE * np.log10(gamma)
    return rating - rating.mean()


def _check_connected(played: np.ndarray) -> None:
    k = played.shape[0]
    seen = {0}
    frontier = [0]
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(played[i]):
            if int(j) not in seen:
                seen.add(int(j))
                frontier.append(int(j))
    if len(seen) != k:
        raise ValueError("bradley_terry: the pairings played do not connect every policy")


def _joint_resamples(arrays: dict, resamples: int, seed: int):
    """Deal-resampled copies of the pairings' per-deal arrays: all pairings of the same length
    with the same deal indices (they played the same deals, so the correlation the shared cards
    induce is kept); pairings of other lengths each with their own."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng(seed)
    lengths = {a.size for a in arrays.values()}
    joint_length = lengths.pop() if len(lengths) == 1 else None
    for _ in range(resamples):
        shared = rng.integers(0, joint_length, joint_length) if joint_length is not None else None
        yield {p: a[shared if shared is not None else rng.integers(0, a.size, a.size)] for p, a in arrays.items()}


def bootstrap_ratings(n_policies: int, outcomes: dict[tuple[int, int], np.ndarray], resamples: int = 2_000,
                      seed: int = 0, prior_draws: float = 1.0) -> np.ndarray:
    """(resamples, n_policies) Bradley–Terry ratings (mean 0) of deal-resampled outcomes
    (jointly over the pairings that played the same deals, :func:`_joint_resamples`)."""
    arrays = {p: np.asarray(outcomes[p], dtype=float) for p in sorted(outcomes)}
    out = np.empty((resamples, n_policies))
    for b, drawn in enumerate(_joint_resamples(arrays, resamples, seed)):
        points, _ = points_matrix(n_policies, drawn)
        out[b] = bradley_terry(points, prior_draws=prior_draws, tol=1e-8)
    return out


# ---- ratings on the payoff scale: additive, fitted to the pairings' mean differences


def _pair_means(differences: dict[tuple[int, int], np.ndarray]) -> tuple[list, np.ndarray, np.ndarray]:
    pairs = sorted(differences)
    means = np.array([float(np.mean(differences[p])) for p in pairs])
    variances = np.array([float(np.var(differences[p], ddof=1)) / np.size(differences[p]) for p in pairs])
    return pairs, means, variances


def payoff_ratings(n_policies: int, differences: dict[tuple[int, int], np.ndarray],
                   weights: np.ndarray | None = None) -> np.ndarray:
    """Additive ratings in 牌 per seat per deal (mean 0): the r minimising
    ``Σ_pairs w_ij (mean d_ij - (r_i - r_j))²`` (weighted least squares), ``d_ij`` the per-deal
    duplicate differences of i minus j (``differences[(i, j)]``).  Default weights: the inverse
    variances of the pairings' means (a pairing measured more precisely counts more; a zero
    variance counts as the smallest positive one).  With every pair played and the differences
    additive, ``r_i - r_j`` is the pairing's own mean.

    >>> d = {(0, 1): np.array([1.0, 1.2, 0.8]), (0, 2): np.array([2.0, 2.1, 1.9]), (1, 2): np.array([1.0, 0.9, 1.1])}
    >>> [round(float(x), 3) + 0.0 for x in payoff_ratings(3, d)]
    [1.0, 0.0, -1.0]
    """
    pairs, means, variances = _pair_means(differences)
    if weights is None:
        positive = variances[variances > 0]
        floor = positive.min() if positive.size else 1.0
        weights = 1.0 / np.maximum(variances, floor)
    played = np.zeros((n_policies, n_policies), dtype=bool)
    design = np.zeros((len(pairs), n_policies))
    for row, (i, j) in enumerate(pairs):
        design[row, i], design[row, j] = 1.0, -1.0
        played[i, j] = played[j, i] = True
    _check_connected(played)
    root = np.sqrt(np.asarray(weights, dtype=float))
    solution, *_ = np.linalg.lstsq(design * root[:, None], means * root, rcond=None)
    return solution - solution.mean()


def bootstrap_payoff_ratings(n_policies: int, differences: dict[tuple[int, int], np.ndarray],
                             resamples: int = 2_000, seed: int = 0) -> np.ndarray:
    """(resamples, n_policies) payoff ratings (mean 0) of deal-resampled differences, jointly
    over the pairings that played the same deals; the weights stay those of the full data (the
    estimator is then one fixed linear function of the pairings' means)."""
    arrays = {p: np.asarray(differences[p], dtype=float) for p in sorted(differences)}
    _, _, variances = _pair_means(arrays)
    positive = variances[variances > 0]
    weights = 1.0 / np.maximum(variances, positive.min() if positive.size else 1.0)
    out = np.empty((resamples, n_policies))
    for b, drawn in enumerate(_joint_resamples(arrays, resamples, seed)):
        out[b] = payoff_ratings(n_policies, drawn, weights)
    return out


# ---- Bradley–Terry with ties: Davidson (1970)


def outcome_counts(n_policies: int, differences: dict[tuple[int, int], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(wins, ties): wins[i, j] = deals on which i's duplicate difference against j is above 0,
    ties[i, j] = ties[j, i] = deals on which it is exactly 0."""
    wins = np.zeros((n_policies, n_policies))
    ties = np.zeros((n_policies, n_policies))
    for (i, j), d in differences.items():
        d = np.asarray(d, dtype=float)
        wins[i, j] += float(np.sum(d > 0))
        wins[j, i] += float(np.sum(d < 0))
        ties[i, j] += float(np.sum(d == 0))
        ties[j, i] = ties[i, j]
    return wins, ties


def davidson(wins: np.ndarray, ties: np.ndarray, prior_ties: float = 1.0) -> tuple[np.ndarray, float]:
    """Davidson's (1970) Bradley–Terry model with ties: maximum-likelihood ratings (Elo scale,
    mean 0) and the tie parameter ν, where for a pairing of i and j

        P(i ahead) = γ_i / D,  P(tie) = ν √(γ_i γ_j) / D,  D = γ_i + γ_j + ν √(γ_i γ_j).

    A tie is its own outcome, not half a win each (which is what Elo's convention assumes and
    what anchors a policy that is never ahead, such as ``random``, on its ties alone).
    ``prior_ties`` virtual ties are added to every pairing that played (as BayesElo's virtual
    draws), which keeps the ratings finite when a policy is never ahead and never level.

    >>> wins = np.array([[0.0, 60.0], [20.0, 0.0]]); ties = np.array([[0.0, 20.0], [20.0, 0.0]])
    >>> ratings, nu = davidson(wins, ties, prior_ties=0.0)
    >>> round(float(ratings[0] - ratings[1]), 1), round(nu, 3)
    (190.8, 0.577)
    """
    from scipy.optimize import minimize

    wins = np.asarray(wins, dtype=float)
    k = wins.shape[0]
    played = (wins + wins.T + ties) > 0
    np.fill_diagonal(played, False)
    _check_connected(played)
    upper = np.triu(played, 1)
    i_index, j_index = np.nonzero(upper)
    w_ij = wins[i_index, j_index]
    w_ji = wins[j_index, i_index]
    t_ij = ties[i_index, j_index] + prior_ties
    n_ij = w_ij + w_ji + t_ij

    def negative_log_likelihood(theta: np.ndarray) -> float:
        log_gamma = np.concatenate([[0.0], theta[: k - 1]])
        log_nu = theta[k - 1]
        gi, gj = log_gamma[i_index], log_gamma[j_index]
        half = 0.5 * (gi + gj)
        log_d = np.logaddexp(np.logaddexp(gi, gj), log_nu + half)
        return -float(np.sum(w_ij * gi + w_ji * gj + t_ij * (log_nu + half) - n_ij * log_d))

    fit = minimize(negative_log_likelihood, np.zeros(k), method="BFGS", options={"gtol": 1e-9})
    log_gamma = np.concatenate([[0.0], fit.x[: k - 1]])
    rating = ELO_SCALE * log_gamma / np.log(10.0)
    return rating - rating.mean(), float(np.exp(fit.x[k - 1]))


DAVIDSON_TASK_FITS = 100  # bootstrap fits per Dask task (the draws do not depend on it)


def bootstrap_davidson(n_policies: int, differences: dict[tuple[int, int], np.ndarray], resamples: int = 2_000,
                       seed: int = 0, prior_ties: float = 1.0, run_in_order=None) -> np.ndarray:
    """(resamples, n_policies) Davidson ratings (mean 0) of deal-resampled differences (jointly).

    With ``run_in_order(function, config, pieces)`` (an iterable of ``function(config, piece)``
    in the pieces' order: a Dask cluster's, :func:`simkit.runner.simulate.run_dask_in_order`,
    which the statistics layer does not import) the resamples are drawn (and counted) here, in
    the same order, and their fits run in pieces of :data:`DAVIDSON_TASK_FITS`: each fit is a
    pure function of its counts, so the draws are the same bytes."""
    arrays = {p: np.asarray(differences[p], dtype=float) for p in sorted(differences)}
    out = np.empty((resamples, n_policies))
    if run_in_order is None:
        for b, drawn in enumerate(_joint_resamples(arrays, resamples, seed)):
            out[b] = davidson(*outcome_counts(n_policies, drawn), prior_ties=prior_ties)[0]
        return out
    counts = [outcome_counts(n_policies, drawn) for drawn in _joint_resamples(arrays, resamples, seed)]
    pieces = [counts[lo : lo + DAVIDSON_TASK_FITS] for lo in range(0, resamples, DAVIDSON_TASK_FITS)]
    for lo, fits in zip(range(0, resamples, DAVIDSON_TASK_FITS),
                        run_in_order(_davidson_fits, float(prior_ties), pieces)):
        out[lo : lo + len(fits)] = fits
    return out


def _davidson_fits(prior_ties: float, task: tuple[int, list], threads: int | None = None) -> tuple[int, np.ndarray]:
    """The Davidson ratings of each (wins, ties) of a piece of a bootstrap, as
    :func:`~simkit.runner.simulate.run_dask` runs it, tagged with its number."""
    number, counts = task
    return number, np.array([davidson(wins, ties, prior_ties=prior_ties)[0] for wins, ties in counts])


# ---- what the ratings and the pairings say together: the fit of the additive model, and
# pairwise tests with a family-wise error rate


@dataclasses.dataclass(frozen=True)
class AdditiveFit:
    """Goodness of fit of an additive model ``mean d_ij = r_i - r_j`` to the pairings: the Wald
    statistic ``chi2`` of the pairings' cycle contrasts (the combinations of the pairings' means
    that every additive model makes 0, such as ``d_01 - d_02 + d_12``), with the covariance of
    the pairings' means estimated from their per-deal differences over the deals they share (the
    pairings play the same cards, so their means are correlated), on ``df`` = pairs - (k - 1)
    degrees of freedom (fewer where a contrast is exactly 0 on every deal: two policies that
    play alike).  It equals the generalised least-squares residual ``min_r (m - X r)' V⁻¹ (m - X r)``,
    whatever weights the ladder's ratings use.  ``reference``: ``F`` when every pairing played
    the same deals (``chi2`` is then Hotelling's T² of the per-deal contrasts and
    ``(n - df) T² / (df (n - 1))`` is F(df, n - df), exact for normal differences), else
    ``chi2`` (χ²(df), asymptotic).  A small ``p_value`` says the pairings are not additive (a
    policy does better against some opponents than its rating says), so the direct pairings,
    not the ladder's gaps, are what to read."""

    chi2: float
    df: int
    p_value: float
    reference: str = "chi2"
    deals: int = 0  # deals every pairing played (the F reference's n); 0 when they differ

    @property
    def fits(self) -> bool:
        return not self.p_value < 0.05


def _mean_covariance(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Covariance of the pairings' means: for pairings a and b of n_a and n_b deals sharing
    their first c = min(n_a, n_b) deals (deal indices 0 .. n - 1 of one seed in every pairing),
    ``c · s_ab / (n_a n_b)``, s_ab the sample covariance of their per-deal differences over the
    shared deals (for a = b the variance of the mean)."""
    count = len(arrays)
    out = np.zeros((count, count))
    for a in range(count):
        for b in range(a, count):
            x, y = arrays[a], arrays[b]
            shared = min(x.size, y.size)
            if shared < 2:
                continue
            xs, ys = x[:shared], y[:shared]
            s_ab = float(np.dot(xs - xs.mean(), ys - ys.mean())) / (shared - 1)
            out[a, b] = out[b, a] = shared * s_ab / (x.size * y.size)
    return out


def additive_fit(n_policies: int, differences: dict[tuple[int, int], np.ndarray]) -> AdditiveFit:
    """:class:`AdditiveFit` of the pairings' per-deal differences ``differences[(i, j)]`` (i
    minus j; row r of every pairing is the same deal).

    Three policies whose per-deal differences are additive up to noise fit:

    >>> g = np.random.default_rng(1); e = g.normal(size=(200, 3))
    >>> d = {(0, 1): 0.3 + e[:, 0] - e[:, 1] + g.normal(size=200), (0, 2): 0.5 + e[:, 0] - e[:, 2] + g.normal(size=200),
    ...      (1, 2): 0.2 + e[:, 1] - e[:, 2] + g.normal(size=200)}
    >>> fit = additive_fit(3, d)
    >>> fit.df, fit.reference, fit.deals, fit.fits
    (1, 'F', 200, True)
    """
    pairs = sorted(differences)
    arrays = [np.asarray(differences[p], dtype=float) for p in pairs]
    for p, a in zip(pairs, arrays):
        if a.ndim != 1 or a.size < 2 or not np.isfinite(a).all():
            raise ValueError(f"additive_fit: pairing {p} needs 2 or more finite per-deal differences")
    design = np.zeros((len(pairs), n_policies))
    for row, (i, j) in enumerate(pairs):
        if not 0 <= i < j < n_policies:
            raise ValueError(f"additive_fit: pairing {(i, j)} is not (i, j) with 0 <= i < j < {n_policies}")
        design[row, i], design[row, j] = 1.0, -1.0
    _check_connected(np.abs(design.T @ design) > 0)
    lengths = {a.size for a in arrays}
    return _additive_fit(design, np.array([a.mean() for a in arrays]), _mean_covariance(arrays),
                         lengths.pop() if len(lengths) == 1 else 0)


def _additive_fit(design: np.ndarray, means: np.ndarray, covariance: np.ndarray, n: int) -> AdditiveFit:
    """The fit of means with the given covariance; ``n``: the deals every pairing played (0 when
    they differ)."""
    from scipy.linalg import null_space

    contrasts = null_space(design.T).T  # (q, pairs), orthonormal, contrasts @ design = 0
    q = contrasts.shape[0]
    if q == 0:
        return AdditiveFit(0.0, 0, math.nan)
    values = contrasts @ means
    eigenvalues, vectors = np.linalg.eigh(contrasts @ covariance @ contrasts.T)
    scale = max(1.0, float(np.abs(means).max()))
    # a contrast's variance counts above 1e-10 of the largest one and above rounding: a table
    # with no variance at all (constant pairings) has variances of 1e-34 from the mean's rounding
    kept = eigenvalues > max(1e-10 * float(eigenvalues.max()), (1e-12 * scale) ** 2)
    projected = vectors.T @ values
    if np.any(np.abs(projected[~kept]) > 1e-9 * scale):  # a contrast with no variance that is not 0
        return AdditiveFit(math.inf, q, 0.0)
    df = int(kept.sum())
    if df == 0:  # every contrast exactly 0 on every deal
        return AdditiveFit(0.0, 0, math.nan)
    chi2 = float(np.sum(projected[kept] ** 2 / eigenvalues[kept]))
    if n > df:
        p_value = float(stats.f.sf((n - df) * chi2 / (df * (n - 1)), df, n - df))
        return AdditiveFit(chi2, df, p_value, "F", n)
    return AdditiveFit(chi2, df, float(stats.chi2.sf(chi2, df)), "chi2", 0)


def holm_adjusted(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate; Holm 1979): the i-th smallest
    p times (m - i + 1), made monotone and capped at 1.

    >>> holm_adjusted([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


def pairwise_tests(differences: dict[tuple[int, int], np.ndarray], confidence: float = 0.95) -> list[dict]:
    """For each pairing (i, j): the mean of the per-deal differences i - j, its marginal t
    interval at ``confidence``, its simultaneous interval (Bonferroni: every pairing's at
    1 - (1 - confidence) / m, so all m cover together with probability >= ``confidence``), the
    t test's p-value and Holm's adjusted p-value."""
    pairs = sorted(differences)
    m = len(pairs)
    rows = []
    for i, j in pairs:
        d = np.asarray(differences[(i, j)], dtype=float)
        n = d.size
        mean = float(d.mean())
        se = float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        marginal = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * se
        joint = float(stats.t.ppf(1 - (1 - confidence) / (2 * m), n - 1)) * se
        p = float(2 * stats.t.sf(abs(mean) / se, n - 1)) if se > 0 else (1.0 if mean == 0 else 0.0)
        rows.append({"pair": (i, j), "estimate": mean, "lo": mean - marginal, "hi": mean + marginal,
                     "simultaneous_lo": mean - joint, "simultaneous_hi": mean + joint, "p_value": p, "deals": n})
    for row, adjusted in zip(rows, holm_adjusted([r["p_value"] for r in rows])):
        row["p_holm"] = float(adjusted)
    return rows
