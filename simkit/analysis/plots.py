"""Analysis plots on matplotlib's object-oriented API (no pyplot, no backend selected).

Each plot function takes the table an analysis function returned and draws one chart with
labelled axes (units and sample sizes in the labels or title) on ``ax``; without one it makes
a new :class:`matplotlib.figure.Figure` of the chart's usual size.  It returns the Axes, so
charts compose with other matplotlib code (``fig, axes = plt.subplots(1, 2)``; ``plot(..., ax=axes[0])``).
Importing simkit, or plotting with it, never calls ``matplotlib.use`` nor imports pyplot.

:func:`save_figure` writes a figure as ``STEM.png`` and ``STEM.svg`` (120 dpi) atomically, as the
reports do; it needs no display.  Interval labels state the level of ``confidence``.

Labels speak the player's language (issue 40): payoffs are in 牌.  Chinese text draws in the
bundled ``fonts/NotoSansSC-simkit.otf`` (a subset of Noto Sans SC, SIL Open Font License, made by
``tools/subset_font.py``) as a fallback after the user's own font family: the plot functions and
:func:`save_figure` add it (:func:`chinese_text`), on every machine, with no system font needed
and the global ``rcParams`` left as they are.

>>> ax = forest_plot(pd.DataFrame({"label": ["a - b"], "estimate": [0.1], "lo": [0.0], "hi": [0.2], "n": [100]}),
...                  "difference", "A against B")
>>> ax.get_title(), type(ax.figure).__name__
('A against B', 'Figure')
"""

from __future__ import annotations

import contextlib
import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from simkit.analysis.results import format_level
from simkit.storage.files import write_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "CJK_FONT_FAMILY",
    "CJK_FONT_FILE",
    "chinese_text",
    "convergence_plot",
    "crosstable_plot",
    "dealt_distribution_plot",
    "decision_text",
    "forest_plot",
    "hu_distribution_plot",
    "new_axes",
    "overflow_edge",
    "overflow_histogram",
    "payoff_by_policy_plot",
    "policy_name",
    "save_figure",
    "seat_policy_text",
    "short_policy_names",
    "sprt_llr_plot",
    "training_loss_plot",
    "training_strength_plot",
    "tuning_plot",
    "win_rate_by_seat_plot",
    "wrap_label",
]


CJK_FONT_FILE = Path(__file__).with_name("fonts") / "NotoSansSC-simkit.otf"
"""The bundled font of Chinese text: Noto Sans SC cut to the CJK characters of simkit's sources
(``tools/subset_font.py`` makes it; its licence is ``fonts/OFL.txt``)."""
CJK_FONT_FAMILY = "Noto Sans SC"
"""The family name of :data:`CJK_FONT_FILE`, the last entry of a plot's ``font.family``."""


def _register_cjk_font() -> None:
    """Add :data:`CJK_FONT_FILE` to matplotlib's font manager unless it is there (no rcParams change)."""
    from matplotlib import font_manager

    manager = font_manager.fontManager
    if not any(entry.fname == str(CJK_FONT_FILE) for entry in manager.ttflist):
        manager.addfont(str(CJK_FONT_FILE))


def _with_cjk(families) -> list[str]:
    families = [families] if isinstance(families, str) else list(families)
    return families if CJK_FONT_FAMILY in families else [*families, CJK_FONT_FAMILY]


def _add_cjk_fallback(figure: Figure) -> None:
    """Give every text of ``figure`` :data:`CJK_FONT_FAMILY` as its last font family (a text's
    families are fixed when it is made; tick labels made later copy the first tick's)."""
    from matplotlib.text import Text

    _register_cjk_font()
    for text in figure.findobj(Text):
        family = text.get_fontfamily()
        if CJK_FONT_FAMILY not in family:
            text.set_fontfamily(_with_cjk(family))


@contextlib.contextmanager
def chinese_text(figure: Figure | None = None):
    """A context where text draws in the current ``font.family`` and, for the glyphs it lacks
    (Chinese), in :data:`CJK_FONT_FAMILY` (matplotlib's per-glyph font fallback): text made
    inside keeps that fallback, and so does every text of ``figure`` already made.  The global
    ``rcParams`` are unchanged afterwards.

    >>> ax = new_axes((3, 2))
    >>> _ = ax.set_xlabel("payoff (牌)")
    >>> ax.xaxis.label.get_fontfamily()[-1]
    'Noto Sans SC'
    """
    import matplotlib

    _register_cjk_font()
    with matplotlib.rc_context({"font.family": _with_cjk(matplotlib.rcParams["font.family"])}):
        if figure is not None:
            _add_cjk_fallback(figure)
        yield


