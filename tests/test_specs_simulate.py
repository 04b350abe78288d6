"""The specs of ``simulate`` and ``equity`` (simkit.specs.simulate, simkit.specs.equity): their
identities are exactly what the code before specs (commit 7a6833d) wrote, folders written by that
code resume, the datasets' bytes are unchanged, and every field is validated in one line.

The literal identities and sha256s below were computed by running the code of commit 7a6833d
(``SimulationConfig(...).identity()``, ``make_config(...).identity()``, ``simulate``, ``equity``);
tests/data/old-runs-7a6833d holds folders that code wrote (``simulation``: the first of two
batches, ``max_batches=1``; ``sessions``: complete, sessions of 2; ``equity``: complete, with its
baseline)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from simkit.errors import SimkitError
from simkit.experiment.spec import parse_experiment
from simkit.rules import RuleSet
from simkit.runner.simulate import simulate
from simkit.specs.base import Execution
from simkit.specs.equity import EquitySpec
from simkit.specs.simulate import SimulateSpec
from simkit.storage.dataset import config_digest, manifest_identity, read_manifest
from simkit.studies.equity import equity

OLD = Path(__file__).resolve().parent / "data" / "old-runs-7a6833d"
QUIET = Execution(quiet=True)
EXAMPLE = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"
RULES = {"lou_doubles": True, "hu_tolerance": 2, "jiang_in_chariot": False, "pattern_wins": True,
         "steps_count_lou": False, "drawn_card_chow_by": "drawer", "pass_locks_type": True, "must_kong": True,
         "must_chariot_out": True, "tianhu": True, "next_dealer": "winner_else_next", "zhan_in_chariot": False,
         "single_jiang_cap": 0, "drawn_jiang_chow": True, "pass_locks_win": True}
EXPERT = "expert:57.6,13.4,0.78,95.9,22.5,88.3,1.4,1.78,6.04,13.7,0.67,0.43,1,0,54.2,1.08"

# (spec, the identity the old code built for the same run, pasted from its output)
OLD_IDENTITIES = [
    (lambda: SimulateSpec(600, "greedy,greedy,greedy", 7, batch_size=200),
     {"schema_version": 2, "seed": 7, "deals": 600, "batch_size": 200, "rules": RULES,
      "policies": ["greedy", "greedy", "greedy"]}),
    (lambda: SimulateSpec(600, "greedy,patient:min_units=3,random", 7, RuleSet(tianhu=False), batch_size=200,
                          session_length=6, seating="rotate"),  # batch size rounded down to 198 (whole sessions)
     {"schema_version": 2, "seed": 7, "deals": 600, "batch_size": 198, "rules": {**RULES, "tianhu": False},
      "policies": ["greedy", "patient:3,6,1", "random"], "session_length": 6, "seating": "rotate"}),
    (lambda: SimulateSpec(50, "expert,greedy,greedy", 1, batch_size=25, seating="all"),
     {"schema_version": 2, "seed": 1, "deals": 50, "batch_size": 25, "rules": RULES,
      "policies": [EXPERT, "greedy", "greedy"], "seating": "all"}),
    (lambda: SimulateSpec(50, "random,greedy,greedy", 1, batch_size=25, seating="fixed", schema_version=1),
     {"schema_version": 1, "seed": 1, "deals": 50, "batch_size": 25, "rules": RULES,
      "policies": ["random", "greedy", "greedy"]}),
    (lambda: EquitySpec(EXAMPLE, 0, "greedy,patient,random", deals=600, seed=7, batch_size=200),
     {"schema_version": 2, "seed": 7, "deals": 600, "batch_size": 200, "rules": RULES,
      "policies": ["greedy", "patient:2,6,1", "random"],
      "equity": {"hand": EXAMPLE, "seat": 0, "deck": "fixed-seat-block-v1"}}),
    (lambda: EquitySpec(EXAMPLE[: -len("GZ*2")] + "GZ", 2, deals=50, seed=1, rules=RuleSet(lou_doubles=False)),
     {"schema_version": 2, "seed": 1, "deals": 50, "batch_size": 10000, "rules": {**RULES, "lou_doubles": False},
      "policies": ["greedy", "greedy", "greedy"],
      "equity": {"hand": EXAMPLE[: -len("GZ*2")] + "GZ", "seat": 2, "deck": "fixed-seat-block-v1"}}),
]


@pytest.mark.parametrize("make, old", OLD_IDENTITIES, ids=["plain", "rotate-sessions", "all", "schema-1", "equity",
                                                           "equity-seat-2"])
def test_identity_is_the_old_codes_key_for_key_in_order(make, old):
    identity = make().identity()
    assert identity == old
    assert list(identity) == list(old)  # the manifest is written in this order: its bytes too


def test_a_manifest_reads_back_the_identity_the_spec_wrote():
    """storage's manifest_identity and the specs share one shape (dataset_identity)."""
    for folder in ("simulation", "sessions", "equity/equity", "equity/baseline"):
        manifest = read_manifest(OLD / folder)  # what the old code wrote: its digest is of its identity
        assert config_digest(manifest_identity(manifest)) == manifest["config_digest"], folder
    assert manifest_identity(read_manifest(OLD / "simulation")) == SimulateSpec(
        6, "greedy,patient,random", 5, batch_size=3).identity()
    assert manifest_identity(read_manifest(OLD / "equity" / "equity")) == EquitySpec(
        EXAMPLE, 0, "greedy,greedy,random", deals=6, seed=3, batch_size=3).identity()


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("batch-*.parquet"))}


