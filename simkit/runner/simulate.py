"""``simkit simulate``: many deals to a Parquet dataset, parallel, resumable, local or Dask.

>>> import tempfile
>>> spec = SimulateSpec(deals=60, policies="greedy,random,random", seed=1, batch_size=25)
>>> path = simulate(spec, tempfile.mkdtemp(), Execution(quiet=True))
>>> from simkit.storage import load_dataset
>>> len(load_dataset(path, columns=["winner"]))
60

Parallelism: deals run in batches of a fixed size (independent of the worker count). With
``workers=1`` batches run in this process on numba threads; with ``workers=K`` they run in K
loky processes, each with ``cores // K`` numba threads (no oversubscription); with
``backend="dask"`` they run on a Dask cluster, one task per batch (:func:`run_dask`; ``scheduler``
is a cluster address, reached and checked for workers within ``DASK_TIMEOUT_S`` before anything
is written; without one a ``LocalCluster`` of K single-threaded workers is started).
Batches travel back as Arrow tables and only this process writes files, holding the folder's
lock (:class:`~simkit.storage.lock.FolderLock`).  An interrupt (SIGINT, or SIGTERM, which the
CLI turns into one) kills the workers at once; after a SIGKILL of this process each loky
worker sees its parent go (a pipe, :func:`run_batches`) and exits.

User policies: a policy named by import path (``package.module:function``,
:mod:`simkit.policies.registry`) runs with any worker count and on Dask: each worker imports
the module itself and, before playing a batch, checks that the policy's source digest is the
one the run started with (:func:`check_policy_sources`).  The digests are part of the run's
identity (manifest ``policy_sources``), so resuming after an edit of the policy is refused
(:func:`policy_change_error`).  A policy registered by name exists in this process only: such
a run stays in this process (one worker) and says so on stderr.

Integrity: every batch file already in the folder is verified before a run continues (its
sha256 against the manifest's record, or, without one, decoded whole), and a damaged or
foreign one is recomputed; the records of new batch files reach the manifest at least every
``MANIFEST_EVERY_S`` and at the end (docs/datasets.md).

Determinism: deal N's cards and every policy's random choices come from streams keyed by
(seed, N) only (:mod:`simkit.rng`), so the dataset's content is identical for any
worker count, backend or batch order.

Seating (``seating``, :mod:`simkit.runner.play`): ``fixed`` seats policy k at seat k in every
deal; ``rotate`` plays deal N with the policies rotated by N mod 3 (seat s plays policy
(s + N) mod 3; in sessions by session number, a session keeps its seating); ``all`` plays each
deal under the 6 seatings (6 rows per deal, column ``seating`` 0..5).  The default
(:func:`~simkit.specs.simulate.default_seating`) is ``rotate`` when the policies differ, so that no policy keeps the
dealer's seat (seat 0 deals every independent deal), and ``fixed`` when all three are the same
(rotation would change nothing, and those datasets stay exactly as before).  The random
stream of a seat stays the seat's (stream 1 + s of (seed, N)), so a row of a rotated run is
the deal N of a fixed-seat run of the policies as seated.  The seating is part of the run's
identity (``config_digest``; fixed adds nothing, as before): resuming with another is refused.

Datasets written before schema version 2 (``manifest.json``, -1 for a missing hu) are resumed
in their own format, so a folder never mixes two (:func:`_prepare`).

Sessions (``session_length`` K > 1, docs/rules.md §8 ``next_dealer``): deals N = s·K .. s·K + K - 1
form session s; its first deal is dealt by seat 0, each next one by the option
``next_dealer``.  A batch holds whole sessions: the batch size is rounded down to a multiple of
K (at least K; e.g. 10,000 -> 9,996 for K = 12) and that effective size is what the manifest
records.  When the deal count is not a multiple of K the last session is cut short (it holds
``deals % K`` deals, exactly the first deals of a full session).  K is part of the run's
identity: resuming a folder with another K is refused.  K = 1 (the default) is independent
deals, and its files are byte for byte those written before sessions existed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

import pyarrow as pa

import simkit
from simkit.errors import SimkitError
from simkit.progress import Progress, progress_enabled
from simkit.lifeline import exit_with_parent, interrupts_deferred
from simkit.policies.registry import (
    is_user_policy,
    params_by_name,
    parse_policies,
    policy_arrays,
    require_policy_sources,
)
from simkit.rules import RuleSet
from simkit.runner.batch import check_batch_memory, results_table
from simkit.runner.play import SEATING_CODES, play_deals
from simkit.runner.python_play import actors_for, has_python_policy, play_deals_python
from simkit.storage.dataset import (
    DatasetError,
    FILES,
    KIND,
    MANIFEST,
    POLICY_LABELS,
    POLICY_PARAMS,
    POLICY_SOURCES,
    READABLE_SCHEMA_VERSIONS,
    batch_path,
    batches_verified,
    config_digest,
    read_manifest,
    verify_batches,
    write_batch,
    write_manifest,
)
from simkit.storage.dataset import ROWS_PER_DEAL, column_labels, rows_per_deal
from simkit.storage.dataset import seating as manifest_seating
from simkit.storage.files import regular_file_problem, remove_stale_temp_files
from simkit.storage.lock import FolderLock
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import check_run_folder, identity_mismatch
from simkit.specs.base import Execution
from simkit.specs.simulate import SimulateSpec


MANIFEST_EVERY_S = 2.0  # batch records reach the manifest at least this often (and at the end)
DASK_TIMEOUT_S = 5.0  # to reach a Dask scheduler, and for its first worker to be there


def compute_batch(config: SimulateSpec, batch: int, threads: int | None = None) -> tuple[int, pa.Table]:
    """Play one batch of the run ``config`` (in whatever process this runs) and return its table."""
    import numba

    if threads is not None:
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    check_policy_sources(config)
    first, stop = config.batch_range(batch)
    if has_python_policy(config.policies):  # played in Python, decision by decision
        results = play_deals_python(stop - first, config.seed, actors_for(config.policies), config.rules.to_array(),
                                    first_deal=first, session_length=config.session_length,
                                    seating=SEATING_CODES[config.seating], policies=config.policy_texts())
    else:
        ids, params, user = policy_arrays(config.policies)
        results = play_deals(stop - first, config.seed, ids, params, config.rules.to_array(),
                             first_deal=first, user_functions=user, session_length=config.session_length,
                             seating=SEATING_CODES[config.seating], policies=config.policy_texts())
    # a deal that stopped before its end (illegal action, MAX_DECISIONS) raised DealError above
    return batch, results_table(results, first, batch, config.policy_labels(), config.session_length,
                                SEATING_CODES[config.seating], config.schema_version)


def check_policy_sources(config: SimulateSpec) -> None:
    """In the process that plays a batch (a worker imports the user policies itself): its
    policies' source digests must be those the run was started with (one-line error)."""
    require_policy_sources(config.policies, config.policy_sources)


