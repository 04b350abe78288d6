"""The ``simkit`` command line.

    simkit score "RJ*3 RS*2 RX*2" [--exposed "peng:RC kong:YZ"] [--rule key=value ...]
    simkit score --jsonl FILE            # one {"hand", "exposed", "rules"} object per line
    simkit deals [--deals N] [--seed S] --out DIR   # alias of prob --hands DIR (dealt hands, Parquet + report)
    simkit simulate --deals N --policies a,b,c --seed S --out DIR [--workers K] [--batch-size B]
                    [--backend local|dask] [--scheduler ADDRESS] [--rule key=value ...]
                    [--session-length K]  # sessions of K deals with a rotating dealer
                    [--seating fixed|rotate|all]  # default: rotate when the policies differ
    simkit report DATASET [--out DIR] [--confidence C]   # report.md + plots in DATASET-report/ (or DIR)
    simkit compare A B [--deals N | --sprt delta,alpha,beta [--burn-in N]] [--seed S] [--out DIR] [--confidence C]
                   [--luck [MODEL]] [--json]   # --luck: also the luck-adjusted (AIVAT-style) estimate
                   [--variance-reduction none|regression|luck]   # the adjusted estimate (default none)
                   [--design six|pairs]                          # which deals the seatings play (default six;
                                                                  # also tournament)
                   [--backend local|dask] [--scheduler ADDRESS]   # also tournament, equity,
                                                                  # review, tune, train, luck-model, experiment run
    simkit luck-model --out FILE.npz [--seed S] [--deals N] [--pair A,B ...]   # the value model of --luck
    simkit tournament P1 P2 [P3 ...] [--deals N] [--sprt delta,alpha,beta] [--seed S] [--out DIR]
    simkit tune POLICY --params NAME=LO:HI[,NAME=LO:HI ...] --against POOL --budget DEALS [--seed S] [--out DIR]
                [--iteration-deals M] [--validate-deals N] [--confidence C] [--spsa KEY=VALUE,...] [--quiet]
    simkit prob [EVENT ...] [--deals N] [--seed S] [--seat K] [--out FILE] [--hands DIR]
    simkit prob [EVENT ...] --given "HAND" [--seat K]   # the other seats' hands given seat K's (default 0)
    simkit equity "HAND" [--seat 0|1|2] --policies a,b,c --deals N [--seed S] [--out DIR] [--workers K]
    simkit experiment run experiments/NAME.toml [--workers K] [--reports DIR] [--data DIR] [--out DIR] [--scale F]
    simkit demo --out DIR                # the main job: a small simulation + its report
    simkit replay --seed S --deal N --policies a,b,c [--rule key=value ...] [--session-length K]
                  [--seating fixed|rotate|all [--seating-index J]] [--engine auto|compiled|interpreted]
    simkit play [--seat N] [--bots P1 P2] [--seed S] [--deals K] [--log FILE] [--rule key=value ...]
                                         # you at the table against two bots; the log goes to simkit review
    simkit bench evaluator|engine|score|parquet [--holdings N] [--deals N] [--lines N] [--seed S] [--json]
    simkit bench all --markdown [--out FILE]   # docs/benchmarks.md: hardware + one table per workload (CPU time)
    simkit rules [--rule key=value ...]  # print the effective rule set as TOML
    simkit compile [--all] [TARGET ...]  # compile the numba kernels once (cached for later runs)

Every argument is checked before any work (:mod:`simkit.cliargs`, where the commands and their
arguments are defined as data).  Invalid input exits with status 2 and one line on stderr; so
does a Python policy that raises (its traceback too with ``--debug`` or ``SIMKIT_DEBUG=1``).

A policy is a name (``greedy``, ``patient:2,6,1``) or a user's jitted policy by import path,
``package.module:function[:p0,p1,...]``; like ``python -m``, the command line imports such
modules from the current folder too (and its worker processes inherit that).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import sys
import time
from typing import Any, Sequence

from simkit import defaults as D
from simkit.cliargs import EXIT_BAD_INPUT, build_parser, check_arguments
from simkit.errors import SimkitError

# Lazy for speed: each command imports the simkit modules it uses inside its handler (and
# simkit.cliargs those its checks need), so that `simkit --help`, `simkit rules` or a bad
# number never load numba, pandas or pyarrow (the CLI is the top layer: these imports dodge no
# cycle; tests/test_architecture.py allows them in the CLI only).

EXIT_INTERNAL = 1  # a bug of simkit (not of the input): one line, the traceback with --debug
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_TERMINATED = 128 + 15  # SIGTERM


def _read_jsonl(path: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line of ``path`` ('-': standard input), read
    as UTF-8 (the file was checked by :func:`simkit.cliargs.input_file`; stdin is checked here)."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
        text = data.decode("utf-8")
    except OSError as exc:
        raise SimkitError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SimkitError(f"{'standard input' if path == '-' else path} is not UTF-8 text "
                          f"(byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
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
    if args.jsonl:  # a hand or --jsonl: checked by simkit.cliargs
        from simkit.evaluator.score import score_records

        # every line checked first, then one compiled call for all holdings (all or nothing)
        text = score_records(_read_jsonl(args.jsonl), base_rules, args.jsonl)
    else:
        from simkit.evaluator.score import score_record

        text = json.dumps(score_record({"hand": args.hand, "exposed": args.exposed}, base_rules), ensure_ascii=False) + "\n"
    _write_output(text, args.output)
    return 0


def _write_output(text: str, path: str | None) -> None:
    """Write all at once (atomically for files): a failed run leaves no partial output."""
    if path is None:
        sys.stdout.write(text)
        return
    from simkit.storage.files import write_text  # the project's temp-file scheme, cleaned up at start
    from simkit.storage.paths import check_out_file

    write_text(check_out_file(path), text)


def _cmd_bench(args: argparse.Namespace) -> int:
    from simkit import bench

    # every argument (--out included) is checked before the first timing
    text = bench.run_bench(args.target, holdings=args.holdings, deals=args.deals, lines=args.lines, seed=args.seed,
                           as_json=args.json, markdown=args.markdown, out=args.out)
    _write_output(text, args.out)
    return 0


def _simulate_spec(args: argparse.Namespace):
    """The :class:`~simkit.specs.simulate.SimulateSpec` of ``simkit simulate``'s arguments."""
    from simkit.rules import RuleSet
    from simkit.specs.simulate import SimulateSpec

    return SimulateSpec(args.deals, args.policies, args.seed, RuleSet.from_strings(args.rule),
                        batch_size=args.batch_size, session_length=args.session_length, seating=args.seating)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from simkit.runner import simulate

    start = time.perf_counter()
    spec = _simulate_spec(args)
    _compile_first(lambda: _warm_simulate(spec.policies, spec.rules, spec.session_length, spec.seating), args.quiet)
    path = simulate(spec, args.out, _execution(args))
    print(f"{args.deals:,} deals -> {path} ({time.perf_counter() - start:.1f} s)")
    return 0


