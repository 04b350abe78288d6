"""The review against a reference policy (simkit/studies/reference.py) and its calibration
against paired play (``simkit calibrate``).

* rollouts from a known state keep every hand and reorder the stock only: the kernel against a
  plain Python loop, rollout by rollout (a kernel that kept the true stock, reordered a hand, or
  let the policy decide where an action was forced, would differ);
* a seat that played the reference itself loses exactly 0 at every decision (common random
  numbers; a "policy decides" candidate that applied some action would not);
* on seeds no choice used, the predicted loss per deal agrees with the realised paired
  difference for random and greedy in seat 1 (the performance-difference identity: a review
  with a biased Q, e.g. the seat's own policy continuing instead of the reference, is off);
* nothing named in a log is imported; bad input is one line; any thread count, same numbers.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from helpers import one_line_error, run_cli

from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.errors import SimkitError
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.dispatch import builtin_act_state
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.replay import log_decisions, replay_jsonl
from simkit.rng import next_below, root_key, stream_state
from simkit.rules import RuleSet
from simkit.runner.rollout import OUT_PAYOFF, POLICY_DECIDES, rollouts
from simkit.specs.base import Execution
from simkit.specs.calibrate import CalibrateSpec
from simkit.specs.review import ReviewSpec
from simkit.studies.reference import Calibration, calibrate, review_against_reference


def _plain_known_rollout(state, seat, action, seed, r, policies, rules):
    """The known-state rollout's twin: stream (seed, r, 0) reorders the stock's remaining cards
    (Fisher-Yates from the end, as written out here), streams (seed, r, 1 + p) drive the seats,
    ``action`` is applied (or, for -1, the seat's policy decides), and the deal is played to its
    end one decision at a time; the seat's payoff."""
    root = root_key(seed)
    s = state.copy()
    rng = np.zeros(4, dtype=np.uint64)
    stream_state(root, r, 0, rng)
    stock = s[L.S_DECK + s[L.S_STOCK_POS]: L.S_DECK + 112]  # a view: shuffled in place
    for i in range(stock.size - 1, 0, -1):
        j = int(next_below(rng, i + 1))
        stock[i], stock[j] = stock[j], stock[i]
    rngs = np.zeros((3, 4), dtype=np.uint64)
    for p in range(3):
        stream_state(root, r, 1 + p, rngs[p])
    ids, params, _ = policy_arrays(parse_policies(policies))
    rules_array = rules.to_array()
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    work = E.new_engine_workspace()
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    obs = np.zeros(L.N_OBS, dtype=np.int64)
    E.new_deal_observation(obs)
    ev, ev_n = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64)
    E.legal_mask(s, rules_array, mask, work)
    if action != -1:
        assert E.apply(s, action, rules_array, mask, work, ev, ev_n)
    while s[L.S_PHASE] != L.PH_OVER:
        p = int(s[L.S_PLAYER])
        E.legal_mask(s, rules_array, mask, work)
        chosen = builtin_act_state(ids[p], s, obs, mask, params[p], rngs[p], rules_array, pwork)
        assert E.apply(s, int(chosen), rules_array, mask, work, ev, ev_n)
    return float(s[L.S_PAYOFF + seat])


@pytest.mark.parametrize("table", ["expert,random,expert", "random,greedy,random"])
def test_known_state_rollouts_match_a_plain_python_loop(table):
    lines = replay_jsonl(12, 1, table, seating="fixed").splitlines()
    decisions = [d for d in log_decisions(lines) if d.seat == 1 and len(d.position.legal_actions()) >= 2][:4]
    assert len(decisions) == 4
    rules = RuleSet()
    spread = set()
    for d in decisions:
        out = rollouts(d.position.observation(), [POLICY_DECIDES, d.action], [True, True], 3, 5, 21,
                       parse_policies(table), rules, known=d.state)
        for j in range(5):
            for i, action in enumerate((POLICY_DECIDES, d.action)):
                assert out[i, j, OUT_PAYOFF] == _plain_known_rollout(d.state, 1, action, 21, 3 + j, table, rules)
            spread.add(out[1, j, OUT_PAYOFF])
    assert len(spread) > 1  # the samples differ: the stock was reordered


