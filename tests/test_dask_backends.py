"""``--backend dask`` for ``compare`` (plain and ``--sprt``), ``tournament`` and ``equity``
(issue 41): on a ``LocalCluster`` of 2 worker processes (1 thread each) they write the same
Parquet batch files, byte for byte (sha256, checked against the manifests' records), and give
the same results (``--json``, result objects) as ``local``; a worker killed mid-run costs its
tasks only; an unreachable scheduler is a one-line error.  ``--luck`` (every value model, and
play-out values) replays its deals on the cluster too, with the same luck, byte for byte.  So do
``review`` (one task per decision), ``tune`` (each iteration's plays, and its validation) and
``experiment run`` (its simulations, comparisons and tournament on one connection), and
``train`` (self-play and checks) and ``luck-model``, whose model files are the local bytes.

One cluster serves the module (its workers load the kernels once).  Every local run comes
first, so the kernels are compiled (and cached) in this process before a worker needs them.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("dask.distributed", reason="dask is part of the test extra")

from helpers import one_line_error, run_cli  # noqa: E402
from simkit.cli import main  # noqa: E402
from simkit.errors import SimkitError  # noqa: E402
from simkit.experiment import run_experiment  # noqa: E402
from simkit.replay import replay_jsonl  # noqa: E402
from simkit.storage.dataset import FILES, MANIFEST  # noqa: E402
from simkit.studies.compare import compare  # noqa: E402
from simkit.studies.equity import equity  # noqa: E402
from simkit.specs.base import Execution  # noqa: E402
from simkit.specs.review import ReviewSpec  # noqa: E402
from simkit.studies import review as review_module  # noqa: E402
from simkit.studies.review import parse_decision_log, review_decisions  # noqa: E402
from simkit.studies.tournament import run_tournament  # noqa: E402
from simkit.studies.tuning import PLAYS_PER_DEAL, TuneSpec, tune  # noqa: E402
from simkit.specs.base import Execution  # noqa: E402
from simkit.specs.compare import CompareSpec  # noqa: E402
from simkit.specs.luck_model import LuckModelSpec  # noqa: E402
from simkit.specs.tournament import TournamentSpec  # noqa: E402
from simkit.specs.train import TrainSpec  # noqa: E402
from simkit.specs.equity import EquitySpec  # noqa: E402

sim_module = importlib.import_module("simkit.runner.simulate")
compare_module = importlib.import_module("simkit.studies.compare")

EXAMPLE = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"  # seat 0's 31 cards
CPU_FIELDS = ("cpu_seconds", "cpu_duplicate_seconds", "cpu_per_deal_duplicate_seconds", "cpu_per_deal_adjustment_seconds",
              "efficiency_vs_duplicate")  # timings: differ run to run


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local_cluster:
        yield local_cluster


@pytest.fixture()
def cluster_to_kill():
    """A cluster of 2 worker processes for one test that SIGKILLs one of them."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local_cluster:
        yield local_cluster


def batch_digests(folder: Path) -> dict[str, str]:
    """sha256 of every batch file under ``folder`` (by path relative to it), each checked
    against its manifest's record."""
    digests = {}
    for manifest in sorted(folder.rglob(MANIFEST)):
        records = json.loads(manifest.read_text(encoding="utf-8"))[FILES]
        for name, record in sorted(records.items()):
            digest = hashlib.sha256((manifest.parent / name).read_bytes()).hexdigest()
            assert digest == record["sha256"], manifest.parent / name
            digests[str((manifest.parent / name).relative_to(folder))] = digest
    assert set(digests) == {str(p.relative_to(folder)) for p in folder.rglob("batch-*.parquet")}
    return digests


def without_cpu(fields: dict) -> dict:
    return {k: v for k, v in fields.items() if k not in CPU_FIELDS}


def test_compare_on_dask_is_local_byte_for_byte(tmp_path, cluster, capsys):
    common = ["compare", "greedy", "random", "--deals", "200", "--batch-size", "50", "--seed", "3", "--json",
              "--quiet"]
    printed = {}
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--scheduler", cluster.scheduler_address])):
        assert main(common + ["--out", str(tmp_path / name)] + extra) == 0
        printed[name] = json.loads(capsys.readouterr().out)
    assert without_cpu(printed["dask"]) == without_cpu(printed["local"])
    assert printed["local"]["deals"] == 200
    local = batch_digests(tmp_path / "local")
    assert len(local) == 6 * 4 and batch_digests(tmp_path / "dask") == local


def test_compare_sprt_on_dask_is_local(tmp_path, cluster):
    """The SPRT's batches, computed one at a time (max_batches), on one client."""
    spec = CompareSpec("greedy", "patient", deals=600, seed=5, batch_size=50, sprt=(0.2, 0.05, 0.05), burn_in=100)
    local = compare(spec, tmp_path / "local", Execution(quiet=True))
    dask = compare(spec, tmp_path / "dask", Execution(backend="dask", scheduler=cluster.scheduler_address, quiet=True))
    assert local.sprt.decision != "continue" and 100 < local.deals_computed < 600  # several batches, stopped early
    assert without_cpu(dask.to_json()) == without_cpu(local.to_json())
    assert (dask.per_seating == local.per_seating).all() and (dask.sprt.path == local.sprt.path).all()
    digests = batch_digests(tmp_path / "local")
    assert len(digests) == 6 * local.deals_computed // 50 and batch_digests(tmp_path / "dask") == digests


