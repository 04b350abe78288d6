"""Sequential test of a mean on discrete, skewed data: a generalised SPRT on the empirical
likelihood, its operating characteristics by resampling, and an estimate and interval that are
valid under its stopping rule.

The test
--------
:class:`EmpiricalMeanSPRT` tests H0: mu = mu0 against H1: mu = mu1 = mu0 + delta on a stream of
observations (in ``simkit compare``: per-deal payoff differences, which take a few dozen
distinct values and are skewed with heavy tails).  It is the generalised SPRT that fishtest
uses for pentanomial game pairs (fishtest's ``LLRcalc.MLE_expected`` / ``LLR``; theory in Michel
Van den Bergh's note ``support_MLE_multinomial.pdf``, Proposition 1.1, www.cantate.be/Fishtest):
the likelihood of the data is the multinomial likelihood over the distinct values seen, each
hypothesis is represented by the distribution of largest likelihood whose mean is mu0 (resp.
mu1), and the log-likelihood ratio of the two

    llr_n = l(mu1) - l(mu0),    l(s) = max { sum_i log(n q_i) : q on the observed values, sum q = 1, sum q_i x_i = s }

is compared with Wald's (1945) boundaries ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``
after every observation.  By Lagrange duality ``l(s) = -max_lam sum_i log(1 + lam (x_i - s))``:
the maximising distribution is ``q_i = 1 / (n (1 + lam (x_i - s)))``, and ``lam`` is the root of
the one-dimensional secular equation ``sum_i (x_i - s) / (1 + lam (x_i - s)) = 0``, found here by
a bracketed Newton iteration (``-2 l(s)`` is Owen's empirical likelihood ratio statistic).

Outcome values are only those seen so far, so l(s) is -inf when s lies outside their range;
the llr is then +inf (only H1's mean is possible on the values seen) or -inf.  Because the
empirical distribution of a heavy-tailed sample has not yet seen its tails, no decision is taken
before ``min_n`` observations (default :func:`default_burn_in`: 300, or ⌈9 / delta²⌉ when that is
more, 900 at delta = 0.1): early decisions are where a plug-in likelihood ratio makes its wrong
decisions (docs/methods.md has the measurements behind the default).

Estimate after stopping
-----------------------
The sample mean of a stopped sequential test is biased (a test that stops early on a lucky run
stops *because* of it).  :meth:`EmpiricalMeanSPRT.estimate` gives the median-unbiased estimate
and the confidence interval of the stage-wise ordering (Siegmund 1978; Whitehead 1997;
Jennison & Turnbull 2000, ch. 8), computed with the Brownian-motion approximation of the llr
path that fishtest also uses (``sprt.lower_cb``): outcomes are ordered "accepted H1 at the first
look, by value" > "accepted H1, earlier first" > "not decided at the cap, by value" > "accepted
H0, later first" > "accepted H0 at the first look, by value"; p(mu) = P_mu(an outcome at least
as high as the observed one) increases with mu, the estimate solves p(mu) = 1/2 and the interval
p(mu) = (1 -+ confidence) / 2.  The llr path is modelled as a Brownian motion whose drift and
variance per observation are those of the llr increments log(q1(x) / q0(x)) when the
observations follow the observed distribution tilted to mean mu (its distribution of largest
likelihood with that mean: fishtest's ``LLR_drift_variance``); its value at the first look
(``min_n``) is normal, and later looks are continuous between the boundaries widened by
Siegmund's (1985) correction for discrete monitoring (0.5826 standard deviations of one
increment).  The exit probabilities are the method-of-images series.  Where mu0 or mu1 lies
outside the values seen (infinite llr) the linear normal approximation
llr = (mu1 - mu0) / s^2 * (S_n - n (mu0 + mu1) / 2) with the sample variance s^2 is used instead.
On resampled real differences the 95% interval covers 0.959-0.972 (docs/methods.md).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numba
import numpy as np
import pandas as pd
from scipy import special

from simkit.analysis.results import format_level
from simkit.defaults import BURN_IN_INFORMATION, DEFAULT_BURN_IN
from simkit.analysis.stats import wald_boundaries

__all__ = [
    "EmpiricalMeanSPRT",
    "SequentialEstimate",
    "default_burn_in",
    "empirical_log_likelihood",
    "simulate_sprt",
]


# Observations EmpiricalMeanSPRT.update hands to the compiled scan at once.
_SCAN_CHUNK = 1 << 16
# Sequences simulate_sprt holds in memory at once, and observations drawn per sequence per block.
_SIMULATION_SEQUENCES = 4_096
_SIMULATION_BLOCK = 256
# Siegmund's correction for discrete monitoring of a normal random walk: -zeta(1/2)/sqrt(2 pi).
_SIEGMUND_RHO = 0.5825971579390106
# Gauss-Legendre nodes for integrating over the value of the path at the first look.
_FIRST_LOOK_NODES = 32


# ----------------------------------------------------------------------------- the empirical likelihood


@numba.njit(cache=True, nogil=True)
def _dual_maximum(values, counts, s, lam):
    """-l(s) = max over lam of sum_k counts_k log(1 + lam (values_k - s)); returns (maximum, argmax).

    The maximum is +inf when s is not strictly inside the range of the values with a positive
    count (no distribution on them has mean s), and 0 when every value equals s.  The function is
    concave in lam on the interval where every 1 + lam z > 0; a Newton step that would leave the
    current bracket of the root of its derivative is replaced by bisection."""
    z_min = math.inf
    z_max = -math.inf
    for k in range(values.size):
        if counts[k] > 0:
            z = values[k] - s
            if z < z_min:
                z_min = z
            if z > z_max:
                z_max = z
    if z_min == 0.0 and z_max == 0.0:
        return 0.0, 0.0
    if not z_min < 0.0 < z_max:
        return math.inf, 0.0
    low = -1.0 / z_max
    high = -1.0 / z_min
    if not low < lam < high:
        lam = 0.0
    scale = max(z_max, -z_min)
    for _ in range(200):
        slope = 0.0
        curvature = 0.0
        for k in range(values.size):
            c = counts[k]
            if c > 0:
                z = values[k] - s
                inverse = 1.0 / (1.0 + lam * z)
                slope += c * z * inverse
                curvature += c * (z * inverse) ** 2
        if slope > 0.0:
            low = lam
        else:
            high = lam
        proposal = lam + slope / curvature
        if not low < proposal < high:
            proposal = 0.5 * (low + high)
        change = abs(proposal - lam)
        lam = proposal
        if change * scale <= 1e-13:
            break
    maximum = 0.0
    for k in range(values.size):
        c = counts[k]
        if c > 0:
            maximum += c * math.log1p(lam * (values[k] - s))
    return maximum, lam


@numba.njit(cache=True, nogil=True)
def _llr(values, counts, s0, s1, lams):
    """l(s1) - l(s0) for the counts (s0 < s1 or s0 > s1); ``lams`` (2 floats) holds the warm
    starts and is updated.  +-inf when only one mean is possible on the values seen; when
    neither is, +inf if every value lies at or beyond s1, -inf if at or beyond s0, else nan."""
    h0, lams[0] = _dual_maximum(values, counts, s0, lams[0])
    h1, lams[1] = _dual_maximum(values, counts, s1, lams[1])
    if h0 < math.inf and h1 < math.inf:
        return h0 - h1
    if h1 < math.inf:
        return math.inf
    if h0 < math.inf:
        return -math.inf
    low = math.inf
    high = -math.inf
    for k in range(values.size):
        if counts[k] > 0:
            low = min(low, values[k])
            high = max(high, values[k])
    direction = 1.0 if s1 > s0 else -1.0
    if direction * low >= direction * s1 and direction * high >= direction * s1:
        return math.inf
    if direction * low <= direction * s0 and direction * high <= direction * s0:
        return -math.inf
    return math.nan


class Bounds(NamedTuple):
    """The test a scan applies (one kernel argument of :func:`_scan_stream` and
    :func:`_simulate_block`): the means ``s0`` under H0 and ``s1`` under H1, the ``lower`` and
    ``upper`` boundaries of the llr, and the observations ``min_n`` before any decision."""

    s0: float
    s1: float
    lower: float
    upper: float
    min_n: int


def _bounds(test: "EmpiricalMeanSPRT") -> Bounds:
    return Bounds(float(test.mu0), float(test.mu1), float(test.lower_boundary), float(test.upper_boundary),
                  int(test.min_n))


class Sequences(NamedTuple):
    """The state of simulated sequences (one kernel argument of :func:`_simulate_block`), one row
    each: the ``counts`` of each value seen, the observations ``n``, their ``total``, the dual
    variables ``lams`` (rows x 2), the last ``llr`` and the ``decision`` (+1 / -1 / 0)."""

    counts: np.ndarray
    n: np.ndarray
    total: np.ndarray
    lams: np.ndarray
    llr: np.ndarray
    decision: np.ndarray


@numba.njit(cache=True, nogil=True)
def _scan_stream(codes, values, counts, state, lams, bounds, path):
    """Consume ``codes`` (indices into ``values``) in order; state = [n, total].  Writes the llr
    after each observation into ``path``; returns (consumed, decision +1 / -1 / 0) under the
    :class:`Bounds` ``bounds``."""
    s0, s1, lower, upper, min_n = bounds
    for j in range(codes.size):
        code = codes[j]
        counts[code] += 1
        state[0] += 1.0
        state[1] += values[code]
        ratio = _llr(values, counts, s0, s1, lams)
        path[j] = ratio
        if state[0] >= min_n:
            if ratio >= upper:
                return j + 1, 1
            if ratio <= lower:
                return j + 1, -1
    return codes.size, 0


@numba.njit(cache=True, nogil=True)
def _simulate_block(codes, rows, values, seqs, bounds, max_n):
    """Advance the :class:`Sequences` ``rows`` of ``seqs`` by up to ``codes.shape[1]`` observations
    each (at most ``max_n`` in all), under the :class:`Bounds` ``bounds``."""
    counts, n, total, lams, llr, decision = seqs
    s0, s1, lower, upper, min_n = bounds
    for r in range(rows.size):
        row = rows[r]
        for j in range(codes.shape[1]):
            if n[row] >= max_n:
                break
            code = codes[r, j]
            counts[row, code] += 1
            n[row] += 1
            total[row] += values[code]
            ratio = _llr(values, counts[row], s0, s1, lams[row])
            llr[row] = ratio
            if n[row] >= min_n:
                if ratio >= upper:
                    decision[row] = 1
                    break
                if ratio <= lower:
                    decision[row] = -1
                    break


def empirical_log_likelihood(values: np.ndarray | list[float], s: float) -> float:
    """l(s): log of the largest likelihood of a distribution on the observed values with mean
    ``s``, relative to the empirical distribution (<= 0; ``-2 l(s)`` is Owen's empirical
    likelihood ratio statistic; -inf when s lies outside the range of the values).

    >>> round(empirical_log_likelihood([0.0, 1.0, 1.0, 2.0], 1.0), 12)
    0.0
    >>> empirical_log_likelihood([0.0, 1.0], 3.0)
    -inf
    """
    array = np.asarray(values, dtype=float).ravel()
    if array.size < 1 or not np.all(np.isfinite(array)):
        raise ValueError("values must be a non-empty array of finite values")
    support, counts = np.unique(array, return_counts=True)
    return -_dual_maximum(support, counts.astype(np.int64), float(s), 0.0)[0]


# ----------------------------------------------------------------------------- the test


def default_burn_in(delta: float) -> int:
    """Deals before the test of an effect ``delta`` may decide when no burn-in is given:
    max(DEFAULT_BURN_IN, ceil(BURN_IN_INFORMATION / delta**2)) = max(300, ceil(9 / delta**2)).

    A fixed first look comes early in the long test of a small effect, and on heavy-tailed
    differences the streams that have not yet met the rare big deals then accept H0 too often
    (beta 0.077 at nominal 0.05 and 0.131 at 0.10 with delta = 0.1 and a burn-in of 300); a first
    look at n delta**2 = 9 keeps alpha, beta <= 1.1 x nominal there (docs/methods.md, "Small effects").

    >>> default_burn_in(0.2), default_burn_in(0.1), default_burn_in(-0.05)
    (300, 900, 3600)
    """
    delta = float(delta)
    if not math.isfinite(delta) or delta == 0.0:
        raise ValueError(f"delta must be finite and nonzero, got {delta!r}")
    return max(DEFAULT_BURN_IN, math.ceil(round(BURN_IN_INFORMATION / delta**2, 6)))


class EmpiricalMeanSPRT:
    """Generalised SPRT of H0: mu = mu0 against H1: mu = mu0 + delta on the empirical likelihood.

    See the module docstring for the statistic.  ``update`` consumes observations in order,
    checks after every one of them (so the stopping point does not depend on how the stream is
    batched) and stops consuming at the decision; ``used_in_last_update`` tells how many values
    of the last batch were consumed.  No decision is taken before ``min_n`` observations (default
    :func:`default_burn_in` of ``delta``).
    Values are snapped to multiples of ``resolution`` so that float noise does not split one
    outcome into several; each check costs O(number of distinct values).

    Measured (burn-in 100) on resampled greedy - patient per-deal differences (alpha = beta = 0.05, 20,000
    sequences per hypothesis; docs/methods.md): P(accept H1 | mu = 0) and P(accept H0 | mu = delta)
    0.044 / 0.052 for delta = 0.2 and 0.052 / 0.054 for delta = 0.1.

    >>> test = EmpiricalMeanSPRT(delta=0.5, alpha=0.05, beta=0.05)
    >>> test.update(np.tile([0.0, 1.0, 2.0, -1.0, 1.5], 100))
    'accept_h1'
    >>> test.n, test.used_in_last_update == test.n   # decided at its first look: the burn-in
    (300, True)
    """

    def __init__(self, delta: float, alpha: float = 0.05, beta: float = 0.05, mu0: float = 0.0,
                 min_n: int | None = None, resolution: float = 1e-9) -> None:
        self.delta = float(delta)
        if not math.isfinite(self.delta) or self.delta == 0.0:
            raise ValueError(f"delta must be finite and nonzero, got {delta!r}")
        self.mu0 = float(mu0)
        if not math.isfinite(self.mu0):
            raise ValueError(f"mu0 must be finite, got {mu0!r}")
        self.mu1 = self.mu0 + self.delta
        bounds = wald_boundaries(alpha, beta)
        self.lower_boundary, self.upper_boundary = bounds.lower, bounds.upper
        self.alpha, self.beta = float(alpha), float(beta)
        if min_n is None:
            min_n = default_burn_in(self.delta)
        if isinstance(min_n, bool) or not isinstance(min_n, (int, np.integer)) or min_n < 2:
            raise ValueError(f"min_n must be an integer >= 2, got {min_n!r}")
        self.min_n = int(min_n)
        self.resolution = float(resolution)
        if not (math.isfinite(self.resolution) and self.resolution > 0.0):
            raise ValueError(f"resolution must be a positive number, got {resolution!r}")
        self.values = np.zeros(0, dtype=float)  # distinct values seen (sorted)
        self.counts = np.zeros(0, dtype=np.int64)
        self._state = np.zeros(2, dtype=float)  # n, sum
        self._lams = np.zeros(2, dtype=float)
        self._path: list[np.ndarray] = []
        self.llr = 0.0
        self.decision = "continue"
        self.used_in_last_update = 0

    @property
    def n(self) -> int:
        """Number of observations consumed."""
        return int(self._state[0])

    @property
    def mean(self) -> float:
        """Mean of the observations consumed (nan before the first)."""
        return float(self._state[1] / self._state[0]) if self._state[0] else math.nan

    @property
    def variance(self) -> float:
        """Sample variance (ddof=1) of the observations consumed (nan below 2)."""
        if self.n < 2:
            return math.nan
        deviations = self.values - self.mean
        return float(self.counts @ deviations**2) / (self.n - 1)

    @property
    def path(self) -> np.ndarray:
        """The llr after each observation consumed (length ``n``)."""
        return np.concatenate(self._path) if self._path else np.zeros(0)

    def update(self, values: np.ndarray | list[float]) -> str:
        """Consume observations in order until a decision; return the decision."""
        array = np.asarray(values, dtype=float).ravel()
        if not np.all(np.isfinite(array)):
            raise ValueError("values must contain only finite values")
        self.used_in_last_update = 0
        if self.decision != "continue" or array.size == 0:
            return self.decision
        array = np.round(array / self.resolution) * self.resolution
        for start in range(0, array.size, _SCAN_CHUNK):
            chunk = array[start:start + _SCAN_CHUNK]
            support = np.union1d(self.values, chunk)
            if support.size != self.values.size:
                counts = np.zeros(support.size, dtype=np.int64)
                counts[np.searchsorted(support, self.values)] = self.counts
                self.values, self.counts = support, counts
            codes = np.searchsorted(self.values, chunk)
            path = np.empty(chunk.size, dtype=float)
            consumed, decision = _scan_stream(codes, self.values, self.counts, self._state, self._lams,
                                              _bounds(self), path)
            self._path.append(path[:consumed])
            self.llr = float(path[consumed - 1])
            self.used_in_last_update += int(consumed)
            if decision:
                self.decision = "accept_h1" if decision > 0 else "accept_h0"
                break
        return self.decision

    def estimate(self, confidence: float = 0.95) -> SequentialEstimate:
        """Median-unbiased estimate and confidence interval of the mean, valid under the stopping
        rule (stage-wise ordering, see the module docstring).  A test that has not decided is
        treated as truncated at its current number of observations."""
        if self.n < 2:
            raise ValueError("the test needs at least 2 observations for an estimate")
        code = {"accept_h1": 1, "accept_h0": -1}.get(self.decision, 0)
        estimate, lo, hi = _stopped_estimates(np.array([code]), np.array([self.n]), np.array([self.llr]), self.values,
                                              self.counts[None, :], self, confidence)
        return SequentialEstimate(float(estimate[0]), float(lo[0]), float(hi[0]), float(confidence), self.mean,
                                  self.n, self.decision)


# ----------------------------------------------------------------------------- operating characteristics


def simulate_sprt(
    sample: np.ndarray | list[float],
    true_mean: float,
    test: EmpiricalMeanSPRT,
    sequences: int = 5_000,
    seed: int = 0,
    max_n: int = 1_000_000,
    weights: np.ndarray | list[float] | None = None,
    confidence: float | None = None,
) -> pd.DataFrame:
    """Run the design of ``test`` (an :class:`EmpiricalMeanSPRT`: its delta, alpha, beta, mu0 and
    min_n; the observations it holds are not read) on ``sequences`` independent streams
    resampled from ``sample`` shifted to mean ``true_mean`` (with replacement; ``weights`` are
    counts or probabilities of the sample's values, default equal).  Returns one row per
    sequence: ``decision`` (+1 accept H1, -1 accept H0, 0 undecided at ``max_n``), ``n``, the
    stopped sample's ``mean`` and ``sd`` (ddof=1) and the final ``llr``; with ``confidence``,
    also each test's ``estimate``, ``lo`` and ``hi`` under the stopping rule (as
    :meth:`EmpiricalMeanSPRT.estimate`).  Deterministic for a given seed.

    >>> runs = simulate_sprt([-1.0, 0.0, 0.0, 1.0, 3.0], 0.0, EmpiricalMeanSPRT(0.5), sequences=200, seed=1)
    >>> bool((runs["decision"] == 1).mean() < 0.15), int(runs["n"].min()) >= 100
    (True, True)
    """
    array = np.asarray(sample, dtype=float).ravel()
    if array.size < 2 or not np.all(np.isfinite(array)):
        raise ValueError("sample needs at least 2 finite values")
    if weights is None:
        support, counts = np.unique(array, return_counts=True)
        probabilities = counts / counts.sum()
    else:
        weight_array = np.asarray(weights, dtype=float).ravel()
        if weight_array.shape != array.shape or np.any(weight_array < 0) or not weight_array.sum() > 0:
            raise ValueError("weights must be non-negative, one per sample value, with a positive sum")
        support, inverse = np.unique(array, return_inverse=True)
        probabilities = np.bincount(inverse, weights=weight_array) / weight_array.sum()
    support = support - float(probabilities @ support) + float(true_mean)
    if not isinstance(test, EmpiricalMeanSPRT):
        raise TypeError(f"test must be an EmpiricalMeanSPRT (its design is simulated), got {type(test).__name__}")
    if isinstance(sequences, bool) or not isinstance(sequences, (int, np.integer)) or sequences < 1:
        raise ValueError(f"sequences must be a positive integer, got {sequences!r}")
    if isinstance(max_n, bool) or not isinstance(max_n, (int, np.integer)) or max_n < test.min_n:
        raise ValueError(f"max_n must be an integer >= min_n, got {max_n!r}")
    generator = np.random.default_rng(seed)
    cumulative = np.cumsum(probabilities)
    cumulative[-1] = 1.0
    parts = []
    for first in range(0, int(sequences), _SIMULATION_SEQUENCES):
        size = min(_SIMULATION_SEQUENCES, int(sequences) - first)
        counts = np.zeros((size, support.size), dtype=np.int64)
        n = np.zeros(size, dtype=np.int64)
        total = np.zeros(size)
        lams = np.zeros((size, 2))
        llr = np.zeros(size)
        decision = np.zeros(size, dtype=np.int8)
        active = np.arange(size)
        seqs = Sequences(counts, n, total, lams, llr, decision)
        while active.size:
            codes = np.searchsorted(cumulative, generator.random((active.size, _SIMULATION_BLOCK)), side="right")
            _simulate_block(codes, active, support, seqs, _bounds(test), int(max_n))
            active = active[(decision[active] == 0) & (n[active] < max_n)]
        means = total / n
        squares = counts @ support**2
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = np.sqrt(np.maximum(squares - n * means**2, 0.0) / (n - 1))
        part = pd.DataFrame({"decision": decision, "n": n, "mean": means, "sd": sd, "llr": llr})
        if confidence is not None:
            part["estimate"], part["lo"], part["hi"] = _stopped_estimates(decision, n, llr, support, counts, test,
                                                                           confidence)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


# ----------------------------------------------------------------------------- estimate after stopping


@dataclasses.dataclass(frozen=True)
class SequentialEstimate:
    """Estimate of the mean after a sequential test stopped.

    ``estimate`` is median-unbiased and ``lo``/``hi`` the confidence interval under the stopping
    rule; ``naive_mean`` is the plain sample mean, which is biased conditional on stopping."""

    estimate: float
    lo: float
    hi: float
    confidence: float
    naive_mean: float
    n: int
    decision: str

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame of the fields."""
        return pd.DataFrame([dataclasses.asdict(self)])

    def text(self) -> str:
        level = format_level(self.confidence)
        return (f"estimate under the stopping rule {self.estimate:+.4f}, {level} interval [{self.lo:+.4f}, {self.hi:+.4f}] "
                f"(median-unbiased, stage-wise ordering); plain mean {self.naive_mean:+.4f} "
                f"(conditional on stopping, biased)")


