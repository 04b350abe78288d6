"""Automatic tuning of a parametric policy's parameters by SPSA (``simkit tune``).

SPSA (simultaneous perturbation stochastic approximation, Spall 1992) as fishtest tunes chess
engines: every iteration perturbs *all* tuned parameters at once by a random ±1 vector and
plays the two perturbed policies on the same deals; the difference of their strengths is the
gradient estimate along that vector.  Here:

* **Coordinates.** Each tuned parameter ``name`` with range ``(lo, hi)`` is worked on as
  x = (value - lo) / (hi - lo) in [0, 1]; every point played and every iterate is clipped to
  [0, 1], i.e. to [lo, hi] in real units.  Parameters not tuned keep the policy's values.
* **Gains.** Iteration k = 0, 1, ... uses a_k = a / (A + k + 1)^alpha and
  c_k = c / (k + 1)^gamma (:class:`SpsaSettings`; defaults alpha = 0.602, gamma = 0.101 as
  Spall and fishtest; c = 0.2, i.e. the first perturbation moves each parameter by 20% of its
  range; A = 10% of the iterations; a = 0.1 · (A + 1)^alpha, so that a_0 = 0.1: a strength
  slope of 1 牌 per seat per deal across a parameter's whole range moves it by 10% of its range
  at the first iteration).
* **Perturbation.** Δ_k ∈ {-1, +1}^p (Rademacher) from a numpy ``Generator`` seeded with
  ``SeedSequence([seed, k, PERTURBATION_STREAM])``: a pure function of (seed, iteration).
  θ± = clip(x_k ± c_k Δ_k).
* **Measurement (common random numbers).** Iteration k plays deals k·m .. (k+1)·m - 1 of the
  seed (m = ``iteration_deals``; no deal is used twice) with θ+ and with θ-: the same cards
  and the same policy random streams for both (:mod:`simkit.rng`: streams are keyed by
  (seed, deal)).  The candidate sits at each of the 3 seats in turn and the two other seats
  are played by one opponent of the pool: the block's i-th deal (i = 0 .. m - 1) is played
  against ``pool[i * P // m]`` (P opponents, each in an equal contiguous share of the block).
  The strength f(θ) is the candidate's mean payoff, 牌 per seat per deal, over the block's
  deals and the 3 seats.
* **Update (maximising).** ĝ_k = (f(θ+) - f(θ-)) / (2 c_k) · Δ_k (1/Δ = Δ for ±1) and
  x_{k+1} = clip(x_k + a_k ĝ_k, 0, 1).
* **Budget.** ``budget`` counts deals *played*: every iteration plays each of its m deals
  3 times (one per candidate seat) for each of θ+ and θ-, so 6·m plays; the run makes
  ``budget // (6 m)`` iterations and plays exactly 6·m·iterations deals (the remainder of the
  budget is unused and reported).  The validation is not counted in the budget.
* **Result.** The tuned values are the mean of the iterates x_{k+1} over the last ``tail``
  fraction (default 0.25) of the iterations (Polyak–Ruppert averaging of the tail: the last
  iterate alone carries the noise of the last steps), in real units; the last iterate is
  reported too.
* **Validation.** A duplicate comparison (:func:`simkit.runner.duplicate.run_duplicate`:
  six seatings on the same deals) of the tuned parameters against the starting ones, into
  ``OUT/validation``, on deals 0 .. ``validate_deals`` - 1 of a different seed,
  :func:`validation_seed` (``SeedSequence([seed, VALIDATION_STREAM])``'s first 32-bit word),
  so none of its cards were seen while tuning; reported with its paired bootstrap (BCa) and t
  intervals at ``confidence`` (:func:`simkit.studies.compare.load_comparison`).
* **Determinism and resume.** The trajectory is a pure function of (policy, ranges, pool,
  seed, budget, iteration deals, rules, SPSA constants).  ``OUT/tune.json`` records that
  identity (a re-run with another is refused in one line) and ``OUT/state.json`` the
  trajectory, rewritten atomically after every iteration: an interrupted run, run again,
  continues from its last complete iteration and ends exactly where an uninterrupted one does.
* **Output.** ``OUT/report.md`` (table, plot, validation), ``OUT/trajectory.csv``,
  ``OUT/tuning_convergence.png`` / ``.svg`` (each parameter in real units, and the strength
  (f(θ+) + f(θ-)) / 2 with its moving average, against the iteration).

Compiled policies (built-in, or ``package.module:function`` with parameters ``p<i>``) play in
the batch kernels; a Python-tier policy (``act(observation, legal_actions)``, made as
``Class(*params)``) plays in the Python loop (:mod:`simkit.runner.python_play`), slower.

The run is a :class:`~simkit.specs.tune.TuneSpec` (its defaults, its checks, its identity):

>>> import tempfile
>>> spec = TuneSpec("patient:6", {"min_units": (1, 8)}, ["greedy"], budget=6000, seed=1, iteration_deals=100,
...                 validate_deals=50)
>>> result = tune(spec, tempfile.mkdtemp(), Execution(quiet=True))
>>> result.iterations, result.plays, result.to_frame()["parameter"].tolist(), result.tuned[0] < 6
(10, 6000, ['min_units'], True)
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from simkit.studies.compare import ComparisonResult, load_comparison
from simkit.analysis.plots import save_figure, tuning_plot
from simkit.analysis.report import markdown_table
from simkit.analysis.results import Result, format_level
from simkit.errors import SimkitError
from simkit.policies.registry import (
    PolicySpec,
    is_python_policy,
    is_user_policy,
    param_table_of,
    policy_arrays,
    policy_sources,
    require_policy_sources,
)
from simkit.progress import Progress
from simkit.runner.batch import check_batch_memory
from simkit.runner.duplicate import run_duplicate
from simkit.specs.compare import DuplicateSpec
from simkit.runner.play import R_PAYOFF, play_deals
from simkit.runner.python_play import actors_for, play_deals_python
from simkit.runner.simulate import check_backend, dask_session, run_dask_in_order
from simkit.specs.base import Execution
from simkit.specs.tune import PLAYS_PER_DEAL, SEATS, ParameterRange, SpsaSettings, TuneSpec, parse_pool, parse_ranges
from simkit.storage.dataset import DatasetError
from simkit.storage.files import FileError, read_checked_json, write_checked_json, write_text
from simkit.storage.lock import FolderLock
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import TUNE_FILE, check_run_folder, check_run_identity

__all__ = [
    "PLAYS_PER_DEAL",
    "ParameterRange",
    "SpsaSettings",
    "TuneResult",
    "TuneSpec",
    "StrengthPiece",
    "block_strength",
    "parse_pool",
    "parse_ranges",
    "perturbation",
    "play_piece",
    "spsa_step",
    "strength_pieces",
    "tune",
    "validation_seed",
    "write_tune_report",
]

STATE_FILE = "state.json"  # the trajectory so far, rewritten after every iteration
VALIDATION_DIR = "validation"
PLOT_STEM = "tuning_convergence"
PERTURBATION_STREAM = 0x5B5A  # SeedSequence([seed, k, PERTURBATION_STREAM]) draws Δ_k
VALIDATION_STREAM = 0x7A11D  # SeedSequence([seed, VALIDATION_STREAM]) gives the validation seed


def perturbation(seed: int, iteration: int, n: int) -> np.ndarray:
    """Δ of an iteration: ``n`` values ±1 (float), a pure function of (seed, iteration).

    >>> perturbation(7, 3, 4).tolist() == perturbation(7, 3, 4).tolist(), set(perturbation(7, 3, 64).tolist())
    (True, {1.0, -1.0})
    """
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(iteration), PERTURBATION_STREAM]))
    return rng.integers(0, 2, size=int(n)).astype(np.float64) * 2.0 - 1.0


def validation_seed(seed: int) -> int:
    """The seed of the validation deals of a tune with ``seed`` (never the tune's own).

    >>> validation_seed(0) == validation_seed(0) != 0
    True
    """
    word = int(np.random.SeedSequence([int(seed), VALIDATION_STREAM]).generate_state(1, dtype=np.uint32)[0])
    return word if word != int(seed) else word + 1


def spsa_step(x: np.ndarray, delta: np.ndarray, f_plus: float, f_minus: float, a_k: float,
              c_k: float) -> tuple[np.ndarray, np.ndarray]:
    """(gradient estimate, next iterate) of one maximising SPSA step in normalised coordinates.

    >>> g, x = spsa_step(np.array([0.5]), np.array([1.0]), 1.0, 0.0, 0.1, 0.2)
    >>> g.tolist(), x.tolist()
    ([2.5], [0.75])
    """
    gradient = (float(f_plus) - float(f_minus)) / (2.0 * c_k) * delta
    return gradient, np.clip(x + a_k * gradient, 0.0, 1.0)


def _spec_at(spec: PolicySpec, start: np.ndarray, ranges: Sequence[ParameterRange], x: np.ndarray) -> PolicySpec:
    """The candidate policy at normalised point ``x``; a parameter that takes whole numbers only
    (``mc``'s ``rollouts``, ``race``, ...) at the nearest whole number in its range."""
    values = start.copy()
    table = param_table_of(spec.name) or ()
    for r, xi in zip(ranges, x):
        value = r.to_real(xi)
        if r.index < len(table) and table[r.index].integer:
            value = min(max(float(round(value)), math.ceil(r.lo)), math.floor(r.hi))
        values[r.index] = value
    return PolicySpec(spec.name, tuple(float(v) for v in values))


def _play(specs: Sequence[PolicySpec], n: int, seed: int, first_deal: int, rules_array: np.ndarray) -> np.ndarray:
    """Result rows of deals first_deal .. first_deal + n - 1 with fixed seats; a deal that
    stopped early (an illegal action, MAX_DECISIONS) is a one-line DealError, never a 0 score."""
    texts = [s.text() for s in specs]
    if any(is_python_policy(s) for s in specs):
        return play_deals_python(n, seed, actors_for(specs), rules_array, first_deal=first_deal, policies=texts)
    ids, params, user = policy_arrays(specs)
    return play_deals(n, seed, ids, params, rules_array, first_deal=first_deal, user_functions=user, policies=texts)


@dataclasses.dataclass(frozen=True)
class StrengthPiece:
    """One play of a strength block: the policies ``specs`` seated (the candidate at ``seat``,
    the opponent at the others) on deals ``first_deal .. first_deal + deals - 1``; the unit of
    a tune's work on a Dask cluster."""

    specs: tuple[PolicySpec, ...]
    seat: int
    first_deal: int
    deals: int


def strength_pieces(candidate: PolicySpec, pool: Sequence[PolicySpec], first_deal: int,
                    deals: int) -> list[StrengthPiece]:
    """The plays of :func:`block_strength`, in the order their payoffs add up: for each
    opponent ``pool[j]`` its share of the block (deals j·m/P .. (j+1)·m/P - 1), the candidate at
    seat 0, 1, 2."""
    pieces = []
    for j, opponent in enumerate(pool):
        lo, hi = j * deals // len(pool), (j + 1) * deals // len(pool)
        for seat in range(SEATS):
            specs = [opponent] * SEATS
            specs[seat] = candidate
            pieces.append(StrengthPiece(tuple(specs), seat, first_deal + lo, hi - lo))
    return pieces


def play_piece(piece: StrengthPiece, seed: int, rules_array: np.ndarray) -> tuple[float, int]:
    """(the candidate's payoff summed over the piece's deals, deals played)."""
    rows = _play(piece.specs, piece.deals, seed, piece.first_deal, rules_array)
    return float(rows[:, R_PAYOFF + piece.seat].sum()), int(rows.shape[0])


def _strength(parts: Sequence[tuple[float, int]], deals: int) -> tuple[float, int]:
    """(strength, deals played) of a block from its pieces' (payoff, deals), added up in the
    pieces' order (:func:`strength_pieces`): the same float wherever each piece was played."""
    total = 0.0
    played = 0
    for payoff, n in parts:
        total += payoff
        played += n
    return total / (SEATS * deals), played


def block_strength(candidate: PolicySpec, pool: Sequence[PolicySpec], seed: int, first_deal: int, deals: int,
                   rules_array: np.ndarray) -> tuple[float, int]:
    """(strength, deals played) of ``candidate`` on deals first_deal .. first_deal + deals - 1:
    its mean payoff per seat per deal with it at each seat in turn and the block's i-th deal's
    two other seats played by ``pool[i * len(pool) // deals]``."""
    return _strength([play_piece(p, seed, rules_array) for p in strength_pieces(candidate, pool, first_deal, deals)],
                     deals)


@dataclasses.dataclass(frozen=True)
class _PieceConfig:
    """What every piece of a tune played on Dask shares: the seed, the rules, and the source
    digests of the user policies where the tune started (checked where each piece plays)."""

    seed: int
    rules_array: np.ndarray
    sources: tuple[tuple[str, str], ...]


def _compute_piece(config: _PieceConfig, task: tuple[int, StrengthPiece],
                   threads: int | None = None) -> tuple[int, tuple[float, int]]:
    """A piece as :func:`~simkit.runner.simulate.run_dask` plays it (on ``threads`` numba
    threads), tagged with its number."""
    import numba

    if threads is not None:
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    number, piece = task
    require_policy_sources(piece.specs, config.sources, started="the tune")
    return number, play_piece(piece, config.seed, config.rules_array)


def _play_pieces(pieces: Sequence[StrengthPiece], config: _PieceConfig, client) -> list[tuple[float, int]]:
    """Each piece's (payoff, deals) in the order given, the pieces played as tasks on the Dask
    cluster of ``client`` (:func:`~simkit.runner.simulate.run_dask_in_order`: a killed worker's
    run again elsewhere)."""
    return run_dask_in_order(_compute_piece, config, pieces, client)


@dataclasses.dataclass(frozen=True)
class TuneResult(Result):
    """A finished tune: the policy at its start and tuned (``start_policy``, ``tuned_policy``:
    specs with every parameter), the tuned parameters' ranges, start, tuned (tail mean) and
    last-iterate values, the iterations and the deals played, the trajectory (one row per
    iteration) and the validation comparison of tuned against start.

    :meth:`to_frame`: one row per tuned parameter (``parameter``, ``index``, ``lo``, ``hi``,
    ``start``, ``tuned``, ``last``) with the validation's estimate and interval."""

    policy: str
    ranges: tuple[ParameterRange, ...]
    start: tuple[float, ...]
    tuned: tuple[float, ...]
    last: tuple[float, ...]
    start_policy: PolicySpec
    tuned_policy: PolicySpec
    pool: tuple[str, ...]
    seed: int
    budget: int
    iterations: int
    plays: int
    iteration_deals: int
    settings: SpsaSettings
    tail: float
    trajectory: pd.DataFrame = dataclasses.field(repr=False, compare=False)
    validation: ComparisonResult = dataclasses.field(repr=False, compare=False)
    validation_seed: int = 0
    confidence: float = 0.95

    def to_frame(self) -> pd.DataFrame:
        v = self.validation
        return pd.DataFrame({
            "parameter": [r.name for r in self.ranges], "index": [r.index for r in self.ranges],
            "lo": [r.lo for r in self.ranges], "hi": [r.hi for r in self.ranges],
            "start": list(self.start), "tuned": list(self.tuned), "last": list(self.last),
            "validation_estimate": v.test.mean, "validation_lo": v.bootstrap.lo, "validation_hi": v.bootstrap.hi,
            "validation_deals": v.deals, "confidence": self.confidence,
        })

    def text(self) -> str:
        """The tuned parameters and the validation, as the command line prints them."""
        level = format_level(self.confidence)
        values = ", ".join(f"{r.name} = {t:.4g} (from {s:.4g}; last iterate {x:.4g})"
                           for r, s, t, x in zip(self.ranges, self.start, self.tuned, self.last))
        v = self.validation
        return "\n".join([
            f"tuned {self.policy}: {values}",
            f"  {self.iterations} SPSA iterations, {self.plays:,} deals played (budget {self.budget:,}); tuned = mean "
            f"of the last {self.tail:.0%} of the iterates",
            f"validation (new deals, seed {self.validation_seed}): tuned - start {v.test.mean:+.4f} 牌 per seat per "
            f"deal over {v.deals:,} deals x 6 seatings, {level} paired bootstrap (BCa) [{v.bootstrap.lo:+.4f}, "
            f"{v.bootstrap.hi:+.4f}], t [{v.test.lo:+.4f}, {v.test.hi:+.4f}]",
        ])


_RECORD_VECTORS = ("delta", "x", "x_plus", "x_minus", "gradient", "x_next")
_RECORD_NUMBERS = ("a_k", "c_k", "f_plus", "f_minus")


def _record_problem(record, k: int, x: list, m: int) -> str | None:
    """What is wrong with iteration ``k``'s stored record (its iterate must be ``x``, the
    previous record's ``x_next``), None when it fits."""
    if not isinstance(record, dict):
        return f"iteration {k} is no record"
    if record.get("iteration") != k or record.get("first_deal") != k * m or not _is_int(record.get("plays")):
        return f"iteration {k}'s iteration, first_deal or plays does not fit iteration {k}"
    for key in _RECORD_NUMBERS:
        if not (_is_number(record.get(key)) and math.isfinite(record[key])):
            return f"iteration {k}'s {key} is {record.get(key)!r}, not a finite number"
    for key in _RECORD_VECTORS:
        value = record.get(key)
        if not (isinstance(value, list) and len(value) == len(x) and all(_is_number(v) for v in value)):
            return f"iteration {k}'s {key} is no list of {len(x)} numbers"
    if record["x"] != x:
        return f"iteration {k} does not start where iteration {k - 1} ended (its x is not the x_next before it)"
    return None


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _read_state(directory: Path, spec: TuneSpec, x0: np.ndarray) -> list[dict]:
    """The trajectory stored in ``state.json``, verified: its digest, that it belongs to this
    tune (its identity is the spec's, :meth:`TuneSpec.identity`), and that every record is whole
    and starts where the one before it ended (one-line :class:`DatasetError` naming the file
    otherwise)."""
    path = directory / STATE_FILE
    if not os.path.lexists(path):
        return []
    repair = "restore it, or delete it to tune again from the start"
    try:
        state = read_checked_json(path, "a tune's state", repair)
    except FileError as exc:
        raise DatasetError(str(exc), parameters=("out",)) from None
    if state.get("identity") != spec.identity():
        raise DatasetError(f"{path} does not belong to this tune's {TUNE_FILE}; use another output folder",
                           parameters=("out",))
    records = state.get("iterations")
    if not isinstance(records, list) or len(records) > spec.iterations:
        raise DatasetError(f"{path}: its iterations are not a list of at most {spec.iterations} records; {repair}",
                           parameters=("out",))
    x = [float(v) for v in x0]
    for k, record in enumerate(records):
        problem = _record_problem(record, k, x, spec.iteration_deals)
        if problem is not None:
            raise DatasetError(f"{path}: {problem} (edited or damaged); {repair}", parameters=("out",))
        x = record["x_next"]
    return records


def tune(spec: TuneSpec, out: str | os.PathLike, execution: Execution = Execution(), *, client=None,
         on_iteration: Callable[[dict], None] | None = None) -> TuneResult:
    """Tune ``spec.params`` of ``spec.policy`` against the pool ``spec.against`` with SPSA,
    spending ``spec.budget`` deals played (6 per deal of an iteration: see the module
    docstring), then validate tuned against start on ``spec.validate_deals`` new duplicate
    deals and write ``out/report.md``.  Resumable: a re-run continues where an interrupted one
    stopped.

    ``on_iteration`` is called with each iteration's record once it is stored (its keys are
    the trajectory's columns); unless ``execution.quiet``, the iterations' progress
    (:class:`~simkit.progress.Progress`: each iteration's values and strength) and the
    validation's go to stderr.

    ``execution.backend == 'dask'``: every iteration's plays (θ+ and θ-, each opponent's share
    of the block, the candidate at each seat: 6 x the pool's size, :func:`strength_pieces`) run
    as tasks on a Dask cluster (:func:`~simkit.runner.simulate.run_dask`: ``client``, else one
    connected here, once for the whole tune, to ``execution.scheduler`` or to a new
    ``LocalCluster`` of ``execution.workers`` single-threaded processes), and so does the
    validation's comparison; their payoffs add up here in the order a local tune adds them, so
    the trajectory, the tuned values and every file are the local tune's.  ``workers`` > 1
    needs ``backend='dask'`` (a local tune plays in this process, on every core)."""
    backend, workers, scheduler = execution.backend, execution.workers, execution.scheduler
    check_backend(backend, workers, scheduler)
    if workers > 1 and backend != "dask":
        raise SimkitError(f"workers needs backend='dask' (a local tune plays in this process, on every core), got "
                          f"backend={backend!r}", parameters=("workers", "backend"))
    registered = sorted({s.name for s in (spec.policy, *spec.pool) if is_user_policy(s) and not s.is_import_path})
    if registered and backend == "dask":
        # policies registered by name live in this process only (one named by import path
        # is imported by every worker)
        print(f"simkit: policy {', '.join(registered)} is registered in this process only: tuning in this "
              "process (name it by import path, package.module:function, to use a Dask cluster)", file=sys.stderr)
        backend, workers, scheduler, client = "local", 1, None, None
    check_batch_memory(min(spec.batch_size, spec.validate_deals))
    identity = spec.identity()
    directory = check_run_folder(out, "tune")
    ranges, start = spec.params, np.array(spec.start)
    x0 = np.array([r.to_unit(start[r.index]) for r in ranges])
    pieces = _PieceConfig(spec.seed, spec.rules.to_array(), policy_sources([spec.policy, *spec.pool]))
    settings = spec.settings
    with dask_session(backend, workers, scheduler, client) as client, \
            FolderLock(make_out_dir(directory)):  # connected before anything is written
        check_run_identity(directory, "tune", identity)
        records = _read_state(directory, spec, x0)
        x = np.array(records[-1]["x_next"]) if records else x0
        with Progress(spec.iterations, "iterations", "tune", enabled=not execution.quiet) as progress:
            if records:
                progress.update(len(records), "read back")
            for k in range(len(records), spec.iterations):
                record = _iteration(k, x, spec, settings, pieces, client)
                records.append(record)
                write_checked_json(directory / STATE_FILE, {"identity": identity, "iterations": records})
                x = np.array(record["x_next"])
                progress.update(1, _status(record, ranges))
                if on_iteration is not None:
                    on_iteration(dict(record))
        result = _validate(spec, records, directory, execution.quiet, client)
        write_tune_report(result, directory)
    return result


def _validate(spec: TuneSpec, records: list[dict], directory: Path, quiet: bool, client) -> TuneResult:
    """The tuned values (the mean of the last ``tail`` of the iterates) and their validation
    against the start on new deals (on the Dask cluster of ``client`` when given)."""
    ranges, start = spec.params, np.array(spec.start)
    trajectory = _trajectory(records, ranges)
    keep = max(1, math.ceil(spec.tail * spec.iterations))
    x_tuned = np.array([r["x_next"] for r in records[-keep:]]).mean(axis=0)
    tuned_spec = _spec_at(spec.policy, start, ranges, x_tuned)
    start_spec = PolicySpec(spec.policy.name, tuple(float(v) for v in start))
    v_seed = validation_seed(spec.seed)
    if not quiet:
        print(f"tune: validating {tuned_spec.text()} against {start_spec.text()} on {spec.validate_deals:,} new deals "
              f"(seed {v_seed}) x 6 seatings", file=sys.stderr, flush=True)
    run_duplicate(DuplicateSpec(tuned_spec, start_spec, spec.validate_deals, v_seed, spec.rules,
                                min(spec.batch_size, spec.validate_deals)), directory / VALIDATION_DIR,
                  Execution(backend="dask" if client is not None else "local", quiet=quiet), client=client)
    validation = load_comparison(directory / VALIDATION_DIR, spec.confidence)
    return TuneResult(
        spec.policy.name, ranges, tuple(float(start[r.index]) for r in ranges),
        tuple(float(tuned_spec.params[r.index]) for r in ranges),
        tuple(r.to_real(v) for r, v in zip(ranges, records[-1]["x_next"])), start_spec, tuned_spec,
        tuple(p.text() for p in spec.pool), spec.seed, spec.budget, spec.iterations,
        PLAYS_PER_DEAL * spec.iteration_deals * spec.iterations, spec.iteration_deals, spec.settings,
        spec.tail, trajectory, validation, v_seed, spec.confidence)


def _iteration(k: int, x: np.ndarray, spec: TuneSpec, settings: SpsaSettings, pieces: _PieceConfig,
               client=None) -> dict:
    """One SPSA iteration from iterate ``x``: its record (plain JSON values).  With a Dask
    ``client`` the plays of θ+ and θ- run on its cluster (``pieces``: what every play shares)."""
    a_k, c_k = settings.gains(k)
    m, pool, ranges, start = spec.iteration_deals, spec.pool, spec.params, np.array(spec.start)
    delta = perturbation(spec.seed, k, len(ranges))
    x_plus = np.clip(x + c_k * delta, 0.0, 1.0)
    x_minus = np.clip(x - c_k * delta, 0.0, 1.0)
    spec_plus, spec_minus = _spec_at(spec.policy, start, ranges, x_plus), _spec_at(spec.policy, start, ranges, x_minus)
    if client is None:
        f_plus, n_plus = block_strength(spec_plus, pool, spec.seed, k * m, m, pieces.rules_array)
        f_minus, n_minus = block_strength(spec_minus, pool, spec.seed, k * m, m, pieces.rules_array)
    else:  # θ+'s and θ-'s plays at once, added up as block_strength adds them
        plus = strength_pieces(spec_plus, pool, k * m, m)
        parts = _play_pieces(plus + strength_pieces(spec_minus, pool, k * m, m), pieces, client)
        (f_plus, n_plus), (f_minus, n_minus) = _strength(parts[:len(plus)], m), _strength(parts[len(plus):], m)
    gradient, x_next = spsa_step(x, delta, f_plus, f_minus, a_k, c_k)
    return {"iteration": k, "first_deal": k * m, "plays": n_plus + n_minus, "a_k": a_k, "c_k": c_k,
            "delta": delta.tolist(), "x": x.tolist(), "x_plus": x_plus.tolist(), "x_minus": x_minus.tolist(),
            "f_plus": f_plus, "f_minus": f_minus, "gradient": gradient.tolist(), "x_next": x_next.tolist()}


def _status(record: dict, ranges: Sequence[ParameterRange]) -> str:
    """An iteration's progress note: the parameters after it, its strength and f±."""
    values = "  ".join(f"{r.name} {r.to_real(v):.4g}" for r, v in zip(ranges, record["x_next"]))
    strength = (record["f_plus"] + record["f_minus"]) / 2
    return f"{values}  strength {strength:+.4f} (f+ {record['f_plus']:+.4f}, f- {record['f_minus']:+.4f})"


def _trajectory(records: Sequence[dict], ranges: Sequence[ParameterRange]) -> pd.DataFrame:
    """One row per iteration: k, gains, f±, strength, and per parameter its value before the
    iteration, after it, at θ± (real units) and its Δ."""
    frame = pd.DataFrame({
        "iteration": [r["iteration"] for r in records], "first_deal": [r["first_deal"] for r in records],
        "plays": [r["plays"] for r in records], "a_k": [r["a_k"] for r in records],
        "c_k": [r["c_k"] for r in records], "f_plus": [r["f_plus"] for r in records],
        "f_minus": [r["f_minus"] for r in records],
    })
    frame["strength"] = (frame["f_plus"] + frame["f_minus"]) / 2
    for i, p in enumerate(ranges):
        frame[p.name] = [p.to_real(r["x_next"][i]) for r in records]
        frame[f"{p.name}_before"] = [p.to_real(r["x"][i]) for r in records]
        frame[f"{p.name}_plus"] = [p.to_real(r["x_plus"][i]) for r in records]
        frame[f"{p.name}_minus"] = [p.to_real(r["x_minus"][i]) for r in records]
        frame[f"{p.name}_delta"] = [r["delta"][i] for r in records]
    return frame


def _window(iterations: int) -> int:
    """Moving-average window of the strength plot: a tenth of the iterations (1 .. 50)."""
    return int(min(50, max(1, iterations // 10)))


def write_tune_report(result: TuneResult, directory: str | os.PathLike) -> Path:
    """``report.md``, ``trajectory.csv`` and the convergence figure of a tune."""
    from matplotlib.figure import Figure  # as plots.new_axes: matplotlib only when a figure is drawn

    directory = Path(directory)
    frame = result.trajectory
    rows = len(result.ranges) + 1
    figure = Figure(figsize=(7.5, 2.6 * rows))
    axes = figure.subplots(rows, 1, squeeze=False)[:, 0]
    for ax, (r, s, t) in zip(axes, zip(result.ranges, result.start, result.tuned)):
        tuning_plot(frame, r.name, f"{r.name} (real units)", f"{result.policy}: {r.name}", ax=ax, bounds=(r.lo, r.hi),
                    marks={"start": s, f"tuned (mean of the last {result.tail:.0%})": t})
    window = _window(result.iterations)
    tuning_plot(frame, "strength", "strength (牌 per seat per deal)",
                f"(f(θ+) + f(θ-)) / 2 against {', '.join(result.pool)}; {result.iteration_deals:,} deals x 3 seats "
                "per point", ax=axes[-1], window=window)
    save_figure(figure, directory, PLOT_STEM)
    write_text(directory / "trajectory.csv", frame.to_csv(index=False))
    v = result.validation
    level = format_level(result.confidence)
    table = pd.DataFrame({
        "parameter": [r.name for r in result.ranges], "index": [f"p{r.index}" for r in result.ranges],
        "range": [f"{r.lo:g} .. {r.hi:g}" for r in result.ranges], "start": [f"{s:.4g}" for s in result.start],
        "tuned": [f"{t:.4g}" for t in result.tuned], "last iterate": [f"{x:.4g}" for x in result.last],
    })
    early = frame["strength"].iloc[: window].mean()
    late = frame["strength"].iloc[-window:].mean()
    s = result.settings
    lines = [
        f"# Tuning {result.policy} (SPSA)", "",
        f"Pool: {', '.join(result.pool)}. Seed {result.seed}; {result.iterations} iterations of "
        f"{result.iteration_deals:,} deals (each played with θ+ and θ-, the candidate at each of the 3 seats): "
        f"{result.plays:,} deals played of a budget of {result.budget:,}.",
        f"SPSA constants (normalised coordinates): a = {s.a:.4g}, c = {s.c:.4g}, A = {s.A:.4g}, alpha = {s.alpha:g}, "
        f"gamma = {s.gamma:g}; tuned = mean of the iterates over the last {result.tail:.0%} of the iterations.", "",
    ]
    lines += markdown_table(table) + [""]
    lines += [f"Strength (f(θ+) + f(θ-)) / 2: first {window} iterations {early:+.4f}, last {window} {late:+.4f} 牌 per "
              "seat per deal (each on its own deals; not a comparison).", "",
              f"![tuning convergence]({PLOT_STEM}.png)", "",
              "## Validation", "",
              f"Duplicate comparison of the tuned policy `{result.tuned_policy.text()}` against the start "
              f"`{result.start_policy.text()}` on {v.deals:,} new deals (seed {result.validation_seed}, derived from "
              f"the tune's seed) x 6 seatings, in `{VALIDATION_DIR}/`:", "",
              "```", v.text(), "```", "",
              f"tuned - start: {v.test.mean:+.4f} 牌 per seat per deal, {level} paired bootstrap (BCa) "
              f"[{v.bootstrap.lo:+.4f}, {v.bootstrap.hi:+.4f}].", ""]
    path = directory / "report.md"
    write_text(path, "\n".join(lines))
    return path