def _warm_simulate(policies, rules, session_length, seating) -> None:
    from simkit.runner.simulate import warm_simulate

    warm_simulate(policies, rules, session_length, seating)


def _check_value_model(luck: bool | str | None, seed: int) -> None:
    """``--luck``'s model loaded and checked (a missing or foreign file, a model trained on this
    seed: one line), before a command compiles or plays anything."""
    if luck is not None:
        from simkit.runner.value_model import value_model_for

        value_model_for(luck, seed)


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

    targets = list(TARGETS) if args.all else (args.targets or list(DEFAULT_TARGETS))
    start = time.perf_counter()
    seconds = warm(targets, out=sys.stdout)
    print(f"compiled in {seconds:.1f} s ({time.perf_counter() - start:.1f} s in all); cached for later runs")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from simkit.analysis.report import write_report
    from simkit.policies.registry import label_of_text

    print(write_report(args.dataset, args.out, confidence=args.confidence, policy_label=label_of_text))
    return 0


def _luck_argument(value: str | None) -> bool | str | None:
    """``--luck``'s value as the library takes it: None when not given, True for the shipped
    value model (``--luck`` alone), else the model file or ``playouts:K`` as given."""
    return None if value is None else (True if value == "builtin" else value)


def _compare_spec(args: argparse.Namespace):
    """The :class:`~simkit.specs.compare.CompareSpec` of ``simkit compare``'s arguments (--deals
    filled in by simkit.cliargs; the spec refuses a value model with another method, regression
    with an SPRT, an adjustment with design pairs: one line before any work)."""
    from simkit.rules import RuleSet
    from simkit.specs.compare import CompareSpec

    return CompareSpec(args.policy_a, args.policy_b, deals=args.deals, seed=args.seed,
                       rules=RuleSet.from_strings(args.rule), batch_size=args.batch_size, design=args.design,
                       sprt=args.sprt, confidence=args.confidence, luck=_luck_argument(args.luck),
                       burn_in=args.burn_in, variance_reduction=args.variance_reduction)