def _log_diff_normal_cdf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(Phi(b) - Phi(a)) for a <= b, accurate in both tails."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    flip = a > 0.0
    upper = np.where(flip, -a, b)
    lower = np.where(flip, -b, a)
    log_upper = special.log_ndtr(upper)
    log_lower = special.log_ndtr(lower)
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_upper + np.log1p(-np.exp(np.minimum(log_lower - log_upper, 0.0)))


def _image_count(time: np.ndarray, width: np.ndarray) -> int:
    """Images on each side needed for the series at these times (terms decay like exp(-2 k^2 L^2 / t))."""
    return int(np.clip(np.ceil(np.max(np.sqrt(np.maximum(time, 1e-12)) / width) * 4.5) + 2, 3, 400))


def _exit_upper_by(nu: np.ndarray, up: np.ndarray, down: np.ndarray, time: np.ndarray) -> np.ndarray:
    """P(a Brownian motion with drift ``nu``, unit variance, started at 0, leaves (-down, up) through
    ``up`` by ``time``); arrays broadcast.  Series of images: the density of the exit through the
    upper barrier is sum_k exp(nu u - nu^2 t / 2) c_k / sqrt(2 pi t^3) exp(-c_k^2 / 2t), c_k = up + 2kL."""
    nu, up, down, time = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (nu, up, down, time)))
    width = up + down
    images = _image_count(time, width)
    k = np.arange(-images, images + 1, dtype=float).reshape((-1,) + (1,) * nu.ndim)
    c = up + 2.0 * k * width
    sign = np.sign(c)
    distance = np.abs(c)
    drift = sign * nu
    root = np.sqrt(time)
    weight = -2.0 * k * width * nu  # exp(nu up - nu c) with c = up + 2kL
    log_first = weight + special.log_ndtr((drift * time - distance) / root)
    log_second = weight + 2.0 * drift * distance + special.log_ndtr((-drift * time - distance) / root)
    terms = sign * (np.exp(log_first) + np.exp(log_second))
    return np.clip(terms.sum(axis=0), 0.0, 1.0)


