"""Markdown reports with plots (PNG + SVG) of simulation datasets and of dealt hands.

:func:`dataset_section` turns one dataset into Markdown (tables + figures); :func:`write_report`
writes it as ``report.md``. Experiment reports (:mod:`simkit.experiment`) reuse the sections.
:func:`write_dealt_hands_report` writes a dealt-hands dataset (``simkit prob --hands`` /
``simkit deals``) with its report.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pandas as pd

import simkit
from simkit.analysis.plots import (
    convergence_plot,
    dealt_distribution_plot,
    hu_distribution_plot,
    payoff_by_policy_plot,
    save_figure,
    win_rate_by_seat_plot,
)
from simkit.analysis.exact import EVENTS, exact_probability
from simkit.analysis.results import format_level
from simkit.analysis.stats import check_confidence, proportion_convergence, wilson_interval
from simkit.analysis.summary import (
    dealer_advantage,
    dealer_advantage_by_policy,
    distributions,
    exhausted_rate,
    first_winner_dealing,
    has_sessions,
    pattern_frequencies,
    session_dealer_advantage,
    session_seat_results,
    tail_probabilities,
    win_kinds,
    win_rates,
    win_rates_by_policy,
)
from simkit.evaluator import PATTERN_NAMES
from simkit.evaluator.patterns import PATTERN_CHINESE
from simkit.glossary import MEASURE_CHINESE, WIN_KIND_CHINESE, in_words
from simkit.rules import RuleSet
from simkit.storage import load_dataset, read_manifest
from simkit.storage.dataset import POLICY_LABELS
from simkit.storage.dataset import seating as manifest_seating
from simkit.storage.files import write_json, write_text
from simkit.storage.hands import HANDS_FILE, write_hands_dataset
from simkit.storage.paths import make_out_dir
from simkit.storage.runs import REPORT_MARKER, check_run_folder

# ``session`` / ``deal_in_session`` are derived by load_dataset for runs of independent deals
REPORT_COLUMNS = (["deal_id", "session", "deal_in_session", "dealer", "winner", "win_kind", "hu", "units", "lou", "steps",
                   "turns", "draws", "claims"]
                  + [f"payoff_{k}" for k in range(3)] + [f"policy_{k}" for k in range(3)]
                  + [f"pattern_{p}" for p in PATTERN_NAMES])


def plain_policy_columns(df: pd.DataFrame, policy_label: Callable[[str], str]) -> pd.DataFrame:
    """``df`` with its ``policy_0..2`` columns relabelled by ``policy_label`` (a text -> label
    map given by the caller, e.g. :func:`simkit.policies.registry.label_of_text`, which gives
    ``expert`` with parameters only where they differ from the defaults): a dataset written
    before plain labels holds each policy's full positional vector there.  The statistics
    layer knows no bot: the labels arrive as data (issue 53)."""
    for k in range(3):
        column = f"policy_{k}"
        if column not in df.columns or not isinstance(df[column].dtype, pd.CategoricalDtype):
            continue
        before = [str(c) for c in df[column].cat.categories]
        after = [policy_label(c) for c in before]
        if after != before and len(set(after)) == len(after):
            df[column] = df[column].cat.rename_categories(after)
    return df


def _manifest_labels(manifest: dict, policy_label: Callable[[str], str]) -> list[str]:
    """The policies' labels a manifest records, else ``policy_label`` of its policy texts."""
    labels = manifest.get(POLICY_LABELS)
    if labels:
        return [str(x) for x in labels]
    return [policy_label(str(p)) for p in manifest.get("policies", [])]


def format_p(p: float) -> str:
    """A p-value for tables; values that underflow double precision read ``< 1e-300``.

    >>> format_p(0.0123456), format_p(0.0), format_p(float("nan"))
    ('0.0123', '< 1e-300', 'nan')
    """
    if p != p:
        return "nan"
    return "< 1e-300" if p < 1e-300 else f"{p:.3g}"