def policy_change_error(directory: Path, recorded: Any, current: dict) -> DatasetError:
    """The one-line refusal of resuming a folder whose run recorded other user-policy source
    digests (``recorded``, the manifest's ``policy_sources``) than this run's (``current``)."""
    recorded = recorded if isinstance(recorded, dict) else {}
    name = next((n for n in sorted(current) if recorded.get(n) != current[n]), None)
    if name is None:  # the folder's run has user policies this one lacks
        return DatasetError(f"{directory} holds another run: its {POLICY_SOURCES} is {recorded!r}, this run's is "
                            f"{current!r} (use another folder for out)", parameters=("out",))
    before = recorded.get(name)
    if before is None:
        return DatasetError(f"{directory}: policy {name} has no source digest in this dataset (started by a simkit "
                            "that did not record one), so its edits cannot be checked; use a new folder for out",
                            parameters=("out",))
    return DatasetError(f"{directory}: policy {name} changed since this dataset was started (source digest "
                        f"{before} != {current[name]}); use a new folder for out", parameters=("out",))


def where_policies_run(policies, execution: Execution) -> Execution:
    """``execution``, or one worker in this process (said on stderr) when a policy is registered
    by name: it exists in this process only (one named by import path is imported by every
    worker)."""
    registered = sorted({s.name for s in policies if is_user_policy(s) and not s.is_import_path})
    if not registered or (execution.workers == 1 and execution.backend == "local"):
        return execution
    print(f"simkit: policy {', '.join(registered)} is registered in this process only: running in this "
          "process, one worker (name it by import path, package.module:function, to use workers)", file=sys.stderr)
    return dataclasses.replace(execution, workers=1, backend="local")