def test_tournament_on_dask_is_local(tmp_path, cluster):
    spec = TournamentSpec(["random", "greedy", "patient"], deals=120, seed=2, batch_size=40, resamples=100)
    local = run_tournament(spec, tmp_path / "local", Execution(quiet=True))
    dask = run_tournament(spec, tmp_path / "dask", Execution(backend="dask", scheduler=cluster.scheduler_address,
                                                             quiet=True))
    pd.testing.assert_frame_equal(dask.ladder(), local.ladder())
    pd.testing.assert_frame_equal(dask.crosstable(), local.crosstable())
    pd.testing.assert_frame_equal(dask.gaps(), local.gaps())
    for pair, result in local.pairings.items():
        assert without_cpu(dask.pairings[pair].to_json()) == without_cpu(result.to_json())
    digests = batch_digests(tmp_path / "local")
    assert len(digests) == 3 * 6 * 3 and batch_digests(tmp_path / "dask") == digests


def test_tournament_on_dask_plays_each_batch_once_and_draws_the_local_bootstrap(tmp_path, cluster, monkeypatch):
    """The next pairing's batches are submitted ahead under the keys its seatings' runs use (one
    task each, not two), and the Davidson bootstrap's fits run as tasks: the same draws, bit
    for bit (not just within a tolerance)."""
    spec = TournamentSpec(["random", "greedy", "patient"], deals=80, seed=4, batch_size=40, resamples=250)
    local = run_tournament(spec, tmp_path / "local", Execution(quiet=True))
    keys = []
    real_submit = distributed.Client.submit

    def submit(self, *args, **kw):
        keys.append(kw.get("key"))
        return real_submit(self, *args, **kw)

    monkeypatch.setattr(distributed.Client, "submit", submit)
    dask = run_tournament(spec, tmp_path / "dask", Execution(backend="dask", scheduler=cluster.scheduler_address,
                                                             quiet=True))
    assert (dask.rating_draws == local.rating_draws).all() and (dask.payoff_draws == local.payoff_draws).all()
    batches = [k for k in keys if k.startswith("simkit-compute_batch-")]
    assert len(set(batches)) == 3 * 6 * 2 and len(batches) == 2 * len(set(batches))  # ahead, then by the run
    assert sum(k.startswith("simkit-_davidson_fits-") for k in keys) == 3  # 250 fits in tasks of 100
    assert batch_digests(tmp_path / "dask") == batch_digests(tmp_path / "local")


def test_equity_on_dask_is_local(tmp_path, cluster):
    spec = EquitySpec(EXAMPLE, seat=0, policies="greedy,patient,random", deals=150, seed=7, batch_size=50)
    on_dask = Execution(backend="dask", scheduler=cluster.scheduler_address, quiet=True)
    local = equity(spec, tmp_path / "local")
    dask = equity(spec, tmp_path / "dask", on_dask)
    pd.testing.assert_frame_equal(dask.to_frame(), local.to_frame())
    assert dask.text() == local.text()
    digests = batch_digests(tmp_path / "local")
    assert len(digests) == 2 * 3 and batch_digests(tmp_path / "dask") == digests  # equity/ and baseline/
    # without a folder the tables come back to this process: the same figures, nothing written
    memory = equity(spec, None, on_dask)
    pd.testing.assert_frame_equal(memory.to_frame(), equity(spec).to_frame())
    pd.testing.assert_frame_equal(memory.to_frame(), local.to_frame())


def test_equity_command_on_a_local_cluster_of_its_own(tmp_path, capsys):
    """Without --scheduler the command starts a LocalCluster of --workers processes (and ends it)."""
    common = ["equity", EXAMPLE, "--policies", "greedy,greedy,random", "--deals", "60", "--batch-size", "30",
              "--quiet", "--no-baseline"]
    assert main(common + ["--out", str(tmp_path / "local")]) == 0
    local = capsys.readouterr().out
    assert main(common + ["--out", str(tmp_path / "dask"), "--backend", "dask", "--workers", "1"]) == 0
    dask = capsys.readouterr().out
    assert dask.splitlines()[:-1] == local.splitlines()[:-1]  # the last line: the time and the files
    assert batch_digests(tmp_path / "dask") == batch_digests(tmp_path / "local")


