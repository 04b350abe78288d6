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