def _alive_above(nu: np.ndarray, up: np.ndarray, down: np.ndarray, time: np.ndarray, level: np.ndarray) -> np.ndarray:
    """P(the motion of :func:`_exit_upper_by` has not left (-down, up) by ``time`` and is >= ``level``)."""
    nu, up, down, time, level = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (nu, up, down, time, level)))
    width = up + down
    images = _image_count(time, width)
    k = np.arange(-images, images + 1, dtype=float).reshape((-1,) + (1,) * nu.ndim)
    root = np.sqrt(time)
    total = np.zeros_like(nu)
    # killed density: sum_k [phi_t(x - 2kL) - phi_t(x - 2 up + 2kL)] exp(nu x - nu^2 t / 2);
    # integral over [level, up] of exp(nu x - nu^2 t/2) phi_t(x - c) = exp(nu c) [Phi((up-c-nu t)/rt) - Phi((level-c-nu t)/rt)]
    for centres, sign in ((2.0 * k * width, 1.0), (2.0 * up - 2.0 * k * width, -1.0)):
        log_mass = _log_diff_normal_cdf((level - centres - nu * time) / root, (up - centres - nu * time) / root)
        total = total + sign * np.exp(nu * centres + log_mass).sum(axis=0)
    return np.clip(total, 0.0, 1.0)