def _tournament_spec(args: argparse.Namespace):
    """The :class:`~simkit.specs.tournament.TournamentSpec` of ``simkit tournament``'s arguments
    (the spec refuses repeated policies and luck with design pairs: one line before any work)."""
    from simkit.rules import RuleSet
    from simkit.specs.tournament import TournamentSpec

    return TournamentSpec(args.policies, deals=args.deals, seed=args.seed, rules=RuleSet.from_strings(args.rule),
                          batch_size=args.batch_size, sprt=args.sprt, design=args.design,
                          confidence=args.confidence, resamples=args.resamples, luck=_luck_argument(args.luck),
                          burn_in=args.burn_in)


def _cmd_compare(args: argparse.Namespace) -> int:
    from simkit.studies.compare import compare, write_comparison_report
    from simkit.rules import RuleSet

    out = args.out  # --sprt parsed, --deals and --out defaults filled in by simkit.cliargs
    start = time.perf_counter()
    rules = RuleSet.from_strings(args.rule)
    _check_value_model(_luck_argument(args.luck), args.seed)  # bad input: one line before any work, compiling included
    spec = _compare_spec(args)
    _compile_first(lambda: _warm_simulate(f"{args.policy_a},{args.policy_b},{args.policy_b}", rules, 1, "fixed"),
                   args.quiet)
    result = compare(spec, out, _execution(args))
    text = json.dumps(result.to_json(), ensure_ascii=False) if args.json else result.text()
    if not _writable(out):  # e.g. on read-only media: compare read the finished comparison, wrote nothing
        print(text)
        if not args.quiet:
            print(f"simkit: {out} already holds this comparison, complete: nothing to compute or write",
                  file=sys.stderr)
        return 0
    report = write_comparison_report(result, out)
    print(text)
    if args.json:
        return 0
    if result.sprt is not None:
        from pathlib import Path

        from simkit.studies.compare import sprt_plot_stem

        print(f"log-likelihood ratio path: {Path(out) / (sprt_plot_stem('', 0) + '.png')}")
    print(f"({time.perf_counter() - start:.1f} s) -> {report}")
    return 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    from simkit.analysis.results import format_level
    from simkit.studies.tournament import console_lines, run_tournament, write_tournament_report
    from simkit.rules import RuleSet

    out, confidence = args.out, args.confidence
    start = time.perf_counter()
    _check_value_model(_luck_argument(args.luck), args.seed)  # bad input: one line before any work, compiling included
    spec = _tournament_spec(args)
    seated = (list(args.policies) * 3)[:3]  # a first run says it compiles before it plays
    _compile_first(lambda: _warm_simulate(seated, RuleSet.from_strings(args.rule), 1, "fixed"), args.quiet)
    result = run_tournament(spec, out, _execution(args))
    report = write_tournament_report(result, out)
    ladder = result.ladder()
    print(f"ladder (payoff rating in 牌 per seat per deal, and Davidson rating on the Elo scale; {result.anchor} = 0; "
          f"{format_level(confidence)} bootstrap):")
    for rank, row in enumerate(ladder.itertuples(), start=1):
        print(f"  {rank}. {row.policy:<16} {row.payoff:+.3f} [{row.payoff_lo:+.3f}, {row.payoff_hi:+.3f}]  "
              f"{row.rating:+5.0f} [{row.lo:+.0f}, {row.hi:+.0f}]  ahead {row.ahead:.3f}, level {row.level:.3f}  "
              f"({row.deals:,} deals)")
    print("\n".join(console_lines(result)))
    print(f"({time.perf_counter() - start:.1f} s) -> {report}")
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    from simkit.studies.tuning import tune

    out = args.out
    start = time.perf_counter()
    result = tune(_tune_spec(args), out, _execution(args))
    print(result.text())
    print(f"({time.perf_counter() - start:.1f} s) -> {out}/report.md")
    return 0


def _execution(args: argparse.Namespace):
    """How a command's run executes: its --workers, --backend, --scheduler and --quiet."""
    from simkit.specs.base import Execution

    return Execution(workers=args.workers, backend=args.backend, scheduler=args.scheduler, quiet=args.quiet)


