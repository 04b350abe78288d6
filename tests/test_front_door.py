"""The front door's defects (issue 20, part 7): legible seat labels, `simkit report` beside the
dataset, small experiment reruns, every plot function documented, docs/engine.md as the code
behaves, an overflow bin, plain words in legends, parameters printed once."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from helpers import one_line_error, run_cli

from simkit.analysis import plots
from simkit.analysis.report import default_report_dir, write_dealt_hands_report, write_report
from simkit.analysis.stats import convergence_curve
from simkit.cli import main
from simkit.engine.env import deal_error_text
from simkit.errors import SimkitError
from simkit.experiment import run_experiment
from simkit.rules import RuleSet
from simkit.runner import simulate
from simkit.studies import review
from simkit.studies.dealt import deal_table
from simkit.studies.equity import EquityResult, SeatOutcome, hu_plot, seats_text
from simkit.specs.simulate import SimulateSpec
from simkit.specs.equity import EquitySpec
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.specs.tournament import TournamentSpec

QUIET = Execution(quiet=True)

ROOT = Path(__file__).resolve().parents[1]
EXPERT = ("expert:57.6,13.4,0.78,95.9,22.5,88.3,1.4,1.78,6.04,13.7,0.67,0.43,1,0,54.2,1.08")


def _rates(policies: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"seat": [0, 1, 2], "policy": policies, "deals": [20_000] * 3,
                         "win_rate": [0.31, 0.28, 0.27], "win_rate_lo": [0.30, 0.27, 0.26],
                         "win_rate_hi": [0.32, 0.29, 0.28]})


def _texts(ax) -> list[str]:
    """Every text a reader sees on ``ax``: title, axis labels, tick labels, legend entries."""
    out = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
    out += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    legend = ax.get_legend()
    if legend is not None:
        out += [t.get_text() for t in legend.get_texts()]
    return [t for t in out if t]


# ---- 1. legible seat labels -------------------------------------------------------------------


@pytest.mark.parametrize("policies", [
    ["rotated: greedy / patient:2,6,1 / random"] * 3,
    [EXPERT, "greedy", "experiments.user_policy_example:cautious:1,2"],
    [f"rotated: {EXPERT} / greedy / patient:2,6,1"] * 3,
])
def test_seat_labels_are_legible_for_any_policies(policies):
    """Catches tick labels that carry the policy texts: they overlap (the demo's first plot)."""
    ax = plots.win_rate_by_seat_plot(_rates(policies))
    figure = ax.figure
    FigureCanvasAgg(figure)
    figure.tight_layout()
    renderer = figure.canvas.get_renderer()
    ticks = [t for t in ax.get_xticklabels() if t.get_text()]
    assert [t.get_text() for t in ticks] == ["seat 0 (dealer)", "seat 1", "seat 2"]
    boxes = [t.get_window_extent(renderer) for t in ticks]
    for a, b in zip(boxes, boxes[1:]):
        assert a.x1 < b.x0, "tick labels overlap"
    # who played: in the axis label, without parameters, and inside the figure
    label = ax.xaxis.label
    assert not re.search(r"\d,\d|=", label.get_text()), label.get_text()
    box = label.get_window_extent(renderer)
    assert 0 <= box.x0 and box.x1 <= figure.bbox.width
    assert "greedy" in label.get_text()


def test_policies_sharing_a_name_keep_their_parameters():
    """Dropping parameters must not make two different policies look the same."""
    ax = plots.win_rate_by_seat_plot(_rates(["mc", "mc:16,4,1.5,0,0,0,0", "greedy"]))
    assert "mc:16,4,1.5,0,0,0,0" in ax.get_xlabel().replace("\n", " ")


# ---- 2. simkit report beside the dataset -----------------------------------------------------


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return simulate(SimulateSpec(300, "greedy,patient,random", 5, batch_size=100),
                    tmp_path_factory.mktemp("d") / "data", QUIET)


@pytest.mark.parametrize("slash", ["", "/"])
def test_report_leaves_the_dataset_readable_by_parquet_readers(dataset, tmp_path, capsys, slash):
    """Catches the report written into the dataset folder (read_parquet then fails on a PNG)."""
    copy = tmp_path / "data"
    copy.mkdir()
    for f in dataset.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    assert main(["report", str(copy) + slash]) == 0
    report = tmp_path / "data-report" / "report.md"
    assert capsys.readouterr().out.strip() == str(report)
    assert report.is_file() and (tmp_path / "data-report" / "win_rate_by_seat.png").is_file()
    assert len(pd.read_parquet(copy)) == 300
    assert all(p.suffix == ".parquet" or p.name.startswith(("_", ".")) for p in copy.iterdir())


def test_report_out_still_chooses(dataset, tmp_path):
    path = write_report(dataset, tmp_path / "mine")
    assert path == tmp_path / "mine" / "report.md" and path.is_file()
    assert default_report_dir(tmp_path / "x" / "data/").name == "data-report"



@pytest.mark.parametrize("inside", ["", "plots", "plots/deeper", "LINK"])
def test_a_report_into_the_dataset_is_refused_before_anything_is_written(dataset, tmp_path, capsys, inside):
    """``--out DATASET`` (or a folder under it that Parquet readers read, or a link to it) wrote
    the plots among the Parquet files, and ``pd.read_parquet(DATASET)`` then failed on a PNG;
    now it is one line naming --out, and nothing is written.  A folder whose name starts with
    ``_`` is skipped by the readers, and may hold the report."""
    copy = tmp_path / "data"
    copy.mkdir()
    for f in dataset.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    before = sorted(p.name for p in copy.iterdir())
    if inside == "LINK":
        (tmp_path / "link").symlink_to(copy, target_is_directory=True)
        out = tmp_path / "link"
    else:
        out = copy / inside if inside else copy
    rc, err = run_cli(["report", copy, "--out", out], capsys)
    one_line_error(rc, err, "--out", "Parquet readers")
    assert sorted(p.name for p in copy.iterdir()) == before and len(pd.read_parquet(copy)) == 300
    assert main(["report", str(copy), "--out", str(copy / "_report")]) == 0
    assert (copy / "_report" / "report.md").is_file() and len(pd.read_parquet(copy)) == 300


@pytest.mark.parametrize("command", [
    ["compare", "greedy", "random", "--deals", "4", "--seed", "1"],
    ["tournament", "greedy", "random", "patient", "--deals", "4", "--seed", "1"],
    ["tune", "patient", "--params", "min_units=1:8", "--against", "greedy", "--budget", "24", "--iteration-deals", "4",
     "--validate-deals", "4", "--seed", "1"],
    ["experiment", "run", str(ROOT / "experiments" / "dealer_advantage.toml"), "--scale", "1e-6"],
    ["train", "--deals", "5", "--generations", "1", "--seed", "1"],
    ["equity", "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2", "--policies",
     "greedy,greedy,greedy", "--deals", "4", "--seed", "1"],
    ["deals", "--deals", "4", "--seed", "1"],
    ["demo", "--deals", "20"],
], ids=["compare", "tournament", "tune", "experiment", "train", "equity", "deals", "demo"])
@pytest.mark.parametrize("inside", ["", "sub"])
def test_a_study_into_a_dataset_folder_is_refused(dataset, tmp_path, capsys, command, inside):
    """A comparison, tournament, tuning or experiment pointed at a dataset folder (or a folder
    under it) wrote its JSON, Markdown and figures among the Parquet files, after which
    ``pd.read_parquet(DATASET)`` failed; now one line naming --out, nothing written."""
    copy = tmp_path / "data"
    copy.mkdir()
    for f in dataset.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    before = sorted(p.name for p in copy.iterdir())
    rc, err = run_cli([*command, "--out", copy / inside if inside else copy], capsys)
    one_line_error(rc, err, "--out", "simkit dataset")
    assert sorted(p.name for p in copy.iterdir()) == before and len(pd.read_parquet(copy)) == 300



def _library_studies():
    from simkit.analysis.report import write_dealt_hands_report
    from simkit.learn.train import train
    from simkit.rules import RuleSet
    from simkit.studies.compare import compare
    from simkit.studies.dealt import deal_table
    from simkit.studies.equity import equity
    from simkit.studies.tournament import run_tournament
    from simkit.specs.base import Execution
    from simkit.specs.train import TrainSpec
    from simkit.studies.tuning import TuneSpec, tune

    return {
        "compare": lambda out: compare(CompareSpec("greedy", "random", deals=4, seed=1), out, Execution(quiet=True)),
        "tournament": lambda out: run_tournament(TournamentSpec(["greedy", "random", "patient"], deals=4, seed=1), out,
                                                 Execution(quiet=True)),
        "tune": lambda out: tune(TuneSpec("patient", {"min_units": (1, 8)}, "greedy", 24, seed=1, iteration_deals=4,
                                          validate_deals=4), out, Execution(quiet=True)),
        "experiment": lambda out: run_experiment(ROOT / "experiments" / "dealer_advantage.toml", scale=1e-6, out=out,
                                                 execution=Execution(quiet=True)),
        "train": lambda out: train(TrainSpec(generations=1, seed=1), out, Execution(quiet=True)),
        "equity": lambda out: equity(EquitySpec("YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC "
                                                "GM*2 GZ*2", deals=4, seed=1), out),
        "dealt hands": lambda out: write_dealt_hands_report(deal_table(4, 1, 4, RuleSet()), out, 1, 4, RuleSet()),
    }


@pytest.mark.parametrize("study", ["compare", "tournament", "tune", "experiment", "train", "equity", "dealt hands"])
def test_the_library_refuses_a_study_into_a_dataset_folder_too(dataset, tmp_path, study):
    """The same refusal from Python (the command line checks first: this catches a study
    whose own check is gone)."""
    from simkit.errors import SimkitError

    copy = tmp_path / "data"
    copy.mkdir()
    for f in dataset.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    before = sorted(p.name for p in copy.iterdir())
    with pytest.raises(SimkitError, match="simkit dataset"):
        _library_studies()[study](copy / "sub")
    assert sorted(p.name for p in copy.iterdir()) == before


def _no_rollouts(*args, **kwargs):
    raise AssertionError("rolled out before --out was checked")


def test_review_into_a_dataset_folder_is_refused_before_the_rollouts(dataset, tmp_path, capsys, monkeypatch):
    """``review`` writes its folder after minutes of rollouts: its --out is checked first (the
    command line's check; the library's own one comes only when it writes)."""

    log = tmp_path / "deal.jsonl"
    assert main(["replay", "--policies", "greedy,greedy,greedy", "--seed", "1", "--deal", "0", "--output",
                 str(log)]) == 0
    capsys.readouterr()

    monkeypatch.setattr(review, "review_decisions", _no_rollouts)
    rc, err = run_cli(["review", log, "--seat", "0", "--out", dataset / "review"], capsys)
    one_line_error(rc, err, "--out", "simkit dataset")

def test_a_study_may_write_under_a_dataset_in_a_folder_readers_skip(dataset, tmp_path, capsys):
    copy = tmp_path / "data"
    copy.mkdir()
    for f in dataset.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    rc, err = run_cli(["compare", "greedy", "random", "--deals", "4", "--seed", "1", "--quiet", "--out",
                       copy / "_comparison"], capsys)
    assert rc == 0, err
    assert (copy / "_comparison" / "comparison.json").is_file() and len(pd.read_parquet(copy)) == 300





HAND = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"
STUDIES = {  # a study's command line (without --out), and the file of a user's it must not overwrite
    "compare": (["compare", "greedy", "random", "--deals", "4", "--seed", "1", "--quiet"], "report.md"),
    "tournament": (["tournament", "greedy", "random", "patient", "--deals", "4", "--seed", "1", "--quiet"],
                   "report.md"),
    "tune": (["tune", "patient", "--params", "min_units=1:8", "--against", "greedy", "--budget", "24",
              "--iteration-deals", "4", "--validate-deals", "4", "--seed", "1", "--quiet"], "report.md"),
    "train": (["train", "--deals", "5", "--generations", "1", "--seed", "1", "--quiet"], "report.md"),
    "equity": (["equity", HAND, "--policies", "greedy,greedy,greedy", "--deals", "4", "--seed", "1", "--quiet"],
               "equity.csv"),
    "review": (["review", "LOG", "--seat", "0", "--rollouts", "2"], "review.md"),
}


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_a_study_never_writes_over_a_users_files(tmp_path, capsys, monkeypatch, study):
    """A comparison into a folder of the user's overwrote their report.md (every study wrote
    its files into any folder); now a study writes only into a new or empty folder or one it
    wrote: one line naming --out and the file, the user's file intact."""
    log = tmp_path / "deal.jsonl"
    assert main(["replay", "--policies", "greedy,greedy,greedy", "--seed", "1", "--deal", "0", "--output",
                 str(log)]) == 0
    argv, name = STUDIES[study]
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / name).write_text("my notes", encoding="utf-8")
    capsys.readouterr()
    monkeypatch.setattr(review, "review_decisions", _no_rollouts)  # review's --out is checked before them
    rc, err = run_cli([str(log) if a == "LOG" else a for a in argv] + ["--out", folder], capsys)
    one_line_error(rc, err, "--out", name, "new or empty folder")
    assert [p.name for p in folder.iterdir()] == [name] and (folder / name).read_text(encoding="utf-8") == "my notes"


