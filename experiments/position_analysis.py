"""The goals of the position analysis, measured: known-answer positions, agreement with brute
force, speed of a discard decision and of a whole-deal review, and the variance the common
random numbers (and the luck adjustment) save on the differences between actions.

    python experiments/position_analysis.py [scale]    # scale 1: the committed report

Writes reports/position_analysis/report.md.  Every seed used here is listed in the report; the
positions come from ``expert`` deals of seeds the tests do not use.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from simkit.bench import hardware_line
from simkit.engine import layout as L
from simkit.replay import log_decisions, replay_jsonl
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution
from simkit.specs.review import ReviewSpec
from simkit.studies.analyze import DEFAULT_ROLLOUTS, analyze_position
from simkit.studies.position_checks import (
    CASE_KINDS,
    brute_force_agreement,
    calibration,
    known_answer_cases,
    timed_analysis,
)
from simkit.studies.review import parse_decision_log, review_decisions, write_review_report

CASE_SEED, POSITION_SEED, SPEED_SEED, REVIEW_SEED = 4101, 4102, 4103, 4104
CALIBRATION_SEED, VALIDATION_SEED = 4105, 4106  # the opponent model's strength chosen on 4105, checked on 4106
OUT = Path("reports/position_analysis/report.md")
SAMPLE_REVIEW = Path("reports/position_analysis/review")  # the review of deal 0: a sample report


def expert_positions(seed: int, deals: int, every: int = 3):
    """Decisions with two or more legal actions of ``deals`` expert deals, one in ``every``."""
    out = []
    for deal in range(deals):
        for d in log_decisions(replay_jsonl(seed, deal, "expert,expert,expert").splitlines()):
            if len(d.position.legal_actions()) >= 2 and d.index % every == 0:
                out.append(d.position)
    return out


def main() -> None:
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    lines = ["# Position analysis: the goals measured", "",
             f"Made by `python experiments/position_analysis.py {sys.argv[1] if len(sys.argv) > 1 else ''}`"
             f".strip() on {hardware_line()}; rollouts by `expert` at every seat, one thread unless said.", ""]
    start = time.perf_counter()

    # 0. the opponent model
    cal_deals = max(10, int(150 * scale))
    lines += ["## Opponent model", "",
              "Decisions 0, 5, 10, ... of expert deals: the taken action's expected payoff and P(lose) from 48 "
              "determinisations, against what the deal then paid that seat (realised - estimated; 0 when unbiased). "
              f"`sharpen` chosen on seed {CALIBRATION_SEED}, checked on seed {VALIDATION_SEED}, {cal_deals} deals each.", "",
              "| seed | sharpen | decisions | payoff: realised - estimated | P(lose): realised - estimated |",
              "|---:|---:|---:|---|---|"]
    for seed, values in ((CALIBRATION_SEED, (0, 10, 15, 20, 25, 30)), (VALIDATION_SEED, (0, 20))):
        for c in calibration(seed, cal_deals, values):
            lines.append(f"| {seed} | {c.sharpen} | {c.decisions} | {c.payoff_bias:+.3f} ± {c.payoff_bias_se:.3f} | "
                         f"{c.loss_bias:+.3f} ± {c.loss_bias_se:.3f} |")
    print("\n".join(lines[-10:]), flush=True)
    lines.append("")

    # 1. known-answer positions
    per_kind, seeds = max(1, int(6 * scale)), max(2, int(20 * scale))
    cases = known_answer_cases(CASE_SEED, int(300 * scale) + 20, per_kind)
    lines += ["## Known-answer positions", "",
              f"Positions from expert deals of seed {CASE_SEED} (up to {per_kind} per kind, one per deal), each "
              f"analysed with the defaults (up to {DEFAULT_ROLLOUTS} determinisations per action, racing) under "
              f"seeds 0..{seeds - 1}.", "",
              "| kind | positions | runs | ranked correctly | rate | mean time (s) |", "|---|---:|---:|---:|---:|---:|"]
    for kind in CASE_KINDS:
        ok = runs = 0
        seconds = []
        for case in cases[kind]:
            for seed in range(seeds):
                analysis, dt = timed_analysis(case.position, AnalyzeSpec(seed=seed))
                ok += case.ranked_correctly(analysis)
                runs += 1
                seconds.append(dt)
        rate = ok / runs if runs else float("nan")
        lines.append(f"| {kind} | {len(cases[kind])} | {runs} | {ok} | {rate:.3f} | "
                     f"{np.mean(seconds) if seconds else float('nan'):.2f} |")
    print("\n".join(lines[-6:]), flush=True)

    # 2. brute force
    positions = expert_positions(POSITION_SEED, 12)
    rng = np.random.default_rng(POSITION_SEED)
    chosen = [positions[i] for i in sorted(rng.choice(len(positions), size=min(20, len(positions)), replace=False))]
    chosen = chosen[: max(4, int(20 * scale))]
    rows = brute_force_agreement(chosen, rollouts=128, factor=100, seed=1, brute_seed=2, workers=2)
    covered = np.array([r.covered for r in rows])
    per_position = [np.mean([r.covered for r in rows if r.position == k]) for k in range(len(chosen))]
    lines += ["", "## Agreement with brute force", "",
              f"{len(chosen)} positions drawn from expert deals of seed {POSITION_SEED} ({sum(p.decision == 'claim' for p in chosen)} "
              f"claims, {sum(p.decision == 'discard' for p in chosen)} discard phases): each action's estimate from 128 "
              "determinisations (seed 1, no racing; the fewest the defaults give an action) and its 95% t interval, "
              "against the mean of 12,800 others (seed 2).",
              "",
              f"- actions: {len(rows)}; the brute-force mean inside the interval: {covered.sum()} "
              f"(**coverage {covered.mean():.3f}**, nominal 0.95)",
              f"- positions where every action is covered: {sum(p == 1.0 for p in per_position)} of {len(chosen)}",
              f"- largest |estimate - brute force| / brute-force standard error of the small sample: "
              f"{max(abs(r.estimate - r.brute) / max(1e-9, (r.hi - r.lo) / 3.92) for r in rows):.2f}"]
    print("\n".join(lines[-5:]), flush=True)

    # 3. common random numbers and luck, on the same positions
    crn, luck = [], []
    for position in chosen:
        a = analyze_position(position, AnalyzeSpec(rollouts=256, seed=5, race=False, luck=True), Execution(workers=2))
        luck += [x.luck_factor for x in a.actions[1:] if np.isfinite(x.luck_factor)]
        crn += [x.crn_factor for x in a.actions[1:] if np.isfinite(x.crn_factor)]
    lines += ["", "## Variance saved on the differences between actions", "",
              "Per action other than the best, on the positions above (256 determinisations, seed 5): the variance of "
              "its difference to the best under independent samples over that under common random numbers, and "
              "(with `--luck`, the shipped value model) the variance of the plain difference over that of the "
              "luck-adjusted one.", "",
              "| factor | actions | median | mean | 10th percentile | 90th percentile |", "|---|---:|---:|---:|---:|---:|"]
    for name, values in (("common random numbers", crn), ("luck adjustment (on top)", luck)):
        v = np.array(values)
        lines.append(f"| {name} | {v.size} | {np.median(v):.2f} | {v.mean():.2f} | {np.percentile(v, 10):.2f} | "
                     f"{np.percentile(v, 90):.2f} |")
    print("\n".join(lines[-3:]), flush=True)

    # 4. speed of a discard decision
    speed = [p for p in expert_positions(SPEED_SEED, int(10 * scale) + 2, every=2)
             if p.decision == "discard" and L.A_WIN not in p.legal_actions() and len(p.legal_actions()) <= 12]
    speed = speed[: max(5, int(40 * scale))]
    times, gaps, separated = [], [], []
    for position in speed:
        analysis, dt = timed_analysis(position, AnalyzeSpec(seed=0), Execution(workers=1))
        times.append(dt)
        gaps.append(analysis.best.payoff - analysis.actions[1].payoff)
        separated.append(analysis.actions[1].status == "separated")
    times, gaps, separated = np.array(times), np.array(gaps), np.array(separated)
    wide = gaps >= 0.2
    lines += ["", "## Speed of a discard decision", "",
              f"{len(speed)} discard phases with 2 to 12 legal discards (no win) from expert deals of seed "
              f"{SPEED_SEED}, analysed with the defaults on one thread.", "",
              f"- time per decision: median {np.median(times):.2f} s, 90th percentile {np.percentile(times, 90):.2f} s, "
              f"max {times.max():.2f} s",
              f"- decisions where the best and the second differ by >= 0.2: {int(wide.sum())}; best separated from the "
              f"second in {int((separated & wide).sum())} of them, in at most {times[wide].max() if wide.any() else float('nan'):.2f} s "
              f"(median {np.median(times[wide]) if wide.any() else float('nan'):.2f} s)"]
    print("\n".join(lines[-3:]), flush=True)

    # 5. review of whole deals
    review_times, decisions_reviewed = [], []
    for deal in range(max(2, int(6 * scale))):
        text = replay_jsonl(REVIEW_SEED, deal, "expert,greedy,patient")
        seat = deal % 3
        t0 = time.perf_counter()
        review = review_decisions(parse_decision_log(text.splitlines()), ReviewSpec(seat=seat, seed=0))
        review_times.append(time.perf_counter() - t0)
        decisions_reviewed.append(len(review.decisions))
        if deal == 0:
            write_review_report(review, SAMPLE_REVIEW, min_loss=0.2)
    lines += ["", "## Review of a whole deal", "",
              f"Deals 0..{len(review_times) - 1} of seed {REVIEW_SEED} (expert, greedy, patient), seat = deal mod 3, "
              "`simkit review` defaults (up to 512 determinisations per action), one thread.", "",
              f"- decisions reviewed per deal: {', '.join(str(n) for n in decisions_reviewed)}",
              f"- time per deal: {', '.join(f'{t:.1f}' for t in review_times)} s (max {max(review_times):.1f} s)",
              f"- the review of deal 0 (seat 0): [review/review.md](review/review.md)"]
    print("\n".join(lines[-3:]), flush=True)
    lines += ["", f"Total time: {time.perf_counter() - start:.0f} s."]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(OUT)


if __name__ == "__main__":
    main()
