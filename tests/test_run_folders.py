"""One rule for every output folder, from the command line and the library alike
(simkit/storage/runs.py, issue 37).

Each test names the bug it catches: a command whose folder check skipped the "new, empty or its
own" part (cliargs' old ``study_out_dir``: tournament, tune, review, calibrate and simulate
wrote into a folder of a user's files), a dataset kind refused its own older folders, and an
identity check that ignored a stored field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simkit.cliargs import build_parser, check_arguments
from simkit.errors import SimkitError
from simkit.storage.dataset import LEGACY_MANIFEST, MANIFEST, DatasetError
from simkit.storage.runs import RUN_KINDS, check_run_folder, check_run_identity, identity_mismatch
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

from helpers import read_only

QUIET = Execution(quiet=True)

# every command that writes a run's folder, the command line that names it, and its kind
COMMAND_FOLDERS = (
    ("simulate", ["simulate", "--deals", "10", "--policies", "random,random,random", "--seed", "1", "--out", "{out}"], "simulation"),
    ("compare", ["compare", "expert", "greedy", "--deals", "10", "--out", "{out}"], "comparison"),
    ("tournament", ["tournament", "greedy", "random", "--deals", "10", "--out", "{out}"], "tournament"),
    ("tune", ["tune", "patient", "--params", "min_units=1:4", "--against", "greedy", "--budget", "100", "--out", "{out}"], "tune"),
    ("train", ["train", "--out", "{out}"], "train"),
    ("report", ["report", "{dataset}", "--out", "{out}"], "report"),
    ("demo", ["demo", "--out", "{out}"], "report"),
    ("deals", ["deals", "--deals", "10", "--out", "{out}"], "hands"),
    ("calibrate", ["calibrate", "random", "--deals", "10", "--out", "{out}"], "calibration"),
)


def _parse(argv: list[str]):
    parser, checks = build_parser()
    args = parser.parse_args(argv)
    check_arguments(args, checks)
    return args


@pytest.mark.parametrize("command, argv, kind", COMMAND_FOLDERS, ids=[c[0] for c in COMMAND_FOLDERS])
def test_every_command_refuses_a_folder_of_a_users_files(tmp_path, command, argv, kind):
    """Before any work: a folder holding someone's notes and no marker of the kind is refused in
    one line naming the option; the same folder with the kind's marker passes (the old CLI let
    tournament, tune, simulate and calibrate through, and wrote among the user's files)."""
    dataset = tmp_path / "data"
    dataset.mkdir()
    (dataset / MANIFEST).write_text("{}")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    line = [a.format(out=out, dataset=dataset) for a in argv]
    try:
        args_ok = _parse(line)
    except SimkitError as exc:
        message = str(exc)
    else:
        pytest.fail(f"{command} accepted a folder of a user's files: {args_ok.out}")
    assert "notes.txt" in message and RUN_KINDS[kind].marker in message and "--out" in message
    assert "\n" not in message
    (out / RUN_KINDS[kind].marker).write_text("{}")  # now it is the kind's own
    assert Path(_parse(line).out) == out


def test_review_refuses_a_folder_of_a_users_files(tmp_path):
    log = tmp_path / "deal.jsonl"
    log.write_text("")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "review.md").write_text("mine")
    with pytest.raises(SimkitError, match="holds review.md and no review.json"):
        _parse(["review", str(log), "--seat", "1", "--out", str(out)])