@numba.njit(cache=True, nogil=True)
def _llr_jumps(values, counts, s0, s1, jumps, usable):
    """Per row: the llr increment log(q1(x) / q0(x)) of each value x, where q0 and q1 are the
    distributions on the row's values of largest likelihood with means s0 and s1 (fishtest's
    ``LLRjumps``); ``usable`` is False where s0 or s1 lies outside the row's range."""
    for row in range(counts.shape[0]):
        h0, lam0 = _dual_maximum(values, counts[row], s0, 0.0)
        h1, lam1 = _dual_maximum(values, counts[row], s1, 0.0)
        usable[row] = h0 < math.inf and h1 < math.inf
        if not usable[row]:
            continue
        for k in range(values.size):
            if counts[row, k] > 0:
                jumps[row, k] = math.log1p(lam0 * (values[k] - s0)) - math.log1p(lam1 * (values[k] - s1))


@numba.njit(cache=True, nogil=True)
def _tilted_moments(values, counts, jumps, mu, drift, variance):
    """Per row: mean and variance of the llr increments when the observations follow the row's
    empirical distribution tilted to mean mu[row] (its distribution of largest likelihood with
    that mean, ``MLE_expected``); mu must lie strictly inside the row's range."""
    for row in range(counts.shape[0]):
        _, lam = _dual_maximum(values, counts[row], mu[row], 0.0)
        n = 0.0
        for k in range(values.size):
            n += counts[row, k]
        first = 0.0
        second = 0.0
        for k in range(values.size):
            c = counts[row, k]
            if c > 0:
                weight = c / (n * (1.0 + lam * (values[k] - mu[row])))
                first += weight * jumps[row, k]
                second += weight * jumps[row, k] ** 2
        drift[row] = first
        variance[row] = max(second - first * first, 0.0)


