"""User ``@njit`` policies by import path (``package.module:function[:p0,...]``): parsing and
its one-line errors, the factory-built kernels (the same rows as the built-in policy they
copy), any worker count and a Dask cluster of separate processes giving the same bytes, and
the source digest that refuses resuming after an edit."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd
import pytest

from helpers import module_on_path, one_line_error, run_cli
from simkit.cli import main
from simkit.policies import PolicyError, parse_policies, parse_policy, register_policy, unregister_policy
from simkit.policies.registry import policy_arrays, policy_source_digest, policy_sources
from simkit.replay import replay_events
from simkit.rules import RuleSet
from simkit.runner import play as P
from simkit.runner.play import SEATING_ROTATE, play_deals
from simkit.runner.simulate import compute_batch, simulate
from simkit.storage import DatasetError, load_dataset
from simkit.storage.dataset import MANIFEST, POLICY_SOURCES
from simkit.specs.simulate import SimulateSpec
from simkit.specs.equity import EquitySpec
from simkit.studies.equity import equity
from simkit.specs.base import Execution

MODULE = "simkit_test_user_policies"  # written into a temporary folder put on sys.path
POLICY_SOURCE = '''\
from numba import njit

from simkit.engine.layout import A_PASS
from simkit.policies.builtin import greedy_like

THRESHOLD = 3


@njit
def greedy_copy(obs, mask, params, rng, rules, work):
    """Exactly greedy, from the observation a user policy gets."""
    return greedy_like(obs, mask, params, rules, work, False)


@njit
def helper(obs):
    return obs[0] > THRESHOLD


@njit
def uses_helper(obs, mask, params, rng, rules, work):
    if helper(obs) and mask[A_PASS]:
        return A_PASS
    return greedy_like(obs, mask, params, rules, work, False)


def not_jitted(obs, mask, params, rng, rules, work):
    return 0


@njit
def five(obs, mask, params, rng, rules):
    return 0
'''
COPY = f"{MODULE}:greedy_copy"
USER = f"{COPY},random,patient"  # rotated by default: the user policy moves through the seats
BUILTIN = "greedy,random,patient"
DEALS, BATCH, SEED = 60, 20, 11


@pytest.fixture(scope="module")
def policy_dir(tmp_path_factory):
    """A folder holding the test's policy module, on sys.path (and PYTHONPATH for processes
    started from here) while this module's tests run."""
    yield from module_on_path(tmp_path_factory.mktemp("policies"), MODULE, POLICY_SOURCE)


def _one_line(text: str) -> str:
    assert "\n" not in text.strip(), text
    return text


def _batch_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("batch-*.parquet"))}


def _run(out, policies=USER, **kw):
    execution = Execution(quiet=True, **{k: kw.pop(k) for k in ("workers", "backend", "scheduler") if k in kw})
    max_batches = kw.pop("max_batches", None)
    return simulate(SimulateSpec(DEALS, policies, SEED, batch_size=BATCH, **kw), out, execution,
                    max_batches=max_batches)


def test_import_path_specs_parse(policy_dir):
    a, b, c = parse_policies(f"{COPY}:1.5,2,greedy,patient:3,4")
    assert (a.name, a.params, a.is_import_path) == (COPY, (1.5, 2.0), True)
    assert (b.name, c.params, b.is_import_path) == ("greedy", (3.0, 4.0), False)
    assert a.text() == f"{COPY}:1.5,2" and parse_policy(a.text()) == a
    assert parse_policy(COPY).params == ()
    ids, params, user = policy_arrays(parse_policies(f"random,{COPY},{COPY}:1"))
    # one slot per distinct user function, whatever its seat or parameters
    assert ids.tolist() == [0, P.USER_SLOT_BASE, P.USER_SLOT_BASE] and user[1:] == (None, None)
    assert user[0] is importlib.import_module(MODULE).greedy_copy and params[2, 0] == 1.0
    assert policy_sources(parse_policies(BUILTIN)) == ()
    assert [n for n, _ in policy_sources(parse_policies(USER))] == [COPY]