def test_the_library_and_the_command_line_give_the_same_refusal(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(SimkitError) as library:
        check_run_folder(tmp_path, "tournament", "--out")
    with pytest.raises(SimkitError) as command_line:
        _parse(["tournament", "greedy", "random", "--deals", "10", "--out", str(tmp_path)])
    assert str(library.value) == str(command_line.value)


def test_a_dataset_folder_of_an_older_version_is_still_its_own(tmp_path):
    """Datasets written before schema 2 hold ``manifest.json``: simulate resumes them in place."""
    (tmp_path / LEGACY_MANIFEST).write_text("{}")
    (tmp_path / "batch-000000.parquet").write_bytes(b"x")
    assert check_run_folder(tmp_path, "simulation") == tmp_path
    with pytest.raises(SimkitError, match="is the folder of a simkit dataset"):
        check_run_folder(tmp_path, "comparison")


def test_a_dataset_may_not_lie_inside_another_but_may_be_one(tmp_path):
    (tmp_path / MANIFEST).write_text("{}")
    assert check_run_folder(tmp_path, "simulation") == tmp_path  # its own folder: resumed
    with pytest.raises(SimkitError, match="inside the simkit dataset"):
        check_run_folder(tmp_path / "inner", "simulation")
    with pytest.raises(SimkitError, match="is the folder of a simkit dataset"):
        check_run_folder(tmp_path, "tournament")


def test_the_identity_check_names_the_first_differing_field_and_keeps_recorded_apart(tmp_path):
    identity = {"kind": "t", "seed": 1, "deals": 10}
    check_run_identity(tmp_path, "tournament", identity, recorded={"params": [1]})
    stored = json.loads((tmp_path / "tournament.json").read_text())
    assert stored["params"] == [1] and stored["seed"] == 1
    check_run_identity(tmp_path, "tournament", identity, recorded={"params": [2]})  # recorded: not compared
    with pytest.raises(DatasetError, match="its deals is 10, this run's is 11"):
        check_run_identity(tmp_path, "tournament", {**identity, "deals": 11})
    # a field the stored file has and this run lacks is a difference too (an older run's extra setting)
    with pytest.raises(DatasetError, match="its deals is 10, this run's is None"):
        check_run_identity(tmp_path, "tournament", {"kind": "t", "seed": 1})


def test_an_edited_identity_file_is_one_line_naming_it(tmp_path):
    check_run_identity(tmp_path, "tune", {"seed": 1})
    path = tmp_path / "tune.json"
    path.write_text(path.read_text().replace('"seed": 1', '"seed": 3'))
    with pytest.raises(DatasetError) as info:
        check_run_identity(tmp_path, "tune", {"seed": 3})
    assert "tune.json" in str(info.value) and "\n" not in str(info.value)


def test_one_home_for_the_folder_rule_and_the_markers():
    """The grep of the issue's closing note: the primitives are called from storage alone, and
    each marker's name is written once, in storage/runs.py."""
    root = Path(__file__).resolve().parent.parent / "simkit"
    callers, markers = [], []
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root).as_posix()
        if rel not in ("storage/paths.py", "storage/runs.py", "storage/files.py", "cliargs.py"):
            for name in ("check_new_or_own(", "check_study_out_dir(", "require_identity(", "stored_identity("):
                if name in text:
                    callers.append(f"{rel}: {name}")
        if rel != "storage/runs.py":
            for kind in RUN_KINDS.values():
                if kind.marker.endswith(".json") and f'"{kind.marker}"' in text and kind.marker not in (
                        MANIFEST, LEGACY_MANIFEST, "manifest.json"):
                    markers.append(f"{rel}: {kind.marker}")
    assert callers == []
    assert markers == []


def test_simulate_refuses_a_users_folder_from_the_library(tmp_path):
    """The library's simulate keeps the rule too (it used to write batches beside the files)."""
    from simkit.runner.simulate import simulate

    (tmp_path / "photo.jpg").write_bytes(b"x")
    with pytest.raises(SimkitError, match="holds photo.jpg and no _manifest.json"):
        simulate(SimulateSpec(10, ["random", "random", "random"], 1), tmp_path, QUIET)
    assert sorted(os.listdir(tmp_path)) == ["photo.jpg"]


