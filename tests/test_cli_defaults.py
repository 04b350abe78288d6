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
    "tune": ("simkit.studies.tuning:tune",),
    "calibrate": ("simkit.studies.reference:calibrate",),
    "analyze": ("simkit.studies.analyze:analyze_position",),
    "review": ("simkit.studies.review:review_decisions", "simkit.studies.review:review_log_against_reference"),
    "equity": ("simkit.studies.equity:equity",),
    "luck-model": ("simkit.learn.value:train_value_model",),
    "train": ("simkit.learn.train:train",),
}

# (command, destination): why the command line's default differs from the library's
RESOLVED_LATER = {
    ("tune", "out"): "None: the command names the folder after its seed (cliargs.default_out)",
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
    assert set(SPECS) <= set(_commands()) and not set(SPECS) & set(LIBRARY)


@pytest.mark.parametrize("command", sorted(LIBRARY))
def test_command_line_defaults_are_the_library_defaults(command):
    differences = {key: value for key, value in _differences().items() if key[0] == command}
    unexplained = {key: value for key, value in differences.items() if key not in RESOLVED_LATER}
    assert unexplained == {}, "command line vs library default: " + repr(unexplained)


def test_every_listed_exception_still_differs():
    """An entry of RESOLVED_LATER whose defaults now agree is stale: remove it."""
    differences = _differences()
    assert [key for key in RESOLVED_LATER if key not in differences] == []


# -- commands whose run is a spec (simkit.specs, issue 53 item 1) ------------------------------

# command -> its run's spec: each option whose destination is a spec field defaults to the
# field's default, each option of how the run executes to Execution's, and each spec field is
# an option (or listed in SPEC_EXCEPTIONS with the reason)
SPECS = {
    "compare": "simkit.specs.compare:CompareSpec",
    "tournament": "simkit.specs.tournament:TournamentSpec",
}
OPTION_OF_FIELD = {"rules": "rule"}  # a field's option destination where the names differ
EXECUTION_OPTIONS = ("workers", "backend", "scheduler", "quiet")  # Execution's fields, same names
NOT_THE_RUN = {"out": "the run's folder, an argument of the run function, not of the spec",
               "json": "how the command prints the result",
               "debug": "how the command reports an error (every command has it)"}
# (command, field): why the option's default differs from the field's, or why the field has no option
SPEC_EXCEPTIONS = {
    ("compare", "deals"): "None: the command's checks set the spec's default (DEFAULT_COMPARE_DEALS) or, with "
                          "--sprt, the sequential test's cap (DEFAULT_SPRT_MAX_DEALS)",
    ("compare", "rules"): "--rule KEY=VALUE, repeatable: none given ([]) is the default rules (the field's None)",
    ("tournament", "rules"): "--rule KEY=VALUE, repeatable: none given ([]) is the default rules (the field's None)",
    ("tournament", "prior_draws"): "no option: the Davidson ratings' virtual draws per pairing, a library setting",
}


def _spec_class(command: str):
    module, name = SPECS[command].split(":")
    return getattr(importlib.import_module(module), name)


def _spec_findings(command: str) -> dict[tuple[str, str], str]:
    """(command, field or option) -> what is wrong: an option whose default is not its field's
    (or Execution's), a spec field without an option, an option that is neither."""
    import dataclasses

    from simkit.specs.base import Execution

    spec = _spec_class(command)
    actions = {a.dest: a for a in _commands()[command]._actions if not isinstance(a, argparse._HelpAction)}
    defaults = spec.defaults()
    found = {}
    for f in dataclasses.fields(spec):
        action = actions.get(OPTION_OF_FIELD.get(f.name, f.name))
        if action is None:
            found[(command, f.name)] = "no option"
        elif f.name in defaults and action.default != defaults[f.name]:
            found[(command, f.name)] = f"option default {action.default!r}, field default {defaults[f.name]!r}"
        elif f.name not in defaults and not action.required and action.nargs not in (None, "+"):
            found[(command, f.name)] = "a required field whose option is optional"
    execution = Execution()
    for name in EXECUTION_OPTIONS:
        if name not in actions or actions[name].default != getattr(execution, name):
            found[(command, name)] = f"not Execution's default {getattr(execution, name)!r}"
    fields = {OPTION_OF_FIELD.get(name, name) for name in spec.field_names()}
    for dest in actions:
        if dest not in fields and dest not in EXECUTION_OPTIONS and dest not in NOT_THE_RUN:
            found[(command, dest)] = "an option that is no spec field, no Execution field and not listed in NOT_THE_RUN"
    return found


@pytest.mark.parametrize("command", sorted(SPECS))
def test_command_line_options_are_the_spec_fields_with_their_defaults(command):
    unexplained = {key: why for key, why in _spec_findings(command).items() if key not in SPEC_EXCEPTIONS}
    assert unexplained == {}, "command line vs spec: " + repr(unexplained)


def test_every_listed_spec_exception_still_applies():
    findings = {key for command in SPECS for key in _spec_findings(command)}
    assert [key for key in SPEC_EXCEPTIONS if key not in findings] == []
