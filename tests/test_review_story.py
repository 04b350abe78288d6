"""One story per decision and one headline (issue 52, items 1 and 2).

* The best a review names is the action of the highest payoff shown beside it, also where the
  analysis's race picked another (selection and confirmation disagree); a chosen action whose
  paired interval of difference to that best holds 0 is "as good as the best" and nothing else
  is named; the losses stay measured against the race's pick (unbiased totals).
* The headline: result = luck + cards dealt - skill loss; the result is the log's payoff, the
  luck the draws' corrections the simulator computes for the same deal; the agreement counts
  the decisions where the seat took the reference's action; the bots' table is shown only
  under its own settings.
* ``--min-loss`` says how many decisions it leaves out.

Most tests build an analysis by hand (no rollout); those marked so play and review real deals.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from simkit.engine.position import action_text, parse_position
from simkit.glossary import display_width
from simkit.studies import review as review_module
from simkit.studies.analyze import ActionEstimate, PositionAnalysis, ShownRow, analysis_verdict, shown_verdict
from simkit.studies.headline import Headline, played_like, played_like_table, ratio_interval
from simkit.specs.review import ReviewSpec
from simkit.studies.review import GameReview, LogDecision, review_decision, review_table

POSITION = parse_position("seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; "
                          "card=RJ; source=discard; from=0; stock=21")
PASS, PENG, ZHAN = 29, 30, 32


def _estimate(action: int, payoff: float, difference: tuple[float, float, float],
              vs_top: tuple[float, float, float], status: str) -> ActionEstimate:
    nan = math.nan
    return ActionEstimate(action=action, name=action_text(action, POSITION), rollouts=512, payoff=payoff,
                          payoff_lo=payoff - 0.3, payoff_hi=payoff + 0.3, raw_payoff=payoff, p_win=0.3, p_win_lo=0.25,
                          p_win_hi=0.35, p_loss=0.2, p_loss_lo=0.15, p_loss_hi=0.25, win_units=nan, win_units_lo=nan,
                          win_units_hi=nan, difference=difference[0], difference_lo=difference[1],
                          difference_hi=difference[2], status=status, crn_factor=nan, luck_factor=nan,
                          vs_top=vs_top[0], vs_top_lo=vs_top[1], vs_top_hi=vs_top[2])


def disagreeing_analysis(zhan_vs_top: tuple[float, float, float] = (-0.2, -0.5, 0.1)) -> PositionAnalysis:
    """The race picked pass (first, status best), but on the fresh determinisations peng shows
    the higher payoff: +4.291 against pass's +3.938 (the issue's hint), by +0.353 [+0.1, +0.6]."""
    actions = (
        _estimate(PASS, 3.938, (0.0, 0.0, 0.0), (-0.353, -0.6, -0.1), "best"),
        _estimate(PENG, 4.291, (0.353, 0.1, 0.6), (0.0, 0.0, 0.0), "equal"),
        _estimate(ZHAN, 4.091, (0.15, -0.2, 0.5), zhan_vs_top, "open"),
    )
    return PositionAnalysis(position=POSITION, policy="expert", seed=0, rollouts=512, batch=64, confidence=0.95,
                            luck=None, determinisations=512, actions=actions, confirmed=True)


def reviewed(monkeypatch, chosen: int, analysis: PositionAnalysis | None = None):
    analysis = analysis or disagreeing_analysis()
    monkeypatch.setattr(review_module, "analyze_position", lambda *a, **k: analysis)
    return review_decision(ReviewSpec(seat=1), LogDecision(3, 7, POSITION, chosen))


# ---------------------------------------------------------------------------- the one rule


def test_the_best_named_is_the_top_shown_value_of_the_rows():
    rows = [ShownRow("打 RS", 3.938, -0.5, 0.1), ShownRow("打 WX", 4.291, 0.0, 0.0), ShownRow("打 WS", 4.257, -0.2, 0.1)]
    v = shown_verdict(rows, chosen="打 RS")
    assert v.best == "打 WX" and v.best_value == 4.291
    assert v.best_value == max(r.value for r in rows)
    # the chosen one's interval of difference to the best holds 0: as good as the best
    assert v.as_good_as_best and not v.chosen_is_best
    assert v.as_good == ("打 WX", "打 RS", "打 WS")
    # an interval wholly below 0 separates it
    v = shown_verdict([("a", 1.0, 0.0, 0.0), ("b", 0.9, -0.502, -0.001)], chosen="b")
    assert v.best == "a" and not v.as_good_as_best and v.as_good == ("a",)
    # an interval touching 0 from below does not ("holds 0": lo <= 0 <= hi)
    assert shown_verdict([("a", 1.0, 0.0, 0.0), ("b", 0.9, -0.5, 0.0)], chosen="b").as_good_as_best
    # not measured (NaN): the evidence does not separate it
    assert shown_verdict([("a", 1.0), ("b", 0.9)], chosen="b").as_good_as_best
    # the best itself; a NaN value is never the best
    v = shown_verdict([("a", math.nan), ("b", -2.0, 0.0, 0.0)], chosen="b")
    assert v.best == "b" and v.chosen_is_best and v.as_good_as_best
    with pytest.raises(ValueError):
        shown_verdict([("a", 1.0)], chosen="c")


def test_the_analysis_verdict_follows_the_shown_payoffs_not_the_race():
    analysis = disagreeing_analysis()
    assert analysis.best.name == "pass"  # the race's pick
    assert analysis.shown_best.name == "peng" == max(analysis.actions, key=lambda a: a.payoff).name
    v = analysis_verdict(analysis, PASS)
    assert v.best == "peng" and v.best_action == PENG and not v.as_good_as_best
    assert (v.difference, v.difference_lo, v.difference_hi) == (-0.353, -0.6, -0.1)
    assert analysis.verdict(ZHAN).as_good_as_best


# ---------------------------------------------------------------------------- a reviewed decision


def test_a_chosen_move_that_beat_the_pick_is_the_best_with_a_negative_loss(monkeypatch):
    d = reviewed(monkeypatch, PENG)
    assert d.best == d.chosen == "peng" and d.best_payoff == 4.291 >= d.chosen_payoff
    assert d.pick == "pass" and d.pick_payoff == 3.938
    # the loss stays the unbiased one, against the pick, measured apart from it
    assert (d.loss, d.loss_lo, d.loss_hi) == (-0.353, -0.6, -0.1)
    assert d.as_good_as_best and not d.error and d.verdict == "the best"


def test_the_pick_chosen_under_a_higher_shown_payoff_names_that_best(monkeypatch):
    d = reviewed(monkeypatch, PASS)
    assert d.best == "peng" and d.best_payoff > d.chosen_payoff and d.loss == 0.0
    assert not d.as_good_as_best and d.verdict == "best: peng"
    assert (d.vs_best, d.vs_best_lo, d.vs_best_hi) == (-0.353, -0.6, -0.1)


def test_overlapping_intervals_say_as_good_as_the_best_and_name_no_other(monkeypatch):
    d = reviewed(monkeypatch, ZHAN)
    assert d.best == "peng" and d.as_good_as_best and d.verdict == "as good as the best"
    assert d.loss == pytest.approx(-0.15)
    # separated from the best: the best is named and a loss excluding 0 would be an error
    analysis = disagreeing_analysis(zhan_vs_top=(-0.6, -0.9, -0.3))
    worse = dataclasses_replace_action(analysis, ZHAN, payoff=3.6, difference=(-0.4, -0.7, -0.1))
    d = reviewed(monkeypatch, ZHAN, worse)
    assert not d.as_good_as_best and d.verdict == "best: peng" and d.error and d.loss == pytest.approx(0.4)


def dataclasses_replace_action(analysis: PositionAnalysis, action: int, payoff: float,
                               difference: tuple[float, float, float]) -> PositionAnalysis:
    import dataclasses

    actions = tuple(dataclasses.replace(a, payoff=payoff, difference=difference[0], difference_lo=difference[1],
                                        difference_hi=difference[2]) if a.action == action else a
                    for a in analysis.actions)
    return dataclasses.replace(analysis, actions=actions)


def _game(monkeypatch) -> GameReview:
    decisions = tuple(reviewed(monkeypatch, a) for a in (PENG, PASS, ZHAN))
    import dataclasses

    decisions = tuple(dataclasses.replace(d, index=k) for k, d in enumerate(decisions))
    return GameReview(seat=1, policy="expert", seed=0, rollouts=512, luck=None, decisions=decisions)


def test_review_json_gives_the_shown_best_the_pick_and_as_good_as_best(monkeypatch):
    game = _game(monkeypatch)
    data = json.loads(game.to_json())
    for row in data["decisions"]:
        payoffs = {a.name: a.payoff for a in disagreeing_analysis().actions}
        assert row["best"] == max(payoffs, key=payoffs.get) and row["best_payoff"] == max(payoffs.values())
        assert row["best_payoff"] >= row["chosen_payoff"] and row["pick"] == "pass"
        assert set(row) >= {"as_good_as_best", "vs_best", "vs_best_lo", "vs_best_hi", "pick_payoff"}
    assert [row["as_good_as_best"] for row in data["decisions"]] == [True, False, True]
    s = data["summary"]
    assert s["as_good_as_best"] == 2 and s["total_loss"] == pytest.approx(-0.353 + 0.0 - 0.15)
    h = s["headline"]  # no reference review: the analysis's loss and the share as good as the best
    assert h["source"] == "analysis" and h["agreement"]["agree"] == 2 and h["decisions"] == 3
    assert h["skill"]["loss"] == pytest.approx(s["total_loss"])
    assert h["skill"]["loss_per_decision"] == pytest.approx(s["total_loss"] / 3)
    assert h["played_like"]["bots"] == [] and "not available" in h["played_like"]["note"]


def _rows(text: str) -> list[int]:
    """The decision numbers of a review table's rows (after its header line)."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.split()[:2] == ["#", "kind"])
    return [int(line[:4]) for line in lines[start + 1:] if line[:4].strip().isdigit()]


