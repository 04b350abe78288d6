"""Every default the command line declares is its run spec's (issue 53: defaults declared once,
in the spec).  Every command of a run kind builds a spec (:mod:`simkit.specs`): each option
whose destination is a spec field defaults to the field's default, each option of how the run
executes to :class:`~simkit.specs.base.Execution`'s, and each spec field is reachable from the
command line or listed with the reason.  Catches a default changed on one side only, as
``luck-model --check-deals`` (2,000 on the command line, 1,000 in ``train_value_model``) and
calibrate's seat and deals (declared on both sides) were until issue 53."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import operator

import pytest

from simkit.cliargs import build_parser, parse_command_line

def _commands() -> dict[str, argparse.ArgumentParser]:
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


# ---- commands whose library call takes a run spec (issue 53): every option against the spec

SPECS = {  # command: (its spec, the command-line builder in simkit.cli, its required arguments)
    "tune": ("simkit.specs.tune:TuneSpec", "_tune_spec",
             ["patient:6", "--params", "min_units=1:8", "--against", "greedy", "--budget", "6000"]),
    "train": ("simkit.specs.train:TrainSpec", "_train_spec", []),
    "luck-model": ("simkit.specs.luck_model:LuckModelSpec", "_luck_model_spec", []),
    "compare": ("simkit.specs.compare:CompareSpec", "_compare_spec", ["greedy", "random"]),
    "tournament": ("simkit.specs.tournament:TournamentSpec", "_tournament_spec", ["greedy", "random"]),
}
OPTION_FIELD = {"rule": "rules", "pair": "pairs"}  # an option whose destination is not its field's name
EXECUTION_OPTIONS = ("workers", "backend", "scheduler", "quiet")  # simkit.specs.base.Execution's fields
NOT_A_FIELD = {"out": "where the run writes (the call's second argument), never part of what it plays",
               "help": "argparse's --help", "debug": "simkit's --debug",
               "json": "how compare prints its result (--json), not what it plays"}
# (command, field): why the command line does not set this field of the spec
NOT_ON_COMMAND_LINE = {
    ("tune", "tail"): "the share of the iterates averaged into the tuned values: a library setting (0.25)",
    ("tune", "batch_size"): "the validation's batch size, which changes no result: a library setting",
    ("train", "batch_size"): "the fit's minibatch: a library setting",
    ("train", "learning_rate"): "the fit's step size: a library setting",
    ("tournament", "prior_draws"): "the Davidson ratings' virtual draws per pairing: a library setting (1.0)",
}
# (command, option): why its default is not the field's (the builder then leaves the spec's default)
DEFAULT_IN_THE_SPEC = {
    ("luck-model", "pair"): "None: --pair appends (a list default would be appended to); none given, the command "
                            "leaves the spec's default pairs",
}


def _spec_class(command: str):
    module, name = SPECS[command][0].split(":")
    return getattr(importlib.import_module(module), name)


def _options(command: str) -> list[argparse.Action]:
    return [a for a in _commands()[command]._actions if a.dest not in NOT_A_FIELD]


def _field(dest: str) -> str:
    return OPTION_FIELD.get(dest, dest)


def _parsed(command: str, tmp_path):
    from simkit.cliargs import parse_command_line

    out = tmp_path / ("v.npz" if command == "luck-model" else "out")
    return parse_command_line([command, *SPECS[command][2], "--out", str(out)])


def _required(command: str, tmp_path) -> dict:
    """The spec fields the command's required arguments give (the rest default)."""
    args = _parsed(command, tmp_path)
    return {_field(a.dest): getattr(args, a.dest) for a in _options(command) if a.required}


@pytest.mark.parametrize("command", sorted(SPECS))
def test_every_option_sets_a_spec_field_or_the_execution(command):
    """Catches an option added to the command line that the spec does not know (its value would
    go nowhere, or around the spec)."""
    fields = set(_spec_class(command).field_names())
    stray = [a.dest for a in _options(command) if _field(a.dest) not in fields and a.dest not in EXECUTION_OPTIONS]
    assert stray == []


