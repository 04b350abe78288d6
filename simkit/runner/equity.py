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
>>> from simkit.deck import seat_block
>>> decks = equity_decks(EquitySpec(hand, 0).counts, 0, seed=1, n_deals=5)
>>> start, size = seat_block(0)
>>> decks.shape, bool((decks[:, start : start + size] == decks[0, start : start + size]).all())  # the hand's cards
((5, 112), True)

The run's spec, its identity and validation: :class:`simkit.specs.equity.EquitySpec`.
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa

import simkit
from simkit.deck import fixed_hand_cards, fixed_hand_decks
from simkit.errors import SimkitError
from simkit.progress import Progress, progress_enabled
from simkit.policies.registry import policy_arrays
from simkit.rng import root_key
from simkit.runner.batch import check_batch_memory, results_table
from simkit.runner.play import play_decks
from simkit.runner.simulate import (
    check_backend,
    check_manifest_identity,
    check_policy_sources,
    dask_session,
    manifest_fields,
    run_batches,
    run_dask,
    where_policies_run,
)
from simkit.specs.base import Execution
from simkit.specs.equity import EquitySpec
from simkit.storage.dataset import (
    DatasetError,
    EQUITY,
    FILES,
    KIND,
    MANIFEST,
    POLICY_LABELS,
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
from simkit.storage.runs import check_run_folder

QUIET = Execution(quiet=True)  # a library call shows no progress unless asked


def equity_decks(counts: np.ndarray, seat: int, seed: int, n_deals: int, first_deal: int = 0) -> np.ndarray:
    """(n_deals, 112) decks of equity deals first_deal .. first_deal + n_deals - 1."""
    hand_ids, rest_ids = fixed_hand_cards(np.asarray(counts, dtype=np.int64))
    decks = np.zeros((int(n_deals), 112), dtype=np.int64)
    fixed_hand_decks(root_key(seed), int(first_deal), int(seat), hand_ids, rest_ids, decks)
    return decks


def play_equity(spec: EquitySpec, n_deals: int, first_deal: int = 0) -> np.ndarray:
    """Result rows (n_deals, N_RESULT) of the equity deals first_deal .. first_deal + n_deals - 1
    of ``spec`` (the runner's play loop, :func:`simkit.runner.play.play_decks`: a deal that
    stopped before its end is a one-line DealError naming the policies)."""
    base = spec.simulation
    ids, params, user = policy_arrays(base.policies)
    decks = equity_decks(spec.counts, spec.seat, base.seed, n_deals, first_deal)
    return play_decks(decks, base.seed, ids, params, base.rules.to_array(), first_deal=first_deal, dealer=0,
                      user_functions=user, policies=base.policy_texts())


def compute_batch(spec: EquitySpec, batch: int, threads: int | None = None) -> tuple[int, pa.Table]:
    """Play one batch of equity deals and return its table (the rows of ``simkit simulate``)."""
    import numba

    if threads is not None:
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    check_policy_sources(spec.simulation)
    first, stop = spec.simulation.batch_range(batch)
    return batch, results_table(play_equity(spec, stop - first, first), first, batch, spec.simulation.policy_labels())


def _prepare(directory: Path, spec: EquitySpec) -> tuple[dict, list[int], list[str]]:
    """Check or create the manifest (the caller holds the folder lock), verify every batch
    file already there; the batches to compute and what was wrong."""
    base = spec.simulation
    identity = spec.identity()
    digest = config_digest(identity)
    manifest = read_manifest(directory)
    if manifest is None:
        strays = sorted(p.name for p in directory.glob("batch-*.parquet"))
        if strays:
            raise DatasetError(f"{directory}: holds batch files ({strays[0]}, ...) but no {MANIFEST}; "
                               "use an empty folder")
        manifest = {"kind": KIND, **identity, "session_length": 1, "config_digest": digest,
                    "batches": base.n_batches, POLICY_LABELS: base.policy_labels(),
                    "simkit_version": simkit.__version__,
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), FILES: {}}
    else:
        check_manifest_identity(directory, "equity-deals", manifest, {**identity, "session_length": 1})
        if EQUITY not in manifest:
            raise DatasetError(f"{directory} holds a simulation, not an equity run (use another folder for out)",
                               parameters=("out",))
    return verify_batches(directory, manifest, base.n_batches, base.batch_range, digest)


