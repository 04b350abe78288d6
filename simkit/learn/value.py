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

On a Dask cluster (``backend='dask'``) the rows are recorded as tasks of
:data:`TASK_DEALS` deals (keyed by pair, seating and first deal), and so are the check deals;
they are put back in deal order, so the rows, the fit and the file's bytes are those of a
local run, whatever the workers and however many were lost on the way.  The fit runs in this
process.  A worker reads a ``learned:PATH`` pair's model file itself (at PATH made absolute):
on a cluster of several machines it must lie on storage they share.

Determinism: the deals are a pure function of the seed; the fit is scikit-learn's with
``random_state`` = the seed, on one BLAS thread (as ``simkit train``'s, :mod:`simkit.learn.fit`).

What goes where (issue 36): the model file is a function of the settings, seed and software
only (the same bytes and SHA-256 in any folder, at any time): its ``training`` metadata name
each policy of a pair by its text, a ``learned:PATH`` policy by its model's SHA-256 instead of
the path (:func:`simkit.specs.luck_model.policy_identity`).  Where, when and how it ran goes to the run record beside
it, ``FILE.npz.run.json`` (:func:`simkit.runner.value_model.run_record_path`): the model's path
and SHA-256, the command line, the pairs as given, the seconds, the hardware and the time.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import sys
import time
from collections.abc import Sequence

import numpy as np

from simkit import __version__
from simkit.learn.fit import LIBRARY, FitSettings, fit_mlp, r_squared, sklearn_network
from simkit.policies.registry import LEARNED, PolicySpec, is_user_policy, learned_model_path, policy_sources, \
    require_policy_sources
from simkit.progress import Progress, progress_enabled
from simkit.rules import RuleSet
from simkit.runner.duplicate import SEATINGS, seating_policies
from simkit.runner.luck import N_VALUE_FEATURES, duplicate_luck, luck_rows, value_block_of
from simkit.runner.play import R_PAYOFF
from simkit.runner.simulate import check_backend, dask_session, run_dask_in_order, use_threads
from simkit.runner.value_model import ValueModel, load_value_model, run_record_path, write_value_model
from simkit.specs.base import Execution
from simkit.specs.luck_model import LuckModelSpec
from simkit.errors import SimkitError
from simkit.storage.files import write_checked_json

TASK_DEALS = 500  # deals per Dask task (the rows and the check do not depend on it)


def _rows_of(policies: Sequence[PolicySpec], seed: int, first_deal: int, deals: int,
             rules: RuleSet | None) -> tuple[np.ndarray, np.ndarray]:
    """The rows (features, final payoff of the row's seat) of deals ``first_deal ..
    first_deal + deals - 1`` played by ``policies`` at fixed seats, in deal order."""
    results, _, rows, n_rows = luck_rows(policies, seed, deals, None, rules, first_deal=first_deal, record=True)
    pay = results[:, R_PAYOFF : R_PAYOFF + 3]
    used = np.arange(rows.shape[1])[None, :] < n_rows[:, None]
    flat = rows[used]
    seats = flat[:, 0].astype(np.int64)
    deal_of_row = np.repeat(np.arange(deals), n_rows)
    return flat[:, 1:].astype(np.float32), pay[deal_of_row, seats].astype(np.float32)


@dataclasses.dataclass(frozen=True)
class _Tasks:
    """What every task of a value model's training on Dask shares (``learned:PATH`` policies
    with PATH made absolute: a worker reads the file itself)."""

    pairs: tuple[tuple[PolicySpec, PolicySpec], ...]
    seed: int
    rules: RuleSet
    unit: np.ndarray | None = None  # the fitted network with weight 1 (the check's tasks)
    sources: tuple[tuple[str, str], ...] = ()  # user policies' source digests where the training started


def _absolute(spec: PolicySpec) -> PolicySpec:
    path = learned_model_path(spec.name)
    if path is None:
        return spec
    return PolicySpec(f"{LEARNED}:{os.path.abspath(path)}", spec.params)


def _pieces(first_deal: int, deals: int) -> list[tuple[int, int]]:
    return [(first_deal + lo, min(TASK_DEALS, deals - lo)) for lo in range(0, deals, TASK_DEALS)]


def _rows_task(config: _Tasks, task: tuple[int, tuple[int, str, int, int]], threads: int | None = None
               ) -> tuple[int, tuple[np.ndarray, np.ndarray]]:
    """The rows of one (pair, seating, first deal, deals) as
    :func:`~simkit.runner.simulate.run_dask` plays them, tagged with their number."""
    use_threads(threads)
    number, (pair, seating, first_deal, deals) = task
    policy_a, policy_b = config.pairs[pair]
    require_policy_sources((policy_a, policy_b), config.sources, started="the training")
    return number, _rows_of(seating_policies(policy_a, policy_b, seating), config.seed, first_deal, deals,
                            config.rules)


def _check_task(config: _Tasks, task: tuple[int, tuple[int, int, int]], threads: int | None = None
                ) -> tuple[int, tuple[np.ndarray, np.ndarray]]:
    """Per deal of one (pair, first deal, deals) of the check, the duplicate payoff difference
    and luck (means over the seatings), tagged with their number."""
    use_threads(threads)
    number, (pair, first_deal, deals) = task
    policy_a, policy_b = config.pairs[pair]
    require_policy_sources((policy_a, policy_b), config.sources, started="the training")
    d, luck = duplicate_luck(policy_a, policy_b, config.seed, deals, config.unit, config.rules, first_deal=first_deal)
    return number, (d.mean(axis=1), luck.mean(axis=1))


def _tasks(pairs: Sequence[tuple[PolicySpec, PolicySpec]], seed: int, rules: RuleSet | None,
           unit: np.ndarray | None = None) -> _Tasks:
    """What the Dask tasks of ``pairs`` share: the pairs (model paths absolute) and the user
    policies' source digests here, which every task checks where it plays."""
    absolute = tuple((_absolute(a), _absolute(b)) for a, b in pairs)
    return _Tasks(absolute, seed, rules, unit, policy_sources([s for pair in absolute for s in pair]))


def _training_rows(pairs: Sequence[tuple[PolicySpec, PolicySpec]], seed: int, deals: int,
                   rules: RuleSet | None, client=None, quiet: bool = True) -> tuple[np.ndarray, np.ndarray]:
    if client is None:
        parts = [_rows_of(seating_policies(policy_a, policy_b, seating), seed, 0, deals, rules)
                 for policy_a, policy_b in pairs for seating in SEATINGS]
    else:
        pieces = [(k, seating, lo, n) for k in range(len(pairs)) for seating in SEATINGS for lo, n in _pieces(0, deals)]
        parts = run_dask_in_order(_rows_task, _tasks(pairs, seed, rules), pieces, client,
                                  Progress(len(pieces), "tasks", "luck-model rows", progress_enabled(quiet)))
    return np.concatenate([x for x, _ in parts]), np.concatenate([y for _, y in parts])


def _check_rows(pairs: Sequence[tuple[PolicySpec, PolicySpec]], seed: int, deals: int, check_deals: int,
                unit: np.ndarray, rules: RuleSet, client=None, quiet: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Pooled over the pairs, per check deal (deals ``deals ..``), the duplicate payoff
    difference and luck under ``unit`` (means over the six seatings)."""
    if client is None:
        parts = []
        for policy_a, policy_b in pairs:
            d, luck = duplicate_luck(policy_a, policy_b, seed, check_deals, unit, rules, first_deal=deals)
            parts.append((d.mean(axis=1), luck.mean(axis=1)))
    else:
        pieces = [(k, lo, n) for k in range(len(pairs)) for lo, n in _pieces(deals, check_deals)]
        parts = run_dask_in_order(_check_task, _tasks(pairs, seed, rules, unit), pieces, client,
                                  Progress(len(pieces), "tasks", "luck-model check", progress_enabled(quiet)))
    return np.concatenate([d for d, _ in parts]), np.concatenate([luck for _, luck in parts])


def train_value_model(spec: LuckModelSpec, out: str | os.PathLike, execution: Execution = Execution(), *,
                      command: str = "", client=None) -> ValueModel:
    """Fit a value model on ``spec.deals`` duplicate deals of ``spec.seed`` for each policy
    pair, choose its weight on the next ``spec.check_deals`` deals, and write it to ``out``, and
    its run record (``command``, paths, seconds, machine) beside it; returns it loaded.

    ``execution.backend == 'dask'``: the deals are played as tasks on a Dask cluster (``client``
    when given, left open; else one connected here to ``execution.scheduler``, or to a new
    ``LocalCluster`` of ``execution.workers`` processes, before any deal, and closed at the
    end); the same bytes as a local run.  ``workers`` > 1 needs ``backend='dask'``."""
    backend, workers, scheduler = execution.backend, execution.workers, execution.scheduler
    check_backend(backend, workers, scheduler)
    if workers > 1 and backend != "dask":
        raise SimkitError(f"workers needs backend='dask' (a local training plays in this process, on every core), "
                          f"got backend={backend!r}", parameters=("workers", "backend"))
    registered = sorted({s.name for pair in spec.pairs for s in pair if is_user_policy(s) and not s.is_import_path})
    if registered and backend == "dask":
        # policies registered by name live in this process only (one named by import path
        # is imported by every worker)
        print(f"simkit: policy {', '.join(registered)} is registered in this process only: playing in this process "
              "(name it by import path, package.module:function, to use a Dask cluster)", file=sys.stderr)
        backend, workers, scheduler, client = "local", 1, None, None
    with dask_session(backend, workers, scheduler, client) as client:
        return _train_value_model(spec, out, command, execution.quiet, client)


def _train_value_model(spec: LuckModelSpec, out: str | os.PathLike, command: str, quiet: bool,
                       client) -> ValueModel:
    """:func:`train_value_model` with its Dask client (or None) connected."""
    started = time.perf_counter()
    seed, deals, check_deals, specs, rules = spec.seed, spec.deals, spec.check_deals, spec.pairs, spec.rules

    def say(text: str) -> None:
        if not quiet:
            print(f"luck-model: {text}", file=sys.stderr, flush=True)

    x, y = _training_rows(specs, seed, deals, rules, client, quiet)
    say(f"{x.shape[0]:,} rows from {deals:,} deals x 6 seatings x {len(specs)} pair(s)")
    mean = x.mean(axis=0).astype(np.float64)
    scale = x.std(axis=0).astype(np.float64)
    scale[scale == 0] = 1.0
    inputs = ((x - mean) / scale).astype(np.float32)
    network = fit_mlp(inputs, y, FitSettings(hidden=(spec.hidden,), epochs=spec.epochs, alpha=1e-3), seed)
    r2 = r_squared(network, inputs, y)
    say(f"fitted {N_VALUE_FEATURES} features -> {spec.hidden} -> 1 in {spec.epochs} epochs (R^2 {r2:.3f} on its rows)")
    net = sklearn_network(network, mean, scale)
    unit = value_block_of(net)
    d_pool, l_pool = _check_rows(specs, seed, deals, check_deals, unit, rules, client, quiet)
    weight = float(np.clip(np.dot(l_pool, d_pool - d_pool.mean()) / max(np.dot(l_pool, l_pool), 1e-12), 0.0, 1.0))
    variance_before = float(d_pool.var())
    variance_after = float((d_pool - weight * l_pool).var())
    say(f"weight {weight:.3f} on deals {deals:,}..{deals + check_deals - 1:,}: duplicate variance "
        f"{variance_before:.3f} -> {variance_after:.3f}")
    block = value_block_of(net, weight=weight)
    training = spec.identity()  # the settings the file records, and its rules
    recorded_rules = training.pop("rules")
    training.update({"rows": int(x.shape[0]), "r2": round(r2, 4), "weight": weight,
                     "check_variance": [round(variance_before, 4), round(variance_after, 4)],
                     "library": LIBRARY, "numpy": np.__version__, "simkit": __version__})
    # the file holds what the settings, seed and software give, never a path or a time: the same
    # run gives the same bytes; where, when and how long are in its run record
    write_value_model(out, block, training, recorded_rules)
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