def _stagewise_probability(nu: np.ndarray, first_low: np.ndarray, first_high: np.ndarray, decision: np.ndarray,
                           n: np.ndarray, y_observed: np.ndarray, min_n: int) -> np.ndarray:
    """P(outcome >= the observed one in the stage-wise ordering) for a path Y with drift ``nu`` and
    unit variance per observation that stops when it leaves (first_low, first_high) at or after
    observation ``min_n`` (1-d arrays, one element per stopped test; ``y_observed`` is Y at the
    stop, used for stops at the first look and for undecided tests)."""
    m = float(min_n)
    result = np.empty_like(nu)
    # stopped at (or, undecided, before) the first look: ordered by the value of Y there, Y_n ~ N(nu n, n)
    early = n <= m
    result[early] = special.ndtr((nu[early] * n[early] - y_observed[early]) / np.sqrt(n[early]))
    late = ~early
    if not late.any():
        return result
    nu_l, n_l, y_l, low_l, high_l, d_l = (x[late] for x in (nu, n, y_observed, first_low, first_high, decision))
    centre = nu_l * m
    root_m = math.sqrt(m)
    p_first_up = special.ndtr((centre - high_l) / root_m)
    p_first_down = special.ndtr((low_l - centre) / root_m)
    # continuing past the first look: integrate over Y_m in (low, high), then a Brownian motion
    # between the boundaries widened by Siegmund's correction, for n - m more observations
    # (the quadrature covers the part of (low, high) within 8 standard deviations of Y_m's mean)
    nodes, weights = np.polynomial.legendre.leggauss(_FIRST_LOOK_NODES)
    from_y = np.maximum(low_l, centre - 8.0 * root_m)
    to_y = np.maximum(np.minimum(high_l, centre + 8.0 * root_m), from_y)
    half = 0.5 * (to_y - from_y)[:, None]
    start = 0.5 * (from_y + to_y)[:, None] + half * nodes
    density = weights * half * np.exp(-0.5 * (start - centre[:, None]) ** 2 / m) / math.sqrt(2.0 * math.pi * m)
    up = (high_l + _SIEGMUND_RHO)[:, None] - start
    down = start - (low_l - _SIEGMUND_RHO)[:, None]
    later = (n_l - m)[:, None]
    drift = nu_l[:, None]
    out = np.empty_like(nu_l)
    accepted_h1, accepted_h0, undecided = d_l > 0, d_l < 0, d_l == 0
    if accepted_h1.any():
        k = accepted_h1
        out[k] = p_first_up[k] + (density[k] * _exit_upper_by(drift[k], up[k], down[k], later[k])).sum(axis=1)
    if accepted_h0.any():
        k = accepted_h0
        out[k] = 1.0 - p_first_down[k] - (density[k] * _exit_upper_by(-drift[k], down[k], up[k], later[k])).sum(axis=1)
    if undecided.any():
        k = undecided
        level = np.clip(y_l[k][:, None] - start[k], -down[k], up[k])
        out[k] = (p_first_up[k] + (density[k] * (_exit_upper_by(drift[k], up[k], down[k], later[k])
                                                 + _alive_above(drift[k], up[k], down[k], later[k], level))).sum(axis=1))
    result[late] = out
    return np.clip(result, 0.0, 1.0)