def manifest_fields(manifest: dict, keys) -> dict:
    """The values a manifest records for ``keys`` (``session_length`` absent: written before
    sessions, so 1; any other absent key: None)."""
    return {k: manifest.get(k, 1 if k == "session_length" else None) for k in keys}


def check_manifest_identity(directory: Path, kind: str, manifest: dict, identity: dict) -> None:
    """A dataset folder's ``manifest`` holds the run of ``identity`` (a simulation's, or an
    equity run's deals: ``kind``), else a one-line refusal: an edited user policy first (its
    source digest, :func:`policy_change_error`), then the first differing identity field
    (:func:`~simkit.storage.runs.identity_mismatch`)."""
    if POLICY_SOURCES in identity and manifest.get(POLICY_SOURCES) != identity[POLICY_SOURCES]:
        raise policy_change_error(directory, manifest.get(POLICY_SOURCES), identity[POLICY_SOURCES])
    problem = identity_mismatch(directory, kind, manifest_fields(manifest, identity), identity)
    if problem is not None:
        raise DatasetError(problem, parameters=("out",))


def _adoptable(directory: Path, config: SimulateSpec) -> SimulateSpec:
    """A folder with batch files but no manifest: refuse it unless every batch file names this
    run in its metadata (then the manifest is rebuilt from them, each verified as on resume);
    the run's config, in the schema version of the batch files (an older one when they were
    written before, with fixed seats)."""
    import pyarrow.parquet as pq

    check_run_folder(directory, "simulation")  # Parquet readers would read a user's files: refused
    owners = set()
    for path in sorted(directory.glob("batch-*.parquet")):
        problem = regular_file_problem(path)
        if problem is not None:  # a FIFO would block the read: refused before it is opened
            raise DatasetError(f"{path}: {problem} where a batch file belongs; move it away and run again")
        try:
            kv = pq.read_metadata(path).metadata or {}
            owner = kv.get(b"simkit.config", b"").decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - unreadable: cannot tell whose it is
            owner = None
        owners.add((path.name, owner))
    candidates = [config] + [dataclasses.replace(config, schema_version=v) for v in READABLE_SCHEMA_VERSIONS
                             if v != config.schema_version and (v >= 2 or config.seating == "fixed")]
    for candidate in candidates:
        digest = config_digest(candidate.identity())
        if all(owner == digest for _, owner in owners):
            return dataclasses.replace(candidate, labels=_batch_labels(directory, candidate))
    digest = config_digest(config.identity())
    name, owner = next((name, owner) for name, owner in sorted(owners) if owner != digest)
    whose = "is unreadable" if owner is None else "belongs to another run"
    raise DatasetError(f"{directory}: holds batch files but no {MANIFEST}, and {name} {whose}; "
                       "use an empty folder (or the arguments of the run that wrote it)")


def _batch_labels(directory: Path, config: SimulateSpec) -> tuple[str, ...]:
    """The policy labels of batch files (of ``config``'s run) being adopted: the positional
    texts when a batch file's policy columns hold them (a dataset written before plain labels),
    else the plain labels."""
    import pyarrow.parquet as pq

    texts, labels = config.policy_texts(), config.policy_labels()
    older = set(texts) - set(labels)
    for path in sorted(directory.glob("batch-*.parquet"))[:1]:
        try:
            table = pq.read_table(path, columns=[f"policy_{k}" for k in range(len(texts))])
            held = {str(v) for column in table.columns for v in column.unique().to_pylist()}
        except Exception:  # noqa: BLE001 - unreadable: verified (and recomputed) later
            continue
        if held & older:
            return tuple(texts)
    return tuple(labels)


def _resumed(directory: Path, config: SimulateSpec, manifest: dict) -> SimulateSpec:
    """The config that continues the run of ``manifest`` (verified by :func:`read_manifest`):
    refused (one line) when its session length, an identity field or its seating differs; a
    dataset written before schema version 2 goes on in its own format (its identity, its batch
    format: a folder never mixes two)."""
    check_manifest_identity(directory, "simulation", manifest, {
        "session_length": config.session_length,
        **{k: v for k, v in config.identity().items() if k not in ("seating", "schema_version")}})
    theirs = manifest_seating(manifest)
    if theirs != config.seating:
        raise DatasetError(f"{directory} holds another run: its seating is {theirs!r}, this run's is "
                           f"{config.seating!r} (resume it with seating={theirs!r}, or use another folder for out)",
                           parameters=("out",))
    if manifest["schema_version"] != config.schema_version:
        config = dataclasses.replace(config, schema_version=manifest["schema_version"])
    config = dataclasses.replace(config, labels=column_labels(manifest))
    if config_digest(config.identity()) != manifest["config_digest"]:
        raise DatasetError(f"{directory} holds another run: its config_digest is {manifest['config_digest']!r}, "
                           f"this run's is {config_digest(config.identity())!r} (use another folder for out)",
                           parameters=("out",))
    return config


