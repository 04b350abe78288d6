"""``simkit review``: a played deal, decision by decision, against rollouts of every option.

For each decision of one seat in a log, :func:`review_decisions` analyses the position
(:func:`simkit.studies.analyze.analyze_position`) and reports the action chosen, the best
action and the expected loss of the choice with its interval.

**One story per decision.**  Two measures are kept apart, and each is named for what it is:

* the *best* named (``best``, ``best_payoff``; the page's and the text's "best") is the action
  of the highest payoff among those shown beside it, and the chosen action is *as good as the
  best* (``as_good_as_best``) when it is that action or the interval of its difference to it
  (paired, ``vs_best_lo`` / ``vs_best_hi``) does not lie wholly below 0: one rule,
  :func:`simkit.studies.analyze.shown_verdict`.  Where it is as good, nothing else is named.
* the *loss* (``loss``, ``loss_lo``, ``loss_hi``) is measured against the analysis's *pick*
  (``pick``, ``pick_payoff``: the action its race chose) on fresh determinisations the choice
  never saw (``confirm``): the best of several noisy estimates is biased upwards (the winner's
  curse), an estimate on independent samples is not, so the losses add up to an unbiased total.
  A loss may come out negative (the choice did better than the pick) and is kept as it is.

So a chosen action that beat the pick is the best shown, or as good as it, with a negative loss;
the shown payoffs come from the same fresh determinisations as the loss.  An *error* is a
decision whose loss interval excludes 0 and whose chosen action is not as good as the best.
The summary adds the losses up, counts the errors by size and splits the loss by kind of
decision: ``discard``, ``claim``, and ``win`` (a discard phase in which the player could win).
For a replay log the review leads with one headline (:mod:`simkit.studies.headline`): the result
split into skill (the loss against a reference policy, :mod:`simkit.studies.reference`,
calibrated against paired play) and luck, the agreement with the reference and whom the seat
played like.

Two log formats are read (:func:`read_decision_log`):

* a ``simkit replay`` log (JSON lines, first line ``{"event": "deal", ...}``): the deal is
  rebuilt and followed move by move (:func:`simkit.replay.log_decisions`);
* a decision log, for a real game typed in: JSON lines ``{"position": POSITION, "chosen":
  ACTION}`` where POSITION is a position's text or JSON form
  (:mod:`simkit.engine.position`) and ACTION the action taken in words (``discard RJ``,
  ``peng``, ``pass``, ``chow YZ,RZ,GZ``, ``win``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from scipy import stats

from simkit.progress import Progress
from simkit.glossary import DECISION_CHINESE, TERMINAL_WIDTH, action_words, in_words, pad, wrap_line
from simkit.analysis.plots import decision_loss_plot, save_figure
from simkit.analysis.results import finite_or_none
from simkit.cards import format_counts
from simkit.engine.position import (
    Position,
    PositionError,
    decision_kind,
    parse_action,
    parse_position,
    position_from_mapping,
)
from simkit.errors import SimkitError, loads_json
from simkit.exposed import format_exposed
from simkit.replay import LogError, log_decisions
from simkit.runner.simulate import dask_session, run_dask
from simkit.runner.value_model import value_model_for
from simkit.specs.base import Execution
from simkit.specs.review import ReviewSpec
from simkit.storage.files import read_regular, write_json, write_parquet, write_text
from simkit.storage.lock import FolderLock
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import REVIEW_FILE, REVIEWS_FILE, check_run_folder
from simkit.rng import deal_review_seed
from simkit.studies.headline import Headline, headline
from simkit.studies.reference import ReferenceReview, deal_identity, review_against_reference
from simkit.studies.analyze import PositionAnalysis, analyze_position, analysis_verdict

ERROR_SIZES = ((0.0, "small (< 0.2)"), (0.2, "medium (0.2 - 0.5)"), (0.5, "large (0.5 - 1)"), (1.0, "blunder (>= 1)"))
KIND_ORDER = ("discard", "claim", "win")


@dataclasses.dataclass(frozen=True)
class DecisionReview:
    """One reviewed decision (module docstring): ``best`` the action of the highest payoff shown
    (``best_payoff``), ``as_good_as_best`` and the chosen one's paired difference to it
    (``vs_best`` with its interval); ``loss`` = the pick's payoff - the chosen one's (牌), paired
    on fresh determinisations, with its interval (0 when the choice is the pick); ``error``: the
    loss interval excludes 0 and the choice is not as good as the best."""

    index: int
    line: int
    seat: int
    kind: str
    hand: str
    exposed: str
    chosen: str
    best: str
    loss: float
    loss_lo: float
    loss_hi: float
    error: bool
    chosen_payoff: float
    best_payoff: float
    rollouts: int
    analysis: PositionAnalysis = dataclasses.field(repr=False, compare=False)
    pick: str = ""  # the analysis's race pick: what ``loss`` is measured against
    pick_payoff: float = math.nan
    as_good_as_best: bool = False
    vs_best: float = math.nan  # chosen - best, paired (0 when the chosen is the best)
    vs_best_lo: float = math.nan
    vs_best_hi: float = math.nan

    @property
    def verdict(self) -> str:
        """The decision in words: ``the best``, ``as good as the best`` or ``best: ACTION``."""
        if self.chosen == self.best:
            return "the best"
        return "as good as the best" if self.as_good_as_best else f"best: {self.best}"

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "analysis"}


@dataclasses.dataclass(frozen=True)
class GameReview:
    """The review of one seat's decisions (:func:`review_decisions`)."""

    seat: int
    policy: str
    seed: int
    rollouts: int
    luck: str | None
    decisions: tuple[DecisionReview, ...]
    confidence: float = 0.95  # the level of every decision's interval
    reference: ReferenceReview | None = None  # the loss against a reference policy (replay logs)
    belief: int = 0  # the analyses' belief particles (0: uniform determinisations with sharpen)

    def to_frame(self) -> pd.DataFrame:
        """One row per reviewed decision, in the order played."""
        columns = [f.name for f in dataclasses.fields(DecisionReview) if f.name != "analysis"]
        return pd.DataFrame([d.to_dict() for d in self.decisions], columns=columns)

    @property
    def total_loss(self) -> float:
        return float(sum(d.loss for d in self.decisions))

    def total_interval(self, confidence: float | None = None) -> tuple[float, float]:
        """An interval of the total loss at ``confidence`` (default: the review's own level):
        the decisions' estimates are independent, so their standard errors add in quadrature
        (each read off its own interval, which is at the review's level)."""
        from_z = _z(self.confidence)
        to_z = _z(self.confidence if confidence is None else confidence)
        var = 0.0
        for d in self.decisions:
            if math.isfinite(d.loss_lo) and math.isfinite(d.loss_hi):
                var += ((d.loss_hi - d.loss_lo) / (2 * from_z)) ** 2
        half = to_z * math.sqrt(var)
        return self.total_loss - half, self.total_loss + half

    def summary(self) -> dict[str, Any]:
        """Total loss with its interval, errors by size, loss and errors by kind."""
        lo, hi = self.total_interval()
        by_size = {label: 0 for _, label in ERROR_SIZES}
        for d in self.decisions:
            if d.error:
                by_size[_size_label(d.loss)] += 1
        by_kind = {}
        for kind in KIND_ORDER:
            rows = [d for d in self.decisions if d.kind == kind]
            by_kind[kind] = {"decisions": len(rows), "errors": sum(d.error for d in rows),
                             "loss": float(sum(d.loss for d in rows))}
        summary = {"seat": self.seat, "decisions": len(self.decisions), "errors": sum(d.error for d in self.decisions),
                   "as_good_as_best": sum(d.as_good_as_best for d in self.decisions),
                   "total_loss": self.total_loss, "total_loss_lo": lo, "total_loss_hi": hi,
                   "confidence": self.confidence, "errors_by_size": by_size, "by_kind": by_kind}
        if self.reference is not None:
            ref_lo, ref_hi = self.reference.total_interval()
            summary.update(reference=self.reference.reference, reference_loss=self.reference.total,
                           reference_loss_lo=ref_lo, reference_loss_hi=ref_hi)
        summary["headline"] = self.headline().to_dict()
        return summary

    def headline(self) -> Headline:
        """The review's one headline (:func:`simkit.studies.headline.headline`)."""
        return headline(self)

    def to_json(self) -> str:
        data = {"summary": self.summary(), "policy": self.policy, "seed": self.seed, "rollouts": self.rollouts,
                "luck": self.luck, "confidence": self.confidence, "belief": self.belief,
                "decisions": [d.to_dict() for d in self.decisions]}
        if self.reference is not None:
            data["reference"] = self.reference.to_dict()
        return json.dumps(finite_or_none(data), ensure_ascii=False)


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(0.5 + confidence / 2))


