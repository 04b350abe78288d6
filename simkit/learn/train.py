"""``simkit train``: learn a ``learned`` model from self-play, in generations, resumably.

Generation g (1, 2, ...):

1. **self-play** (:func:`simkit.learn.selfplay.record_selfplay`): ``deals`` new deals (deal
   numbers ``(g - 1) × deals`` on, of the training seed) played by the base policy, ``expert``
   for g = 1 and generation g - 1's model after; at a share ``rate`` of the decisions every
   candidate (up to 8) is rolled out to the end of the deal on the same cards, each giving a
   row (its features, its advantage over the base choice in 牌);
2. **fit** (:mod:`simkit.learn.fit`): the network is fitted to the rows of 4 deals in 5 (by
   deal number); the 5th deal's rows are the validation set: its squared error, and the
   *offline gain* per decision of the policy the network makes at each margin (the rolled-out
   advantage of the action it picks), from which the generation's margin is chosen (the
   largest gain; the larger margin among equals);
3. **check**: the generation's model against ``expert`` in duplicate play (the six seatings
   of two policies, :data:`CHECK_SEED_OFFSET` + seed, ``check_deals`` deals): the mean
   difference in 牌 per seat per deal and its t interval;
4. the generation's model (``gen-NNN/model.npz``) and its metrics (``gen-NNN/metrics.json``,
   digested) are written; the shipped model is the generation with the best check
   (``model.npz``; those check deals are therefore selection deals: evaluate on other seeds).

What goes where (issue 36): a model file is a function of the run's settings, seed and
software only, so the same training gives the same bytes and SHA-256 in any folder, at any time,
on any machine with the same libraries.  Its metadata (:func:`simkit.policies.model.model_bytes`)
hold the rules, seed, generation, deals, settings, margin, validation figures and library
versions, and its base policy by name and digest (``expert``, or ``learned:gen-NNN/model.npz``
relative to the run's folder with ``base_model_sha256``).  Everything that depends on where,
when or by what machine it ran is in the generation's run record, ``metrics.json``: the command
line (which names ``--out``), the base model's full path, the seconds, the hardware, and the
model's SHA-256 (which is how a resumed run knows the generation is complete).

On a Dask cluster (``backend='dask'``: ``--backend dask [--scheduler ADDRESS]``) the
self-play runs as tasks of :data:`SELFPLAY_TASK_DEALS` consecutive deals and the check as tasks
of :data:`CHECK_TASK_DEALS` deals, each keyed by its first deal; their rows are put back in deal
order, so the rows, the fit and the model's bytes are those of a local run (a deal's rows do not
depend on the deals beside it), whatever the workers and however many were lost on the way.
What travels to a worker is the policies' arrays (a ``learned`` base's weights included), never
a path: the run's folder need not be shared.  The fit runs in this process.

A run is a pure function of its settings and seed (``train.json`` records them; another run's
folder is refused).  Killed, it resumes from its last complete generation (a generation is
complete when its metrics and the model whose digest they record are both on disk) and
gives the same files as an uninterrupted run; asked for more generations, it continues.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from simkit import __version__
from simkit.analysis.plots import training_loss_plot, training_strength_plot
from simkit.analysis.stats import mean_interval
from simkit.errors import SimkitError
from simkit.learn.fit import LIBRARY, FitSettings, fit_network, network_block, offline_gains, predict
from simkit.learn.selfplay import MAX_SAMPLES_PER_DEAL, record_selfplay
from simkit.policies.expert import EXPERT_DEFAULTS
from simkit.policies.learned import N_FEATURES
from simkit.policies.model import load_model, model_block, model_bytes
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import PERMUTATIONS, R_PAYOFF, SEATING_ALL, play_deals
from simkit.progress import Progress, progress_enabled
from simkit.runner.simulate import check_backend, dask_session, run_dask_in_order, use_threads
from simkit.specs.base import Execution
from simkit.specs.train import VALIDATION_EVERY, TrainSpec
from simkit.storage.files import FileError, atomic_write_bytes, read_checked_json, write_checked_json, \
    write_text
from simkit.storage.lock import FolderLock
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import check_run_folder, check_run_identity

MODEL_FILE = "model.npz"
METRICS_FILE = "metrics.json"
REPORT_FILE = "report.md"
CHECK_SEED_OFFSET = 1_000_003  # the strength checks play seed + this (selection deals, never training deals)
MARGINS = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)
SELFPLAY_TASK_DEALS = 250  # self-play deals per Dask task (the rows do not depend on it)
CHECK_TASK_DEALS = 100  # check deals per Dask task (the differences do not depend on it)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """The generations' metrics (dicts, in order) and the shipped model's path."""

    out: Path
    generations: list[dict]
    model: Path

    @property
    def best(self) -> dict:
        return best_generation(self.generations)


def best_generation(generations: list[dict]) -> dict:
    """The metrics of the generation with the best check against expert (the first of equals):
    the one shipped as ``model.npz``."""
    return max(generations, key=lambda m: m["check"]["mean"])


def generation_dir(out: Path, generation: int) -> Path:
    return out / f"gen-{generation:03d}"


@dataclasses.dataclass(frozen=True)
class _CheckTasks:
    """What every task of a check shares: the seed, the rules, and the two lineups
    ([spec, against, against], [against, spec, spec]) as (names, ids, params, user functions)."""

    seed: int
    rules_array: np.ndarray
    lineups: tuple


def strength_check(spec: str, deals: int, seed: int, rules: RuleSet, against: str = "expert",
                   client=None, quiet: bool = True) -> np.ndarray:
    """Per deal, the duplicate difference (牌 per seat) of ``spec`` against ``against``: each
    deal played in the six seatings of [spec, against, against] and of [against, spec, spec]
    (every seat held by each policy six times); the deal's difference is the mean over the
    12 rows of (mean payoff of spec's seats − mean payoff of against's seats).  With a Dask
    ``client``: in tasks of :data:`CHECK_TASK_DEALS` deals on its cluster, the same values
    (with their progress unless ``quiet``)."""
    lineups = []
    for lineup in ((spec, against, against), (against, spec, spec)):
        ids, params, user = policy_arrays(parse_policies(list(lineup)))
        lineups.append((list(lineup), ids, params, user))
    config = _CheckTasks(int(seed), rules.to_array(), tuple(lineups))
    if client is None:
        return _check_differences(config, 0, deals)
    pieces = [(lo, min(CHECK_TASK_DEALS, deals - lo)) for lo in range(0, deals, CHECK_TASK_DEALS)]
    return np.concatenate(run_dask_in_order(_check_task, config, pieces, client,
                                            Progress(len(pieces), "tasks", "check", progress_enabled(quiet))))


def _check_differences(config: _CheckTasks, first_deal: int, deals: int) -> np.ndarray:
    """:func:`strength_check`'s differences of deals ``first_deal .. first_deal + deals - 1``."""
    total = np.zeros(deals)
    for mine, (names, ids, params, user) in enumerate(config.lineups):
        rows = play_deals(deals, config.seed, ids, params, config.rules_array, first_deal=first_deal,
                          seating=SEATING_ALL, user_functions=user, policies=names)
        pay = rows[:, R_PAYOFF : R_PAYOFF + 3].astype(float).reshape(deals, 6, 3)
        policy_at_seat = np.array([[PERMUTATIONS[j, s] for s in range(3)] for j in range(6)])  # (6, 3)
        is_spec = (policy_at_seat == 0) if mine == 0 else (policy_at_seat != 0)
        spec_mean = (pay * is_spec).sum(axis=2) / is_spec.sum(axis=1)
        other_mean = (pay * ~is_spec).sum(axis=2) / (~is_spec).sum(axis=1)
        total += (spec_mean - other_mean).mean(axis=1)
    return total / 2


