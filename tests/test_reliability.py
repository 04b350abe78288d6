"""Reliability at the edges of a dataset (issue 21): locks, workers, side state, FIFOs, temp files.

Each test reproduces a failure of the fault-injection campaign and fails on the code before
the fix:

* F1: a ``.simkit.lock`` that is a symbolic link (or a hard link) to a user's file was
  truncated and overwritten with a pid;
* F2 / F3: workers of ``simulate --workers 2`` whose parent was SIGKILLed before they watched
  it, and stays an unreaped zombie, lived on (and a caller reading their output hung); the
  loky workers of ``equity --workers 2`` had no watch at all;
* F4: an edited tune ``state.json`` resumed silently; ``[]`` or ``"x"`` as ``tune.json``,
  ``tournament.json`` or ``comparison.json`` gave tracebacks;
* F7: a FIFO named ``_manifest.json`` or ``batch-000000.parquet`` blocked report and resume;
* F8: temporary files of killed writers stayed in every folder but the dataset's own, and those
  of a zombie writer everywhere;
* minor: a full disk named no file; a truncated manifest did not say how to recover; a
  complete dataset where one cannot write could not be "resumed".
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import alive, descendants, one_line_error, proc_table, read_only, run_cli

from simkit.cli import main
from simkit.runner import batch as batch_module
from simkit.runner import simulate
from simkit.runner.batch import check_batch_memory
from simkit.studies import dealt as dealt_module
from simkit.storage import DatasetError, load_dataset
from simkit.storage.dataset import MANIFEST, batch_path
from simkit.storage.files import write_text
from simkit.storage.lock import LOCK_NAME, FolderLock
from simkit.storage.paths import make_out_dir
from simkit.specs.simulate import SimulateSpec
from simkit.specs.equity import EquitySpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)

POLICIES = "greedy,random,random"
SEED = 5
ARGS = ["--deals", "400", "--policies", POLICIES, "--seed", str(SEED), "--batch-size", "200", "--quiet"]
HAS_PROC = Path("/proc/self/stat").exists()


def _simulate(path: Path) -> Path:
    return simulate(SimulateSpec(400, POLICIES, SEED, batch_size=200), path, QUIET)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    return _simulate(tmp_path_factory.mktemp("finished") / "data")


@pytest.fixture
def data(finished, tmp_path) -> Path:
    return Path(shutil.copytree(finished, tmp_path / "data"))


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _temp_name(name: str, pid: int) -> str:
    return f".{name}.simkit-{pid}-0123456789ab.tmp"


# -- F1: the lock file is simkit's own ---------------------------------------------------------


def test_a_symlinked_lock_is_refused_and_its_target_untouched(data, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (data / LOCK_NAME).symlink_to(victim)
    with pytest.raises(DatasetError, match="symbolic link"):
        FolderLock(data).acquire()
    rc, err = run_cli(["simulate", "--out", data] + ARGS, capsys)
    one_line_error(rc, err, LOCK_NAME, "symbolic link")
    assert victim.read_text() == "precious\n"
    assert (data / LOCK_NAME).is_symlink()  # not removed either: it is not simkit's


def test_a_hard_linked_lock_is_taken_over_without_writing_into_it(data, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.link(victim, data / LOCK_NAME)
    with FolderLock(data) as lock:
        assert victim.read_text() == "precious\n"
        assert (data / LOCK_NAME).read_text() == f"{os.getpid()}\n"  # a new file of this writer
        with pytest.raises(DatasetError, match=f"pid {os.getpid()}"):  # and it is the lock
            FolderLock(data).acquire()
        assert lock.fd is not None
    assert victim.read_text() == "precious\n" and not (data / LOCK_NAME).exists()
    _simulate(data)  # a stale lock file of a killed writer is taken over the same way


def test_a_fifo_as_the_lock_is_refused_without_hanging(data):
    os.mkfifo(data / LOCK_NAME)
    error = _without_hanging(lambda: FolderLock(data).acquire(), data / LOCK_NAME, DatasetError)
    assert "FIFO" in str(error)


# -- F7: FIFOs where files belong -------------------------------------------------------------


def _without_hanging(call, fifo: Path, expect: type[BaseException], timeout: float = 60.0) -> BaseException:
    """Run ``call`` in a thread; it must raise ``expect`` within ``timeout``.  A call blocked
    on the FIFO is released (its writer opened and closed) and the test fails."""
    outcome: dict = {}

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc
        else:
            outcome["error"] = None

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        for _ in range(50):  # release the blocked reader
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            thread.join(0.1)
            if not thread.is_alive():
                break
        pytest.fail(f"blocked on the FIFO {fifo}")
    error = outcome["error"]
    assert isinstance(error, expect), repr(error)
    assert len(str(error).splitlines()) == 1 and fifo.name in str(error), str(error)
    return error


def test_a_fifo_manifest_is_refused_by_report_and_resume(data):
    (data / MANIFEST).unlink()
    os.mkfifo(data / MANIFEST)
    error = _without_hanging(lambda: load_dataset(data), data / MANIFEST, DatasetError)
    assert "FIFO" in str(error)
    _without_hanging(lambda: _simulate(data), data / MANIFEST, DatasetError)


@pytest.mark.parametrize("manifest", [True, False], ids=["with manifest", "without manifest"])
def test_a_fifo_batch_file_is_refused_by_report_and_resume(data, manifest):
    fifo = batch_path(data, 0)
    fifo.unlink()
    os.mkfifo(fifo)
    if not manifest:
        (data / MANIFEST).unlink()  # resume then adopts the batch files: each is looked into
    else:
        _without_hanging(lambda: load_dataset(data), fifo, DatasetError)
    _without_hanging(lambda: _simulate(data), fifo, DatasetError)
    assert fifo.exists() and not fifo.is_file()  # left alone


# -- F4: side state carries a digest ----------------------------------------------------------


def test_digested_json_refuses_edits_and_non_objects(tmp_path):
    from simkit.storage.files import FileError, read_checked_json, write_checked_json

    path = tmp_path / "state.json"
    written = write_checked_json(path, {"a": [1.5, 2], "b": "x"})
    assert read_checked_json(path, "a state") == {"a": [1.5, 2], "b": "x"} != written
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("1.5", "0.2"), encoding="utf-8")
    with pytest.raises(FileError, match="edited or damaged"):
        read_checked_json(path, "a state")
    for bad in ("[]", '"x"', "{", "\udcff"):
        path.write_bytes(bad.encode("utf-8", "surrogateescape"))
        with pytest.raises(FileError, match="state.json"):
            read_checked_json(path, "a state")
    path.write_text('{"a": 1}', encoding="utf-8")  # written before digests: read as it is
    assert read_checked_json(path, "a state") == {"a": 1}


TUNE = ["tune", "patient:6", "--params", "min_units=1:8", "--against", "greedy", "--budget", "240",
        "--iteration-deals", "20", "--validate-deals", "20", "--seed", "3", "--quiet"]


@pytest.fixture(scope="module")
def tuned(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tune") / "t"
    assert main(TUNE + ["--out", str(out)]) == 0
    return out


def test_an_edited_tune_state_is_refused(tuned, tmp_path, capsys):
    out = Path(shutil.copytree(tuned, tmp_path / "t"))
    capsys.readouterr()
    state = json.loads((out / "state.json").read_text(encoding="utf-8"))
    assert len(state["iterations"]) == 2
    state["iterations"][1]["x_next"][0] = 0.2  # the edit: the digest is left as it was
    (out / "state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")
    rc, err = run_cli(TUNE + ["--out", out], capsys)
    one_line_error(rc, err, "state.json", "edited or damaged")
    # without its digest (as written before digests) an edit inside the trajectory breaks its chain
    state["iterations"][1]["x_next"][0] = json.loads((tuned / "state.json").read_text())["iterations"][1]["x_next"][0]
    state["iterations"][0]["x_next"][0] = 0.2
    del state["content_sha256"]
    (out / "state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")
    rc, err = run_cli(TUNE + ["--out", out], capsys)
    one_line_error(rc, err, "state.json", "iteration 1 does not start where iteration 0 ended")


@pytest.mark.parametrize("bad", ["[]", '"x"', "{\"kind\": "])
@pytest.mark.parametrize("command", ["tune", "tournament", "compare", "state"])
def test_side_state_that_is_no_object_is_aone_line_error(tuned, tmp_path, capsys, command, bad):
    out = tmp_path / "o"
    out.mkdir()
    name, argv = {
        "tune": ("tune.json", TUNE),
        "state": ("state.json", TUNE),
        "tournament": ("tournament.json", ["tournament", "greedy", "random", "--deals", "20", "--quiet"]),
        "compare": ("comparison.json", ["compare", "greedy", "random", "--deals", "20", "--quiet"]),
    }[command]
    if command == "state":  # a tune folder whose identity is right and whose state is not
        shutil.copy(tuned / "tune.json", out / "tune.json")
    (out / name).write_text(bad, encoding="utf-8")
    before = sorted(p.name for p in out.iterdir())
    rc, err = run_cli(argv + ["--out", out], capsys)
    one_line_error(rc, err, name)
    assert sorted(p.name for p in out.iterdir()) == before


# -- F8: temporary files of killed writers ----------------------------------------------------


def test_temp_files_of_dead_and_zombie_writers_are_removed_in_any_output_folder(tmp_path):
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        _wait_for(lambda: _state(zombie.pid) == "Z", 60, "a zombie")
        dead = _dead_pid()
        gone = [_temp_name("report.md", dead), _temp_name("comparison_forest.png", zombie.pid),
                _temp_name("tournament.json", dead)]
        keep = [".mydata.tmp", _temp_name("report.md", 1), _temp_name("x.svg", os.getpid()), "report.md"]
        for folder, opener in ((tmp_path / "made", make_out_dir),  # simulate, compare, tournament, tune, report
                               (tmp_path / "plain", lambda d: write_text(d / "report.md", "new"))):  # experiment
            folder.mkdir()
            for name in gone + keep:
                (folder / name).write_text("x")
            opener(folder)
            assert sorted(p.name for p in folder.iterdir()) == sorted(keep), folder
    finally:
        zombie.wait()


def test_a_rerun_of_compare_removes_a_killed_writers_report_temp_file(tmp_path, capsys):
    out = tmp_path / "cmp"
    argv = ["compare", "greedy", "random", "--deals", "20", "--batch-size", "20", "--out", out, "--quiet"]
    assert run_cli(argv, capsys)[0] == 0
    dead = _dead_pid()
    for name in (_temp_name("report.md", dead), _temp_name("comparison_forest.svg", dead)):
        (out / name).write_text("half a figure")
    assert run_cli(argv, capsys)[0] == 0
    assert not list(out.glob(".*.tmp"))


# -- F2 / F3: workers end with their parent ---------------------------------------------------


def _state(pid: int) -> str | None:
    entry = proc_table().get(pid)
    return entry[1] if entry else None


def _wait_for(predicate, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.mark.skipif(not HAS_PROC, reason="needs /proc")
@pytest.mark.parametrize("command", ["simulate", "equity",
                                     pytest.param("dask", marks=pytest.mark.slow)])  # waits out Dask's start-up
def test_sigkill_right_after_the_workers_start_leaves_no_process_and_no_hang(tmp_path, command):
    """The parent is killed 0.2 s after its loky workers appear (before they could watch it) and
    is left unreaped (a zombie) while the caller reads the run's output, as
    ``subprocess.run(..., capture_output=True)`` does: 5 s later no process of the run is left,
    and the caller's read ends."""
    out = tmp_path / "run"
    argv = {"simulate": ["simulate", "--deals", "2000000", "--policies", POLICIES, "--seed", "9",
                         "--batch-size", "1000", "--workers", "2", "--out", out, "--quiet"],
            "equity": ["equity", "YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2", "--policies",
                       "greedy,greedy,greedy", "--deals", "2000000", "--batch-size", "1000", "--workers", "2",
                       "--no-baseline", "--out", out, "--quiet"],
            "dask": ["simulate", "--deals", "2000000", "--policies", POLICIES, "--seed", "9", "--batch-size", "1000",
                     "--workers", "2", "--backend", "dask", "--out", out, "--quiet"]}[command]
    marker = b"multiprocessing.spawn" if command == "dask" else b"popen_loky_posix"  # how a worker is started
    proc = subprocess.Popen([sys.executable, "-m", "simkit"] + [str(a) for a in argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    seen: dict[int, tuple[str, bytes]] = {}
    try:
        def workers_started() -> bool:
            seen.update(descendants(proc.pid, proc_table()))
            workers = [pid for pid, (_, cmd) in seen.items() if marker in cmd]
            return len(workers) >= 2 or proc.poll() is not None

        _wait_for(workers_started, 300, "the workers")
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.2)
        seen.update(descendants(proc.pid, proc_table()))
        os.kill(proc.pid, signal.SIGKILL)
        time.sleep(5)
        assert _state(proc.pid) == "Z"  # not reaped: its workers cannot tell by their parent pid
        left = alive(seen)
        assert not left, {pid: seen[pid][1][:80] for pid in left}
        result: dict = {}
        reader = threading.Thread(target=lambda: result.setdefault("out", proc.communicate()), daemon=True)
        reader.start()
        reader.join(10)
        assert "out" in result, "the caller's read of the run's output hangs"
    finally:
        for pid in alive(seen):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_two_workers_write_the_bytes_of_one(finished, tmp_path):
    """The pool that ends with its parent changes no byte: simulate and equity with 2 workers
    write the files of 1 (equity's pool was joblib's before)."""
    from simkit.studies.equity import equity

    two = simulate(SimulateSpec(400, POLICIES, SEED, batch_size=200), tmp_path / "sim2",
                   Execution(workers=2, quiet=True))
    assert _batch_bytes(two) == _batch_bytes(finished)
    hand = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"
    spec = EquitySpec(hand, 0, policies="greedy,patient,random", deals=300, seed=4, batch_size=100, baseline=False)
    equity(spec, tmp_path / "eq1")
    equity(spec, tmp_path / "eq2", Execution(workers=2, quiet=True))
    assert _batch_bytes(tmp_path / "eq2" / "equity") == _batch_bytes(tmp_path / "eq1" / "equity")
    assert len(_batch_bytes(tmp_path / "eq1" / "equity")) == 3


def _batch_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(folder).glob("batch-*.parquet"))}