def _size_label(loss: float) -> str:
    label = ERROR_SIZES[0][1]
    for edge, name in ERROR_SIZES:
        if loss >= edge:
            label = name
    return label


# ---------------------------------------------------------------------------- reading logs


@dataclasses.dataclass(frozen=True)
class LogDecision:
    """A decision read from a log: its number, the log line, the position and the action taken;
    ``deal``: the (seed, deal number) that a replay log's deal line names, which the review keys
    the decision's rollouts by (None for a decision log typed in: it names no deal)."""

    index: int
    line: int
    position: Position
    action: int
    deal: tuple[int, int] | None = None


def read_decision_log(path: str | os.PathLike) -> list[LogDecision]:
    """The decisions of a log file, either format of the module docstring; a one-line
    :class:`SimkitError` naming the file and line for anything that cannot be read."""
    try:
        text = read_regular(path).decode("utf-8")
    except UnicodeDecodeError:
        raise SimkitError(f"log {path}: not UTF-8 text") from None
    except OSError as exc:
        raise SimkitError(f"log {path}: cannot read it ({exc.strerror or exc})") from None
    return parse_decision_log(text.splitlines(), str(path))


def parse_decision_log(lines: Sequence[str], name: str = "log") -> list[LogDecision]:
    """:func:`read_decision_log` of lines already read."""
    rows = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if not rows:
        raise SimkitError(f"{name}: the log is empty")
    try:
        first = loads_json(rows[0][1])
    except json.JSONDecodeError as exc:
        raise SimkitError(f"{name} line {rows[0][0]}: not JSON ({exc.msg})") from None
    if isinstance(first, dict) and first.get("event") == "deal":
        deal = _log_deal(first)
        try:
            return [LogDecision(d.index, d.line, d.position, d.action, deal) for d in log_decisions(list(lines))]
        except LogError as exc:  # the log checked whole (simkit.replay.log_decisions): one line naming the line
            raise LogError(f"{name}: {exc}") from None
        except PositionError as exc:
            raise SimkitError(f"{name}: {exc}") from None
    out = []
    for number, line in rows:
        try:
            entry = loads_json(line)
        except json.JSONDecodeError as exc:
            raise SimkitError(f"{name} line {number}: not JSON ({exc.msg})") from None
        if not isinstance(entry, dict) or "position" not in entry or "chosen" not in entry:
            raise SimkitError(f"{name} line {number}: a decision line is an object with \"position\" and \"chosen\"")
        try:
            raw = entry["position"]
            position = position_from_mapping(raw) if isinstance(raw, dict) else parse_position(str(raw))
            action = parse_action(str(entry["chosen"]), position)
        except PositionError as exc:
            raise SimkitError(f"{name} line {number}: {exc}") from None
        out.append(LogDecision(len(out), number, position, action))
    return out