WRITERS = {  # a writer of a report folder or a dealt-hands folder: its command line, the folder's flag
    "report": (["report", "DATASET"], "--out"),
    "demo": (["demo", "--deals", "20", "--policies", "greedy,greedy,greedy"], "--out"),
    "deals": (["deals", "--deals", "4", "--seed", "1"], "--out"),
    "prob --hands": (["prob", "--deals", "4", "--seed", "1"], "--hands"),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_reports_and_dealt_hands_never_write_over_a_users_files(dataset, tmp_path, capsys, writer):
    """``report --out``, ``demo --out``, ``deals --out`` and ``prob --hands`` replaced a user's
    report.md in the folder they were given; now a folder of other files is refused in one line
    naming the flag and the file, before any work, and the file is intact."""
    argv, flag = WRITERS[writer]
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "report.md").write_text("my notes", encoding="utf-8")
    rc, err = run_cli([str(dataset) if a == "DATASET" else a for a in argv] + [flag, folder], capsys)
    one_line_error(rc, err, flag, "report.md", "new or empty folder")
    assert [p.name for p in folder.iterdir()] == ["report.md"]
    assert (folder / "report.md").read_text(encoding="utf-8") == "my notes"


def test_the_library_writers_of_reports_refuse_a_users_folder(dataset, tmp_path):
    """The same refusal for Python callers: write_report and write_dealt_hands_report."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes", encoding="utf-8")
    with pytest.raises(SimkitError, match="holds notes.txt and no report.json"):
        write_report(dataset, folder)
    frame = deal_table(4, 1, 4, RuleSet())
    with pytest.raises(SimkitError, match="holds notes.txt and no manifest.json"):
        write_dealt_hands_report(frame, folder, 1, 4, RuleSet())
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_a_report_folder_is_written_again(dataset, tmp_path, capsys):
    """A report's folder (marked by report.json, written first) takes the report again, by
    default and with --out; so does a demo's folder, whose report.json the demo writes before
    its dataset."""
    for argv in (["report", str(dataset), "--out", str(tmp_path / "r")], ["report", str(dataset)]):
        for _ in range(2):
            rc, err = run_cli(argv, capsys)
            assert rc == 0, err
    assert (tmp_path / "r" / "report.json").is_file() and (default_report_dir(dataset) / "report.json").is_file()
    demo = ["demo", "--deals", "20", "--policies", "greedy,greedy,greedy", "--out", tmp_path / "demo"]
    for _ in range(2):
        rc, err = run_cli(demo, capsys)
        assert rc == 0, err
    assert len(pd.read_parquet(tmp_path / "demo" / "dataset")) == 20


def test_a_study_in_its_own_folder_runs_again(tmp_path, capsys):
    """...while the folder a study wrote takes it again (resume, or the same run redone)."""
    argv = STUDIES["compare"][0] + ["--out", tmp_path / "cmp"]
    assert run_cli(argv, capsys)[0] == 0
    rc, err = run_cli(argv, capsys)
    assert rc == 0, err

def test_a_dataset_inside_another_is_refused(dataset, tmp_path, capsys):
    """simulate into a folder under a dataset made a second dataset whose rows
    ``pd.read_parquet(OUTER)`` silently added to the outer one's (the readers read every folder
    below); now one line, nothing written, and the outer dataset still reads its own rows.
    Under a ``_…`` folder (skipped by the readers) it is allowed; resuming the dataset itself too."""
    copy = tmp_path / "data"
    copy.mkdir()
    for f in dataset.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    with pytest.raises(SimkitError, match="inside the simkit dataset"):
        simulate(SimulateSpec(20, "greedy,greedy,greedy", 2), copy / "inner", QUIET)
    assert not (copy / "inner").exists() and len(pd.read_parquet(copy)) == 300
    simulate(SimulateSpec(20, "greedy,greedy,greedy", 2), copy / "_inner", QUIET)
    assert len(pd.read_parquet(copy)) == 300 and len(pd.read_parquet(copy / "_inner")) == 20
    rc, err = run_cli(["simulate", "--deals", "300", "--policies", "greedy,patient,random", "--seed", "5",
                       "--batch-size", "100", "--quiet", "--out", copy], capsys)
    assert rc == 0, err

def test_dealt_hands_may_be_written_again_and_studied_beside(tmp_path, capsys):
    """A dealt-hands folder (``deals.parquet`` and ``manifest.json`` with its figures) is not a
    dataset of played deals: ``deals`` writes it again, and a study may go under it."""
    hands = tmp_path / "hands"
    for _ in range(2):
        assert run_cli(["deals", "--deals", "4", "--seed", "1", "--out", hands], capsys)[0] == 0
    rc, err = run_cli(["compare", "greedy", "random", "--deals", "4", "--seed", "1", "--quiet", "--out",
                       hands / "cmp"], capsys)
    assert rc == 0, err
    assert len(pd.read_parquet(hands / "deals.parquet")) == 12

def test_a_new_dataset_into_a_folder_of_other_files_is_refused(tmp_path, capsys):
    """simulate into a folder holding a user's files (a report, notes) put the batch files next
    to them, and ``pd.read_parquet(FOLDER)`` failed on them; now one line naming the file, and
    nothing written.  Files Parquet readers skip (``_…``, ``.…``) may stay."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me", encoding="utf-8")
    argv = ["simulate", "--deals", "20", "--policies", "greedy,greedy,greedy", "--seed", "1", "--quiet", "--out"]
    rc, err = run_cli([*argv, folder], capsys)
    one_line_error(rc, err, "notes.txt", "new or empty folder")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    (folder / "notes.txt").rename(folder / "_notes.txt")
    (folder / ".hidden").write_text("", encoding="utf-8")
    assert run_cli([*argv, folder], capsys)[0] == 0
    assert len(pd.read_parquet(folder)) == 20 and (folder / "_notes.txt").read_text(encoding="utf-8") == "keep me"