def markdown_table(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> list[str]:
    """A DataFrame as Markdown table lines; ``formats`` maps columns to format specs.

    >>> markdown_table(pd.DataFrame({"a": [1.23456], "b": ["x"]}), {"a": ".2f"})
    ['| a | b |', '|---|---|', '| 1.23 | x |']
    """
    formats = formats or {}
    lines = ["| " + " | ".join(str(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row):
            spec = formats.get(column)
            cells.append(format(value, spec) if spec and pd.notna(value) else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _interval(frame: pd.DataFrame, value: str, lo: str, hi: str, spec: str) -> pd.Series:
    return frame.apply(lambda r: f"{r[value]:{spec}} [{r[lo]:{spec}}, {r[hi]:{spec}}]", axis=1)


CONFOUNDED = "**confounded with seat**"
BALANCED = "balanced"


def _seating_flags(frame: pd.DataFrame, what: str) -> pd.Series:
    """The same-row flag of a table whose figures may mix seat and policy (``confounded``)."""
    return frame["confounded"].map(lambda c: f"{CONFOUNDED}: {what}" if c else BALANCED)


def sessions_section(df: pd.DataFrame, heading: str = "##", independent: pd.DataFrame | None = None,
                     independent_label: str = "", confidence: float = 0.95) -> list[str]:
    """Markdown lines on a run in sessions (a rotating dealer): per-seat session results, how
    the winner of a session's first deal keeps dealing, and the per-deal dealer advantage in
    sessions against independent deals (``independent``: a K = 1 run of the same deals, named
    ``independent_label``), intervals at ``confidence``.  Empty for independent deals."""
    if not has_sessions(df):
        return []
    h = heading
    level = format_level(check_confidence(confidence))
    seats = session_seat_results(df, confidence)
    k = int(seats["session_length"].iloc[0])
    full = int(seats["full_sessions"].iloc[0])
    n_sessions = int(seats["sessions"].iloc[0])
    seat_table = pd.DataFrame({
        "seat": seats["seat"], "policy": seats["policy"], "deals dealt": seats["dealt"],
        f"share dealt [{level}] (vs 1/3)": _interval(seats, "dealt_share", "dealt_share_lo", "dealt_share_hi", ".4f"),
        "p (share = 1/3)": seats["dealt_share_p"].map(format_p),
        f"win rate [{level}]": _interval(seats, "win_rate", "win_rate_lo", "win_rate_hi", ".4f"),
        f"mean session payoff 牌 [{level} t]": _interval(seats, "mean_session_payoff", "mean_session_payoff_lo",
                                                    "mean_session_payoff_hi", "+.3f"),
        "seat vs policy": _seating_flags(seats, "this seat's figures are also its policy's")})
    first = first_winner_dealing(df, confidence)
    first_table = pd.DataFrame({
        "measure (deals 1..K-1)": first["measure"], "sessions": first["sessions"],
        "winner of deal 0": first["first_winner"].map("{:.3f}".format),
        "other seat (mean)": first["other_seat"].map("{:.3f}".format),
        f"difference [{level} t]": _interval(first, "difference", "difference_lo", "difference_hi", "+.3f"),
        "p-value": first["p_value"].map(format_p),
        "policies": first["confounded"].map(lambda c: "**mixes in policy strength**: the winner of deal 0 is more "
                                                      "often the stronger policy" if c else "all the same")})
    adv = session_dealer_advantage(df, independent, confidence)
    adv_table = pd.DataFrame({
        "measure": adv["measure"], "deals": adv["deals"], "n": adv["n"].map("{:,}".format),
        "dealer": adv["dealer"].map(lambda x: "—" if pd.isna(x) else f"{x:.4f}"),
        "non-dealer (per seat)": adv["non_dealer"].map(lambda x: "—" if pd.isna(x) else f"{x:.4f}"),
        f"difference [{level}]": _interval(adv, "difference", "difference_lo", "difference_hi", "+.4f"),
        "p-value": adv["p_value"].map(format_p),
        "seat vs policy": _seating_flags(adv, "the dealer's seat holds some policy more often than the others")})
    cut = n_sessions - full
    lines = [f"{h} Sessions ({n_sessions:,} sessions of {k} deals)", "",
             f"Deals are played in sessions of {k}: seat 0 deals a session's first deal, the winner deals the next "
             "one, and after 穿牌 the rule option `next_dealer` decides (docs/rules.md §8). Seats are fixed players "
             "across a session. Deal N has the same cards as in a run of independent deals with the same seed; only "
             "its dealer differs. Intervals and tests over deals are clustered by session (deals within a session "
             "are dependent through the dealer); session payoffs (sum over a session's deals) use a t interval over "
             f"{full:,} full sessions" + (f" (the last, cut session of {len(df) - full * k} deals is left out)"
                                          if cut else "") + ".", "",
             ] + markdown_table(seat_table) + [
             "", f"{h}# Does the deal stay with the winner?", "",
             "Over sessions whose first deal had a winner: deals 1..K-1 dealt by that winner, and its payoff over "
             "them, against the mean of the two other seats (paired within the session).", "",
             ] + markdown_table(first_table) + [
             "", f"{h}# Dealer advantage per deal, sessions against independent deals", "",
             "Dealer's outcome minus the mean of the two non-dealers', per deal. A session's first deal is dealt "
             "by seat 0 from a fresh start, like an independent deal; later deals are dealt by the previous "
             "deal's winner."
             + (f" The independent deals are the same deals played as independent deals (seat 0 always deals) in "
                f"**{independent_label}**; the change is paired per deal." if independent is not None else ""), "",
             ] + markdown_table(adv_table) + [""]
    change = adv[adv["deals"].str.startswith("change")]
    if len(change) and (change["difference_lo"] == 0).all() and (change["difference_hi"] == 0).all():
        lines += ["Every deal's dealer-minus-non-dealers outcome is the same in sessions as in the independent "
                  "run: all seats play the same policy and it does not depend on who deals, so a deal's outcome "
                  "relative to its dealer is the same whichever seat deals it. Sessions change who deals (the "
                  "tables above), not the edge per deal.", ""]
    return lines


def dataset_section(df: pd.DataFrame, directory: str | Path, prefix: str = "", heading: str = "##",
                    convergence: bool = True, independent: pd.DataFrame | None = None,
                    independent_label: str = "", confidence: float = 0.95) -> list[str]:
    """Markdown lines (and figures named ``PREFIX*.png/svg`` in ``directory``) for one dataset.

    Sections: seats, policies, dealer advantage, (for a run in sessions) sessions, how deals
    end, distributions, tail probabilities, pattern frequencies; figures: win rate by seat,
    payoff by policy, hu distribution and (``convergence``) the dealer's running win rate
    against deals.  ``independent``: the same deals played independently, compared with a run
    in sessions (:func:`sessions_section`).  Intervals (and the headers that state their level)
    at ``confidence``.
    """
    directory = Path(directory)
    level = format_level(check_confidence(confidence))
    n = len(df)
    rates = win_rates(df, confidence)
    by_policy = win_rates_by_policy(df, confidence)
    advantage = dealer_advantage(df, confidence)
    exhausted = exhausted_rate(df, confidence)
    save_figure(win_rate_by_seat_plot(rates, confidence=confidence).figure, directory, f"{prefix}win_rate_by_seat")
    save_figure(payoff_by_policy_plot(by_policy, title=f"Mean payoff by policy (n={n:,} deals)",
                                      confidence=confidence).figure, directory, f"{prefix}payoff_by_policy")
    save_figure(hu_distribution_plot(df.loc[df["winner"] >= 0, "hu"].to_numpy(dtype="int64")).figure, directory,
                f"{prefix}hu_distribution")
    by_dealing = dealer_advantage_by_policy(df, confidence)
    seats = pd.DataFrame({"seat": rates["seat"], "policy": rates["policy"], "wins": rates["wins"],
                          f"win rate [{level} Wilson]": _interval(rates, "win_rate", "win_rate_lo", "win_rate_hi", ".4f"),
                          f"mean payoff 牌 [{level} t]": _interval(rates, "mean_payoff", "mean_payoff_lo", "mean_payoff_hi", "+.4f"),
                          "seat vs policy": _seating_flags(rates, "this seat's figures are also its policy's")})
    policies = pd.DataFrame({"policy": by_policy["policy"], "seat-deals": by_policy["seat_deals"],
                             f"win rate [{level} Wilson]": _interval(by_policy, "win_rate", "win_rate_lo", "win_rate_hi", ".4f"),
                             f"mean payoff 牌 [{level} t]": _interval(by_policy, "mean_payoff", "mean_payoff_lo",
                                                                  "mean_payoff_hi", "+.4f"),
                             "share of its seat-deals it dealt": by_policy["dealt_share"].map("{:.3f}".format),
                             "seat vs policy": _seating_flags(by_policy, "it does not sit at every seat equally often "
                                                                         "(its figures include its seats' edge)")})
    adv = pd.DataFrame({"measure": advantage["measure"], "dealer": advantage["dealer"].map("{:.4f}".format),
                        "non-dealer (per seat)": advantage["non_dealer"].map("{:.4f}".format),
                        f"difference [{level} t]": _interval(advantage, "difference", "difference_lo", "difference_hi", "+.4f"),
                        "t": advantage["t"].map("{:.2f}".format), "p-value": advantage["p_value"].map(format_p),
                        "seat vs policy": _seating_flags(advantage, "the dealer's seat holds some policy more "
                                                                    "often than the others (also a policy difference)")})
    per_policy = pd.DataFrame({
        "policy": by_dealing["policy"], "measure": by_dealing["measure"],
        "dealing (n)": [f"{v:.4f} ({n:,})" if n else "—" for v, n in zip(by_dealing["dealing"], by_dealing["dealing_n"])],
        "not dealing (n)": [f"{v:.4f} ({n:,})" if n else "—"
                            for v, n in zip(by_dealing["not_dealing"], by_dealing["not_dealing_n"])],
        f"difference [{level}]": [note or f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]" for d, lo, hi, note in
                             zip(by_dealing["difference"], by_dealing["difference_lo"], by_dealing["difference_hi"],
                                 by_dealing["note"])],
        "p-value": [("—" if note else format_p(p)) for p, note in zip(by_dealing["p_value"], by_dealing["note"])]})
    kinds = win_kinds(df, confidence)
    kinds_table = pd.DataFrame({"ending": [in_words(k, WIN_KIND_CHINESE) for k in kinds["win_kind"]],
                                "deals": kinds["hits"],
                                f"share [{level} Wilson]": _interval(kinds, "p", "lo", "hi", ".4f")})
    dist = distributions(df)
    dist = dist.assign(column=[in_words(c, MEASURE_CHINESE) for c in dist["column"]])
    tails = tail_probabilities(df, confidence)
    tails_table = pd.DataFrame({"event (among wins)": tails["event"], "hits": tails["hits"],
                                f"probability [{level} Wilson]": _interval(tails, "p", "lo", "hi", ".4f")})
    patterns = pattern_frequencies(df, confidence)
    patterns = patterns[patterns["hits"] > 0]
    patterns_table = pd.DataFrame({"pattern": [in_words(p, PATTERN_CHINESE) for p in patterns["pattern"]],
                                   "wins with it": patterns["hits"],
                                   f"share of wins [{level} Wilson]": _interval(patterns, "p", "lo", "hi", ".5f")})
    h = heading
    rows_text = (f"{df['deal_id'].nunique():,} deals x 6 seatings" if "deal_id" in df.columns
                 and df["deal_id"].nunique() < n else f"{n:,} deals")
    repeated = "x 6 seatings" in rows_text
    lines = [f"{h} Seats ({rows_text})", ""] + ([
        "Six rows per deal (seating `all`): the seat, policy and dealer tables cluster their intervals by deal; "
        "the tables of how deals end, distributions, tails and patterns count rows, and their intervals treat "
        "the six seatings of a deal as independent (too narrow).", ""] if repeated else []) + markdown_table(seats) + [
        "", f"![win rate by seat]({prefix}win_rate_by_seat.png)", "",
        f"{h} Policies (pooled over their seats)", ""] + markdown_table(policies) + [
        "", f"![payoff by policy]({prefix}payoff_by_policy.png)", "",
        f"{h} Dealer advantage", "",
        "Per deal: dealer's outcome minus the mean of the two other seats' (one-sample t test on the "
        "per-deal differences). With fixed seats and different policies the dealer's seat always holds the "
        "same policy, so this also measures that policy (flagged in the row); rotated seats spread the "
        "policies over the dealer's seat.", ""
    ] + markdown_table(adv) + [
        "", f"{h}# Dealer advantage per policy", "",
        "Each policy's outcome in the seat-deals in which it deals against those in which it does not (the same "
        f"policy on both sides; intervals clustered by {'session' if has_sessions(df) else 'deal'}). A policy "
        "that always or never deals (fixed seats) has no such comparison.", ""] + markdown_table(per_policy)
    if convergence and n >= 100:
        dealer_won = (df["winner"].to_numpy() == df["dealer"].to_numpy())
        curve = proportion_convergence(dealer_won, confidence)
        save_figure(convergence_plot(curve, f"dealer's win rate ({level} Wilson)", "Dealer's win rate against deals",
                                     confidence=confidence).figure, directory, f"{prefix}dealer_win_convergence")
        lines += ["", f"![dealer win rate convergence]({prefix}dealer_win_convergence.png)"]
    if has_sessions(df):
        lines += [""] + sessions_section(df, h, independent, independent_label, confidence)[:-1]
    lines += ["", f"{h} How deals end", "",
              f"穿牌 (no winner): {exhausted.estimate:.4f} [{exhausted.lo:.4f}, {exhausted.hi:.4f}].", ""] + markdown_table(kinds_table) + [
        "", f"{h} Distributions", "",
        "hu, units, 楼 and 步 over won deals; turns (discard phases), draws and claims over all deals.", ""
    ] + markdown_table(dist, {c: ".2f" for c in dist.columns if c not in ("column", "over", "n")}) + [
        "", f"![hu distribution]({prefix}hu_distribution.png)", "",
        f"{h} Tail probabilities", ""] + markdown_table(tails_table) + [
        "", f"{h} Pattern frequencies among wins", ""] + markdown_table(patterns_table) + [""]
    return lines


def default_report_dir(dataset: str | os.PathLike) -> Path:
    """Where :func:`write_report` writes by default: the folder next to ``dataset`` named after
    it with ``-report`` (a trailing slash dropped).

    >>> default_report_dir("runs/big/").as_posix(), default_report_dir("data").as_posix()
    ('runs/big-report', 'data-report')
    """
    path = Path(dataset)
    if path.name in ("", ".", ".."):  # "." or "..": name the folder itself
        path = Path(os.path.abspath(path))
    return path.with_name(path.name + "-report")




def check_report_dir(out: str | os.PathLike) -> Path:
    """``out`` as a Path once a report may be written there: a usable folder outside every
    dataset that is new, empty, or a report's (it holds :data:`REPORT_MARKER`), so that a
    report never replaces a user's own ``report.md`` or figures; a one-line error otherwise.
    Creates nothing."""
    return check_run_folder(out, "report")


def mark_report_dir(directory: Path) -> Path:
    """Create ``directory`` (checked by :func:`check_report_dir`) and write its
    :data:`REPORT_MARKER`, before anything else, so that a report stopped half-way still
    leaves a folder a re-run may take."""
    make_out_dir(directory)
    marker = directory / REPORT_MARKER
    if not marker.exists():
        write_json(marker, {"kind": "simkit report", "simkit_version": simkit.__version__})
    return directory


def write_report(dataset: str | os.PathLike, out: str | os.PathLike | None = None, confidence: float = 0.95,
                 policy_label: Callable[[str], str] = str) -> Path:
    """Write ``report.md`` (and plots) for a dataset, intervals at ``confidence``; the report's
    path.  By default into the dataset's sibling folder ``DATASET-report`` (see
    :func:`default_report_dir`), so the dataset folder keeps only Parquet files and
    ``pd.read_parquet(DATASET)`` keeps working.  The folder must be new, empty or a report's
    (:func:`check_report_dir`): a folder of other files is refused, never written into.
    ``policy_label`` relabels the policy texts of a dataset written before plain labels (see
    :func:`plain_policy_columns`; the command line passes the registry's ``label_of_text``);
    a newer dataset's manifest records its labels, which are used as they are."""
    level = format_level(check_confidence(confidence))
    directory = check_report_dir(out if out is not None else default_report_dir(dataset))
    df = plain_policy_columns(load_dataset(dataset, columns=REPORT_COLUMNS), policy_label)  # verified before anything is written
    manifest = read_manifest(Path(dataset)) or {}
    mark_report_dir(directory)
    k = int(manifest.get("session_length", 1))
    sessions = (f"sessions of {k} deals (next_dealer {manifest.get('rules', {}).get('next_dealer')}), "
                if k > 1 else "")
    seating = manifest_seating(manifest) if manifest else "fixed"
    seating_text = {"fixed": "fixed seats (seat k plays policy k)",
                    "rotate": "rotated seats (deal N: seat s plays policy (s + N) mod 3" + (", per session)" if k > 1
                                                                                           else ")"),
                    "all": "all 6 seatings of every deal (6 rows per deal)"}[seating]
    deals = df["deal_id"].nunique() if "deal_id" in df.columns else len(df)
    lines = [
        "# Simulation report",
        "",
        f"{deals:,} deals, seed {manifest.get('seed')}, "
        f"policies {', '.join(_manifest_labels(manifest, policy_label))}, "
        f"{seating_text}, "
        f"{sessions}batch size {manifest.get('batch_size')}, simkit {manifest.get('simkit_version')}. "
        f"Intervals are {level}: Wilson for proportions, Student t for means; payoffs in 牌 per deal.",
        "",
    ] + dataset_section(df, directory, confidence=confidence)
    write_text(directory / "report.md", "\n".join(lines))
    return directory / "report.md"


# the dealer's events in a dealt-hands report: (label, selects the dealer's rows of the table,
# the event and its parameters in simkit.analysis.exact, for the exact value)
_DEALER_EVENTS = (
    ("dealer dealt a complete hand", lambda d: d["complete"], "dealer_dealt_complete", {}),
    ("dealer dealt a winning hand (天胡)", lambda d: d["wins"], "dealer_dealt_win", {}),
    ("dealer dealt >= 8 将", lambda d: d["n_jiang"] >= 8, "jiang_at_least_k", {"k": 8}),
    ("dealer dealt a 闹 (4 of a kind)", lambda d: d["n_nao"] >= 1, "nao", {}),
)


def dealt_hands_text(frame: pd.DataFrame, seed: int, batch_size: int, rules: RuleSet,
                     confidence: float = 0.95) -> str:
    """``report.md`` of a dealt-hands table (:func:`simkit.studies.dealt.deal_table`): the
    dealer's events with Wilson intervals at ``confidence`` and exact values, per-seat
    summaries, the figures of :func:`write_dealt_hands_report`."""
    level = format_level(check_confidence(confidence))
    n_deals = int(frame["deal_id"].nunique())
    dealer = frame[frame["seat"] == 0]
    rows = []
    for label, select, event, params in _DEALER_EVENTS:
        k = int(select(dealer).sum())
        wilson = wilson_interval(k, len(dealer), confidence)
        lo, hi = wilson.lo, wilson.hi
        exact_text = f"{float(exact_probability(event, 0, **params)):.5f}" if EVENTS[event].exact else "—"
        rows.append(
            f"| {label} | {k:,} / {len(dealer):,} | {k / len(dealer):.5f} | [{lo:.5f}, {hi:.5f}] | {exact_text} |"
        )
    seat_rows = []
    for seat, sub in frame.groupby("seat"):
        q = sub["min_idle"].quantile([0.05, 0.5, 0.95]).tolist()
        seat_rows.append(
            f"| {seat} | {len(sub):,} | {sub['min_idle'].mean():.3f} | {q[0]:.0f} / {q[1]:.0f} / {q[2]:.0f} "
            f"| {sub['n_jiang'].mean():.3f} | {sub['n_pairs'].mean():.3f} | {sub['n_zi'].mean():.3f} |"
        )
    return "\n".join(
        [
            "# Dealt hands",
            "",
            f"{n_deals:,} deals, seed {seed}, batch size {batch_size}, simkit {simkit.__version__}; "
            f"rules: {', '.join(rules.to_strings()) or 'defaults'}.",
            "",
            f"## Dealer's dealt 31 cards ({level} Wilson intervals)",
            "",
            f"| event | count | probability | {level} interval | exact |",
            "|---|---|---|---|---|",
            *rows,
            "",
            "## Per seat",
            "",
            "| seat | hands | mean idle cards | idle 5% / 50% / 95% | mean 将 | mean pairs | mean 子 |",
            "|---|---|---|---|---|---|---|",
            *seat_rows,
            "",
            "![idle cards](min_idle.png)",
            "",
            "![将 per seat](n_jiang.png)",
            "",
            f"Data: `{HANDS_FILE}` (one row per deal and seat), `manifest.json`.",
            "",
        ]
    )


def write_dealt_hands_report(frame: pd.DataFrame, out_dir: str | os.PathLike, seed: int, batch_size: int,
                             rules: RuleSet, confidence: float = 0.95) -> Path:
    """Write ``deals.parquet``, ``manifest.json``, the figures ``min_idle`` and ``n_jiang``
    (PNG + SVG) and ``report.md`` (intervals at ``confidence``) of a dealt-hands table into
    out_dir; returns the report's path.  ``out_dir`` must be new, empty or a dealt-hands folder
    (it holds ``manifest.json``): a folder of other files is refused, never written into."""
    directory = check_run_folder(out_dir, "hands")
    text = dealt_hands_text(frame, seed, batch_size, rules, confidence)  # checks confidence before writing
    write_hands_dataset(frame, directory, seed, batch_size, rules)
    save_figure(dealt_distribution_plot(frame, "min_idle", "idle cards (fewest over all decompositions)",
                                        "Distance of the dealt hand from complete").figure, directory, "min_idle")
    save_figure(dealt_distribution_plot(frame, "n_jiang", "generals (将, jiang) in the dealt hand (cards)",
                                        "Generals (将) dealt per seat").figure, directory, "n_jiang")
    write_text(directory / "report.md", text)
    return directory / "report.md"