def _log_deal(header: dict[str, Any]) -> tuple[int, int] | None:
    """(seed, deal number) of a replay log's deal line, or None when it names none (integers >= 0)."""
    try:
        return tuple(deal_identity(header))
    except SimkitError:
        return None


# ---------------------------------------------------------------------------- the review


def review_decisions(decisions: Sequence[LogDecision], spec: ReviewSpec, execution: Execution = Execution(), *,
                     client: Any = None, log: str | os.PathLike | None = None) -> GameReview:
    """Review seat ``spec.seat``'s decisions with two or more legal actions (see the module
    docstring), each analysed as ``spec`` says (:meth:`ReviewSpec.analysis
    <simkit.specs.review.ReviewSpec.analysis>`; the loss against ``spec.reference`` is
    :func:`review_log_against_reference`'s).  Each decision's analysis is keyed by
    (``spec.seed``, the log's deal, the decision's number) (:func:`review_decision`), so the
    decisions' errors are independent, as :meth:`GameReview.total_interval` assumes, and so are
    those of different deals; a review is a pure function of ``decisions`` and ``spec``, however
    it is executed.  Progress (decisions reviewed) shows unless ``execution.quiet``, labelled
    with ``log`` when given (a review of several logs).

    ``execution.backend='dask'``: each decision's review (:func:`review_decision`: its analysis,
    and the measure of its loss) is one task on a Dask cluster
    (:func:`~simkit.runner.simulate.run_dask`: ``client``, else one connected here to
    ``execution.scheduler`` or to a new ``LocalCluster`` of ``execution.workers``
    single-threaded processes, closed at the end); a task played on one thread gives what it
    gives on any, so the review is the local one.  A value model (``spec.luck``) is loaded here
    and travels with the tasks: the workers need no copy of its file."""
    if not isinstance(spec, ReviewSpec):
        raise SimkitError(f"spec must be a ReviewSpec, got {type(spec).__name__}", parameters=("spec",))
    seat = spec.seat
    todo = [d for d in decisions if d.position.seat == seat and len(d.position.legal_actions()) >= 2]
    if not todo:
        raise SimkitError(f"seat {seat} has no decision with two or more legal actions in the log",
                          parameters=("seat",))
    loaded = spec.replace(luck=value_model_for(spec.luck, spec.seed))  # loaded once, for every decision
    rows: dict[int, DecisionReview] = {}
    label = "reviewed" if log is None else f"reviewed {os.fspath(log)}"
    with dask_session(execution.backend, execution.workers, execution.scheduler, client) as client, \
            Progress(len(todo), "decisions", label, not execution.quiet) as progress:
        if client is None:
            stream = ((d.index, review_decision(loaded, d, execution.workers)) for d in todo)
        else:  # one task per decision, results as they finish (a killed worker's run again elsewhere)
            stream = run_dask(_review_task, loaded, todo, client)
        try:
            for index, row in stream:
                rows[index] = row
                progress.update()
        finally:
            stream.close()
    ordered = tuple(rows[d.index] for d in todo)  # as played, whatever order they finished in
    last = ordered[-1].analysis
    return GameReview(seat=seat, policy=last.policy, seed=spec.seed, rollouts=spec.rollouts, luck=last.luck,
                      decisions=ordered, confidence=spec.confidence, belief=spec.belief)


