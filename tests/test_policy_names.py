"""Every command that takes a policy takes every policy name (issue 51): the built-in names,
the preset ``search`` (which shares mc's policy id) and parameterised names
(``mc:rollouts=2``, ``expert:danger=20``), and no built-in is an other in disguise: plain
``learned`` (the shipped model, which decided exactly as expert) is refused in one line, while
``learned:PATH`` plays a model file.

What each test catches:

* ``builtin_names`` built from policy ids (as ``calibrate`` once did): ``search`` missing, so
  ``calibrate search`` and a log naming ``search`` were refused;
* a command that checks names against a list of its own, or takes only unparameterised names;
* ``learned`` still offered (in ``policy_names``, the built-in list, a command's accepted names)
  or silently playing expert;
* ``calibrate``'s review reading the table back from the log it wrote (a ``learned:PATH``
  reference was then refused as "named in a log");
* ``play``'s hint ignoring ``--hint-policy`` (the analysis says which policy rolled out).

Settings are the cheapest that play: 2-3 deals, ``mc:rollouts=2``, ``search`` on 2 deals.
"""

from __future__ import annotations

import io
import json
import shutil
import sys

import pytest
from helpers import one_line_error, run_cli

from simkit.errors import SimkitError
from simkit.policies import builtin_names, policy_names
from simkit.policies.model import BUILTIN_MODEL
from simkit.policies.registry import PolicyError, PolicySpec, parse_policy, policy_arrays
from simkit.specs.base import Execution
from simkit.specs.calibrate import CalibrateSpec
from simkit.studies.reference import calibrate
from simkit.studies.table import ScriptedPerson, play_table, table_setup

NAMES = ("search", "mc:rollouts=2", "expert:danger=20")  # a preset, a parameterised mc, a parameterised expert
TABLE = ",".join(NAMES)
CHEAP_SEARCH = "search:rollouts=16:race=4:confirm=8"  # the preset, searching less
HAND = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"  # 31 cards: seat 0


@pytest.fixture
def model(tmp_path):
    """A model file of the user's (the shipped model's bytes), played as learned:PATH."""
    path = tmp_path / "mine.npz"
    shutil.copyfile(BUILTIN_MODEL, path)
    return path


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """A replay log of a deal played by the three names."""
    path = tmp_path_factory.mktemp("log") / "deal.jsonl"
    from simkit.cli import main

    assert main(["replay", "--seed", "3", "--deal", "0", "--policies", TABLE, "--output", str(path)]) == 0
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[0])["policies"][0].startswith("search")
    return path


# ---------------------------------------------------------------------------- the registry


def test_the_registry_knows_its_builtin_names_presets_included_learned_not():
    assert builtin_names() == ("expert", "greedy", "mc", "patient", "random", "search")
    assert "learned" not in policy_names() and set(builtin_names()) <= set(policy_names())
    for name in builtin_names():
        parse_policy(name)
    for text in NAMES:
        assert parse_policy(text).name == text.partition(":")[0]


def test_plain_learned_is_refused_in_one_line_and_learned_path_plays(model):
    for make in (lambda: parse_policy("learned"), lambda: parse_policy("learned:"),
                 lambda: policy_arrays([PolicySpec("learned")] * 3)):
        with pytest.raises(PolicyError) as info:
            make()
        text = str(info.value)
        assert "\n" not in text and "no longer a built-in policy" in text, text
        assert "learned:PATH" in text and "simkit train" in text, text
    ids, params, _ = policy_arrays([parse_policy(f"learned:{model}")] + [parse_policy("expert")] * 2)
    assert params.shape[1] > 16  # the model block follows the parameters
    with pytest.raises(PolicyError, match=r"learned:PATH, a model file"):
        parse_policy("nosuch")  # the unknown-name message points at model files too


# ---------------------------------------------------------------------------- each command