def _copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(OLD / name, tmp_path / name.replace("/", "-")))


def test_an_old_partial_simulation_resumes_to_the_new_codes_bytes(tmp_path):
    old = _copy("simulation", tmp_path)
    first = _bytes(old)
    assert list(first) == ["batch-000000.parquet"]  # the old run computed one batch of two
    spec = SimulateSpec(6, "greedy,patient,random", 5, batch_size=3)
    simulate(spec, old, QUIET)
    fresh = simulate(spec, tmp_path / "fresh", QUIET)
    assert _bytes(old) == _bytes(fresh)
    assert _bytes(old)["batch-000000.parquet"] == first["batch-000000.parquet"]
    assert read_manifest(old)["config_digest"] == read_manifest(fresh)["config_digest"]
    with pytest.raises(SimkitError, match="its seed is 5, this run's is 6"):
        simulate(spec.replace(seed=6), old, QUIET)


def test_an_old_run_in_sessions_resumes_and_recomputes_a_lost_batch_identically(tmp_path):
    old = _copy("sessions", tmp_path)
    before = _bytes(old)
    spec = SimulateSpec(8, "greedy,greedy,greedy", 5, batch_size=4, session_length=2)
    simulate(spec, old, QUIET)
    assert _bytes(old) == before
    (old / "batch-000001.parquet").unlink()
    simulate(spec, old, QUIET)
    assert _bytes(old) == before
    with pytest.raises(SimkitError, match="its session_length is 2, this run's is 4"):
        simulate(spec.replace(session_length=4), old, QUIET)


def test_an_old_equity_folder_resumes_and_reads_back(tmp_path):
    old = _copy("equity", tmp_path)
    before = {part: _bytes(old / part) for part in ("equity", "baseline")}
    spec = EquitySpec(EXAMPLE, 0, "greedy,greedy,random", deals=6, seed=3, batch_size=3)
    (old / "equity" / "batch-000001.parquet").unlink()
    (old / "baseline" / "batch-000000.parquet").unlink()
    result = equity(spec, old, QUIET)
    assert {part: _bytes(old / part) for part in ("equity", "baseline")} == before
    memory = equity(spec)
    assert result.to_frame().equals(memory.to_frame())
    with pytest.raises(SimkitError, match="holds another equity run: its equity is"):
        equity(spec.replace(seat=1, hand=EXAMPLE[: -len("GZ*2")] + "GZ"), old, QUIET)