def review_decision(spec: ReviewSpec, d: LogDecision, workers: int = 1) -> DecisionReview:
    """The review of one decision: its analysis, the best action, and the chosen action's loss
    measured on determinisations the choice of the best never saw (module docstring).  A pure
    function of its arguments (``workers``: threads; the result is the same for any), wherever
    it runs: the unit of a review's work on a Dask cluster.

    The analysis's rollouts are keyed by (review seed, deal, decision), as the loss against a
    reference's are (:mod:`simkit.studies.reference`): they are determinisations
    ``d.index * rollouts ..`` (and the confirmation's, :data:`~simkit.studies.analyze.CONFIRM_FIRST`
    on from there) of the deal's own seed, :func:`simkit.rng.deal_review_seed` of the review's
    seed and the log's deal (``d.deal``); a decision log typed in names no deal, and its
    decisions are keyed by (review seed, decision) alone.  (Belief particles, ``belief``, are
    drawn from that seed, shared by the deal's decisions.)"""
    seed = spec.seed if d.deal is None else deal_review_seed(int(spec.seed), *d.deal)
    analysis = analyze_position(d.position, spec.analysis(seed, d.index * int(spec.rollouts)), Execution(workers))
    chosen = analysis.estimate(d.action)
    pick = analysis.best
    if chosen.action == pick.action:
        loss, lo, hi = 0.0, 0.0, 0.0
    else:  # the analysis's confirmation: measured apart from the choice of the pick (module docstring)
        loss, lo, hi = -chosen.difference, -chosen.difference_hi, -chosen.difference_lo
    verdict = analysis_verdict(analysis, d.action)  # the one rule for the best named
    p = d.position
    seat = spec.seat
    return DecisionReview(
        index=d.index, line=d.line, seat=seat, kind=decision_kind(p), hand=format_counts(p.hand),
        exposed=format_exposed(p.exposed[seat]), chosen=chosen.name, best=verdict.best, loss=loss, loss_lo=lo,
        loss_hi=hi, error=bool(lo > 0) and not verdict.as_good_as_best, chosen_payoff=chosen.payoff,
        best_payoff=verdict.best_value, rollouts=chosen.rollouts, analysis=analysis, pick=pick.name,
        pick_payoff=pick.payoff, as_good_as_best=verdict.as_good_as_best, vs_best=verdict.difference,
        vs_best_lo=verdict.difference_lo, vs_best_hi=verdict.difference_hi)