def test_simulate_replay_and_equity_take_every_name(tmp_path, capsys):
    rc, err = run_cli(["simulate", "--deals", "3", "--seed", "1", "--policies", TABLE, "--out", tmp_path / "sim",
                       "--quiet"], capsys)
    assert rc == 0, err
    rc, err = run_cli(["equity", HAND, "--policies", TABLE, "--deals", "3", "--out", tmp_path / "eq", "--quiet"],
                      capsys)
    assert rc == 0, err
    rc, err = run_cli(["simulate", "--deals", "3", "--seed", "1", "--policies", "learned,greedy,greedy", "--out",
                       tmp_path / "refused"], capsys)
    one_line_error(rc, err, "'learned' is no longer a built-in policy", "learned:PATH")
    assert not (tmp_path / "refused").exists()


def test_compare_tournament_and_tune_take_every_name(tmp_path, capsys):
    rc, err = run_cli(["compare", "mc:rollouts=2", "search", "--deals", "2", "--out", tmp_path / "cmp", "--quiet"],
                      capsys)
    assert rc == 0, err
    assert "search" in (tmp_path / "cmp" / "report.md").read_text(encoding="utf-8")
    # search's preset searches every decision (about 0.5 CPU-s a deal in a seat): the tournament and
    # the tune take it with cheap parameters (the plain name went through compare above)
    rc, err = run_cli(["tournament", CHEAP_SEARCH, *NAMES[1:], "--deals", "2", "--out", tmp_path / "tour", "--quiet"],
                      capsys)
    assert rc == 0, err
    rc, err = run_cli(["tune", CHEAP_SEARCH, "--params", "z=0.5:2", "--against", "mc:rollouts=2,expert:danger=20",
                       "--budget", "12", "--iteration-deals", "2", "--validate-deals", "2", "--out", tmp_path / "tune",
                       "--quiet"], capsys)
    assert rc == 0, err
    rc, err = run_cli(["compare", "learned", "expert", "--deals", "2", "--out", tmp_path / "no"], capsys)
    one_line_error(rc, err, "no longer a built-in policy")


def test_analyze_and_review_take_every_name_as_rollout_policy_and_reference(log, tmp_path, capsys):
    rc, err = run_cli(["analyze", "--log", log, "--at", "3", "--policy", "search:rollouts=2", "--rollouts", "8",
                       "--json"], capsys)
    assert rc == 0, err
    rc = run_cli(["review", log, "--seat", "1", "--policy", "mc:rollouts=2", "--rollouts", "4", "--sharpen", "0",
                  "--reference", "search:rollouts=2", "--samples", "2", "--json", "--quiet"], capsys)[0]
    assert rc == 0
    # the log's deal line names search and mc:rollouts=2: built-in names, so the reference's table reads them
    rc, err = run_cli(["review", log, "--seat", "2", "--rollouts", "4", "--sharpen", "0", "--reference",
                       "expert:danger=20", "--samples", "2", "--quiet", "--out", tmp_path / "rev"], capsys)
    assert rc == 0 and "no loss against" not in err, err
    data = json.loads((tmp_path / "rev" / "review.json").read_text(encoding="utf-8"))
    assert data["reference"]["reference"] == "expert:danger=20"
    assert data["reference"]["table"][:2] == ["search", "mc:rollouts=2"]
    rc, err = run_cli(["review", log, "--seat", "1", "--rollouts", "4", "--reference", "learned"], capsys)
    one_line_error(rc, err, "no longer a built-in policy")


