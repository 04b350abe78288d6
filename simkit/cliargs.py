"""The command line's arguments, as data, and the checks every value passes before any work.

Each subcommand is a :class:`Command` of :data:`COMMANDS`: its name, help line, arguments and
cross-checks.  An argument is an :class:`Arg`: the arguments of
``argparse.ArgumentParser.add_argument`` plus a ``check``.  The arguments that several
commands share are defined once below (:data:`SEED`, :data:`DEALS`, :data:`POLICIES`,
:data:`RULE`, :data:`WORKERS`, :data:`OUT_DIR`, :data:`CONFIDENCE`, ...); a command takes
one as it is or a variant, ``SEED(default=2026)``.

:func:`parse_command_line` is the validation layer every subcommand goes through (issue 21):
argparse reads the words, then every argument's check runs (numbers first: integers that must
be >= 0 or >= 1 and fit int64, finite floats, levels in (0, 1); then files and folders:
inputs that are regular UTF-8 files, outputs that can be written), then the command's
cross-checks.  A bad value is a one-line :class:`~simkit.errors.SimkitError` naming its flag,
raised before any command starts, so nothing is computed, compiled or written.  The checks
import nothing heavy: a refused number loads neither numba nor pandas.

>>> parse_command_line(["replay", "--seed", "1", "--deal", "7", "--policies", "greedy,greedy,greedy"]).deal
7
>>> parse_command_line(["rules", "--rule", "hu_tolerance=1", "--rule", "hu_tolerance=2"])
Traceback (most recent call last):
...
simkit.errors.SimkitError: --rule hu_tolerance given twice ('hu_tolerance=1', then 'hu_tolerance=2')
"""

from __future__ import annotations

import argparse
import codecs
import dataclasses
import math
import os
import stat
from typing import Any, Callable, Sequence

from simkit import __version__
from simkit import defaults as D
from simkit.errors import SimkitError

EXIT_BAD_INPUT = 2  # the exit status of every refused command line
INT64_MAX = 2**63 - 1  # every count, seed and deal number fits int64 (the kernels' and datasets' type)
SEATINGS = ["fixed", "rotate", "all"]

Check = Callable[[Any, str], Any]  # (value, flag) -> the value to keep; raises SimkitError


# -- checks of one value ----------------------------------------------------------------------


def variance_reduction_method(value: str | None, flag: str) -> str | None:
    """compare's ``--variance-reduction``: one of :data:`simkit.defaults.VARIANCE_REDUCTION_METHODS`
    (None: left to ``--luck`` and the default)."""
    if value is not None and value not in D.VARIANCE_REDUCTION_METHODS:
        raise SimkitError(f"{flag} must be one of {', '.join(D.VARIANCE_REDUCTION_METHODS)}, got {value!r}")
    return value


def duplicate_design(value: str, flag: str) -> str:
    """compare's ``--design``: one of :data:`simkit.defaults.DUPLICATE_DESIGNS`."""
    if value not in D.DUPLICATE_DESIGNS:
        raise SimkitError(f"{flag} must be one of {', '.join(D.DUPLICATE_DESIGNS)}, got {value!r}")
    return value


def integer(minimum: int, maximum: int = INT64_MAX, why: str = "") -> Check:
    """An integer in ``minimum .. maximum`` (by default: anything that fits int64); ``why``:
    what the maximum is, for the message."""

    def check(value: int | None, flag: str) -> int | None:
        if value is None:  # an optional count left to its command's default
            return None
        if value < minimum:
            raise SimkitError(f"{flag} must be an integer >= {minimum}, got {value}")
        if value > maximum:
            limit = "fit int64 (at most 2**63 - 1)" if maximum == INT64_MAX else f"be at most {maximum}"
            raise SimkitError(f"{flag} must {limit}{f' ({why})' if why else ''}, got {value}")
        return value

    return check


def each(inner: Check) -> Check:
    """``inner`` on every value of a repeatable option."""

    def check(values, flag: str):
        return None if values is None else [inner(v, flag) for v in values]

    return check


def seat(value: int, flag: str) -> int:
    if value not in (0, 1, 2):
        raise SimkitError(f"{flag} must be 0, 1 or 2, got {value}")
    return value


def session_length(value: int, flag: str) -> int:
    """1 .. simulate's limit (the datasets' ``deal_in_session`` column is int16)."""
    if value != 1:
        from simkit.specs.dataset import MAX_SESSION_LENGTH  # the datasets' limit (a module without imports)

        if not 1 <= value <= MAX_SESSION_LENGTH:
            raise SimkitError(f"{flag} must be in 1..{MAX_SESSION_LENGTH}, got {value}")
    return value


def level(value: float, flag: str) -> float:
    """A confidence level: strictly between 0 and 1 (NaN is not)."""
    if not 0.0 < value < 1.0:
        raise SimkitError(f"{flag} must lie strictly between 0 and 1, got {value!r}")
    return value


def positive_finite(value: float, flag: str) -> float:
    if not (math.isfinite(value) and value > 0):
        raise SimkitError(f"{flag} must be a finite number > 0, got {value!r}")
    return value


def share(value: float, flag: str) -> float:
    """A share in (0, 1]."""
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise SimkitError(f"{flag} must be a number in (0, 1], got {value!r}")
    return value


def unit_interval(value: float, flag: str) -> float:
    """A probability in [0, 1]."""
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise SimkitError(f"{flag} must be a number in [0, 1], got {value!r}")
    return value


def nonnegative_finite(value: float, flag: str) -> float:
    if not (math.isfinite(value) and value >= 0):
        raise SimkitError(f"{flag} must be a finite number >= 0, got {value!r}")
    return value


def hidden_widths(text: str, flag: str) -> tuple[int, int]:
    """``H1,H2``: two hidden layer widths in 1..:data:`simkit.defaults.MAX_HIDDEN_WIDTH`."""
    try:
        h1, h2 = (int(x) for x in text.split(","))
    except ValueError:
        raise SimkitError(f"{flag} takes two widths H1,H2 (e.g. 64,16), got {text!r}") from None
    if not (1 <= h1 <= D.MAX_HIDDEN_WIDTH and 1 <= h2 <= D.MAX_HIDDEN_WIDTH):
        raise SimkitError(f"{flag} widths must be in 1..{D.MAX_HIDDEN_WIDTH} (the widest layer a model file "
                          f"holds), got {text!r}")
    return h1, h2