def test_the_batches_run_on_the_workers_even_on_one(tmp_path):
    """A cluster of a single worker thread plays every batch there, not in this process."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as one, \
            distributed.Client(one) as client:
        with distributed.get_task_stream(client) as stream:
            result = equity(EquitySpec(EXAMPLE, policies="greedy,greedy,random", deals=60, seed=1, batch_size=20),
                            tmp_path / "e", Execution(backend="dask", quiet=True), client=client)
        assert client.status == "running"  # a client given is the caller's: left open
        (worker,) = client.scheduler_info()["workers"]
    assert len(stream.data) == 2 * 3 and {task["worker"] for task in stream.data} == {worker}
    assert result.deals == 60 and len(batch_digests(tmp_path / "e")) == 2 * 3


def test_an_interrupt_closes_the_cluster_and_the_run_resumes(tmp_path, monkeypatch):
    """Ctrl-C in the middle of a tournament on its own LocalCluster: the client and the cluster
    are closed, only whole batch files are left, and a re-run resumes to the local bytes."""
    spec = TournamentSpec(["greedy", "random"], deals=120, seed=4, batch_size=30, resamples=50)
    local = run_tournament(spec, tmp_path / "local", Execution(quiet=True))
    sessions, written = [], []
    real_connect, real_write = sim_module.connect_dask, sim_module.write_batch

    def connect(*args, **kw):
        sessions.append(real_connect(*args, **kw))
        return sessions[-1]

    def write(*args, **kw):
        if len(written) == 9:  # in the second seating
            raise KeyboardInterrupt
        written.append(args[1])
        return real_write(*args, **kw)

    monkeypatch.setattr(sim_module, "connect_dask", connect)
    monkeypatch.setattr(sim_module, "write_batch", write)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(spec, tmp_path / "dask", Execution(workers=1, backend="dask", quiet=True))
    assert len(sessions) == 1  # one connection for the whole command
    client, cluster = sessions[0]
    assert client.status == "closed" and cluster.status.name == "closed"
    monkeypatch.setattr(sim_module, "write_batch", real_write)
    assert len(batch_digests(tmp_path / "dask")) == 9
    resumed = run_tournament(spec, tmp_path / "dask", Execution(workers=1, backend="dask", quiet=True))
    assert len(sessions) == 2
    pd.testing.assert_frame_equal(resumed.ladder(), local.ladder())
    assert batch_digests(tmp_path / "dask") == batch_digests(tmp_path / "local")


@pytest.mark.parametrize("command", ["compare", "tournament", "equity", "review", "tune", "experiment", "train",
                                     "luck-model"])
def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys, command):
    out = tmp_path / ("out.npz" if command == "luck-model" else "out")
    log, spec = deal_log(tmp_path), tmp_path / "tiny.toml"
    spec.write_text(TINY_EXPERIMENT, encoding="utf-8")
    argv = {"compare": ["compare", "greedy", "random", "--deals", "20"],
            "tournament": ["tournament", "greedy", "random", "--deals", "20"],
            "equity": ["equity", EXAMPLE, "--policies", "greedy,greedy,greedy", "--deals", "20"],
            "review": ["review", log, "--seat", "1", "--rollouts", "8"],
            "tune": ["tune", "patient:6", "--params", "min_units=1:8", "--against", "greedy",
                     "--budget", str(PLAYS_PER_DEAL * 3), "--iteration-deals", "3", "--validate-deals", "2"],
            "experiment": ["experiment", "run", spec],
            "train": ["train", "--deals", "5", "--check-deals", "2", "--generations", "1"],
            "luck-model": ["luck-model", "--deals", "10", "--check-deals", "10"]}[command]
    start = time.monotonic()
    rc, err = run_cli(argv + ["--out", out, "--quiet", "--backend", "dask", "--scheduler", "tcp://127.0.0.1:1"],
                      capsys)
    one_line_error(rc, err, "cannot reach the Dask scheduler at tcp://127.0.0.1:1")
    assert time.monotonic() - start < 20
    assert not out.exists()


@pytest.mark.parametrize("command", ["compare", "tournament"])
def test_a_scheduler_without_dask_is_one_line(tmp_path, capsys, command):
    out = tmp_path / "out"
    rc, err = run_cli([command, "greedy", "random", "--scheduler", "tcp://127.0.0.1:1", "--out", out], capsys)
    one_line_error(rc, err, "--scheduler needs --backend dask")
    assert not out.exists()


def luck_files(folder: Path) -> dict[str, bytes]:
    """The kept luck of a comparison folder (``luck-<model digest>.npy``), by file name."""
    return {p.name: p.read_bytes() for p in folder.glob("luck-*.npy")}


def test_compare_luck_on_dask_is_local(tmp_path, cluster, capsys, monkeypatch):
    """``compare --luck`` on Dask: the luck replay runs in slices on the workers (5 tasks of 25
    deals here), kept in deal order: the same --json and the same kept luck, byte for byte."""
    monkeypatch.setattr(compare_module, "LUCK_SLICE_DASK", 25)
    common = ["compare", "expert", "greedy", "--deals", "120", "--batch-size", "40", "--seed", "12", "--luck",
              "--json", "--quiet"]
    printed = {}
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--scheduler", cluster.scheduler_address])):
        assert main(common + ["--out", str(tmp_path / name)] + extra) == 0
        printed[name] = json.loads(capsys.readouterr().out)
    assert printed["local"]["adjusted"]["deals_saved_vs_duplicate"] is not None
    assert without_cpu(printed["dask"]) == without_cpu(printed["local"])
    assert len(luck_files(tmp_path / "local")) == 1 and luck_files(tmp_path / "dask") == luck_files(tmp_path / "local")


def test_the_in_order_stream_waits_for_the_pieces_before(monkeypatch):
    """Tasks that come back last-first (as a cluster may return them): each piece is yielded in
    the pieces' order, as soon as it and every piece before it are back; progress counts each
    piece as it returns."""
    returned = []

    def backwards(compute, config, todo, client):
        for number, piece in reversed(todo):
            returned.append(number)
            yield compute(config, (number, piece), 1)

    monkeypatch.setattr(sim_module, "run_dask", backwards)
    progress = sim_module.Progress(4, "tasks", enabled=False)
    stream = sim_module.stream_dask_in_order(lambda config, task, threads: (task[0], task[1] * config), 10,
                                             ["a", "b", "c", "d"], client=None, progress=progress)
    assert next(stream) == "a" * 10 and returned == [3, 2, 1, 0]  # the first piece waited for every other
    assert list(stream) == ["b" * 10, "c" * 10, "d" * 10] and progress.done == 4


def test_compare_playout_luck_and_luck_sprt_on_dask_are_local(tmp_path, cluster, monkeypatch):
    """The other --luck modes: play-out values (slices of 4 deals: 3 tasks), and a sequential
    test on luck-adjusted differences (each batch's luck replayed on the cluster)."""
    monkeypatch.setattr(compare_module, "LUCK_SLICE_PLAYOUTS", 4)
    monkeypatch.setattr(compare_module, "LUCK_SLICE_DASK", 30)
    runs = (("playouts", dict(deals=12, seed=13, batch_size=6, luck="playouts:2")),
            ("sprt", dict(deals=400, seed=14, batch_size=50, luck=True, sprt=(0.3, 0.05, 0.05), burn_in=60)))
    for name, kwargs in runs:
        spec = CompareSpec("greedy", "random", **kwargs)
        local = compare(spec, tmp_path / f"{name}-local", Execution(quiet=True))
        dask = compare(spec, tmp_path / f"{name}-dask", Execution(backend="dask", scheduler=cluster.scheduler_address,
                                                                  quiet=True))
        assert local.adjusted is not None and (dask.adjusted.luck == local.adjusted.luck).all()
        assert without_cpu(dask.to_json()) == without_cpu(local.to_json())
        assert luck_files(tmp_path / f"{name}-dask") == luck_files(tmp_path / f"{name}-local")
    assert 60 <= local.sprt.n < 400  # the sequential test stopped early, after several batches


def test_tournament_luck_on_dask_is_local(tmp_path, cluster):
    spec = TournamentSpec(["random", "greedy"], deals=60, seed=15, batch_size=30, resamples=100, luck=True)
    local = run_tournament(spec, tmp_path / "local", Execution(quiet=True))
    dask = run_tournament(spec, tmp_path / "dask", Execution(backend="dask", scheduler=cluster.scheduler_address,
                                                             quiet=True))
    assert local.adjusted
    pd.testing.assert_frame_equal(dask.ladder(), local.ladder())
    for pair, result in local.pairings.items():
        assert without_cpu(dask.pairings[pair].to_json()) == without_cpu(result.to_json())


def run_killing_a_worker(cluster, work):
    """``work()`` (a run on ``cluster``) in a thread, a worker process SIGKILLed as soon as it holds
    a task; its result (the killed worker's tasks ran again on the other).  Each such test has a
    cluster of its own (``cluster_to_kill``): under load, distributed's nanny has been seen to close
    itself right after restarting the killed worker, and a shared cluster then stayed one worker
    short for every later test."""
    with distributed.Client(cluster.scheduler_address, timeout=10) as client:
        client.wait_for_workers(2, timeout=60)
        pids = client.run(os.getpid)  # worker address -> pid
        outcome = {}

        def run() -> None:
            try:
                outcome["result"] = work()
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                outcome["error"] = exc

        thread = threading.Thread(target=run)
        thread.start()
        killed = None
        deadline = time.monotonic() + 60
        while killed is None and thread.is_alive() and time.monotonic() < deadline:
            busy = [address for address, keys in client.processing().items() if keys and address in pids]
            if busy:
                killed = pids[busy[0]]
                os.kill(killed, signal.SIGKILL)
            else:
                time.sleep(0.005)
        thread.join(timeout=300)
        assert not thread.is_alive()
        assert "error" not in outcome, outcome.get("error")
        assert killed is not None, "no task was ever in flight"
    return outcome["result"]


def test_a_worker_killed_mid_run_costs_its_tasks_only(tmp_path, cluster_to_kill):
    """SIGKILL of a worker process while it plays a batch: the scheduler runs its tasks again
    on the other worker (the nanny starts a new one) and the comparison is the same."""
    spec = CompareSpec("expert", "greedy", deals=20_000, seed=11, batch_size=2_500)
    local = compare(spec, tmp_path / "local", Execution(quiet=True))
    on_dask = Execution(backend="dask", scheduler=cluster_to_kill.scheduler_address, quiet=True)
    dask = run_killing_a_worker(cluster_to_kill, lambda: compare(spec, tmp_path / "dask", on_dask))
    assert without_cpu(dask.to_json()) == without_cpu(local.to_json())
    digests = batch_digests(tmp_path / "local")
    assert len(digests) == 6 * 8 and batch_digests(tmp_path / "dask") == digests


def test_a_worker_killed_mid_luck_replay_costs_its_tasks_only(tmp_path, cluster_to_kill, monkeypatch):
    """The duplicate deals already in the folder (copied from the local run, its luck removed),
    so the only tasks are the luck replay's: a worker killed while it replays a slice, and the
    luck is the local luck, byte for byte."""
    monkeypatch.setattr(compare_module, "LUCK_SLICE_DASK", 200)
    spec = CompareSpec("expert", "greedy", deals=1_600, seed=16, batch_size=800, luck=True)
    local = compare(spec, tmp_path / "local", Execution(quiet=True))
    shutil.copytree(tmp_path / "local", tmp_path / "dask")
    for kept in (tmp_path / "dask").glob("luck-*.npy"):
        kept.unlink()
    on_dask = Execution(backend="dask", scheduler=cluster_to_kill.scheduler_address, quiet=True)
    dask = run_killing_a_worker(cluster_to_kill, lambda: compare(spec, tmp_path / "dask", on_dask))
    assert without_cpu(dask.to_json()) == without_cpu(local.to_json())
    assert luck_files(tmp_path / "dask") == luck_files(tmp_path / "local")


def killed_tournament(folder: Path, **dask):
    return run_tournament(TournamentSpec(["random", "greedy"], deals=8_000, seed=21, batch_size=2_000, resamples=100),
                          folder, Execution(quiet=True, **dask))


def killed_equity(folder: Path, **dask):
    return equity(EquitySpec(EXAMPLE, seat=0, policies="expert,expert,expert", deals=20_000, seed=22, batch_size=2_500),
                  folder, Execution(quiet=True, **dask))


def killed_tune(folder: Path, **dask):
    spec = TuneSpec("patient:6", {"min_units": (1, 8)}, ["greedy", "random"], PLAYS_PER_DEAL * 3_000 * 2, seed=23,
                    iteration_deals=3_000, validate_deals=2_000, batch_size=1_000)
    return tune(spec, folder, Execution(quiet=True, **dask))


@pytest.mark.parametrize("run", [killed_tournament, killed_equity, killed_tune], ids=["tournament", "equity", "tune"])
def test_a_worker_killed_mid_command_costs_its_tasks_only(tmp_path, cluster_to_kill, run):
    """tournament, equity and tune (each its own tasks: batches, or a tune's plays) with a worker
    SIGKILLed as soon as it holds a task: the local result and files."""
    local = run(tmp_path / "local")
    dask = run_killing_a_worker(cluster_to_kill, lambda: run(tmp_path / "dask", backend="dask",
                                                     scheduler=cluster_to_kill.scheduler_address))
    if run is killed_tournament:
        pd.testing.assert_frame_equal(dask.ladder(), local.ladder())
    elif run is killed_equity:
        pd.testing.assert_frame_equal(dask.to_frame(), local.to_frame())
    else:
        pd.testing.assert_frame_equal(dask.trajectory, local.trajectory)
        assert dask.text() == local.text()
    if run is not killed_tune:
        assert batch_digests(tmp_path / "dask") == batch_digests(tmp_path / "local")


# ---------------------------------------------------------------- review, tune, experiment run


def deal_log(folder: Path) -> Path:
    """A replay log of one expert deal (seed 5, deal 3: seat 1 has 12 decisions to review)."""
    path = folder / "deal.jsonl"
    path.write_text(replay_jsonl(5, 3, "expert,expert,expert"), encoding="utf-8")
    return path


def test_review_on_dask_is_local(tmp_path, cluster, capsys, monkeypatch):
    """One task per decision: the same review (the loss against the reference included, which
    stays in this process), the same files, whatever order the decisions finished in."""
    log = deal_log(tmp_path)
    common = ["review", str(log), "--seat", "1", "--rollouts", "64", "--samples", "8", "--seed", "2", "--json",
              "--quiet"]
    printed = {}
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--scheduler", cluster.scheduler_address])):
        assert main(common + ["--out", str(tmp_path / name)] + extra) == 0
        printed[name] = json.loads(capsys.readouterr().out)
    assert printed["dask"] == printed["local"]
    assert printed["local"]["summary"]["decisions"] == 12 and printed["local"]["reference"]["decisions"]
    for name in ("review.json", "decisions.parquet"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    # the library: a value model travels with the tasks; progress is reported decision by decision
    decisions = parse_decision_log(log.read_text(encoding="utf-8").splitlines())
    seen = []

    class Seen(review_module.Progress):
        def update(self, n: int = 1) -> None:
            super().update(n)
            seen.append((self.done, self.total))

    monkeypatch.setattr(review_module, "Progress", Seen)
    spec = ReviewSpec(seat=2, rollouts=32, seed=4, luck=True)
    local = review_decisions(decisions, spec, Execution(quiet=True))
    seen.clear()
    dask = review_decisions(decisions, spec, Execution(backend="dask", scheduler=cluster.scheduler_address, quiet=True))
    assert dask.to_json() == local.to_json() and local.luck
    assert seen == [(k, len(local.decisions)) for k in range(1, len(local.decisions) + 1)]


def test_a_review_of_several_logs_on_dask_is_local(tmp_path, cluster, capsys):
    """``review LOG LOG`` on one connection: a JSON line per log (with its log), the same as
    local, and OUT/report.md with each log's review in its own folder, the local bytes; each
    log's review is the one ``review LOG`` alone gives."""
    first = deal_log(tmp_path)
    second = tmp_path / "other.jsonl"
    second.write_text(replay_jsonl(6, 1, "expert,greedy,expert"), encoding="utf-8")
    common = ["review", str(first), str(second), "--seat", "1", "--rollouts", "32", "--samples", "4", "--seed", "3",
              "--json", "--quiet"]
    printed = {}
    for name, extra in (("local", []), ("dask", ["--backend", "dask", "--scheduler", cluster.scheduler_address])):
        assert main(common + ["--out", str(tmp_path / name)] + extra) == 0
        printed[name] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed["dask"] == printed["local"]
    assert [r["log"] for r in printed["local"]] == [str(first), str(second)]
    for sub in ("01-deal", "02-other"):
        for name in ("review.json", "decisions.parquet"):
            assert (tmp_path / "dask" / sub / name).read_bytes() == (tmp_path / "local" / sub / name).read_bytes()
    index = json.loads((tmp_path / "local" / "reviews.json").read_text(encoding="utf-8"))["reviews"]
    assert [e["folder"] for e in index] == ["01-deal", "02-other"]
    assert "02-other/review.md" in (tmp_path / "local" / "report.md").read_text(encoding="utf-8")
    assert main(common[:1] + [str(second)] + common[3:]) == 0  # the second log alone: its review as above
    alone = json.loads(capsys.readouterr().out)
    assert {"log": str(second), **alone} == printed["local"][1]
    # a review of several logs writes only into its own kind of folder, and has no single page
    rc, err = run_cli(common + ["--out", str(tmp_path / "local" / "01-deal")], capsys)
    one_line_error(rc, err, "review of several logs")
    rc, err = run_cli(common + ["--html", str(tmp_path / "page.html")], capsys)
    one_line_error(rc, err, "--html writes the page of one log, got 2 logs")


def test_a_worker_killed_mid_review_costs_its_tasks_only(tmp_path, cluster_to_kill):
    """SIGKILL of a worker process while it analyses a decision: the scheduler runs that
    decision again elsewhere, and the review is the local one."""
    decisions = parse_decision_log(deal_log(tmp_path).read_text(encoding="utf-8").splitlines())
    spec = ReviewSpec(seat=1, rollouts=512, seed=3)
    local = review_decisions(decisions, spec, Execution(quiet=True))
    dask = run_killing_a_worker(cluster_to_kill, lambda: review_decisions(
        decisions, spec, Execution(backend="dask", scheduler=cluster_to_kill.scheduler_address, quiet=True)))
    assert dask.to_json() == local.to_json()


def test_tune_on_dask_is_local(tmp_path, cluster):
    """Each iteration's plays as tasks, added up in the local order: the same trajectory, the
    same tuned values and the same files (the validation's batches too)."""
    spec = TuneSpec("patient:6", {"min_units": (1, 8), "late_stock": (0, 12)}, ["greedy", "random"],
                    PLAYS_PER_DEAL * 30 * 3, seed=2, iteration_deals=30, validate_deals=40, batch_size=20)
    local = tune(spec, tmp_path / "local", Execution(quiet=True))
    dask = tune(spec, tmp_path / "dask", Execution(quiet=True, backend="dask", scheduler=cluster.scheduler_address))
    pd.testing.assert_frame_equal(dask.trajectory, local.trajectory)
    assert dask.tuned == local.tuned and dask.last == local.last and dask.text() == local.text()
    assert without_cpu(dask.validation.to_json()) == without_cpu(local.validation.to_json())
    for name in ("state.json", "trajectory.csv", "tune.json", "report.md"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    digests = batch_digests(tmp_path / "local" / "validation")
    assert len(digests) == 6 * 2 and batch_digests(tmp_path / "dask" / "validation") == digests


TINY_EXPERIMENT = """
name = "tiny"
title = "Tiny"
description = "A small experiment."
seed = 3
batch_size = 50

[[simulation]]
label = "mixed"
policies = "greedy,random,patient"
deals = 150

[[comparison]]
a = "greedy"
b = "patient"
deals = 400
sprt = [0.05, 0.05, 0.05]
burn_in = 100

[tournament]
policies = ["random", "greedy", "patient"]
deals = 40
"""


def test_experiment_on_dask_is_local_on_one_connection(tmp_path, cluster, monkeypatch):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_EXPERIMENT, encoding="utf-8")
    local = run_experiment(spec, out=tmp_path / "local", execution=Execution(quiet=True))
    sessions = []
    real_connect = sim_module.connect_dask

    def connect(*args, **kw):
        sessions.append(real_connect(*args, **kw))
        return sessions[-1]

    monkeypatch.setattr(sim_module, "connect_dask", connect)
    dask = run_experiment(spec, out=tmp_path / "dask",
                          execution=Execution(backend="dask", scheduler=cluster.scheduler_address, quiet=True))
    assert len(sessions) == 1 and sessions[0][0].status == "closed"  # one connection, closed at the end
    digests = batch_digests(tmp_path / "local" / "data")
    # the simulation's 3 batches, the SPRT's 7 (it stops at 350 deals of 400), the tournament's 3 pairings
    assert len(digests) == 3 + 6 * 7 + 3 * 6 and batch_digests(tmp_path / "dask" / "data") == digests

    def body(path: Path) -> list[str]:  # the report without its time, hardware and folders
        lines = path.read_text(encoding="utf-8").replace(str(path.parent.parent), "OUT").splitlines()
        return [line for line in lines if "generated" not in line and not line.startswith("Hardware")]

    assert body(dask) == body(local)


KILLED_EXPERIMENT = """
name = "killed"
title = "Killed"
description = "An experiment whose worker is killed."
seed = 24
batch_size = 2500

[[simulation]]
label = "expert"
policies = "expert,expert,expert"
deals = 20000

[[comparison]]
a = "expert"
b = "greedy"
deals = 500
luck = true
"""


def test_a_worker_killed_mid_experiment_costs_its_tasks_only(tmp_path, cluster_to_kill):
    """An experiment (a simulation, and a luck-adjusted comparison: its luck replayed on the
    cluster too) with a worker SIGKILLed as soon as it holds a task: the local files and report."""
    spec = tmp_path / "killed.toml"
    spec.write_text(KILLED_EXPERIMENT, encoding="utf-8")
    local = run_experiment(spec, out=tmp_path / "local", execution=Execution(quiet=True))
    dask = run_killing_a_worker(cluster_to_kill, lambda: run_experiment(
        spec, out=tmp_path / "dask",
        execution=Execution(backend="dask", scheduler=cluster_to_kill.scheduler_address, quiet=True)))
    assert batch_digests(tmp_path / "dask" / "data") == batch_digests(tmp_path / "local" / "data")
    assert luck_files(tmp_path / "dask" / "data" / "cmp-expert-vs-greedy") == \
        luck_files(tmp_path / "local" / "data" / "cmp-expert-vs-greedy") != {}

    def body(path: Path) -> list[str]:  # the report without its time, hardware, folders and CPU figures
        lines = path.read_text(encoding="utf-8").replace(str(path.parent.parent), "OUT").splitlines()
        kept, column = [], None
        for line in lines:
            cells = line.split("|")
            named = [i for i, cell in enumerate(cells) if cell.strip() == "efficiency per CPU-second"]
            if named:
                column = named[0]  # the column of what the work cost, measured per run
            elif not line.startswith("|"):
                column = None
            if column is not None and line.startswith("|"):
                line = "|".join(cells[:column] + cells[column + 1:])
            kept.append(line)
        return [line for line in kept if "generated" not in line and not line.startswith("Hardware")
                and "CPU" not in line and "efficiency" not in line]

    assert body(dask) == body(local)


@pytest.mark.parametrize("argv, needles", [
    (["review", "LOG", "--seat", "1", "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler needs --backend dask"]),
    (["tune", "patient:6", "--params", "min_units=1:8", "--against", "greedy", "--budget", "600",
      "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler needs --backend dask"]),
    (["tune", "patient:6", "--params", "min_units=1:8", "--against", "greedy", "--budget", "600", "--iteration-deals",
      "3", "--workers", "2"],
     ["--workers needs --backend dask", "got --backend local"]),
    (["experiment", "run", "SPEC", "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler needs --backend dask"]),
    (["train", "--deals", "5", "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler needs --backend dask"]),
    (["train", "--deals", "5", "--workers", "2"], ["--workers needs --backend dask", "got --backend local"]),
    (["luck-model", "--scheduler", "tcp://127.0.0.1:1"], ["--scheduler needs --backend dask"]),
    (["luck-model", "--workers", "2"], ["--workers needs --backend dask", "got --backend local"]),
])
def test_bad_backend_combinations_are_one_line(tmp_path, capsys, argv, needles):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_EXPERIMENT, encoding="utf-8")
    argv = [str(deal_log(tmp_path)) if a == "LOG" else str(spec) if a == "SPEC" else a for a in argv]
    out = tmp_path / ("out.npz" if argv[0] == "luck-model" else "out")
    rc, err = run_cli(argv + ["--out", out], capsys)
    one_line_error(rc, err, *needles)
    assert not out.exists()


# ---------------------------------------------------------------- train, luck-model

TRAIN_ARGS = ["--seed", "5", "--deals", "60", "--rate", "0.3", "--check-deals", "20", "--hidden", "4,2", "--epochs",
              "2", "--quiet"]
RUN_RECORD_FIELDS = ("record_seconds", "fit_seconds", "seconds", "wall_seconds_to_here", "hardware", "command", "base",
                     "content_sha256")  # the run record's own fields (and its digest, which covers them)


def training_files(folder: Path) -> dict[str, bytes]:
    """Every model file of a training folder, and each generation's metrics without its run
    record (seconds, machine, command line, the base model's path)."""
    files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.npz"))}
    for path in sorted(folder.rglob("metrics.json")):
        metrics = json.loads(path.read_text(encoding="utf-8"))
        files[str(path.relative_to(folder))] = json.dumps({k: v for k, v in metrics.items()
                                                           if k not in RUN_RECORD_FIELDS}, sort_keys=True).encode()
    return files


def test_train_on_dask_gives_the_local_model_bytes(tmp_path, cluster, monkeypatch):
    """Two generations (the second's base, a learned model, travels as arrays): self-play in
    tasks of 13 deals and checks in tasks of 7 (uneven pieces), reassembled in deal order, give
    the local rows, fits, checks and model files byte for byte."""
    train_module = importlib.import_module("simkit.learn.train")
    monkeypatch.setattr(train_module, "SELFPLAY_TASK_DEALS", 13)
    monkeypatch.setattr(train_module, "CHECK_TASK_DEALS", 7)
    common = ["train", "--generations", "2"] + TRAIN_ARGS
    assert main(common + ["--out", str(tmp_path / "local")]) == 0
    submitted = []
    real_submit = distributed.Client.submit

    def submit(self, *args, **kwargs):
        submitted.append(args[0].__name__)
        return real_submit(self, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "submit", submit)
    assert main(common + ["--out", str(tmp_path / "dask"), "--backend", "dask", "--scheduler",
                          cluster.scheduler_address]) == 0
    # per generation: ceil(60 / 13) self-play tasks and ceil(20 / 7) check tasks
    assert sorted(set(submitted)) == ["_check_task", "_selfplay_task"] and len(submitted) == 2 * (5 + 3)
    local = training_files(tmp_path / "local")
    assert {"gen-001/model.npz", "gen-002/model.npz", "model.npz"} <= set(local)
    assert training_files(tmp_path / "dask") == local


def test_a_worker_killed_mid_training_costs_its_tasks_only(tmp_path, cluster_to_kill, monkeypatch):
    train_module = importlib.import_module("simkit.learn.train")
    monkeypatch.setattr(train_module, "SELFPLAY_TASK_DEALS", 10)
    spec = TrainSpec(generations=1, seed=8, deals=120, rate=0.3, check_deals=20, hidden=(4, 2), epochs=2)
    train_module.train(spec, tmp_path / "local", Execution(quiet=True))
    run_killing_a_worker(cluster_to_kill, lambda: train_module.train(spec, tmp_path / "dask", Execution(
        quiet=True, backend="dask", scheduler=cluster_to_kill.scheduler_address)))
    assert training_files(tmp_path / "dask") == training_files(tmp_path / "local")


def test_luck_model_on_dask_gives_the_local_bytes(tmp_path, cluster_to_kill, monkeypatch):
    """The rows of each pair and seating in tasks of 7 deals, the check's too, reassembled in
    deal order: the same value-model file; a ``learned:PATH`` pair relative to this process's
    folder (not the workers') is read by the workers at its absolute path."""
    import shutil

    from simkit.policies.model import BUILTIN_MODEL

    value = importlib.import_module("simkit.learn.value")
    monkeypatch.setattr(value, "TASK_DEALS", 7)
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(BUILTIN_MODEL, tmp_path / "mine.npz")
    common = ["luck-model", "--seed", "11", "--deals", "30", "--check-deals", "20", "--hidden", "4", "--epochs", "3",
              "--quiet", "--pair", "greedy,random", "--pair", "learned:mine.npz,greedy"]
    assert main(common + ["--out", "local.npz"]) == 0
    assert main(common + ["--out", "dask.npz", "--backend", "dask", "--scheduler", cluster_to_kill.scheduler_address]) == 0
    assert (tmp_path / "dask.npz").read_bytes() == (tmp_path / "local.npz").read_bytes()
    # the library, on a worker killed mid-run: the same bytes again
    spec = LuckModelSpec(seed=11, deals=30, pairs=[("greedy", "random"), ("learned:mine.npz", "greedy")], hidden=4,
                         epochs=3, check_deals=20)
    run_killing_a_worker(cluster_to_kill, lambda: value.train_value_model(spec, tmp_path / "killed.npz", Execution(
        quiet=True, backend="dask", scheduler=cluster_to_kill.scheduler_address)))
    assert (tmp_path / "killed.npz").read_bytes() == (tmp_path / "local.npz").read_bytes()