@pytest.mark.parametrize("command", sorted(SPECS))
def test_every_spec_field_is_on_the_command_line_or_listed(command):
    reached = {_field(a.dest) for a in _options(command)}
    missing = [name for name in _spec_class(command).field_names()
               if name not in reached and (command, name) not in NOT_ON_COMMAND_LINE]
    assert missing == []
    assert [key for key in NOT_ON_COMMAND_LINE if key[0] == command and key[1] in reached] == []  # stale entries


@pytest.mark.parametrize("command", sorted(SPECS))
def test_command_line_defaults_are_the_spec_defaults(command, tmp_path):
    """Each option left out (its value after the command line's own check) gives the spec
    field's declared default, compared as the spec normalises both (``--rule`` as its rules);
    --workers, --backend, --scheduler and --quiet give :class:`Execution`'s defaults.  Catches a
    default changed on one side only (as ``luck-model --check-deals`` was, 2,000 against 1,000)."""
    from simkit.rules import RuleSet
    from simkit.specs.base import Execution

    spec_class, args = _spec_class(command), _parsed(command, tmp_path)
    required = _required(command, tmp_path)
    default = spec_class(**required)
    differing = {}
    for action in _options(command):
        value = getattr(args, action.dest)
        if action.dest in EXECUTION_OPTIONS:
            if value != getattr(Execution(), action.dest):
                differing[action.dest] = (value, getattr(Execution(), action.dest))
            continue
        if action.required or (command, action.dest) in DEFAULT_IN_THE_SPEC:
            continue
        name = _field(action.dest)
        given = spec_class(**{**required, name: RuleSet.from_strings(value) if name == "rules" else value})
        if getattr(given, name) != getattr(default, name):
            differing[action.dest] = (getattr(given, name), spec_class.defaults()[name])
    assert differing == {}
    listed = [key for key in DEFAULT_IN_THE_SPEC if key[0] == command]
    assert all(getattr(args, key[1]) is None for key in listed)  # still left to the spec


@pytest.mark.parametrize("command", sorted(SPECS))
def test_the_command_builds_the_spec_of_its_defaults(command, tmp_path):
    """The command line's builder, given only the required arguments, makes the spec of the
    declared defaults (catches a builder that passes a value of its own, or a wrong field)."""
    import simkit.cli as cli

    built = getattr(cli, SPECS[command][1])(_parsed(command, tmp_path))
    assert built == _spec_class(command)(**_required(command, tmp_path))


# ---- the run kinds whose command builds a spec (simkit.specs): every option against the spec

# command: (the command line's builder of its spec, the spec class)
DATASET_SPECS = {
    "simulate": ("simkit.cli:_simulate_spec", "simkit.specs.simulate:SimulateSpec"),
    "equity": ("simkit.cli:_equity_spec", "simkit.specs.equity:EquitySpec"),
}
# the required arguments of each command (values the spec builds with, not defaults)
DATASET_REQUIRED = {
    "simulate": ["--deals", "10", "--policies", "greedy,greedy,greedy", "--seed", "1"],
    "equity": ["YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2",
               "--policies", "greedy,greedy,greedy", "--deals", "10"],
}
# (command, option destination) -> the spec field it sets, where their names differ
DATASET_OPTION_FIELDS = {("simulate", "rule"): "rules", ("equity", "rule"): "rules", ("equity", "no_baseline"): "baseline"}
# per command, an argument giving each field the command line reaches a value other than its default
DATASET_NON_DEFAULT = {
    "simulate": {"deals": ["--deals", "11"], "policies": ["--policies", "greedy,random,random"],
                 "seed": ["--seed", "2"], "rules": ["--rule", "tianhu=false"], "batch_size": ["--batch-size", "7"],
                 "session_length": ["--session-length", "2"], "seating": ["--seating", "all"]},
    "equity": {"hand": None, "seat": None,  # set together: a hand is a seat's (31 cards for seat 0, else 30)
               "policies": ["--policies", "greedy,random,random"], "deals": ["--deals", "11"], "seed": ["--seed", "2"],
               "rules": ["--rule", "tianhu=false"], "batch_size": ["--batch-size", "7"],
               "baseline": ["--no-baseline"], "confidence": ["--confidence", "0.9"]},
}
SEAT_1_HAND = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ"
# (command, spec field): why the command line does not set it, or sets another default
DATASET_SPEC_EXCEPTIONS = {
    ("simulate", "schema_version"): "set by a run that resumes a dataset written before schema version 2",
    ("simulate", "labels"): "set by a run that resumes a folder: the values its policy columns hold",
    ("equity", "labels"): "set by a run that resumes a folder: the values its policy columns hold",
    ("equity", "policies"): "required on the command line (the library defaults to greedy x3)",
    ("equity", "deals"): "required on the command line (the library defaults to 10,000)",
}


