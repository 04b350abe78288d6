"""Every default the command line declares equals the library's (issue 53: defaults declared
once).  For each command, the library functions it calls: an option whose destination is a
parameter of one of them must default to the same value, or be listed in :data:`RESOLVED_LATER`
with the reason (the command line passes None and the library or a cross-check fills it in).
Catches a default changed on one side only, as ``luck-model --check-deals`` (2,000 on the
command line, 1,000 in ``train_value_model``) was until issue 53."""

from __future__ import annotations

import argparse
import importlib
import inspect

import pytest

from simkit.cliargs import build_parser

LIBRARY = {
    "simulate": ("simkit.runner.simulate:simulate",),
    "calibrate": ("simkit.studies.reference:calibrate",),
    "analyze": ("simkit.studies.analyze:analyze_position",),
    "review": ("simkit.studies.review:review_decisions", "simkit.studies.review:review_log_against_reference"),
    "equity": ("simkit.studies.equity:equity",),
}

# (command, destination): why the command line's default differs from the library's
RESOLVED_LATER = {
    ("analyze", "luck"): "None: off unless --luck is given (then the built-in model, or MODEL)",
    ("review", "luck"): "None: off unless --luck is given (then the built-in model, or MODEL)",
    ("equity", "policies"): "required on the command line",
    ("equity", "deals"): "required on the command line",
    ("equity", "quiet"): "a command shows progress unless --quiet; a library call is quiet unless asked",
}


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _differences() -> dict[tuple[str, str], tuple[object, object]]:
    commands = _commands()
    out = {}
    for command, functions in LIBRARY.items():
        for target in functions:
            module, name = target.split(":")
            parameters = inspect.signature(getattr(importlib.import_module(module), name)).parameters
            for action in commands[command]._actions:
                parameter = parameters.get(action.dest)
                if parameter is None or parameter.default is inspect.Parameter.empty:
                    continue
                if action.default != parameter.default:
                    out[(command, action.dest)] = (action.default, parameter.default)
    return out


def test_every_library_command_is_mapped():
    assert set(LIBRARY) <= set(_commands())


@pytest.mark.parametrize("command", sorted(LIBRARY))
def test_command_line_defaults_are_the_library_defaults(command):
    differences = {key: value for key, value in _differences().items() if key[0] == command}
    unexplained = {key: value for key, value in differences.items() if key not in RESOLVED_LATER}
    assert unexplained == {}, "command line vs library default: " + repr(unexplained)


def test_every_listed_exception_still_differs():
    """An entry of RESOLVED_LATER whose defaults now agree is stale: remove it."""
    differences = _differences()
    assert [key for key in RESOLVED_LATER if key not in differences] == []


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
