"""Plots speak the player's language on every machine (issue 40): payoffs in 牌, Chinese names
drawn in the bundled subset of Noto Sans SC, no glyph missing.

* every plot that says 牌 renders to PNG and SVG with warnings as errors, on its own figure and
  on an Axes of a figure the caller made: matplotlib's "Glyph ... missing from font(s)" warning,
  what a character outside the font gives, fails the test;
* every CJK character in a string literal of simkit is in the bundled font, so a new Chinese
  word without a regenerated font fails here, naming the character and the tool to run.
"""

from __future__ import annotations

import importlib.util
import io
import tomllib
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from fontTools.ttLib import TTFont
from matplotlib.figure import Figure

from simkit.analysis import plots

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "subset_font.py"


def _tool():
    spec = importlib.util.spec_from_file_location("subset_font", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _texts(figure) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in figure.findobj(Text) if t.get_text()]


def _render(figure) -> None:
    """Draw ``figure`` as PNG and SVG; any warning (a missing glyph above all) is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fmt in ("png", "svg"):
            buffer = io.BytesIO()
            figure.savefig(buffer, format=fmt, dpi=60)
            assert buffer.getvalue()


_GENERATIONS = [{"generation": g, "deals_seen": 1000 * g, "loss_curve": [0.5, 0.4, 0.35],
                 "validation_mse": 0.7, "check": {"mean": 0.1 * g, "lo": 0.1 * g - 0.2, "hi": 0.1 * g + 0.2}}
                for g in (1, 2)]


def _plots_in_pai() -> dict[str, object]:
    """The plots whose labels give payoffs in 牌 (each a call ``ax -> Axes``)."""
    table = pd.DataFrame([[0.0, 0.1], [-0.1, 0.0]], index=["greedy", "expert"], columns=["greedy", "expert"])
    rows = pd.DataFrame({"label": ["greedy - patient"], "estimate": [0.1], "lo": [0.0], "hi": [0.2], "n": [100]})
    trajectory = pd.DataFrame({"iteration": range(20), "strength": np.linspace(-0.2, 0.2, 20)})
    by_policy = pd.DataFrame({"policy": ["greedy", "expert"], "mean_payoff": [0.1, -0.1], "mean_payoff_lo": [0.0, -0.2],
                              "mean_payoff_hi": [0.2, 0.0], "seat_deals": [300, 300]})
    loss = pd.DataFrame({"index": [1, 2, 3], "kind": ["discard", "claim", "win"], "loss": [0.2, 0.0, 1.5],
                         "loss_lo": [0.1, -0.1, 1.0], "loss_hi": [0.3, 0.1, 2.0]})
    bins = [{"predicted": p, "realised": p + 0.05, "realised_lo": p - 0.1, "realised_hi": p + 0.2} for p in (0.1, 0.6)]
    return {
        "payoff_by_policy_plot": lambda ax: plots.payoff_by_policy_plot(by_policy, ax=ax),
        "decision_loss_plot": lambda ax: plots.decision_loss_plot(loss, ax=ax),
        "calibration_plot": lambda ax: plots.calibration_plot(bins, ax=ax),
        # the studies' labels (compare, tournament, tuning, experiment) through the generic plots
        "forest_plot": lambda ax: plots.forest_plot(rows, "mean payoff difference A - B (牌 per seat per deal)",
                                                    "穿牌 (no-winner) rate", ax=ax),
        "crosstable_plot": lambda ax: plots.crosstable_plot(table, table - 0.1, table + 0.1,
                                                            "row - column (牌 per seat per deal)", "Crosstable", ax=ax),
        "tuning_plot": lambda ax: plots.tuning_plot(trajectory, "strength", "strength (牌 per seat per deal)", "SPSA",
                                                    ax=ax, window=5),
    }


@pytest.mark.parametrize("name", sorted(_plots_in_pai()))
def test_plots_in_pai_render_every_glyph(name):
    """On the plot's own figure and on an Axes of a figure made outside simkit (no fallback
    at its making), both drawn by the caller's ``savefig``."""
    draw = _plots_in_pai()[name]
    own = draw(None)
    texts = _texts(own.figure)
    assert any("牌" in t for t in texts), (name, texts)
    assert not any("pai" in t.split() or "(pai" in t or "payoff units" in t for t in texts), (name, texts)
    _render(own.figure)
    figure = Figure(figsize=(6, 4))
    assert draw(figure.add_subplot()).figure is figure
    _render(figure)


def test_training_plots_save_in_pai(tmp_path):
    """training_strength_plot / training_loss_plot save through save_figure: no warning there."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strength = plots.training_strength_plot(_GENERATIONS, tmp_path)
        loss = plots.training_loss_plot(_GENERATIONS, tmp_path)
    assert strength.read_bytes()[:4] == b"\x89PNG" and loss.exists()
    assert "<!-- learned − expert (牌 per seat per deal) -->" in (tmp_path / "strength.svg").read_text(encoding="utf-8")


def test_every_chinese_character_of_simkit_draws(tmp_path):
    """All of them on one figure, saved as the reports save: every glyph comes from the font."""
    characters = "".join(_tool().cjk_characters())
    figure = Figure(figsize=(8, 3))  # made outside simkit: save_figure adds the fallback
    ax = figure.add_subplot()
    for k in range(0, len(characters), 40):
        ax.text(0.02, 0.9 - k / 60, characters[k:k + 40], fontsize=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plots.save_figure(figure, tmp_path, "all")
    assert (tmp_path / "all.svg").stat().st_size > 0


def test_a_missing_glyph_is_an_error_here():
    """The check above has teeth: a character the fonts lack warns, and the warning fails."""
    figure = Figure()
    figure.text(0.5, 0.5, "龘", family=["DejaVu Sans"])
    with pytest.raises(UserWarning, match="missing from font"):
        _render(figure)


def test_plotting_leaves_the_users_settings_alone():
    """The fallback comes after the user's own family and rcParams are as they were."""
    before = dict(matplotlib.rcParams)
    with matplotlib.rc_context({"font.family": "serif"}):
        ax = plots.calibration_plot([{"predicted": 0.1, "realised": 0.2, "realised_lo": 0.0, "realised_hi": 0.3}])
        assert ax.xaxis.label.get_fontfamily() == ["serif", plots.CJK_FONT_FAMILY]
    assert dict(matplotlib.rcParams) == before


def test_every_chinese_character_of_simkit_is_in_the_bundled_font():
    """Catches a new Chinese word in simkit without a regenerated font."""
    cmap = TTFont(plots.CJK_FONT_FILE).getBestCmap()
    missing = {ch: where for ch, where in _tool().cjk_characters().items() if ord(ch) not in cmap}
    assert not missing, (
        "characters of simkit's strings missing from " + str(plots.CJK_FONT_FILE.relative_to(ROOT)) + ": "
        + ", ".join(f"{ch!r} (U+{ord(ch):04X}, {where})" for ch, where in missing.items())
        + "; regenerate the font: python tools/subset_font.py NotoSansSC-Regular.otf --license simkit/analysis/fonts/OFL.txt")


def test_the_bundled_font_is_small_licensed_and_packaged():
    font = TTFont(plots.CJK_FONT_FILE)
    assert font["name"].getDebugName(1) == plots.CJK_FONT_FAMILY
    assert plots.CJK_FONT_FILE.stat().st_size < 200_000  # a subset, never the 8 MB font
    license_text = (plots.CJK_FONT_FILE.parent / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in license_text
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packaged = data["tool"]["setuptools"]["package-data"]["simkit.analysis"]
    assert "fonts/*.otf" in packaged and "fonts/OFL.txt" in packaged
