"""Hand equity deals: one seat's dealt hand fixed, the other cards shuffled, played to the end.

Equity deal number N of a run with seed S, hand H and seat K (seat 0 deals, as in a run of
independent deals) is dealt from :func:`simkit.deck.fixed_hand_deck`: K's dealing positions
(:func:`simkit.deck.seat_block`: 0..30 for the dealer, 31..60 for seat 1, 61..90 for seat 2)
hold H, and the other 81 or 82 cards, in ascending card-id order, are shuffled with stream 0
of (S, N), the stream that shuffles the ordinary deal N.  The policies draw from the streams
1 + p of (S, N), as in ``simkit simulate`` (:mod:`simkit.rng`).  So equity deal N is a pure
function of (rules, policies, S, N, H, K), whatever batch, thread or process plays it.
A uniformly random H (a dealt hand) makes the equity deals exactly as likely as ordinary deals.

A run writes a dataset folder with the row format of ``simkit simulate``
(:mod:`simkit.runner.batch`; ``dealer`` is 0, ``dealt_*_K`` describe H) through the storage
helpers of :mod:`simkit.storage.dataset`: one Parquet file per batch, a manifest whose identity
adds ``equity`` = {hand, seat, deck} to simulate's, so :func:`simkit.storage.load_dataset`,
``simkit report`` and the summaries read it, and a folder holding another run is refused.
Re-running with the same arguments computes only the batches that are missing or damaged.

>>> hand = "YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2"  # wins on the deal (天胡)
>>> config = make_config(hand, 0, deals=5, policies="greedy,greedy,greedy", seed=1)
>>> config.identity()["equity"]["hand"], config.n_batches
('YJ*3 YS YX YC*3 YZ*2 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX', 1)
>>> make_config("YJ*3", 1, deals=5, policies="greedy,greedy,greedy", seed=1)
Traceback (most recent call last):
...
simkit.errors.CardError: seat 1's dealt hand has 30 cards, got 3 (seat 0, the dealer, holds 31)
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import sys
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa

import simkit
from simkit.cards import format_counts
from simkit.deck import fixed_hand_cards, fixed_hand_decks, parse_dealt_hand
from simkit.errors import SimkitError
from simkit.progress import Progress, progress_enabled
from simkit.policies.registry import PolicySpec, is_user_policy, parse_policies, policy_arrays
from simkit.rng import root_key
from simkit.rules import RuleSet
from simkit.runner.batch import check_batch_memory, results_table
from simkit.runner.play import play_decks
from simkit.runner.simulate import (
    SimulationConfig,
    check_backend,
    check_policy_sources,
    dask_session,
    policy_change_error,
    run_batches,
    run_dask,
)
from simkit.storage.dataset import (
    DatasetError,
    EQUITY,
    FILES,
    KIND,
    MANIFEST,
    POLICY_LABELS,
    POLICY_SOURCES,
    batch_path,
    batches_verified,
    column_labels,
    config_digest,
    read_manifest,
    verify_batches,
    write_batch,
    write_manifest,
)
from simkit.storage.lock import FolderLock
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import check_run_folder, identity_mismatch

DECK_SCHEME = "fixed-seat-block-v1"  # how the fixed hand and the shuffled rest fill the deck (module docstring)


@dataclasses.dataclass(frozen=True)
class EquityConfig:
    """What defines an equity run's content: the run of ordinary deals it varies (``base``:
    deals, seed, policies, rules, batch size) and the fixed hand (28 counts) of ``seat``."""

    base: SimulationConfig
    hand: tuple[int, ...]
    seat: int = 0

    def __post_init__(self) -> None:
        if self.base.session_length != 1 or self.base.seating != "fixed":
            raise SimkitError("equity deals are independent deals with fixed seats (seat k plays policy k)")
        parse_dealt_hand(np.array(self.hand, dtype=np.int64), self.seat)

    @property
    def hand_text(self) -> str:
        return format_counts(np.array(self.hand, dtype=np.int64))

    @property
    def n_batches(self) -> int:
        return self.base.n_batches

    def batch_range(self, batch: int) -> tuple[int, int]:
        return self.base.batch_range(batch)

    def identity(self) -> dict:
        return {**self.base.identity(), EQUITY: {"hand": self.hand_text, "seat": self.seat, "deck": DECK_SCHEME}}


def make_config(hand: str | Sequence[int] | np.ndarray, seat: int, deals: int, policies: str | Sequence[str | PolicySpec],
                seed: int, rules: RuleSet | None = None, batch_size: int = 10_000) -> EquityConfig:
    """Validated :class:`EquityConfig` (one-line :class:`~simkit.errors.SimkitError` otherwise)."""
    counts = parse_dealt_hand(hand, seat)
    for name, value in (("deals", deals), ("seed", seed), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise SimkitError(f"{name} must be an integer, got {value!r}", parameters=(name,))
    base = SimulationConfig(int(deals), int(seed), parse_policies(policies), rules if rules is not None else RuleSet(),
                            int(batch_size))
    return EquityConfig(base, tuple(int(c) for c in counts), int(seat))


def equity_decks(counts: np.ndarray, seat: int, seed: int, n_deals: int, first_deal: int = 0) -> np.ndarray:
    """(n_deals, 112) decks of equity deals first_deal .. first_deal + n_deals - 1."""
    hand_ids, rest_ids = fixed_hand_cards(np.asarray(counts, dtype=np.int64))
    decks = np.zeros((int(n_deals), 112), dtype=np.int64)
    fixed_hand_decks(root_key(seed), int(first_deal), int(seat), hand_ids, rest_ids, decks)
    return decks


def play_equity(counts: np.ndarray, seat: int, n_deals: int, seed: int, policy_ids: np.ndarray, params: np.ndarray,
                rules_array: np.ndarray, first_deal: int = 0,
                user_functions: tuple = (None, None, None), policies: Sequence[str] | None = None) -> np.ndarray:
    """Result rows (n_deals, N_RESULT) of equity deals first_deal .. first_deal + n_deals - 1
    (the runner's play loop, :func:`simkit.runner.play.play_decks`: a deal that stopped before
    its end is a one-line DealError naming ``policies``, by default the policies' ids' names)."""
    decks = equity_decks(counts, seat, seed, n_deals, first_deal)
    return play_decks(decks, seed, policy_ids, params, rules_array, first_deal=first_deal, dealer=0,
                      user_functions=user_functions, policies=policies)


def compute_batch(config: EquityConfig, batch: int, threads: int | None = None) -> tuple[int, pa.Table]:
    """Play one batch of equity deals and return its table (the rows of ``simkit simulate``)."""
    import numba

    if threads is not None:
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    ids, params, user = policy_arrays(config.base.policies)
    check_policy_sources(config.base)
    first, stop = config.batch_range(batch)
    results = play_equity(np.array(config.hand, dtype=np.int64), config.seat, stop - first, config.base.seed, ids,
                          params, config.base.rules.to_array(), first_deal=first, user_functions=user,
                          policies=config.base.policy_texts())
    return batch, results_table(results, first, batch, config.base.policy_labels())


def _prepare(directory: Path, config: EquityConfig) -> tuple[dict, list[int], list[str]]:
    """Check or create the manifest (the caller holds the folder lock), verify every batch
    file already there; the batches to compute and what was wrong."""
    identity = config.identity()
    digest = config_digest(identity)
    manifest = read_manifest(directory)
    if manifest is None:
        strays = sorted(p.name for p in directory.glob("batch-*.parquet"))
        if strays:
            raise DatasetError(f"{directory}: holds batch files ({strays[0]}, ...) but no {MANIFEST}; "
                               "use an empty folder")
        manifest = {"kind": KIND, **identity, "session_length": 1, "config_digest": digest,
                    "batches": config.n_batches, POLICY_LABELS: config.base.policy_labels(),
                    "simkit_version": simkit.__version__,
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), FILES: {}}
    else:
        if POLICY_SOURCES in identity and manifest.get(POLICY_SOURCES) != identity[POLICY_SOURCES]:
            raise policy_change_error(directory, manifest.get(POLICY_SOURCES), identity[POLICY_SOURCES])
        wanted = {**identity, "session_length": 1}
        stored = {k: manifest.get(k, 1 if k == "session_length" else None) for k in wanted}
        problem = identity_mismatch(directory, "equity-deals", stored, wanted)
        if problem is not None:
            raise DatasetError(problem, parameters=("out",))
        if EQUITY not in manifest:
            raise DatasetError(f"{directory} holds a simulation, not an equity run (use another folder for out)",
                               parameters=("out",))
    return verify_batches(directory, manifest, config.n_batches, config.batch_range, digest)


def _complete_without_writing(directory: Path, config: EquityConfig, max_batches: int | None) -> bool:
    """Whether ``directory`` (where this process may not write) already holds this equity run's
    batches (all, or the first ``max_batches``), each verified against its recorded sha256:
    resuming it has nothing to write."""
    if not directory.is_dir():
        return False
    identity = config.identity()
    try:
        manifest = read_manifest(directory)
        if manifest is None or EQUITY not in manifest or any(
                manifest.get(key, 1 if key == "session_length" else None) != value
                for key, value in {**identity, "session_length": 1}.items()):
            return False
        wanted = config.n_batches if max_batches is None else min(config.n_batches, max_batches)
        return batches_verified(directory, manifest, wanted, config.batch_range, config_digest(identity))
    except DatasetError:
        return False


def _batches(config: EquityConfig, todo: Sequence[int], workers: int, client=None) -> Iterator[tuple[int, pa.Table]]:
    if client is not None:  # simkit simulate's Dask path: tables come back, this process writes them
        yield from run_dask(compute_batch, config, todo, client)
        return
    if workers <= 1 or len(todo) <= 1:
        for b in todo:
            yield compute_batch(config, b)
        return
    # the workers of simkit simulate: they end with this process, however it ends
    yield from run_batches(compute_batch, config, todo, workers)


def run_equity(config: EquityConfig, out: str | os.PathLike, workers: int = 1, quiet: bool = True,
               max_batches: int | None = None, backend: str = "local", scheduler: str | None = None,
               client=None) -> Path:
    """Compute the equity deals of ``config`` into the dataset folder ``out`` (resumable: only
    missing or damaged batch files are computed); returns its path.  ``max_batches`` computes
    only the first that many batches (the run's identity does not depend on it).  A folder
    where nothing can be written (read-only media) that holds the run is read as it is.

    ``backend='dask'``: the batches run on a Dask cluster as ``simkit simulate``'s do
    (:func:`~simkit.runner.simulate.run_dask`: ``client``, else one connected here to
    ``scheduler`` or a ``LocalCluster`` of ``workers``, closed at the end); the tables come
    back and this process writes them, the same bytes as local."""
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise SimkitError(f"workers must be >= 1, got {workers!r}", parameters=("workers",))
    check_backend(backend, int(workers), scheduler)
    registered = sorted({s.name for s in config.base.policies if is_user_policy(s) and not s.is_import_path})
    if registered and (workers > 1 or backend == "dask"):
        # policies registered by name live in this process only (one named by import path
        # is imported by every worker)
        print(f"simkit: policy {', '.join(registered)} is registered in this process only: running in this "
              "process, one worker (name it by import path, package.module:function, to use workers)",
              file=sys.stderr)
        workers, backend = 1, "local"
    if backend == "local":  # (a Dask worker's memory is its machine's)
        check_batch_memory(min(config.base.batch_size, config.base.deals), min(int(workers), config.n_batches))
    try:  # new, empty or an equity run's; not inside another dataset (its readers would read these rows)
        directory = check_run_folder(out, "equity-deals")
    except SimkitError:  # e.g. on read-only media: a complete run has nothing to write, nothing to lock
        if not os.fspath(out) or not _complete_without_writing(Path(os.fspath(out)), config, max_batches):
            raise
        return Path(os.fspath(out))
    with dask_session(backend, int(workers), scheduler, client) as client, \
            FolderLock(make_out_dir(directory)):  # connected before anything is written
        manifest, todo, problems = _prepare(directory, config)
        # the policy columns' values of the folder's run (a run started before plain labels keeps its own)
        config = dataclasses.replace(config, base=dataclasses.replace(config.base, labels=column_labels(manifest)))
        for line in problems:
            print(f"simkit: {line}", file=sys.stderr)
        if max_batches is not None:
            todo = [b for b in todo if b < max_batches]
        records = dict(manifest[FILES])
        stream = _batches(config, todo, int(workers), client)
        progress = Progress(len(todo), "batches", "equity", progress_enabled(quiet))
        try:
            for batch, table in stream:
                first, stop = config.batch_range(batch)
                records[batch_path(directory, batch).name] = write_batch(
                    directory, batch, table, {"batch": batch, "first_deal": first, "deals": stop - first,
                                              "config": manifest["config_digest"], "seed": config.base.seed})
                manifest = write_manifest(directory, {**manifest, FILES: records})
                progress.update()
        finally:
            progress.close()
            close = getattr(stream, "close", None)
            if close is not None:
                close()
    return directory
