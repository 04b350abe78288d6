"""Malformed command lines, for every subcommand: each must be refused by the command line's
validation layer (:mod:`simkit.cliargs`) before any work, with ONE line on stderr that names
the problem, exit status 2, no traceback, and nothing written (issue 21, F6 and F7).

Most cases run in-process through :func:`simkit.cli.main` (fast: a refused command line loads
neither numba nor pandas); the ones that could block (FIFOs) and a few others run through
``python -m simkit`` with a timeout, so that a hang is a failure, not a stuck suite.

The last tests cover a Python policy whose ``act`` raises: one line naming the policy, the
deal and the exception; the traceback only with ``--debug`` or ``SIMKIT_DEBUG=1``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simkit.cli import main
from simkit.errors import SimkitError

INT64_PLUS = "9223372036854775808"  # 2**63: does not fit int64
HUGE = "99999999999999999999999"
POL3 = "greedy,greedy,greedy"
HAND = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"  # 31 cards: seat 0
TUNE = ["tune", "patient", "--params", "min_units=1:8", "--against", "greedy", "--budget", "12000"]
REPLAY = ["replay", "--seed", "1", "--policies", POL3]
SIM = ["simulate", "--policies", POL3, "--seed", "1", "--out", "OUT/sim"]
DUP_RULE = ["--rule", "hu_tolerance=1", "--rule", "hu_tolerance=2"]

# (id, argv, a word the one-line error must contain). Placeholders: IN/ the inputs folder
# (afile: a regular file, adir: a folder, notutf8.jsonl / notutf8.toml: Latin-1 bytes, fifo: a
# FIFO), OUT/ the (empty) folder any output would land in; the working folder is OUT too.
CASES = [
    # score
    ("score-jsonl-not-utf8", ["score", "--jsonl", "IN/notutf8.jsonl"], "UTF-8"),
    ("score-jsonl-missing", ["score", "--jsonl", "IN/missing.jsonl"], "missing.jsonl"),
    ("score-jsonl-folder", ["score", "--jsonl", "IN/adir"], "adir"),
    ("score-repeated-rule", ["score", "RJ RS RX", *DUP_RULE], "hu_tolerance"),
    ("score-rule-no-value", ["score", "RJ RS RX", "--rule", "hu_tolerance"], "hu_tolerance"),
    ("score-output-folder", ["score", "RJ RS RX", "--output", "IN/adir"], "adir"),
    ("score-output-nowhere", ["score", "RJ RS RX", "--output", "OUT/no/such/x.json"], "no"),
    # deals
    ("deals-zero", ["deals", "--deals", "0", "--out", "OUT/d"], "--deals"),
    ("deals-huge", ["deals", "--deals", HUGE, "--out", "OUT/d"], "--deals"),
    ("deals-negative-seed", ["deals", "--seed", "-1", "--out", "OUT/d"], "--seed"),
    ("deals-batch-size", ["deals", "--batch-size", "0", "--out", "OUT/d"], "--batch-size"),
    ("deals-repeated-rule", ["deals", *DUP_RULE, "--out", "OUT/d"], "hu_tolerance"),
    ("deals-out-is-a-file", ["deals", "--deals", "10", "--out", "IN/afile"], "afile"),
    ("deals-not-a-number", ["deals", "--deals", "ten", "--out", "OUT/d"], "--deals"),
    # play
    ("play-seat", ["play", "--seat", "3"], "--seat"),
    ("play-unknown-bot", ["play", "--bots", "nosuch", "expert"], "nosuch"),
    ("play-one-bot", ["play", "--bots", "expert"], "--bots"),
    ("play-zero-deals", ["play", "--deals", "0"], "--deals"),
    ("play-negative-seed", ["play", "--seed", "-1"], "--seed"),
    ("play-log-folder", ["play", "--log", "IN/adir"], "adir"),
    ("play-log-exists", ["play", "--seed", "1", "--log", "IN/afile"], "exists already"),
    ("play-repeated-rule", ["play", *DUP_RULE], "hu_tolerance"),
    ("play-hint-rollouts", ["play", "--hint-rollouts", "0"], "--hint-rollouts"),
    # simulate
    ("simulate-huge-deals", [*SIM, "--deals", HUGE], "--deals"),
    ("simulate-int64-deals", [*SIM, "--deals", INT64_PLUS], "--deals"),
    ("simulate-zero-deals", [*SIM, "--deals", "0"], "--deals"),
    ("simulate-negative-seed", ["simulate", "--deals", "10", "--policies", POL3, "--seed", "-1", "--out", "OUT/s"],
     "--seed"),
    ("simulate-workers", [*SIM, "--deals", "10", "--workers", "0"], "--workers"),
    ("simulate-session-length", [*SIM, "--deals", "10", "--session-length", "100000"], "--session-length"),
    ("simulate-batch-size", [*SIM, "--deals", "10", "--batch-size", "-3"], "--batch-size"),
    ("simulate-repeated-rule", [*SIM, "--deals", "10", *DUP_RULE], "hu_tolerance"),
    # report
    ("report-missing", ["report", "IN/missing"], "missing"),
    ("report-fifo", ["report", "IN/fifo"], "fifo"),
    ("report-a-file", ["report", "IN/afile"], "afile"),
    ("report-confidence-big", ["report", "IN/adir", "--confidence", "1.5", "--out", "OUT/r"], "--confidence"),
    ("report-confidence-nan", ["report", "IN/adir", "--confidence", "nan", "--out", "OUT/r"], "--confidence"),
    ("report-confidence-inf", ["report", "IN/adir", "--confidence", "inf", "--out", "OUT/r"], "--confidence"),
    # compare
    ("compare-sprt-inf", ["compare", "greedy", "random", "--sprt", "inf,0.05,0.05", "--out", "OUT/c"], "--sprt"),
    ("compare-sprt-nan", ["compare", "greedy", "random", "--sprt", "0.1,nan,0.05", "--out", "OUT/c"], "--sprt"),
    ("compare-sprt-two", ["compare", "greedy", "random", "--sprt", "0.1,0.05"], "--sprt"),
    ("compare-one-deal", ["compare", "greedy", "random", "--deals", "1"], "--deals"),
    ("compare-negative-seed", ["compare", "greedy", "random", "--deals", "20", "--seed", "-1"], "--seed"),
    ("compare-workers", ["compare", "greedy", "random", "--deals", "20", "--workers", "0"], "--workers"),
    ("compare-huge-deals", ["compare", "greedy", "random", "--deals", HUGE], "--deals"),
    ("compare-repeated-rule", ["compare", "greedy", "random", "--deals", "20", *DUP_RULE], "hu_tolerance"),
    ("compare-burn-in-1", ["compare", "greedy", "random", "--sprt", "0.1,0.05,0.05", "--burn-in", "1"], "--burn-in"),
    ("compare-luck-missing", ["compare", "greedy", "random", "--deals", "20", "--out", "OUT/c", "--luck",
                              "IN/missing"], "missing"),
    ("compare-luck-a-folder", ["compare", "greedy", "random", "--deals", "20", "--out", "OUT/c", "--luck", "IN/adir"],
     "adir"),
    # luck-model
    ("luck-model-no-out", ["luck-model"], "--out"),
    ("luck-model-not-npz", ["luck-model", "--out", "OUT/v.txt"], "--out"),
    ("luck-model-deals-5", ["luck-model", "--out", "OUT/v.npz", "--deals", "5"], "--deals"),
    ("luck-model-pair-one", ["luck-model", "--out", "OUT/v.npz", "--pair", "expert"], "--pair"),
    ("luck-model-pair-unknown", ["luck-model", "--out", "OUT/v.npz", "--pair", "expert,nosuch"], "nosuch"),
    ("luck-model-hidden-0", ["luck-model", "--out", "OUT/v.npz", "--hidden", "0"], "--hidden"),
    ("luck-model-repeated-rule", ["luck-model", "--out", "OUT/v.npz", *DUP_RULE], "hu_tolerance"),
    # tournament
    ("tournament-resamples-0", ["tournament", "greedy", "random", "--deals", "20", "--resamples", "0"],
     "--resamples"),
    ("tournament-resamples-neg", ["tournament", "greedy", "random", "--deals", "20", "--resamples", "-5"],
     "--resamples"),
    ("tournament-one-deal", ["tournament", "greedy", "random", "--deals", "1"], "--deals"),
    ("tournament-sprt-inf", ["tournament", "greedy", "random", "--sprt", "0.1,inf,0.05"], "--sprt"),
    ("tournament-negative-seed", ["tournament", "greedy", "random", "--seed", "-1"], "--seed"),
    ("tournament-batch-size", ["tournament", "greedy", "random", "--batch-size", "0"], "--batch-size"),
    ("tournament-confidence", ["tournament", "greedy", "random", "--confidence", "0"], "--confidence"),
    # tune
    ("tune-budget-0", [*TUNE[:-1], "0"], "--budget"),
    ("tune-budget-huge", [*TUNE[:-1], HUGE], "--budget"),
    ("tune-iteration-deals", [*TUNE, "--iteration-deals", "0"], "--iteration-deals"),
    ("tune-validate-deals", [*TUNE, "--validate-deals", "1"], "--validate-deals"),
    ("tune-spsa-inf", [*TUNE, "--spsa", "a=inf"], "--spsa"),
    ("tune-confidence", [*TUNE, "--confidence", "2"], "--confidence"),
    ("tune-negative-seed", [*TUNE, "--seed", "-1"], "--seed"),
    ("tune-repeated-rule", [*TUNE, *DUP_RULE], "hu_tolerance"),
    # train
    ("train-generations-0", ["train", "--out", "OUT/t", "--generations", "0"], "--generations"),
    ("train-deals-4", ["train", "--out", "OUT/t", "--deals", "4"], "--deals"),
    ("train-rate-0", ["train", "--out", "OUT/t", "--rate", "0"], "--rate"),
    ("train-rate-nan", ["train", "--out", "OUT/t", "--rate", "nan"], "--rate"),
    ("train-hidden-three", ["train", "--out", "OUT/t", "--hidden", "8,4,2"], "--hidden"),
    ("train-hidden-wide", ["train", "--out", "OUT/t", "--hidden", "512,4"], "--hidden"),
    ("train-alpha-inf", ["train", "--out", "OUT/t", "--alpha", "inf"], "--alpha"),
    ("train-repeated-rule", ["train", "--out", "OUT/t", *DUP_RULE], "hu_tolerance"),
    # prob
    ("prob-zero-deals", ["prob", "--deals", "0"], "--deals"),
    ("prob-seat", ["prob", "--seat", "3"], "--seat"),
    ("prob-negative-seed", ["prob", "--seed", "-1"], "--seed"),
    ("prob-confidence", ["prob", "--confidence", "1"], "--confidence"),
    ("prob-batch-size", ["prob", "--batch-size", "0"], "--batch-size"),
    ("prob-out-suffix", ["prob", "--deals", "10", "--out", "OUT/table.txt"], "--out"),
    ("prob-huge-deals", ["prob", "--deals", HUGE], "--deals"),
    # equity
    ("equity-seat", ["equity", HAND, "--seat", "3", "--policies", POL3, "--deals", "10"], "--seat"),
    ("equity-zero-deals", ["equity", HAND, "--policies", POL3, "--deals", "0"], "--deals"),
    ("equity-negative-seed", ["equity", HAND, "--policies", POL3, "--deals", "10", "--seed", "-1"], "--seed"),
    ("equity-workers", ["equity", HAND, "--policies", POL3, "--deals", "10", "--workers", "0"], "--workers"),
    ("equity-confidence", ["equity", HAND, "--policies", POL3, "--deals", "10", "--confidence", "nan"],
     "--confidence"),
    ("equity-batch-size", ["equity", HAND, "--policies", POL3, "--deals", "10", "--batch-size", "0"], "--batch-size"),
    ("equity-huge-deals", ["equity", HAND, "--policies", POL3, "--deals", HUGE], "--deals"),
    # experiment
    ("experiment-not-utf8", ["experiment", "run", "IN/notutf8.toml", "--reports", "OUT/r"], "UTF-8"),
    ("experiment-fifo", ["experiment", "run", "IN/fifo", "--reports", "OUT/r"], "fifo"),
    ("experiment-missing", ["experiment", "run", "IN/missing.toml", "--reports", "OUT/r"], "missing.toml"),
    ("experiment-folder", ["experiment", "run", "IN/adir", "--reports", "OUT/r"], "adir"),
    ("experiment-workers", ["experiment", "run", "IN/ok.toml", "--reports", "OUT/r", "--workers", "0"], "--workers"),
    ("experiment-confidence", ["experiment", "run", "IN/ok.toml", "--reports", "OUT/r", "--confidence", "-1"],
     "--confidence"),
    ("experiment-reports-file", ["experiment", "run", "IN/ok.toml", "--reports", "IN/afile"], "afile"),
    # demo
    ("demo-zero-deals", ["demo", "--out", "OUT/demo", "--deals", "0"], "--deals"),
    ("demo-huge-deals", ["demo", "--out", "OUT/demo", "--deals", HUGE], "--deals"),
    ("demo-negative-seed", ["demo", "--out", "OUT/demo", "--seed", "-1"], "--seed"),
    ("demo-out-file", ["demo", "--out", "IN/afile"], "afile"),
    ("demo-seating", ["demo", "--out", "OUT/demo", "--seating", "sideways"], "--seating"),
    # replay
    ("replay-huge-deal", [*REPLAY, "--deal", HUGE], "--deal"),
    ("replay-int64-deal", [*REPLAY, "--deal", INT64_PLUS], "--deal"),
    ("replay-negative-deal", [*REPLAY, "--deal", "-1"], "--deal"),
    ("replay-session-length", [*REPLAY, "--deal", "3", "--session-length", "100000"], "--session-length"),
    ("replay-negative-seed", ["replay", "--seed", "-1", "--deal", "0", "--policies", POL3], "--seed"),
    ("replay-seating-index", [*REPLAY, "--deal", "0", "--seating", "all", "--seating-index", "6"],
     "--seating-index"),
    ("replay-repeated-rule", [*REPLAY, "--deal", "0", *DUP_RULE], "hu_tolerance"),
    ("replay-output-folder", [*REPLAY, "--deal", "0", "--output", "IN/adir"], "adir"),
    ("replay-position-negative", [*REPLAY, "--deal", "0", "--position", "-1"], "--position"),
    ("replay-json-without-position", [*REPLAY, "--deal", "0", "--json"], "--json"),
    # analyze
    ("analyze-nothing", ["analyze"], "position"),
    ("analyze-rollouts-0", ["analyze", "seat=0", "--rollouts", "0"], "--rollouts"),
    ("analyze-batch-huge", ["analyze", "seat=0", "--batch", HUGE], "--batch"),
    ("analyze-log-missing", ["analyze", "--log", "IN/nothing.jsonl", "--at", "0"], "nothing.jsonl"),
    ("analyze-log-folder", ["analyze", "--log", "IN/adir", "--at", "0"], "adir"),
    ("analyze-at-negative", ["analyze", "--log", "IN/afile", "--at", "-2"], "--at"),
    ("analyze-bad-position", ["analyze", "seat=0; turn=discard; hand=RJ*5; stock=0"], "RJ"),
    ("analyze-not-json", ["analyze", "{oops"], "JSON"),
    ("analyze-unknown-policy", ["analyze", "seat=0", "--policy", "nosuch"], "nosuch"),
    ("analyze-confidence", ["analyze", "seat=0", "--confidence", "1.5"], "--confidence"),
    # review
    ("review-no-seat", ["review", "IN/afile"], "--seat"),
    ("review-seat-3", ["review", "IN/afile", "--seat", "3"], "--seat"),
    ("review-missing-log", ["review", "IN/nothing.jsonl", "--seat", "0"], "nothing.jsonl"),
    ("review-not-json", ["review", "IN/afile", "--seat", "0"], "not JSON"),
    ("review-min-loss", ["review", "IN/afile", "--seat", "0", "--min-loss", "-1"], "--min-loss"),
    ("review-rollouts", ["review", "IN/afile", "--seat", "0", "--rollouts", "0"], "--rollouts"),
    ("review-out-file", ["review", "IN/afile", "--seat", "0", "--out", "IN/afile"], "afile"),
    ("calibrate-no-policy", ["calibrate"], "policy"),
    ("calibrate-unknown-policy", ["calibrate", "nosuch", "--deals", "3"], "nosuch"),
    ("calibrate-import-path", ["calibrate", "os:system", "--deals", "3"], "@njit"),
    ("calibrate-deals", ["calibrate", "greedy", "--deals", "1"], "--deals"),
    ("calibrate-samples", ["calibrate", "greedy", "--samples", "1"], "--samples"),
    ("calibrate-seat", ["calibrate", "greedy", "--seat", "3"], "--seat"),
    ("calibrate-out-file", ["calibrate", "greedy", "--out", "IN/afile"], "afile"),
    # bench
    ("bench-negative-seed", ["bench", "engine", "--seed", "-1"], "--seed"),
    ("bench-huge-seed", ["bench", "engine", "--seed", HUGE], "--seed"),
    ("bench-holdings", ["bench", "evaluator", "--holdings", "10"], "--holdings"),
    ("bench-huge-deals", ["bench", "engine", "--deals", HUGE], "--deals"),
    ("bench-lines", ["bench", "score", "--lines", "0"], "--lines"),
    ("bench-target", ["bench", "nothing"], "nothing"),
    # rules
    ("rules-repeated", ["rules", *DUP_RULE], "hu_tolerance"),
    ("rules-unknown", ["rules", "--rule", "nope=1"], "nope"),
    ("rules-no-value", ["rules", "--rule", "hu_tolerance"], "hu_tolerance"),
    ("rules-bad-int", ["rules", "--rule", "hu_tolerance=many"], "hu_tolerance"),
    ("rules-bad-bool", ["rules", "--rule", "lou_doubles=maybe"], "lou_doubles"),
    ("rules-positional", ["rules", "extra"], "extra"),
    # compile
    ("compile-unknown", ["compile", "nothing"], "nothing"),
    ("compile-unknown-2", ["compile", "score", "nothing"], "nothing"),
    ("compile-empty", ["compile", ""], "''"),
    ("compile-flag", ["compile", "--rule", "x=1"], "--rule"),
    ("compile-flag-2", ["compile", "--everything"], "--everything"),
    # the command line itself
    ("no-command", [], "command"),
    ("unknown-command", ["nothing"], "nothing"),
    ("unknown-global-flag", ["--nothing", "rules"], "--nothing"),
    ("bad-global-value", ["--version=2", "rules"], "--version"),
]

# through `python -m simkit`, with a timeout: the FIFOs (opening one blocks) and a sample
SUBPROCESS = {"report-fifo", "experiment-fifo", "score-jsonl-not-utf8", "simulate-huge-deals", "no-command",
              "replay-int64-deal"}


@pytest.fixture
def places(tmp_path, monkeypatch):
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    (inputs / "afile").write_text("x\n", encoding="utf-8")
    (inputs / "adir").mkdir()
    (inputs / "notutf8.jsonl").write_bytes('{"hand": "RJ RS RX", "note": "caf\u00e9"}\n'.encode("latin-1"))
    (inputs / "notutf8.toml").write_bytes('name = "caf\u00e9"\n'.encode("latin-1"))
    (inputs / "ok.toml").write_text('name = "ok"\n[[simulation]]\npolicies = "random,random,random"\ndeals = 50\n',
                                    encoding="utf-8")
    os.mkfifo(inputs / "fifo")
    monkeypatch.chdir(out)
    return inputs, out


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            found[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return found


def _expand(argv, inputs: Path, out: Path) -> list[str]:
    return [a.replace("IN/", f"{inputs}/").replace("OUT/", f"{out}/") for a in argv]


def _in_process(argv, capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors exit from inside parse_args
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _subprocess(argv, cwd: Path) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env.pop("SIMKIT_DEBUG", None)
    try:
        proc = subprocess.run([sys.executable, "-m", "simkit", *argv], cwd=cwd, env=env, capture_output=True,
                              text=True, encoding="utf-8", timeout=60, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"simkit {' '.join(argv)} blocked for 60 s")
    return proc.returncode, proc.stdout, proc.stderr


def _check_one_line_error(code, out, err, needle, before, after) -> None:
    assert "Traceback" not in err, err
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n") and lines[0].startswith("simkit: error: "), err
    assert needle in lines[0], (needle, lines[0])
    assert out == "", out
    assert after == before, "something was written"


@pytest.mark.parametrize("case_id, argv, needle", CASES, ids=[c[0] for c in CASES])
def test_malformed_command_lines_are_one_line_errors(places, capsys, monkeypatch, case_id, argv, needle):
    monkeypatch.delenv("SIMKIT_DEBUG", raising=False)
    inputs, out = places
    argv = _expand(argv, inputs, out)
    before = _tree(inputs.parent)
    if case_id in SUBPROCESS:
        code, stdout, err = _subprocess(argv, out)
    else:
        code, stdout, err = _in_process(argv, capsys)
    _check_one_line_error(code, stdout, err, needle, before, _tree(inputs.parent))


def test_every_subcommand_is_fuzzed_five_times():
    from simkit.cliargs import COMMANDS

    counts = {c.name: 0 for c in COMMANDS}
    for _, argv, _ in CASES:
        if argv and argv[0] in counts:
            counts[argv[0]] += 1
    assert counts and min(counts.values()) >= 5, counts


def test_a_rule_given_twice_with_the_same_value_is_still_an_error(capsys):
    code, out, err = _in_process(["rules", "--rule", "hu_tolerance=1", "--rule", " hu_tolerance =1"], capsys)
    assert code == 2 and "given twice" in err and out == ""
    code, out, _ = _in_process(["rules", "--rule", "hu_tolerance=1", "--rule", "lou_doubles=off"], capsys)
    assert code == 0 and "hu_tolerance = 1" in out


def test_the_largest_int64_values_pass_validation():
    """The bounds are int64's, not smaller: a seed of 2**63 - 1 and deal 2**63 - 2 (the last
    deal of a run of 2**63 - 1 deals) pass the layer, one more does not."""
    from simkit.cliargs import INT64_MAX, parse_command_line

    args = parse_command_line(["replay", "--seed", str(INT64_MAX), "--deal", str(INT64_MAX - 1), "--policies", POL3])
    assert args.deal == INT64_MAX - 1 and args.seed == INT64_MAX
    with pytest.raises(SimkitError, match=r"--deal must be at most 9223372036854775806 \(2\*\*63 - 2"):
        parse_command_line(["replay", "--seed", "1", "--deal", str(INT64_MAX), "--policies", POL3])
    with pytest.raises(SimkitError, match="--seed must fit int64"):
        parse_command_line(["replay", "--seed", str(INT64_MAX + 1), "--deal", "0", "--policies", POL3])


@pytest.mark.parametrize("argv", [["--debug", "replay", "--seed", "1", "--deal", HUGE, "--policies", POL3],
                                  ["replay", "--seed", "1", "--deal", HUGE, "--policies", POL3, "--debug"]],
                         ids=["before", "after"])
def test_debug_before_or_after_the_command_adds_the_traceback(capsys, monkeypatch, argv):
    monkeypatch.delenv("SIMKIT_DEBUG", raising=False)
    code, out, err = _in_process(argv, capsys)
    assert code == 2 and out == "" and err.startswith("Traceback") and "simkit/cliargs.py" in err
    assert err.splitlines()[-1].startswith("simkit: error: --deal must be at most")


def test_stdin_that_is_not_utf8_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "simkit", "score", "--jsonl", "-"], input=b"\xff\xfe{}\n",
                          capture_output=True, timeout=60, check=False)
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2 and "Traceback" not in err and err.count("\n") == 1 and "UTF-8" in err, err


# -- a Python policy whose act raises ---------------------------------------------------------

RAISING_POLICY = '''
class Boom:
    """Raises on the first decision with a choice."""

    def act(self, observation, legal_actions):
        if len(legal_actions) > 1:
            raise ZeroDivisionError("boom inside act")
        return legal_actions[0]
'''


@pytest.fixture
def raising_policy(tmp_path, monkeypatch):
    (tmp_path / "fuzz_boom_policy.py").write_text(RAISING_POLICY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIMKIT_DEBUG", raising=False)
    return ["simulate", "--deals", "3", "--policies", "fuzz_boom_policy:Boom,greedy,greedy", "--seed", "1",
            "--out", str(tmp_path / "data"), "--quiet"]


def test_a_python_policy_that_raises_is_one_line(raising_policy, capsys):
    code, out, err = _in_process(raising_policy, capsys)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert "fuzz_boom_policy:Boom" in err and "deal 0" in err and "ZeroDivisionError: boom inside act" in err, err


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_debug_shows_the_traceback(raising_policy, capsys, monkeypatch, how):
    if how == "flag":
        argv = ["--debug", *raising_policy]
    else:
        argv = raising_policy
        monkeypatch.setenv("SIMKIT_DEBUG", "1")
    code, out, err = _in_process(argv, capsys)
    assert code == 2 and "Traceback" in err and 'raise ZeroDivisionError("boom inside act")' in err, err
    assert err.splitlines()[-1].startswith("simkit: error: ") and "fuzz_boom_policy:Boom" in err.splitlines()[-1]


def test_a_python_policy_that_raises_in_a_worker_is_one_line(raising_policy, capsys):
    """In a worker process too the line names the policy, the deal and the exception (the
    deal loop raises the one-line DealError where the policy raised, and it travels back)."""
    argv = [*raising_policy[:2], "4", *raising_policy[3:], "--batch-size", "2", "--workers", "2"]
    code, out, err = _in_process(argv, capsys)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("simkit: error: deal ") and " of seed 1 (policies by seat: " in err, err
    assert "(fuzz_boom_policy:Boom) raised ZeroDivisionError: boom inside act in act" in err, err
