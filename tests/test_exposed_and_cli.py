"""Exposed group notation and the ``simkit score`` command line."""

import json
import subprocess
import sys

import pytest

from simkit.cli import main
from simkit.errors import GroupError
from simkit.exposed import format_exposed, parse_exposed


def test_exposed_round_trip_and_aliases():
    text = "peng:RC kong:YZ chow:RJ,RS,RX zhan:GM table:RJ chow:YZ,RZ,WZ,GZ"
    assert format_exposed(parse_exposed(text)) == text
    assert format_exposed(parse_exposed("碰:RC 楼:YZ 吃:红将,红士,红相")) == "peng:RC kong:YZ chow:RJ,RS,RX"


@pytest.mark.parametrize(
    "text, message",
    [
        ("chow:RJ,RS,RC", "not a 圆"),
        ("chow:YZ,YZ,RZ", "not a 圆"),
        ("table:RS", "not a 将"),
        ("peng:RC,RM", "exactly one card"),
        ("pong:RC", "unknown exposed group kind"),
        ("RC", "kind:cards"),
        ("peng:", "names no card"),
    ],
)
def test_bad_groups(text, message):
    with pytest.raises(GroupError, match=message):
        parse_exposed(text)


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_score_prints_one_json_object(capsys):
    code, out, err = run(capsys, "score", "RJ*3 RS*2 RX*2")
    assert code == 0 and err == ""
    res = json.loads(out)
    assert res["complete"] is True and res["hu"] == 26 and res["units"] == 0 and res["wins"] is False
    assert res["lou"] == 0 and res["steps"] == 0 and res["patterns"] == []
    assert res["best"] == ["子 RJ*3 = 6", "pair RS*2 = 0", "pair RX*2 = 0", "素车 红将士相 1出 = 20"]


def test_score_with_exposed_and_rules(capsys):
    code, out, _ = run(
        capsys, "score", "YJ*3 YM*3 RJ*2", "--exposed", "kong:RC", "--rule", "lou_doubles=off"
    )
    res = json.loads(out)
    assert code == 0 and res["hu"] == 23 and res["lou"] == 1 and res["units"] == 0
    assert res["rules"]["lou_doubles"] is False
    code, out, _ = run(capsys, "score", "YJ*3 YM*3 RJ*2", "--exposed", "kong:RC")
    assert json.loads(out)["units"] == 1


def test_score_incomplete_has_null_hu(capsys):
    code, out, _ = run(capsys, "score", "RM RP")
    res = json.loads(out)
    assert code == 0 and res["complete"] is False and res["hu"] is None and res["min_idle"] == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["score", "RQ"], "unknown card 'RQ'"),
        (["score", "RJ*3", "--exposed", "kong:RJ"], "7 copies of RJ"),
        (["score", "RJ*2 RS", "--exposed", "chow:RJ,RS,RC"], "not a 圆"),
        (["score", "RJ", "--exposed", "table:RS"], "not a 将"),
        (["score", "RJ", "--rule", "nope=1"], "unknown rule option"),
        (["score"], "no hand given"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_jsonl(tmp_path, capsys):
    src = tmp_path / "hands.jsonl"
    lines = [
        {"hand": "RJ RS RX"},
        {"hand": "YJ*3 YM*3 RJ*2", "exposed": "kong:RC", "rules": {"hu_tolerance": 0}},
        {"hand": "RM RP"},
    ]
    src.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "score", "--jsonl", str(src))
    results = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [r["hu"] for r in results] == [1, 23, None]
    assert results[1]["units"] == 0 and results[1]["rules"]["hu_tolerance"] == 0


def test_jsonl_bad_line_writes_nothing(tmp_path, capsys):
    src = tmp_path / "hands.jsonl"
    src.write_text('{"hand": "RJ RS RX"}\n{"hand": "RJ*9"}\n', encoding="utf-8")
    dest = tmp_path / "out.jsonl"
    dest.write_text("previous results\n", encoding="utf-8")
    code, out, err = run(capsys, "score", "--jsonl", str(src), "--output", str(dest))
    assert code == 2 and "line 2" in err and "9 copies of RJ" in err
    assert dest.read_text(encoding="utf-8") == "previous results\n"  # nothing lost
    src.write_text("{not json\n", encoding="utf-8")
    code, _, err = run(capsys, "score", "--jsonl", str(src))
    assert code == 2 and "malformed JSON" in err


def test_console_entry_point_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "simkit", "score", "YJ RJ WJ"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["hu"] == 3



def test_a_warning_is_one_line_on_the_command_line(tmp_path):
    """A policy compared with itself: its paired differences are constant, so the bootstrap
    interval is undefined (a DegenerateDataWarning) and so is the duplicate design's variance
    reduction.  The warning is one ``simkit: warning:`` line, not Python's file, line number
    and source text (which it was), and the report says "undefined", not "infx"."""
    proc = subprocess.run([sys.executable, "-m", "simkit", "compare", "greedy", "greedy", "--deals", "3", "--seed",
                           "1", "--quiet", "--out", str(tmp_path / "c")], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "simkit: warning: differences are constant (3 values): the BCa bootstrap interval is undefined (NaN)"]
    report = (tmp_path / "c" / "report.md").read_text(encoding="utf-8")
    assert "undefined (the paired differences are constant" in report and "infx" not in report