@pytest.mark.parametrize("spec, words", [
    ("no_such_package.mod:f", ["cannot import module 'no_such_package.mod'", "ModuleNotFoundError"]),
    (f"{MODULE}:missing", [f"module '{MODULE}' has no attribute 'missing'"]),
    (f"{MODULE}:not_jitted", ["must be a numba @njit function"]),
    (f"{MODULE}:five", ["takes 6 parameters", "five(obs, mask, params, rng, rules)"]),
    (f"{MODULE}:THRESHOLD", ["must be a numba @njit function"]),
])
def test_bad_policies_are_one_line_errors_before_anything_is_written(policy_dir, tmp_path, capsys, spec, words):
    out = tmp_path / "out"
    with pytest.raises(PolicyError) as info:
        _run(out, f"{spec},greedy,greedy")
    for word in words:
        assert word in _one_line(str(info.value))
    assert not out.exists()
    rc = main(["simulate", "--deals", "10", "--seed", "1", "--out", str(out), "--policies", f"greedy,{spec},greedy"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("simkit: error: ") and words[0] in _one_line(err)
    assert not out.exists()


def test_a_module_that_fails_to_import_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "simkit_test_broken_policy.py").write_text("import no_such_dependency_xyz\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PolicyError, match=r"cannot import module 'simkit_test_broken_policy' \(ModuleNotFoundError: "
                                          r"No module named 'no_such_dependency_xyz'\)"):
        parse_policies("simkit_test_broken_policy:f,greedy,greedy")


def test_the_factory_kernels_play_a_copy_of_greedy_as_greedy(policy_dir, tmp_path):
    """A user policy doing greedy's work gives greedy's rows: the factory's kernels, the user
    dispatcher and its slots (under rotation the user policy sits at every seat) are right."""
    rules = RuleSet().to_array()
    ids, params, user = policy_arrays(parse_policies(USER))
    bids, bparams, _ = policy_arrays(parse_policies(BUILTIN))
    rows = play_deals(90, SEED, ids, params, rules, user_functions=user, seating=SEATING_ROTATE)
    assert np.array_equal(rows, play_deals(90, SEED, bids, bparams, rules, seating=SEATING_ROTATE))
    assert P.user_kernels(user) is P.user_kernels(user)  # compiled once per process
    # and through simulate: the same rows but for the policy names
    data = load_dataset(_run(tmp_path / "user"))
    ref = load_dataset(_run(tmp_path / "builtin", BUILTIN))
    for k in range(3):
        assert data[f"policy_{k}"].astype(str).replace(COPY, "greedy").tolist() == ref[f"policy_{k}"].astype(str).tolist()
    columns = [c for c in ref.columns if not c.startswith("policy_")]
    pd.testing.assert_frame_equal(data[columns], ref[columns])
    manifest = json.loads((tmp_path / "user" / MANIFEST).read_text(encoding="utf-8"))
    assert manifest[POLICY_SOURCES] == {COPY: policy_source_digest(user[0])}
    assert POLICY_SOURCES not in json.loads((tmp_path / "builtin" / MANIFEST).read_text(encoding="utf-8"))


@pytest.mark.slow  # compiles the user policy's one-deal kernel
def test_replay_by_import_path_matches_the_dataset(policy_dir, tmp_path):
    data = load_dataset(_run(tmp_path / "user"))
    for deal in (0, 7, 59):
        end = list(replay_events(SEED, deal, USER))[-1]
        row = data.iloc[deal]
        assert end["payoffs"] == [int(row[f"payoff_{k}"]) for k in range(3)]


def test_the_digest_follows_helpers_and_constants(tmp_path, monkeypatch):
    name = "simkit_test_digest_policy"
    path = tmp_path / f"{name}.py"
    monkeypatch.syspath_prepend(str(tmp_path))

    def digest(source: str) -> str:
        path.write_text(source, encoding="utf-8")
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return policy_source_digest(importlib.import_module(name).uses_helper)

    try:
        base = digest(POLICY_SOURCE)
        assert digest(POLICY_SOURCE) == base  # the same source: the same digest (a new function object)
        assert digest(POLICY_SOURCE.replace("THRESHOLD = 3", "THRESHOLD = 4")) != base  # a constant it reads
        assert digest(POLICY_SOURCE.replace("obs[0] > THRESHOLD", "obs[1] > THRESHOLD")) != base  # a helper
        assert digest(POLICY_SOURCE.replace("return 0\n\n\n@njit\ndef five", "return 1\n\n\n@njit\ndef five")) == base
    finally:
        sys.modules.pop(name, None)


def test_resuming_after_an_edit_is_refused(tmp_path, monkeypatch, capsys):
    name = "simkit_test_edited_policy"
    path = tmp_path / "mods" / f"{name}.py"
    path.parent.mkdir()
    path.write_text(POLICY_SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(path.parent))
    spec = f"{name}:uses_helper,greedy,greedy"
    out = tmp_path / "out"
    try:
        _run(out, spec, max_batches=0)  # the run's manifest, no batch computed yet
        _run(out, spec, max_batches=0)  # unchanged: resumes
        config = SimulateSpec(DEALS, spec, SEED, batch_size=BATCH, seating="fixed")
        before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
        path.write_text(POLICY_SOURCE.replace("obs[0] > THRESHOLD", "obs[0] >= THRESHOLD"), encoding="utf-8")
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        with pytest.raises(DatasetError, match=rf"policy {name}:uses_helper changed since this dataset was started "
                                               r"\(source digest [0-9a-f]{16} != [0-9a-f]{16}\)") as info:
            _run(out, spec)
        _one_line(str(info.value))
        assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before  # nothing touched
        rc = main(["simulate", "--deals", str(DEALS), "--batch-size", str(BATCH), "--seed", str(SEED), "--out",
                   str(out), "--policies", spec])
        err = capsys.readouterr().err
        assert rc == 2 and "changed since this dataset was started" in _one_line(err) and "--out" in err
        # a worker whose copy of the policy differs from the run's refuses to play a batch
        with pytest.raises(Exception, match=rf"policy {name}:uses_helper differs in this process"):
            compute_batch(config, 0)
    finally:
        sys.modules.pop(name, None)


def test_a_registered_policy_says_it_stays_in_this_process(policy_dir, tmp_path, capsys):
    register_policy("greedy_copy_t", importlib.import_module(MODULE).greedy_copy)
    try:
        data = load_dataset(_run(tmp_path / "reg", "greedy_copy_t,random,patient", workers=2))
        assert "registered in this process only" in capsys.readouterr().err
        # equity's deals too (simkit.runner.simulate.where_policies_run serves both)
        hand = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"
        result = equity(EquitySpec(hand, 0, "greedy_copy_t,random,patient", deals=20, seed=SEED, batch_size=10,
                                   baseline=False), tmp_path / "eq", Execution(workers=2, quiet=True))
        assert "registered in this process only" in capsys.readouterr().err
    finally:
        unregister_policy("greedy_copy_t")
    assert len(data) == DEALS and result.deals == 20


@pytest.mark.slow  # every worker process compiles the user policy's kernels
def test_workers_give_the_same_bytes(policy_dir, tmp_path):
    one = _run(tmp_path / "w1")
    rc = main(["simulate", "--deals", str(DEALS), "--batch-size", str(BATCH), "--seed", str(SEED), "--quiet",
               "--out", str(tmp_path / "w2"), "--policies", USER, "--workers", "2"])
    assert rc == 0
    assert _batch_bytes(one) == _batch_bytes(tmp_path / "w2") and len(_batch_bytes(one)) == DEALS // BATCH
    manifests = [json.loads((p / MANIFEST).read_text(encoding="utf-8")) for p in (one, tmp_path / "w2")]
    assert manifests[0]["files"] == manifests[1]["files"]
    assert manifests[0]["config_digest"] == manifests[1]["config_digest"]


def _wait_for(predicate, timeout: float, what: str, procs) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        for proc in procs:
            if proc.poll() is not None:
                raise AssertionError(f"{what}: {proc.args} exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.2)


@contextlib.contextmanager
def command_line_cluster(folder: Path, env: dict, workers: int = 2) -> Iterator[str]:
    """A Dask scheduler and ``workers`` single-threaded workers started as separate processes
    (``python -m dask ...``, in ``folder``, with environment ``env``), as a user starts them;
    the scheduler's address; all stopped at the end."""
    pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'simkit[dask]')")
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    log = open(folder / "dask.log", "wb")
    procs: list[subprocess.Popen] = []
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                       "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)],
                                      cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT))
        _wait_for(scheduler_file.exists, 60, "dask scheduler", procs)
        time.sleep(0.5)  # the file is written whole, but give it a moment
        address = json.loads(scheduler_file.read_text(encoding="utf-8"))["address"]
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", "--scheduler-file",
                                       str(scheduler_file), "--nworkers", str(workers), "--nthreads", "1",
                                       "--no-dashboard", "--local-directory", str(folder / "dask-worker")],
                                      cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT))
        with Client(address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=120)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