def test_calibrate_takes_every_name_as_policy_and_reference(capsys):
    """``calibrate search`` was refused: its list of built-in names came from the policy ids."""
    for argv in (["search"], ["mc:rollouts=2", "--reference", "expert:danger=20"],
                 ["expert:danger=20", "--reference", "mc:rollouts=2"]):
        from simkit.cli import main

        assert main(["calibrate", *argv, "--deals", "2", "--samples", "2", "--json", "--quiet"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["policy"] == argv[0] and data["deals"] == 2
        assert data["reference"] == (argv[2] if len(argv) > 1 else "expert")


def test_calibrate_takes_the_users_compiled_policies_and_model_files(model, capsys):
    """Not from a log, so an import path and a model file are the user's to name: the seat
    plays any compiled policy, the reference any policy the rollouts play (a model file too: the
    review's table is the one calibrate played, not read back from its own log)."""
    quiet = Execution(quiet=True)  # the library's progress off: stderr below is the commands' alone
    c = calibrate(CalibrateSpec("simkit.bench:greedy_by_import", deals=2, seed=5, samples=2), quiet)
    assert c.policy == "simkit.bench:greedy_by_import" and c.deals == 2
    c = calibrate(CalibrateSpec("greedy", reference=f"learned:{model}", deals=2, seed=5, samples=2), quiet)
    assert c.reference == f"learned:{model}"
    for argv, needle in ((["greedy", "--reference", "simkit.bench:greedy_by_import"],
                          "rollouts play built-in policies only"),
                         (["simkit.bench:GreedyInPython"], "is a Python policy"),
                         (["learned"], "no longer a built-in policy"),
                         (["greedy", "--reference", "learned"], "no longer a built-in policy"),
                         (["mc:rollouts=0"], "rollouts = 0 is out of range")):
        rc, err = run_cli(["calibrate", *argv, "--deals", "2", "--samples", "2"], capsys)
        one_line_error(rc, err, needle)


def test_play_takes_every_name_as_bot_and_hint_policy(tmp_path, monkeypatch, capsys):
    setup = table_setup(seat=0, bots=["search", "mc:rollouts=2"], seed=4, log=None, hint_policy="mc:rollouts=2")
    person = ScriptedPerson()
    play_table(setup, person)
    assert person.outcomes and setup.hint_policy == parse_policy("mc:rollouts=2")
    # on the command line: a hint at the first decision, then quit; the hint names its rollout policy
    monkeypatch.setattr(sys, "stdin", io.StringIO("h\nq\n"))
    from simkit.cli import main

    log = tmp_path / "game.jsonl"
    assert main(["play", "--seed", "4", "--bots", "search", "expert:danger=20", "--hint-rollouts", "8",
                 "--hint-policy", "mc:rollouts=2", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "rollouts: mc:rollouts=2 at every seat" in out and "hint: " in out, out[-2000:]  # the analysis says
    assert json.loads(log.read_text(encoding="utf-8").splitlines()[0])["policies"][1].startswith("search")
    for argv, needle in ((["--hint-policy", "simkit.bench:greedy_by_import"], "rollouts play built-in policies only"),
                         (["--hint-policy", "learned"], "no longer a built-in policy"),
                         (["--bots", "learned", "expert"], "no longer a built-in policy")):
        rc, err = run_cli(["play", "--seed", "4", "--log", tmp_path / "x.jsonl", *argv], capsys)
        one_line_error(rc, err, needle)
    assert not (tmp_path / "x.jsonl").exists()
    with pytest.raises(SimkitError, match="rollouts play built-in policies only"):
        table_setup(seat=0, log=None, hint_policy="simkit.bench:greedy_by_import")


def test_an_experiment_file_takes_every_name(tmp_path):
    from simkit.cli import main

    spec = tmp_path / "names.toml"
    spec.write_text(f"""name = "names"
title = "names"
description = "every policy name"
seed = 7

[[simulation]]
label = "mixed"
policies = "{TABLE}"
deals = 3

[[comparison]]
a = "mc:rollouts=2"
b = "expert:danger=20"
deals = 2

[tournament]
policies = {json.dumps([CHEAP_SEARCH, *NAMES[1:]])}
deals = 2

[[calibration]]
policy = "{CHEAP_SEARCH}"
reference = "expert:danger=20"
deals = 2
samples = 2
""", encoding="utf-8")
    assert main(["experiment", "run", str(spec), "--reports", str(tmp_path / "rep"), "--data", str(tmp_path / "data"),
                 "--quiet"]) == 0
    assert (tmp_path / "rep" / "names" / "report.md").exists()
