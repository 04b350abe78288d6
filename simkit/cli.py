"""The ``simkit`` command line.

    simkit score "RJ*3 RS*2 RX*2" [--exposed "peng:RC kong:YZ"] [--rule key=value ...]
    simkit score --jsonl FILE            # one {"hand", "exposed", "rules"} object per line
    simkit deals [--deals N] [--seed S] --out DIR   # alias of prob --hands DIR (dealt hands, Parquet + report)
    simkit simulate --deals N --policies a,b,c --seed S --out DIR [--workers K] [--batch-size B]
                    [--backend local|dask] [--scheduler ADDRESS] [--rule key=value ...]
                    [--session-length K]  # sessions of K deals with a rotating dealer
                    [--seating fixed|rotate|all]  # default: rotate when the policies differ
    simkit report DATASET [--out DIR] [--confidence C]   # report.md with tables and plots of a dataset
    simkit compare A B [--deals N | --sprt delta,alpha,beta] [--seed S] [--out DIR] [--confidence C]
    simkit tournament P1 P2 [P3 ...] [--deals N] [--sprt delta,alpha,beta] [--seed S] [--out DIR]
    simkit tune POLICY --params NAME=LO:HI[,NAME=LO:HI ...] --against POOL --budget DEALS [--seed S] [--out DIR]
                [--iteration-deals M] [--validate-deals N] [--confidence C] [--spsa KEY=VALUE,...] [--quiet]
    simkit prob [EVENT ...] [--deals N] [--seed S] [--seat K] [--out FILE] [--hands DIR]
    simkit prob [EVENT ...] --given "HAND" [--seat K]   # the other seats' hands given seat K's (default 0)
    simkit equity "HAND" [--seat 0|1|2] --policies a,b,c --deals N [--seed S] [--out DIR] [--workers K]
    simkit experiment run experiments/NAME.toml [--workers K] [--reports DIR] [--data DIR] [--confidence C]
    simkit demo --out DIR                # the main job: a small simulation + its report
    simkit replay --seed S --deal N --policies a,b,c [--rule key=value ...] [--session-length K]
                  [--seating fixed|rotate|all [--seating-index J]] [--engine auto|compiled|interpreted]
    simkit bench evaluator [--holdings N]
    simkit bench engine [--deals N]
    simkit bench score [--lines N]       # score --jsonl lines/s, batched and one at a time
    simkit rules [--rule key=value ...]  # print the effective rule set as TOML
    simkit compile [--all] [TARGET ...]  # compile the numba kernels once (cached for later runs)

Invalid input exits with status 2 and one line on stderr.

A policy is a name (``greedy``, ``patient:2,6,1``) or a user's jitted policy by import path,
``package.module:function[:p0,p1,...]``; like ``python -m``, the command line imports such
modules from the current folder too (and its worker processes inherit that).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Sequence, TextIO

from simkit import __version__
from simkit.errors import SimkitError

# Lazy for speed: each command imports the simkit modules it uses inside its handler, so that
# `simkit --help`, `simkit rules` or a bad argument never load numba, pandas or pyarrow (the
# CLI is the top layer: these imports dodge no cycle; tests/test_architecture.py allows them
# here only).

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2
        self.exit(EXIT_BAD_INPUT, f"simkit: error: {message}\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="simkit", description="Monte Carlo toolkit for 四色牌 (Sì Sè Pái).")
    parser.add_argument("--version", action="version", version=f"simkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    score = sub.add_parser("score", help="score one holding (or many with --jsonl)")
    score.add_argument("hand", nargs="?", help='concealed cards, e.g. "RJ*3 RS*2 RX*2" or "红将 红士 红相"')
    score.add_argument("--exposed", default="", help='exposed groups, e.g. "peng:RC kong:YZ chow:RJ,RS,RX zhan:GM table:RJ"')
    score.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", help="rule option (repeatable)")
    score.add_argument("--jsonl", metavar="FILE", help="score one JSON object per line of FILE ('-' for stdin)")
    score.add_argument("--output", metavar="FILE", help="write results here instead of stdout")

    deals = sub.add_parser("deals", help="dealt hands: Parquet + report with plots (alias of prob --hands DIR)")
    deals.add_argument("--deals", type=int, default=20_000, help="number of deals (default 20000)")
    deals.add_argument("--seed", type=int, default=2026, help="root seed (default 2026)")
    deals.add_argument("--batch-size", type=int, default=10_000, help="deals per batch: the batch column (default 10000)")
    deals.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    deals.add_argument("--out", required=True, help="output directory")

    sim = sub.add_parser("simulate", help="simulate deals into a Parquet dataset (resumable)")
    sim.add_argument("--deals", type=int, required=True, help="number of deals")
    sim.add_argument("--policies", required=True, help="three policies, e.g. greedy,random,random")
    sim.add_argument("--seed", type=int, required=True, help="run seed")
    sim.add_argument("--out", required=True, help="dataset folder (re-run to resume)")
    sim.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    sim.add_argument("--workers", type=int, default=1, help="worker processes (default 1: threads only)")
    sim.add_argument("--batch-size", type=int, default=10_000, help="deals per batch file (default 10000)")
    sim.add_argument("--backend", choices=["local", "dask"], default="local")
    sim.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    sim.add_argument("--session-length", type=int, default=1, metavar="K",
                     help="deals per session (default 1: independent deals, seat 0 deals). K > 1: each "
                          "session's first deal is dealt by seat 0, the next ones by rule option next_dealer; "
                          "--batch-size is rounded down to a multiple of K; a deal count that is not a "
                          "multiple of K cuts the last session short")
    sim.add_argument("--seating", choices=["fixed", "rotate", "all"], default=None,
                     help="how the policies sit: fixed (seat k plays policy k: with independent deals the first "
                          "policy deals every deal), rotate (deal N: seat s plays policy (s + N) mod 3; in "
                          "sessions per session), all (each deal played under all 6 seatings: 6 rows per deal, "
                          "column seating). Default: rotate when the policies differ, fixed when they are the same")
    sim.add_argument("--quiet", action="store_true", help="no progress bar")

    report = sub.add_parser("report", help="write report.md with tables and plots of a dataset")
    report.add_argument("dataset", help="dataset folder written by simkit simulate (a run in sessions "
                                        "gets a Sessions section)")
    report.add_argument("--out", default=None, help="report folder (default: the dataset folder)")
    report.add_argument("--confidence", type=float, default=0.95, help="level of every interval (default 0.95)")

    compare = sub.add_parser("compare", help="duplicate comparison of two policies (all seatings, same deals)")
    compare.add_argument("policy_a", help="policy A, e.g. greedy or patient:2,6,1")
    compare.add_argument("policy_b", help="policy B")
    compare.add_argument("--deals", type=int, default=None,
                         help="deals (each played in 6 seatings; default 10000, or the cap of an SPRT: 1000000)")
    compare.add_argument("--sprt", default=None, metavar="DELTA,ALPHA,BETA",
                         help="sequential test (GSPRT on the per-deal differences, no decision before 100 deals): "
                              "stop when 'A beats B by >= DELTA' or 'A does not beat B' is decided; prints the "
                              "decision, the deals and the estimate valid under the stopping rule, and plots the "
                              "log-likelihood ratio path in the report")
    compare.add_argument("--seed", type=int, default=0)
    compare.add_argument("--out", default=None, help="comparison folder (default runs/compare-A-B-seedS; resumable)")
    compare.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    compare.add_argument("--batch-size", type=int, default=2_000, help="deals per batch (default 2000)")
    compare.add_argument("--workers", type=int, default=1)
    compare.add_argument("--confidence", type=float, default=0.95, help="level of every interval (default 0.95)")
    compare.add_argument("--quiet", action="store_true")

    tournament = sub.add_parser("tournament", help="round-robin duplicate tournament: crosstable and ratings")
    tournament.add_argument("policies", nargs="+", metavar="POLICY", help="2 or more different policies")
    tournament.add_argument("--deals", type=int, default=2_000,
                            help="duplicate deals per pairing (each in 6 seatings; the cap of an SPRT; default 2000)")
    tournament.add_argument("--sprt", default=None, metavar="DELTA,ALPHA,BETA",
                            help="each pairing as a sequential test (as compare --sprt)")
    tournament.add_argument("--seed", type=int, default=0)
    tournament.add_argument("--out", default=None, help="tournament folder (default runs/tournament-seedS; resumable)")
    tournament.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    tournament.add_argument("--batch-size", type=int, default=1_000, help="deals per batch (default 1000)")
    tournament.add_argument("--workers", type=int, default=1)
    tournament.add_argument("--resamples", type=int, default=2_000, help="bootstrap resamples of the ratings")
    tournament.add_argument("--confidence", type=float, default=0.95, help="level of every interval (default 0.95)")
    tournament.add_argument("--quiet", action="store_true")

    tune = sub.add_parser("tune", help="tune a policy's parameters by SPSA against a pool, then validate the result")
    tune.add_argument("policy", help="the policy and its starting parameters, e.g. patient:6 or pkg.mod:func:1,2")
    tune.add_argument("--params", required=True, metavar="NAME=LO:HI,...",
                      help="parameters to tune and their ranges, by name (patient: min_units, late_stock, peng_slack) "
                           "or as p<i>, e.g. min_units=1:8,late_stock=0:20")
    tune.add_argument("--against", required=True, metavar="POOL",
                      help="opponent pool, comma-separated policies (a number after a policy with parameters is one "
                           "more of its parameters: greedy,patient:2,6,1,random is three policies)")
    tune.add_argument("--budget", type=int, required=True,
                      help="deals played while tuning: each iteration plays its deals 6 times (theta+ and theta-, "
                           "the candidate at each of the 3 seats); the validation is extra")
    tune.add_argument("--seed", type=int, default=0)
    tune.add_argument("--out", default=None, help="tune folder (default runs/tune-POLICY-seedS; resumable)")
    tune.add_argument("--iteration-deals", type=int, default=200, help="new deals per SPSA iteration (default 200)")
    tune.add_argument("--validate-deals", type=int, default=5_000,
                      help="duplicate deals (x 6 seatings) of the validation, tuned vs start, on new deals "
                           "(default 5000)")
    tune.add_argument("--confidence", type=float, default=0.95, help="level of the validation interval (default 0.95)")
    tune.add_argument("--spsa", default=None, metavar="KEY=VALUE,...",
                      help="SPSA constants a, c, A, alpha, gamma (normalised coordinates; defaults: a_0 = 0.1, c = 0.2, "
                           "A = 10%% of the iterations, alpha 0.602, gamma 0.101)")
    tune.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    tune.add_argument("--quiet", action="store_true", help="no progress lines")

    prob = sub.add_parser("prob", help="probabilities of dealt-hand events: Monte Carlo with intervals, exact where known")
    prob.add_argument("events", nargs="*", metavar="EVENT",
                      help="events: NAME, NAME:VALUE or NAME:PARAM=VALUE, e.g. nao jiang_at_least_k:8 dealer_wins "
                           "(default: the standard table; --list shows all)")
    prob.add_argument("--deals", type=int, default=100_000, help="deals (default 100000)")
    prob.add_argument("--seed", type=int, default=2026)
    prob.add_argument("--seat", type=int, action="append", default=None, help="seat 0, 1 or 2 (repeatable; default all)")
    prob.add_argument("--batch-size", type=int, default=10_000)
    prob.add_argument("--confidence", type=float, default=0.95)
    prob.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    prob.add_argument("--out", default=None, help="also write the table to FILE (.csv or .parquet)")
    prob.add_argument("--hands", default=None, metavar="DIR",
                      help="also write the dealt hands of the same deals to DIR: deals.parquet (one row per deal "
                           "and seat), manifest.json, plots and report.md")
    prob.add_argument("--list", action="store_true", help="list the events and exit")
    prob.add_argument("--given", default=None, metavar="HAND",
                      help="condition on one seat's dealt hand (--seat, default 0; 31 cards for seat 0, 30 otherwise): "
                           "P(event) for the other seats' hands, exact where a closed form exists (the unseen cards "
                           "are dealt uniformly), Monte Carlo with intervals for all")

    equity = sub.add_parser("equity", help="hand equity: fix one seat's dealt hand, deal the rest at random, play to "
                                           "the end; win rate, payoff, P(小甲), hu against the seat's baseline")
    equity.add_argument("hand", help='the seat\'s dealt hand, e.g. "YJ*3 YS YX ..." (31 cards for seat 0, the '
                                     'dealer; 30 for seats 1 and 2)')
    equity.add_argument("--seat", type=int, default=0, help="the hand's seat (default 0, the dealer)")
    equity.add_argument("--policies", required=True, help="three policies, e.g. greedy,greedy,greedy")
    equity.add_argument("--deals", type=int, required=True, help="number of deals")
    equity.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    equity.add_argument("--out", default=None,
                        help="keep the deals (resumable): OUT/equity and OUT/baseline datasets, OUT/equity.csv, "
                             "OUT/hu_distribution.png")
    equity.add_argument("--workers", type=int, default=1, help="worker processes with --out (default 1: threads only)")
    equity.add_argument("--batch-size", type=int, default=10_000, help="deals per batch (default 10000)")
    equity.add_argument("--confidence", type=float, default=0.95)
    equity.add_argument("--no-baseline", action="store_true", help="skip the seat's unconditional baseline")
    equity.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    equity.add_argument("--quiet", action="store_true")

    experiment = sub.add_parser("experiment", help="run an experiment file and write its report")
    experiment.add_argument("action", choices=["run"], help="what to do")
    experiment.add_argument("file", help="experiment TOML file, e.g. experiments/dealer_advantage.toml")
    experiment.add_argument("--reports", default="reports", help="reports folder (default reports)")
    experiment.add_argument("--data", default=None, help="data folder (default runs/experiments/NAME)")
    experiment.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    experiment.add_argument("--confidence", type=float, default=0.95, help="level of every interval (default 0.95)")
    experiment.add_argument("--quiet", action="store_true")

    demo = sub.add_parser("demo", help="main job: simulate a small default run and write its report")
    demo.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    demo.add_argument("--deals", type=int, default=20_000, help="deals (default 20000)")
    demo.add_argument("--seed", type=int, default=2026)
    demo.add_argument("--policies", default="greedy,patient,random")
    demo.add_argument("--seating", choices=["fixed", "rotate", "all"], default=None,
                      help="as simulate --seating (default: rotate when the policies differ)")

    replay = sub.add_parser("replay", help="print one deal as JSON lines, one event per line")
    replay.add_argument("--seed", type=int, required=True, help="run seed")
    replay.add_argument("--deal", type=int, required=True, help="deal number within the run (0-based)")
    replay.add_argument("--policies", required=True, help="three policies, e.g. greedy,random,random")
    replay.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    replay.add_argument("--session-length", type=int, default=1, metavar="K",
                        help="the run's deals per session (default 1): deal N is dealt by its session's dealer, "
                             "found by playing the session's earlier deals")
    replay.add_argument("--seating", choices=["fixed", "rotate", "all"], default=None,
                        help="the run's seating (as simulate: default rotate when the policies differ): deal N is "
                             "played with the policies seated as in that run")
    replay.add_argument("--seating-index", type=int, default=0, metavar="J",
                        help="with --seating all: the row's seating 0..5 (column seating)")
    replay.add_argument("--output", metavar="FILE", help="write here instead of stdout")
    replay.add_argument("--engine", choices=["auto", "compiled", "interpreted"], default="auto",
                        help="compiled: the numba kernels (compiled first if numba's cache lacks them: about a "
                             "minute); interpreted: their Python source (NUMBA_DISABLE_JIT, same bytes, about a "
                             "second a deal); auto (default): compiled when cached, else interpreted")

    bench = sub.add_parser("bench", help="print throughput benchmarks")
    bench.add_argument("target", choices=["evaluator", "engine", "score"], help="what to benchmark")
    bench.add_argument("--holdings", type=int, default=200_000, help="holdings per evaluator benchmark (default 200000)")
    bench.add_argument("--deals", type=int, default=20_000, help="deals per engine benchmark (default 20000)")
    bench.add_argument("--lines", type=int, default=20_000, help="lines per score --jsonl benchmark (default 20000)")
    bench.add_argument("--seed", type=int, default=2026)
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")

    rules = sub.add_parser("rules", help="print the effective rule set as TOML")
    rules.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")

    compile_ = sub.add_parser("compile", help="compile the numba kernels once: later runs load them from the cache")
    compile_.add_argument("targets", nargs="*", metavar="TARGET",
                          help="what to compile: score, replay, deals, sessions, dealt-hands, prob, equity, "
                               "environment, generate (default: score replay deals dealt-hands)")
    compile_.add_argument("--all", action="store_true", help="every target")
    return parser


def _read_jsonl(path: str) -> list[dict[str, Any]]:
    try:
        fh: TextIO = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as exc:
        raise SimkitError(f"cannot read {path}: {exc.strerror}") from None
    records = []
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SimkitError(f"{path} line {lineno}: malformed JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise SimkitError(f"{path} line {lineno}: expected a JSON object")
            records.append((lineno, obj))
    return records


def _cmd_score(args: argparse.Namespace) -> int:
    from simkit.rules import RuleSet

    base_rules = RuleSet.from_strings(args.rule)
    if args.jsonl:
        if args.hand:
            raise SimkitError("give either a hand or --jsonl, not both")
        from simkit.evaluator.score import score_records

        # every line checked first, then one compiled call for all holdings (all or nothing)
        text = score_records(_read_jsonl(args.jsonl), base_rules, args.jsonl)
    else:
        if not args.hand or not args.hand.strip():
            raise SimkitError("no hand given (e.g. simkit score \"RJ*3 RS*2 RX*2\")")
        from simkit.evaluator.score import score_record

        text = json.dumps(score_record({"hand": args.hand, "exposed": args.exposed}, base_rules), ensure_ascii=False) + "\n"
    _write_output(text, args.output)
    return 0


def _write_output(text: str, path: str | None) -> None:
    """Write all at once (atomically for files): a failed run leaves no partial output."""
    if path is None:
        sys.stdout.write(text)
        return
    import os
    import uuid

    from simkit.storage.paths import check_out_file

    target = check_out_file(path)
    tmp = str(target.parent / f".{target.name}.simkit-{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask's mode, not 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _cmd_bench(args: argparse.Namespace) -> int:
    from simkit import bench

    if args.target == "evaluator":
        if args.holdings < 1000:
            raise SimkitError("--holdings must be at least 1000")
        result = bench.bench_evaluator(n=args.holdings, seed=args.seed)
        text = bench.format_evaluator_report(result)
    elif args.target == "score":
        if args.lines < 100:
            raise SimkitError("--lines must be at least 100")
        result = bench.bench_score(n=args.lines, seed=args.seed)
        text = bench.format_score_report(result)
    else:
        if args.deals < 100:
            raise SimkitError("--deals must be at least 100")
        result = bench.bench_engine(n=args.deals, seed=args.seed)
        text = bench.format_engine_report(result)
    print(json.dumps(result, indent=2) if args.json else text)
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    from simkit.rules import RuleSet
    from simkit.runner import simulate

    start = time.perf_counter()
    _compile_first(lambda: _warm_simulate(args.policies, RuleSet.from_strings(args.rule), args.session_length,
                                          args.seating), args.quiet)
    path = simulate(args.deals, args.policies, args.seed, args.out, RuleSet.from_strings(args.rule),
                    batch_size=args.batch_size, workers=args.workers, backend=args.backend,
                    scheduler=args.scheduler, quiet=args.quiet, session_length=args.session_length,
                    seating=args.seating)
    print(f"{args.deals:,} deals -> {path} ({time.perf_counter() - start:.1f} s)")
    return 0


def _warm_simulate(policies, rules, session_length, seating) -> None:
    from simkit.runner.simulate import warm_simulate

    warm_simulate(policies, rules, session_length, seating)


def _compile_first(workload, quiet: bool = False) -> None:
    """Compile (or load from the cache) a command's kernels before it starts, so that the
    first run says why it waits: ``simkit: compiling kernels (first run; cached afterwards)
    ... 41 s`` on stderr.  Best effort: a bad argument is left to the command to report."""
    from simkit.jit import compile_note, end_note

    with compile_note(quiet) as timer:
        try:
            workload()
        except Exception:  # noqa: BLE001 - the command itself reports its errors
            pass
        finally:
            end_note(timer, quiet)


def _cmd_compile(args: argparse.Namespace) -> int:
    from simkit.warmup import DEFAULT_TARGETS, TARGETS, warm

    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        raise SimkitError(f"unknown compile target {unknown[0]!r} (known: {', '.join(TARGETS)})")
    targets = list(TARGETS) if args.all else (args.targets or list(DEFAULT_TARGETS))
    start = time.perf_counter()
    seconds = warm(targets, out=sys.stdout)
    print(f"compiled in {seconds:.1f} s ({time.perf_counter() - start:.1f} s in all); cached for later runs")
    return 0


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise SimkitError(f"--confidence must lie strictly between 0 and 1, got {confidence!r}")
    return confidence


def _cmd_report(args: argparse.Namespace) -> int:
    from simkit.analysis.report import write_report

    print(write_report(args.dataset, args.out, confidence=_check_confidence(args.confidence)))
    return 0


def _parse_sprt(text: str) -> tuple[float, float, float]:
    parts = text.split(",")
    try:
        delta, alpha, beta = (float(x) for x in parts)
    except ValueError:
        raise SimkitError(f"--sprt takes delta,alpha,beta (three numbers), got {text!r}") from None
    if not (delta > 0 and 0 < alpha < 0.5 and 0 < beta < 0.5):
        raise SimkitError(f"--sprt needs delta > 0 and 0 < alpha, beta < 0.5, got {text!r}")
    return delta, alpha, beta


def _cmd_compare(args: argparse.Namespace) -> int:
    import re

    from simkit.studies.compare import compare, write_comparison_report
    from simkit.rules import RuleSet

    confidence = _check_confidence(args.confidence)
    sprt = _parse_sprt(args.sprt) if args.sprt else None
    deals = args.deals if args.deals is not None else (1_000_000 if sprt else 10_000)
    if deals < 2:
        raise SimkitError(f"--deals must be >= 2, got {deals}")
    out = args.out if args.out is not None else "runs/compare-" + re.sub(r"[^A-Za-z0-9.]+", "_", f"{args.policy_a}-{args.policy_b}") + f"-seed{args.seed}"
    start = time.perf_counter()
    result = compare(args.policy_a, args.policy_b, out, deals=deals, seed=args.seed,
                     rules=RuleSet.from_strings(args.rule), batch_size=args.batch_size, workers=args.workers,
                     sprt=sprt, confidence=confidence, quiet=args.quiet)
    report = write_comparison_report(result, out)
    print(result.text())
    if result.sprt is not None:
        from pathlib import Path

        from simkit.studies.compare import sprt_plot_stem

        print(f"log-likelihood ratio path: {Path(out) / (sprt_plot_stem('', 0) + '.png')}")
    print(f"({time.perf_counter() - start:.1f} s) -> {report}")
    return 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    from simkit.analysis.results import format_level
    from simkit.studies.tournament import run_tournament, write_tournament_report
    from simkit.rules import RuleSet

    confidence = _check_confidence(args.confidence)
    sprt = _parse_sprt(args.sprt) if args.sprt else None
    out = args.out if args.out is not None else f"runs/tournament-seed{args.seed}"
    start = time.perf_counter()
    result = run_tournament(args.policies, out, deals=args.deals, seed=args.seed, rules=RuleSet.from_strings(args.rule),
                            batch_size=args.batch_size, workers=args.workers, sprt=sprt, confidence=confidence,
                            resamples=args.resamples, quiet=args.quiet)
    report = write_tournament_report(result, out)
    ladder = result.ladder()
    print(f"ladder (Bradley-Terry, Elo scale, {result.anchor} = 0, {format_level(confidence)} bootstrap):")
    for rank, row in enumerate(ladder.itertuples(), start=1):
        print(f"  {rank}. {row.policy:<16} {row.rating:+7.0f} [{row.lo:+.0f}, {row.hi:+.0f}]  score {row.score:.3f}  "
              f"({row.deals:,} deals)")
    print(f"({time.perf_counter() - start:.1f} s) -> {report}")
    return 0


def _parse_spsa(text: str):
    from simkit.studies.tuning import SpsaSettings

    values: dict[str, float] = {}
    names = ("a", "c", "A", "alpha", "gamma")
    for piece in text.split(","):
        key, sep, value = piece.strip().partition("=")
        if not sep or key.strip() not in names:
            raise SimkitError(f"--spsa takes KEY=VALUE,... with KEY one of {', '.join(names)}, got {piece.strip()!r}")
        try:
            values[key.strip()] = float(value)
        except ValueError:
            raise SimkitError(f"--spsa {key.strip()} must be a number, got {value!r}") from None
    return SpsaSettings(**values)


def _cmd_tune(args: argparse.Namespace) -> int:
    import re

    from simkit.studies.tuning import parse_ranges, tune
    from simkit.rules import RuleSet

    confidence = _check_confidence(args.confidence)
    spsa = _parse_spsa(args.spsa) if args.spsa else None
    out = args.out if args.out is not None else "runs/tune-" + re.sub(r"[^A-Za-z0-9.]+", "_", args.policy) + \
        f"-seed{args.seed}"
    start = time.perf_counter()
    result = tune(args.policy, parse_ranges(args.params), args.against, args.budget, seed=args.seed, out=out,
                  iteration_deals=args.iteration_deals, validate_deals=args.validate_deals, confidence=confidence,
                  rules=RuleSet.from_strings(args.rule), spsa=spsa, quiet=args.quiet)
    print(result.text())
    print(f"({time.perf_counter() - start:.1f} s) -> {out}/report.md")
    return 0


def _cmd_prob(args: argparse.Namespace) -> int:
    import pandas as pd

    from simkit.analysis import exact as E
    from simkit.studies import probability as P
    from simkit.rules import RuleSet

    if args.given is not None and not args.list:
        return _cmd_prob_given(args)
    if args.list:
        for name, spec in E.EVENTS.items():
            kind = "exact + Monte Carlo" if spec.exact else "Monte Carlo only"
            param = f":{spec.param}=N" if spec.param else ""
            print(f"{name}{param}  ({kind})")
        return 0
    if args.out and not args.out.endswith((".csv", ".parquet")):
        raise SimkitError(f"--out must end in .csv or .parquet, got {args.out!r}")
    if args.hands is not None:
        from simkit.storage.paths import check_out_dir

        check_out_dir(args.hands, "--hands")
    try:
        events = [E.parse_event(text) for text in args.events] or None
        table = P.probability_table(args.deals, args.seed, events, seats=tuple(args.seat or (0, 1, 2)),
                                    batch_size=args.batch_size, confidence=args.confidence,
                                    rules=RuleSet.from_strings(args.rule))
    except ValueError as exc:
        raise SimkitError(str(exc)) from None
    with pd.option_context("display.max_rows", None, "display.width", 160):
        print(table.to_string(index=False, float_format=lambda x: f"{x:.6g}"))
    if args.out:
        from pathlib import Path

        from simkit.storage.files import atomic_write, write_parquet

        path = Path(args.out)
        if path.suffix == ".csv":
            atomic_write(path, lambda tmp: table.to_csv(tmp, index=False))
        else:
            write_parquet(table, path)
        print(f"-> {path}")
    if args.hands:
        print(f"-> {_write_hands(args.deals, args.seed, args.batch_size, RuleSet.from_strings(args.rule), args.hands)}")
    return 0


def _write_hands(deals: int, seed: int, batch_size: int, rules, out) -> Any:
    """The dealt hands of deals 0 .. deals - 1 of ``seed`` (the engine's deals), written with
    their report into ``out`` (``prob --hands``, ``deals``, ``demo``); the report's path."""
    from simkit.studies.dealt import deal_table
    from simkit.analysis.report import write_dealt_hands_report

    try:
        frame = deal_table(deals, seed, batch_size, rules)
    except ValueError as exc:
        raise SimkitError(str(exc)) from None
    return write_dealt_hands_report(frame, out, seed, batch_size, rules)


def _cmd_prob_given(args: argparse.Namespace) -> int:
    """``simkit prob --given HAND [--seat K]``: the other seats' dealt hands given seat K's."""
    import pandas as pd

    from simkit.analysis import exact as E
    from simkit.studies import conditional as C
    from simkit.rules import RuleSet

    if args.hands is not None:
        raise SimkitError("--hands does not combine with --given")
    if args.out and not args.out.endswith((".csv", ".parquet")):
        raise SimkitError(f"--out must end in .csv or .parquet, got {args.out!r}")
    if args.seat is not None and len(args.seat) > 1:
        raise SimkitError("with --given, --seat names the seat holding the given hand (once)")
    given_seat = args.seat[0] if args.seat else 0
    try:
        events = [E.parse_event(text) for text in args.events] or None
        table = C.conditional_table(args.given, given_seat, args.deals, args.seed, events,
                                    batch_size=args.batch_size, confidence=args.confidence,
                                    rules=RuleSet.from_strings(args.rule))
    except ValueError as exc:
        raise SimkitError(str(exc)) from None
    print(f"given seat {given_seat}'s dealt hand; rows: the other seats' hands")
    with pd.option_context("display.max_rows", None, "display.width", 160):
        print(table.to_string(index=False, float_format=lambda x: f"{x:.6g}"))
    if args.out:
        from pathlib import Path

        from simkit.storage.files import atomic_write, write_parquet

        path = Path(args.out)
        if path.suffix == ".csv":
            atomic_write(path, lambda tmp: table.to_csv(tmp, index=False))
        else:
            write_parquet(table, path)
        print(f"-> {path}")
    return 0


def _cmd_equity(args: argparse.Namespace) -> int:
    """``simkit equity HAND``: the hand's equity and its comparison with the seat's baseline."""
    from simkit.studies.equity import equity, write_equity_outputs
    from simkit.rules import RuleSet
    from simkit.storage.paths import check_out_dir

    if args.out is not None:
        check_out_dir(args.out)
    start = time.perf_counter()
    result = equity(args.hand, args.seat, args.policies, args.deals, args.seed, rules=RuleSet.from_strings(args.rule),
                    out=args.out, batch_size=args.batch_size, workers=args.workers, baseline=not args.no_baseline,
                    confidence=args.confidence, quiet=args.quiet)
    print(result.text())
    done = f"({time.perf_counter() - start:.1f} s)"
    if args.out is not None:
        paths = write_equity_outputs(result, args.out)
        done += " -> " + ", ".join(str(p) for p in paths)
    print(done)
    return 0


def _cmd_experiment(args: argparse.Namespace) -> int:
    from simkit.experiment import run_experiment
    from simkit.storage.paths import check_out_dir

    confidence = _check_confidence(args.confidence)
    check_out_dir(args.reports, "--reports")
    if args.data is not None:
        check_out_dir(args.data, "--data")
    report = run_experiment(args.file, args.reports, args.data, workers=args.workers, quiet=args.quiet,
                            confidence=confidence)
    print(report)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from simkit.studies.compare import compare, write_comparison_report
    from simkit.analysis.report import write_report
    from simkit.rules import RuleSet
    from simkit.runner import simulate

    from simkit.storage.paths import check_out_dir

    start = time.perf_counter()
    out = check_out_dir(args.out)
    _compile_first(lambda: _warm_demo(args.policies, args.seating))
    dataset = simulate(args.deals, args.policies, args.seed, out / "dataset", batch_size=5_000, seating=args.seating)
    report = write_report(dataset, out)
    _write_hands(args.deals, args.seed, 10_000, RuleSet(), out / "dealt_hands")
    comparison = compare("greedy", "patient", out / "compare", deals=max(2, args.deals // 10), seed=args.seed,
                         batch_size=1_000, quiet=True)
    write_comparison_report(comparison, out / "compare")
    print(comparison.text())
    print(f"{args.deals:,} deals ({args.policies}) in {time.perf_counter() - start:.1f} s -> {report} "
          f"(duplicate comparison: {out / 'compare' / 'report.md'}; dealt hands: {out / 'dealt_hands' / 'report.md'})")
    return 0


def _warm_demo(policies, seating) -> None:
    from simkit.warmup import warm, warm_simulate

    warm_simulate(policies, seating=seating)
    warm(["dealt-hands"])


def _cmd_replay(args: argparse.Namespace) -> int:
    import numpy as np

    from simkit.jit import interpreting
    from simkit.replay import replay_is_cached, replay_jsonl
    from simkit.rules import RuleSet

    if args.seed < 0 or args.deal < 0:
        raise SimkitError("--seed and --deal must be >= 0")
    if args.session_length < 1:
        raise SimkitError(f"--session-length must be >= 1, got {args.session_length}")
    if not 0 <= args.seating_index <= 5 or (args.seating != "all" and args.seating_index != 0):
        raise SimkitError(f"--seating-index takes 0..5 with --seating all, got {args.seating_index}")
    rules = RuleSet.from_strings(args.rule)
    engine = args.engine
    if engine == "auto":
        engine = "compiled" if replay_is_cached(args.deal, args.policies, args.session_length) else "interpreted"
    if engine == "interpreted" and not interpreting():
        return _run_interpreted(args.argv)
    with np.errstate(over="ignore"):  # interpreted: the random streams' uint64 arithmetic wraps, as compiled
        text = replay_jsonl(args.seed, args.deal, args.policies, rules, session_length=args.session_length,
                            seating=args.seating, seating_index=args.seating_index)
    _write_output(text, args.output)
    return 0


def _run_interpreted(argv: Sequence[str]) -> int:
    """Run this command line again in a child process whose kernels are plain Python
    (``NUMBA_DISABLE_JIT=1``: numba's switch, read when numba is imported, so not in this
    process); relay its output and exit status."""
    import os
    import subprocess

    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, "-m", "simkit", *argv], env=env, capture_output=True, check=False)
    sys.stdout.write(proc.stdout.decode("utf-8"))
    sys.stdout.flush()
    sys.stderr.write(proc.stderr.decode("utf-8"))
    return proc.returncode


