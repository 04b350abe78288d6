"""Named policy parameters (issue 20 part 6): ``NAME:key=value:key=value`` wherever a policy is
named, positional values kept; every built-in parameter has a name, a default and a range in one
table; NaN, inf, unknown names and out-of-range values are one-line errors; manifests record the
parameters by name."""

from __future__ import annotations

import json

import pytest

import simkit.policies.expert as X
import simkit.policies.mc as M
from simkit.policies.registry import (
    N_PARAMS,
    PolicyError,
    PolicySpec,
    check_params,
    effective_params,
    param_index,
    param_names,
    param_table_of,
    params_by_name,
    parse_policies,
    parse_policy,
    policy_names,
)
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)


def test_named_and_positional_specs_are_the_same_policy():
    named = effective_params(parse_policy("expert:danger=20:claim_hu=40"))
    assert named[X.X_DANGER] == 20 and named[X.X_CLAIM_HU] == 40
    assert [v for i, v in enumerate(named) if i not in (X.X_DANGER, X.X_CLAIM_HU)] == [
        v for i, v in enumerate(X.EXPERT_DEFAULTS) if i not in (X.X_DANGER, X.X_CLAIM_HU)]
    assert parse_policy("mc:rollouts=8") == parse_policy("mc:8")
    assert parse_policy("patient:late_stock=4") == parse_policy("patient:2,4")
    assert parse_policy("patient:p2=3").params == (2.0, 6.0, 3.0)
    spec = parse_policy("mc:z=2:race=0")
    assert effective_params(spec)[M.MC_Z] == 2 and effective_params(spec)[M.MC_RACE] == 0
    assert spec.named_text() == "mc:z=2:race=0" and parse_policy(spec.named_text()) == spec


def test_the_policy_list_separator_is_never_confused_with_parameters():
    a, b, c = parse_policies("expert:danger=20:claim_hu=40,greedy,patient:min_units=3")
    assert (a.name, b.name, c.name) == ("expert", "greedy", "patient") and c.params == (3.0,)
    old = parse_policies("mc:16,4,1.5,0,0,0,0,greedy,greedy")  # positional, re-joined: still read
    assert old[0].params == (16, 4, 1.5, 0, 0, 0, 0) and [s.name for s in old] == ["mc", "greedy", "greedy"]
    with pytest.raises(PolicyError, match="joined by ':'"):
        parse_policies("expert:danger=20,claim_hu=40,greedy")
    with pytest.raises(PolicyError, match="cannot follow named"):
        parse_policies("patient:min_units=3,5,greedy")
    with pytest.raises(PolicyError, match="mixes positional and named"):
        parse_policy("patient:3,late_stock=2")


@pytest.mark.parametrize("text, words", [
    ("patient:nan", ["'patient'", "min_units", "nan", "finite"]),
    ("patient:inf", ["'patient'", "min_units", "inf"]),
    ("patient:late_stock=-inf", ["late_stock", "-inf"]),
    ("mc:-5", ["'mc'", "rollouts", "-5", "range"]),
    ("mc:0,0,0", ["'mc'", "rollouts", "0", "range"]),
    ("mc:rollouts=1025", ["rollouts", "1025", "[1, 1024]"]),
    ("mc:rollouts=8.5", ["rollouts", "whole number"]),
    ("mc:z=0", ["z", "(0,"]),
    ("mc:search_mode=3", ["search_mode", "3"]),
    ("search:base=2", ["'search'", "base"]),
    ("expert:danger=-1", ["'expert'", "danger", "-1"]),
    ("expert:dangr=20", ["'expert'", "'dangr'", "danger"]),
    ("patient:1,2,3,4", ["'patient'", "takes 3 parameters", "got 4"]),
    ("greedy:1", ["'greedy'", "no parameters"]),
    ("patient:min_units=1:min_units=2", ["'min_units'", "twice"]),
    ("patient:3,late_stock=2", ["'late_stock=2' after 'patient:3'", "joined by ':'"]),
    ("patient:min_units", ["'min_units'", "key=value"]),
    ("patient:min_units=x", ["min_units", "'x'", "not a number"]),
    ("patient:", ["no parameters after"]),
    ("simkit.bench:greedy_by_import:nan", ["p0", "nan"]),
])
def test_bad_parameters_are_one_line_errors_naming_policy_and_parameter(text, words):
    with pytest.raises(PolicyError) as exc:
        parse_policies(f"{text},greedy,greedy")
    message = str(exc.value)
    assert "\n" not in message and all(w in message for w in words), message