def test_a_seat_that_played_the_reference_loses_exactly_nothing():
    lines = replay_jsonl(31, 2, "expert,expert,expert", seating="fixed").splitlines()
    review = review_against_reference(lines, 1, "expert", samples=16, seed=4)
    assert len(review.decisions) >= 3
    assert all(d.loss == 0.0 and d.se == 0.0 for d in review.decisions)
    assert review.total == 0.0 and review.total_interval() == (0.0, 0.0)


def test_the_review_is_a_pure_function_of_its_arguments():
    lines = replay_jsonl(8, 5, "expert,random,expert", seating="fixed").splitlines()
    one = review_against_reference(lines, 1, samples=24, seed=2, workers=1)
    two = review_against_reference(lines, 1, samples=24, seed=2, workers=2)
    assert one == two
    other = review_against_reference(lines, 1, samples=24, seed=3)
    assert other.total != one.total and any(d.loss != 0 for d in one.decisions)
    lo, hi = one.total_interval()
    assert lo < one.total < hi and hi - lo == pytest.approx(2 * 1.959964 * one.total_se, rel=1e-5)


@pytest.mark.parametrize(("policy", "deals", "seed", "worth"), [("random", 60, 860_301, False),
                                                                  ("greedy", 150, 860_302, True)])
def test_predicted_losses_agree_with_paired_play(policy, deals, seed, worth):
    """Seeds no choice used.  Measured: random 60 deals, greedy 150 deals (numbers in the
    assertion messages); the full-size runs are in docs/analysis.md.  A reviewed deal is worth
    more than a paired one (variance ratio > 1) is checked for greedy (3.4 at 600 deals), not
    for random: its ratio is 1.3-1.4 at 200-600 deals, and 60 deals' sample variances cannot
    separate that from 1 (measured here with the rollouts keyed by the deal: 0.97; the shared
    stock orders' keying had given 1.21; greedy 2.89)."""
    c = calibrate(CalibrateSpec(policy, seat=1, deals=deals, seed=seed, samples=32))
    p, r, bias = c.predicted_mean(), c.realised_mean(), c.bias()
    assert c.calibrated(), c.text()
    assert bias.lo <= 0.0 <= bias.hi, c.text()
    assert p.lo > 0.0, c.text()  # both lose against expert, and the review sees it
    if worth:
        assert c.variance_ratio() > 1.0, c.text()  # a reviewed deal tells more than a paired one


@pytest.mark.slow
def test_calibration_goals_of_issue_38():
    """≥ 100 deals with random and ≥ 300 with greedy in seat 1 (expert elsewhere, seats fixed),
    on seeds no choice used: each mean within the other's interval; random's review loss
    separated from expert's (exactly 0) and greedy's between.  The issue's "random >= 1.0" is a
    fact about the policies, not the review: a calibrated review reports what paired play says
    (measured here: random 0.792 [0.437, 1.148] predicted, 0.860 [0.266, 1.454] realised; on
    seed 31337001, 200 deals, 1.519 and 1.480), so its interval must reach 1.0."""
    random_ = calibrate(CalibrateSpec("random", seat=1, deals=100, seed=860_401, samples=64))
    greedy = calibrate(CalibrateSpec("greedy", seat=1, deals=300, seed=860_402, samples=64))
    for c in (random_, greedy):
        assert c.calibrated(), c.text()
    assert random_.predicted_mean().hi >= 1.0 and random_.predicted_mean().lo > 0.0, random_.text()
    assert random_.predicted_mean().estimate > greedy.predicted_mean().estimate > 0.0