def _review_task(spec: ReviewSpec, d: LogDecision, threads: int) -> tuple[int, DecisionReview]:
    """:func:`review_decision` as :func:`~simkit.runner.simulate.run_dask` calls it (on
    ``threads`` threads), tagged with the decision's number."""
    return d.index, review_decision(spec, d, threads)


def review_log_against_reference(path: str | os.PathLike, spec: ReviewSpec,
                                 execution: Execution = Execution()) -> ReferenceReview | None:
    """The loss against ``spec.reference`` (:func:`simkit.studies.reference.review_against_reference`,
    ``spec.samples`` stock orders per decision, keyed by ``spec.seed``) of seat ``spec.seat`` in
    the log at ``path`` when it is a replay log (its true cards are known); None for a decision
    log typed in (positions only), or when ``spec.reference`` is None.  ``execution.workers``:
    threads (the result is the same for any); it runs in this process."""
    if spec.reference is None:
        return None
    lines = read_regular(path).decode("utf-8").splitlines()
    first = next((line for line in lines if line.strip()), "")
    try:
        header = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(header, dict) or header.get("event") != "deal":
        return None
    try:
        return review_against_reference(lines, spec.seat, spec.reference, spec.samples, spec.seed, spec.confidence,
                                        execution.workers)
    except (LogError, PositionError) as exc:
        raise SimkitError(f"{path}: {exc}") from None


# how the best named and the unbiased totals both hold, in one sentence (text, review.md, the page)
TOTALS_NOTE = ("The best named at each decision is the action of the highest payoff shown beside it; the losses and "
               "their totals are measured against the analysis's pick on fresh determinisations that pick never saw, "
               "so they carry no winner's curse and add up without bias (a loss comes out negative where the chosen "
               "action did better than the pick).")


def review_table(review: GameReview, min_loss: float = 0.0) -> str:
    """The headline (:meth:`GameReview.headline`), the analysis's totals below it, labelled, and
    the decisions whose loss is at least ``min_loss`` (how many it leaves out said), as text;
    80 columns wide but for long hands' lines, which wrap."""
    s = review.summary()
    lines = review.headline().lines()
    lines += ["",
              f"the analysis (rollouts: {review.policy}, up to {review.rollouts} per action, seed {review.seed}):",
              f"  {s['decisions']} decisions, {s['as_good_as_best']} as good as the best, {s['errors']} errors;",
              f"  total loss against its picks {s['total_loss']:.3f} [{s['total_loss_lo']:.3f}, "
              f"{s['total_loss_hi']:.3f}] 牌"]
    lines += wrap_line("  " + TOTALS_NOTE, TERMINAL_WIDTH, "  ")
    lines += wrap_line("errors by size: " + ", ".join(f"{k} {v}" for k, v in s["errors_by_size"].items()),
                       TERMINAL_WIDTH, "  ")
    lines += wrap_line("by kind: " + "; ".join(f"{k} {v['decisions']} decisions, {v['errors']} errors, loss "
                                               f"{v['loss']:.3f}" for k, v in s["by_kind"].items()), TERMINAL_WIDTH, "  ")
    shown = [d for d in review.decisions if d.loss >= min_loss]
    left = len(review.decisions) - len(shown)
    lines.append("")
    if left:
        lines.append(f"{len(shown)} of {len(review.decisions)} decisions shown: {left} with a loss below "
                     f"--min-loss {min_loss:g} left out")
    lines.append(f"{'#':>4} {pad('kind', 15)} {pad('chosen', 22)} {'loss 牌':>7} {'interval':>18}")
    for d in shown:
        mark = "!" if d.error else " "
        lines.append(f"{d.index:>4} {pad(in_words(d.kind, DECISION_CHINESE), 15)} {pad(action_words(d.chosen), 22)} "
                     f"{d.loss:>7.3f} {f'[{d.loss_lo:.3f}, {d.loss_hi:.3f}]':>18}{mark}")
        verdict = d.verdict if d.chosen == d.best or d.as_good_as_best else f"best: {action_words(d.best)}"
        lines += wrap_line(f"     {verdict}; hand {d.hand}", TERMINAL_WIDTH, "       ")
    return "\n".join(lines)