def test_a_spec_made_in_python_is_checked_too():
    """The API (tuning, experiments) makes specs without text: the same checks."""
    with pytest.raises(PolicyError, match="min_units = nan"):
        PolicySpec("patient", (float("nan"),))
    with pytest.raises(PolicyError, match="rollouts = 0"):
        PolicySpec("mc", (0.0,))
    with pytest.raises(PolicyError, match="at most 16"):
        PolicySpec("some.module:function", (1.0,) * (N_PARAMS + 1))


def test_every_builtin_parameter_has_a_name_a_default_and_a_range():
    for name in policy_names():
        table = param_table_of(name)
        assert table is not None, name
        names = [p.name for p in table]
        assert len(set(names)) == len(names) and param_names(name) == tuple(names)
        defaults = effective_params(PolicySpec(name))
        assert list(defaults) == [p.default for p in table]
        check_params(name, defaults)  # the defaults are valid
        for i, p in enumerate(table):
            assert param_index(name, p.name) == i and p.lo <= p.default <= p.hi
    # the kernels' own indices name the same parameters as the tables
    assert [param_index("mc", n) for n in ("rollouts", "candidates", "z", "search_mode", "sharpen", "race", "focus",
                                            "horizon", "base", "recut", "confirm")] == [
        M.MC_ROLLOUTS, M.MC_CANDIDATES, M.MC_Z, M.MC_SEARCH_MODE, M.MC_SHARPEN, M.MC_RACE, M.MC_FOCUS, M.MC_HORIZON,
        M.MC_BASE, M.MC_RECUT, M.MC_CONFIRM] == list(range(11))
    assert [param_index("expert", n) for n in ("idle", "danger", "min_units", "late_stock", "danger_late")] == [
        X.X_IDLE, X.X_DANGER, X.X_MIN_UNITS, X.X_LATE_STOCK, X.X_DANGER_LATE]
    # the preset of issue 51 (experiments/search_tuning.md): every decision, every candidate,
    # sharpen 20, raced from 32 to 512 with recut, confirmed on 256
    assert effective_params(PolicySpec("search")) == (512, 28, 1, 0, 20, 32, 0, 0, 1, 1, 256)
    with pytest.raises(PolicyError, match="takes no parameters"):
        param_index("greedy", "p0")


def test_params_by_name():
    assert params_by_name(parse_policy("patient:min_units=3")) == {"min_units": 3.0, "late_stock": 6.0,
                                                                    "peng_slack": 1.0}
    assert params_by_name(parse_policy("greedy")) == {}


def test_the_manifest_records_parameters_by_name_and_the_identity_is_unchanged(tmp_path):
    """A named spec is the same run as its positional spelling (the identity still records
    ``patient:3,6,1``), and the manifest adds the parameters by name; a manifest written
    without them (before) is still read and resumed."""
    from simkit.runner.simulate import simulate
    from simkit.storage.dataset import MANIFEST, MANIFEST_DIGEST, POLICY_PARAMS, manifest_digest

    out = simulate(SimulateSpec(20, "patient:min_units=3,greedy,greedy", 1, batch_size=10), tmp_path / "d", QUIET)
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["policies"] == ["patient:3,6,1", "greedy", "greedy"]
    assert manifest[POLICY_PARAMS] == [{"min_units": 3, "late_stock": 6, "peng_slack": 1}, {}, {}]
    simulate(SimulateSpec(20, "patient:3,greedy,greedy", 1, batch_size=10), out, QUIET)  # the same run: accepted
    del manifest[POLICY_PARAMS]
    manifest[MANIFEST_DIGEST] = manifest_digest(manifest)
    (out / MANIFEST).write_text(json.dumps(manifest))
    simulate(SimulateSpec(20, "patient:3,greedy,greedy", 1, batch_size=10), out, QUIET)  # an older manifest: read


def test_the_command_line_takes_named_parameters_and_refuses_bad_ones_in_one_line(tmp_path, capsys):
    from simkit.cli import main

    assert main(["simulate", "--deals", "10", "--policies", "patient:min_units=3:late_stock=4,greedy,greedy",
                 "--seed", "1", "--out", str(tmp_path / "ok"), "--quiet"]) == 0
    assert json.loads((tmp_path / "ok" / "_manifest.json").read_text())["policies"][0] == "patient:3,4,1"
    capsys.readouterr()
    for spec in ("patient:nan", "mc:-5", "mc:0,0,0", "expert:dangr=20"):
        assert main(["simulate", "--deals", "10", "--policies", f"{spec},greedy,greedy", "--seed", "1",
                     "--out", str(tmp_path / "bad"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "bad").exists()
