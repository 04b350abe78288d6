"""Position analysis (simkit analyze) and game review (simkit review).

* positions whose ranking is known by construction are ranked correctly (every seed tried);
* each action's estimate agrees with a plain rollout of 100x more determinisations;
* the rollouts are a pure function of (position, seed, determinisation): the same numbers for
  1 and 2 threads and for any split of the determinisations; common random numbers pair the
  actions (their differences have less variance than independent samples would give);
* a review of a deal played by the rollout policy itself finds near-zero loss on average;
* the command line: analyze a position or a logged decision, review a log, bad input in one line.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from helpers import one_line_error, run_cli

from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.position import action_text, parse_position
from simkit.errors import SimkitError
from simkit.policies.builtin import POLICY_WORK_SIZE, random_act
from simkit.policies.expert import EXPERT_DEFAULTS, expert_state
from simkit.policies.mc import determinise, sharpen_hand
from simkit.policies.registry import parse_policy
from simkit.replay import log_decisions, replay_jsonl
from simkit.rng import root_key, stream_state
from simkit.rules import RuleSet
from simkit.runner.luck import draw_luck, new_luck_scratch
from simkit.runner.rollout import OUT_LUCK, OUT_PAYOFF, rollouts
from simkit.runner.value_model import value_model_for
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution
from simkit.specs.review import ReviewSpec
from simkit.studies.analyze import DEFAULT_SHARPEN, analyze_position
from simkit.studies.position_checks import (
    brute_force_agreement,
    calibration,
    known_answer_cases,
)
from simkit.studies.review import (
    parse_decision_log,
    review_decisions,
    write_review_report,
)

SEED = 77


@pytest.fixture(scope="module")
def cases():
    return known_answer_cases(SEED, 40, 2)


@pytest.fixture(scope="module")
def logged():
    """The decisions of an expert deal (seed 5, deal 3) and its log lines."""
    lines = replay_jsonl(5, 3, "expert,expert,expert").splitlines()
    return lines, log_decisions(lines)


@pytest.mark.parametrize("kind", ["win", "break_zi", "decline_kong", "decline_chariot"])
def test_known_answer_positions_are_ranked_correctly(cases, kind):
    """A winning holding with the stock nearly spent: win first; breaking a 子 early while idle
    cards exist: below keeping it; a pass that forbids winning: below the claim."""
    assert cases[kind], f"no {kind} position in the deals"
    for case in cases[kind]:
        for seed in range(3):
            analysis = analyze_position(case.position, AnalyzeSpec(seed=seed, rollouts=256))
            assert case.ranked_correctly(analysis), (kind, seed, case.position.text())
            if kind == "win":
                assert analysis.best.action == L.A_WIN


def test_estimates_agree_with_a_plain_rollout_of_100_times_more(logged):
    """Interval coverage of the brute-force mean: a bug in the intervals, the pairing or the
    determinisations (a biased sample) shows as coverage far below 95 %."""
    _, decisions = logged
    positions = [d.position for d in decisions if len(d.position.legal_actions()) >= 2][8:24:4]
    rows = brute_force_agreement(positions, rollouts=24, factor=100)
    coverage = np.mean([r.covered for r in rows])
    assert len(rows) >= 10
    assert coverage >= 0.8, [(r.action, r.estimate, r.lo, r.hi, r.brute) for r in rows if not r.covered]


def test_rollouts_do_not_depend_on_threads_or_splits(logged):
    _, decisions = logged
    position = decisions[11].position
    legal = position.legal_actions()
    obs = position.observation()
    spec = parse_policy("expert")
    alive = [True] * len(legal)
    one = rollouts(obs, legal, alive, 0, 40, 3, spec, position.rules, workers=1)
    two = rollouts(obs, legal, alive, 0, 40, 3, spec, position.rules, workers=2)
    split = np.concatenate([rollouts(obs, legal, alive, 0, 13, 3, spec, position.rules),
                            rollouts(obs, legal, alive, 13, 27, 3, spec, position.rules)], axis=1)
    assert np.array_equal(one, two) and np.array_equal(one, split)
    other_seed = rollouts(obs, legal, alive, 0, 40, 4, spec, position.rules)
    assert not np.array_equal(one[..., OUT_PAYOFF], other_seed[..., OUT_PAYOFF])
    a = analyze_position(position, AnalyzeSpec(seed=3, rollouts=256), Execution(workers=1))
    b = analyze_position(position, AnalyzeSpec(seed=3, rollouts=256), Execution(workers=2))
    assert a.to_json() == b.to_json()


def test_common_random_numbers_pair_the_actions(logged):
    """The same determinisations for every action: the variance of a difference is well below
    the sum of the two variances (about equal to it if each action had its own samples)."""
    _, decisions = logged
    factors = []
    for d in decisions[5:30]:
        if len(d.position.legal_actions()) >= 3 and d.position.decision == "discard":
            analysis = analyze_position(d.position, AnalyzeSpec(seed=1, rollouts=128, race=False))
            factors += [a.crn_factor for a in analysis.actions[1:] if np.isfinite(a.crn_factor)]
    assert len(factors) >= 10
    assert np.median(factors) > 1.2


def test_an_actions_rollouts_do_not_depend_on_the_other_candidates(logged):
    """Common random numbers hold for a random continuation too: the policies' streams are keyed
    by (seed, determinisation, seat), never by the candidate, so an action's rollouts are the same
    numbers whether it is analysed alone, first or later among others (with streams keyed by the
    candidate's index, the random continuation after the same action would differ).  Random play
    mostly ends in 穿牌 (payoff 0), so the luck of the draws (a value model), which follows every
    state the continuation meets, is what shows it."""
    _, decisions = logged
    position = next(d.position for d in decisions[5:] if len(d.position.legal_actions()) >= 3)
    first, second, third = position.legal_actions()[:3]
    obs = position.observation()
    block = value_model_for(True, 11).block
    for name in ("random", "expert"):
        spec = parse_policy(name)
        alone = rollouts(obs, [third], [True], 0, 24, 5, spec, position.rules, block)
        among = rollouts(obs, [first, second, third], [True] * 3, 0, 24, 5, spec, position.rules, block)
        later = rollouts(obs, [second, third], [True] * 2, 0, 24, 5, spec, position.rules, block)
        assert np.count_nonzero(alone[0, :, OUT_LUCK]) > 12
        assert np.array_equal(alone[0], among[2]) and np.array_equal(alone[0], later[1]), name


def test_each_racing_round_takes_new_determinisations(cases):
    """Racing plays determinisations done, done + 1, ... in each round: the action that races to
    the end has the very estimate it has without racing (a round restarting at determinisation 0
    would repeat the first batch, and its interval would rest on that many samples)."""
    case = cases["decline_chariot"][0]
    raced = analyze_position(case.position, AnalyzeSpec(seed=2, rollouts=512, batch=32))
    best = raced.best
    assert best.rollouts >= 3 * 32  # at least three rounds
    full = analyze_position(case.position, AnalyzeSpec(seed=2, rollouts=best.rollouts, race=False))
    assert best.action == full.best.action
    assert best.payoff == full.estimate(best.action).payoff
    assert (best.payoff_lo, best.payoff_hi) == (full.estimate(best.action).payoff_lo, full.estimate(best.action).payoff_hi)


def test_racing_stops_separated_actions_early_and_keeps_the_best(cases):
    case = cases["decline_chariot"][0]
    raced = analyze_position(case.position, AnalyzeSpec(seed=0, rollouts=2048))
    full = analyze_position(case.position, AnalyzeSpec(seed=0, rollouts=2048, race=False))
    assert raced.estimate(L.A_PASS).status == "separated" and raced.estimate(L.A_PASS).rollouts < 2048
    assert raced.best.action == full.best.action
    assert raced.best.rollouts == max(a.rollouts for a in raced.actions)
    frame = raced.to_frame()
    assert list(frame["action"]) == [a.action for a in raced.actions]
    assert frame["payoff"].iloc[0] == frame["payoff"].max()


def test_review_of_a_deal_played_by_the_rollout_policy_finds_little_loss(logged, tmp_path):
    lines, _ = logged
    decisions = parse_decision_log(lines)
    losses = []
    for seat in range(3):
        review = review_decisions(decisions, ReviewSpec(seat=seat, rollouts=256, seed=2))
        frame = review.to_frame()
        # measured on determinisations the choice never saw: a loss may be negative (no winner's curse)
        assert ((frame["loss_lo"] <= frame["loss"]) & (frame["loss"] <= frame["loss_hi"])).all()
        assert set(frame["kind"]) <= {"discard", "claim", "win"}
        losses += list(frame["loss"])
        summary = review.summary()
        assert summary["decisions"] == len(frame)
        assert sum(v["decisions"] for v in summary["by_kind"].values()) == len(frame)
    assert abs(np.mean(losses)) < 0.15, np.mean(losses)
    path = write_review_report(review, tmp_path / "review", min_loss=0.0)
    text = path.read_text()
    assert "## Headline" in text and "## The analysis's totals" in text
    assert "![expected loss per decision](loss.png)" in text
    assert (tmp_path / "review" / "loss.png").stat().st_size > 0
    assert json.loads((tmp_path / "review" / "review.json").read_text())["summary"]["seat"] == 2


def test_a_typed_decision_log_is_reviewed_like_a_replay_log(logged):
    lines, decisions = logged
    typed = [json.dumps({"position": d.position.text(), "chosen": action_text(d.action, d.position)})
             for d in decisions if d.seat == 1]
    replayed = parse_decision_log(lines)
    # a typed log names no deal: given the replay's deal and decision numbers (the rollouts' key), the same review
    keyed = [dataclasses.replace(t, index=d.index, deal=d.deal)
             for t, d in zip(parse_decision_log(typed), [d for d in replayed if d.position.seat == 1], strict=True)]
    from_typed = review_decisions(keyed, ReviewSpec(seat=1, rollouts=64, seed=4))
    from_replay = review_decisions(replayed, ReviewSpec(seat=1, rollouts=64, seed=4))
    columns = ["kind", "hand", "chosen", "best", "loss", "loss_lo", "loss_hi"]
    assert from_typed.to_frame()[columns].equals(from_replay.to_frame()[columns])
    with pytest.raises(SimkitError, match="log line 2: action 'discard XX'"):
        parse_decision_log([typed[0], json.dumps({"position": decisions[0].position.text(), "chosen": "discard XX"})],
                           "log")


def test_analyze_refuses_bad_arguments():
    position = parse_position("seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; "
                              "card=RJ; source=discard; from=0; stock=21")
    with pytest.raises(SimkitError, match="rollouts must be a whole number >= 1"):
        analyze_position(position, AnalyzeSpec(rollouts=0))
    with pytest.raises(SimkitError, match="actions must be legal"):
        analyze_position(position, AnalyzeSpec(actions=[L.A_KONG]))
    with pytest.raises(SimkitError, match="built-in policies only"):
        analyze_position(position, AnalyzeSpec(policy=parse_policy("tests.helpers:first_legal")))
    assert RuleSet() == position.rules


def _stdout(argv, capsys) -> tuple[int, str]:
    from simkit.cli import main

    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr().out


def test_cli_analyze_review_and_replay_position(logged, tmp_path, capsys):
    lines, decisions = logged
    log = tmp_path / "deal.jsonl"
    log.write_text("\n".join(lines) + "\n")
    rc, out = _stdout(["replay", "--seed", "5", "--deal", "3", "--policies", "expert,expert,expert",
                       "--position", "11"], capsys)
    assert rc == 0 and parse_position(out) == decisions[11].position
    rc, out = _stdout(["analyze", out.strip(), "--rollouts", "64", "--json"], capsys)
    direct = json.loads(out)
    rc2, out2 = _stdout(["analyze", "--log", str(log), "--at", "11", "--rollouts", "64", "--json"], capsys)
    assert rc == rc2 == 0 and json.loads(out2) == direct
    position = decisions[11].position
    assert {a["name"] for a in direct["actions"]} == {action_text(x, position) for x in position.legal_actions()}
    rc, out = _stdout(["review", str(log), "--seat", "0", "--rollouts", "32", "--out", str(tmp_path / "r"),
                       "--quiet"], capsys)
    assert rc == 0 and "total loss" in out and (tmp_path / "r" / "review.md").exists()


def test_cli_belief_reads_the_history_the_position_carries(logged, tmp_path, capsys):
    """``replay --position`` writes the history, ``analyze --belief`` reads it (the same analysis
    from the log); ``review --belief`` passes it to every decision.  Catches a history lost on the
    way (the belief would then refuse the position)."""
    lines, decisions = logged
    log = tmp_path / "deal.jsonl"
    log.write_text("\n".join(lines) + "\n")
    rc, text = _stdout(["replay", "--seed", "5", "--deal", "3", "--policies", "expert,expert,expert",
                        "--position", "11"], capsys)
    assert "history=" in text
    rc, out = _stdout(["analyze", text.strip(), "--rollouts", "64", "--belief", "32", "--json"], capsys)
    direct = json.loads(out)
    rc2, out2 = _stdout(["analyze", "--log", str(log), "--at", "11", "--rollouts", "64", "--belief", "32", "--json"],
                        capsys)
    assert rc == rc2 == 0 and json.loads(out2) == direct and direct["belief"] == 32 and direct["sharpen"] == 0
    rc, out = _stdout(["review", str(log), "--seat", "0", "--rollouts", "32", "--belief", "16", "--reference", "none",
                       "--json", "--quiet"], capsys)
    assert rc == 0 and json.loads(out)["belief"] == 16


@pytest.mark.parametrize(("argv", "needles"), [
    (["analyze"], ("give a position",)),
    (["analyze", "seat=0; turn=discard; hand=RJ; stock=0"], ("seat 0 holds 1 concealed",)),
    (["analyze", "--log", "LOG", "--at", "999"], ("has", "decisions")),
    (["analyze", "--at", "3"], ("--at needs --log",)),
    (["analyze", "seat=0; turn=discard; hand=RJ; stock=0", "--belief-noise", "1.5"], ("--belief-noise", "[0, 1]")),
    (["analyze", "--log", "LOG", "--at", "2", "--belief", "-1"], ("--belief",)),
    (["review", "LOG", "--seat", "3"], ("--seat must be 0, 1 or 2",)),
    (["review", "EMPTY", "--seat", "0"], ("the log is empty",)),
    (["replay", "--seed", "5", "--deal", "3", "--policies", "expert,expert,expert", "--position", "9999"],
     ("decisions",)),
])
def test_cli_bad_input_is_one_line(argv, needles, logged, tmp_path, capsys):
    lines, _ = logged
    (tmp_path / "deal.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "empty.jsonl").write_text("\n")
    argv = [str(tmp_path / "deal.jsonl") if a == "LOG" else str(tmp_path / "empty.jsonl") if a == "EMPTY" else a
            for a in argv]
    rc, err = run_cli(argv, capsys)
    one_line_error(rc, err, *needles)


def test_the_default_opponent_model_is_calibrated_on_expert_deals():
    """The taken action's estimated payoff against what the deal then paid: uniform samples
    overestimate it (random opponents are weak), the default opponent model does not.  Catches
    an opponent model that is switched off or broken, or a bias in the rollouts."""
    uniform, default = calibration(4107, 20, (0, DEFAULT_SHARPEN), rollouts=24)
    assert default.decisions >= 100
    assert uniform.payoff_bias < default.payoff_bias - 0.4, (uniform, default)
    assert abs(default.payoff_bias) < 4 * default.payoff_bias_se, default
    assert abs(default.loss_bias) < 4 * default.loss_bias_se + 0.02, default


def _plain_rollout(position, action, seed, r, policy, sharpen, block=None):
    """The rollout kernel's twin, a plain Python loop: determinisation r from stream (seed, r, 0)
    (sharpened per other seat in seat order), the action applied, then each decision asked of
    the policy (random draws from stream (seed, r, 1 + seat)), and with a value model ``block``
    each draw's luck added up; (payoff, won, lost, units, the player's luck)."""
    root = root_key(seed)
    rules = position.rules.to_array()
    rng = np.zeros(4, dtype=np.uint64)
    stream_state(root, r, 0, rng)
    s = np.zeros(L.N_STATE, dtype=np.int64)
    assert determinise(position.observation(), rng, s)
    for p in range(3):
        if p != position.seat and sharpen:
            sharpen_hand(s, p, rng, sharpen)
    rngs = np.zeros((3, 4), dtype=np.uint64)
    for p in range(3):
        stream_state(root, r, 1 + p, rngs[p])
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    work = E.new_engine_workspace()
    ev, ev_n = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64)
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    params = np.array(EXPERT_DEFAULTS, dtype=np.float64)
    luck, tab = np.zeros(3), new_luck_scratch()
    if block is not None:
        work[E.EW_CHANCE] = E.CHANCE_PAUSE
    assert E.apply(s, action, rules, mask, work, ev, ev_n)
    while s[L.S_PHASE] != L.PH_OVER:
        if s[L.S_PHASE] == L.PH_DRAW:
            draw_luck(s, rules, mask, work, tab, block, luck)
            E.advance(s, rules, mask, work, ev, ev_n)
            continue
        p = int(s[L.S_PLAYER])
        E.legal_mask(s, rules, mask, work)
        a = expert_state(s, p, mask, params, rules, pwork) if policy == "expert" else random_act(mask, rngs[p])
        assert E.apply(s, int(a), rules, mask, work, ev, ev_n)
    me, winner = position.seat, int(s[L.S_WINNER])
    return (float(s[L.S_PAYOFF + me]), float(winner == me), float(winner >= 0 and winner != me),
            float(s[L.S_UNITS]) if winner == me else 0.0, float(luck[me]))


@pytest.mark.parametrize(("policy", "sharpen", "luck"), [("expert", 20, False), ("random", 0, True)])
def test_rollout_kernel_matches_a_plain_python_loop(logged, policy, sharpen, luck):
    """The same numbers, rollout by rollout.  With ``random`` most rollouts end in 穿牌, so the luck
    (which follows every state the draws meet) is what shows a policy stream keyed wrongly."""
    _, decisions = logged
    spec = parse_policy(policy)
    block = value_model_for(True, 11).block if luck else None
    lucky = 0
    for d in decisions[3:40:9]:
        position = d.position
        legal = position.legal_actions()
        out = rollouts(position.observation(), legal, [True] * len(legal), 5, 3, 11, spec, position.rules, block,
                       sharpen=sharpen)
        for i, action in enumerate(legal):
            for j in range(3):
                plain = _plain_rollout(position, action, 11, 5 + j, policy, sharpen, block)
                assert tuple(out[i, j, :4]) == plain[:4]
                assert out[i, j, 4] == pytest.approx(plain[4], abs=1e-9) and out[i, j, 5] == 0.0
                lucky += out[i, j, 4] != 0.0
    assert (lucky > 20) if luck else (lucky == 0)


def test_the_confirmation_measures_apart_from_the_race(logged):
    """The reported estimates come from fresh determinisations (numbers from CONFIRM_FIRST), as
    many as each action raced: the race's best then no longer always beats every other action.
    Catches a confirmation that re-reads the race's rollouts (the winner's curse back) or that
    plays other counts than the race's."""
    from simkit.policies.registry import parse_policy
    from simkit.runner.rollout import OUT_PAYOFF, rollouts
    from simkit.studies.analyze import CONFIRM_FIRST

    _, decisions = logged
    position = next(d.position for d in decisions if d.position.decision == "discard"
                    and len(d.position.legal_actions()) >= 6)
    beaten = 0
    for seed in range(6):
        raced = analyze_position(position, AnalyzeSpec(rollouts=64, seed=seed, race=False, confirm=False))
        assert all(a.difference <= 0 for a in raced.actions)  # the race's best is its argmax
        confirmed = analyze_position(position, AnalyzeSpec(rollouts=64, seed=seed, race=False))
        assert confirmed.confirmed and not raced.confirmed
        assert [a.action for a in confirmed.actions][0] == raced.best.action  # the race chose the best
        beaten += sum(a.difference > 0 for a in confirmed.actions)
    assert beaten >= 1
    a = confirmed.actions[1]
    fresh = rollouts(position.observation(), [a.action], [True], CONFIRM_FIRST, a.rollouts, 5,
                     parse_policy("expert"), position.rules, sharpen=confirmed.sharpen)
    assert a.raw_payoff == pytest.approx(float(fresh[0, :, OUT_PAYOFF].mean()), abs=1e-12)