def _check_task(config: _CheckTasks, task: tuple[int, tuple[int, int]], threads: int | None = None
                ) -> tuple[int, np.ndarray]:
    """A piece (first deal, deals) of a check as :func:`~simkit.runner.simulate.run_dask` plays
    it, tagged with its number."""
    use_threads(threads)
    number, (first_deal, deals) = task
    return number, _check_differences(config, first_deal, deals)


@dataclasses.dataclass(frozen=True)
class _SelfPlayTasks:
    """What every self-play task of a generation shares (:func:`record_selfplay`'s arguments
    but the deals)."""

    seed: int
    ids: np.ndarray
    params: np.ndarray
    rules_array: np.ndarray
    rate: float
    feature_model: np.ndarray


def _selfplay_task(config: _SelfPlayTasks, task: tuple[int, tuple[int, int]], threads: int | None = None
                   ) -> tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A piece (first deal, deals) of a generation's self-play as
    :func:`~simkit.runner.simulate.run_dask` plays it, tagged with its number."""
    use_threads(threads)
    number, (first_deal, deals) = task
    return number, record_selfplay(first_deal, deals, config.seed, config.ids, config.params, config.rules_array,
                                   config.rate, config.feature_model)


def self_play(config: _SelfPlayTasks, first_deal: int, deals: int, client=None,
              quiet: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`record_selfplay` of deals ``first_deal .. first_deal + deals - 1`` (``config``:
    the seed, the base policy's arrays, the rules, the rollout rate and the feature block) here,
    or with a Dask ``client`` in tasks of :data:`SELFPLAY_TASK_DEALS` deals on its cluster, their
    rows put back in deal order: the same arrays (with their progress unless ``quiet``)."""
    if client is None:
        return record_selfplay(first_deal, deals, config.seed, config.ids, config.params, config.rules_array,
                               config.rate, config.feature_model)
    pieces = [(first_deal + lo, min(SELFPLAY_TASK_DEALS, deals - lo)) for lo in range(0, deals, SELFPLAY_TASK_DEALS)]
    parts = run_dask_in_order(_selfplay_task, config, pieces, client,
                              Progress(len(pieces), "tasks", "self-play", progress_enabled(quiet)))
    return tuple(np.concatenate([part[i] for part in parts]) for i in range(3))  # type: ignore[return-value]


