"""``simkit train`` at CI size: it learns (its loss falls, its model beats random), it is a
pure function of its settings (a killed run resumes to the same model), and it refuses another
run's folder.

What each test catches: a fit that does not run its epochs or fits noise upward (the loss);
an export or a policy that plays nonsense (the model must beat random with an interval above
0); a resume that re-draws its deals or refits differently (the same blocks as an
uninterrupted run after a SIGKILL); a folder reused for other settings (one-line refusal); a
model or value-model file that depends on its folder, the clock or a model's path (issue 36: the
same training, in two folders seconds apart, must give the same bytes).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from simkit.analysis.stats import mean_interval
from simkit.errors import SimkitError
from simkit.rules import RuleSet

pytest.importorskip("sklearn")

from simkit.learn.train import MODEL_FILE, generation_dir, strength_check, train  # noqa: E402 - after the skip
from simkit.policies.model import load_model  # noqa: E402
from simkit.specs.base import Execution  # noqa: E402
from simkit.specs.luck_model import LuckModelSpec  # noqa: E402
from simkit.specs.train import TrainSpec  # noqa: E402

TINY = TrainSpec(deals=400, rate=0.3, check_deals=30, hidden=(8, 4), epochs=4)
QUIET = Execution(quiet=True)
TINY_ARGS = ["--deals", "400", "--rate", "0.3", "--check-deals", "30", "--hidden", "8,4", "--epochs", "4"]


# ---- what the code before the run specs (7a6833d) wrote, pasted from its files (issue 53)

OLD_RULES = {"lou_doubles": True, "hu_tolerance": 2, "jiang_in_chariot": False, "pattern_wins": True,
             "steps_count_lou": False, "drawn_card_chow_by": "drawer", "pass_locks_type": True, "must_kong": True,
             "must_chariot_out": True, "tianhu": True, "next_dealer": "winner_else_next", "zhan_in_chariot": False,
             "single_jiang_cap": 0, "drawn_jiang_chow": True, "pass_locks_win": True}
# train.json of TINY with seed 3, and what its generation 1's model file recorded (but the versions
# and the fit's figures) and its metrics counted: the self-play's rows and decisions
OLD_TRAIN_IDENTITY = {"kind": "simkit.train", "seed": 3, "rules": OLD_RULES,
                      "settings": {"deals": 400, "rate": 0.3, "hidden": [8, 4], "epochs": 4, "alpha": 0.01,
                                   "batch_size": 1024, "learning_rate": 0.001, "check_deals": 30},
                      "features": 444}
OLD_GENERATION_1 = {"base": "expert", "deals_seen": 400, "generation": 1, "seed": 3,
                    "settings": {"alpha": 0.01, "batch_size": 1024, "check_deals": 30, "deals": 400, "epochs": 4,
                                 "hidden": [8, 4], "learning_rate": 0.001, "rate": 0.3}}
OLD_ROWS, OLD_DECISIONS = 22865, 4527


def test_the_specs_identity_is_what_old_training_folders_hold():
    """Catches a TrainSpec identity that is the generic serialisation (flat fields, generations
    in it) or renames a key: an old folder would be refused as another training run."""
    assert TINY.replace(seed=3).identity() == OLD_TRAIN_IDENTITY
    assert TINY.replace(seed=3, generations=7).identity() == OLD_TRAIN_IDENTITY  # more generations continue


def test_tiny_training_learns_and_beats_random(tmp_path):
    """...in a folder holding the train.json the old code wrote for these settings (accepted,
    not refused), recording what the old code recorded."""
    from simkit.storage.files import write_checked_json

    (tmp_path / "t").mkdir()
    write_checked_json(tmp_path / "t" / "train.json", OLD_TRAIN_IDENTITY)
    result = train(TINY.replace(generations=1, seed=3), tmp_path / "t", QUIET)
    metrics = result.generations[0]
    assert (metrics["rows"], metrics["decisions"]) == (OLD_ROWS, OLD_DECISIONS)
    recorded = load_model(generation_dir(tmp_path / "t", 1) / MODEL_FILE).meta["training"]
    assert {key: recorded[key] for key in OLD_GENERATION_1} == OLD_GENERATION_1
    assert metrics["loss_curve"][-1] < metrics["loss_curve"][0]
    assert metrics["rows"] > 1000 and metrics["validation_variance"] > 0
    assert (tmp_path / "t" / "report.md").is_file() and (tmp_path / "t" / "strength.png").is_file()
    differences = strength_check(f"learned:{result.model}", 60, seed=77, rules=RuleSet(), against="random")
    interval = mean_interval(differences)
    assert interval.lo > 0, interval


def _cli(out: Path, generations: int) -> list[str]:
    return [sys.executable, "-m", "simkit", "train", "--out", str(out), "--seed", "5", "--generations",
            str(generations), "--quiet", *TINY_ARGS]


def test_resume_after_a_kill_gives_the_same_model(tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    subprocess.run(_cli(whole, 2), check=True, capture_output=True, timeout=600)
    process = subprocess.Popen(_cli(killed, 2), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = generation_dir(killed, 1) / "metrics.json"
    deadline = time.monotonic() + 600
    while not first.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert first.exists()
    assert not (generation_dir(killed, 2) / "metrics.json").exists()  # killed inside generation 2
    done = subprocess.run(_cli(killed, 2), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    for g in (1, 2):
        a = load_model(generation_dir(whole, g) / MODEL_FILE)
        b = load_model(generation_dir(killed, g) / MODEL_FILE)
        assert np.array_equal(a.block, b.block), g
    assert np.array_equal(load_model(whole / MODEL_FILE).block, load_model(killed / MODEL_FILE).block)


def test_another_runs_folder_is_refused(tmp_path):
    train(TINY.replace(generations=1, seed=3), tmp_path / "t", QUIET)
    with pytest.raises(SimkitError, match="holds another training run"):
        train(TINY.replace(generations=1, seed=3, deals=500), tmp_path / "t", QUIET)


@pytest.mark.parametrize("argv, flag", [(["--hidden", "0,4"], "--hidden"), (["--rate", "1.5"], "--rate"),
                                        (["--deals", "2"], "--deals")])
def test_bad_train_arguments_are_one_line(tmp_path, argv, flag):
    done = subprocess.run([sys.executable, "-m", "simkit", "train", "--out", str(tmp_path / "x"), *argv],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and flag in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "x").exists()


def test_a_layer_wider_than_a_model_file_holds_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    """``luck-model --hidden 300`` trained 30 s (445 MB) before the network's packing refused the
    width: the command line, ``LuckModelSpec`` and ``TrainSpec`` check the one limit,
    :data:`simkit.defaults.MAX_HIDDEN_WIDTH`, before any deal (here the work raises if reached;
    the command line before it even loads scikit-learn)."""
    import simkit.cli as cli
    import simkit.learn.train as training
    import simkit.learn.value as value
    from simkit.defaults import MAX_HIDDEN_WIDTH
    from simkit.policies.network import MAX_WIDTH
    from tests.helpers import one_line_error, run_cli

    assert MAX_WIDTH == MAX_HIDDEN_WIDTH  # the kernels' limit is the one the checks read

    def reached(*args, **kwargs):
        raise AssertionError("the work started")

    monkeypatch.setattr(value, "_training_rows", reached)
    monkeypatch.setattr(training, "_train", reached)
    monkeypatch.setattr(cli, "_learn_module", reached)  # the command line's own check: before the library's
    out = tmp_path / "v.npz"
    for width in (MAX_HIDDEN_WIDTH + 1, 1_000_000):
        rc, err = run_cli(["luck-model", "--out", out, "--seed", "1", "--hidden", width, "--quiet"], capsys)
        one_line_error(rc, err, "--hidden", f"at most {MAX_HIDDEN_WIDTH}", str(width))
        with pytest.raises(SimkitError, match=f"hidden must be at most {MAX_HIDDEN_WIDTH}") as info:
            value.train_value_model(LuckModelSpec(seed=1, deals=10, hidden=width), out, QUIET)
        assert "\n" not in str(info.value)
        rc, err = run_cli(["train", "--out", tmp_path / "t", "--hidden", f"16,{width}", "--quiet"], capsys)
        one_line_error(rc, err, "--hidden", f"1..{MAX_HIDDEN_WIDTH}")
        with pytest.raises(SimkitError, match=f"two layer widths in 1..{MAX_HIDDEN_WIDTH}"):
            TrainSpec(hidden=(width, 16))
    for hidden in ((64, 16, 8), (64,), (64.0, 16)):  # not two whole widths: one line, not a ValueError
        with pytest.raises(SimkitError, match="two layer widths"):
            TrainSpec(hidden=hidden)
    assert list(tmp_path.iterdir()) == []  # nothing written
    with pytest.raises(AssertionError, match="the work started"):  # the widest layer is trained
        value.train_value_model(LuckModelSpec(seed=1, deals=10, hidden=MAX_HIDDEN_WIDTH), out, QUIET)


def _pause_and_move_the_clock(monkeypatch) -> None:
    """Between two runs: more than a zip date's 2 s resolution of real time, and this process's
    clock (``time.time``, which zipfile's ``writestr`` dates members by) an hour on."""
    import time as time_module

    time.sleep(2.1)
    real_time = time_module.time
    monkeypatch.setattr(time_module, "time", lambda: real_time() + 3600.0)


def _meta(path: Path) -> dict:
    with np.load(path) as archive:
        return json.loads(str(archive["meta"][()]))


def test_the_same_training_gives_the_same_model_bytes_in_any_folder(tmp_path, monkeypatch):
    """Issue 36: a model file is a function of its settings, seed and software only.  Two runs
    of two generations with the same settings and seed, the first by the library into
    ``tmp/a`` (with a command line naming it, as the CLI passes), the second by the command line
    ``simkit train`` from another working folder into a relative ``--out`` (a longer path),
    seconds later with the clock moved: every generation's model file is the same bytes.  The
    models hold no path (before, the command with its --out path was in their metadata);
    generation 2 names its base by relative name and digest, and the paths, command lines and
    times are in the run record (metrics.json)."""
    one = train(TINY.replace(generations=2, seed=5), tmp_path / "a", QUIET,
                command=f"simkit train --out {tmp_path / 'a'}")
    _pause_and_move_the_clock(monkeypatch)
    cwd = tmp_path / "much"
    cwd.mkdir()
    done = subprocess.run([sys.executable, "-m", "simkit", "train", "--out", "deeper/and-longer/b", "--seed", "5",
                           "--generations", "2", "--quiet", *TINY_ARGS], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    two = cwd / "deeper" / "and-longer" / "b"
    for g in (1, 2):
        a = (generation_dir(one.out, g) / MODEL_FILE).read_bytes()
        b = (generation_dir(two, g) / MODEL_FILE).read_bytes()
        assert a == b, g
        assert str(tmp_path).encode() not in a and b"deeper" not in b and b"simkit train" not in a, g
    assert one.model.read_bytes() == (two / MODEL_FILE).read_bytes()
    from simkit.archive import ZIP_EPOCH

    with zipfile.ZipFile(one.model) as archive:
        assert archive.namelist() == ["block.npy", "meta.npy"]
        assert {info.date_time for info in archive.infolist()} == {ZIP_EPOCH}
    first_digest = hashlib.sha256((generation_dir(two, 1) / MODEL_FILE).read_bytes()).hexdigest()
    assert _meta(generation_dir(two, 1) / MODEL_FILE)["training"]["base"] == "expert"
    training = _meta(generation_dir(two, 2) / MODEL_FILE)["training"]
    assert (training["base"], training["base_model_sha256"]) == ("learned:gen-001/model.npz", first_digest)
    record = json.loads((generation_dir(two, 2) / "metrics.json").read_text(encoding="utf-8"))
    assert "deeper/and-longer/b" in record["command"] and "deeper/and-longer/b/gen-001" in record["base"]
    assert record["base_model_sha256"] == first_digest and record["seconds"] > 0 and record["hardware"]
    assert load_model(two / MODEL_FILE).digest == one.best["model_sha256"]


def test_the_same_value_model_training_gives_the_same_bytes(tmp_path, monkeypatch):
    """The luck's value model (``simkit luck-model``) too: trained by the library into one
    folder and by the command line into another, seconds later with the clock moved, with a
    ``learned:PATH`` pair whose model file lies in two different places, it is the same bytes:
    no wall time, no date, no path (a learned policy is recorded by its model's digest); the
    path, command line and time are in the run record ``FILE.npz.run.json``."""
    import shutil

    from simkit.learn.value import train_value_model
    from simkit.policies.model import BUILTIN_MODEL
    from simkit.runner.value_model import load_value_model

    here, there = tmp_path / "m.npz", tmp_path / "models" / "elsewhere" / "renamed.npz"
    there.parent.mkdir(parents=True)
    shutil.copyfile(BUILTIN_MODEL, here)
    shutil.copyfile(BUILTIN_MODEL, there)
    first = tmp_path / "one.npz"
    train_value_model(LuckModelSpec(seed=11, deals=60, pairs=[("greedy", "random"), (f"learned:{here}", "greedy")],
                                    hidden=4, epochs=3, check_deals=20), first, QUIET)
    _pause_and_move_the_clock(monkeypatch)
    cwd = tmp_path / "models"
    (cwd / "out").mkdir()
    done = subprocess.run([sys.executable, "-m", "simkit", "luck-model", "--out", "out/the-second-one.npz", "--seed",
                           "11", "--deals", "60", "--check-deals", "20", "--hidden", "4", "--epochs", "3", "--quiet",
                           "--pair", "greedy,random", "--pair", "learned:elsewhere/renamed.npz,greedy"],
                          cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    second = cwd / "out" / "the-second-one.npz"
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert str(tmp_path).encode() not in data and b"elsewhere" not in data
    model = load_value_model(second)
    digest = hashlib.sha256(BUILTIN_MODEL.read_bytes()).hexdigest()
    assert model.meta["training"]["pairs"] == [["greedy", "random"], [f"learned (model sha256:{digest})", "greedy"]]
    assert "wall_s" not in model.meta["training"]
    from simkit.runner.value_model import run_record_path

    record = json.loads(run_record_path(second).read_text(encoding="utf-8"))
    assert record["model_sha256"] == model.digest == hashlib.sha256(data).hexdigest()
    assert "out/the-second-one.npz" in record["command"] and record["model"] == "out/the-second-one.npz"
    assert record["pairs"][1] == ["learned:elsewhere/renamed.npz", "greedy"] and record["finished"]
    assert json.loads(run_record_path(first).read_text(encoding="utf-8"))["model"] == str(first)


# a value-model file's recorded settings as the old code wrote them (LuckModelSpec(seed=11, deals=60,
# pairs greedy-random, hidden 4, epochs 3, check_deals 20) run at 7a6833d: its meta's training and rules)
OLD_VALUE_SETTINGS = {"check_deals": 20, "deals": 60, "epochs": 3, "hidden": 4, "pairs": [["greedy", "random"]],
                      "seeds": [11]}
OLD_VALUE_ROWS = 17391


def test_the_luck_model_specs_identity_is_what_value_model_files_record(tmp_path):
    """The spec's identity is the settings a value-model file records (and its rules), as the old
    code wrote them; the shipped model's recorded settings are the spec's defaults with its seed
    (catches a default changed in the spec, or a recorded key renamed); and the same spec
    trains to the old file's rows and records the old settings."""
    from simkit.learn.value import train_value_model
    from simkit.runner.value_model import load_value_model

    spec = LuckModelSpec(seed=11, deals=60, pairs=[("greedy", "random")], hidden=4, epochs=3, check_deals=20)
    assert spec.identity() == {**OLD_VALUE_SETTINGS, "rules": OLD_RULES}
    shipped = load_value_model()
    assert LuckModelSpec(seed=shipped.meta["training"]["seeds"][0]).identity() == {
        **{key: shipped.meta["training"][key] for key in OLD_VALUE_SETTINGS}, "rules": shipped.meta["rules"]}
    model = train_value_model(spec, tmp_path / "v.npz", QUIET)
    assert {key: model.meta["training"][key] for key in OLD_VALUE_SETTINGS} == OLD_VALUE_SETTINGS
    assert model.meta["rules"] == OLD_RULES and model.meta["training"]["rows"] == OLD_VALUE_ROWS