def _prepare(directory: Path, config: SimulateSpec) -> tuple[SimulateSpec, dict, list[int], list[str]]:
    """Check, create or rebuild the manifest (the caller holds the folder lock); verify every
    batch file already there; the config that continues the folder's run (:func:`_resumed`),
    the batches to compute and what was wrong."""
    remove_stale_temp_files(directory)  # of writers killed before they renamed them
    manifest = read_manifest(directory)
    if manifest is None:
        config = _adoptable(directory, config)
    else:
        config = _resumed(directory, config, manifest)
    identity = config.identity()
    digest = config_digest(identity)
    if manifest is None:
        manifest = {"kind": KIND, **identity, "session_length": config.session_length,
                    **({"seating": config.seating} if config.schema_version >= 2 else {}),
                    "config_digest": digest, "batches": config.n_batches,
                    POLICY_PARAMS: [params_by_name(s) for s in config.policies],
                    POLICY_LABELS: config.policy_labels(),
                    "simkit_version": simkit.__version__,
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    manifest, todo, problems = verify_batches(directory, manifest, config.n_batches, config.batch_range, digest,
                                              per_deal=rows_per_deal(manifest))
    return config, manifest, todo, problems


def run_batches(compute, config, todo: Sequence[int], workers: int) -> Iterator[tuple[int, pa.Table]]:
    """``compute(config, batch, threads)`` for each batch of ``todo`` in ``workers`` loky
    processes (``cores // workers`` numba threads each), results as they finish.

    The workers end with this process, however it ends: each watches a pipe whose write end
    only this process holds (:func:`simkit.lifeline.exit_with_parent`).  An interrupt, SIGTERM or error (the
    generator closed early) kills them at once; a finished run lets them go."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from multiprocessing.connection import Connection

    from joblib.externals.loky import ProcessPoolExecutor

    threads = max(1, (os.cpu_count() or 1) // workers)
    read_end, write_end = os.pipe()  # not inheritable: a worker gets the read end alone
    parent = Connection(read_end, writable=False)
    finished = False
    try:
        executor = ProcessPoolExecutor(max_workers=workers, initializer=exit_with_parent,
                                       initargs=(parent,))
        try:
            queue = iter(todo)
            pending = {executor.submit(compute, config, b, threads) for b in itertools.islice(queue, 2 * workers)}
            while pending:
                done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                for future in done:
                    result = future.result()
                    for b in itertools.islice(queue, 1):
                        pending.add(executor.submit(compute, config, b, threads))
                    yield result
            finished = True
        finally:
            executor.shutdown(wait=finished, kill_workers=not finished)
    finally:
        os.close(write_end)  # any worker still there sees end-of-file and exits
        parent.close()


def _run_local(config: SimulateSpec, todo: Sequence[int], workers: int) -> Iterator[tuple[int, pa.Table]]:
    if workers <= 1:
        for b in todo:
            yield compute_batch(config, b)
        return
    yield from run_batches(compute_batch, config, todo, workers)


def check_backend(backend: str, workers: int = 1, scheduler: str | None = None) -> None:
    """``backend`` is ``local`` or ``dask``, ``workers`` >= 1, and ``scheduler`` only with
    ``dask``: one-line errors naming the parameters otherwise."""
    if backend not in ("local", "dask"):
        raise SimkitError(f"backend must be 'local' or 'dask', got {backend!r}", parameters=("backend",))
    if workers < 1:
        raise SimkitError(f"workers must be >= 1, got {workers}", parameters=("workers",))
    if scheduler and backend != "dask":
        raise SimkitError(f"scheduler needs backend='dask', got backend={backend!r}", parameters=("scheduler", "backend"))


def connect_dask(workers: int = 1, scheduler: str | None = None):
    """(client, local cluster or None): the Dask client of a run, on the cluster at
    ``scheduler``, or without one on a new ``LocalCluster`` of ``workers`` single-threaded
    worker processes.  A scheduler that cannot be reached within DASK_TIMEOUT_S, or that has
    no worker by then, is a one-line error.  The caller closes both (:func:`close_dask`);
    :func:`dask_session` does it for a block."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise SimkitError("backend='dask' needs dask.distributed: pip install 'simkit[dask]'",
                          parameters=("backend",)) from None
    if not scheduler:
        # dashboard on a free port (None still binds :8787, and warns when another run holds it)
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        return Client(cluster), cluster
    try:
        client = Client(scheduler, timeout=DASK_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError for a bad address
        raise SimkitError(f"cannot reach the Dask scheduler at {scheduler} within {DASK_TIMEOUT_S:g} s "
                          f"({' '.join(str(exc).split())[:160] or type(exc).__name__})") from None
    try:
        client.wait_for_workers(1, timeout=DASK_TIMEOUT_S)
    except Exception:  # noqa: BLE001 - TimeoutError
        client.close()
        raise SimkitError(f"the Dask scheduler at {scheduler} has no workers (none joined within "
                          f"{DASK_TIMEOUT_S:g} s); start some with dask worker {scheduler}") from None
    return client, None


def close_dask(client, cluster) -> None:
    """Close a client and its local cluster (either may be None), the cluster even when
    closing the client fails."""
    try:
        if client is not None:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


@contextlib.contextmanager
def dask_session(backend: str = "local", workers: int = 1, scheduler: str | None = None,
                 client=None) -> Iterator[Any]:
    """The Dask client of a command that runs several simulations (``compare``: six seatings,
    an SPRT's batches; ``tournament``: every pairing; ``equity``: its deals and the baseline),
    connected once: None for ``backend='local'``; ``client`` itself when one is given (left
    open: it is the caller's); else a new one (:func:`connect_dask`), closed with its local
    cluster when the block ends, however it ends (an error, an interrupt)."""
    check_backend(backend, workers, scheduler)
    if backend != "dask" or client is not None:
        yield client if backend == "dask" else None
        return
    client, cluster = connect_dask(workers, scheduler)
    try:
        yield client
    finally:
        close_dask(client, cluster)


def run_dask(compute, config, todo: Sequence[int], client) -> Iterator[tuple[int, pa.Table]]:
    """``compute(config, batch, 1)`` for each batch of ``todo`` on the Dask cluster of
    ``client``, results as they finish: a batch carries its number, so the caller writes or
    orders them whatever the order.  A worker lost mid-run costs its tasks only: the scheduler
    runs them again elsewhere (the same batch gives the same table).  Closing the stream (an
    interrupt, an error) cancels the batches not yet returned.

    The tasks go to the client itself, not through joblib's Dask backend: joblib plays every
    batch in this process when the cluster has a single worker thread (its ``n_jobs == 1``
    shortcut), and so it would while a killed worker of two is being replaced.

    A task's key is a digest of (``compute``, ``config``, batch) (:func:`task_key`): a batch
    submitted ahead (:func:`submit_ahead`) is the same task, computed once."""
    from dask.distributed import as_completed

    token = _config_token(config)
    futures = [client.submit(compute, config, b, 1, key=task_key(compute, config, b, token)) for b in todo]
    try:
        for _, result in as_completed(futures, with_results=True):
            yield result
    except (ImportError, RuntimeError) as exc:
        problem = cluster_environment_error(exc)
        if problem is None:
            raise
        raise problem from exc
    finally:
        client.cancel(futures)


def cluster_environment_error(exc: BaseException) -> SimkitError | None:
    """The one-line error of a task that failed because the cluster's Python is not this one:
    a scheduler or worker that cannot import simkit (Dask then cannot unpack the task graph, or
    the worker the task); None for any other failure.

    >>> lacking = ModuleNotFoundError("No module named 'simkit'", name="simkit")
    >>> str(cluster_environment_error(lacking)).startswith("a Dask worker or scheduler cannot import simkit (No module")
    True
    >>> cluster_environment_error(ValueError("a policy raised")) is None
    True
    """
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    lacks_simkit = isinstance(exc, ImportError) and (
        (getattr(exc, "name", None) or "").partition(".")[0] == "simkit" or "simkit" in text)
    if not lacks_simkit and not (isinstance(exc, RuntimeError) and "deserialization" in text):
        return None
    return SimkitError(f"a Dask worker or scheduler cannot import simkit ({text}): install simkit {simkit.__version__} on "
                       "every machine of the cluster, the same version as here")


def _config_token(config) -> str:
    from dask.base import tokenize

    return tokenize(config)


def task_key(compute, config, batch, token: str | None = None) -> str:
    """The Dask key of ``compute(config, batch, 1)``: a digest of the function's name, the
    config (every field: ``token``, when already computed) and the batch, so that the same
    work submitted twice on a client is one task."""
    from dask.base import tokenize

    return f"simkit-{compute.__name__}-{token or _config_token(config)}-{tokenize(batch)}"


def submit_ahead(config: SimulateSpec, directory: Path, client) -> list:
    """Futures of the batches of ``config`` that ``directory`` lacks, submitted now to the
    cluster of ``client`` under the keys :func:`simulate` will submit them with (the same
    tasks: computed once, while this process does other work).  Hold them until the run has
    consumed them; a run that turns out to be another config only wastes their work."""
    config = dataclasses.replace(config, labels=tuple(config.policy_labels()))  # as a new run's (_adoptable)
    token = _config_token(config)
    return [client.submit(compute_batch, config, b, 1, key=task_key(compute_batch, config, b, token))
            for b in range(config.n_batches) if not os.path.lexists(batch_path(directory, b))]


def stream_dask_in_order(compute, config, pieces: Sequence[Any], client,
                         progress: Progress | None = None) -> Iterator[Any]:
    """``compute(config, (i, pieces[i]), 1)`` (which returns ``(i, result)``) for every piece,
    as tasks on the Dask cluster of ``client``, all submitted at once (:func:`run_dask`: a
    killed worker's tasks run again elsewhere); each result yielded in the order of ``pieces``
    as soon as it and every piece before it are back.  ``progress`` (a
    :class:`~simkit.progress.Progress` of ``len(pieces)`` units) moves by one as each piece
    comes back, on the client.  Closing the stream cancels the pieces not yet back."""
    waiting: dict[int, Any] = {}
    following = 0
    stream = run_dask(compute, config, list(enumerate(pieces)), client)
    try:
        for number, part in stream:
            waiting[number] = part
            if progress is not None:
                progress.update(1)
            while following in waiting:
                yield waiting.pop(following)
                following += 1
    finally:
        stream.close()
        if progress is not None:
            progress.close()


def run_dask_in_order(compute, config, pieces: Sequence[Any], client, progress: Progress | None = None) -> list[Any]:
    """Every result of :func:`stream_dask_in_order`, in the order of ``pieces``."""
    return list(stream_dask_in_order(compute, config, pieces, client, progress))


def use_threads(threads: int | None) -> None:
    """In a task's process: numba's threads for this thread's kernels (``threads``, at most
    ``NUMBA_NUM_THREADS``; None leaves them as they are)."""
    if threads is not None:
        import numba

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))


