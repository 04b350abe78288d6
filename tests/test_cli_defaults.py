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

import pytest

from simkit.cliargs import build_parser, parse_command_line

LIBRARY = {
    "compare": ("simkit.studies.compare:compare",),
    "tournament": ("simkit.studies.tournament:run_tournament",),
    "tune": ("simkit.studies.tuning:tune",),
    "calibrate": ("simkit.studies.reference:calibrate",),
    "analyze": ("simkit.studies.analyze:analyze_position",),
    "review": ("simkit.studies.review:review_decisions", "simkit.studies.review:review_log_against_reference"),
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


# ---- the run kinds whose command builds a spec (simkit.specs): every option against the spec

# command: (the command line's builder of its spec, the spec class)
SPECS = {
    "simulate": ("simkit.cli:_simulate_spec", "simkit.specs.simulate:SimulateSpec"),
    "equity": ("simkit.cli:_equity_spec", "simkit.specs.equity:EquitySpec"),
}
# the required arguments of each command (values the spec builds with, not defaults)
REQUIRED = {
    "simulate": ["--deals", "10", "--policies", "greedy,greedy,greedy", "--seed", "1"],
    "equity": ["YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2",
               "--policies", "greedy,greedy,greedy", "--deals", "10"],
}
# (command, option destination) -> the spec field it sets, where their names differ
OPTION_FIELDS = {("simulate", "rule"): "rules", ("equity", "rule"): "rules", ("equity", "no_baseline"): "baseline"}
# per command, an argument giving each field the command line reaches a value other than its default
NON_DEFAULT = {
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
SPEC_EXCEPTIONS = {
    ("simulate", "schema_version"): "set by a run that resumes a dataset written before schema version 2",
    ("simulate", "labels"): "set by a run that resumes a folder: the values its policy columns hold",
    ("equity", "labels"): "set by a run that resumes a folder: the values its policy columns hold",
    ("equity", "policies"): "required on the command line (the library defaults to greedy x3)",
    ("equity", "deals"): "required on the command line (the library defaults to 10,000)",
}


def _load(target: str):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def _spec_fields(spec_class) -> list[str]:
    """The fields a caller sets (not those a spec computes, such as policy_sources)."""
    return [f.name for f in dataclasses.fields(spec_class) if f.init]


def _built(command: str, extra: list[str], tmp_path):
    argv = [command, *REQUIRED[command], "--out", str(tmp_path / "out"), *extra]
    return _load(SPECS[command][0])(parse_command_line(argv))


@pytest.mark.parametrize("command", sorted(SPECS))
def test_every_option_that_is_a_spec_field_defaults_to_the_spec(command):
    defaults = _load(SPECS[command][1]).defaults()
    differing = {}
    for action in _commands()[command]._actions:
        if action.dest in defaults and action.default != defaults[action.dest] \
                and (command, action.dest) not in SPEC_EXCEPTIONS:
            differing[action.dest] = (action.default, defaults[action.dest])
    assert differing == {}, "command line vs spec default: " + repr(differing)


@pytest.mark.parametrize("command", sorted(SPECS))
def test_the_command_line_without_options_builds_the_specs_defaults(command, tmp_path):
    """Every option given its default (--rule none: the default rules; no --no-baseline: a
    baseline) builds the spec of the library's defaults, the required values aside."""
    spec_class = _load(SPECS[command][1])
    built = _built(command, [], tmp_path)
    required = {"simulate": {"deals": 10, "policies": "greedy,greedy,greedy", "seed": 1},
                "equity": {"hand": REQUIRED["equity"][0], "policies": "greedy,greedy,greedy", "deals": 10}}[command]
    assert built == spec_class(**required)


@pytest.mark.parametrize("command", sorted(SPECS))
def test_every_spec_field_is_reachable_from_the_command_line(command, tmp_path):
    """Each field a caller sets is an option of the command (NON_DEFAULT gives it another value,
    and the spec built carries it), or an exception with its reason."""
    spec_class = _load(SPECS[command][1])
    defaults = _built(command, [], tmp_path)
    fields = [f for f in _spec_fields(spec_class) if (command, f) not in SPEC_EXCEPTIONS or f in NON_DEFAULT[command]]
    assert sorted(NON_DEFAULT[command]) == sorted(fields)
    dests = {OPTION_FIELDS.get((command, a.dest), a.dest) for a in _commands()[command]._actions}
    for name, extra in NON_DEFAULT[command].items():
        if extra is None:  # the equity hand and its seat
            argv = [command, SEAT_1_HAND, *REQUIRED[command][1:], "--out", str(tmp_path / "o"), "--seat", "1"]
            built = _load(SPECS[command][0])(parse_command_line(argv))
        else:
            built = _built(command, extra, tmp_path)
            assert name in dests, f"{command}: no option sets {name}"
        assert getattr(built, name) != getattr(defaults, name), f"{command} {extra}: {name} unchanged"


def test_every_spec_exception_is_still_needed():
    for (command, name), reason in SPEC_EXCEPTIONS.items():
        spec_class = _load(SPECS[command][1])
        assert name in _spec_fields(spec_class), f"{command}: {name} is no spec field ({reason})"
        options = {action.dest: action for action in _commands()[command]._actions}
        if name in options:  # an option that exists: its default must still differ
            assert options[name].default != spec_class.defaults()[name], (command, name)