def sprt(text: str | None, flag: str) -> tuple[float, float, float] | None:
    """``DELTA,ALPHA,BETA`` -> three floats: a finite delta > 0 and 0 < alpha, beta < 0.5."""
    if text is None:
        return None
    try:
        delta, alpha, beta = (float(x) for x in text.split(","))
    except ValueError:
        raise SimkitError(f"{flag} takes delta,alpha,beta (three numbers), got {text!r}") from None
    if not (math.isfinite(delta) and delta > 0 and 0 < alpha < 0.5 and 0 < beta < 0.5):
        raise SimkitError(f"{flag} needs a finite delta > 0 and 0 < alpha, beta < 0.5, got {text!r}")
    return delta, alpha, beta


SPSA_KEYS = ("a", "c", "A", "alpha", "gamma")


def spsa(text: str | None, flag: str) -> dict[str, float] | None:
    """``KEY=VALUE,...`` -> {key: finite float} (the ranges are checked by ``SpsaSettings``)."""
    if text is None:
        return None
    values: dict[str, float] = {}
    for piece in text.split(","):
        key, sep, raw = piece.strip().partition("=")
        key = key.strip()
        if not sep or key not in SPSA_KEYS:
            raise SimkitError(f"{flag} takes KEY=VALUE,... with KEY one of {', '.join(SPSA_KEYS)}, got {piece.strip()!r}")
        if key in values:
            raise SimkitError(f"{flag} gives {key} twice")
        try:
            value = float(raw)
        except ValueError:
            raise SimkitError(f"{flag} {key} must be a number, got {raw!r}") from None
        if not math.isfinite(value):
            raise SimkitError(f"{flag} {key} must be a finite number, got {raw!r}")
        values[key] = value
    return values


def rules(items: list[str], flag: str) -> list[str]:
    """``KEY=VALUE`` options, each key once, each known with a valid value (:class:`RuleSet`)."""
    from simkit.rules import RuleSet

    seen: dict[str, str] = {}
    for item in items:
        key, sep, _ = item.partition("=")
        key = key.strip()
        if sep and key in seen:
            raise SimkitError(f"{flag} {key} given twice ({seen[key]!r}, then {item!r})")
        seen[key] = item
    RuleSet.from_strings(items)  # unknown options and bad values: RuleError, one line
    return items


def _stat(path: str, flag: str) -> os.stat_result:
    if not path:
        raise SimkitError(f"{flag} is empty")
    try:
        return os.stat(path)  # never opens: a FIFO cannot block here
    except OSError as exc:
        raise SimkitError(f"cannot read {path}: {exc.strerror}") from None


def input_file(path: str | None, flag: str) -> str | None:
    """A regular file of UTF-8 text ('-': standard input, read by the command): refused before
    anything reads it if it is missing, a folder, a FIFO or device (opening one could block
    forever), or not UTF-8."""
    if path is None or (path == "-" and flag == "--jsonl"):
        return path
    st = _stat(path, flag)
    if not stat.S_ISREG(st.st_mode):
        raise SimkitError(f"cannot read {path}: it is {_kind(st.st_mode)}, not a regular file")
    check_utf8(path)
    return path


def _kind(mode: int) -> str:
    """What a path that is not a regular file is, in words (loads the storage layer: errors only)."""
    from simkit.storage.files import describe_kind

    return describe_kind(mode)