def _tune_spec(args: argparse.Namespace):
    """The :class:`~simkit.specs.tune.TuneSpec` of ``simkit tune``'s arguments (--spsa: {key:
    finite float}, simkit.cliargs; SpsaSettings checks their ranges)."""
    from simkit.rules import RuleSet
    from simkit.specs.tune import TuneSpec

    return TuneSpec(args.policy, args.params, args.against, args.budget, seed=args.seed,
                    iteration_deals=args.iteration_deals, validate_deals=args.validate_deals,
                    confidence=args.confidence, rules=RuleSet.from_strings(args.rule), spsa=args.spsa)


def _train_spec(args: argparse.Namespace):
    """The :class:`~simkit.specs.train.TrainSpec` of ``simkit train``'s arguments."""
    from simkit.rules import RuleSet
    from simkit.specs.train import TrainSpec

    return TrainSpec(seed=args.seed, generations=args.generations, deals=args.deals, rate=args.rate,
                     hidden=args.hidden, epochs=args.epochs, alpha=args.alpha, check_deals=args.check_deals,
                     rules=RuleSet.from_strings(args.rule))


def _luck_model_spec(args: argparse.Namespace):
    """The :class:`~simkit.specs.luck_model.LuckModelSpec` of ``simkit luck-model``'s
    arguments (no --pair: the spec's default pairs)."""
    from simkit.rules import RuleSet
    from simkit.specs.luck_model import LuckModelSpec

    pairs = {"pairs": args.pair} if args.pair else {}
    return LuckModelSpec(seed=args.seed, deals=args.deals, check_deals=args.check_deals, hidden=args.hidden,
                         epochs=args.epochs, rules=RuleSet.from_strings(args.rule), **pairs)


def _learn_module(command: str, name: str):
    """``simkit.learn.NAME``, or a one-line error when scikit-learn (the extra ``simkit[learn]``)
    is not installed."""
    import importlib

    try:
        return importlib.import_module(f"simkit.learn.{name}")
    except ModuleNotFoundError as exc:
        if exc.name in ("sklearn", "threadpoolctl"):
            raise SimkitError(f"simkit {command} needs scikit-learn: pip install 'simkit[learn]' (or pip install "
                              "scikit-learn)") from None
        raise


def _cmd_train(args: argparse.Namespace) -> int:
    training = _learn_module("train", "train")

    start = time.perf_counter()
    command = "simkit " + " ".join(shlex.quote(word) for word in sys.argv[1:])
    result = training.train(_train_spec(args), args.out, _execution(args), command=command)
    best = result.best
    c = best["check"]
    print(f"model: {result.model} (generation {best['generation']} of {len(result.generations)}; check against expert "
          f"{c['mean']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}] 牌 per seat per deal on {c['deals']:,} deals of seed "
          f"{c['seed']})")
    print(f"play it as learned:{result.model}")
    print(f"({time.perf_counter() - start:.1f} s) -> {result.out / 'report.md'}")
    return 0


def _cmd_luck_model(args: argparse.Namespace) -> int:
    value = _learn_module("luck-model", "value")

    start = time.perf_counter()
    model = value.train_value_model(_luck_model_spec(args), args.out, _execution(args),
                                    command="simkit " + " ".join(shlex.quote(word) for word in sys.argv[1:]))
    before, after = model.meta["training"]["check_variance"]
    print(f"value model: {model.describe()}; weight {model.meta['training']['weight']:.3f}, duplicate variance "
          f"{before:.3f} -> {after:.3f} on its {args.check_deals:,} check deals")
    print(f"use it as: simkit compare A B --luck {args.out} --seed S (S other than {args.seed})")
    print(f"({time.perf_counter() - start:.1f} s)")
    return 0