def _dataset_load(target: str):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def _dataset_spec_fields(spec_class) -> list[str]:
    """The fields a caller sets (not those a spec computes, such as policy_sources)."""
    return [f.name for f in dataclasses.fields(spec_class) if f.init]


def _dataset_built(command: str, extra: list[str], tmp_path):
    argv = [command, *DATASET_REQUIRED[command], "--out", str(tmp_path / "out"), *extra]
    return _dataset_load(DATASET_SPECS[command][0])(parse_command_line(argv))


@pytest.mark.parametrize("command", sorted(DATASET_SPECS))
def test_dataset_kinds_every_option_that_is_a_spec_field_defaults_to_the_spec(command):
    defaults = _dataset_load(DATASET_SPECS[command][1]).defaults()
    differing = {}
    for action in _commands()[command]._actions:
        if action.dest in defaults and action.default != defaults[action.dest] \
                and (command, action.dest) not in DATASET_SPEC_EXCEPTIONS:
            differing[action.dest] = (action.default, defaults[action.dest])
    assert differing == {}, "command line vs spec default: " + repr(differing)


@pytest.mark.parametrize("command", sorted(DATASET_SPECS))
def test_dataset_kinds_the_command_line_without_options_builds_the_specs_defaults(command, tmp_path):
    """Every option given its default (--rule none: the default rules; no --no-baseline: a
    baseline) builds the spec of the library's defaults, the required values aside."""
    spec_class = _dataset_load(DATASET_SPECS[command][1])
    built = _dataset_built(command, [], tmp_path)
    required = {"simulate": {"deals": 10, "policies": "greedy,greedy,greedy", "seed": 1},
                "equity": {"hand": DATASET_REQUIRED["equity"][0], "policies": "greedy,greedy,greedy", "deals": 10}}[command]
    assert built == spec_class(**required)


@pytest.mark.parametrize("command", sorted(DATASET_SPECS))
def test_dataset_kinds_every_spec_field_is_reachable_from_the_command_line(command, tmp_path):
    """Each field a caller sets is an option of the command (DATASET_NON_DEFAULT gives it another value,
    and the spec built carries it), or an exception with its reason."""
    spec_class = _dataset_load(DATASET_SPECS[command][1])
    defaults = _dataset_built(command, [], tmp_path)
    fields = [f for f in _dataset_spec_fields(spec_class) if (command, f) not in DATASET_SPEC_EXCEPTIONS or f in DATASET_NON_DEFAULT[command]]
    assert sorted(DATASET_NON_DEFAULT[command]) == sorted(fields)
    dests = {DATASET_OPTION_FIELDS.get((command, a.dest), a.dest) for a in _commands()[command]._actions}
    for name, extra in DATASET_NON_DEFAULT[command].items():
        if extra is None:  # the equity hand and its seat
            argv = [command, SEAT_1_HAND, *DATASET_REQUIRED[command][1:], "--out", str(tmp_path / "o"), "--seat", "1"]
            built = _dataset_load(DATASET_SPECS[command][0])(parse_command_line(argv))
        else:
            built = _dataset_built(command, extra, tmp_path)
            assert name in dests, f"{command}: no option sets {name}"
        assert getattr(built, name) != getattr(defaults, name), f"{command} {extra}: {name} unchanged"


def test_dataset_kinds_every_spec_exception_is_still_needed():
    for (command, name), reason in DATASET_SPEC_EXCEPTIONS.items():
        spec_class = _dataset_load(DATASET_SPECS[command][1])
        assert name in _dataset_spec_fields(spec_class), f"{command}: {name} is no spec field ({reason})"
        options = {action.dest: action for action in _commands()[command]._actions}
        if name in options:  # an option that exists: its default must still differ
            assert options[name].default != spec_class.defaults()[name], (command, name)


# ---------------------------------------------------------------------------- commands that build a run spec