def check_utf8(path: str, chunk: int = 1 << 20) -> None:
    """Raise a one-line error if the regular file ``path`` is not UTF-8 text."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise SimkitError(f"cannot read {path}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):  # replaced since it was looked at
            raise SimkitError(f"cannot read {path}: it is {_kind(mode)}, not a regular file")
        while True:
            data = fh.read(chunk)
            try:
                decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                raise SimkitError(f"{path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                                  f"{offset + exc.start})" if exc.start < len(exc.object) else
                                  f"{path} is not UTF-8 text (it ends inside a character)") from None
            if not data:
                return
            offset += len(data)


def dataset_folder(path: str, flag: str) -> str:
    """An existing folder (what is in it is checked by the dataset reader)."""
    if not path:
        raise SimkitError("the dataset path is empty (give a dataset folder)")
    st = _stat(path, flag)
    if not stat.S_ISDIR(st.st_mode):
        what = "a file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode)
        raise SimkitError(f"{path} is {what}, not a dataset folder (the folder simkit simulate writes)")
    return path


def run_folder(kind: str, resumable: bool = False) -> Check:
    """The check of a command's output folder for a run of ``kind``: the one rule of
    :func:`simkit.storage.runs.check_run_folder` (usable, outside every dataset, and new, empty or
    this kind's own).  ``resumable``: an existing folder where nothing can be written (e.g. on
    read-only media) passes too; the command then says it already holds the finished run, with
    nothing to write, or refuses in one line when there is something to compute."""

    def check(path: str | None, flag: str) -> str | None:
        if path is None or (resumable and os.path.isdir(path) and not os.access(path, os.W_OK | os.X_OK)):
            return path  # the run says whether it is complete, or what it cannot write, in one line
        from simkit.storage.runs import check_run_folder

        check_run_folder(path, kind, flag)
        return path

    check.__name__ = check.__qualname__ = f"run_folder_{kind.replace('-', '_')}"
    check.path_check = True  # type: ignore[attr-defined]  # run with the other path checks
    return check


def input_files(paths: list[str] | None, flag: str) -> list[str] | None:
    """:func:`input_file` of each path of a list."""
    return paths if paths is None else [input_file(path, flag) for path in paths]


def container_dir(path: str | None, flag: str) -> str | None:
    """A folder that holds runs' folders (``experiment --reports``: one report folder per
    experiment, each checked by :func:`run_folder`'s rule when written): usable and outside every
    dataset."""
    if path is not None:
        from simkit.storage.paths import check_out_dir, check_outside_datasets

        check_outside_datasets(check_out_dir(path, flag), flag)
    return path


def out_file(path: str | None, flag: str) -> str | None:
    """A file that can be written (nothing is created here)."""
    if path is not None:
        from simkit.storage.paths import check_out_file

        check_out_file(path, flag)
    return path


def new_value_model_file(path: str | None, flag: str) -> str | None:
    """A value-model file to write: FILE.npz, writable."""
    if path is not None and not path.endswith(".npz"):
        raise SimkitError(f"{flag} must end in .npz, got {path!r}")
    return out_file(path, flag)


def policy_pair(value: str, flag: str) -> tuple[str, str]:
    """Two policies ``A,B`` (any policy names: built-in, parameterised, ``learned:PATH``, import paths)."""
    parts = value.split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise SimkitError(f"{flag} takes two policies A,B (e.g. expert,greedy), got {value!r}")
    from simkit.policies.registry import parse_policy

    for part in parts:
        parse_policy(part.strip())
    return parts[0].strip(), parts[1].strip()


def table_file(path: str | None, flag: str) -> str | None:
    """An output table: FILE.csv or FILE.parquet, writable."""
    if path is not None and not path.endswith((".csv", ".parquet")):
        raise SimkitError(f"{flag} must end in .csv or .parquet, got {path!r}")
    return out_file(path, flag)


# checks of numbers run first, then those of paths (which load the storage layer), then the
# commands' cross-checks
_PATH_CHECKS = (input_file, dataset_folder, container_dir, out_file, table_file, new_value_model_file)


# -- the table --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Arg:
    """One argument: ``flags`` and ``options`` as given to ``add_argument``, and ``check``
    (run on the parsed value, with the flag's name; returns the value to keep)."""

    flags: tuple[str, ...]
    options: dict[str, Any]
    check: Check | None = None

    def __call__(self, *flags: str, **changes: Any) -> "Arg":
        """A variant of a shared argument: ``SEED(default=2026)``, ``DEALS(required=True)``,
        ``OUT_DIR("--reports", default="reports")`` (other flags, same kind of value)."""
        check = changes.pop("check", self.check)
        return Arg(flags or self.flags, {**self.options, **changes}, check)


def arg(*flags: str, check: Check | None = None, **options: Any) -> Arg:
    return Arg(flags, options, check)


@dataclasses.dataclass(frozen=True)
class Command:
    """A subcommand: ``name``, its ``help`` line, its arguments and its cross-checks (run
    after every argument's check, on the whole namespace)."""

    name: str
    help: str
    args: tuple[Arg, ...]
    checks: tuple[Callable[[argparse.Namespace], None], ...] = ()


NONNEG = integer(0)
POSITIVE = integer(1)

# shared arguments, defined once
SEED = arg("--seed", type=int, default=0, check=NONNEG)
DESIGN = arg("--design", default=D.DEFAULT_DUPLICATE_DESIGN, metavar="DESIGN", check=duplicate_design,
             help="six (the default: every deal under the six seatings) or pairs (each complementary pair of "
                  "seatings on deals of its own, at the same CPU per row: a variance per row 1.14x to 1.56x smaller "
                  "than six's, measured on five pairs of policies, docs/measurements.md; --deals then counts rows of three deals; no --luck "
                  "or --variance-reduction with it)")
DEALS = arg("--deals", type=int, check=POSITIVE)
BATCH_SIZE = arg("--batch-size", type=int, default=10_000, check=POSITIVE)
WORKERS = arg("--workers", type=int, default=1, check=POSITIVE)
POLICIES = arg("--policies", required=True, help="three policies, e.g. greedy,random,random")
RULE = arg("--rule", action="append", default=[], metavar="KEY=VALUE", check=rules)
CONFIDENCE = arg("--confidence", type=float, default=0.95, help="level of every interval (default 0.95)", check=level)
QUIET = arg("--quiet", action="store_true")
OUT_DIR = arg("--out", default=None, check=container_dir)
OUTPUT = arg("--output", metavar="FILE", help="write here instead of stdout", check=out_file)
SEATING = arg("--seating", choices=SEATINGS, default=None)
SESSION_LENGTH = arg("--session-length", type=int, default=1, metavar="K", check=session_length)
SPRT = arg("--sprt", default=None, metavar="DELTA,ALPHA,BETA", check=sprt)
BACKEND = arg("--backend", choices=["local", "dask"], default="local",
              help="where the deals run: local (default) or a Dask cluster (--scheduler, or a local cluster of "
                   "--workers processes)")
SCHEDULER = arg("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
DEBUG = arg("--debug", action="store_true", default=argparse.SUPPRESS,
            help="on an error, also print the traceback (as SIMKIT_DEBUG=1)")


def _score_checks(args: argparse.Namespace) -> None:
    if args.jsonl and args.hand:
        raise SimkitError("give either a hand or --jsonl, not both")
    if not args.jsonl and (not args.hand or not args.hand.strip()):
        raise SimkitError("no hand given (e.g. simkit score \"RJ*3 RS*2 RX*2\")")


def _simulate_checks(args: argparse.Namespace) -> None:
    if args.scheduler is not None and args.backend != "dask":
        raise SimkitError(f"--scheduler needs --backend dask, got --backend {args.backend}")


def _review_checks(args: argparse.Namespace) -> None:
    """``--out``: a review's folder for one log, a review of several logs' for more (the one rule
    of :func:`simkit.storage.runs.check_run_folder`); ``--html`` (the page of one deal) takes one
    log only."""
    several = len(args.log) > 1
    if several and args.html is not None:
        raise SimkitError(f"--html writes the page of one log, got {len(args.log)} logs (review them one at a time "
                          "for their pages)")
    if args.out is not None:
        from simkit.storage.runs import check_run_folder

        check_run_folder(args.out, "reviews" if several else "review", "--out")


def _dealt_table_checks(args: argparse.Namespace) -> None:
    """The dealt-hands table fits in memory: checked before any work (``deals``, ``prob --hands``)."""
    from simkit.studies.dealt import check_dealt_table_memory

    check_dealt_table_memory(args.deals)


def _prob_checks(args: argparse.Namespace) -> None:
    if args.hands is not None and not args.list:
        _dealt_table_checks(args)
    if args.given is None or args.list:
        return
    if args.hands is not None:
        raise SimkitError("--hands does not combine with --given")
    if args.seat is not None and len(args.seat) > 1:
        raise SimkitError("with --given, --seat names the seat holding the given hand (once)")


def default_out(kind: str, name: str, seed: int) -> str:
    """The default folder of a resumable study: ``runs/KIND-NAME-seedS`` (NAME made a plain
    file name), or ``runs/KIND-seedS``."""
    import re

    middle = "-" + re.sub(r"[^A-Za-z0-9.]+", "_", name) if name else ""
    return f"runs/{kind}{middle}-seed{seed}"


def _compare_checks(args: argparse.Namespace) -> None:
    if args.deals is None:
        args.deals = D.DEFAULT_SPRT_MAX_DEALS if args.sprt else D.DEFAULT_COMPARE_DEALS  # an SPRT's cap, or a fixed size
    if args.out is None:
        args.out = run_folder("comparison")(default_out("compare", f"{args.policy_a}-{args.policy_b}", args.seed), "--out")


def _tournament_checks(args: argparse.Namespace) -> None:
    if args.out is None:
        args.out = run_folder("tournament")(default_out("tournament", "", args.seed), "--out")


def _tune_checks(args: argparse.Namespace) -> None:
    if args.out is None:
        args.out = run_folder("tune")(default_out("tune", args.policy, args.seed), "--out")


def _train_checks(args: argparse.Namespace) -> None:
    if args.out is None:
        args.out = run_folder("train", resumable=True)(default_out("train", "", args.seed), "--out")


def _experiment_checks(args: argparse.Namespace) -> None:
    if args.out is not None and (args.reports is not None or args.data is not None):
        raise SimkitError("--out replaces --reports and --data: give --out alone, or --reports/--data")
    if args.out is None and args.reports is None:
        container_dir("reports", "--reports")


def _bench_checks(args: argparse.Namespace) -> None:
    from simkit.bench import check_arguments as check_bench  # the sizes each workload allows

    check_bench(args.target, holdings=args.holdings, deals=args.deals, lines=args.lines, seed=args.seed,
                as_json=args.json, markdown=args.markdown, out=args.out)


def _compile_checks(args: argparse.Namespace) -> None:
    from simkit.warmup import TARGETS

    unknown = [t for t in args.targets if t not in TARGETS]
    if unknown:
        raise SimkitError(f"unknown compile target {unknown[0]!r} (known: {', '.join(TARGETS)})")


def _replay_checks(args: argparse.Namespace) -> None:
    if not 0 <= args.seating_index <= 5 or (args.seating != "all" and args.seating_index != 0):
        raise SimkitError(f"--seating-index takes 0..5 with --seating all, got {args.seating_index}")


def _analyze_checks(args: argparse.Namespace) -> None:
    if args.at is not None and args.log is None:
        raise SimkitError("--at needs --log FILE")
    if args.log is not None and args.at is None:
        raise SimkitError("--log needs --at N, the decision to analyse")
    if (args.position is None) == (args.log is None):
        raise SimkitError("give a position, or --log FILE with --at N (not both)")


def _play_checks(args: argparse.Namespace) -> None:
    from simkit.policies.registry import parse_policy  # a bad name: one line, before any play

    for bot in args.bots:
        parse_policy(bot)
    from simkit.studies.table import check_hint_policy

    check_hint_policy(args.hint_policy)


def _replay_position_checks(args: argparse.Namespace) -> None:
    if args.json and args.position is None:
        raise SimkitError("--json goes with --position N")


ROLLOUT_POLICY = arg("--policy", default=D.DEFAULT_POLICY,
                     help=f"the rollout policy at every seat (default {D.DEFAULT_POLICY}, the strongest fast bot)")
SHARPEN = arg("--sharpen", type=int, default=D.DEFAULT_SHARPEN, metavar="N", check=integer(0, 1_000_000),
              help="opponent model: N hill-climbing steps bring each sampled opponent hand closer to complete "
                   f"(as mc's sharpen; default {D.DEFAULT_SHARPEN}, calibrated on expert deals; 0: uniform samples)")
BELIEF = arg("--belief", type=int, default=0, metavar="N", check=integer(0, 1_000_000),
             help="draw the hidden cards N times given what the other seats played (their actions, replayed "
                  "under the rollout policy, weigh each card layout; a position of a played deal, which "
                  f"carries its history); replaces --sharpen (default 0: off; try {D.DEFAULT_BELIEF})")
BELIEF_NOISE = arg("--belief-noise", type=float, default=D.DEFAULT_BELIEF_NOISE, metavar="P", check=unit_interval,
                   help="with --belief: the chance a seat plays any legal action instead of the rollout "
                        f"policy's (default {D.DEFAULT_BELIEF_NOISE})")
LUCK = arg("--luck", nargs="?", const="builtin", default=None, metavar="MODEL",
           help="correct each rollout by the luck of the player's draws, under the shipped value model or the "
                "value-model file MODEL")


COMMANDS: tuple[Command, ...] = (
    Command("score", "score one holding (or many with --jsonl)", (
        arg("hand", nargs="?", help='concealed cards, e.g. "RJ*3 RS*2 RX*2" or "红将 红士 红相"'),
        arg("--exposed", default="", help='exposed groups, e.g. "peng:RC kong:YZ chow:RJ,RS,RX zhan:GM table:RJ"'),
        RULE(help="rule option (repeatable)"),
        arg("--jsonl", metavar="FILE", help="score one JSON object per line of FILE ('-' for stdin)",
            check=input_file),
        OUTPUT(help="write results here instead of stdout"),
    ), (_score_checks,)),
    Command("deals", "dealt hands: Parquet + report with plots (alias of prob --hands DIR)", (
        DEALS(default=20_000, help="number of deals (default 20000)"),
        SEED(default=2026, help="root seed (default 2026)"),
        BATCH_SIZE(help="deals per batch: the batch column (default 10000)"),
        RULE,
        OUT_DIR(required=True, default=None, help="output directory", check=run_folder("hands")),
    ), (_dealt_table_checks,)),
    Command("simulate", "simulate deals into a Parquet dataset (resumable)", (
        DEALS(required=True, help="number of deals"),
        POLICIES,
        SEED(required=True, default=None, help="run seed"),
        OUT_DIR(required=True, help="dataset folder (re-run to resume)", check=run_folder("simulation", resumable=True)),
        RULE,
        WORKERS(help="worker processes (default 1: threads only)"),
        BATCH_SIZE(help="deals per batch file (default 10000)"),
        BACKEND,
        SCHEDULER,
        SESSION_LENGTH(help="deals per session (default 1: independent deals, seat 0 deals). K > 1: each "
                            "session's first deal is dealt by seat 0, the next ones by rule option next_dealer; "
                            "--batch-size is rounded down to a multiple of K; a deal count that is not a "
                            "multiple of K cuts the last session short"),
        SEATING(help="how the policies sit: fixed (seat k plays policy k: with independent deals the first "
                     "policy deals every deal), rotate (deal N: seat s plays policy (s + N) mod 3; in "
                     "sessions per session), all (each deal played under all 6 seatings: 6 rows per deal, "
                     "column seating). Default: rotate when the policies differ, fixed when they are the same"),
        QUIET(help="no progress bar"),
    ), (_simulate_checks,)),
    Command("report", "write report.md with tables and plots of a dataset", (
        arg("dataset", check=dataset_folder,
            help="dataset folder written by simkit simulate (a run in sessions gets a Sessions section)"),
        OUT_DIR(help="report folder (default: DATASET-report, the dataset's sibling folder, so the dataset stays a "
                     "pure Parquet folder)", check=run_folder("report")),
        CONFIDENCE,
    )),
    Command("compare", "duplicate comparison of two policies (all seatings, same deals)", (
        arg("policy_a", help="policy A, e.g. greedy or patient:2,6,1"),
        arg("policy_b", help="policy B"),
        DEALS(default=None, check=integer(2),
              help="deals (each played in 6 seatings; default 10000, or the cap of an SPRT: 1000000)"),
        SPRT(help="sequential test (GSPRT on the per-deal differences, no decision before --burn-in deals): "
                  "stop when H1: A - B = DELTA or H0: A - B = 0 is preferred; prints the "
                  "decision, the deals and the estimate valid under the stopping rule, and plots the "
                  "log-likelihood ratio path in the report"),
        arg("--burn-in", type=int, default=None, metavar="N", check=integer(2),
            help=f"deals before the sequential test may decide (default max({D.DEFAULT_BURN_IN}, "
                 f"{D.BURN_IN_INFORMATION:g}/DELTA²): 900 at DELTA 0.1, 300 at 0.2; measured at those two DELTAs with α, β "
                 "= 0.05, 0.05 and 0.05, 0.10 on heavy-tailed greedy - patient differences: each error at most "
                 "1.05x nominal, docs/methods.md)"),
        arg("--luck", nargs="?", const="builtin", default=None, metavar="MODEL",
            help="also give the luck-adjusted estimate (AIVAT-style corrections at every draw) under the shipped "
                 "value model, the value-model file MODEL, or playouts:K (K play-outs per card by the table's "
                 "policies: slower, removes more); with --sprt the test runs on adjusted differences"),
        arg("--variance-reduction", default=None, metavar="METHOD", check=variance_reduction_method,
            help="the adjusted estimate beside plain duplicate's: none (the default: plain duplicate only), "
                 "regression (cross-fitted regression on the dealt hands' features; not with --sprt) or luck "
                 "(as --luck, the shipped value model unless --luck names one)"),
        DESIGN,
        arg("--json", action="store_true", help="print the result as one JSON object"),
        SEED,
        OUT_DIR(help="comparison folder (default runs/compare-A-B-seedS; resumable)", check=run_folder("comparison", resumable=True)),
        RULE,
        BATCH_SIZE(default=2_000, help="deals per batch (default 2000)"),
        WORKERS,
        BACKEND,
        SCHEDULER,
        CONFIDENCE,
        QUIET,
    ), (_simulate_checks, _compare_checks)),
    Command("tournament", "round-robin duplicate tournament: crosstable and ratings", (
        arg("policies", nargs="+", metavar="POLICY", help="2 or more different policies"),
        DEALS(default=2_000, check=integer(2),
              help="duplicate deals per pairing (each in 6 seatings; the cap of an SPRT; default 2000)"),
        SPRT(help="each pairing as a sequential test (as compare --sprt)"),
        arg("--burn-in", type=int, default=None, metavar="N", check=integer(2),
            help=f"deals before a pairing's sequential test may decide (default max({D.DEFAULT_BURN_IN}, "
                 f"{D.BURN_IN_INFORMATION:g}/DELTA²), as compare)"),
        arg("--luck", nargs="?", const="builtin", default=None, metavar="MODEL",
            help="luck-adjust every pairing (as compare --luck); the payoff ratings then use adjusted differences"),
        DESIGN,
        SEED,
        OUT_DIR(help="tournament folder (default runs/tournament-seedS; resumable)", check=run_folder("tournament")),
        RULE,
        BATCH_SIZE(default=1_000, help="deals per batch (default 1000)"),
        WORKERS,
        BACKEND,
        SCHEDULER,
        arg("--resamples", type=int, default=2_000, help="bootstrap resamples of the ratings", check=POSITIVE),
        CONFIDENCE,
        QUIET,
    ), (_simulate_checks, _tournament_checks)),
    Command("tune", "tune a policy's parameters by SPSA against a pool, then validate the result", (
        arg("policy", help="the policy and its starting parameters, e.g. patient:6 or pkg.mod:func:1,2"),
        arg("--params", required=True, metavar="NAME=LO:HI,...",
            help="parameters to tune and their ranges, by name (patient: min_units, late_stock, peng_slack) "
                 "or as p<i>, e.g. min_units=1:8,late_stock=0:20"),
        arg("--against", required=True, metavar="POOL",
            help="opponent pool, comma-separated policies (named parameters joined by ':', expert:danger=20,greedy; "
                 "a number after positional parameters is one more of them: greedy,patient:2,6,1,random is three "
                 "policies)"),
        arg("--budget", type=int, required=True, check=POSITIVE,
            help="deals played while tuning: each iteration plays its deals 6 times (theta+ and theta-, "
                 "the candidate at each of the 3 seats); the validation is extra"),
        SEED,
        OUT_DIR(help="tune folder (default runs/tune-POLICY-seedS; resumable)", check=run_folder("tune")),
        arg("--iteration-deals", type=int, default=200, help="new deals per SPSA iteration (default 200)",
            check=POSITIVE),
        arg("--validate-deals", type=int, default=5_000, check=integer(2),
            help="duplicate deals (x 6 seatings) of the validation, tuned vs start, on new deals (default 5000)"),
        CONFIDENCE(help="level of the validation interval (default 0.95)"),
        arg("--spsa", default=None, metavar="KEY=VALUE,...", check=spsa,
            help="SPSA constants a, c, A, alpha, gamma (normalised coordinates; defaults: a_0 = 0.1, c = 0.2, "
                 "A = 10%% of the iterations, alpha 0.602, gamma 0.101)"),
        RULE,
        WORKERS(help="with --backend dask and no --scheduler, the local cluster's worker processes (default 1; a "
                     "local tune plays in this process, on every core)"),
        BACKEND(help="where the plays run: local (default) or a Dask cluster, each iteration's plays (and the "
                     "validation's batches) as tasks (--scheduler, or a local cluster of --workers processes); "
                     "the same result either way"),
        SCHEDULER,
        QUIET(help="no progress lines"),
    ), (_simulate_checks, _tune_checks)),
    Command("train", "learn a policy model from self-play, played as learned:OUT/model.npz (needs simkit[learn])", (
        OUT_DIR(help="training folder (default runs/train-seedS; resumable: a killed run resumes, more "
                     "--generations continue); the model is OUT/model.npz, played as learned:OUT/model.npz",
                check=run_folder("train", resumable=True)),
        SEED,
        arg("--generations", type=int, default=3, check=POSITIVE, help="generations (default 3)"),
        DEALS(default=20_000, check=integer(5), help="self-play deals per generation (default 20000)"),
        arg("--rate", type=float, default=0.1, check=share,
            help="share of the decisions whose candidates are rolled out (default 0.1)"),
        arg("--hidden", default="64,16", check=hidden_widths, help="hidden layer widths H1,H2 (default 64,16)"),
        arg("--epochs", type=int, default=3, check=POSITIVE, help="epochs of each fit (default 3)"),
        arg("--alpha", type=float, default=0.01, check=nonnegative_finite, help="L2 penalty (default 0.01)"),
        arg("--check-deals", type=int, default=300, check=integer(2),
            help="duplicate deals of each generation's check against expert (default 300)"),
        RULE,
        WORKERS(help="with --backend dask and no --scheduler, the local cluster's worker processes (default 1; a "
                     "local training plays in this process, on every core)"),
        BACKEND(help="where the self-play and the checks run: local (default) or a Dask cluster, as tasks of "
                     "consecutive deals (--scheduler, or a local cluster of --workers processes); the same model "
                     "bytes either way"),
        SCHEDULER,
        QUIET(help="no progress lines"),
    ), (_simulate_checks, _train_checks)),
    Command("luck-model", "train the value model of the luck adjustment (compare --luck; needs simkit[learn])", (
        arg("--out", required=True, metavar="FILE", check=new_value_model_file,
            help="the value-model file to write (.npz; an existing one is replaced whole)"),
        SEED(help="seed of the training deals (default 0); evaluations on this seed will refuse the model"),
        DEALS(default=D.DEFAULT_LUCK_MODEL_DEALS, check=integer(10),
              help=f"duplicate deals per policy pair to fit on (default {D.DEFAULT_LUCK_MODEL_DEALS})"),
        arg("--check-deals", type=int, default=D.DEFAULT_LUCK_MODEL_CHECK_DEALS, check=integer(10),
            help=f"further deals of the seed that choose the corrections' weight (default "
                 f"{D.DEFAULT_LUCK_MODEL_CHECK_DEALS})"),
        arg("--pair", action="append", default=None, metavar="A,B", check=each(policy_pair),
            help="a policy pair whose duplicate deals it fits on (repeatable; default expert,greedy and "
                 "greedy,random)"),
        arg("--hidden", type=int, default=64, check=integer(1, D.MAX_HIDDEN_WIDTH, "the widest layer a model file holds"),
            help=f"hidden layer width, 1..{D.MAX_HIDDEN_WIDTH} (default 64)"),
        arg("--epochs", type=int, default=20, check=POSITIVE, help="epochs of the fit (default 20)"),
        RULE,
        WORKERS(help="with --backend dask and no --scheduler, the local cluster's worker processes (default 1; a "
                     "local training plays in this process, on every core)"),
        BACKEND(help="where the deals run: local (default) or a Dask cluster, as tasks of consecutive deals "
                     "(--scheduler, or a local cluster of --workers processes); the same model bytes either way"),
        SCHEDULER,
        QUIET(help="no progress lines"),
    ), (_simulate_checks,)),
    Command("prob", "probabilities of dealt-hand events: Monte Carlo with intervals, exact where known", (
        arg("events", nargs="*", metavar="EVENT",
            help="events: NAME, NAME:VALUE or NAME:PARAM=VALUE, e.g. nao jiang_at_least_k:8 dealer_dealt_win "
                 "(default: the standard table; --list shows all)"),
        DEALS(default=100_000, help="deals (default 100000)"),
        SEED(default=2026),
        arg("--seat", type=int, action="append", default=None, help="seat 0, 1 or 2 (repeatable; default all)",
            check=each(seat)),
        BATCH_SIZE,
        CONFIDENCE(help=None),
        RULE,
        arg("--out", default=None, help="also write the table to FILE (.csv or .parquet)", check=table_file),
        arg("--hands", default=None, metavar="DIR", check=run_folder("hands"),
            help="also write the dealt hands of the same deals to DIR: deals.parquet (one row per deal "
                 "and seat), manifest.json, plots and report.md"),
        arg("--list", action="store_true", help="list the events and exit"),
        arg("--given", default=None, metavar="HAND",
            help="condition on one seat's dealt hand (--seat, default 0; 31 cards for seat 0, 30 otherwise): "
                 "P(event) for the other seats' hands, exact where a closed form exists (the unseen cards "
                 "are dealt uniformly), Monte Carlo with intervals for all"),
    ), (_prob_checks,)),
    Command("equity", "hand equity: fix one seat's dealt hand, deal the rest at random, play to the end; win rate, "
                      "payoff, P(小甲), hu against the seat's baseline", (
        arg("hand", help='the seat\'s dealt hand, e.g. "YJ*3 YS YX ..." (31 cards for seat 0, the '
                         'dealer; 30 for seats 1 and 2)'),
        arg("--seat", type=int, default=0, help="the hand's seat (default 0, the dealer)", check=seat),
        POLICIES(help="three policies, e.g. greedy,greedy,greedy"),
        DEALS(required=True, help="number of deals"),
        SEED(help="run seed (default 0)"),
        OUT_DIR(check=run_folder("equity", resumable=True),
                help="keep the deals (resumable): OUT/equity and OUT/baseline datasets, OUT/equity.csv, "
                     "OUT/hu_distribution.png"),
        WORKERS(help="worker processes with --out (default 1: threads only); with --backend dask and no "
                     "--scheduler, the local cluster's workers"),
        BATCH_SIZE(help="deals per batch (default 10000)"),
        BACKEND,
        SCHEDULER,
        CONFIDENCE(help=None),
        arg("--no-baseline", action="store_true", help="skip the seat's unconditional baseline"),
        RULE,
        QUIET,
    ), (_simulate_checks,)),
    Command("experiment", "run an experiment file and write its report", (
        arg("action", choices=["run"], help="what to do"),
        arg("file", help="experiment TOML file, e.g. experiments/dealer_advantage.toml", check=input_file),
        OUT_DIR("--reports", help="reports folder (default reports; the report goes to REPORTS/NAME/report.md)",
                check=container_dir),
        OUT_DIR("--data", help="data folder (default runs/experiments/NAME)", check=container_dir),
        OUT_DIR(help="put the report in OUT/report/ and the data in OUT/data/ (instead of --reports and --data)",
                check=run_folder("experiment")),
        arg("--scale", type=float, default=1.0, check=positive_finite,
            help="multiply every deal count of the file by SCALE (e.g. 0.01 for a quick small rerun; default 1)"),
        WORKERS(help="worker processes (default 1); with --backend dask and no --scheduler, the local cluster's"),
        BACKEND(help="where the simulations, comparisons and the tournament run: local (default) or one Dask "
                     "cluster for the whole experiment (--scheduler, or a local cluster of --workers processes); "
                     "the probabilities stay in this process"),
        SCHEDULER,
        CONFIDENCE,
        QUIET,
    ), (_simulate_checks, _experiment_checks)),
    Command("demo", "main job: simulate a small default run and write its report", (
        OUT_DIR(default="runs/demo", help="output folder (default runs/demo)", check=run_folder("report")),
        DEALS(default=20_000, help="deals (default 20000)"),
        SEED(default=2026),
        POLICIES(required=False, default="greedy,patient,random", help=None),
        SEATING(help="as simulate --seating (default: rotate when the policies differ)"),
    )),
    Command("replay", "print one deal as JSON lines, one event per line", (
        SEED(required=True, default=None, help="run seed"),
        arg("--deal", type=int, required=True, help="deal number within the run (0-based)",
            check=integer(0, INT64_MAX - 1, "2**63 - 2, the last deal of a run of 2**63 - 1 deals")),
        POLICIES,
        RULE,
        SESSION_LENGTH(help="the run's deals per session (default 1): deal N is dealt by its session's dealer, "
                            "found by playing the session's earlier deals"),
        SEATING(help="the run's seating (as simulate: default rotate when the policies differ): deal N is "
                     "played with the policies seated as in that run"),
        arg("--seating-index", type=int, default=0, metavar="J",
            help="with --seating all: the row's seating 0..5 (column seating)"),
        OUTPUT,
        arg("--engine", choices=["auto", "compiled", "interpreted"], default="auto",
            help="compiled: the numba kernels (compiled first if numba's cache lacks them: about a "
                 "minute); interpreted: their Python source (NUMBA_DISABLE_JIT, same bytes, about a "
                 "second a deal); auto (default): compiled when cached, else interpreted"),
        arg("--position", type=int, default=None, metavar="N", check=NONNEG,
            help="print the position of decision N (0-based, every seat's decisions in order) instead of the log"),
        arg("--json", action="store_true", help="with --position: the position as JSON"),
    ), (_replay_checks, _replay_position_checks)),
    Command("analyze", "analyse a position: every legal action rolled out (expected payoff, P(win), P(lose), "
                       "units), raced until the best separates", (
        arg("position", nargs="?", default=None,
            help="the position: text (\"seat=0; dealer=0; turn=discard; hand=...; stock=12\"), JSON, or a file "
                 "holding either (docs/analysis.md, Positions)"),
        arg("--log", default=None, metavar="FILE", help="a simkit replay log (with --at N)", check=input_file),
        arg("--at", type=int, default=None, metavar="N", help="the decision of --log to analyse (0-based)",
            check=NONNEG),
        ROLLOUT_POLICY,
        arg("--rollouts", type=int, default=D.DEFAULT_ROLLOUTS, check=integer(1, 1_000_000),
            help=f"the most determinisations an action gets (default {D.DEFAULT_ROLLOUTS})"),
        arg("--tolerance", type=float, default=D.DEFAULT_TOLERANCE, metavar="PAI", check=nonnegative_finite,
            help="an action whose difference to the best lies surely within +-PAI stops racing as equal "
                 f"(default {D.DEFAULT_TOLERANCE})"),
        arg("--batch", type=int, default=D.DEFAULT_BATCH, check=integer(1, 1_000_000),
            help=f"determinisations per racing round (default {D.DEFAULT_BATCH})"),
        arg("--no-race", action="store_true", help="give every action all --rollouts determinisations"),
        arg("--no-confirm", action="store_true",
            help="report the race's own estimates instead of a second measure on fresh determinisations (half the "
                 "time; the best's margin then carries the winner's curse)"),
        LUCK,
        SHARPEN,
        BELIEF,
        BELIEF_NOISE,
        SEED,
        WORKERS(help="threads (default 1; the result is the same for any number)"),
        CONFIDENCE,
        arg("--json", action="store_true", help="print the analysis as one JSON object"),
    ), (_analyze_checks,)),
    Command("review", "review one seat's decisions in a log (or several): chosen and best action, expected loss", (
        arg("log", nargs="+", metavar="LOG",
            help="a simkit replay log, or a decision log (JSON lines of position and chosen action); several: each "
                 "reviewed in turn on one connection (--backend dask: their decisions on the cluster)",
            check=input_files),
        arg("--seat", type=int, required=True, help="the seat to review", check=seat),
        ROLLOUT_POLICY,
        arg("--rollouts", type=int, default=D.DEFAULT_REVIEW_ROLLOUTS, check=integer(1, 1_000_000),
            help=f"the most determinisations an action gets at each decision (default {D.DEFAULT_REVIEW_ROLLOUTS})"),
        arg("--min-loss", type=float, default=0.0, metavar="X", check=nonnegative_finite,
            help="list only decisions losing at least X (牌); the report flags errors of at least X"),
        LUCK,
        SHARPEN,
        BELIEF,
        BELIEF_NOISE,
        SEED,
        WORKERS(help="threads (default 1; the result is the same for any number); with --backend dask and no "
                     "--scheduler, the local cluster's worker processes"),
        BACKEND(help="where the decisions are analysed: local (default) or a Dask cluster, one task per decision "
                     "(--scheduler, or a local cluster of --workers processes); the loss against --reference stays "
                     "in this process"),
        SCHEDULER,
        arg("--reference", default=D.DEFAULT_REFERENCE,
            help="for a replay log: also the loss against this policy playing the seat, from the deal's true cards "
                 f"(a built-in name, parameters too: search, mc:rollouts=8; or learned:PATH; default "
                 f"{D.DEFAULT_REFERENCE}; none: skip)"),
        arg("--samples", type=int, default=D.DEFAULT_SAMPLES, check=integer(2, 1_000_000),
            help=f"stock orders per decision of the loss against the reference (default {D.DEFAULT_SAMPLES})"),
        CONFIDENCE,
        OUT_DIR(help="write OUT/review.md (with the loss plot), review.json and decisions.parquet; several logs: "
                     "OUT/report.md (each log's loss) and OUT/NN-STEM/ (each log's review)"),
        arg("--html", default=None, metavar="FILE", check=out_file,
            help="also write the review as one self-contained HTML page (the deal step by step, each decision's "
                 "hand, actions, chosen against recommended and loss; no network needed to view it)"),
        arg("--json", action="store_true", help="print the review as one JSON object (several logs: one line each, "
                                                "with its log)"),
        QUIET,
    ), (_simulate_checks, _review_checks)),
    Command("play", "sit at the table against two bots: your hand in Chinese card names, the legal actions "
                    "numbered, a hint on request; writes a log simkit review reads", (
        arg("--seat", type=int, default=0, check=seat, help="your seat 0, 1 or 2 (default 0; seat 0 deals first)"),
        arg("--bots", nargs=2, default=list(D.DEFAULT_BOTS), metavar=("P1", "P2"),
            help="the policies of the other two seats, in seat order: any policy name (expert, greedy, "
                 f"patient:min_units=3, package.module:function) (default {' '.join(D.DEFAULT_BOTS)})"),
        RULE(help="rule option (repeatable)"),
        SEED(default=None, help="the deals' run seed (default: a random one, printed, to play the game again)"),
        arg("--deals", type=int, default=1, check=integer(1, 10_000),
            help="deals in the sitting (default 1); K > 1: a session, each next dealer by rule option next_dealer"),
        arg("--log", default=None, metavar="FILE",
            help="the log (simkit replay's JSON lines, written as you play; default play-SEED.jsonl here; with "
                 "--deals K > 1 one file per deal, FILE's name with -dealN before its suffix); never written over",
            check=out_file),
        arg("--hint-rollouts", type=int, default=D.DEFAULT_HINT_ROLLOUTS, metavar="N", check=integer(1, 1_000_000),
            help=f"determinisations per action of a hint (h) at most (default {D.DEFAULT_HINT_ROLLOUTS})"),
        arg("--hint-policy", default=D.DEFAULT_POLICY, metavar="POLICY",
            help="the rollout policy at every seat of a hint's analysis: any policy the rollouts play (a built-in "
                 f"name, parameters too: search, mc:rollouts=8; or learned:PATH; default {D.DEFAULT_POLICY})"),
    ), (_play_checks,)),
    Command("calibrate", "check the review against paired play: a policy's predicted and realised loss in one seat", (
        arg("policy", help="the policy in the seat: any compiled policy (a built-in name, parameters too: search, "
                           "mc:rollouts=8, expert:danger=20; learned:PATH; package.module:function)"),
        arg("--seat", type=int, default=D.DEFAULT_CALIBRATE_SEAT, check=seat,
            help=f"the seat it plays (default {D.DEFAULT_CALIBRATE_SEAT})"),
        arg("--reference", default=D.DEFAULT_REFERENCE,
            help="the policy it is measured against, also in the other seats: any policy the rollouts play (a "
                 f"built-in name, parameters too, or learned:PATH; default {D.DEFAULT_REFERENCE})"),
        arg("--deals", type=int, default=D.DEFAULT_CALIBRATE_DEALS, check=integer(2, 10_000_000),
            help=f"deals played both ways (default {D.DEFAULT_CALIBRATE_DEALS})"),
        arg("--first-deal", type=int, default=0, check=NONNEG, help="the first deal number (default 0)"),
        arg("--samples", type=int, default=D.DEFAULT_SAMPLES, check=integer(2, 1_000_000),
            help=f"stock orders per reviewed decision (default {D.DEFAULT_SAMPLES})"),
        RULE(help="rule option (repeatable)"),
        SEED,
        WORKERS(help="worker processes, each playing and reviewing whole deals (default 1; the result is the same "
                     "for any number)"),
        CONFIDENCE,
        OUT_DIR(help="write OUT/report.md (with the calibration plot), calibration.json and deals.parquet",
                check=run_folder("calibration")),
        arg("--json", action="store_true", help="print the calibration as one JSON object"),
        QUIET,
    )),
    Command("bench", "print throughput benchmarks (CPU time of the measuring thread)", (
        arg("target", choices=["evaluator", "engine", "score", "parquet", "all"], help="what to benchmark"),
        arg("--holdings", type=int, default=None, help="holdings per evaluator benchmark"),
        arg("--deals", type=int, default=None,
            help="deals per engine benchmark (policies x3; the slow mc and search play fewer)"),
        arg("--lines", type=int, default=None, help="lines per score --jsonl benchmark"),
        SEED(default=2026),
        arg("--json", action="store_true", help="print the figures as JSON"),
        arg("--markdown", action="store_true", help="print the figures as Markdown (docs/benchmarks.md)"),
        OUTPUT("--out", help="write the output here instead of stdout"),
    ), (_bench_checks,)),
    Command("rules", "print the effective rule set as TOML", (RULE,)),
    Command("compile", "compile the numba kernels once: later runs load them from the cache", (
        arg("targets", nargs="*", metavar="TARGET",
            help="what to compile: score, replay, deals, sessions, dealt-hands, prob, equity, "
                 "environment, generate, analyze, play (default: score replay deals dealt-hands)"),
        arg("--all", action="store_true", help="every target"),
    ), (_compile_checks,)),
)


# -- the parser -------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, status 2
        self.exit(EXIT_BAD_INPUT, f"simkit: error: {message}\n")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, list[tuple[str, str, Check]]]]:
    """The parser of :data:`COMMANDS`, and for each command its checks as (dest, flag, check)."""
    parser = _Parser(prog="simkit", description="Monte Carlo toolkit for 四色牌 (Sì Sè Pái).")
    parser.add_argument("--version", action="version", version=f"simkit {__version__}")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="on an error, also print the traceback (as SIMKIT_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    checks: dict[str, list[tuple[str, str, Check]]] = {}
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help)
        checks[command.name] = []
        for a in (*command.args, DEBUG):
            action = p.add_argument(*a.flags, **a.options)
            if a.check is not None:
                checks[command.name].append((action.dest, action.option_strings[0] if action.option_strings
                                             else action.dest, a.check))
    return parser, checks


def check_arguments(args: argparse.Namespace, checks: dict[str, list[tuple[str, str, Check]]]) -> None:
    """Run the checks of ``args.command`` on ``args`` (in place): numbers, then paths, then the
    command's cross-checks.  Raises a one-line :class:`SimkitError`."""
    own = checks[args.command]
    for dest, flag, check in sorted(own, key=lambda c: _is_path_check(c[2])):
        if hasattr(args, dest):
            setattr(args, dest, check(getattr(args, dest), flag))
    for cross in _COMMAND_BY_NAME[args.command].checks:
        cross(args)


def _is_path_check(check: Check) -> bool:
    return check in _PATH_CHECKS or getattr(check, "path_check", False)


_COMMAND_BY_NAME = {c.name: c for c in COMMANDS}


def parse_command_line(argv: Sequence[str]) -> argparse.Namespace:
    """Parse and check a command line (argparse's own errors exit with status 2 and one line;
    a failed check raises a one-line :class:`SimkitError`)."""
    parser, checks = build_parser()
    args = parser.parse_args(list(argv))
    check_arguments(args, checks)
    return args