# sha256 of each batch file the old code wrote for these 600-deal runs
OLD_BATCHES_600 = {
    "sim600": ("5a975d69495973d48fba71c8de8e412d696e5815a945cb135be7bf1078be4b81",
               "0028121df49910ebd59cc42352d0f7ec6a90ec2cf6f0decdd4b769b4b13b1ba5",
               "71c6dc70a2c061071558114268fec0c645b927e6b313bb24072e2d19c17f936e"),
    "sim600-sessions-all": ("63d597528d9a3582c7004d54e29f5b094a324bd885e170072ccfe72cc62f0cf6",
                            "83a7c096730d7680ceafc36af260af68419e5a0947f780e2cd7f68f5e7bcf3f8",
                            "247b8cc9be92c85e605c84f3aa9f2b2da6e2b798467fa19c83fcf913af90f5d0",
                            "cc2ec860d7f06de202d5f3f63c8d66cf4cc18b2b0ee8387bb14bf9a4bc16a5f6"),
    "equity": ("aacc98b85cbe4776fffac2bba8943178e0426d0bded12b4060e0d82caa1d2ea3",
               "1278d56bb37a2be7bf3b0dcc4b8b5a3978b748eeabf60f2265c4d6cacd3ee410",
               "541ce9e2253270b03b5302ecfbcdfdc9b73666028cab4af418200aec7f143a7f"),
    "baseline": ("1131d872f0efcf56d9199aa02f3d2818506d6c0cadcd6457a8f69f97494120bb",
                 "1739277127ceec7e11d43fe41640b8fb6ae4bb6680ef493a2684757f2ea9d9a3",
                 "1d5e4b381ecf3966e2f1c8015d34219b09c50fdf77ffb7dd4ac7715b5e6fa57e"),
}
OLD_EQUITY_CSV_600 = "3633c1eef387c6b16f30d12c64adfd2fa9c71d3be6a7461fc1d120cd01e18601"  # its to_frame().to_csv()


def _sha256s(folder: Path) -> tuple[str, ...]:
    return tuple(hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(folder).glob("batch-*.parquet")))


def test_600_deal_runs_write_the_old_codes_bytes(tmp_path):
    mixed = "greedy,patient,random"
    assert _sha256s(simulate(SimulateSpec(600, mixed, 7, batch_size=200), tmp_path / "s", QUIET)) == \
        OLD_BATCHES_600["sim600"]
    sessions = SimulateSpec(600, mixed, 7, batch_size=200, session_length=6, seating="all")
    assert _sha256s(simulate(sessions, tmp_path / "a", QUIET)) == OLD_BATCHES_600["sim600-sessions-all"]
    result = equity(EquitySpec(EXAMPLE, 0, mixed, deals=600, seed=7, batch_size=200), tmp_path / "e")
    assert _sha256s(tmp_path / "e" / "equity") == OLD_BATCHES_600["equity"]
    assert _sha256s(tmp_path / "e" / "baseline") == OLD_BATCHES_600["baseline"]
    csv = result.to_frame().to_csv(index=False)
    assert hashlib.sha256(csv.encode()).hexdigest() == OLD_EQUITY_CSV_600


# ---------------------------------------------------------------------------- validation


@pytest.mark.parametrize("changes, field_name", [
    ({"deals": 0}, "deals"), ({"deals": 2.5}, "deals"), ({"deals": True}, "deals"), ({"seed": -1}, "seed"),
    ({"batch_size": 0}, "batch_size"), ({"session_length": 0}, "session_length"),
    ({"session_length": 32_768}, "session_length"), ({"seating": "around"}, "seating"),
    ({"rules": 3}, "rules"), ({"schema_version": 3}, "schema version"),
    ({"schema_version": 1, "seating": "rotate"}, "datasets of schema version 1"),
    ({"policies": "greedy,greedy"}, "need 3 policies"),
])
def test_simulate_spec_refuses_each_bad_field_in_one_line(changes, field_name):
    with pytest.raises(SimkitError) as info:
        SimulateSpec(**{"deals": 10, "policies": "greedy,greedy,greedy", "seed": 1, **changes})
    assert str(info.value).startswith(field_name) and "\n" not in str(info.value)