def simulate(spec: SimulateSpec, out: str | os.PathLike, execution: Execution = Execution(), *,
             max_batches: int | None = None, client=None) -> Path:
    """Simulate the run ``spec`` into the dataset folder ``out``; returns its path.

    ``execution``: worker processes, the backend and progress (never the content).
    ``backend='dask'`` runs the batches on a Dask cluster: ``client``, a client already
    connected (:func:`dask_session`: a command running several simulations connects once; it
    stays open), else one connected here (to ``execution.scheduler``, or a ``LocalCluster`` of
    ``execution.workers``) and closed at the end.

    A run in sessions of K (``spec.session_length``) rounds its batch size down to a multiple of
    K (said on stderr unless quiet; module docstring).

    Re-running the same spec computes only the batches that are missing (or were found
    corrupt); a folder holding another run is refused. ``max_batches`` computes only the first
    that many batches of the run (the rest can follow later, e.g. while a sequential test has
    not decided yet); the run's identity does not depend on it.
    """
    workers, backend, quiet = execution.workers, execution.backend, execution.quiet
    config = spec
    if config.run_batch_size != config.batch_size:
        if not quiet:
            print(f"simkit: batch_size {config.batch_size:,} -> {config.run_batch_size:,} (whole sessions of "
                  f"{config.session_length} deals)", file=sys.stderr)
        config = config.replace(batch_size=config.run_batch_size)
    check_backend(backend, workers, execution.scheduler)
    execution = where_policies_run(config.policies, execution)
    workers, backend = execution.workers, execution.backend
    try:  # new, empty or a dataset's; not inside another (its readers would read this one's rows)
        directory = check_run_folder(out, "simulation")
    except SimkitError:
        if not os.fspath(out) or not _complete_without_writing(Path(os.fspath(out)), config, max_batches):
            raise
        if not quiet:  # e.g. on read-only media: nothing to write, nothing to lock
            print(f"simkit: {os.fspath(out)} already holds this run, complete: nothing to compute or write",
                  file=sys.stderr)
        return Path(os.fspath(out))
    if backend == "local":  # (a Dask worker's memory is its machine's; a complete run computes nothing)
        check_batch_memory(min(config.run_batch_size, config.deals) * ROWS_PER_DEAL[config.seating],
                           min(workers, config.n_batches))
    with dask_session(backend, workers, execution.scheduler, client) as client:  # before anything is written
        with FolderLock(make_out_dir(directory)):
            _write_run(directory, config, execution, client, max_batches)
    return directory