# issue 53 item 1: these commands build a run spec (simkit.specs) from their options, so each
# option's default must be the spec field's, and every field must be reachable from the command
# line or listed with the reason.  (command) -> (the spec, {option's destination: (field, the
# option's default read as the field's)}, {field: why no option sets it})
SPEC_COMMANDS = {
    "analyze": ("simkit.specs.analyze:AnalyzeSpec",
                {"no_race": ("race", operator.not_), "no_confirm": ("confirm", operator.not_)},
                {"actions": "the library's choice of actions; the command analyses every legal one",
                 "first": "the first determinisation's number: a review keys each decision's analysis by it"}),
    "review": ("simkit.specs.review:ReviewSpec",
               {"reference": ("reference", lambda value: None if value == "none" else value)},
               {"batch": "determinisations per racing round of each decision's analysis: analyze's --batch; "
                         "the command has always reviewed at the default"}),
    "calibrate": ("simkit.specs.calibrate:CalibrateSpec",
                  {"rule": ("rules", lambda value: None if value == [] else value)},
                  {}),
}


def _review_spec_class(target: str):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def _spec_options(command: str):
    """(differences, fields no option reaches) of a command that builds a spec: each option
    whose destination is a field (or mapped to one) against the field's default, each option of
    how the run executes against :class:`Execution`'s."""
    from simkit.specs.base import Execution

    target, mapped, _ = SPEC_COMMANDS[command]
    spec = _review_spec_class(target)
    defaults = spec.defaults()
    execution = {f.name: f.default for f in dataclasses.fields(Execution)}
    reached, differences = set(), {}
    for action in _commands()[command]._actions:
        if action.dest in mapped:
            field, read = mapped[action.dest]
        elif action.dest in spec.field_names():
            field, read = action.dest, (lambda value: value)
        elif action.dest in EXECUTION_OPTIONS:
            if action.default != execution[action.dest]:
                differences[action.dest] = (action.default, execution[action.dest])
            continue
        else:
            continue
        reached.add(field)
        if field in defaults and read(action.default) != defaults[field]:
            differences[action.dest] = (read(action.default), defaults[field])
    return differences, set(spec.field_names()) - reached


@pytest.mark.parametrize("command", sorted(SPEC_COMMANDS))
def test_a_spec_commands_defaults_are_its_specs(command):
    """Catches an option whose default drifted from the field's (``calibrate --deals`` or
    ``--seat`` declared on both sides before issue 53), or the execution's."""
    differences, _ = _spec_options(command)
    assert differences == {}, "option vs spec default: " + repr(differences)


@pytest.mark.parametrize("command", sorted(SPEC_COMMANDS))
def test_every_spec_field_is_reachable_from_its_command_or_listed(command):
    """A field added to the spec without an option (or a reason) fails here; so does a listed
    exception that an option now reaches."""
    _, unreached = _spec_options(command)
    listed = set(SPEC_COMMANDS[command][2])
    assert unreached == listed, f"fields without an option: {sorted(unreached - listed)}; listed but reached: " \
                                f"{sorted(listed - unreached)}"


def test_the_play_hints_analysis_settings_are_the_analysis_defaults():
    """``play``'s hint is an analysis: its rollout policy defaults to the analysis's; its
    rollouts are deliberately fewer (a hint takes a second or two: DEFAULT_HINT_ROLLOUTS)."""
    from simkit.defaults import DEFAULT_HINT_ROLLOUTS
    from simkit.specs.analyze import AnalyzeSpec

    options = {action.dest: action.default for action in _commands()["play"]._actions}
    assert options["hint_policy"] == AnalyzeSpec.defaults()["policy"]
    assert options["hint_rollouts"] == DEFAULT_HINT_ROLLOUTS < AnalyzeSpec.defaults()["rollouts"]


# every command of a run kind, and which of the checks above holds it
RUN_COMMANDS = {"simulate", "equity", "compare", "tournament", "tune", "train", "luck-model", "review", "calibrate",
                "analyze"}


def test_every_run_command_is_checked_against_its_spec():
    """A run kind's command dropped from (or never added to) the checks above fails here."""
    checked = set(SPECS) | set(DATASET_SPECS) | set(SPEC_COMMANDS)
    assert checked == RUN_COMMANDS
    assert RUN_COMMANDS <= set(_commands())