def test_nothing_named_in_a_log_is_imported(tmp_path, monkeypatch):
    """A log whose deal line names a policy by import path (here a module that would write a
    file when imported, on the import path) is refused in one line before anything runs."""
    module = tmp_path / "booby.py"
    marker = tmp_path / "imported"
    module.write_text(f"open({str(marker)!r}, 'w').close()\ndef act(*a):\n    return 0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    lines = replay_jsonl(3, 0, "expert,expert,expert", seating="fixed").splitlines()
    for name in ("booby:act", "os:system"):
        header = json.loads(lines[0])
        header["policies"][2] = name
        with pytest.raises(SimkitError, match="not one of simkit's built-in policies") as caught:
            review_against_reference([json.dumps(header), *lines[1:]], 1, samples=4)
        assert "\n" not in str(caught.value)
    assert not marker.exists()


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"seat": 3}, "seat must be"), ({"samples": 1}, "samples must be"), ({"confidence": 1.5}, "confidence"),
    ({"reference": "nosuch"}, "unknown policy 'nosuch'"),
    ({"reference": "simkit.bench:greedy_by_import"}, "rollouts play built-in policies only"),  # the user's: why
    ({"reference": "learned"}, "no longer a built-in policy"),
])
def test_bad_arguments_are_one_line(kwargs, needle):
    lines = replay_jsonl(3, 0, "expert,greedy,expert", seating="fixed").splitlines()
    arguments = {"seat": 1, **kwargs}
    with pytest.raises(SimkitError, match=needle):
        review_against_reference(lines, **arguments)


def test_a_decision_log_without_the_deal_is_refused():
    with pytest.raises(SimkitError, match="needs a simkit replay log"):
        review_against_reference(['{"position": "seat=0", "chosen": "pass"}'], 0)


def test_cli_calibrate_writes_its_report_and_refuses_a_users_folder(tmp_path, capsys):
    from simkit.cli import main

    out = tmp_path / "cal"
    rc = main(["calibrate", "greedy", "--deals", "4", "--seed", "5", "--samples", "4", "--out", str(out), "--quiet"])
    assert rc == 0 and "realised - predicted" in capsys.readouterr().out
    data = json.loads((out / "calibration.json").read_text(encoding="utf-8"))
    assert data["deals"] == 4 and len(data["per_deal"]["realised"]) == 4
    assert math.isfinite(data["predicted"]["estimate"])
    assert (out / "calibration.png").stat().st_size > 0 and "# Calibration" in (out / "report.md").read_text("utf-8")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine", encoding="utf-8")
    rc, err = run_cli(["calibrate", "greedy", "--deals", "4", "--out", str(mine)], capsys)
    one_line_error(rc, err, "--out")
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_review_keeps_its_confidence_level_and_leads_with_the_reference(tmp_path):
    """A review at 90 %: every decision's interval is at 90 %, the total's is read back at 90 %
    (reading them as 95 % intervals made it 1.19 times too narrow) and review.md says 90 %; a
    replay log's review opens with the loss against the reference."""
    from simkit.studies.review import (
        read_decision_log,
        review_decisions,
        review_log_against_reference,
        review_table,
        write_review_report,
    )

    log = tmp_path / "deal.jsonl"
    log.write_text(replay_jsonl(9, 2, "expert,random,expert", seating="fixed"), encoding="utf-8")
    review = review_decisions(read_decision_log(log), ReviewSpec(seat=1, rollouts=32, seed=1, confidence=0.9))
    assert review.confidence == 0.9
    check = [d for d in review.decisions if d.loss_hi > d.loss_lo]
    assert check
    z90 = 1.6448536
    se = math.sqrt(sum(((d.loss_hi - d.loss_lo) / (2 * z90)) ** 2 for d in check))
    lo, hi = review.total_interval()
    assert (hi - lo) / 2 == pytest.approx(z90 * se, rel=1e-6)
    lo95, hi95 = review.total_interval(0.95)
    assert (hi95 - lo95) / 2 == pytest.approx(1.959964 * se, rel=1e-6)
    reference = review_log_against_reference(log, ReviewSpec(seat=1, samples=16, seed=1, confidence=0.9))
    assert reference is not None and reference.confidence == 0.9 and reference.total > 0
    review = dataclasses.replace(review, reference=reference)
    text = review_table(review)  # one headline: the result, luck and skill against expert, at 90 %
    assert text.startswith("seat 1: result ") and "against expert (90%)" in text.split("\n\n")[0]
    path = write_review_report(review, tmp_path / "out")
    text = path.read_text(encoding="utf-8")
    assert "90% interval" in text and "95%" not in text and "## Against the reference" in text
    data = json.loads((tmp_path / "out" / "review.json").read_text(encoding="utf-8"))
    assert data["summary"]["reference_loss"] == pytest.approx(reference.total) and data["confidence"] == 0.9
    typed = tmp_path / "typed.jsonl"
    typed.write_text(json.dumps({"position": review.decisions[0].analysis.position.text(), "chosen": "pass"}) + "\n",
                     encoding="utf-8")
    assert review_log_against_reference(typed, ReviewSpec(seat=1)) is None  # positions only: no true cards
    assert review_log_against_reference(log, ReviewSpec(seat=1, reference=None)) is None  # none asked for