def test_the_command_line_refuses_before_importing_numba(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    code = ("import sys; from simkit.cliargs import parse_command_line\n"
            "try:\n    parse_command_line(['tournament', 'greedy', 'random', '--out', sys.argv[1]])\n"
            "except Exception as exc:\n    print(type(exc).__name__, 'numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["SimkitError", "False"]


def test_a_finished_folder_on_read_only_media_passes_only_when_asked_and_marked(tmp_path, monkeypatch):
    """``finished_readable`` (an equity study resumed where nothing can be written): the kind's
    folder passes, as the Path given; not by default, not without the kind's marker (a user's
    read-only folder), and not where the rule's other parts refuse it (a dataset's folder).
    Catches the clause's conditions joined by ``or``, its ``not`` dropped, a mode that asks
    only whether the folder exists, the default turned on, and the wrong ``itself``."""
    media = tmp_path / "media"
    study = media / "study"
    (study / "equity").mkdir(parents=True)  # the marker of an equity study
    users = media / "users"
    users.mkdir()
    (users / "notes.txt").write_text("mine")
    read_only(monkeypatch, media)
    assert check_run_folder(str(study), "equity", finished_readable=True) == study
    with pytest.raises(SimkitError, match=r"^--out .*/study: cannot write in .*/study \(no permission"):
        check_run_folder(study, "equity", "--out")  # by default: a folder to write in
    with pytest.raises(SimkitError, match=r"^out .*/users: cannot write in"):
        check_run_folder(users, "equity", finished_readable=True)
    # a dataset kind's finished folder is its own dataset (its older marker too); another kind's is refused
    dataset, legacy = media / "data", media / "legacy"
    dataset.mkdir()
    (dataset / MANIFEST).write_text("{}")
    legacy.mkdir()
    (legacy / LEGACY_MANIFEST).write_text("{}")
    (legacy / "batch-000000.parquet").write_bytes(b"x")
    assert check_run_folder(dataset, "simulation", finished_readable=True) == dataset
    assert check_run_folder(legacy, "simulation", finished_readable=True) == legacy
    (dataset / "comparison.json").write_text("{}")
    with pytest.raises(SimkitError, match=r"^--out .*/data is the folder of a simkit dataset") as info:
        check_run_folder(dataset, "comparison", "--out", finished_readable=True)
    assert info.value.parameters == ()


def test_finished_readable_still_refuses_a_writable_folder_of_users_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SimkitError, match="holds notes.txt and no equity: an equity study writes only into"):
        check_run_folder(tmp_path, "equity", "--out", finished_readable=True)


def test_every_refusal_names_the_option_given_or_out(tmp_path):
    """The option a caller names (the CLI's ``--out``) or, by default, ``out`` starts each
    refusal and is its parameter when it is a name: a refusal that named another option, or
    none, would send a user to the wrong setting."""
    a_file = tmp_path / "a.txt"
    a_file.write_text("x")
    with pytest.raises(SimkitError) as info:
        check_run_folder(a_file, "comparison")
    assert str(info.value) == f"out {a_file} is a file, not a folder" and info.value.parameters == ("out",)
    with pytest.raises(SimkitError) as info:
        check_run_folder(a_file, "comparison", "--out")
    assert str(info.value) == f"--out {a_file} is a file, not a folder" and info.value.parameters == ()
    (tmp_path / MANIFEST).write_text("{}")
    with pytest.raises(SimkitError, match=r"^--out .*/inner is inside the simkit dataset"):
        check_run_folder(tmp_path / "inner", "comparison", "--out")


@pytest.mark.parametrize("kind, refusal", [
    ("simulation", "holds notes.txt and no _manifest.json: a simulation writes only into a new or empty folder"),
    ("comparison", "holds notes.txt and no comparison.json: a comparison writes only into a new or empty folder"),
])
def test_a_users_folder_is_refused_naming_the_kind(tmp_path, kind, refusal):
    """A dataset kind and another: the refusal says which kind writes only into its own folder."""
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SimkitError) as info:
        check_run_folder(tmp_path, kind, "--out")
    assert str(info.value) == f"--out {tmp_path} {refusal} or one it wrote; choose another folder"


def test_in_a_datasets_folder_names_parquet_readers_skip_and_batches_do_not_count(tmp_path):
    """A simulation's folder holding ``_…`` and ``.…`` names and batch files (a run killed
    before its manifest) is its own; a comparison's folder holding any of them is not."""
    names = ("_notes", ".DS_Store", "batch-000000.parquet")
    for name in names:
        folder = tmp_path / name.strip("._")
        folder.mkdir()
        (folder / name).write_text("x")
        assert check_run_folder(folder, "simulation") == folder, name
    with pytest.raises(SimkitError, match="holds _notes and no comparison.json"):
        check_run_folder(tmp_path / "notes", "comparison")
    with pytest.raises(SimkitError, match="holds batch-000000.parquet and no comparison.json"):
        check_run_folder(tmp_path / "batch-000000.parquet", "comparison")


def test_the_identity_refusal_names_the_folder_and_the_option(tmp_path):
    check_run_identity(tmp_path, "tune", {"seed": 1})
    with pytest.raises(DatasetError) as info:
        check_run_identity(tmp_path, "tune", {"seed": 2})
    assert str(info.value) == f"{tmp_path} holds another tuning: its seed is 1, this run's is 2 (use another folder for out)"
    assert info.value.parameters == ("out",)
    with pytest.raises(DatasetError) as info:
        check_run_identity(tmp_path, "tune", {"seed": 2}, option="--out")
    assert str(info.value).endswith("(use another folder for --out)") and info.value.parameters == ()
    assert identity_mismatch(tmp_path, "tune", {"seed": 1}, {"seed": 2}).endswith("(use another folder for out)")
    assert identity_mismatch(tmp_path, "tune", {"seed": 1}, {"seed": 1}) is None


def test_an_identity_file_that_is_no_object_is_named_with_its_kind(tmp_path):
    """The unreadable identity file's error says whose identity it should be, and names the
    option as a parameter only when it is a name."""
    (tmp_path / "tune.json").write_text("[1]")
    with pytest.raises(DatasetError) as info:
        check_run_identity(tmp_path, "tune", {"seed": 1})
    assert "tune.json: is not a tuning's identity (a JSON list, not an object)" in str(info.value)
    assert info.value.parameters == ("out",)
    with pytest.raises(DatasetError) as info:
        check_run_identity(tmp_path, "tune", {"seed": 1}, option="--out")
    assert info.value.parameters == ()


def test_an_unknown_run_kind_names_the_known_ones():
    with pytest.raises(ValueError) as info:
        check_run_folder("x", "tournaments")
    assert str(info.value).startswith("unknown run kind 'tournaments' (known: simulation, equity-deals, hands, comparison, ")
    assert str(info.value).endswith(", experiment, equity)")