@pytest.mark.parametrize("changes, start", [
    ({"seat": 3}, "seat must be 0, 1 or 2"), ({"hand": "YJ*3"}, "the dealer's (seat 0) dealt hand has 31 cards"),
    ({"deals": 0}, "deals must"), ({"seed": -2}, "seed must"), ({"batch_size": 0}, "batch_size must"),
    ({"baseline": "yes"}, "baseline must"), ({"confidence": 1.0}, "confidence must"), ({"rules": []}, "rules must"),
    ({"confidence": 0.0}, "confidence must be a finite number with 0.0 < confidence < 1.0, got 0.0"),
    ({"policies": "greedy,nobody,greedy"}, "unknown policy"),
])
def test_equity_spec_refuses_each_bad_field_in_one_line(changes, start):
    with pytest.raises(SimkitError) as info:
        EquitySpec(**{"hand": EXAMPLE, **changes})
    assert str(info.value).startswith(start) and "\n" not in str(info.value)


def test_seating_defaults_by_the_policies_and_the_spec_keeps_the_choice():
    assert SimulateSpec(5, "greedy,greedy,greedy", 1).seating == "fixed"
    assert SimulateSpec(5, "greedy,random,greedy", 1).seating == "rotate"
    assert SimulateSpec(5, "greedy,random,greedy", 1, seating="fixed").seating == "fixed"
    equity_spec = EquitySpec(EXAMPLE, policies="greedy,random,greedy")
    assert (equity_spec.simulation.seating, equity_spec.simulation.session_length) == ("fixed", 1)


def test_the_batch_size_rounds_to_whole_sessions_with_a_note(tmp_path, capsys):
    spec = SimulateSpec(10, "greedy,greedy,greedy", 1, batch_size=5, session_length=4)
    assert (spec.batch_size, spec.run_batch_size, spec.n_batches, spec.batch_range(2)) == (5, 4, 3, (8, 10))
    path = simulate(spec, tmp_path / "r")
    assert "batch_size 5 -> 4 (whole sessions of 4 deals)" in capsys.readouterr().err
    assert read_manifest(path)["batch_size"] == 4
    simulate(spec, tmp_path / "q", QUIET)
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------- experiment files


def test_every_simulation_key_of_an_experiment_file_reaches_the_spec():
    """A [[simulation]] entry's keys are SimulateSpec fields (or how it is reported): each one
    set to a value other than its default arrives in the spec the entry runs."""
    spec = parse_experiment('name = "x"\nbatch_size = 7\n[[simulation]]\nlabel = "one"\n'
                            'policies = "greedy,random,random"\ndeals = 30\nseed = 4\nrules = { tianhu = false }\n'
                            'session_length = 3\nseating = "all"\ndetails = false\n')
    entry = spec.simulations[0]
    run = entry.run_spec(spec.batch_size)
    assert run == SimulateSpec(30, "greedy,random,random", 4, RuleSet(tianhu=False), 7, 3, "all")
    assert set(entry.__dataclass_fields__) - set(entry.REPORT_KEYS) <= set(SimulateSpec.field_names())


# ---- the spec's checks and derived values, each with the bug it catches ---------------------

def test_the_default_seating_tells_parameters_apart():
    """Same name, other parameters: rotate (a seating that compared names only would fix the
    seats); a parameter written out at its default value is the same policy: fixed."""
    from simkit.specs.simulate import default_seating
    from simkit.policies.registry import parse_policies

    assert default_seating(parse_policies("patient,patient:min_units=3,patient")) == "rotate"
    assert default_seating(parse_policies("patient,patient:min_units=2,patient")) == "fixed"