@pytest.mark.slow  # a Dask cluster of separate processes; each worker compiles the user kernels
def test_a_dask_cluster_started_from_the_command_line_gives_the_same_bytes(policy_dir, tmp_path):
    one = _run(tmp_path / "w1")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(policy_dir)] + [p for p in
                                                                           [os.environ.get("PYTHONPATH")] if p])}
    with command_line_cluster(tmp_path, env) as address:
        rc = main(["simulate", "--deals", str(DEALS), "--batch-size", str(BATCH), "--seed", str(SEED), "--quiet",
                   "--out", str(tmp_path / "dask"), "--policies", USER, "--backend", "dask", "--scheduler", address])
        assert rc == 0
    assert _batch_bytes(one) == _batch_bytes(tmp_path / "dask") and len(_batch_bytes(one)) == DEALS // BATCH


@pytest.mark.slow  # a Dask cluster of separate processes
def test_a_worker_without_the_policy_module_is_one_line(policy_dir, tmp_path, capsys):
    """A worker that cannot import a user policy's module (not installed there, not on its
    PYTHONPATH): the command stops with one line naming the module and where it failed, and
    writes no batch."""
    (tmp_path / "elsewhere").mkdir()
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(policy_dir)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    with command_line_cluster(tmp_path / "elsewhere", env, workers=1) as address:
        rc, err = run_cli(["simulate", "--deals", DEALS, "--batch-size", BATCH, "--seed", SEED, "--quiet",
                           "--out", tmp_path / "dask", "--policies", USER, "--backend", "dask",
                           "--scheduler", address], capsys)
    one_line_error(rc, err, f"cannot import module '{MODULE}'", "Dask worker")
    assert not list((tmp_path / "dask").rglob("*.parquet"))  # (no folder at all: nothing globbed either)


@pytest.mark.slow  # a Dask cluster of separate processes
def test_a_worker_without_simkit_is_one_line(tmp_path, capsys):
    """A worker whose Python cannot import simkit (here a package of that name that fails to
    import, first on its PYTHONPATH): one line saying a Dask worker lacks simkit, no batch."""
    fake = tmp_path / "shadow" / "simkit"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("this simkit is broken on purpose")\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    (tmp_path / "elsewhere").mkdir()
    with command_line_cluster(tmp_path / "elsewhere", env, workers=1) as address:
        rc, err = run_cli(["simulate", "--deals", DEALS, "--batch-size", BATCH, "--seed", SEED, "--quiet",
                           "--out", tmp_path / "dask", "--policies", BUILTIN, "--backend", "dask",
                           "--scheduler", address], capsys)
    one_line_error(rc, err, "Dask worker", "cannot import simkit")
    assert not list((tmp_path / "dask").rglob("*.parquet"))


def test_the_worked_example_is_an_import_path_policy():
    spec = parse_policy("experiments.user_policy_example:cautious:20")
    assert spec.is_import_path and spec.params == (20.0,)
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert "experiments.user_policy_example:cautious" in readme
