"""Duplicate (seat-rotated) play of two policies: the same deals under every seating.

For policies A and B the six seatings with both present (ABB, BAB, BBA, AAB, ABA, BAA) are each
simulated on the *same* deals (deal N has the same cards whatever the policies, see
:mod:`simkit.rng`), so the luck of the cards falls equally on A and B and cancels in
the per-deal comparison. Each seating is an ordinary resumable dataset under
``OUT/seating-XYZ``; ``OUT/comparison.json`` records what is compared.

A deal's payoffs sum to zero, so a seating's difference is 1.5 x the lone policy's payoff and
a *pair* of complementary seatings (:data:`SEATING_PAIRS`: A alone at seat i, then B alone
there) is a duplicate comparison of its own.  Design ``six`` (the default) plays every deal under
the six seatings; design ``pairs`` plays each pair on the deals of its own seed
(:func:`seating_seed`), so row N of a comparison holds three independent deals, one per pair:
unbiased for the same mean difference, and more precise per CPU-second where a deal's three
pairs are positively correlated (docs/measurements.md, "Designs of the deals: measurements").

>>> import tempfile
>>> spec = DuplicateSpec("greedy", "random", deals=20, seed=3, batch_size=10)
>>> out = run_duplicate(spec, tempfile.mkdtemp(), Execution(quiet=True))
>>> sorted(p.name for p in out.iterdir())[:3]
['comparison.json', 'seating-AAB', 'seating-ABA']
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from simkit.defaults import DEFAULT_DUPLICATE_DESIGN, DUPLICATE_DESIGNS
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec, is_user_policy, params_by_name, parse_policies
from simkit.rng import seating_pair_seed
from simkit.specs.base import Execution
from simkit.specs.compare import SEATINGS, DuplicateSpec
from simkit.runner.batch import check_batch_memory
from simkit.runner.simulate import dask_session, simulate, submit_ahead
from simkit.specs.simulate import SimulateSpec
from simkit.storage.lock import FolderLock
from simkit.storage.paths import check_outside_datasets, make_out_dir
from simkit.storage.runs import COMPARISON_FILE, check_run_folder, check_run_identity
from simkit.storage.files import FileError, read_checked_json

# SEATINGS (simkit.specs.compare, where the identity names them): ABB, BAB, BBA, AAB, ABA, BAA
# the complementary pairs: A alone at seat i, B alone at seat i (i = 0, 1, 2)
SEATING_PAIRS: tuple[tuple[str, str], ...] = (("ABB", "BAA"), ("BAB", "ABA"), ("BBA", "AAB"))


def check_design(design: str) -> str:
    """A comparison's design, one of :data:`simkit.defaults.DUPLICATE_DESIGNS`; a one-line
    :class:`SimkitError` otherwise."""
    if not isinstance(design, str) or design not in DUPLICATE_DESIGNS:
        raise SimkitError(f"design must be one of {', '.join(DUPLICATE_DESIGNS)}, got {design!r}",
                          parameters=("design",))
    return design


def seating_seed(seed: int, seating: str, design: str = DEFAULT_DUPLICATE_DESIGN) -> int:
    """The seed whose deals ``seating`` plays in a comparison of ``seed``: ``seed`` itself under
    design ``six``; under ``pairs`` its pair's (:func:`simkit.rng.seating_pair_seed`).

    >>> seating_seed(5, "ABB", "pairs") == seating_seed(5, "BAA", "pairs") == seating_seed(5, "BAB") == 5
    True
    >>> seating_seed(5, "BAB", "pairs") == seating_seed(5, "ABA", "pairs") != seating_seed(5, "AAB", "pairs")
    True
    """
    if check_design(design) == "six":
        return int(seed)
    pair = next(i for i, members in enumerate(SEATING_PAIRS) if seating in members)
    return seating_pair_seed(seed, pair)


# the identity fields added after comparison folders were first written, with the value an older
# folder implies (simkit.storage.runs.check_run_identity's ``implied``)
IMPLIED = {"design": "six"}


def comparison_design(identity: dict) -> str:
    """The design of a comparison's or a tournament's identity: ``six`` for a folder written
    before designs were recorded."""
    return identity.get("design", IMPLIED["design"])


def seating_policies(policy_a: PolicySpec, policy_b: PolicySpec, seating: str) -> tuple[PolicySpec, ...]:
    """The three seats' policies of a seating label such as ``"ABB"``."""
    return tuple(policy_a if c == "A" else policy_b for c in seating)


def seating_dir(out: str | os.PathLike, seating: str) -> Path:
    return Path(out) / f"seating-{seating}"