# -- minor ------------------------------------------------------------------------------------


def test_a_full_disk_names_the_file(data, capsys, monkeypatch):
    import simkit.storage.files as files

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    batch_path(data, 1).unlink()
    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError) as caught:
        write_text(data / "notes.txt", "x")
    assert caught.value.filename == str(data / "notes.txt") and caught.value.errno == errno.ENOSPC
    rc, err = run_cli(["simulate", "--out", data] + ARGS, capsys)
    line = one_line_error(rc, err, os.strerror(errno.ENOSPC))
    assert re.search(rf"{re.escape(str(data))}/(_manifest\.json|batch-000001\.parquet): ", line), line
    assert not list(data.glob(".*.tmp"))


def _stamps(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


COMPARE = ["compare", "greedy", "random", "--deals", "40", "--batch-size", "20", "--seed", "3"]


def test_a_finished_comparison_where_nothing_can_be_written_is_complete(tmp_path, capsys, monkeypatch):
    """compare on a finished folder on read-only media: the result, "complete", nothing written
    (no lock, no report); another comparison, or one with deals missing, a one-line error."""
    out = tmp_path / "cmp"
    assert main(COMPARE + ["--out", str(out), "--quiet"]) == 0
    result = capsys.readouterr().out.splitlines()[0]
    before = _stamps(out)
    read_only(monkeypatch, out)
    assert main(COMPARE + ["--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == result and "complete" in captured.err and "Traceback" not in captured.err
    assert _stamps(out) == before
    rc, err = run_cli(COMPARE[:-1] + ["4", "--out", out], capsys)
    one_line_error(rc, err, "holds another comparison", "seed")
    batch_path(out / "seating-BAB", 1).unlink()
    before = _stamps(out)
    rc, err = run_cli(COMPARE + ["--out", out], capsys)
    one_line_error(rc, err, "cannot write")
    assert _stamps(out) == before


EQUITY = ["equity", "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2", "--policies",
          "greedy,greedy,greedy", "--deals", "30", "--batch-size", "10", "--seed", "3"]


def test_a_finished_equity_run_where_nothing_can_be_written_is_complete(tmp_path, capsys, monkeypatch):
    """equity --out on a finished folder on read-only media: the same result, "complete",
    nothing written; with a batch missing, the one-line error and nothing written."""
    out = tmp_path / "eq"
    assert main(EQUITY + ["--out", str(out), "--quiet"]) == 0
    result = capsys.readouterr().out.splitlines()[:-1]  # the last line: time and files written
    before = _stamps(out)
    read_only(monkeypatch, out)
    assert main(EQUITY + ["--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:-1] == result and "complete" in captured.err, captured.err
    assert "Traceback" not in captured.err and _stamps(out) == before
    batch_path(out / "equity", 2).unlink()
    before = _stamps(out)
    rc, err = run_cli(EQUITY + ["--out", out], capsys)
    one_line_error(rc, err, "cannot write")
    assert _stamps(out) == before


def test_a_truncated_manifest_says_how_to_recover(data, capsys):
    text = (data / MANIFEST).read_bytes()
    (data / MANIFEST).write_bytes(text[: len(text) // 2])
    rc, err = run_cli(["report", data, "--out", data.parent / "rep"], capsys)
    one_line_error(rc, err, MANIFEST, "delete it and re-run simkit simulate")


def test_a_complete_dataset_where_nothing_can_be_written_is_complete(data, capsys, monkeypatch):
    read_only(monkeypatch, data)
    before = {p.name: p.stat().st_mtime_ns for p in data.iterdir()}
    data.chmod(0o555)
    try:
        rc, err = run_cli(["simulate", "--out", data] + ARGS[:-1], capsys)
        assert rc == 0 and "complete" in err, err
        assert {p.name: p.stat().st_mtime_ns for p in data.iterdir()} == before
    finally:
        data.chmod(0o755)
    batch_path(data, 1).unlink()  # something to compute: still the one-line error, nothing written
    before = {p.name: p.stat().st_mtime_ns for p in data.iterdir()}
    data.chmod(0o555)
    try:
        rc, err = run_cli(["simulate", "--out", data] + ARGS, capsys)
        one_line_error(rc, err, "cannot write")
        assert {p.name: p.stat().st_mtime_ns for p in data.iterdir()} == before
    finally:
        data.chmod(0o755)


REPLAY = ["replay", "--seed", "1", "--deal", "0", "--policies", "greedy,greedy,greedy", "--output"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_an_output_that_is_a_named_pipe_is_written_into_not_replaced(tmp_path, capsys):
    """``--output`` wrote through a temporary file renamed over the path, which put a regular
    file in the place of a named pipe (and, run as root, of /dev/full or /dev/null); now a
    device, FIFO or socket is written straight into, as a shell's ``>`` does: the reader of the
    pipe gets the replay, and the pipe stays a pipe."""
    expected = tmp_path / "deal.jsonl"
    assert run_cli(REPLAY + [expected], capsys)[0] == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so that the writer's open does not wait
    try:
        rc, err = run_cli(REPLAY + [fifo], capsys)
        assert rc == 0, err
        received = b""
        while chunk := os.read(reader, 1 << 16):
            received += chunk
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received == expected.read_bytes() and len(received) > 1000


def test_an_output_through_a_symbolic_link_keeps_the_link(tmp_path, capsys):
    """The rename also replaced a symbolic link with a file, cutting the user's link; now the
    file it points to gets the output."""
    target = tmp_path / "real.jsonl"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    rc, err = run_cli(REPLAY + [link], capsys)
    assert rc == 0, err
    assert link.is_symlink() and target.read_text(encoding="utf-8").startswith('{"event": "deal"')


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_an_output_device_that_fails_is_one_line_and_stays_a_device(capsys):
    """A write to /dev/full (no space left) is one line naming the file, and /dev/full stays the
    character device it was (as root the rename replaced it with a regular file)."""
    rc, err = run_cli(REPLAY + ["/dev/full"], capsys)
    one_line_error(rc, err, "/dev/full", "No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize("value", ["0", "abc", "-2"])
def test_a_thread_count_in_the_environment_that_is_no_count_is_one_line(tmp_path, capsys, monkeypatch, value):
    """NUMBA_NUM_THREADS=0 failed as an "internal error ... please report it" once the run
    started its threads (and 'abc' printed numba's traceback as a warning); now one line naming
    the variable, before any work."""
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    rc, err = run_cli(["simulate", "--deals", "10", "--policies", "greedy,greedy,greedy", "--seed", "1", "--out",
                       tmp_path / "run", "--quiet"], capsys)
    one_line_error(rc, err, "NUMBA_NUM_THREADS", repr(value), "positive integer")
    assert not (tmp_path / "run").exists()


def test_a_symbolic_link_that_leads_nowhere(tmp_path, capsys):
    """A link loop given as --out was called "a file", and as --output was replaced by a regular
    file; now one line says what it is, for a folder and for a file, and the links stay.  A link
    to a missing file is an output file to create (as a shell's ``>`` creates it); a link to a
    missing folder is no output folder."""
    loop_a, loop_b = tmp_path / "a", tmp_path / "b"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    rc, err = run_cli(["simulate", "--deals", "10", "--policies", "greedy,greedy,greedy", "--seed", "1", "--out",
                       loop_a, "--quiet"], capsys)
    one_line_error(rc, err, "--out", "symbolic link loop")
    one_line_error(*run_cli(REPLAY + [loop_a], capsys), "--output", "symbolic link loop")
    with pytest.raises(OSError, match="symbolic link loop"):
        write_text(loop_a, "x")
    assert loop_a.is_symlink() and loop_b.is_symlink()
    dangling = tmp_path / "link"
    dangling.symlink_to(tmp_path / "missing")
    rc, err = run_cli(["simulate", "--deals", "10", "--policies", "greedy,greedy,greedy", "--seed", "1", "--out",
                       dangling, "--quiet"], capsys)
    one_line_error(rc, err, "--out", "symbolic link to the missing")
    assert run_cli(REPLAY + [dangling], capsys)[0] == 0
    assert dangling.is_symlink() and (tmp_path / "missing").read_text(encoding="utf-8").startswith('{"event"')


@pytest.mark.parametrize("argv", [
    ["simulate", "--policies", "greedy,greedy,greedy", "--seed", "1", "--quiet"],
    ["simulate", "--policies", "greedy,greedy,greedy", "--seed", "1", "--quiet", "--workers", "2"],
    ["compare", "greedy", "random", "--seed", "1", "--quiet"],
    ["tournament", "greedy", "random", "patient", "--seed", "1", "--quiet"],
    ["equity", "YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2", "--policies",
     "greedy,greedy,greedy", "--quiet", "--no-baseline"],
], ids=["simulate", "simulate-workers", "compare", "tournament", "equity"])
def test_a_batch_too_large_for_the_memory_is_refused_before_anything_is_written(tmp_path, capsys, monkeypatch,
                                                                               argv):
    """``--batch-size 10000000`` asks for about 32 GB of result rows per batch: on a smaller
    machine the system killed the run, with no word, after minutes.  Now one line names
    --batch-size and the memory, and no folder is made (a comparison's or tournament's identity
    written first would have refused the corrected re-run).  The machine is made small here:
    1,000 rows of 3.2 kB do not fit in 2 MB; the same run fits in the real machine."""
    monkeypatch.setattr(batch_module, "machine_memory", lambda: 2_000_000)
    rc, err = run_cli(argv + ["--deals", "1000", "--batch-size", "1000", "--out", tmp_path / "run"], capsys)
    one_line_error(rc, err, "--batch-size 1,000: a batch of that many rows", "needs about 3.2 MB of memory",
                   "more than this machine's 2.0 MB (a smaller --batch-size fits)")
    assert not (tmp_path / "run").exists()
    monkeypatch.undo()
    assert check_batch_memory(1000) is None  # the real machine holds it


@pytest.mark.parametrize("argv", [["deals", "--out"], ["prob", "--hands"]])
def test_a_dealt_hands_table_too_large_for_the_memory_is_refused_before_any_work(tmp_path, capsys, monkeypatch,
                                                                                 argv):
    """``prob --hands DIR`` holds its dealt-hands table whole (about 0.3 kB a deal): 100 million
    deals were first counted for a minute, then the table would not fit.  Now one line naming
    --deals, before any work (the counting is made to fail here if it starts)."""
    monkeypatch.setattr(batch_module, "machine_memory", lambda: 100_000)
    monkeypatch.setattr(dealt_module, "deal_table", _no_table)
    rc, err = run_cli(argv + [tmp_path / "hands", "--deals", "1000", "--seed", "1"], capsys)
    one_line_error(rc, err, "--deals 1,000: a dealt-hands table of that many", "needs about 0.3 MB of memory")
    assert not (tmp_path / "hands").exists()


def _no_table(*args, **kwargs):
    raise AssertionError("the dealt hands were computed before the check")


def test_an_interrupt_inside_a_deferred_block_arrives_after_it():
    """simulate writes a batch file and records it in one block that holds SIGINT: the interrupt
    comes after the block, never between the two steps (under load a batch file was left that
    the manifest did not name)."""
    import signal as signal_module

    from simkit.lifeline import interrupts_deferred

    # Python's own handler for the test's length: a test run started as a background job of a
    # shell without job control inherits SIGINT ignored, and the block rightly restores that
    started_with = signal_module.signal(signal_module.SIGINT, signal_module.default_int_handler)
    steps = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_deferred():
                signal_module.raise_signal(signal_module.SIGINT)
                steps.append("written")
                steps.append("recorded")
        assert steps == ["written", "recorded"]
        assert signal_module.getsignal(signal_module.SIGINT) is signal_module.default_int_handler
    finally:
        signal_module.signal(signal_module.SIGINT, started_with)
