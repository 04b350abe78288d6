"""Every default the command line declares equals the library's (issue 53: defaults declared
once).  For each command, the library functions it calls: an option whose destination is a
parameter of one of them must default to the same value, or be listed in :data:`RESOLVED_LATER`
with the reason (the command line passes None and the library or a cross-check fills it in).
Catches a default changed on one side only, as ``luck-model --check-deals`` (2,000 on the
command line, 1,000 in ``train_value_model``) was until issue 53."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import operator

import pytest

from simkit.cliargs import build_parser

LIBRARY = {
    "simulate": ("simkit.runner.simulate:simulate",),
    "compare": ("simkit.studies.compare:compare",),
    "tournament": ("simkit.studies.tournament:run_tournament",),
    "tune": ("simkit.studies.tuning:tune",),
    "equity": ("simkit.studies.equity:equity",),
    "luck-model": ("simkit.learn.value:train_value_model",),
    "train": ("simkit.learn.train:train",),
}

# (command, destination): why the command line's default differs from the library's
RESOLVED_LATER = {
    ("compare", "deals"): "None: the command's checks set the library's default (DEFAULT_COMPARE_DEALS) or, with "
                          "--sprt, the sequential test's cap (DEFAULT_SPRT_MAX_DEALS)",
    ("tune", "out"): "None: the command names the folder after its seed (cliargs.default_out)",
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
EXECUTION_OPTIONS = ("workers", "backend", "scheduler", "quiet")  # how a run executes: simkit.specs.base.Execution


def _spec_class(target: str):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def _spec_options(command: str):
    """(differences, fields no option reaches) of a command that builds a spec: each option
    whose destination is a field (or mapped to one) against the field's default, each option of
    how the run executes against :class:`Execution`'s."""
    from simkit.specs.base import Execution

    target, mapped, _ = SPEC_COMMANDS[command]
    spec = _spec_class(target)
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