def _plot(function):
    """Run a plot function inside :func:`chinese_text`, and give every text of the figure of
    the Axes it returns (an Axes the caller passed included) the Chinese fallback."""
    @functools.wraps(function)
    def plot(*args, **kwargs):
        with chinese_text():
            result = function(*args, **kwargs)
        if getattr(result, "figure", None) is not None:
            _add_cjk_fallback(result.figure)
        return result

    return plot


def new_axes(figsize: tuple[float, float]) -> Axes:
    """The Axes of a new figure of ``figsize`` inches (``matplotlib.figure.Figure``, not pyplot:
    no backend is selected and nothing needs closing); its text has the Chinese fallback
    (:func:`chinese_text`)."""
    from matplotlib.figure import Figure

    with chinese_text():
        return Figure(figsize=figsize).add_subplot()


def save_figure(figure: Figure, directory: str | Path, stem: str) -> Path:
    """Lay out ``figure`` (``tight_layout``) and write it as ``STEM.png`` and ``STEM.svg`` into
    ``directory`` (created if needed), every text with the Chinese fallback (:func:`chinese_text`);
    returns the PNG's path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with chinese_text(figure):
        figure.tight_layout()
        write_figure(figure, directory, stem)
    return directory / f"{stem}.png"


def overflow_edge(values: np.ndarray, step: int = 5, floor: int = 60) -> int:
    """Where a histogram's overflow bin starts: a multiple of ``step`` at least ``floor`` and
    about 10 above the 99th percentile of ``values``.

    >>> overflow_edge(np.array([10, 20, 30])), overflow_edge(np.arange(200))
    (60, 210)
    """
    values = np.asarray(values, dtype=float)
    top = max(floor, int(np.quantile(values, 0.99)) + 10) if values.size else floor
    return int(step * -(-top // step))


@_plot
def overflow_histogram(ax: Axes, values: np.ndarray, edge: int, step: int = 5, label: str | None = None,
                       color: str = "tab:blue", filled: bool = True, unit: str = "", noun: str = "values",
                       prefix: str = "") -> np.ndarray:
    """Draw a density histogram of ``values`` in ``step``-wide bins from 0 to ``edge``, and the
    values at or above ``edge`` as one overflow bar after them: hatched, with the tick label
    ``≥ EDGE`` and its own legend entry (``PREFIXoverflow ≥ EDGE UNIT: n NOUN``), so the clipped
    tail does not read as a spike of the last bin.  Densities are per unit of the value (the
    overflow bar's height is its fraction / ``step``).  ``filled=False`` draws outlines, for
    several samples on one Axes.  Returns the heights: the regular bins, then the overflow.

    >>> ax = new_axes((4, 3))
    >>> overflow_histogram(ax, np.array([1, 2, 7, 99]), edge=10).tolist()
    [0.1, 0.05, 0.05]
    >>> [t.get_text() for t in ax.get_xticklabels()][-1]
    '≥ 10'
    """
    from matplotlib.ticker import MaxNLocator

    values = np.asarray(values, dtype=float)
    n = values.size
    edges = np.arange(0, edge + step, step, dtype=float)
    inside = values[values < edge]
    counts, _ = np.histogram(np.clip(inside, 0, None), bins=edges)
    over = int(n - inside.size)
    heights = counts / (n * step) if n else counts.astype(float)
    if filled:
        ax.bar(edges[:-1], heights, width=step, align="edge", color=color, label=label)
    else:
        ax.stairs(heights, edges, color=color, linewidth=1.5, label=label)
    overflow = over / (n * step) if n else 0.0
    # the overflow bar stands one bin apart from the regular ones, its tick clear of theirs
    where = edge + step
    ticks = [float(t) for t in MaxNLocator(nbins=8, steps=[1, 2, 5, 10]).tick_values(0, edge)
             if 0 <= t <= edge and (not over or t <= edge - 0.08 * (where + step))]
    if over:
        ax.bar([where], [overflow], width=step, align="edge", facecolor="0.85" if filled else "none",
               edgecolor=color, hatch="///", linewidth=1.2,
               label=f"{prefix}overflow ≥ {edge}{unit}: {over:,} {noun}")
        ax.set_xticks(ticks + [where + step / 2], [f"{t:g}" for t in ticks] + [f"≥ {edge}"])
        ax.set_xlim(0, where + step)
    else:
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.set_xlim(0, edge)
    return np.r_[heights, overflow]


@_plot
def hu_distribution_plot(hu_of_wins: np.ndarray, ax: Axes | None = None,
                         title: str = "胡数 (hu) of winning hands") -> Axes:
    """Histogram of the winner's 胡数 (hu) (fraction of won deals per 5-胡 bin); the wins above
    about the 99th percentile are one overflow bar, hatched and labelled ``≥ EDGE`` (see
    :func:`overflow_histogram`)."""
    hu = np.asarray(hu_of_wins, dtype=float)
    ax = new_axes((7, 4)) if ax is None else ax
    edge = overflow_edge(hu)
    overflow_histogram(ax, hu, edge, label="wins per 5-胡 bin", unit=" 胡", noun="wins")
    ax.axvline(48, color="k", linestyle="--", linewidth=1,
               label="48 胡: the least a win without 楼 (lou) needs (default rules)")
    ax.set_xlabel("winner's 胡数 (hu)")
    ax.set_ylabel("density (fraction of won deals per 胡)")
    ax.set_title(f"{title} (n={hu.size:,} wins)")
    ax.legend(fontsize=8)
    return ax


def wrap_label(text: str, width: int = 40) -> str:
    """``text`` on lines of at most ``width`` characters where it can be, broken after spaces,
    commas and colons (policy parameters), never inside a number.

    >>> print(wrap_label("expert:57.6,13.4,0.78,95.9", 12))
    expert:57.6,
    13.4,0.78,
    95.9
    """
    lines: list[str] = []
    for paragraph in str(text).split("\n"):
        line = ""
        for token in re.findall(r"[^ ,:]*[ ,:]?", paragraph):
            if line and len(line.rstrip()) + len(token.rstrip()) > width:
                lines.append(line.rstrip())
                line = ""
            line += token
        lines.append(line.rstrip())
    return "\n".join(lines)


def policy_name(text: str) -> str:
    """A policy's short name for a plot: the parameters dropped and an import path cut to its
    function's name.

    >>> policy_name("patient:2,6,1"), policy_name("expert:danger=20:claim_hu=40"), policy_name("pkg.mod:cautious:1,2")
    ('patient', 'expert', 'cautious')
    """
    text = str(text).strip()
    head, _, rest = text.partition(":")
    if "." in head and rest:  # module.path:function[:parameters]
        head = rest.partition(":")[0]
    return head


def short_policy_names(texts) -> dict[str, str]:
    """Each policy text's display name for a plot: :func:`policy_name` (no parameters), except
    where two different texts would get the same name (``mc`` and ``mc:16,4,1.5``): those keep
    their full text.

    >>> short_policy_names(["patient:2,6,1", "greedy", "mc", "mc:16,4"])
    {'patient:2,6,1': 'patient', 'greedy': 'greedy', 'mc': 'mc', 'mc:16,4': 'mc:16,4'}
    """
    texts = list(dict.fromkeys(str(t) for t in texts))
    names = {t: policy_name(t) for t in texts}
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name] = counts.get(name, 0) + 1
    return {t: (name if counts[name] == 1 else t) for t, name in names.items()}


def _seat_policies(label: str) -> list[str]:
    """The policy texts of a seat label of :func:`~simkit.analysis.win_rates` (``greedy`` or
    ``rotated: a / b / c``)."""
    label = str(label)
    return label[len("rotated: "):].split(" / ") if label.startswith("rotated: ") else [label]


def seat_policy_text(label: str, names: dict[str, str] | None = None) -> str:
    """A seat's policy label of :func:`~simkit.analysis.win_rates` in plain words, parameters
    dropped as :func:`short_policy_names` does (``names``: that mapping, when the label is one
    of several).

    >>> seat_policy_text("rotated: greedy / patient:2,6,1 / random")
    'rotated among greedy, patient, random'
    """
    parts = _seat_policies(label)
    names = short_policy_names(parts) if names is None else names
    shown = ", ".join(names.get(p, p) for p in parts)
    return f"rotated among {shown}" if str(label).startswith("rotated: ") else shown


@_plot
def win_rate_by_seat_plot(rates: pd.DataFrame, ax: Axes | None = None, confidence: float = 0.95) -> Axes:
    """Win rate of each seat with its interval (the table of :func:`~simkit.analysis.win_rates`
    at ``confidence``).  The ticks say only ``seat k`` (``(dealer)`` for seat 0); who played each
    seat is the x axis label, wrapped, in plain words and without parameters (one line when every
    seat played the same, e.g. rotated seats), so the labels stay legible for any policies."""
    import textwrap

    ax = new_axes((6, 4)) if ax is None else ax
    x = rates["seat"].to_numpy()
    y = rates["win_rate"].to_numpy()
    err = np.vstack([y - rates["win_rate_lo"].to_numpy(), rates["win_rate_hi"].to_numpy() - y])
    ax.errorbar(x, y, yerr=err, fmt="o", capsize=5)
    ax.set_xticks(x, [f"seat {s}{' (dealer)' if s == 0 else ''}" for s in rates["seat"]])
    if x.size:
        ax.set_xlim(x.min() - 0.5, x.max() + 0.5)
    names = short_policy_names(p for label in rates["policy"] for p in _seat_policies(label))
    played = [seat_policy_text(label, names) for label in rates["policy"]]
    if len(set(played)) == 1:
        who = f"seats {played[0]}" if played[0].startswith("rotated") else f"every seat: {played[0]}"
    else:
        who = "; ".join(f"seat {s}: {p}" for s, p in zip(rates["seat"], played))
    ax.set_xlabel("\n".join(textwrap.wrap(who, 70)))
    ax.set_ylabel(f"win rate (fraction of deals, {format_level(confidence)} Wilson)")
    ax.set_title(f"Win rate by seat (n={int(rates['deals'].iloc[0]):,} deals)")
    return ax




@_plot
def payoff_by_policy_plot(by_policy: pd.DataFrame, ax: Axes | None = None, title: str = "Mean payoff by policy",
                          confidence: float = 0.95) -> Axes:
    """Mean payoff per seat-deal of each policy with its interval (``win_rates_by_policy`` table
    at ``confidence``, or any table with columns policy, mean_payoff, mean_payoff_lo,
    mean_payoff_hi, seat_deals)."""
    ax = new_axes((6.5, 0.6 * len(by_policy) + 1.6)) if ax is None else ax
    y = np.arange(len(by_policy))
    m = by_policy["mean_payoff"].to_numpy()
    err = np.vstack([m - by_policy["mean_payoff_lo"].to_numpy(), by_policy["mean_payoff_hi"].to_numpy() - m])
    ax.errorbar(m, y, xerr=err, fmt="o", capsize=4)
    ax.axvline(0, color="grey", linewidth=0.8)
    confounded = by_policy["confounded"] if "confounded" in by_policy else [False] * len(by_policy)
    ax.set_yticks(y, [f"{wrap_label(p)}\n(n={int(n):,} seat-deals)" + ("\nconfounded with seat" if c else "")
                      for p, n, c in zip(by_policy["policy"], by_policy["seat_deals"], confounded)])
    ax.invert_yaxis()
    ax.set_xlabel(f"mean payoff (牌 per seat per deal, {format_level(confidence)} interval)")
    ax.set_title(title)
    return ax


@_plot
def convergence_plot(curve: pd.DataFrame, ylabel: str, title: str, ax: Axes | None = None,
                     reference: float | None = None, reference_label: str = "exact",
                     confidence: float = 0.95) -> Axes:
    """Running estimate and its interval (at ``confidence``) against the number of deals (log x axis).

    ``curve`` has columns n, mean (or p), lo, hi (see :func:`simkit.analysis.stats.convergence_curve`).
    """
    value = curve["mean"] if "mean" in curve else curve["p"]
    ax = new_axes((7, 4)) if ax is None else ax
    ax.fill_between(curve["n"], curve["lo"], curve["hi"], alpha=0.3, label=f"{format_level(confidence)} interval")
    ax.plot(curve["n"], value, label="estimate")
    if reference is not None:
        ax.axhline(reference, color="k", linestyle="--", linewidth=1, label=reference_label)
    ax.set_xscale("log")
    ax.set_xlabel("number of deals (log scale)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} (n up to {int(curve['n'].max()):,})")
    ax.legend(fontsize=8)
    return ax


@_plot
def forest_plot(rows: pd.DataFrame, xlabel: str, title: str, ax: Axes | None = None,
                null: float | None = 0.0) -> Axes:
    """One line per comparison: estimate with its interval (columns label, estimate, lo, hi, n)."""
    ax = new_axes((7.5, 0.55 * len(rows) + 1.6)) if ax is None else ax
    y = np.arange(len(rows))
    m = rows["estimate"].to_numpy(dtype=float)
    err = np.vstack([m - rows["lo"].to_numpy(dtype=float), rows["hi"].to_numpy(dtype=float) - m])
    ax.errorbar(m, y, xerr=err, fmt="s", capsize=4)
    if null is not None:
        ax.axvline(null, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yticks(y, [f"{wrap_label(label)}\n(n={int(n):,})" for label, n in zip(rows["label"], rows["n"])])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return ax


def decision_text(decision: str, mu0: float | None = None, mu1: float | None = None) -> str:
    """A sequential test's decision (``accept_h1`` / ``accept_h0`` / ``continue``) in plain
    words, with the hypothesis when its mean is given.

    >>> decision_text("accept_h1", 0.0, 0.2), decision_text("accept_h0"), decision_text("continue")
    ('accept H1: A − B = +0.2', 'accept H0', 'no decision yet')
    """
    def mean(mu: float | None) -> str:
        return "" if mu is None else f": A − B = {mu:+g}" if mu else ": A − B = 0"

    if decision == "accept_h1":
        return "accept H1" + mean(mu1)
    if decision == "accept_h0":
        return "accept H0" + mean(mu0)
    return "no decision yet" if decision in ("", "continue") else str(decision).replace("_", " ")


@_plot
def sprt_llr_plot(llr_path: np.ndarray, lower: float, upper: float, title: str, ax: Axes | None = None,
                  min_n: int = 0, decision: str = "", mu0: float | None = None, mu1: float | None = None) -> Axes:
    """Log-likelihood ratio of a sequential test against the number of deals, with its two
    boundaries (and the deals before ``min_n``, where no decision is taken, shaded).

    ``llr_path[i]`` is the llr after deal i + 1; +-inf values (only one hypothesis possible on
    the values seen) are drawn just beyond the boundary.  Long paths are thinned for drawing.
    ``mu0`` / ``mu1`` (the two hypotheses' means of A − B) name the hypotheses in the legend,
    which says everything in plain words (see :func:`decision_text`)."""
    path = np.asarray(llr_path, dtype=float)
    deals = np.arange(1, path.size + 1)
    step = max(1, path.size // 20_000)
    keep = np.unique(np.r_[np.arange(0, path.size, step), path.size - 1]) if path.size else np.zeros(0, dtype=int)
    margin = 0.25 * (upper - lower)
    shown = np.clip(np.nan_to_num(path[keep], nan=0.0, posinf=upper + margin, neginf=lower - margin),
                    lower - margin, upper + margin)
    ax = new_axes((7, 4)) if ax is None else ax
    if min_n > 1:
        ax.axvspan(0, min(min_n, max(path.size, 1)), color="grey", alpha=0.15, label=f"no decision before {min_n:,} deals")
    infinite = np.isinf(path[keep])
    ax.plot(deals[keep], shown, linewidth=1, label="log-likelihood ratio")
    if infinite.any():
        ax.plot(deals[keep][infinite], shown[infinite], ".", markersize=3, color="tab:blue",
                label="± infinity (one mean impossible on the values seen)")
    ax.axhline(upper, color="tab:green", linestyle="--", linewidth=1,
               label=f"{decision_text('accept_h1', mu0, mu1)} above {upper:+.2f}")
    ax.axhline(lower, color="tab:red", linestyle="--", linewidth=1,
               label=f"{decision_text('accept_h0', mu0, mu1)} below {lower:+.2f}")
    if path.size and decision in ("accept_h1", "accept_h0"):
        ax.plot([path.size], [shown[-1]], "o", color="k",
                label=f"decision: {decision_text(decision, mu0, mu1)} after {path.size:,} deals")
    ax.set_xlabel("number of deals")
    ax.set_ylabel("log-likelihood ratio H1 vs H0")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="best")
    return ax


@_plot
def dealt_distribution_plot(frame: pd.DataFrame, column: str, xlabel: str, title: str,
                            ax: Axes | None = None) -> Axes:
    """Bars per seat of the distribution of a dealt-hand feature (a column of
    :func:`simkit.studies.dealt.deal_table`), as fractions of each seat's dealt hands."""
    ax = new_axes((7, 4)) if ax is None else ax
    values = np.arange(int(frame[column].min()), int(frame[column].max()) + 1)
    width = 0.27
    for seat in range(3):
        sub = frame.loc[frame["seat"] == seat, column]
        freq = sub.value_counts(normalize=True).reindex(values, fill_value=0.0)
        label = f"seat {seat} ({'dealer, 31 cards' if seat == 0 else '30 cards'}), n={len(sub):,}"
        ax.bar(values + (seat - 1) * width, freq.to_numpy(), width=width, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of dealt hands")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


@_plot
def tuning_plot(trajectory: pd.DataFrame, column: str, ylabel: str, title: str, ax: Axes | None = None,
                bounds: tuple[float, float] | None = None, window: int | None = None,
                marks: dict[str, float] | None = None) -> Axes:
    """One column of a tuning trajectory (:func:`simkit.studies.tuning.tune`: one row per SPSA
    iteration, column ``iteration``) against the iteration: the values, with ``window`` their
    trailing moving average over that many iterations, ``bounds`` (the parameter's range) as
    grey lines and ``marks`` (label -> value, e.g. start and tuned) as dashed lines."""
    ax = new_axes((7, 3.5)) if ax is None else ax
    x = trajectory["iteration"].to_numpy() + 1
    y = trajectory[column].to_numpy(dtype=float)
    ax.plot(x, y, linewidth=0.8 if window else 1.2, alpha=0.5 if window else 1.0,
            label=f"{column} per iteration" if window else column)
    if window and y.size:
        kernel = np.ones(min(window, y.size))
        sums = np.convolve(y, kernel, mode="full")[: y.size]
        average = sums / np.convolve(np.ones(y.size), kernel, mode="full")[: y.size]  # trailing mean
        ax.plot(x, average, linewidth=1.8, label=f"moving average ({min(window, y.size)} iterations)")
    if bounds is not None:
        for value in bounds:
            ax.axhline(value, color="grey", linewidth=0.8)
    for (label, value), colour in zip((marks or {}).items(), ("tab:red", "tab:green", "tab:purple", "tab:brown")):
        ax.axhline(value, color=colour, linestyle="--", linewidth=1, label=f"{label}: {value:.4g}")
    ax.set_xlabel(f"SPSA iteration (n={len(trajectory):,})")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best")
    return ax


@_plot
def crosstable_plot(estimate: pd.DataFrame, lo: pd.DataFrame, hi: pd.DataFrame, colorbar_label: str, title: str,
                    ax: Axes | None = None) -> Axes:
    """Heat map of a square row-minus-column table (:meth:`~simkit.studies.tournament.TournamentResult.crosstable`),
    each cell annotated with its estimate and interval; a diverging colour scale centred at 0."""
    k = estimate.shape[0]
    ax = new_axes((1.6 * k + 2.6, 1.2 * k + 1.4)) if ax is None else ax
    values = estimate.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    image = ax.imshow(values, cmap="RdBu", vmin=-bound, vmax=bound)
    ax.figure.colorbar(image, ax=ax, label=colorbar_label, shrink=0.8)
    for i in range(k):
        for j in range(k):
            text = "—" if i == j else f"{values[i, j]:+.3f}\n[{lo.iat[i, j]:+.3f}, {hi.iat[i, j]:+.3f}]"
            dark = np.isfinite(values[i, j]) and abs(values[i, j]) > 0.6 * bound
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if dark else "black")
    # policies by their short names (parameters only where two would read the same), wrapped
    names = short_policy_names([*map(str, estimate.columns), *map(str, estimate.index)])
    ax.set_xticks(range(k), [wrap_label(names[str(c)], 14) for c in estimate.columns])
    ax.set_yticks(range(k), [wrap_label(names[str(r)], 20) for r in estimate.index])
    ax.set_xlabel("column policy")
    ax.set_ylabel("row policy")
    ax.set_title(title)
    return ax


@_plot
def training_loss_plot(generations: list[dict], directory: str | Path, stem: str = "loss") -> Path:
    """The training loss by epoch of each generation of ``simkit train`` (its metrics dicts:
    ``generation``, ``loss_curve``), with each generation's validation error as a mark."""
    ax = new_axes((6.4, 3.6))
    for m in generations:
        curve = list(m["loss_curve"])
        ax.plot(range(1, len(curve) + 1), curve, marker="o", label=f"generation {m['generation']}")
        ax.plot([len(curve)], [m["validation_mse"] / 2], marker="x", color="black")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss (half the squared error, + L2)")
    ax.set_title("fit of each generation (x: half the validation squared error)")
    ax.legend(fontsize="small")
    return save_figure(ax.figure, directory, stem)


@_plot
def training_strength_plot(generations: list[dict], directory: str | Path, stem: str = "strength") -> Path:
    """Each generation's check against expert (mean and interval, 牌 per seat per deal)
    against the self-play deals seen so far."""
    ax = new_axes((6.4, 3.6))
    seen = [m["deals_seen"] for m in generations]
    mean = np.array([m["check"]["mean"] for m in generations])
    lo = np.array([m["check"]["lo"] for m in generations])
    hi = np.array([m["check"]["hi"] for m in generations])
    ax.errorbar(seen, mean, yerr=[mean - lo, hi - mean], marker="o", capsize=4)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("self-play deals seen")
    ax.set_ylabel("learned − expert (牌 per seat per deal)")
    ax.set_title("strength by generation (95 % t interval, duplicate deals)")
    return save_figure(ax.figure, directory, stem)


@_plot
def decision_loss_plot(frame: pd.DataFrame, ax: Axes | None = None, title: str = "Expected loss per decision") -> Axes:
    """Bars of each decision's expected loss with its interval, coloured by kind of decision
    (columns index, kind, loss, loss_lo, loss_hi: :meth:`simkit.studies.review.GameReview.to_frame`)."""
    ax = new_axes((max(6.0, 0.25 * len(frame) + 2), 3.6)) if ax is None else ax
    colours = {"discard": "tab:blue", "claim": "tab:orange", "win": "tab:green"}
    x = np.arange(len(frame))
    loss = frame["loss"].to_numpy(dtype=float)
    err = np.vstack([loss - frame["loss_lo"].to_numpy(dtype=float), frame["loss_hi"].to_numpy(dtype=float) - loss])
    for kind, colour in colours.items():
        sel = (frame["kind"] == kind).to_numpy()
        if sel.any():
            ax.bar(x[sel], loss[sel], yerr=np.clip(err[:, sel], 0, None), color=colour, capsize=2, label=kind)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(x, [str(i) for i in frame["index"]], fontsize=7)
    ax.set_xlabel("decision (number in the deal)")
    ax.set_ylabel("expected loss (牌)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


@_plot
def calibration_plot(bins: list[dict[str, float]], ax: Axes | None = None,
                     title: str = "Predicted and realised loss per deal") -> Axes:
    """Deals grouped by the loss the review predicted: each group's mean realised loss (paired
    play) with its interval against its mean predicted loss; a calibrated review lies on the
    diagonal (rows of :meth:`simkit.studies.reference.Calibration.bins`)."""
    ax = new_axes((5.0, 4.4)) if ax is None else ax
    predicted = np.array([b["predicted"] for b in bins], dtype=float)
    realised = np.array([b["realised"] for b in bins], dtype=float)
    err = np.vstack([realised - np.array([b["realised_lo"] for b in bins]),
                     np.array([b["realised_hi"] for b in bins]) - realised])
    ax.errorbar(predicted, realised, yerr=np.clip(err, 0, None), fmt="o", capsize=3, label="groups of deals")
    low = float(min(predicted.min(), (realised - err[0]).min(), 0.0))
    high = float(max(predicted.max(), (realised + err[1]).max(), 0.0))
    ax.plot([low, high], [low, high], color="grey", linewidth=0.8, label="calibrated")
    ax.set_xlabel("predicted loss per deal (牌)")
    ax.set_ylabel("realised loss per deal, paired play (牌)")
    ax.set_title(title)
    ax.legend(loc="upper left")
    return ax
