"""Training the value model of the luck adjustment (``simkit luck-model``).

The model is a network of the features of a seat in the state just after a draw
(:func:`simkit.runner.luck.value_features`) fitted to that seat's final payoff, over duplicate
deals (all six seatings) of the given policy pairs.  scikit-learn's ``MLPRegressor`` fits it
(one hidden ReLU layer, standardised features, squared error; no gradient is written here),
on the deals of a training seed that the evaluations it adjusts must not use
(:func:`simkit.runner.value_model.check_evaluation_seed`).

The corrections' weight (``VB_WEIGHT``) is then chosen on *other* deals of the same seed
(deals ``deals .. deals + check_deals - 1``): the least-squares weight of the per-deal duplicate
luck against the duplicate payoff difference, pooled over the pairs, clipped to [0, 1].
A weight is a control-variate coefficient: any fixed value keeps the adjustment unbiased, the
fitted one takes away the most variance that the network's corrections can.

Determinism: the deals are a pure function of the seed; the fit is scikit-learn's with
``random_state`` = the seed, on one BLAS thread (as ``simkit train``'s, :mod:`simkit.learn.fit`).

What goes where (issue 36): the model file is a function of the settings, seed and software
only (the same bytes and SHA-256 in any folder, at any time): its ``training`` metadata name
each policy of a pair by its text, a ``learned:PATH`` policy by its model's SHA-256 instead of
the path (:func:`policy_identity`).  Where, when and how it ran goes to the run record beside
it, ``FILE.npz.run.json`` (:func:`simkit.runner.value_model.run_record_path`): the model's path
and SHA-256, the command line, the pairs as given, the seconds, the hardware and the time.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import time
import warnings
from collections.abc import Sequence

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor
from threadpoolctl import threadpool_limits

from simkit import __version__
from simkit.policies.registry import LEARNED, PolicySpec, learned_model, parse_policy
from simkit.rules import RuleSet
from simkit.runner.duplicate import SEATINGS, seating_policies
from simkit.runner.luck import N_VALUE_FEATURES, duplicate_luck, luck_rows, value_block
from simkit.runner.play import R_PAYOFF
from simkit.runner.value_model import ValueModel, load_value_model, run_record_path, write_value_model
from simkit.errors import SimkitError
from simkit.storage.files import write_checked_json

DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (("expert", "greedy"), ("greedy", "random"))


def policy_identity(spec: PolicySpec) -> str:
    """A policy as a value model records it: its text, except that a ``learned:PATH`` policy
    is named by its model file's SHA-256, not by where the file lies (the shipped ``learned``
    keeps its name: its model is part of simkit).

    >>> policy_identity(PolicySpec("patient", (3.0, 6.0)))
    'patient:3,6'
    """
    if not spec.name.startswith(LEARNED + ":"):
        return spec.text()
    model = learned_model(spec.name)
    params = spec.text()[len(spec.name) :]
    return f"{LEARNED}{params} (model sha256:{model.digest})"


def _training_rows(pairs: Sequence[tuple[PolicySpec, PolicySpec]], seed: int, deals: int,
                   rules: RuleSet | None) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for policy_a, policy_b in pairs:
        for seating in SEATINGS:
            results, _, rows, n_rows = luck_rows(seating_policies(policy_a, policy_b, seating), seed, deals, None,
                                                 rules, record=True)
            pay = results[:, R_PAYOFF : R_PAYOFF + 3]
            used = np.arange(rows.shape[1])[None, :] < n_rows[:, None]
            flat = rows[used]
            seats = flat[:, 0].astype(np.int64)
            deal_of_row = np.repeat(np.arange(deals), n_rows)
            xs.append(flat[:, 1:].astype(np.float32))
            ys.append(pay[deal_of_row, seats].astype(np.float32))
    return np.concatenate(xs), np.concatenate(ys)


def train_value_model(out: str | os.PathLike, seed: int, deals: int,
                      pairs: Sequence[tuple[str | PolicySpec, str | PolicySpec]] = DEFAULT_PAIRS,
                      rules: RuleSet | None = None, hidden: int = 64, epochs: int = 20, check_deals: int = 1_000,
                      quiet: bool = False, command: str = "") -> ValueModel:
    """Fit a value model on ``deals`` duplicate deals of ``seed`` for each policy pair, choose
    its weight on the next ``check_deals`` deals, and write it to ``out``, and its run record
    (``command``, paths, seconds, machine) beside it; returns it loaded."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SimkitError(f"seed must be a non-negative integer, got {seed!r}", parameters=("seed",))
    for name, value, least in (("deals", deals, 10), ("check_deals", check_deals, 10), ("epochs", epochs, 1),
                               ("hidden", hidden, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise SimkitError(f"{name} must be an integer >= {least}, got {value!r}", parameters=(name,))
    specs = [tuple(p if isinstance(p, PolicySpec) else parse_policy(p) for p in pair) for pair in pairs]
    if not specs:
        raise SimkitError("a value model needs at least one policy pair", parameters=("pairs",))
    rules = rules or RuleSet()
    started = time.perf_counter()

    def say(text: str) -> None:
        if not quiet:
            print(f"luck-model: {text}", file=sys.stderr, flush=True)

    x, y = _training_rows(specs, int(seed), int(deals), rules)
    say(f"{x.shape[0]:,} rows from {deals:,} deals x 6 seatings x {len(specs)} pair(s)")
    mean = x.mean(axis=0).astype(np.float64)
    scale = x.std(axis=0).astype(np.float64)
    scale[scale == 0] = 1.0
    network = MLPRegressor(hidden_layer_sizes=(int(hidden),), activation="relu", solver="adam", alpha=1e-3,
                           batch_size=1024, max_iter=int(epochs), tol=0.0, n_iter_no_change=int(epochs) + 1,
                           shuffle=True, random_state=int(seed))
    with threadpool_limits(limits=1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            network.fit(((x - mean) / scale).astype(np.float32), y)
        r2 = float(network.score(((x - mean) / scale).astype(np.float32), y))
    say(f"fitted {N_VALUE_FEATURES} features -> {hidden} -> 1 in {epochs} epochs (R^2 {r2:.3f} on its rows)")
    w1, w2 = network.coefs_
    b1, b2 = network.intercepts_
    unit = value_block(mean, scale, w1, b1, w2.ravel(), float(b2[0]))
    d_all, l_all = [], []
    for policy_a, policy_b in specs:
        d, luck = duplicate_luck(policy_a, policy_b, int(seed), int(check_deals), unit, rules, first_deal=int(deals))
        d_all.append(d.mean(axis=1))
        l_all.append(luck.mean(axis=1))
    d_pool, l_pool = np.concatenate(d_all), np.concatenate(l_all)
    weight = float(np.clip(np.dot(l_pool, d_pool - d_pool.mean()) / max(np.dot(l_pool, l_pool), 1e-12), 0.0, 1.0))
    variance_before = float(d_pool.var())
    variance_after = float((d_pool - weight * l_pool).var())
    say(f"weight {weight:.3f} on deals {deals:,}..{deals + check_deals - 1:,}: duplicate variance "
        f"{variance_before:.3f} -> {variance_after:.3f}")
    block = value_block(mean, scale, w1, b1, w2.ravel(), float(b2[0]), weight=weight)
    training = {"seeds": [int(seed)], "deals": int(deals), "check_deals": int(check_deals),
                "pairs": [[policy_identity(a), policy_identity(b)] for a, b in specs], "hidden": int(hidden),
                "epochs": int(epochs),
                "rows": int(x.shape[0]), "r2": round(r2, 4), "weight": weight,
                "check_variance": [round(variance_before, 4), round(variance_after, 4)],
                "library": f"scikit-learn {sklearn.__version__}", "numpy": np.__version__, "simkit": __version__}
    # the file holds what the settings, seed and software give, never a path or a time: the same
    # run gives the same bytes; where, when and how long are in its run record
    write_value_model(out, block, training, rules.to_dict())
    model = load_value_model(out)
    seconds = time.perf_counter() - started
    write_checked_json(run_record_path(out), {
        "kind": "simkit.luck-model run", "model": os.fspath(out), "model_sha256": model.digest, "command": command,
        "pairs": [[a.text(), b.text()] for a, b in specs], "seconds": round(seconds, 1),
        "hardware": f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores, "
                    f"{platform.system()}",
        "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
    say(f"written in {seconds:.1f} s (run record {run_record_path(out).name})")
    return model