def _cmd_deals(args: argparse.Namespace) -> int:
    """Alias of ``simkit prob --hands DIR`` without the event table."""
    from simkit.rules import RuleSet

    from simkit.storage.paths import check_out_dir

    if args.deals < 1 or args.batch_size < 1:
        raise SimkitError("--deals and --batch-size must be positive")
    if args.seed < 0:
        raise SimkitError(f"--seed must be >= 0, got {args.seed}")
    check_out_dir(args.out)
    start = time.perf_counter()
    report = _write_hands(args.deals, args.seed, args.batch_size, RuleSet.from_strings(args.rule), args.out)
    print(f"{args.deals:,} deals in {time.perf_counter() - start:.1f} s -> {report}")
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    """Print the effective rule set as TOML, each option preceded by a comment giving its
    default, the other reading and the seed words (``OPTION_DOCS``); the output parses back
    with ``RuleSet.from_toml``."""
    from simkit.rules import OPTION_DOCS, RuleSet

    lines = ["# simkit rule set (docs/rules.md §8); parse back with RuleSet.from_toml"]
    for line in RuleSet.from_strings(args.rule).to_toml().splitlines():
        name = line.split("=", 1)[0].strip()
        default, other, seed = OPTION_DOCS.get(name, ("(undocumented)",) * 3)
        lines.append(f"# default: {default}; other: {other}; seed: {seed}")
        lines.append(line)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``simkit`` console script."""
    parser = _build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv
    _import_from_current_folder()
    handlers = {
        "score": _cmd_score,
        "deals": _cmd_deals,
        "simulate": _cmd_simulate,
        "replay": _cmd_replay,
        "report": _cmd_report,
        "demo": _cmd_demo,
        "compare": _cmd_compare,
        "tournament": _cmd_tournament,
        "tune": _cmd_tune,
        "experiment": _cmd_experiment,
        "prob": _cmd_prob,
        "equity": _cmd_equity,
        "bench": _cmd_bench,
        "rules": _cmd_rules,
        "compile": _cmd_compile,
    }
    previous = _on_sigterm_raise()
    try:
        return handlers[args.command](args)
    except SimkitError as exc:
        print(f"simkit: error: {_as_flags(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # a file system error the checks could not foresee: one line, not a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"simkit: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except _Terminated:
        print("simkit: terminated", file=sys.stderr)
        return 128 + 15
    except KeyboardInterrupt:
        print("simkit: interrupted", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)


def _import_from_current_folder() -> None:
    """Let policies by import path (``experiments.my_policy:cautious``) come from the current
    folder, as under ``python -m simkit``: the ``simkit`` script's own ``sys.path`` starts at
    its install folder.  Appended, so nothing installed is shadowed."""
    import os

    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.append(here)


def _as_flags(exc: SimkitError) -> str:
    """The message of an error with the parameters it names (:attr:`SimkitError.parameters`,
    Python names: library errors never quote flags) written as this command line's flags.

    >>> _as_flags(SimkitError("session_length must be in 1..9, got 0", parameters=("session_length",)))
    '--session-length must be in 1..9, got 0'
    >>> _as_flags(SimkitError("scheduler needs backend='dask', got backend='local'", parameters=("scheduler", "backend")))
    '--scheduler needs --backend dask, got --backend local'
    """
    import re

    text = str(exc)
    for name in getattr(exc, "parameters", ()):
        flag = "--" + name.replace("_", "-")
        # a whole-word name, with an optional =value (quoted or bare) that becomes " value"
        pattern = rf"(?<![\w-]){re.escape(name)}(?:=(?:'([^']*)'|\"([^\"]*)\"|([^\s,;)]+)))?(?![\w-])"
        text = re.sub(pattern, lambda m: flag + "".join(f" {g}" for g in m.groups() if g is not None), text)
    return text


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interrupt so that it stops a run as Ctrl-C does (workers
    stopped, whole files only, one line)."""


def _raise_terminated(signum, frame) -> None:
    raise _Terminated()


def _on_sigterm_raise():
    """Handle SIGTERM like SIGINT (in the main thread); the previous handler, to restore."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_terminated)


if __name__ == "__main__":
    raise SystemExit(main())
