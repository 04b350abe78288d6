"""``simkit train`` at CI size: it learns (its loss falls, its model beats random), it is a
pure function of its settings (a killed run resumes to the same model), and it refuses another
run's folder.

What each test catches: a fit that does not run its epochs or fits noise upward (the loss);
an export or a policy that plays nonsense (the model must beat random with an interval above
0); a resume that re-draws its deals or refits differently (the same blocks as an
uninterrupted run after a SIGKILL); a folder reused for other settings (one-line refusal).
"""

from __future__ import annotations

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

from simkit.learn.fit import FitSettings  # noqa: E402 - after the skip: needs scikit-learn
from simkit.learn.train import MODEL_FILE, TrainSettings, generation_dir, strength_check, train  # noqa: E402
from simkit.policies.model import load_model  # noqa: E402

TINY = TrainSettings(deals=400, rate=0.3, check_deals=30, fit=FitSettings(hidden=(8, 4), epochs=4))
TINY_ARGS = ["--deals", "400", "--rate", "0.3", "--check-deals", "30", "--hidden", "8,4", "--epochs", "4"]


def test_tiny_training_learns_and_beats_random(tmp_path):
    result = train(tmp_path / "t", generations=1, seed=3, settings=TINY, quiet=True)
    metrics = result.generations[0]
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
    train(tmp_path / "t", generations=1, seed=3, settings=TINY, quiet=True)
    other = TrainSettings(deals=500, rate=0.3, check_deals=30, fit=FitSettings(hidden=(8, 4), epochs=4))
    with pytest.raises(SimkitError, match="holds another training run"):
        train(tmp_path / "t", generations=1, seed=3, settings=other, quiet=True)


@pytest.mark.parametrize("argv, flag", [(["--hidden", "0,4"], "--hidden"), (["--rate", "1.5"], "--rate"),
                                        (["--deals", "2"], "--deals")])
def test_bad_train_arguments_are_one_line(tmp_path, argv, flag):
    done = subprocess.run([sys.executable, "-m", "simkit", "train", "--out", str(tmp_path / "x"), *argv],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and flag in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "x").exists()


def test_the_same_training_gives_the_same_model_bytes_in_any_folder(tmp_path, monkeypatch):
    """Issue 36: a model file is a function of its settings, seed and software only.  Two runs
    of two generations, into folders of different names and depths, with command lines naming
    them, and the clock moved an hour between them: every generation's model file is the same
    bytes (before, the command with its --out path was in the model's metadata, and numpy dated
    the zip members with the time of writing); the paths and times are in the run record."""
    import time as time_module

    from simkit.archive import ZIP_EPOCH

    one = train(tmp_path / "a", generations=2, seed=5, settings=TINY, quiet=True,
                command=f"simkit train --out {tmp_path / 'a'}")
    real_time = time_module.time
    monkeypatch.setattr(time_module, "time", lambda: real_time() + 3600.0)
    two = train(tmp_path / "much" / "deeper" / "b", generations=2, seed=5, settings=TINY, quiet=True,
                command=f"simkit train --out {tmp_path / 'much' / 'deeper' / 'b'}")
    for g in (1, 2):
        a = (generation_dir(one.out, g) / MODEL_FILE).read_bytes()
        b = (generation_dir(two.out, g) / MODEL_FILE).read_bytes()
        assert a == b, g
    assert one.model.read_bytes() == two.model.read_bytes()
    with zipfile.ZipFile(one.model) as archive:
        assert {info.date_time for info in archive.infolist()} == {ZIP_EPOCH}
    metrics = json.loads((generation_dir(two.out, 1) / "metrics.json").read_text(encoding="utf-8"))
    assert str(tmp_path / "much") in metrics["command"]


def test_the_same_value_model_training_gives_the_same_bytes(tmp_path, monkeypatch):
    """The luck's value model too: no wall time, no date in the file."""
    import time as time_module

    from simkit.learn.value import train_value_model

    first = tmp_path / "one.npz"
    train_value_model(first, seed=11, deals=60, pairs=[("greedy", "random")], hidden=4, epochs=3, check_deals=20,
                      quiet=True)
    real_time = time_module.time
    monkeypatch.setattr(time_module, "time", lambda: real_time() + 3600.0)
    second = tmp_path / "elsewhere" / "two.npz"
    second.parent.mkdir()
    train_value_model(second, seed=11, deals=60, pairs=[("greedy", "random")], hidden=4, epochs=3, check_deals=20,
                      quiet=True)
    assert first.read_bytes() == second.read_bytes()