def run_duplicate(spec: DuplicateSpec, out: str | os.PathLike, execution: Execution = Execution(), *, client=None,
                  max_batches: int | None = None) -> Path:
    """Simulate the six seatings of the spec's A and B on deals 0..deals-1 (resumable); returns ``out``.

    ``spec.design``: ``six`` (every seating on the deals of the seed) or ``pairs`` (each pair of
    seatings on the deals of its own seed, :func:`seating_seed`).

    ``execution.backend='dask'``: the seatings' batches run on a Dask cluster (as
    :func:`~simkit.runner.simulate.simulate`'s), through ``client`` when given, else one client
    connected once for the six seatings (to ``execution.scheduler``, or a ``LocalCluster`` of
    ``execution.workers``).

    ``max_batches`` computes only the first batches of each seating (for sequential tests).
    A folder holding another comparison is refused.  A folder where nothing can be written
    (read-only media) that holds this comparison's deals is read as it is (nothing to write);
    with deals missing, the one-line error says it cannot be written.
    """
    a, b, rules = spec.policy_a, spec.policy_b, spec.rules
    deals, seed, batch_size, design = spec.deals, spec.seed, spec.batch_size, spec.design
    workers, backend = execution.workers, execution.backend
    # every seating's run is valid (seed, deals, batch size) before anything is written
    config = SimulateSpec(deals, seating_policies(a, b, SEATINGS[0]), seed, rules, batch_size, seating="fixed")
    if backend == "local":  # (a Dask worker's memory is its machine's)
        check_batch_memory(min(config.batch_size, config.deals), min(workers, config.n_batches))
    identity = spec.identity()  # a folder written before designs holds design six (IMPLIED)
    # a new identity also records each policy's parameters by name (as dataset manifests do); they
    # are not compared (the texts identify the policies), and files written before them lack them
    recorded = {"policy_a_params": params_by_name(a), "policy_b_params": params_by_name(b)}
    with dask_session(backend, workers, execution.scheduler, client) as client:  # before anything is written
        try:
            directory = check_run_folder(out, "comparison")
        except SimkitError:  # e.g. read-only media: only a folder that holds this comparison may be read
            directory = Path(os.fspath(out))
            if not os.fspath(out) or not (directory / COMPARISON_FILE).is_file():
                raise
            check_outside_datasets(directory)
            check_run_identity(directory, "comparison", identity, recorded=recorded, stored=read_comparison(directory),
                               implied=IMPLIED)
            # each seating is complete (or its one-line error says what cannot be written)
            execution = dataclasses.replace(execution, quiet=True)
        else:
            with FolderLock(make_out_dir(directory)):
                check_run_identity(directory, "comparison", identity, recorded=recorded, implied=IMPLIED)
        quiet = execution.quiet
        for seating in SEATINGS:  # each a run of fixed seats: the six runs are the rotation
            simulate(SimulateSpec(deals, list(seating_policies(a, b, seating)), seating_seed(seed, seating, design),
                                  rules, batch_size, seating="fixed"),
                     seating_dir(directory, seating), Execution(workers, backend, quiet=quiet), max_batches=max_batches,
                     client=client)
    return directory


def submit_duplicate_ahead(spec: DuplicateSpec, out: str | os.PathLike, client) -> list:
    """The batches of :func:`run_duplicate`'s six seatings (the same spec and folder) that ``out``
    lacks, submitted now to the Dask cluster of ``client`` as the seatings' runs will submit
    them (:func:`~simkit.runner.simulate.submit_ahead`): a tournament keeps the workers busy
    with the next pairing while this process reads and rates the current one.  Nothing for a
    policy registered by name (it runs in this process only)."""
    a, b = spec.policy_a, spec.policy_b
    if any(is_user_policy(s) and not s.is_import_path for s in (a, b)):
        return []
    futures = []
    for seating in SEATINGS:
        config = SimulateSpec(spec.deals, parse_policies(list(seating_policies(a, b, seating))),
                              seating_seed(spec.seed, seating, spec.design), spec.rules, spec.batch_size, 1, "fixed")
        futures += submit_ahead(config, seating_dir(out, seating), client)
    return futures


def read_comparison(out: str | os.PathLike) -> dict:
    """The identity of the comparison stored in ``out``, verified (its digest, its kind and
    fields): a one-line error naming the file otherwise."""
    path = Path(out) / COMPARISON_FILE
    if not os.path.lexists(path):
        raise SimkitError(f"{out}: no {COMPARISON_FILE} (not a simkit comparison folder)")
    repair = "restore it, or re-run simkit compare with the comparison's arguments into a new folder"
    identity = read_checked_json(path, "a comparison's identity", repair)
    fields = {"policy_a": str, "policy_b": str, "seed": int, "deals": int, "batch_size": int}
    named = [identity.get(k, {}) for k in ("policy_a_params", "policy_b_params")]  # absent in older files
    typed = all(isinstance(identity.get(k), t) and not isinstance(identity.get(k), bool) for k, t in fields.items())
    by_name = all(isinstance(d, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                              for v in d.values()) for d in named)
    if identity.get("kind") != "simkit.duplicate" or not typed or not by_name:
        raise FileError(path, f"is not a comparison's identity (no kind simkit.duplicate with "
                              f"{', '.join(fields)}); {repair}")
    if comparison_design(identity) not in DUPLICATE_DESIGNS:
        raise FileError(path, f"has design {identity['design']!r}, not one of {', '.join(DUPLICATE_DESIGNS)}; {repair}")
    return identity