def _increasing_root(function, level: float, low: np.ndarray, high: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
    """Elementwise root of function(x, index) = level for an increasing vectorised function,
    bracketed by [low, high] (Illinois false position; only unconverged elements are evaluated)."""
    a, b = low.astype(float).copy(), high.astype(float).copy()
    fa, fb = function(a, None) - level, function(b, None) - level
    tolerance = np.broadcast_to(tolerance, a.shape)
    result = 0.5 * (a + b)
    side = np.zeros(a.shape, dtype=np.int8)
    todo = np.flatnonzero((b - a) > tolerance)
    for _ in range(100):
        if todo.size == 0:
            break
        ta, tb, tfa, tfb = a[todo], b[todo], fa[todo], fb[todo]
        denominator = tfb - tfa
        with np.errstate(divide="ignore", invalid="ignore"):
            guess = np.where(denominator > 0, ta - tfa * (tb - ta) / denominator, 0.5 * (ta + tb))
        guess = np.where((guess > ta) & (guess < tb), guess, 0.5 * (ta + tb))
        value = function(guess, todo) - level
        right = value >= 0  # the root lies at or below the guess
        previous = side[todo]
        b[todo] = np.where(right, guess, tb)
        fb[todo] = np.where(right, value, tfb)
        a[todo] = np.where(right, ta, guess)
        fa[todo] = np.where(right, tfa, value)
        # Illinois: halve the value kept at the end that survived twice in a row
        fa[todo] = np.where(right & (previous == 1), fa[todo] * 0.5, fa[todo])
        fb[todo] = np.where(~right & (previous == -1), fb[todo] * 0.5, fb[todo])
        side[todo] = np.where(right, 1, -1)
        result[todo] = guess
        done = (b[todo] - a[todo] <= tolerance[todo]) | (np.abs(value) <= 1e-12)
        finished = todo[done]
        result[finished] = np.where(np.abs(value[done]) <= 1e-12, guess[done], 0.5 * (a[finished] + b[finished]))
        todo = todo[~done]
    return result


def _stopped_estimates(decision: np.ndarray, n: np.ndarray, llr: np.ndarray, values: np.ndarray, counts: np.ndarray,
                       test: "EmpiricalMeanSPRT", confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, lo, hi) of the mean for stopped tests of the design of ``test`` (its delta,
    alpha, beta, mu0 and min_n; nothing else of it is read): row i stopped after n[i]
    observations with decision[i] (+1 / -1 / 0 undecided) and final llr[i]; counts[i] counts
    ``values``.

    The llr path is modelled as a Brownian motion on the llr scale whose drift and variance
    under mean mu are those of the llr increments when the observations follow the row's
    empirical distribution tilted to mean mu (the llr-scale model of fishtest's
    ``LLR_drift_variance``).  Where mu0 or mu1 lies outside the row's values, or the llr is
    infinite, the linear normal approximation llr = delta / sd^2 (S_n - n (mu0 + mu1) / 2) is used."""
    delta, alpha, beta, mu0, min_n = test.delta, test.alpha, test.beta, test.mu0, test.min_n
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    bounds = wald_boundaries(alpha, beta)
    lower, upper = bounds.lower, bounds.upper
    # orient so that H1 lies above H0 (the llr and the decisions do not change)
    sign = 1.0 if delta > 0 else -1.0
    if sign < 0:
        values, counts = -values[::-1], counts[:, ::-1]
    values = np.ascontiguousarray(values, dtype=float)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    s0, s1 = sign * mu0, sign * (mu0 + delta)
    midpoint = 0.5 * (s0 + s1)
    decision = np.asarray(decision, dtype=float)
    n = np.asarray(n, dtype=float)
    llr = np.asarray(llr, dtype=float)
    mean = counts @ values / n
    sd = np.sqrt(np.maximum(counts @ values**2 - n * mean**2, 0.0) / np.maximum(n - 1.0, 1.0))
    sd = np.maximum(sd, 1e-12 * max(1.0, abs(delta)))
    present = counts > 0
    smallest = np.where(present, values, np.inf).min(axis=1)
    largest = np.where(present, values, -np.inf).max(axis=1)
    jumps = np.zeros(counts.shape)
    usable = np.zeros(counts.shape[0], dtype=np.bool_)
    _llr_jumps(values, counts, s0, s1, jumps, usable)
    on_llr_scale = usable & np.isfinite(llr)
    span = largest - smallest

    def probability(mu: np.ndarray, index: np.ndarray | None) -> np.ndarray:
        rows = np.arange(n.size) if index is None else index
        scale = on_llr_scale[rows]
        nu = (mu - midpoint) / sd[rows]
        first_low, first_high = lower * sd[rows] / delta * sign, upper * sd[rows] / delta * sign
        y_observed = n[rows] * (mean[rows] - midpoint) / sd[rows]
        if scale.any():
            chosen = rows[scale]
            inside = np.clip(mu[scale], smallest[chosen] + 1e-9 * span[chosen], largest[chosen] - 1e-9 * span[chosen])
            drift, variance = np.empty(chosen.size), np.empty(chosen.size)
            _tilted_moments(values, counts[chosen], jumps[chosen], inside, drift, variance)
            root = np.sqrt(np.maximum(variance, 1e-300))
            nu[scale] = drift / root
            first_low[scale], first_high[scale] = lower / root, upper / root
            y_observed[scale] = llr[chosen] / root
        return _stagewise_probability(nu, first_low, first_high, decision[rows], n[rows], y_observed, min_n)

    tail = 0.5 * (1.0 - confidence)
    # brackets around the mean, widened until p(low) < tail / 2 and p(high) > 1 - tail / 2; on
    # the llr scale they stop at the range of the values, where p reaches 0 and 1
    spread = np.maximum(sd / math.sqrt(float(min_n)), abs(delta))
    floor = np.where(on_llr_scale, smallest + 1e-9 * span, -np.inf)
    ceiling = np.where(on_llr_scale, largest - 1e-9 * span, np.inf)
    low = np.maximum(np.minimum(mean, s0) - 4.0 * spread, floor)
    high = np.minimum(np.maximum(mean, s1) + 4.0 * spread, ceiling)
    for _ in range(60):
        bad_low = (probability(low, None) > 0.5 * tail) & (low > floor)
        bad_high = (probability(high, None) < 1.0 - 0.5 * tail) & (high < ceiling)
        if not (bad_low.any() or bad_high.any()):
            break
        low = np.where(bad_low, np.maximum(low - 2.0 * spread, floor), low)
        high = np.where(bad_high, np.minimum(high + 2.0 * spread, ceiling), high)
        spread = np.where(bad_low | bad_high, 2.0 * spread, spread)
    tolerance = 1e-6 * np.maximum(sd, abs(delta))
    estimate, first, second = (sign * _increasing_root(probability, level, low, high, tolerance)
                               for level in (0.5, tail, 1.0 - tail))
    return estimate, np.minimum(first, second), np.maximum(first, second)
