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
    "compare": ("simkit.studies.compare:compare",),
    "tournament": ("simkit.studies.tournament:run_tournament",),
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
    ("compare", "deals"): "None: the command's checks set the library's default (DEFAULT_COMPARE_DEALS) or, with "
                          "--sprt, the sequential test's cap (DEFAULT_SPRT_MAX_DEALS)",
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


@pytest.mark.parametrize("command", sorted(LIBRARY))
def test_command_line_defaults_are_the_library_defaults(command):
    differences = {key: value for key, value in _differences().items() if key[0] == command}
    unexplained = {key: value for key, value in differences.items() if key not in RESOLVED_LATER}
    assert unexplained == {}, "command line vs library default: " + repr(unexplained)


def test_every_listed_exception_still_differs():
    """An entry of RESOLVED_LATER whose defaults now agree is stale: remove it."""
    differences = _differences()
    assert [key for key in RESOLVED_LATER if key not in differences] == []