def _complete_without_writing(directory: Path, spec: EquitySpec, max_batches: int | None) -> bool:
    """Whether ``directory`` (where this process may not write) already holds this equity run's
    batches (all, or the first ``max_batches``), each verified against its recorded sha256:
    resuming it has nothing to write."""
    if not directory.is_dir():
        return False
    identity = spec.identity()
    wanted = {**identity, "session_length": 1}
    try:
        manifest = read_manifest(directory)
        if manifest is None or EQUITY not in manifest or manifest_fields(manifest, wanted) != wanted:
            return False
        base = spec.simulation
        batches = base.n_batches if max_batches is None else min(base.n_batches, max_batches)
        return batches_verified(directory, manifest, batches, base.batch_range, config_digest(identity))
    except DatasetError:
        return False


def _batches(spec: EquitySpec, todo: Sequence[int], workers: int, client=None) -> Iterator[tuple[int, pa.Table]]:
    if client is not None:  # simkit simulate's Dask path: tables come back, this process writes them
        yield from run_dask(compute_batch, spec, todo, client)
        return
    if workers <= 1 or len(todo) <= 1:
        for b in todo:
            yield compute_batch(spec, b)
        return
    # the workers of simkit simulate: they end with this process, however it ends
    yield from run_batches(compute_batch, spec, todo, workers)


def run_equity(spec: EquitySpec, out: str | os.PathLike, execution: Execution = QUIET, *,
               max_batches: int | None = None, client=None) -> Path:
    """Compute the equity deals of ``spec`` into the dataset folder ``out`` (resumable: only
    missing or damaged batch files are computed); returns its path.  ``max_batches`` computes
    only the first that many batches (the run's identity does not depend on it).  A folder
    where nothing can be written (read-only media) that holds the run is read as it is.

    ``execution.backend='dask'``: the batches run on a Dask cluster as ``simkit simulate``'s do
    (:func:`~simkit.runner.simulate.run_dask`: ``client``, else one connected here to
    ``execution.scheduler`` or a ``LocalCluster`` of ``execution.workers``, closed at the end);
    the tables come back and this process writes them, the same bytes as local."""
    check_backend(execution.backend, execution.workers, execution.scheduler)
    base = spec.simulation
    execution = where_policies_run(base.policies, execution)
    workers, backend, scheduler = execution.workers, execution.backend, execution.scheduler
    if backend == "local":  # (a Dask worker's memory is its machine's)
        check_batch_memory(min(base.batch_size, base.deals), min(workers, base.n_batches))
    try:  # new, empty or an equity run's; not inside another dataset (its readers would read these rows)
        directory = check_run_folder(out, "equity-deals")
    except SimkitError:  # e.g. on read-only media: a complete run has nothing to write, nothing to lock
        if not os.fspath(out) or not _complete_without_writing(Path(os.fspath(out)), spec, max_batches):
            raise
        return Path(os.fspath(out))
    with dask_session(backend, workers, scheduler, client) as client, \
            FolderLock(make_out_dir(directory)):  # connected before anything is written
        manifest, todo, problems = _prepare(directory, spec)
        # the policy columns' values of the folder's run (a run started before plain labels keeps its own)
        spec = spec.replace(labels=column_labels(manifest))
        for line in problems:
            print(f"simkit: {line}", file=sys.stderr)
        if max_batches is not None:
            todo = [b for b in todo if b < max_batches]
        records = dict(manifest[FILES])
        stream = _batches(spec, todo, workers, client)
        progress = Progress(len(todo), "batches", "equity", progress_enabled(execution.quiet))
        try:
            for batch, table in stream:
                first, stop = spec.simulation.batch_range(batch)
                records[batch_path(directory, batch).name] = write_batch(
                    directory, batch, table, {"batch": batch, "first_deal": first, "deals": stop - first,
                                              "config": manifest["config_digest"], "seed": spec.seed})
                manifest = write_manifest(directory, {**manifest, FILES: records})
                progress.update()
        finally:
            progress.close()
            close = getattr(stream, "close", None)
            if close is not None:
                close()
    return directory