def test_the_review_measures_a_loss_on_determinisations_the_choice_never_saw(monkeypatch):
    """The best action is chosen by the analysis's race; the loss is the analysis's confirmation,
    measured on fresh determinisations (the winner's curse: measured on the choosing samples, the
    issue found the total 8.96 where fresh rollouts gave 5.49 ± 0.71).  Catches a review that
    reads the race's own margins (``confirm=False``) or a loss of the wrong sign."""
    from simkit.studies import review as review_module

    calls = []
    original = review_module.analyze_position

    def spy(position, *args, **kwargs):
        result = original(position, *args, **kwargs)
        calls.append(result)
        return result

    monkeypatch.setattr(review_module, "analyze_position", spy)
    lines = replay_jsonl(9, 2, "expert,random,expert", seating="fixed").splitlines()
    decisions = review_module.parse_decision_log(lines)
    review = review_module.review_decisions(decisions, ReviewSpec(seat=1, rollouts=32, seed=3))
    assert len(calls) == len(review.decisions) and all(c.confirmed for c in calls)
    changed = [(d, c) for d, c in zip(review.decisions, calls) if d.chosen != d.pick]
    assert changed
    for d, analysis in changed:
        chosen = next(a for a in analysis.actions if a.name == d.chosen)
        assert d.pick == analysis.best.name and d.pick_payoff == analysis.best.payoff
        assert d.loss == pytest.approx(analysis.best.payoff - chosen.payoff, abs=1e-9)
        assert d.loss == pytest.approx(-chosen.difference, abs=1e-9)