def test_the_command_line_formats_every_warning_on_one_line(monkeypatch):
    """Another library's warning keeps its category's name; ``--debug`` keeps Python's format."""
    import warnings

    from simkit.cli import _one_line_warnings
    from simkit.errors import ModelRulesWarning

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after the test
    _one_line_warnings(debug=False)
    assert warnings.formatwarning("mean of\n  empty slice", RuntimeWarning, "x.py", 3, "y = f()") == (
        "simkit: warning: RuntimeWarning: mean of empty slice\n")
    assert warnings.formatwarning("trained for other rules", ModelRulesWarning, "x.py", 3) == (
        "simkit: warning: trained for other rules\n")
    _one_line_warnings(debug=True)
    assert "x.py:3" in warnings.formatwarning("mean of empty slice", RuntimeWarning, "x.py", 3, "y = f()")


# -- the command line's table of commands (simkit.cliargs) ----------------------------------

FLAGS = {  # every flag each command had when the parser became a table; more may come, none may go
    "score": {"--exposed", "--rule", "--jsonl", "--output"},
    "deals": {"--deals", "--seed", "--batch-size", "--rule", "--out"},
    "simulate": {"--deals", "--policies", "--seed", "--out", "--rule", "--workers", "--batch-size", "--backend",
                 "--scheduler", "--session-length", "--seating", "--quiet"},
    "report": {"--out", "--confidence"},
    "compare": {"--deals", "--sprt", "--seed", "--out", "--rule", "--batch-size", "--workers", "--confidence",
                "--quiet", "--burn-in", "--luck", "--json", "--backend", "--scheduler"},
    "tournament": {"--deals", "--sprt", "--seed", "--out", "--rule", "--batch-size", "--workers", "--resamples",
                   "--confidence", "--quiet", "--backend", "--scheduler"},
    "tune": {"--params", "--against", "--budget", "--seed", "--out", "--iteration-deals", "--validate-deals",
             "--confidence", "--spsa", "--rule", "--quiet", "--workers", "--backend", "--scheduler"},
    "luck-model": {"--out", "--seed", "--deals", "--check-deals", "--pair", "--hidden", "--epochs", "--rule", "--quiet",
                   "--workers", "--backend", "--scheduler"},
    "train": {"--out", "--seed", "--generations", "--deals", "--rate", "--hidden", "--epochs", "--alpha",
              "--check-deals", "--rule", "--quiet", "--workers", "--backend", "--scheduler"},
    "prob": {"--deals", "--seed", "--seat", "--batch-size", "--confidence", "--rule", "--out", "--hands", "--list",
             "--given"},
    "equity": {"--seat", "--policies", "--deals", "--seed", "--out", "--workers", "--batch-size", "--confidence",
               "--no-baseline", "--rule", "--quiet", "--backend", "--scheduler"},
    "experiment": {"--reports", "--data", "--out", "--scale", "--workers", "--confidence", "--quiet", "--backend",
                   "--scheduler"},
    "demo": {"--out", "--deals", "--seed", "--policies", "--seating"},
    "replay": {"--seed", "--deal", "--policies", "--rule", "--session-length", "--seating", "--seating-index",
               "--output", "--engine", "--position", "--json"},
    "analyze": {"--log", "--at", "--policy", "--rollouts", "--batch", "--no-race", "--tolerance", "--luck", "--sharpen", "--seed", "--workers",
                "--confidence", "--json"},
    "review": {"--seat", "--policy", "--rollouts", "--min-loss", "--luck", "--sharpen", "--seed", "--workers", "--out", "--json",
               "--quiet", "--reference", "--samples", "--confidence", "--backend", "--scheduler"},
    "calibrate": {"--seat", "--reference", "--deals", "--first-deal", "--samples", "--rule", "--seed", "--workers",
                  "--confidence", "--out", "--json", "--quiet"},
    "play": {"--seat", "--bots", "--rule", "--seed", "--deals", "--log", "--hint-rollouts"},
    "bench": {"--holdings", "--deals", "--lines", "--seed", "--json", "--markdown", "--out"},
    "rules": {"--rule"},
    "compile": {"--all"},
}


def test_every_command_keeps_its_flags():
    import argparse

    from simkit.cliargs import build_parser

    parser, _ = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(sub.choices) == set(FLAGS)
    for name, flags in FLAGS.items():
        have = {f for a in sub.choices[name]._actions for f in a.option_strings}
        assert flags | {"--debug", "-h", "--help"} <= have, (name, flags - have)


def test_jsonl_from_stdin_is_read_as_utf8():
    """Whatever the terminal's encoding (here Latin-1): the bytes are decoded as UTF-8."""
    import os

    line = json.dumps({"hand": "红将 红士 红相"}, ensure_ascii=False) + "\n"
    env = dict(os.environ, PYTHONIOENCODING="latin-1:backslashreplace")
    proc = subprocess.run([sys.executable, "-m", "simkit", "score", "--jsonl", "-"], input=line.encode("utf-8"),
                          capture_output=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hu"] == 1


@pytest.mark.parametrize("debug", [False, True])
def test_a_bug_is_one_line_naming_its_place_and_debug_shows_the_traceback(capsys, monkeypatch, debug):
    import simkit.cli as cli

    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setitem(cli.HANDLERS, "rules", broken)
    monkeypatch.delenv("SIMKIT_DEBUG", raising=False)
    code, out, err = run(capsys, *(["--debug"] if debug else []), "rules")
    last = err.splitlines()[-1]
    assert code == 1 and out == ""
    assert last.startswith("simkit: internal error: RuntimeError: a bug (at ") and "test_exposed_and_cli.py" in last
    assert ("Traceback" in err) == debug and (len(err.splitlines()) == 1) != debug