def _cmd_prob(args: argparse.Namespace) -> int:
    """``simkit prob``: the event table of dealt hands (``--given``: of the other seats' hands
    given one seat's), ``--list``: the events."""
    from simkit.analysis import exact as E
    from simkit.rules import RuleSet

    if args.list:
        former = {new: old for old, new in E.EVENT_ALIASES.items()}
        for name, spec in E.EVENTS.items():
            kind = "exact + Monte Carlo" if spec.exact else "Monte Carlo only"
            param = f":{spec.param}=N" if spec.param else ""
            seats = "" if spec.seats == (0, 1, 2) else ", seat 0 (the dealer) only"
            alias = f"; formerly {former[name]}" if name in former else ""
            print(f"{name}{param}  ({kind}{seats}{alias})\n    {spec.description}")
        print("\nColumns of the table: p, the share of dealt hands with the event (Monte Carlo); lo, hi: its "
              "interval; exact: the closed-form probability; z = (p - exact) / standard error of p: |z| above "
              "about 3 would mean the simulation and the formula disagree.")
        return 0
    rules = RuleSet.from_strings(args.rule)
    try:
        events = [E.parse_event(text) for text in args.events] or None
        if args.given is not None:  # --hands excluded, --seat once: checked by simkit.cliargs
            from simkit.studies import conditional as C

            given_seat = args.seat[0] if args.seat else 0
            table = C.conditional_table(args.given, given_seat, args.deals, args.seed, events,
                                        batch_size=args.batch_size, confidence=args.confidence, rules=rules)
            print(f"given seat {given_seat}'s dealt hand; rows: the other seats' hands")
        else:
            from simkit.studies import probability as P

            table = P.probability_table(args.deals, args.seed, events, seats=tuple(args.seat or (0, 1, 2)),
                                        batch_size=args.batch_size, confidence=args.confidence, rules=rules)
    except ValueError as exc:
        raise SimkitError(str(exc)) from None
    _print_table(table, args.out)
    if "z" in getattr(table, "columns", ()):
        print("z = (p - exact) / standard error of p (|z| above about 3: simulation and formula disagree); "
              "simkit prob --list explains every event")
    if args.hands:
        print(f"-> {_write_hands(args.deals, args.seed, args.batch_size, rules, args.hands)}")
    return 0


def _print_table(table, out: str | None) -> None:
    """Print an event table; with ``out`` (.csv or .parquet, checked by simkit.cliargs) also write it."""
    import pandas as pd

    with pd.option_context("display.max_rows", None, "display.width", 160):
        print(table.to_string(index=False, float_format=lambda x: f"{x:.6g}"))
    if out:
        from pathlib import Path

        from simkit.storage.files import atomic_write, write_parquet

        path = Path(out)
        if path.suffix == ".csv":
            atomic_write(path, lambda tmp: table.to_csv(tmp, index=False))
        else:
            write_parquet(table, path)
        print(f"-> {path}")


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


def _equity_spec(args: argparse.Namespace):
    """The :class:`~simkit.specs.equity.EquitySpec` of ``simkit equity``'s arguments."""
    from simkit.rules import RuleSet
    from simkit.specs.equity import EquitySpec

    return EquitySpec(args.hand, args.seat, args.policies, args.deals, args.seed, RuleSet.from_strings(args.rule),
                      batch_size=args.batch_size, baseline=not args.no_baseline, confidence=args.confidence)


def _cmd_equity(args: argparse.Namespace) -> int:
    """``simkit equity HAND``: the hand's equity and its comparison with the seat's baseline."""
    from simkit.studies.equity import equity, write_equity_outputs

    start = time.perf_counter()
    result = equity(_equity_spec(args), args.out, _execution(args))
    print(result.text())
    done = f"({time.perf_counter() - start:.1f} s)"
    if args.out is not None and not _writable(args.out):  # e.g. read-only media: equity read the finished run
        if not args.quiet:
            print(f"simkit: {args.out} already holds this equity run, complete: nothing to compute or write",
                  file=sys.stderr)
    elif args.out is not None:
        paths = write_equity_outputs(result, args.out)
        done += " -> " + ", ".join(str(p) for p in paths)
    print(done)
    return 0


