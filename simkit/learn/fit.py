"""Fitting simkit's networks with scikit-learn (the optional extra ``simkit[learn]``), and
reading the fit of ``learned``'s: the offline gain of the policy it makes, per decision, at
each margin.

The networks, ``learned``'s value network (``simkit train``) and the luck adjustment's value
model (``simkit luck-model``, :mod:`simkit.learn.value`), are
:class:`sklearn.neural_network.MLPRegressor` (ReLU, Adam, squared error, L2 penalty
``alpha``), fitted by :func:`fit_mlp`: the gradients are scikit-learn's, none is written here.
Their weights are exported by :func:`sklearn_network` to a network block
(:func:`simkit.policies.network.pack_network`), which the numba forward pass evaluates;
``tests/test_learned.py`` and ``tests/test_luck.py`` check it against ``MLPRegressor.predict``
on random inputs.

Determinism: for a given ``random_state``, data and thread count the fit is bit-for-bit the
same; scikit-learn's matrix products run in the BLAS, whose results may differ in the last
bits with another number of BLAS threads or another machine (``simkit train`` pins the BLAS
to one thread while fitting, so a run on any machine with the same libraries reproduces it).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor
from threadpoolctl import threadpool_limits

from simkit.errors import SimkitError
from simkit.policies.learned import FEATURE_SCALE, N_FEATURES
from simkit.policies.model import learned_block
from simkit.policies.network import pack_network

LIBRARY = f"scikit-learn {sklearn.__version__}"


@dataclasses.dataclass(frozen=True)
class FitSettings:
    """The network and its fit: hidden widths, epochs, L2 penalty, minibatch, step size."""

    hidden: tuple[int, int] = (64, 16)
    epochs: int = 3
    alpha: float = 1e-2
    batch_size: int = 1024
    learning_rate: float = 1e-3


def scaled(x: np.ndarray) -> np.ndarray:
    """Raw features (``uint8`` / ``int64`` rows) as the network sees them: ``x × FEATURE_SCALE``."""
    return np.asarray(x, dtype=np.float32) * FEATURE_SCALE.astype(np.float32)


def fit_network(x: np.ndarray, y: np.ndarray, settings: FitSettings, random_state: int) -> MLPRegressor:
    """``learned``'s network fitted to raw features ``x`` (scaled, :func:`scaled`) and targets
    ``y``: :func:`fit_mlp`."""
    return fit_mlp(scaled(x), y, settings, random_state)


def fit_mlp(inputs: np.ndarray, y: np.ndarray, settings: FitSettings, random_state: int) -> MLPRegressor:
    """A network fitted to ``inputs`` (as the network sees them: scaled or standardised) and
    targets ``y`` for exactly ``settings.epochs`` epochs (no early stop), on one BLAS thread."""
    network = MLPRegressor(hidden_layer_sizes=tuple(settings.hidden), activation="relu", solver="adam",
                           alpha=settings.alpha, batch_size=settings.batch_size,
                           learning_rate_init=settings.learning_rate, max_iter=settings.epochs, tol=0.0,
                           n_iter_no_change=settings.epochs + 1, shuffle=True, random_state=random_state)
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        network.fit(inputs, np.asarray(y, dtype=np.float32))
    return network


def r_squared(network: MLPRegressor, inputs: np.ndarray, y: np.ndarray) -> float:
    """The fit's R² on ``inputs`` and ``y`` (one BLAS thread)."""
    with threadpool_limits(limits=1):
        return float(network.score(inputs, y))


def predict(network: MLPRegressor, x: np.ndarray) -> np.ndarray:
    with threadpool_limits(limits=1):
        return network.predict(scaled(x)).astype(np.float64)


def sklearn_network(network: MLPRegressor, mean: np.ndarray | None = None, scale: np.ndarray | None = None,
                    fold: np.ndarray | None = None) -> np.ndarray:
    """The network block (:func:`simkit.policies.network.pack_network`) of a fitted
    ``MLPRegressor``: fitted on ``(x - mean) / scale`` (standardised inputs) or on ``x × fold``
    (a factor per input, multiplied into the first layer: the block then reads raw inputs)."""
    weights = [np.asarray(w, dtype=np.float64) for w in network.coefs_]
    if fold is not None:
        weights[0] = weights[0] * fold[:, None]
    return pack_network(weights, list(network.intercepts_), mean, scale)


def network_block(network: MLPRegressor, expert_weights: np.ndarray, margin: float) -> np.ndarray:
    """The ``learned`` model block of a fitted network (two hidden layers over the scaled
    features, :func:`scaled`: the scale is folded into the first layer)."""
    if len(network.coefs_) != 3 or network.coefs_[0].shape[0] != N_FEATURES:
        raise SimkitError(f"a learned model's network takes {N_FEATURES} features into two hidden layers, this one "
                          f"takes {network.coefs_[0].shape[0]} into {len(network.coefs_) - 1}")
    return learned_block(sklearn_network(network, fold=FEATURE_SCALE), margin, expert_weights)


def decision_bounds(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row, end row) of each decision: runs of equal ``key`` (the rows of a decision
    are consecutive, the base choice first)."""
    key = np.asarray(key)
    if key.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    return starts, np.r_[starts[1:], key.size]


def offline_gains(prediction: np.ndarray, advantage: np.ndarray, key: np.ndarray,
                  margins: tuple[float, ...]) -> dict[float, tuple[float, float, float]]:
    """Per margin m: (mean, standard error, share of decisions changed) of the advantage the
    policy "the rolled-out candidate of largest prediction, unless it beats the base choice's
    prediction by at most m" takes, over the decisions of ``key``.  The base choice is each
    decision's first row (advantage 0), so this estimates the policy's gain over the base
    policy per decision, from rollouts it was not fitted to."""
    starts, ends = decision_bounds(key)
    out = {}
    for margin in margins:
        gains = np.zeros(starts.size)
        changed = 0
        for i, (s, e) in enumerate(zip(starts, ends)):
            k = int(np.argmax(prediction[s:e]))
            if k != 0 and prediction[s + k] - prediction[s] > margin:
                gains[i] = advantage[s + k]
                changed += 1
        n = max(starts.size, 1)
        se = float(gains.std(ddof=1) / np.sqrt(n)) if starts.size > 1 else float("nan")
        out[float(margin)] = (float(gains.mean()) if starts.size else float("nan"), se, changed / n)
    return out