def test_min_loss_says_how_many_decisions_it_leaves_out(monkeypatch):
    game = _game(monkeypatch)
    text = review_table(game, min_loss=0.0)  # losses -0.353, 0, -0.15: two below 0
    assert "1 of 3 decisions shown: 2 with a loss below --min-loss 0 left out" in text
    assert _rows(text) == [1]
    everything = review_table(game, min_loss=-1e9)
    assert "left out" not in everything and _rows(everything) == [0, 1, 2]
    assert "as good as the best" in everything and "best: 碰" in everything
    assert all(display_width(line) <= 80 for line in everything.splitlines()), everything


# ---------------------------------------------------------------------------- the headline


def test_the_headline_splits_the_result_into_luck_cards_dealt_and_skill():
    h = Headline(seat=0, source="reference", reference="expert", decisions=4, loss=1.4, loss_lo=0.2, loss_hi=2.6,
                 agree=3, result=3.0, luck=2.1)
    assert h.result == pytest.approx(h.luck + h.dealt - h.loss) and h.dealt == pytest.approx(2.3)
    assert h.per_decision == pytest.approx((0.35, 0.05, 0.65)) and h.agreement == 0.75
    text = "\n".join(h.lines())
    assert "seat 0: result +3.000 牌\n  = luck +2.100 + cards dealt +2.300 - skill loss 1.400\n" in text
    assert all(display_width(line) <= 80 for line in h.lines())