# ---- 3. small experiment reruns --------------------------------------------------------------


SMALL = """
name = "small"
title = "Small"
seed = 3
batch_size = 5000

[[simulation]]
label = "greedy x3"
policies = "greedy,greedy,greedy"
deals = 30000

[[comparison]]
a = "greedy"
b = "random"
deals = 1000
"""


def test_scaled_experiment_writes_only_under_out(tmp_path, monkeypatch):
    """Catches a scale that is ignored (30,000 deals played), a report written to reports/ or
    data to runs/ instead of under ``out``."""
    file = tmp_path / "small.toml"
    file.write_text(SMALL, encoding="utf-8")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    report = run_experiment(file, scale=0.01, out=tmp_path / "x", execution=Execution(quiet=True))
    assert report == tmp_path / "x" / "report" / "report.md"
    text = report.read_text(encoding="utf-8")
    # 30,000 x 0.01 = 300; 1,000 x 0.01 = 10 is raised to the minimum of 200
    assert "Scaled 0.01: 500 deals instead of 31,000" in text
    assert len(pd.read_parquet(tmp_path / "x" / "data" / "sim-greedy_x3")) == 300
    assert "--scale 0.01" in text
    assert list(cwd.iterdir()) == []


def test_cli_experiment_scale_and_out(tmp_path, monkeypatch, capsys):
    file = tmp_path / "small.toml"
    file.write_text(SMALL.replace("deals = 1000\n", "deals = 400\n"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "run", str(file), "--scale", "0.02", "--out", "x", "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == str(Path("x") / "report" / "report.md")
    assert "Scaled 0.02: 800 deals instead of 30,400" in (tmp_path / "x" / "report" / "report.md").read_text("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.toml", "x"]


@pytest.mark.parametrize("argv, message", [
    (["--scale", "0"], "--scale must be a finite number > 0, got 0.0"),
    (["--scale", "nan"], "--scale must be a finite number > 0, got nan"),
    (["--out", "x", "--reports", "r"], "--out replaces --reports and --data"),
])
def test_cli_experiment_bad_scale_or_out_is_one_line(tmp_path, monkeypatch, capsys, argv, message):
    file = tmp_path / "small.toml"
    file.write_text(SMALL, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "run", str(file), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.toml"]


# ---- 4. every plot function in docs/statistics.md --------------------------------------------


def _drawing_functions() -> set[str]:
    """Public top-level functions of simkit that draw: those taking an ``ax`` parameter."""
    names = set()
    for path in (ROOT / "simkit").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                if any(a.arg == "ax" for a in node.args.args + node.args.kwonlyargs):
                    names.add(node.name)
    return names


def test_every_plot_function_is_listed_with_an_example():
    """Catches a plot function missing from the doc's plot table, or listed without an example."""
    doc = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    section = doc.split("## Plots", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            rows[cells[0].strip("`").rsplit(".", 1)[-1]] = cells[2]
    functions = _drawing_functions()
    assert {"win_rate_by_seat_plot", "hu_plot", "sprt_llr_plot"} <= functions
    for name in sorted(functions):
        assert name in rows, f"{name} is not in docs/statistics.md's plot table"
        assert rows[name].startswith("`") and f"{name}(" in rows[name], f"{name}: no one-line example"


# ---- 5. docs/engine.md as the code behaves ---------------------------------------------------


def test_engine_doc_says_an_illegal_action_is_an_error_as_the_code_writes_it():
    doc = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    assert "error column" not in doc
    example = deal_error_text(3, 7, ["mine", "greedy", "greedy"], "seat 0 (mine) returned an illegal action")
    assert f"`{example}`" in re.sub(r"\s*\n\s*", " ", doc)


def test_engine_doc_quotes_no_speed_figures():
    doc = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    figures = re.findall(r"\d[\d,.]*\s*(?:deals/s|ms\b|µs|s of CPU|× faster|× the)", doc)
    assert figures == []
    assert "(benchmarks.md)" in doc and "simkit bench all --markdown" in doc


# ---- 6. the overflow bin ---------------------------------------------------------------------


def test_hu_histogram_shows_the_clipped_tail_as_a_labelled_overflow_bar():
    """Catches the tail clipped into the last regular bin (a false spike)."""
    hu = np.r_[np.full(895, 50), np.full(100, 70), np.full(5, 400)]
    ax = plots.hu_distribution_plot(hu)
    edge = plots.overflow_edge(hu)
    assert edge == 80
    bars = {round(p.get_x()): p for p in ax.patches}
    last = bars[edge - 5]
    assert last.get_height() == pytest.approx(0.0)  # nothing of the tail in the last regular bin
    over = [p for p in ax.patches if p.get_x() > edge - 1]
    assert len(over) == 1 and over[0].get_height() == pytest.approx(5 / 1000 / 5)
    assert over[0].get_hatch() and over[0].get_x() > edge  # apart from the regular bars, hatched
    assert f"≥ {edge}" in [t.get_text() for t in ax.get_xticklabels()]
    assert any(t.startswith(f"overflow ≥ {edge} 胡: 5 wins") for t in _texts(ax))


def test_equity_hu_plot_has_an_overflow_bar_per_sample():
    winner = np.zeros(200, dtype=np.int64)
    hu = np.r_[np.full(199, 50), [300]]
    outcome = SeatOutcome.from_arrays(winner, np.full(200, 10), np.full(200, 2), hu, 0, 0.95)
    result = EquityResult("hand", 0, ("greedy",) * 3, 200, 1, 0.95, outcome, outcome)
    texts = _texts(hu_plot(result))
    assert sum("overflow ≥" in t for t in texts) == 2


# ---- 7. plain words in legends and labels ----------------------------------------------------


def _all_plots():
    rng = np.random.default_rng(0)
    curve = convergence_curve(rng.normal(size=500))
    rows = pd.DataFrame({"label": ["a - b"], "estimate": [0.1], "lo": [0.0], "hi": [0.2], "n": [100]})
    table = pd.DataFrame([[0.0, 0.1], [-0.1, 0.0]], index=["a", "b"], columns=["a", "b"])
    trajectory = pd.DataFrame({"iteration": range(30), "strength": rng.normal(size=30)})
    dealt = pd.DataFrame({"seat": np.repeat([0, 1, 2], 50), "n_jiang": rng.integers(0, 9, 150)})
    by_policy = pd.DataFrame({"policy": ["greedy"], "mean_payoff": [0.1], "mean_payoff_lo": [0.0],
                              "mean_payoff_hi": [0.2], "seat_deals": [300]})
    yield plots.win_rate_by_seat_plot(_rates(["greedy", "patient:2,6,1", "random"]))
    yield plots.hu_distribution_plot(np.r_[rng.integers(48, 100, 300), [500]])
    yield plots.convergence_plot(curve, "mean payoff", "Payoff against deals", reference=0.0)
    yield plots.forest_plot(rows, "difference", "A against B")
    yield plots.crosstable_plot(table, table - 0.1, table + 0.1, "row - column", "Crosstable")
    yield plots.tuning_plot(trajectory, "strength", "牌 per seat per deal", "SPSA", window=5, marks={"start": 0.0})
    yield plots.dealt_distribution_plot(dealt, "n_jiang", "jiang", "Dealt jiang")
    yield plots.payoff_by_policy_plot(by_policy)
    for decision in ("accept_h1", "accept_h0", "continue"):
        yield plots.sprt_llr_plot(np.cumsum(rng.normal(0.05, 0.3, 400)), -2.9, 2.9, "mc - greedy", min_n=100,
                                  decision=decision, mu0=0.0, mu1=0.2)


def test_plot_texts_are_plain_words():
    """Catches code names (accept_h1, snake_case identifiers) in legends, labels and titles."""
    for ax in _all_plots():
        for text in _texts(ax):
            assert not re.search(r"\b[a-z]+_[a-z0-9_]+\b", text), text


def test_hu_plots_name_the_measure_in_chinese():
    """Catches a bare pinyin ``hu`` or ``lou`` in the 胡数 plots' labels (issue 40: the code only
    in brackets beside its Chinese name)."""
    winner = np.zeros(200, dtype=np.int64)
    hu = np.r_[np.full(199, 50), [300]]
    outcome = SeatOutcome.from_arrays(winner, np.full(200, 10), np.full(200, 2), hu, 0, 0.95)
    result = EquityResult("hand", 0, ("greedy",) * 3, 200, 1, 0.95, outcome, outcome)
    for ax in (plots.hu_distribution_plot(hu), hu_plot(result)):
        texts = _texts(ax)
        assert any("胡数 (hu)" in t for t in texts), texts
        for text in texts:
            bare = re.sub(r"胡数 \(hu\)|楼 \(lou\)", "", text)
            assert not re.search(r"\b(hu|lou)\b", bare), text


def test_sprt_legend_names_the_hypotheses():
    ax = plots.sprt_llr_plot(np.linspace(0, 3.5, 300), -2.9, 2.9, "t", decision="accept_h1", mu0=0.0, mu1=0.2)
    texts = _texts(ax)
    assert "decision: accept H1: A − B = +0.2 after 300 deals" in texts
    assert "accept H0: A − B = 0 below -2.90" in texts


# ---- 8. parameters printed once --------------------------------------------------------------


def test_equity_text_prints_each_policy_once():
    """Catches expert's 16 parameters printed once per seat."""
    outcome = SeatOutcome.from_arrays(np.zeros(50, dtype=np.int64), np.full(50, 10), np.full(50, 2),
                                      np.full(50, 50), 0, 0.95)
    result = EquityResult("hand", 0, (EXPERT,) * 3, 50, 1, 0.95, outcome)
    assert result.text().count("57.6,13.4") == 1
    assert seats_text([EXPERT, "greedy", EXPERT]).count("57.6,13.4") == 1


def test_long_policy_texts_wrap_in_forest_and_crosstable_labels():
    """Catches expert's 16 parameters on one tick line (wider than the plot) or in the crosstable ticks."""
    names = ["greedy", "mc", "mc:16,4,1.5,0,0,0,0", EXPERT]
    rows = pd.DataFrame({"label": names, "estimate": [0.0, 1, 2, 3], "lo": [-1.0, 0, 1, 2], "hi": [1.0, 2, 3, 4],
                         "n": [100] * 4})
    ticks = [t.get_text() for t in plots.forest_plot(rows, "rating", "Ladder").get_yticklabels()]
    assert max(len(line) for t in ticks for line in t.split("\n")) <= 40
    assert ticks[-1].replace("\n", "").startswith(EXPERT)  # wrapped, nothing dropped
    table = pd.DataFrame(np.zeros((4, 4)), index=names, columns=names)
    ax = plots.crosstable_plot(table, table, table, "row - column", "Crosstable")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["greedy", "mc", "mc:16,4,1.5,0,\n0,0,0", "expert"]


def test_an_experiment_never_writes_over_a_users_files(tmp_path, capsys):
    """``experiment run FILE --out FOLDER`` wrote FOLDER/report/report.md over a user's file of
    that name; now a folder of other files is refused in one line, and a folder the experiment
    wrote (marked by experiment.json, written first) takes it again."""
    spec = tmp_path / "small.toml"
    spec.write_text(SMALL, encoding="utf-8")
    mine = tmp_path / "mine"
    (mine / "report").mkdir(parents=True)
    (mine / "report" / "report.md").write_text("my notes", encoding="utf-8")
    rc, err = run_cli(["experiment", "run", spec, "--scale", "0.001", "--out", mine, "--quiet"], capsys)
    one_line_error(rc, err, "--out", "report", "no experiment.json")
    assert (mine / "report" / "report.md").read_text(encoding="utf-8") == "my notes"
    assert sorted(p.name for p in mine.iterdir()) == ["report"]
    for _ in range(2):
        rc, err = run_cli(["experiment", "run", spec, "--scale", "0.001", "--out", tmp_path / "exp", "--quiet"],
                          capsys)
        assert rc == 0, err
    assert (tmp_path / "exp" / "experiment.json").is_file() and (tmp_path / "exp" / "report" / "report.md").is_file()