def write_review_report(review: GameReview, out: str | os.PathLike, min_loss: float = 0.0) -> Path:
    """Write ``OUT/review.md`` (summary, decision table, the loss plot, and for each flagged
    decision, an error of loss >= ``min_loss``, the hand and every action's estimates),
    ``review.json``, ``decisions.parquet`` and ``loss.png``/``.svg``; returns the report's path.
    The folder is locked while they are written (:class:`~simkit.storage.lock.FolderLock`, as
    every command that writes a folder): another review writing it at the same time is refused in
    one line, so a folder never holds a mix of two reviews' files."""
    folder = make_out_dir(check_run_folder(out, "review"))
    with FolderLock(folder):
        return _write_review_files(review, folder, min_loss)


def review_folder_names(logs: Sequence[str | os.PathLike]) -> list[str]:
    """The sub-folder of each log's review in a review of several logs: its number and its file
    name's stem (letters, digits, ``-`` and ``_`` kept), so two logs of the same name differ.

    >>> review_folder_names(["games/deal 3.jsonl", "other/deal 3.jsonl"])
    ['01-deal_3', '02-deal_3']
    """
    width = max(2, len(str(len(logs))))
    return [f"{k:0{width}d}-" + ("".join(c if c.isalnum() or c in "-_" else "_" for c in Path(log).stem) or "log")
            for k, log in enumerate(logs, 1)]


def write_reviews_report(reviews: Sequence[GameReview], logs: Sequence[str | os.PathLike],
                         out: str | os.PathLike, min_loss: float = 0.0) -> Path:
    """The reviews of several logs in one folder: ``OUT/reviews.json`` (first: it marks the
    folder; each log, its folder and its summary), each log's review in a sub-folder
    (:func:`review_folder_names`, written as :func:`write_review_report` writes one), and
    ``OUT/report.md``, a table of the logs' total losses linking each review; returns the
    table's path.  The folder is locked while they are written."""
    if len(reviews) != len(logs):
        raise ValueError(f"{len(reviews)} reviews for {len(logs)} logs")
    folder = make_out_dir(check_run_folder(out, "reviews"))
    names = review_folder_names(logs)
    with FolderLock(folder):
        index = [{"log": os.fspath(log), "folder": name, "summary": review.summary()}
                 for log, name, review in zip(logs, names, reviews)]
        write_json(folder / REVIEWS_FILE, {"reviews": index})
        level = f"{reviews[0].confidence:.0%}" if reviews else "95%"
        md = [f"# Reviews of {len(reviews)} logs", "",
              f"Each log's seat reviewed as `simkit review` reviews one log; the loss is the expected loss in 牌 "
              f"against the analysis's pick at each decision, with its {level} interval; each review leads with "
              "its headline (skill against the reference, luck, agreement).", "",
              f"| log | seat | decisions | errors | loss against the picks (牌) | {level} interval | review |",
              "|---|---|---|---|---|---|---|"]
        for entry, review, name in zip(index, reviews, names):
            summary = entry["summary"]
            md.append(f"| `{entry['log']}` | {summary['seat']} | {summary['decisions']} | {summary['errors']} | "
                      f"{summary['total_loss']:.3f} | {summary['total_loss_lo']:.3f} to {summary['total_loss_hi']:.3f} "
                      f"| [{name}/review.md]({name}/review.md) |")
            sub = folder / name
            sub.mkdir(exist_ok=True)
            with FolderLock(sub):
                _write_review_files(review, sub, min_loss)
        write_text(folder / "report.md", "\n".join(md) + "\n")
    return folder / "report.md"