def _complete_without_writing(directory: Path, config: SimulateSpec, max_batches: int | None) -> bool:
    """Whether ``directory`` (where this process may not write) already holds this run's
    batches (all of them, or the first ``max_batches``), each verified against its recorded
    sha256: resuming it has nothing to write."""
    if not directory.is_dir():
        return False
    try:
        manifest = read_manifest(directory)
        if manifest is None:
            return False
        config = _resumed(directory, config, manifest)
        wanted = config.n_batches if max_batches is None else min(config.n_batches, max_batches)
        return batches_verified(directory, manifest, wanted, config.batch_range, manifest["config_digest"])
    except DatasetError:
        return False


def _write_run(directory: Path, config: SimulateSpec, execution: Execution, client, max_batches: int | None) -> None:
    """Compute and write the batches a folder lacks (the caller holds its lock)."""
    config, manifest, todo, problems = _prepare(directory, config)
    if max_batches is not None:
        todo = [b for b in todo if b < max_batches]
    for line in problems:
        print(f"simkit: {line}", file=sys.stderr)
    if not todo:
        return
    progress = Progress(sum(config.batch_range(b)[1] - config.batch_range(b)[0] for b in todo), "deals",
                        f"{len(todo)} batches", progress_enabled(execution.quiet))
    digest = manifest["config_digest"]
    records = dict(manifest[FILES])
    stream = (run_dask(compute_batch, config, todo, client) if execution.backend == "dask"
              else _run_local(config, todo, execution.workers))
    unrecorded = False
    finished = False
    last = time.monotonic()
    try:
        for batch, table in stream:
            first, stop = config.batch_range(batch)
            with interrupts_deferred():  # a batch file is written and recorded together, or not at all
                records[batch_path(directory, batch).name] = write_batch(
                    directory, batch, table, {"batch": batch, "first_deal": first, "deals": stop - first,
                                              "config": digest, "seed": config.seed})
                unrecorded = True
            if time.monotonic() - last >= MANIFEST_EVERY_S:
                manifest = write_manifest(directory, {**manifest, FILES: records})
                unrecorded, last = False, time.monotonic()
            progress.update(stop - first)
        finished = True
    finally:
        stream.close()  # stops the workers at once when interrupted
        progress.close()
        if unrecorded:
            try:
                write_manifest(directory, {**manifest, FILES: records})
            except OSError:
                if finished:
                    raise


def _builtin(policies: str | Sequence) -> bool:
    return all(fn is None for fn in policy_arrays(parse_policies(policies))[2])


def warm_simulate(policies: str | Sequence = "greedy,patient,random", rules: RuleSet | None = None,
                  session_length: int = 1, seating: str | None = None) -> None:
    """One deal of ``simkit simulate`` (into a temporary folder, then removed): the deal
    kernels, the batch table's kernels.  Runs with user policies compile uncached kernels of
    their own: nothing to warm for them."""
    if not _builtin(policies):
        return
    with tempfile.TemporaryDirectory(prefix="simkit-warm-") as tmp:
        simulate(SimulateSpec(min(2, session_length), policies, 0, rules, batch_size=session_length,
                              session_length=session_length, seating=seating), f"{tmp}/run", Execution(quiet=True))