def test_ratio_interval_is_the_ratio_with_a_delta_method_interval():
    r, lo, hi = ratio_interval([2.0, 0.0, 4.0], [2, 2, 2])
    assert r == pytest.approx(1.0)
    e = np.array([2.0, 0.0, 4.0]) - r * 2
    half = 1.959963984540054 * math.sqrt(3 / 2 * float((e ** 2).sum())) / 6
    assert (lo, hi) == pytest.approx((r - half, r + half))
    assert math.isnan(ratio_interval([1.0], [3])[1])


def test_the_bots_table_is_shown_under_its_own_settings_only():
    table = played_like_table()
    assert table is not None and table["settings"] == {"reference": "expert", "samples": 64, "rules": "default"}
    assert [b["bot"] for b in table["bots"]] == ["random", "greedy", "patient", "expert", "search"]
    assert table["deals"] >= 10 and "experiments/played_like.py" in table["command"] and "seed" in table
    expert = next(b for b in table["bots"] if b["bot"] == "expert")
    assert expert["loss_per_decision"] == 0.0 and expert["agreement"] == 1.0  # the reference itself
    rows, note = played_like("expert", 64, True)
    assert len(rows) == 5 and note is None
    for args in (("greedy", 64, True), ("expert", 32, True), ("expert", 64, False)):
        rows, note = played_like(*args)
        assert rows == [] and note.startswith("not available for these settings")