def _write_review_files(review: GameReview, folder: Path, min_loss: float) -> Path:
    """:func:`write_review_report`'s files, in ``folder`` (locked)."""
    frame = review.to_frame()
    write_json(folder / REVIEW_FILE, json.loads(review.to_json()))  # first: it marks the folder as a review's
    write_parquet(frame, folder / "decisions.parquet")
    save_figure(decision_loss_plot(frame).figure, folder, "loss")
    s = review.summary()
    level = f"{review.confidence:.0%}"
    md = [f"# Review of seat {review.seat}", "", "## Headline", "", "```text", *review.headline().lines(), "```", ""]
    if review.reference is not None:
        r = review.reference
        lo, hi = r.total_interval()
        md += ["## Against the reference", "",
               f"What the seat lost against `{r.reference}` playing it (the performance-difference estimate from the "
               f"deal's true cards, {r.samples} stock orders per decision, the table's policies "
               f"`{', '.join(r.table)}` continuing; calibrated against paired play, docs/analysis.md): "
               f"**{r.total:.3f} 牌** ({r.confidence:.0%} interval {lo:.3f} to {hi:.3f}).", "",
               ]
        differing = [d for d in r.decisions if d.loss != 0.0 or d.se != 0.0]
        if differing:
            md += ["| # | kind | chosen | loss against the reference | interval |", "|---:|---|---|---:|---|"]
            md += [f"| {d.index} | {in_words(d.kind, DECISION_CHINESE)} | {action_words(d.chosen)} | {d.loss:.3f} | {d.lo:.3f} to {d.hi:.3f} |"
                   for d in differing]
        else:
            md.append(f"Every decision was {r.reference}'s own: nothing lost against it.")
        md.append("")
    md += [f"Rollouts: `{review.policy}` at every seat, up to {review.rollouts} determinisations per action, seed "
          f"{review.seed}; luck adjustment: {review.luck or 'off'}"
          + (f"; hidden cards: {review.belief} draws given the other seats' play" if review.belief else "")
          + ". Loss = the analysis's pick's expected payoff minus the "
          f"chosen one's (牌), paired over the same determinisations; an error is a loss whose {level} interval "
          "excludes 0 where the choice is not as good as the best.",
          "", "## The analysis's totals", "",
          TOTALS_NOTE,
          "",
          f"- decisions reviewed: {s['decisions']}; as good as the best: {s['as_good_as_best']}; errors: {s['errors']}",
          f"- total loss against the analysis's picks: {s['total_loss']:.3f} 牌 ({level} interval "
          f"{s['total_loss_lo']:.3f} to {s['total_loss_hi']:.3f})",
          "- errors by size: " + ", ".join(f"{k}: {v}" for k, v in s["errors_by_size"].items()), "",
          "| kind | decisions | errors | loss (牌) |", "|---|---:|---:|---:|"]
    for kind, v in s["by_kind"].items():
        md.append(f"| {kind} | {v['decisions']} | {v['errors']} | {v['loss']:.3f} |")
    md += ["", "![expected loss per decision](loss.png)", "", "## Decisions", "",
           f"| # | kind | chosen | verdict | loss against the pick | {level} interval | error |",
           "|---:|---|---|---|---:|---|---|"]
    for d in review.decisions:
        verdict = d.verdict if d.chosen == d.best or d.as_good_as_best else f"best: {action_words(d.best)}"
        md.append(f"| {d.index} | {in_words(d.kind, DECISION_CHINESE)} | {action_words(d.chosen)} | {verdict} | "
                  f"{d.loss:.3f} | {d.loss_lo:.3f} to {d.loss_hi:.3f} | {'yes' if d.error else ''} |")
    flagged = [d for d in review.decisions if d.error and d.loss >= min_loss]
    md += ["", f"## Flagged decisions (errors with loss >= {min_loss:g})", ""]
    if not flagged:
        md.append("None.")
    for d in flagged:
        md += [f"### Decision {d.index} ({in_words(d.kind, DECISION_CHINESE)}, log line {d.line})", "",
               f"- hand: `{d.hand}`" + (f"; exposed: `{d.exposed}`" if d.exposed else ""),
               f"- position: `{d.analysis.position.text()}`",
               f"- chosen: **{action_words(d.chosen)}**, best: **{action_words(d.best)}** (the highest payoff "
               f"below); loss against the pick {action_words(d.pick)}: {d.loss:.3f} ({d.loss_lo:.3f} to "
               f"{d.loss_hi:.3f})",
               "", "| action | n | payoff | vs best | P(win) | P(lose) |", "|---|---:|---:|---:|---:|---:|"]
        for a in sorted(d.analysis.actions, key=lambda a: -a.payoff if math.isfinite(a.payoff) else math.inf):
            md.append(f"| {a.name} | {a.rollouts} | {a.payoff:+.3f} | {a.vs_top:+.3f} | {a.p_win:.3f} | "
                      f"{a.p_loss:.3f} |")
        md.append("")
    path = folder / "review.md"
    write_text(path, "\n".join(md) + "\n")
    return path