def _feature_block() -> np.ndarray:
    """A block that only carries expert's weights (for the features of the self-play rows)."""
    return model_block(np.zeros((N_FEATURES, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(1), np.zeros(1), 0.0,
                       np.array(EXPERT_DEFAULTS))


def _hardware() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores, {platform.system()}"


def _say(quiet: bool, text: str) -> None:
    if not quiet:
        print(text, file=sys.stderr, flush=True)


def _complete(directory: Path) -> dict | None:
    """The metrics of a complete generation folder (metrics and the model they name), else None."""
    metrics_path = directory / METRICS_FILE
    model_path = directory / MODEL_FILE
    if not metrics_path.is_file() or not model_path.is_file():
        return None
    try:
        metrics = read_checked_json(metrics_path, "a generation's metrics")
        model = load_model(model_path)
    except (FileError, SimkitError):
        return None
    return metrics if metrics.get("model_sha256") == model.digest else None


def fit_settings(spec: TrainSpec) -> FitSettings:
    """The network and its fit of a generation of ``spec``."""
    return FitSettings(hidden=spec.hidden, epochs=spec.epochs, alpha=spec.alpha, batch_size=spec.batch_size,
                       learning_rate=spec.learning_rate)


def _generation(spec: TrainSpec, out: Path, g: int, earlier: list[dict], command: str, quiet: bool,
                client=None) -> dict:
    """Play, fit, check and write generation g (the self-play and the check on the Dask
    cluster of ``client`` when given); returns its metrics."""
    start = time.perf_counter()
    seed, rules = spec.seed, spec.rules
    base_path = None if g == 1 else generation_dir(out, g - 1) / MODEL_FILE
    base = "expert" if base_path is None else f"learned:{base_path}"  # the path: for the run record only
    # the model records its base by name and digest, never by path: the previous generation's
    # model relative to the run's folder, and the SHA-256 of the file played
    base_name = "expert" if g == 1 else f"learned:{(generation_dir(Path(), g - 1) / MODEL_FILE).as_posix()}"
    base_digest = None if base_path is None else load_model(base_path).digest
    ids, params, _ = policy_arrays(parse_policies([base] * 3))
    first_deal = (g - 1) * spec.deals
    config = _SelfPlayTasks(seed, ids, params, rules.to_array(), spec.rate, _feature_block())
    x, y, key = self_play(config, first_deal, spec.deals, client, quiet)
    record_seconds = time.perf_counter() - start
    n_decisions = int(np.unique(key).size)
    _say(quiet, f"generation {g}: self-play {spec.deals:,} deals (base {'expert' if g == 1 else f'generation {g - 1}'}): "
                f"{y.size:,} rows from {n_decisions:,} decisions ({record_seconds:.0f} s)")
    validation = ((key // MAX_SAMPLES_PER_DEAL) % VALIDATION_EVERY) == 0
    if validation.all() or not validation.any():
        raise SimkitError("too few deals to hold some out for validation: raise deals", parameters=("deals",))
    fit_start = time.perf_counter()
    network = fit_network(x[~validation], y[~validation], fit_settings(spec), random_state=seed * 1000 + g)
    fit_seconds = time.perf_counter() - fit_start
    prediction = predict(network, x[validation])
    val_mse = float(np.mean((prediction - y[validation]) ** 2))
    val_var = float(np.var(y[validation]))
    gains = offline_gains(prediction, y[validation], key[validation], MARGINS)
    margin = max(gains, key=lambda m: (round(gains[m][0], 6), m))
    loss = [float(v) for v in network.loss_curve_]
    _say(quiet, f"generation {g}: fit {spec.epochs} epochs on {int((~validation).sum()):,} rows "
                f"({fit_seconds:.0f} s): loss {loss[0]:.3f} -> {loss[-1]:.3f}; validation mse {val_mse:.3f} "
                f"(variance {val_var:.3f}); margin {margin:g}: gain {gains[margin][0]:+.4f} ± {gains[margin][1]:.4f} "
                f"牌 per decision, {gains[margin][2]:.1%} of decisions changed")
    deals_seen = spec.deals * g
    # what the model file records is a function of the run's settings, seed and software (no
    # path, no time, no machine), so that the same run gives the same bytes in any folder: the
    # command line (which names --out), the base model's path, wall time and hardware are in the
    # metrics, the run record
    training = {"seed": seed, "generation": g, "deals_seen": deals_seen, "settings": spec.settings(),
                "library": LIBRARY, "numpy": np.__version__, "simkit": __version__, "margin": margin,
                "base": base_name,
                "validation": {"mse": val_mse, "variance": val_var, "gain_per_decision": gains[margin][0]}}
    if base_digest is not None:
        training["base_model_sha256"] = base_digest
    meta = {"rules": rules.to_dict(), "training": training}
    directory = make_out_dir(generation_dir(out, g))
    data = model_bytes(network_block(network, np.array(EXPERT_DEFAULTS), margin), meta)
    atomic_write_bytes(directory / MODEL_FILE, data)
    model = load_model(directory / MODEL_FILE)
    check_seed = seed + CHECK_SEED_OFFSET
    differences = strength_check(f"learned:{directory / MODEL_FILE}", spec.check_deals, check_seed, rules,
                                 client=client, quiet=quiet)
    interval = mean_interval(differences)
    seconds = time.perf_counter() - start
    _say(quiet, f"generation {g}: check against expert ({spec.check_deals:,} duplicate deals, seed {check_seed}): "
                f"{interval.estimate:+.3f} [{interval.lo:+.3f}, {interval.hi:+.3f}] 牌 per seat per deal "
                f"({seconds:.0f} s in all)")
    metrics = {"generation": g, "base": base, "base_model_sha256": base_digest, "first_deal": first_deal,
               "deals": spec.deals, "rows": int(y.size), "decisions": n_decisions, "deals_seen": deals_seen,
               "loss_curve": loss,
               "validation_mse": val_mse, "validation_variance": val_var,
               "offline_gains": {f"{m:g}": list(v) for m, v in gains.items()}, "margin": margin,
               "check": {"mean": interval.estimate, "lo": interval.lo, "hi": interval.hi,
                         "deals": spec.check_deals, "seed": check_seed},
               "record_seconds": record_seconds, "fit_seconds": fit_seconds, "seconds": seconds,
               "wall_seconds_to_here": round(sum(m["seconds"] for m in earlier) + seconds, 1),
               "hardware": _hardware(), "model_sha256": model.digest, "command": command}
    write_checked_json(directory / METRICS_FILE, metrics)
    return metrics


def train(spec: TrainSpec, out: str | os.PathLike, execution: Execution = Execution(), *, command: str = "",
          client=None) -> TrainResult:
    """Train (or resume training) ``spec`` in ``out``; returns every generation's metrics and the
    path of the shipped model (``out/model.npz``: the generation with the best check).
    ``command``: the command line, for the generations' run records (``metrics.json``).

    ``execution.backend == 'dask'``: the self-play and the checks run as tasks on a Dask
    cluster (``client`` when given, left open; else one connected here to
    ``execution.scheduler``, or to a new ``LocalCluster`` of ``execution.workers`` processes,
    before anything is written, and closed at the end); the files are those of a local run.
    ``workers`` > 1 needs ``backend='dask'`` (a local run plays in this process, on every
    core)."""
    backend, workers, scheduler = execution.backend, execution.workers, execution.scheduler
    check_backend(backend, workers, scheduler)
    if workers > 1 and backend != "dask":
        raise SimkitError(f"workers needs backend='dask' (a local training plays in this process, on every core), "
                          f"got backend={backend!r}", parameters=("workers", "backend"))
    directory = check_run_folder(out, "train")
    with dask_session(backend, workers, scheduler, client) as client:  # connected before anything is written
        return _train(spec, make_out_dir(directory), command, execution.quiet, client)


def _train(spec: TrainSpec, directory: Path, command: str, quiet: bool, client) -> TrainResult:
    """:func:`train` with its folder made and its Dask client (or None) connected."""
    results: list[dict] = []
    with FolderLock(directory):
        check_run_identity(directory, "train", spec.identity())
        for g in range(1, spec.generations + 1):
            metrics = _complete(generation_dir(directory, g)) if len(results) == g - 1 else None
            if metrics is not None:
                _say(quiet, f"generation {g}: complete (check {metrics['check']['mean']:+.3f}), kept")
            else:
                metrics = _generation(spec, directory, g, results, command, quiet, client)
            results.append(metrics)
        best = best_generation(results)
        shutil.copyfile(generation_dir(directory, best["generation"]) / MODEL_FILE, directory / f".{MODEL_FILE}.tmp")
        os.replace(directory / f".{MODEL_FILE}.tmp", directory / MODEL_FILE)
        write_text(directory / REPORT_FILE, training_report(results, spec, directory))
    return TrainResult(directory, results, directory / MODEL_FILE)


def training_report(results: list[dict], spec: TrainSpec, out: Path) -> str:
    """The Markdown report (and its two plots, written into ``out``)."""
    seed, rules = spec.seed, spec.rules
    training_loss_plot(results, out)
    training_strength_plot(results, out)
    best = best_generation(results)
    lines = [f"# Training report ({out.name})", "",
             f"Seed {seed}; rules {rules.to_dict() if rules != RuleSet() else 'default'}; {spec.deals:,} self-play "
             f"deals per generation, rollouts at {spec.rate:g} of the decisions; network {spec.hidden}, "
             f"{spec.epochs} epochs, L2 {spec.alpha:g} ({LIBRARY}).", "",
             "| generation | base | deals seen | rows | validation mse / variance | margin | offline gain per "
             "decision | decisions changed | check vs expert [95 %] | wall s |", "|---:|---|---:|---:|---|---:|---|---:|---|---:|"]
    for m in results:
        gain = m["offline_gains"][f"{m['margin']:g}"]
        base = "expert" if m["generation"] == 1 else f"gen {m['generation'] - 1}"
        c = m["check"]
        lines.append(f"| {m['generation']} | {base} | {m['deals_seen']:,} | {m['rows']:,} | "
                     f"{m['validation_mse']:.3f} / {m['validation_variance']:.3f} | {m['margin']:g} | "
                     f"{gain[0]:+.4f} ± {gain[1]:.4f} | {gain[2]:.1%} | {c['mean']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}] "
                     f"| {m['seconds']:.0f} |")
    lines += ["", "Offline gain per decision (牌, ± standard error) of the policy at each margin, on the "
                  "validation deals' rollouts (the chosen margin is the largest gain):", "",
              "| generation | " + " | ".join(f"margin {m:g}" for m in MARGINS) + " |",
              "|---:|" + "---|" * len(MARGINS)]
    for m in results:
        cells = []
        for margin in MARGINS:
            mean, se, changed = m["offline_gains"].get(f"{margin:g}", (float("nan"),) * 3)
            cells.append(f"{mean:+.4f} ± {se:.4f} ({changed:.1%} changed)")
        lines.append(f"| {m['generation']} | " + " | ".join(cells) + " |")
    lines += ["", f"Shipped: generation {best['generation']} (`model.npz`, the best check; the check deals, seed "
                  f"{best['check']['seed']}, are selection deals: evaluate on other seeds).", "",
              "![loss](loss.png)", "", "![strength](strength.png)", ""]
    return "\n".join(lines)