def _reference(samples: int, losses=(0.5, 0.0, 1.0), agree=(False, True, False)):
    from simkit.studies.reference import ReferenceLoss, ReferenceReview

    rows = tuple(ReferenceLoss(index=k, line=k + 2, kind="claim", chosen="pass", value=1.0, chosen_value=1.0 - loss,
                               loss=loss, se=0.1 * (loss != 0.0), lo=loss - 0.2, hi=loss + 0.2, samples=samples,
                               reference_action="pass" if same else "peng")
                 for k, (loss, same) in enumerate(zip(losses, agree)))
    return ReferenceReview(seat=1, reference="expert", table=("expert", "expert", "expert"), seed=0, samples=samples,
                           confidence=0.95, decisions=rows, result=-2.0, luck=-1.25)


def test_a_reference_headline_holds_the_bots_under_the_tables_settings(monkeypatch):
    import dataclasses

    game = dataclasses.replace(_game(monkeypatch), reference=_reference(64))
    h = game.headline()
    assert h.source == "reference" and h.loss == pytest.approx(1.5) and h.agree == 1 and h.decisions == 3
    assert h.result == pytest.approx(h.luck + h.dealt - h.loss) and h.dealt == pytest.approx(-2.0 + 1.25 + 1.5)
    assert [b["bot"] for b in h.bots] == ["random", "greedy", "patient", "expert", "search"]
    assert all("per_deal" not in b for b in h.bots)  # the table's per-deal figures stay in the file
    text = review_table(game, min_loss=-1e9)
    head = text.split("\n\n")[0]  # one headline, first; the analysis's totals below, labelled
    assert "played like" in head and "closest: " in head and "total loss" not in head
    assert text.count("skill loss") == 1 and "the analysis (rollouts" in text.split("\n\n")[1]
    assert all(display_width(line) <= 80 for line in text.splitlines()), text
    data = json.loads(game.to_json())["summary"]["headline"]
    assert data["result"] == -2.0 and data["luck"] == -1.25 and data["agreement"]["share"] == pytest.approx(1 / 3)
    assert data["skill"]["loss_per_decision"] == pytest.approx(0.5) and len(data["played_like"]["bots"]) == 5
    other = dataclasses.replace(game, reference=_reference(16)).headline()
    assert other.bots == () and other.bots_note.startswith("not available for these settings")


# ---------------------------------------------------------------------------- played and reviewed (kernels)


def test_a_logs_luck_is_the_simulators_luck_of_the_same_deal():
    """log_luck follows a log's moves and draws; the simulator computes the same deal's luck in
    its kernels: they must agree (a missed draw or a correction taken after the card would not)."""
    from simkit.policies.registry import parse_policies
    from simkit.replay import replay_jsonl
    from simkit.runner.luck import luck_rows
    from simkit.runner.value_model import load_value_model
    from simkit.studies.headline import log_luck

    model = load_value_model()
    policies = "greedy,expert,random"
    _, luck, _, _ = luck_rows(parse_policies(policies), seed=11, deals=3, block=model.block)
    for deal in range(3):
        lines = replay_jsonl(11, deal, policies, dealer=0, seating="fixed").splitlines()
        assert np.allclose(log_luck(lines, model), luck[deal], atol=1e-9), deal
    assert np.abs(luck).sum() > 0


def test_a_reference_review_carries_result_luck_and_agreement():
    from simkit.replay import replay_jsonl
    from simkit.studies.reference import review_against_reference

    lines = replay_jsonl(9, 2, "expert,random,expert", seating="fixed").splitlines()
    r = review_against_reference(lines, 1, "expert", 16, seed=1)
    assert r.result == json.loads(lines[-1])["payoffs"][1] and math.isfinite(r.luck) and r.default_rules
    assert r.agree == sum(d.reference_action == d.chosen for d in r.decisions) < len(r.decisions)
    for d in r.decisions:
        assert d.reference_action  # asked at every decision
        if d.agrees:  # expert decides the same in every rollout: a common action costs exactly 0
            assert d.loss == 0.0 and d.se == 0.0
    # expert reviewed against itself agrees everywhere
    own = review_against_reference(lines, 0, "expert", 4, seed=1)
    assert own.agree == len(own.decisions) > 0 and own.total == 0.0