def test_a_log_of_a_user_policy_is_reviewed_without_the_reference_loss(tmp_path, capsys):
    """The reference loss continues with the table's policies, which must be built-in: for a log
    naming another policy the review goes on without it (a note says why), before any rollout;
    a reference that is not built-in is refused in one line."""
    lines = replay_jsonl(3, 0, "expert,greedy,expert", seating="fixed").splitlines()
    header = json.loads(lines[0])
    header["policies"][0] = "mymodule:policy"
    log = tmp_path / "deal.jsonl"
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    from simkit.cli import main

    assert main(["review", str(log), "--seat", "1", "--rollouts", "8", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "simkit: note: no loss against expert" in captured.err and "mymodule:policy" in captured.err
    assert "total loss against its picks" in captured.out and "against expert (" not in captured.out
    rc, err = run_cli(["review", str(log), "--seat", "1", "--reference", "os:system"], capsys)
    one_line_error(rc, err, "os:system")


def test_a_deals_interval_covers_a_fresh_re_evaluation():
    """The interval is honest: 30 greedy deals (seed 860_501), each reviewed with 32 stock orders
    per decision and re-evaluated on another seed with 512; the first's 95 % interval covers the
    fresh total in at least 80 % of them (about 94 % expected; a standard error off by sqrt(K),
    or decisions' errors not added in quadrature, covers far less)."""
    covered = counted = 0
    for deal in range(30):
        lines = replay_jsonl(860_501, deal, "expert,greedy,expert", dealer=deal % 3, seating="fixed").splitlines()
        first = review_against_reference(lines, 1, samples=32, seed=1)
        if first.total_se == 0.0:
            continue
        fresh = review_against_reference(lines, 1, samples=512, seed=2)
        lo, hi = first.total_interval()
        covered += lo <= fresh.total <= hi
        counted += 1
    assert counted >= 15 and covered / counted >= 0.8, (covered, counted)


def _relabelled(lines, **changes):
    """The log with its deal line's fields changed (``deal``, ``seed``): the same cards and play."""
    return [json.dumps(dict(json.loads(lines[0]), **changes)), *lines[1:]]


def test_each_deal_draws_rollouts_of_its_own():
    """Issue 50 item 5: decision k's rollouts are keyed by (review seed, the deal, k), the deal
    being its log's seed and deal number.  The same cards and play under another deal number or
    another seed (one review seed) give other estimates (measured: 9, 4 and 7 of the seat's 15
    decisions differ; at the others every rollout paid 0 or the same); the same log reviewed
    again gives the same review.  With the deal left out of the key, decision k of every deal
    reviewed with one seed reuses the same stock orders (the old keying: every relabelled review
    equals the first); a log that names no deal is refused, never keyed by a default."""
    lines = replay_jsonl(8, 5, "expert,random,expert", seating="fixed").splitlines()
    one = review_against_reference(lines, 1, samples=8, seed=2)
    assert review_against_reference(_relabelled(lines), 1, samples=8, seed=2) == one  # determinism
    for changes in ({"deal": 6}, {"seed": 9}, {"seed": 5, "deal": 8}):
        other = review_against_reference(_relabelled(lines, **changes), 1, samples=8, seed=2)
        assert [d.index for d in other.decisions] == [d.index for d in one.decisions]
        differ = [a.index for a, b in zip(one.decisions, other.decisions)
                  if (a.value, a.chosen_value) != (b.value, b.chosen_value)]
        assert len(differ) >= 3, (changes, differ)
    for bad in ({"deal": None}, {"seed": -1}, {"deal": "5"}):
        with pytest.raises(SimkitError, match="names no seed and deal number") as caught:
            review_against_reference(_relabelled(lines, **bad), 1, samples=4)
        assert "\n" not in str(caught.value)


def test_a_calibrated_deal_is_a_function_of_its_number_not_of_its_batch():
    """Deal N of a calibration is keyed by N: deals 1 and 2 of a run from deal 0 equal the same
    deals of a run from deal 1, on two threads.  Keyed by the deal's place in the run (k), or by
    the thread, they would differ."""
    whole = calibrate(CalibrateSpec("random", seat=1, deals=3, seed=860_601, samples=4))
    later = calibrate(CalibrateSpec("random", seat=1, deals=2, seed=860_601, samples=4, first_deal=1),
                      Execution(workers=2))
    assert whole.predicted[1:].tolist() == later.predicted.tolist()
    assert whole.predicted_se[1:].tolist() == later.predicted_se.tolist()
    assert whole.realised[1:].tolist() == later.realised.tolist()
    assert whole.decisions[1:].tolist() == later.decisions.tolist() and whole.decisions.sum() > 0
    # CPU is measured per deal, for both plays, and the cost per decision is the difference over
    # the seat's decisions (random in the seat is cheaper than expert there: it may be below 0)
    assert later.cpu_played.shape == later.cpu_reference.shape == (2,) and (later.cpu_played > 0).all()
    expected = (later.cpu_played.sum() - later.cpu_reference.sum()) / later.decisions.sum()
    assert later.cpu_per_decision() == pytest.approx(expected)
    back = Calibration.from_dict(json.loads(json.dumps(later.to_dict())))
    assert back.to_dict() == later.to_dict() and back.cpu_played.tolist() == later.cpu_played.tolist()


def test_an_experiment_calibration_is_run_once_and_read_back(tmp_path, monkeypatch):
    """A ``[[calibration]]`` entry of an experiment file: its row in the report (gain = minus the
    realised loss), stored under the data folder and read back by a second run instead of being
    played again (the stored identity matches); a changed entry plays again."""
    from simkit.experiment import run as experiment_run
    from simkit.experiment.run import run_experiment

    spec = tmp_path / "cal.toml"
    spec.write_text('name = "cal"\nseed = 860701\n[[calibration]]\npolicy = "random"\ndeals = 2\nsamples = 4\n')
    report = run_experiment(spec, reports=tmp_path / "reports", data=tmp_path / "data", execution=Execution(quiet=True))
    text = report.read_text(encoding="utf-8")
    direct = calibrate(CalibrateSpec("random", seat=1, deals=2, seed=860_701, samples=4))
    gain = -direct.realised.mean()
    assert f"| random | expert | 1 | 860701 | 2 | {gain:+.3f} [" in text
    assert (report.parent / "calibration_0.png").is_file()
    calls = []
    monkeypatch.setattr(experiment_run, "calibrate", lambda *a, **k: calls.append(1) or direct)
    run_experiment(spec, reports=tmp_path / "reports", data=tmp_path / "data", execution=Execution(quiet=True))
    assert calls == []  # read back
    spec.write_text('name = "cal"\nseed = 860701\n[[calibration]]\npolicy = "random"\ndeals = 2\nsamples = 5\n')
    run_experiment(spec, reports=tmp_path / "reports", data=tmp_path / "data", execution=Execution(quiet=True))
    assert calls == [1]  # another entry: played again


@pytest.mark.parametrize("extra", ["last", "end", "nowin"])
def test_nothing_may_follow_the_end_line(extra, tmp_path, capsys):
    """A replay log ends with its end line: a line after it (a repeated move, a second end, a
    stray event) is refused in one line naming it, by the log reader and by ``simkit review``;
    a reader that stopped at the end line would review the log as if the line were not there."""
    from simkit.replay import LogError

    lines = replay_jsonl(3, 0, "expert,greedy,expert", seating="fixed").splitlines()
    assert json.loads(lines[-1])["event"] == "end"
    tail = {"last": lines[-2], "end": lines[-1],
            "nowin": json.dumps({"event": "nowin", "player": 1, "reason": "passed", "card": "RJ"})}[extra]
    bad = [*lines, tail]
    assert len(log_decisions(lines)) > 0
    with pytest.raises(LogError, match=rf"^line {len(bad)}: the deal has ended, but the log goes on with") as caught:
        log_decisions(bad)
    assert "\n" not in str(caught.value)
    log = tmp_path / "deal.jsonl"
    log.write_text("\n".join(bad) + "\n", encoding="utf-8")
    rc, err = run_cli(["review", log, "--seat", "1", "--rollouts", "2", "--samples", "2", "--quiet"], capsys)
    one_line_error(rc, err, f"line {len(bad)}", "the deal has ended")


def _payoffs(review):
    """Every reviewed decision's estimates, action by action (the analyses' confirmed payoffs)."""
    return [tuple((a.action, a.payoff) for a in d.analysis.actions) for d in review.decisions]


def test_the_best_action_analyses_are_keyed_by_the_deal(monkeypatch):
    """Issue 50: the best-action part of ``simkit review`` analyses each decision from the
    deal's own seed (:func:`simkit.rng.deal_review_seed` of ``--seed`` and the log's deal), so
    two deals reviewed with one seed draw independent determinisations, as intervals over deals
    and logs assume.  Two logs of the same cards differing only in the deal number give other
    estimates (catches a key without the deal number, or the bare ``--seed`` of before); the
    same log reviewed twice gives the same review (catches a key that is not a pure function of
    the log and the seed)."""
    from simkit.studies.review import parse_decision_log, review_decisions

    lines = replay_jsonl(9, 2, "expert,random,expert", seating="fixed").splitlines()
    header = json.loads(lines[0])
    renumbered = [json.dumps(dict(header, deal=header["deal"] + 1))] + lines[1:]
    one, other = parse_decision_log(lines)[:8], parse_decision_log(renumbered)[:8]
    assert [(d.position, d.action) for d in one] == [(d.position, d.action) for d in other]  # the same cards
    assert one[0].deal == (9, 2) and other[0].deal == (9, 3)

    def review(decisions):
        return review_decisions(decisions, ReviewSpec(seat=1, rollouts=8, seed=3))

    first = review(one)
    assert len(first.decisions) >= 2
    assert _payoffs(first) != _payoffs(review(other))
    again = review(one)
    assert _payoffs(again) == _payoffs(first) and again.to_frame().equals(first.to_frame())


def test_the_decisions_of_one_deal_are_analysed_on_their_own_determinisations(monkeypatch):
    """Each decision's analysis (race and confirmation) uses determinisations no other decision
    of the deal uses (``index * rollouts ..`` of the deal's seed), so the decisions' errors are
    independent, as the review's total interval (standard errors in quadrature) assumes.
    Catches a key without the decision's number (every decision on determinisations 0 ..) or
    ranges that overlap (a stride below ``rollouts``)."""
    from simkit.studies import analyze as analyze_module
    from simkit.studies.review import parse_decision_log, review_decision, review_decisions

    used = []
    original = analyze_module.play_rollouts

    def spy(obs, chosen, alive, first, size, seed, *args, **kwargs):
        used.append((seed, int(first), int(size)))
        return original(obs, chosen, alive, first, size, seed, *args, **kwargs)

    monkeypatch.setattr(analyze_module, "play_rollouts", spy)
    lines = replay_jsonl(9, 2, "expert,random,expert", seating="fixed").splitlines()
    decisions = parse_decision_log(lines)[:8]
    review = review_decisions(decisions, ReviewSpec(seat=1, rollouts=8, seed=3))
    assert len(review.decisions) >= 2 and len({seed for seed, _, _ in used}) == 1
    drawn = [(seed, j) for seed, first, size in used for j in range(first, first + size)]
    assert len(set(drawn)) == len(drawn), "two analyses of one deal drew the same determinisations"
    monkeypatch.setattr(analyze_module, "play_rollouts", original)
    d = next(d for d in decisions if d.position.seat == 1 and len(d.position.legal_actions()) >= 2)
    settings = ReviewSpec(seat=1, rollouts=8, seed=3)
    moved = review_decision(settings, dataclasses.replace(d, index=d.index + 1))
    assert _payoffs(dataclasses.replace(review, decisions=(moved,))) != _payoffs(
        dataclasses.replace(review, decisions=(review_decision(settings, d),)))


UNREACHABLE_SEARCH = "mc:rollouts=2:race=0:z=1e9:base=1"  # searches, never leaves expert's choice


def test_a_search_reference_decides_itself_and_its_base_rolls_out(monkeypatch):
    """A search reference (mc's family) decides the reviewed decision itself and expert (its base)
    plays its seat, and any search seat of the log, in the rollouts.  A search that can never
    leave expert's choice must give exactly expert's review: the same losses, decision by
    decision (a stand-in other than the base, or rollouts seeded apart, would differ); and the
    rollouts never run a search (the table handed to them holds no mc)."""
    rules = RuleSet()
    lines = replay_jsonl(860_801, 4, parse_policies(f"expert,greedy,{UNREACHABLE_SEARCH}"), rules, dealer=1,
                         seating="fixed").splitlines()
    against_expert = review_against_reference(lines, 1, "expert", samples=8, seed=3)
    from simkit.studies import reference as R

    tables = []
    real = R.rollouts

    def spy(*args, **kwargs):
        tables.append(tuple(p.name for p in args[6]))
        return real(*args, **kwargs)

    monkeypatch.setattr(R, "rollouts", spy)
    against_search = review_against_reference(lines, 1, UNREACHABLE_SEARCH, samples=8, seed=3)
    assert [r.loss for r in against_search.decisions] == [r.loss for r in against_expert.decisions]
    assert len(against_search.decisions) > 3 and any(r.loss != 0 for r in against_search.decisions)
    assert tables and set(tables) == {("expert", "expert", "expert")}
    assert against_search.reference.startswith("mc")


def test_a_search_reference_takes_the_searchs_own_choice():
    """A search that does search (every decision, a few determinisations, a low bar to leave
    expert's choice) makes choices of its own: at some decision of a greedy seat its review differs
    from expert's, and the review is the same when run again (its determinisations are keyed by
    the deal and the decision)."""
    lines = replay_jsonl(860_802, 5, parse_policies("expert,greedy,expert"), RuleSet(), dealer=2,
                         seating="fixed").splitlines()
    cheap = "mc:rollouts=8:race=0:z=0.1:search_mode=0:focus=0:base=1"
    first = review_against_reference(lines, 1, cheap, samples=4, seed=5)
    again = review_against_reference(lines, 1, cheap, samples=4, seed=5)
    expert = review_against_reference(lines, 1, "expert", samples=4, seed=5)
    assert [r.loss for r in first.decisions] == [r.loss for r in again.decisions]
    assert [r.loss for r in first.decisions] != [r.loss for r in expert.decisions]
