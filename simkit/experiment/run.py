"""``simkit experiment run FILE``: run what an experiment file describes and write its report.

Simulations and comparisons are stored as ordinary resumable datasets under the data folder
(default ``runs/experiments/NAME``), so an interrupted experiment continues where it stopped;
the report (``REPORTS/NAME/report.md`` + PNG/SVG figures) is rewritten from the data each run.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

import simkit
from simkit.studies.compare import comparison_section, compare
from simkit.studies.tournament import run_tournament, tournament_section
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.specs.tournament import TournamentSpec
from simkit.analysis.plots import calibration_plot, convergence_plot, forest_plot, save_figure
from simkit.analysis.exact import parse_event
from simkit.studies.probability import batch_convergence, probability_table
from simkit.analysis.report import REPORT_COLUMNS, dataset_section, format_p, markdown_table, plain_policy_columns
from simkit.analysis.results import format_level
from simkit.analysis.stats import check_confidence, holm_adjust, paired_mean_test, paired_ratio_difference
from simkit.analysis.summary import XIAOJIA_UNITS, dealer_advantage, distributions, exhausted_rate, tail_probabilities
from simkit.bench import hardware_line
from simkit.experiment.spec import (CalibrationEntry, ExperimentError, ExperimentSpec, ProbabilityEntry, SimulationEntry,
                                    load_experiment, slug)
from simkit.studies.reference import Calibration, calibrate, interval_text, write_calibration_report
from simkit.policies.registry import PolicySpec, effective_params, label_of_text, parse_policies
from simkit.rules import RuleSet
from simkit.specs.calibrate import CalibrateSpec
from simkit.runner import simulate
from simkit.runner.simulate import check_backend, dask_session
from simkit.specs.simulate import default_seating
from simkit.errors import SimkitError
from simkit.storage import load_dataset
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import CALIBRATION_FILE, EXPERIMENT_FILE, check_run_folder
from simkit.storage.files import read_json, write_json, write_text


def _rules_text(rules: RuleSet) -> str:
    default = set(RuleSet().to_strings())
    changed = [item for item in rules.to_strings() if item not in default]
    return ", ".join(changed) if changed else "default rules"


def _seating(entry: SimulationEntry) -> str:
    """The seating an entry runs with (its own, or simulate's default for its policies)."""
    return entry.seating if entry.seating is not None else default_seating(parse_policies(entry.policies))


def _normal_quantile(confidence: float) -> float:
    """z = Phi^-1((1 + confidence) / 2): the half-width of a normal interval in standard errors."""
    return float(stats.norm.ppf(0.5 + confidence / 2))


def _variant_row(entry: SimulationEntry, df: pd.DataFrame, confidence: float = 0.95) -> dict:
    exhausted = exhausted_rate(df, confidence)
    ex, ex_lo, ex_hi = exhausted.estimate, exhausted.lo, exhausted.hi
    adv = dealer_advantage(df, confidence).set_index("measure")
    dist = distributions(df, ("hu", "units", "turns")).set_index("column")
    tails = tail_probabilities(df, confidence).set_index("event")
    won = df["winner"].to_numpy() >= 0
    hu = df.loc[won, "hu"].to_numpy(dtype=float)
    hu_se = hu.std(ddof=1) / max(1, hu.size) ** 0.5 if hu.size > 1 else float("nan")
    z = _normal_quantile(confidence)
    return {
        "label": entry.label, "policies": entry.policies, "seating": _seating(entry),
        "rules": _rules_text(entry.rules), "n": len(df),
        "win_rate": 1.0 - ex, "win_lo": 1.0 - ex_hi, "win_hi": 1.0 - ex_lo,
        "exhausted": ex, "exhausted_lo": ex_lo, "exhausted_hi": ex_hi,
        "dealer_win": float((df["winner"].to_numpy() == df["dealer"].to_numpy()).mean()),
        "dealer_adv": float(adv.loc["win rate", "difference"]), "dealer_adv_lo": float(adv.loc["win rate", "difference_lo"]),
        "dealer_adv_hi": float(adv.loc["win rate", "difference_hi"]),
        "dealer_adv_confounded": bool(adv.loc["win rate", "confounded"]),
        "hu_mean": float(dist.loc["hu", "mean"]), "hu_lo": float(dist.loc["hu", "mean"] - z * hu_se),
        "hu_hi": float(dist.loc["hu", "mean"] + z * hu_se), "hu_median": float(dist.loc["hu", "q50"]),
        "units_mean": float(dist.loc["units", "mean"]), "turns_mean": float(dist.loc["turns", "mean"]),
        "p_xiaojia": float(tails.loc[f"小甲 (units >= {XIAOJIA_UNITS})", "p"]),
    }


def _paired_arrays(entry: SimulationEntry, df: pd.DataFrame) -> dict:
    """Per-deal outcomes kept for comparing simulations that share their deals."""
    winner = df["winner"].to_numpy()
    dealer = df["dealer"].to_numpy()
    won = winner >= 0
    return {"entry": entry, "exhausted": (~won).astype(float),
            "dealer_x": (winner == dealer).astype(float) - (won & (winner != dealer)).astype(float) / 2.0,
            "xiaojia": (won & (df["units"].to_numpy() >= XIAOJIA_UNITS)).astype(float),
            "hu": df.loc[won, "hu"].to_numpy(dtype=float),
            "hu_x": np.where(won, df["hu"].to_numpy(dtype=float, na_value=0.0), 0.0), "won": won.astype(float)}


def _same_deals_key(entry: SimulationEntry) -> tuple:
    """Simulations with this key play the same deals with the same players (only the session
    length, hence the dealers, may differ): a session run is compared with the independent one."""
    policies = tuple(PolicySpec(s.name, effective_params(s)).text() for s in parse_policies(entry.policies))
    return (entry.seed, entry.deals, policies, entry.rules, _seating(entry))


def _p_text(p: float) -> str:
    text = format_p(p)
    return f" {text}" if text.startswith("<") else f"={text}"


def _baseline_of(entry: SimulationEntry, paired: list[dict]) -> dict | None:
    """The simulation an entry's changes are measured against (its ``baseline``, by default the
    first simulation; None for the first one itself or ``baseline = ""``)."""
    if entry.baseline == "":
        return None
    label = paired[0]["entry"].label if entry.baseline is None else entry.baseline
    if label == entry.label:
        return None
    return next(p for p in paired if p["entry"].label == label)


def _paired_change_lines(paired: list[dict], confidence: float = 0.95) -> list[str]:
    """Each simulation's changes against its baseline (the first simulation unless it names
    another); paired per deal where the deals are the same ones, with Holm-adjusted p-values over
    the table's tests (one family)."""
    z = _normal_quantile(confidence)
    rows, tests = [], []  # tests: (row index, column, MeanTest or None)
    for other in paired:
        base = _baseline_of(other["entry"], paired)
        if base is None:
            continue
        same_deals = (other["entry"].seed == base["entry"].seed and other["entry"].deals == base["entry"].deals
                      and other["exhausted"].size == base["exhausted"].size)  # same rows (seating all: 6 per deal)
        row = {"simulation": other["entry"].label, "against": base["entry"].label}
        for key, name in (("exhausted", "change in 穿牌 rate"), ("dealer_x", "change in dealer advantage"),
                          ("xiaojia", "change in P(小甲 win) per deal")):
            if same_deals:
                tests.append((len(rows), name, paired_mean_test(other[key] - base[key], confidence), "+.4f"))
            else:
                row[name] = "— (different deals)"
        if same_deals and other["won"].sum() > 0 and base["won"].sum() > 0:
            test = paired_ratio_difference(other["hu_x"], other["won"], base["hu_x"], base["won"], confidence)
            tests.append((len(rows), "change in mean hu", test, "+.2f"))
        else:
            a, b = other["hu"], base["hu"]
            diff = a.mean() - b.mean()
            se = (a.var(ddof=1) / a.size + b.var(ddof=1) / b.size) ** 0.5
            row["change in mean hu"] = f"{diff:+.2f} [{diff - z * se:+.2f}, {diff + z * se:+.2f}] (Welch)"
        rows.append(row)
    if not rows:
        return []
    holm = holm_adjust([t.p_value for _, _, t, _ in tests])
    for (index, name, test, spec), adjusted in zip(tests, holm):
        rows[index][name] = (f"{test.mean:{spec}} [{test.lo:{spec}}, {test.hi:{spec}}], p{_p_text(test.p_value)}, "
                             f"Holm p{_p_text(adjusted)}")
    table = pd.DataFrame(rows)
    return [f"Changes of each simulation against the one in column *against* ({format_level(confidence)}): "
            "穿牌 rate, dealer advantage, the probability that a deal ends in a 小甲 win (units >= "
            f"{XIAOJIA_UNITS}) and the mean hu of wins, paired per deal (simulations with the same seed play the same "
            "deals; the mean hu of wins as a paired ratio, delta method); on different deals the mean hu by Welch's "
            f"interval. Holm p: Holm-adjusted over the family of the table's {len(tests)} tests. Judge a change by its "
            "interval.", ""] + markdown_table(table[[c for c in ["simulation", "against", "change in 穿牌 rate",
                                                                   "change in dealer advantage",
                                                                   "change in P(小甲 win) per deal",
                                                                   "change in mean hu"] if c in table]]) + [""]


@dataclasses.dataclass(frozen=True)
class _Steps:
    """What every step of one experiment shares: the (scaled) file, where its data and report
    go, how its runs execute (the backend ``dask`` exactly when the experiment holds a Dask
    ``client``) and the level of every interval."""

    spec: ExperimentSpec
    data_dir: Path
    report_dir: Path
    execution: Execution
    confidence: float
    client: Any = None

    def say(self, text: str) -> None:
        """A line of the experiment's progress (nothing when quiet)."""
        if not self.execution.quiet:
            print(text, flush=True)


def _simulation_lines(steps: _Steps) -> list[str]:
    spec, data_dir, report_dir, confidence = steps.spec, steps.data_dir, steps.report_dir, steps.confidence
    level = format_level(confidence)
    rows = []
    paired: list[dict] = []
    details: list[str] = []
    independent: dict[tuple, tuple[str, pd.DataFrame]] = {}  # runs of independent deals, by their deals
    for entry in spec.simulations:
        folder = data_dir / f"sim-{slug(entry.label)}"
        start = time.perf_counter()
        simulate(entry.run_spec(spec.batch_size), folder, steps.execution, client=steps.client)
        steps.say(f"simulation {entry.label}: {entry.deals:,} deals ready ({time.perf_counter() - start:.0f} s)")
        df = plain_policy_columns(load_dataset(folder, columns=REPORT_COLUMNS), label_of_text)
        rows.append(_variant_row(entry, df, confidence))
        paired.append(_paired_arrays(entry, df))
        if entry.session_length == 1:
            independent[_same_deals_key(entry)] = (entry.label, df[["dealer", "winner", "payoff_0", "payoff_1",
                                                                    "payoff_2"]].copy())
        if entry.details:
            prefix = f"{slug(entry.label)}_"
            sessions = f"sessions of {entry.session_length} deals; " if entry.session_length > 1 else ""
            details += [f"## {entry.label}", "",
                        f"Policies {entry.policies}; {_rules_text(entry.rules)}; seed {entry.seed}; {sessions}"
                        f"{_seating(entry)} seating; {entry.deals:,} deals (`{folder}`).", ""]
            label, base = independent.get(_same_deals_key(entry), ("", None)) if entry.session_length > 1 else ("", None)
            details += dataset_section(df, report_dir, prefix, heading="###", independent=base,
                                       independent_label=label, confidence=confidence)
    table = pd.DataFrame(rows)
    lines = ["## Simulations", "",
             f"Intervals {level}: Wilson for rates, t for means. Dealer advantage = dealer's win rate minus a "
             "non-dealer seat's (per-deal paired t interval). Seating: fixed (seat k plays policy k), rotate "
             "(deal N: seat s plays policy (s + N) mod 3), all (each deal under the 6 seatings). A dealer "
             "advantage marked *confounded* mixes in a policy difference: with fixed seats and different policies "
             "the first policy deals every deal.", ""]
    shown = pd.DataFrame({
        "simulation": table["label"], "policies": table["policies"], "seating": table["seating"],
        "rules": table["rules"],
        "deals": [f"{entry.deals:,}" + (" x 6 seatings" if seating == "all" else "")
                  for entry, seating in zip(spec.simulations, table["seating"])],
        "win rate": table.apply(lambda r: f"{r['win_rate']:.4f} [{r['win_lo']:.4f}, {r['win_hi']:.4f}]", axis=1),
        "穿牌 rate": table.apply(lambda r: f"{r['exhausted']:.4f} [{r['exhausted_lo']:.4f}, {r['exhausted_hi']:.4f}]", axis=1),
        "dealer advantage": table.apply(lambda r: f"{r['dealer_adv']:+.4f} [{r['dealer_adv_lo']:+.4f}, {r['dealer_adv_hi']:+.4f}]"
                                        + (" *confounded with policy (fixed seats)*" if r["dealer_adv_confounded"] else ""),
                                        axis=1),
        "mean hu": table.apply(lambda r: f"{r['hu_mean']:.2f} [{r['hu_lo']:.2f}, {r['hu_hi']:.2f}]", axis=1),
        "median hu": table["hu_median"].map("{:g}".format),
        "mean units": table["units_mean"].map("{:.3f}".format),
        "P(小甲)": table["p_xiaojia"].map("{:.4f}".format),
        "mean turns": table["turns_mean"].map("{:.2f}".format),
    })
    lines += markdown_table(shown) + [""]
    lines += _paired_change_lines(paired, confidence)
    if len(table) > 1:
        for stem, column, lo, hi, xlabel, title, null in (
            ("variants_exhausted", "exhausted", "exhausted_lo", "exhausted_hi",
             f"穿牌 (no-winner) rate, {level} Wilson", "No-winner rate by simulation", None),
            ("variants_dealer_advantage", "dealer_adv", "dealer_adv_lo", "dealer_adv_hi",
             f"dealer win rate minus non-dealer win rate, {level} t", "Dealer advantage by simulation", 0.0),
            ("variants_hu", "hu_mean", "hu_lo", "hu_hi", f"mean hu of winning hands (hu), {level} t",
             "Winning hu by simulation", None),
        ):
            labels = table["label"]
            if column == "dealer_adv":
                labels = labels + table["dealer_adv_confounded"].map({True: " (confounded with policy)", False: ""})
            forest = pd.DataFrame({"label": labels, "estimate": table[column], "lo": table[lo],
                                   "hi": table[hi], "n": table["n"]})
            save_figure(forest_plot(forest, xlabel, title, null=null).figure, report_dir, stem)
            lines += [f"![{title}]({stem}.png)", ""]
    return lines + details


def _sprt_batch(batch_size: int, cap: int) -> int:
    """Batches of a sequential comparison: small enough that the test can stop early (about
    20 looks before the cap); the decision itself is checked deal by deal, whatever the batch."""
    return max(1, min(batch_size, max(50, cap // 20)))


def _comparison_lines(steps: _Steps) -> list[str]:
    spec, confidence = steps.spec, steps.confidence
    results = []
    for entry in spec.comparisons:
        folder = steps.data_dir / f"cmp-{slug(entry.a)}-vs-{slug(entry.b)}"
        start = time.perf_counter()
        run = CompareSpec(entry.a, entry.b, deals=entry.deals, seed=entry.seed, rules=entry.rules,
                          batch_size=_sprt_batch(spec.batch_size, entry.deals) if entry.sprt else spec.batch_size,
                          design=entry.design, sprt=entry.sprt, confidence=confidence, luck=entry.luck or None,
                          burn_in=entry.burn_in)
        result = compare(run, folder, steps.execution, client=steps.client)
        steps.say(f"comparison {entry.a} vs {entry.b}: {result.deals:,} deals ({time.perf_counter() - start:.0f} s)")
        results.append(result)
    lines = comparison_section(results, steps.report_dir)
    lines += ["```"] + [r.text() for r in results] + ["```", ""]
    return lines


def _tournament_lines(steps: _Steps) -> list[str]:
    spec, confidence = steps.spec, steps.confidence
    entry = spec.tournament
    start = time.perf_counter()
    batch_size = _sprt_batch(spec.batch_size, entry.deals) if entry.sprt else min(spec.batch_size, entry.deals)
    run = TournamentSpec(entry.policies, deals=entry.deals, seed=entry.seed, rules=entry.rules, batch_size=batch_size,
                         sprt=entry.sprt, design=entry.design, confidence=confidence, luck=entry.luck or None,
                         burn_in=entry.burn_in)
    result = run_tournament(run, steps.data_dir / "tournament", steps.execution, client=steps.client)
    steps.say(f"tournament {', '.join(entry.policies)}: {time.perf_counter() - start:.0f} s")
    return tournament_section(result, steps.report_dir)


def _calibration_spec(entry: CalibrationEntry, confidence: float) -> CalibrateSpec:
    """The entry's calibration spec, its intervals at ``confidence``; its identity is what a stored
    calibration must match to be reused (its policies with every parameter, as a dataset's
    identity records them: a changed preset is another calibration; the level)."""
    fields = {f.name: getattr(entry, f.name) for f in dataclasses.fields(entry)}
    return CalibrateSpec.from_mapping({**fields, "confidence": confidence}, "[[calibration]]")


def _calibration(entry: CalibrationEntry, folder: Path, steps: _Steps) -> Calibration:
    """The entry's calibration: read back from ``folder`` when it holds this one, else run
    (in the experiment's worker processes, here: a calibration plays no Dask batch) and stored there."""
    spec = _calibration_spec(entry, steps.confidence)
    identity = spec.identity()
    stored = folder / "identity.json"
    if stored.is_file() and (folder / CALIBRATION_FILE).is_file():
        try:
            if read_json(stored) == identity:
                return Calibration.from_dict(read_json(folder / CALIBRATION_FILE))
        except (SimkitError, KeyError, TypeError, ValueError):
            pass  # unreadable: run it again
    start = time.perf_counter()
    result = calibrate(spec, Execution(workers=steps.execution.workers, quiet=True))
    write_calibration_report(result, folder)
    write_json(stored, identity)
    steps.say(f"calibration {entry.policy} against {entry.reference}: {result.deals:,} deals "
              f"({time.perf_counter() - start:.0f} s)")
    return result


def _calibration_lines(steps: _Steps) -> list[str]:
    spec, data_dir, report_dir, confidence = steps.spec, steps.data_dir, steps.report_dir, steps.confidence
    level = format_level(confidence)
    lines = ["## Paired play and the review's prediction (calibrations)", "",
             f"Each deal is played twice on the same cards, seats fixed and the dealer rotating: with the policy in "
             f"its seat and with the reference there (the reference in the other two seats both times). *Gain* is "
             f"the seat's payoff with the policy minus its payoff with the reference (牌 a deal; the realised loss "
             f"with its sign turned); *predicted loss* is the review of the policy's decisions against the "
             f"reference; *bias* is realised minus predicted loss, paired by deal (0 for a calibrated review). "
             f"CPU: the policy's plays minus the reference's, per reviewed decision of its seat (a decision with a "
             f"choice), one core. Intervals: {level}, Student t over deals.", "",
             "| policy | reference | seat | seed | deals | gain (牌/deal) | predicted loss | bias | decisions/deal | "
             "CPU s/decision |", "|---|---|---:|---:|---:|---|---|---|---:|---:|"]
    texts = []
    for i, entry in enumerate(spec.calibrations):
        folder = data_dir / f"cal-{i}-{slug(entry.policy)}-vs-{slug(entry.reference)}"
        result = _calibration(entry, folder, steps)
        realised = result.realised_mean()
        cpu = result.cpu_per_decision()
        lines.append(f"| {result.policy} | {result.reference} | {result.seat} | {result.seed} | {result.deals:,} | "
                     f"{-realised.estimate:+.3f} [{-realised.hi:+.3f}, {-realised.lo:+.3f}] | "
                     f"{interval_text(result.predicted_mean())} | {interval_text(result.bias())} | "
                     f"{result.decisions.mean():.1f} | {f'{cpu:.4f}' if math.isfinite(cpu) else 'not measured'} |")
        save_figure(calibration_plot(result.bins()).figure, report_dir, f"calibration_{i}")
        texts.append(result.text())
    lines += ["", "By predicted loss (deals in five groups; the plots `calibration_K.png`, K the row):", "", "```",
              *texts, "```", ""]
    return lines


def _probability_lines(entry: ProbabilityEntry, index: int, spec: ExperimentSpec, report_dir: Path,
                       confidence: float = 0.95) -> list[str]:
    level = format_level(confidence)
    try:
        events = [parse_event(text) for text in entry.events] if entry.events else None
        result = probability_table(entry.deals, entry.seed, events=events, seats=entry.seats,
                                   batch_size=spec.batch_size, confidence=confidence, with_batches=True)
    except ValueError as exc:
        raise ExperimentError(f"probabilities[{index}]: {exc}") from None
    table, per_batch = result.table, result.per_batch
    shown = pd.DataFrame({
        "event": table["event"], "seat": table["seat"], "hits": table["hits"].map("{:,}".format),
        f"Monte Carlo [{level} Wilson]": table.apply(lambda r: f"{r['p']:.6f} [{r['lo']:.6f}, {r['hi']:.6f}]", axis=1),
        "exact": table["exact"].map(lambda x: "—" if pd.isna(x) else f"{x:.6f}"),
        "z (MC - exact)": table["z"].map(lambda x: "—" if pd.isna(x) else f"{x:+.2f}"),
    })
    inside = table.dropna(subset=["exact"])
    covered = int(((inside["lo"] <= inside["exact"]) & (inside["exact"] <= inside["hi"])).sum())
    lines = [f"## Dealt-hand probabilities ({entry.deals:,} deals, seed {entry.seed})", "",
             "Seat 0 is the dealer (31 cards), seats 1 and 2 hold 30. Exact values by combinatorics (rational "
             f"arithmetic over the 28 types x 4 copies) where a closed form exists; Monte Carlo with {level} Wilson "
             f"intervals for all events. The exact value lies inside the {level} interval in {covered} of {len(inside)} "
             f"rows with a closed form (about {level} expected; the rows share deals, so they are not independent).", ""]
    lines += markdown_table(shown) + [""]
    exact_rows = table.dropna(subset=["exact"])
    if len(exact_rows):
        # the convergence figure follows the first event with a closed form (same simulation)
        label, seat = str(exact_rows["event"].iloc[0]), int(exact_rows["seat"].iloc[0])
        curve = batch_convergence(per_batch[label][:, seat], entry.deals, spec.batch_size, confidence)
        stem = f"probability_convergence_{index}"
        plot = convergence_plot(curve, f"P({label}), seat {seat} ({level} Wilson)", f"Estimate of P({label}) against deals",
                                reference=float(exact_rows["exact"].iloc[0]), confidence=confidence)
        save_figure(plot.figure, report_dir, stem)
        lines += [f"![convergence of P({label})]({stem}.png)", ""]
    return lines


# a scaled entry keeps at least this many deals (never more than the file gives): enough wins and
# no-wins for every rate, mean and interval of the report to be defined
MIN_SCALED_DEALS = 200


def _scaled(deals: int, scale: float) -> int:
    """``deals * scale`` rounded, at least :data:`MIN_SCALED_DEALS` (or ``deals`` if smaller).

    >>> _scaled(1_000_000, 0.01), _scaled(1_000, 0.01), _scaled(150, 0.01), _scaled(10, 3.0)
    (10000, 200, 150, 30)
    """
    return max(min(deals, MIN_SCALED_DEALS), int(round(deals * scale)))


def check_scale(scale: float) -> float:
    """``scale`` as a float once it is a finite number > 0 (one-line error otherwise)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise SimkitError(f"scale must be a finite number > 0, got {scale!r}", parameters=("scale",))
    return float(scale)


def scale_experiment(spec: ExperimentSpec, scale: float) -> ExperimentSpec:
    """``spec`` with every deal count (simulations, comparisons and their SPRT caps, the
    tournament, probabilities, calibrations) multiplied by ``scale``, rounded, at least
    :data:`MIN_SCALED_DEALS` (or the file's own count if smaller)."""
    scale = check_scale(scale)
    if scale == 1.0:
        return spec
    return dataclasses.replace(
        spec,
        simulations=tuple(dataclasses.replace(e, deals=_scaled(e.deals, scale)) for e in spec.simulations),
        comparisons=tuple(dataclasses.replace(e, deals=_scaled(e.deals, scale)) for e in spec.comparisons),
        probabilities=tuple(dataclasses.replace(e, deals=_scaled(e.deals, scale)) for e in spec.probabilities),
        calibrations=tuple(dataclasses.replace(e, deals=_scaled(e.deals, scale)) for e in spec.calibrations),
        tournament=(dataclasses.replace(spec.tournament, deals=_scaled(spec.tournament.deals, scale))
                    if spec.tournament is not None else None))


def _total_deals(spec: ExperimentSpec) -> int:
    entries = [*spec.simulations, *spec.comparisons, *spec.probabilities, *spec.calibrations]
    return sum(e.deals for e in entries) + (spec.tournament.deals if spec.tournament is not None else 0)




def run_experiment(path: str | os.PathLike, reports: str | os.PathLike = "reports",
                   data: str | os.PathLike | None = None, confidence: float = 0.95, scale: float = 1.0,
                   out: str | os.PathLike | None = None, execution: Execution = Execution(), client=None) -> Path:
    """Run (or resume) the experiment in ``path``; returns the written report's path.  Every
    interval of the report (and the text that states its level) is at ``confidence``.

    The report goes to ``REPORTS/NAME/`` and the data to ``data`` (default
    ``runs/experiments/NAME``); with ``out`` both go under it instead: ``OUT/report/`` and
    ``OUT/data/``.  ``scale`` multiplies every deal count of the file (see
    :func:`scale_experiment`; the report's header says so): ``scale=0.01, out="runs/x"`` reruns
    an experiment small without touching the shipped reports.  A scaled run without ``out``
    writes under ``runs/experiments/NAME-scale-SCALE/``, never into ``reports``.  An ``out``
    folder must be new, empty or an experiment's (it holds :data:`EXPERIMENT_FILE`, written
    first): a folder of a user's files is refused in one line, never written into.

    ``execution``: how every run of the file executes (its workers, backend and progress;
    :class:`~simkit.specs.base.Execution`).  Backend ``dask``: the simulations, comparisons (``sprt`` too) and the tournament run
    their batches on one Dask cluster, connected once for the whole experiment before anything
    is written (``client`` when given, left open; else to ``scheduler``, or a new
    ``LocalCluster`` of ``workers`` processes, closed at the end); every dataset is the local
    one, byte for byte, and so is the luck replay of a luck-adjusted comparison or tournament;
    the dealt-hand probabilities run in this process."""
    confidence = check_confidence(confidence)
    scale = check_scale(scale)
    full = load_experiment(path)
    spec = scale_experiment(full, scale)
    check_backend(execution.backend, execution.workers, execution.scheduler)
    with dask_session(execution.backend, execution.workers, execution.scheduler, client) as client:  # once, first
        execution = dataclasses.replace(execution, backend="local" if client is None else "dask")
        folders = _folders(path, spec, scale, reports, data, out)
        steps = _Steps(spec, folders[1], folders[0], execution, confidence, client)
        return _run_experiment(path, full, scale, steps)


def _folders(path: str | os.PathLike, spec: ExperimentSpec, scale: float, reports: str | os.PathLike,
             data: str | os.PathLike | None, out: str | os.PathLike | None) -> tuple[Path, Path]:
    """(report folder, data folder) of :func:`run_experiment`, made (an ``out`` folder checked and
    marked as an experiment's first)."""
    simkits_own = out is None and scale != 1.0  # a folder simkit names: no user's files to guard
    if simkits_own:
        out = Path("runs") / "experiments" / f"{spec.name}-scale-{scale:g}"
    if out is not None:
        out = check_run_folder(out, "experiment")
        make_out_dir(out)
        if not (out / EXPERIMENT_FILE).exists():  # first: the folder is an experiment's from now on
            write_json(out / EXPERIMENT_FILE, {"kind": "simkit experiment", "name": spec.name, "scale": scale,
                                               "file": Path(path).as_posix()})
        report_dir, data_dir = out / "report", out / "data"
    else:
        report_dir = Path(reports) / spec.name
        data_dir = Path(data) if data is not None else Path("runs") / "experiments" / spec.name
    report_dir.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    return report_dir, data_dir


def _run_experiment(path: str | os.PathLike, full: ExperimentSpec, scale: float, steps: _Steps) -> Path:
    """:func:`run_experiment` with its file read, its folders made and its Dask client (or None) connected."""
    spec, report_dir, data_dir, confidence = steps.spec, steps.report_dir, steps.data_dir, steps.confidence
    start = time.perf_counter()
    body: list[str] = []
    if spec.calibrations:  # first: a study of a bot leads with its paired play
        body += _calibration_lines(steps)
    if spec.simulations:
        body += _simulation_lines(steps)
    if spec.comparisons:
        body += _comparison_lines(steps)
    if spec.tournament is not None:
        body += _tournament_lines(steps)
    for i, entry in enumerate(spec.probabilities):
        body += _probability_lines(entry, i, spec, report_dir, confidence)
    elapsed = time.perf_counter() - start
    rerun = f"simkit experiment run {Path(path).as_posix()}" + (f" --scale {scale:g}" if scale != 1.0 else "")
    scaled = ([f"**Scaled {scale:g}: {_total_deals(spec):,} deals instead of {_total_deals(full):,}** (every deal "
               f"count of the file times {scale:g}, rounded, at least {MIN_SCALED_DEALS:,} per entry; the figures "
               "below are from this smaller run, with wider intervals).", ""] if scale != 1.0 else [])
    header = [f"# {spec.title}", ""] + scaled + [spec.description.strip(), "",
              f"Experiment `{spec.name}` ({Path(path).as_posix()}), simkit {simkit.__version__}, "
              f"generated {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} "
              f"(this invocation took {elapsed:,.0f} s; datasets already in `{data_dir.as_posix()}` are reused, not recomputed; re-run "
              f"`{rerun}` to reproduce: results are a pure function of the file and the scale).",
              "", f"Hardware: {hardware_line()}.", ""]
    report = report_dir / "report.md"
    write_text(report, "\n".join(header + body))
    return report