def _cmd_experiment(args: argparse.Namespace) -> int:
    from simkit.experiment import run_experiment

    # the file (regular, UTF-8), the folders (--out alone, or --reports/--data) and --scale: simkit.cliargs
    report = run_experiment(args.file, args.reports if args.reports is not None else "reports", args.data,
                            confidence=args.confidence, scale=args.scale, out=args.out, execution=_execution(args))
    print(report)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from simkit.studies.compare import compare, write_comparison_report
    from simkit.analysis.report import check_report_dir, mark_report_dir, write_report
    from simkit.rules import RuleSet
    from simkit.runner import simulate
    from simkit.specs.simulate import SimulateSpec
    from simkit.specs.base import Execution
    from simkit.specs.compare import CompareSpec

    start = time.perf_counter()
    out = mark_report_dir(check_report_dir(args.out))  # new, empty or a report's (also checked by simkit.cliargs)
    _compile_first(lambda: _warm_demo(args.policies, args.seating))
    dataset = simulate(SimulateSpec(args.deals, args.policies, args.seed, batch_size=5_000, seating=args.seating),
                       out / "dataset")
    report = write_report(dataset, out)  # a new dataset: its manifest holds the labels
    _write_hands(args.deals, args.seed, 10_000, RuleSet(), out / "dealt_hands")
    comparison = compare(CompareSpec("greedy", "patient", deals=max(2, args.deals // 10), seed=args.seed,
                                     batch_size=1_000), out / "compare", Execution(quiet=True))
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

    rules = RuleSet.from_strings(args.rule)
    engine = args.engine
    if engine == "auto":
        engine = "compiled" if replay_is_cached(args.deal, args.policies, args.session_length) else "interpreted"
    if engine == "interpreted" and not interpreting():
        return _run_interpreted(args.argv)
    with np.errstate(over="ignore"):  # interpreted: the random streams' uint64 arithmetic wraps, as compiled
        text = replay_jsonl(args.seed, args.deal, args.policies, rules, session_length=args.session_length,
                            seating=args.seating, seating_index=args.seating_index)
        if args.position is not None:
            position = _logged_position(text.splitlines(), args.position, f"deal {args.deal}")
            text = (position.to_json() if args.json else position.text()) + "\n"
    _write_output(text, args.output)
    return 0


def _logged_position(lines, at: int, name: str):
    from simkit.replay import log_decisions

    decisions = log_decisions(lines)
    if at >= len(decisions):
        raise SimkitError(f"{name} has {len(decisions)} decisions (0..{len(decisions) - 1}), not {at + 1}",
                          parameters=("position", "at"))
    return decisions[at].position


def _cmd_analyze(args: argparse.Namespace) -> int:
    """``simkit analyze POSITION``: every legal action rolled out and raced."""
    from simkit.engine.position import parse_position
    from simkit.specs.analyze import AnalyzeSpec
    from simkit.specs.base import Execution
    from simkit.studies.analyze import analyze_position

    policy = _rollout_policy(args.policy)
    if args.log is not None:
        from simkit.studies.review import read_decision_log

        decisions = read_decision_log(args.log)
        if args.at >= len(decisions):
            raise SimkitError(f"{args.log} has {len(decisions)} decisions (0..{len(decisions) - 1}), not "
                              f"{args.at + 1}", parameters=("at",))
        position = decisions[args.at].position
    else:
        position = parse_position(_position_text(args.position))
    start = time.perf_counter()
    spec = AnalyzeSpec(policy=policy, rollouts=args.rollouts, seed=args.seed, luck=_luck_argument(args.luck),
                       batch=args.batch, confidence=args.confidence, race=not args.no_race, sharpen=args.sharpen,
                       tolerance=args.tolerance, belief=args.belief, belief_noise=args.belief_noise,
                       confirm=not args.no_confirm)
    result = analyze_position(position, spec, Execution(workers=args.workers))
    if args.json:
        print(result.to_json())
    else:
        print(result.table())
        print(f"({time.perf_counter() - start:.1f} s)")
    return 0


def _rollout_policy(text: str):
    """The rollout policy, checked before any position or log is read."""
    from simkit.policies.registry import parse_policy
    from simkit.runner.rollout import rollout_policy_arrays

    spec = parse_policy(text)
    rollout_policy_arrays(spec)
    return spec


def _position_text(text: str) -> str:
    """A position argument: the text itself, or the file it names."""
    import os

    if os.path.isfile(text):
        from simkit.storage.files import read_regular

        try:
            return read_regular(text).decode("utf-8")
        except UnicodeDecodeError:
            raise SimkitError(f"position file {text}: not UTF-8 text") from None
    return text


def _cmd_review(args: argparse.Namespace) -> int:
    """``simkit review LOG [LOG ...] --seat K``: each decision against rollouts of every option
    (several logs: each in turn, on one Dask connection with ``--backend dask``)."""
    from simkit.runner.simulate import dask_session
    from simkit.specs.review import ReviewSpec
    from simkit.studies.reference import LogPolicyError
    from simkit.studies.review import (
        read_decision_log,
        review_decisions,
        review_log_against_reference,
        review_table,
        write_review_report,
        write_reviews_report,
    )

    start = time.perf_counter()
    spec = ReviewSpec(seat=args.seat, policy=_rollout_policy(args.policy), rollouts=args.rollouts, seed=args.seed,
                      luck=_luck_argument(args.luck), confidence=args.confidence, sharpen=args.sharpen,
                      belief=args.belief, belief_noise=args.belief_noise,
                      reference=None if args.reference == "none" else args.reference, samples=args.samples)
    execution = _execution(args)
    logs = list(args.log)
    every_decisions = [read_decision_log(log) for log in logs]  # every log read (or refused) before any rollout
    several = len(logs) > 1
    reviews = []
    # --backend dask: connected (or refused in one line) before any rollout; the loss against the
    # reference runs here, the decisions' analyses on the cluster
    with dask_session(args.backend, args.workers, args.scheduler) as client:
        for log, decisions in zip(logs, every_decisions):
            reference = None
            if spec.reference is not None:  # first: a bad name is refused before the rollouts
                try:
                    reference = review_log_against_reference(log, spec, execution)
                except LogPolicyError as exc:  # a bot of the log's deal line the rollouts cannot seat
                    if args.reference != D.DEFAULT_REFERENCE:  # the reference asked for: no review without it
                        raise
                    where = f"{log}: " if several else ""
                    print(f"simkit: note: {where}no loss against {args.reference}: {exc}", file=sys.stderr)
            review = review_decisions(decisions, spec, execution, client=client, log=log if several else None)
            reviews.append(dataclasses.replace(review, reference=reference))
    for log, review in zip(logs, reviews):
        if args.json:
            print(json.dumps({"log": log, **json.loads(review.to_json())}) if several else review.to_json())
        else:
            print((f"== {log}\n" if several else "") + review_table(review, args.min_loss))
    if args.out is not None:
        path = (write_reviews_report(reviews, logs, args.out, args.min_loss) if several
                else write_review_report(reviews[0], args.out, args.min_loss))
        if not args.json:
            print(f"({time.perf_counter() - start:.1f} s) -> {path}")
    if args.html is not None:
        from simkit.studies.review_page import write_review_html

        page = write_review_html(reviews[0], args.html, logs[0])
        if not args.json:
            print(f"({time.perf_counter() - start:.1f} s) -> {page}")
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    """``simkit play``: a person at the table against two bots (:mod:`simkit.studies.table`)."""
    from simkit.rules import RuleSet
    from simkit.studies.table import (TerminalPerson, play_table, table_setup, warm_first_decision,
                                      warm_rest_in_background)

    setup = table_setup(seat=args.seat, bots=args.bots, rules=RuleSet.from_strings(args.rule), seed=args.seed,
                        deals=args.deals, log=args.log or "", hint_rollouts=args.hint_rollouts,
                        hint_policy=args.hint_policy)  # before any work
    first: list = []  # the first decision's position, for the hint's warm-up
    _compile_first(lambda: first.append(warm_first_decision(setup)))  # what the first decision needs, no more
    warm_rest_in_background(setup, first[0] if first else None)  # the bots and the hint, while the person reads
    play_table(setup, TerminalPerson())
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    """``simkit calibrate POLICY``: the review's predicted losses against paired play."""
    from simkit.rules import RuleSet
    from simkit.specs.base import Execution
    from simkit.specs.calibrate import CalibrateSpec
    from simkit.studies.reference import calibrate, write_calibration_report

    start = time.perf_counter()
    spec = CalibrateSpec(args.policy, reference=args.reference, seat=args.seat, deals=args.deals, seed=args.seed,
                         first_deal=args.first_deal, samples=args.samples, rules=RuleSet.from_strings(args.rule),
                         confidence=args.confidence)
    result = calibrate(spec, Execution(workers=args.workers, quiet=args.quiet))
    print(json.dumps(result.to_dict()) if args.json else result.text())
    if args.out is not None:
        path = write_calibration_report(result, args.out)
        if not args.json:
            print(f"({time.perf_counter() - start:.1f} s) -> {path}")
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


HANDLERS = {
    "score": _cmd_score,
    "deals": _cmd_deals,
    "simulate": _cmd_simulate,
    "replay": _cmd_replay,
    "analyze": _cmd_analyze,
    "review": _cmd_review,
    "play": _cmd_play,
    "calibrate": _cmd_calibrate,
    "report": _cmd_report,
    "demo": _cmd_demo,
    "compare": _cmd_compare,
    "luck-model": _cmd_luck_model,
    "tournament": _cmd_tournament,
    "tune": _cmd_tune,
    "train": _cmd_train,
    "experiment": _cmd_experiment,
    "prob": _cmd_prob,
    "equity": _cmd_equity,
    "bench": _cmd_bench,
    "rules": _cmd_rules,
    "compile": _cmd_compile,
}


THREAD_VARIABLES = ("NUMBA_NUM_THREADS",)  # numba fails deep inside a run on a value that is no count


def _check_thread_environment() -> None:
    """A thread count set in the environment that is not a positive integer is a one-line
    error naming the variable, before any work (numba would warn with a traceback, or fail as
    an internal error when a run starts its threads)."""
    for name in THREAD_VARIABLES:
        value = os.environ.get(name)
        if value is not None and not (value.strip().isdigit() and int(value) > 0):
            raise SimkitError(f"environment variable {name}={value!r} must be a positive integer (a number of "
                              "threads), or unset")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``simkit`` console script: parse, check every argument
    (:mod:`simkit.cliargs`: before any work), run the command; an error is one line on stderr
    (its traceback too with ``--debug`` or ``SIMKIT_DEBUG=1``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, checks = build_parser()
    args = parser.parse_args(argv)  # argparse's own errors: one line, exit status 2
    args.argv = argv
    debug = args.debug or _debug_from_environment()
    _one_line_warnings(debug)
    _import_from_current_folder()
    previous = _on_sigterm_raise()
    try:
        _check_thread_environment()
        check_arguments(args, checks)
        return HANDLERS[args.command](args)
    except SimkitError as exc:
        return _fail(_as_flags(exc), EXIT_BAD_INPUT, debug)
    except OSError as exc:  # a file system error the checks could not foresee: one line, not a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}", EXIT_BAD_INPUT, debug)
    except _Terminated:
        print("simkit: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("simkit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - a bug: one line unless --debug (a policy that raises is a DealError)
        return _fail(_internal_error(exc, debug), EXIT_INTERNAL, debug, prefix="simkit: internal error: ")
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)


def console_main() -> None:
    """The ``simkit`` console script and ``python -m simkit``: :func:`main`, then exit with its
    status.  After an interrupt or SIGTERM (simkit's own clean-up done: workers killed, the lock
    released, whole files only) the process exits at once, without the interpreter's exit
    handlers: loky's joins its pool's manager thread, which may be blocked for ever reading a
    result that a killed worker left half written (a run stopped under load hung so, about
    once in 25).  The workers end with this process (:func:`simkit.lifeline.exit_with_parent`)."""
    code = main()
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        from multiprocessing import util

        try:  # what the exit would do but join no thread: close the pool's queues, unlink its semaphores
            util._run_finalizers(0)
        except Exception:  # noqa: BLE001 - exiting anyway
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed or broken pipe: nothing more to say
                pass
        os._exit(code)
    raise SystemExit(code)


def _one_line_warnings(debug: bool = False) -> None:
    """Every warning as one line on stderr, ``simkit: warning: ...`` (simkit's own, such as a
    model played under other rules or an interval of constant data, by their message; any
    other with its category's name), not Python's file, line and source text; with
    ``--debug`` Python's default format."""
    import warnings

    from simkit.errors import SIMKIT_WARNINGS

    # the format before simkit's (not a formatter of an earlier call of main in this process)
    default = getattr(warnings.formatwarning, "python_format", warnings.formatwarning)

    def format_warning(message, category, filename, lineno, line=None):
        if debug:
            return default(message, category, filename, lineno, line)
        text = " ".join(str(message).split())
        if issubclass(category, SIMKIT_WARNINGS):
            return f"simkit: warning: {text}\n"
        return f"simkit: warning: {category.__name__}: {text}\n"

    format_warning.python_format = default  # type: ignore[attr-defined]
    warnings.formatwarning = format_warning


def _writable(folder) -> bool:
    """Whether this process may write in ``folder`` (not on read-only media, say)."""
    import os

    return os.access(folder, os.W_OK | os.X_OK)


def _debug_from_environment() -> bool:
    import os

    return os.environ.get("SIMKIT_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def _fail(message: str, status: int, debug: bool, prefix: str = "simkit: error: ") -> int:
    """Print an error as one line on stderr, after its traceback with ``debug``; the exit status."""
    if debug:
        import traceback

        traceback.print_exc(file=sys.stderr)
    print(prefix + " ".join(message.split()), file=sys.stderr)  # one line, whatever the message holds
    return status


def _internal_error(exc: BaseException, debug: bool) -> str:
    """``Type: message (at file:line; ...)`` of an unexpected exception: where it was raised."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f"at {frames[-1].filename}:{frames[-1].lineno}; " if frames else ""
    hint = "" if debug else "--debug or SIMKIT_DEBUG=1 prints the traceback; "
    return f"{type(exc).__name__}: {exc} ({where}{hint}please report it)"


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