def test_policy_texts_carry_every_parameter():
    spec = SimulateSpec(10, "patient:min_units=3,greedy,greedy", 1)
    assert spec.policy_texts() == ["patient:3,6,1", "greedy", "greedy"]
    assert spec.identity()["policies"] == ["patient:3,6,1", "greedy", "greedy"]


def test_session_length_is_bounded_by_what_the_column_holds():
    from simkit.specs.dataset import MAX_SESSION_LENGTH
    from simkit.specs.simulate import session_batch_size

    assert session_batch_size(100, MAX_SESSION_LENGTH) == MAX_SESSION_LENGTH
    for bad in (0, MAX_SESSION_LENGTH + 1):
        with pytest.raises(SimkitError) as info:
            session_batch_size(100, bad)
        assert str(info.value) == f"session_length must be in 1..{MAX_SESSION_LENGTH}, got {bad}"
        assert info.value.parameters == ("session_length",)


def test_an_old_schema_and_its_seating_are_refused_naming_the_field():
    with pytest.raises(SimkitError) as info:
        SimulateSpec(10, "greedy,greedy,greedy", 1, schema_version=99)
    assert info.value.parameters == ("schema_version",) and str(info.value).startswith("schema version 99")
    with pytest.raises(SimkitError) as info:
        SimulateSpec(10, "greedy,random,random", 1, schema_version=1, seating="rotate")
    assert (str(info.value), info.value.parameters) == ("datasets of schema version 1 have fixed seats", ("seating",))
    assert SimulateSpec(10, "greedy,random,random", 1, schema_version=1, seating="fixed").schema_version == 1


def test_a_resumed_folders_labels_are_its_columns():
    spec = SimulateSpec(10, "greedy,random,random", 1, labels=["a", 2, "c"])
    assert spec.labels == ("a", "2", "c") and spec.policy_labels() == ["a", "2", "c"]
    assert SimulateSpec(10, "patient:min_units=3,random,random", 1).policy_labels() == [
        "patient:min_units=3", "random", "random"]


def test_a_user_policys_source_digest_is_in_the_identity():
    spec = SimulateSpec(10, "simkit.bench:greedy_by_import,greedy,greedy", 1)
    sources = spec.identity()["policy_sources"]
    assert list(sources) == ["simkit.bench:greedy_by_import"] and len(sources["simkit.bench:greedy_by_import"]) >= 16
    assert "policy_sources" not in SimulateSpec(10, "greedy,greedy,greedy", 1).identity()


def test_the_runs_rules_reach_the_learned_models_rule_check(monkeypatch):
    """warn_model_rules is asked with this run's rules (a learned model trained for other rules
    warns; tests/test_learned.py checks the warning itself)."""
    import simkit.specs.simulate as module

    asked = []
    monkeypatch.setattr(module, "warn_model_rules", lambda policies, rules: asked.append(rules))
    SimulateSpec(10, "greedy,greedy,greedy", 1, rules={"lou_doubles": False})
    assert asked == [RuleSet.from_strings(["lou_doubles=off"]).to_dict()]


def test_equity_spec_stores_its_fields_normalised_and_passes_a_resumed_folders_labels_on():
    """A numpy seat is stored as an int, the policies parsed (as the run's ordinary deals have
    them), and the labels a resumed folder gives reach the simulation as a tuple: its policy
    columns keep the folder's values."""
    import numpy as np

    from simkit.policies.registry import parse_policy

    spec = EquitySpec(EXAMPLE, np.int64(0), "greedy,patient:3,random", deals=6, seed=3)
    assert type(spec.seat) is int and spec.seat == 0
    assert spec.policies == tuple(parse_policy(text) for text in ("greedy", "patient:3", "random"))
    assert spec.labels is None and spec.simulation.labels is None
    resumed = EquitySpec(EXAMPLE, 0, "greedy,patient:3,random", deals=6, seed=3, labels=["g", "p", "r"])
    assert resumed.labels == ("g", "p", "r") and resumed.simulation.labels == ("g", "p", "r")
    assert resumed.simulation.policy_labels() == ["g", "p", "r"] and resumed.identity() == spec.identity()
