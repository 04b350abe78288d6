"""Hostile or broken positions, logs and output folders (issue 36), and a fuzz of every file
kind a user hands simkit: model files (both kinds), position texts, logs.

What each test catches:

* ``test_the_dealers_opening_has_no_exposed_groups``: a position of the dealer's opening
  (``got=tianhu``, docs/rules.md §5-6: the dealt 31 cards, before any play) with exposed groups,
  passed types, a 相公 seat or ``nowin`` accepted (it was: the stock arithmetic allows them);
* ``test_deeply_nested_json_is_one_line``: JSON nested 100,000 deep in a log line, a position or
  a rule set raising RecursionError (an internal error) instead of a one-line refusal;
* ``test_policies_named_in_a_log_are_never_imported``: a replay log's deal line naming policies
  of the import-path form (``os:system``, a module that writes a file when imported): reading,
  analysing and reviewing the log must never import them; the review's rollouts play
  ``--policy``, the loss against a reference refuses them in one line;
* ``test_a_review_folder_being_written_is_refused``: ``review --out`` writing a folder another
  simkit process holds (no lock was taken: two reviews could write one folder at once);
* ``test_fuzz_of_malformed_files``: 300+ seeded malformed inputs (truncations, bit flips, wrong
  members, dtypes, shapes, huge declared sizes, nested JSON, wrong types) each refused in one
  line by a :class:`SimkitError`, never another exception.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import zipfile
from collections.abc import Callable

import numpy as np
import pytest

from simkit.engine.position import PositionError, action_text, parse_position
from simkit.errors import SimkitError
from simkit.policies.model import BUILTIN_MODEL, load_model
from simkit.replay import log_decisions, replay_jsonl
from simkit.rules import RuleSet
from simkit.runner.value_model import BUILTIN_VALUE_MODEL, load_value_model
from simkit.studies.reference import review_against_reference
from simkit.studies.review import GameReview, parse_decision_log, read_decision_log, write_review_report
from tests.helpers import module_on_path, one_line_error, run_cli

SEED, DEAL, POLICIES = 5, 3, "greedy,greedy,greedy"
OPENING = ("seat=0; dealer=0; turn=discard; got=tianhu; stock=21; hand=YJ*2 YS YX YC*3 YZ*2 RS RX*2 RC RM RZ*2 "
           "WJ WS WX WM WP*2 WZ GJ GX*2 GC GP")  # 28 cards: 3 more in hand or exposed


@pytest.fixture(scope="module")
def logged() -> tuple[list[str], list]:
    """A greedy deal's replay log lines and its decisions."""
    lines = replay_jsonl(SEED, DEAL, POLICIES).splitlines()
    return lines, log_decisions(lines)


def one_line(error: BaseException, *needles: str) -> str:
    text = str(error)
    assert isinstance(error, SimkitError) and "\n" not in text, repr(error)
    for needle in needles:
        assert needle in text, (needle, text)
    return text


# ---------------------------------------------------------------------------- positions


@pytest.mark.parametrize(("extra", "needle"), [
    ("; exposed1=peng:RC", "seat 1 shows exposed groups (peng:RC)"),
    ("; exposed2=kong:GM", "seat 2 shows exposed groups (kong:GM)"),
    ("; exposed0=peng:YP", "seat 0 shows exposed groups (peng:YP)"),
    ("; exposed1=peng:RC; exposed2=chow:GC,GM,GP", "seat 1 shows exposed groups"),
    ("; locks=GS", "passed types"),
    ("; xianggong=2", "相公"),
    ("; nowin=true", "nowin"),
])
def test_the_dealers_opening_has_no_exposed_groups(extra, needle, capsys):
    assert parse_position(OPENING + " YP*3").got == "tianhu"  # the dealt 31 cards
    text = OPENING + ("" if "exposed0" in extra else " YP*3") + extra
    with pytest.raises(PositionError) as info:
        parse_position(text)
    one_line(info.value, "got=tianhu is the dealer's dealt hand before any play", needle)
    data = dict(item.strip().split("=", 1) for item in text.split(";"))
    with pytest.raises(PositionError):
        parse_position(json.dumps(data))
    rc, err = run_cli(["analyze", text, "--rollouts", "8"], capsys)
    one_line_error(rc, err, "got=tianhu", needle)


# ---------------------------------------------------------------------------- nested JSON


def test_deeply_nested_json_is_one_line(logged, tmp_path, capsys):
    lines, _ = logged
    deep = "[" * 100_000
    cases = {
        "first-line": [deep],
        "replay-line": [lines[0], '{"event": "discard", "player": 0, "card": ' + deep, *lines[2:]],
        "decision-line": [json.dumps({"position": OPENING + " YP*3", "chosen": "discard YP"}),
                          '{"position": ' + deep],
        "decision-position": [json.dumps({"position": {"seat": [[[[[[[[[[[[]]]]]]]]]]]]}, "chosen": "x"})],
        "one-level-too-deep": ['{"event": "deal", "x": ' + "[" * 64 + "]" * 64 + "}"],
    }
    for name, log in cases.items():
        with pytest.raises(SimkitError) as info:
            parse_decision_log(log, name)
        one_line(info.value, name)
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(log) + "\n")
        rc, err = run_cli(["review", str(path), "--seat", "0", "--rollouts", "8"], capsys)
        one_line_error(rc, err, str(path))
    with pytest.raises(PositionError) as info:
        parse_position('{"seat": ' + deep)
    one_line(info.value, "nested too deeply")
    with pytest.raises(SimkitError) as info:
        RuleSet.from_json('{"tianhu": ' + deep)
    one_line(info.value, "nested too deeply")
    rc, err = run_cli(["analyze", '{"seat": ' + deep], capsys)
    one_line_error(rc, err, "nested too deeply")


# ---------------------------------------------------------------------------- policies named in a log


HOSTILE = """
import pathlib
pathlib.Path(__file__).with_name("imported.flag").write_text("this module was imported")


def act(obs, mask, params, rng, rules, work):
    return 0
"""


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A module that leaves ``imported.flag`` beside itself when imported, importable (on
    sys.path and in the working folder, which the command line adds to the path)."""
    folder = tmp_path / "mods"
    folder.mkdir()
    on_path = module_on_path(folder, "hostile_policy_mod", HOSTILE)
    next(on_path)
    monkeypatch.chdir(folder)
    yield folder / "imported.flag"
    next(on_path, None)


def test_policies_named_in_a_log_are_never_imported(hostile, logged, tmp_path, capsys):
    lines, decisions = logged
    header = json.loads(lines[0])
    header["policies"] = ["hostile_policy_mod:act", "os:system", "hostile_policy_mod:act"]
    log = tmp_path / "deal.jsonl"
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert [d.position for d in read_decision_log(log)] == [d.position for d in decisions]
    seat = 1
    at = next(d.index for d in decisions if d.seat == seat and len(d.position.legal_actions()) >= 2)
    rc, err = run_cli(["analyze", "--log", log, "--at", at, "--rollouts", "16"], capsys)
    assert rc == 0, err
    with pytest.raises(SimkitError) as info:  # the table of a review against a reference: built-in names only
        review_against_reference(log.read_text().splitlines(), seat)
    one_line(info.value, "'hostile_policy_mod:act' is not one of simkit's built-in policies",
             "nothing named in a log is imported")
    out = tmp_path / "review"
    rc, err = run_cli(["review", log, "--seat", seat, "--rollouts", "4", "--reference", "none", "--out", out,
                       "--quiet"], capsys)
    assert rc == 0, err
    assert (out / "review.md").exists() and not (out / ".simkit.lock").exists()
    assert not hostile.exists() and "hostile_policy_mod" not in sys.modules
    __import__("hostile_policy_mod")  # the module works: it was never imported, not merely missing
    assert hostile.exists()


@pytest.fixture
def untouched(tmp_path, monkeypatch):
    """A valid model file (the shipped one's bytes) whose every open or stat is recorded: the
    file a hostile log names, there so that a reader that follows the name would succeed."""
    import builtins
    import os

    sentinel = tmp_path / "named-by-the-log.npz"
    sentinel.write_bytes(BUILTIN_MODEL.read_bytes())
    touched: list[str] = []
    real_open, real_stat = builtins.open, os.stat

    def watch(path) -> None:
        if isinstance(path, (str, bytes, os.PathLike)) and os.path.basename(os.fsdecode(path)) == sentinel.name:
            touched.append(os.fsdecode(path))

    def spy_open(file, *args, **kwargs):
        watch(file)
        return real_open(file, *args, **kwargs)

    def spy_stat(path, *args, **kwargs):
        watch(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "stat", spy_stat)
    yield sentinel, touched


def test_a_model_file_named_in_a_log_is_never_opened(untouched, logged, tmp_path, capsys):
    """A log's deal line naming ``learned:PATH`` made the review against a reference open PATH
    (a log may come from anyone: it must never make simkit open or import a file).  The loss
    against the default reference is left out, saying why in one line; the review goes on."""
    sentinel, touched = untouched
    lines, decisions = logged
    header = json.loads(lines[0])
    header["policies"] = ["greedy", f"learned:{sentinel}", "greedy"]
    log = tmp_path / "deal.jsonl"
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    seat = 0
    with pytest.raises(SimkitError) as info:
        review_against_reference(log.read_text().splitlines(), seat, samples=2)
    one_line(info.value, "the log's deal line", f"'learned:{sentinel}' names a model file",
             "nothing named in a log is opened or imported")
    rc, err = run_cli(["review", log, "--seat", seat, "--rollouts", "4", "--samples", "2", "--sharpen", "0",
                       "--quiet", "--json"], capsys)
    assert rc == 0, err
    assert "no loss against expert" in err and "names a model file" in err and err.count("\n") == 1, err
    assert touched == []
    # plain learned (the shipped model, which played exactly as expert) is no built-in any more
    header["policies"] = ["greedy", "learned", "greedy"]
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(SimkitError) as info:
        review_against_reference(log.read_text().splitlines(), seat, samples=2)
    one_line(info.value, "the log's deal line", "'learned' is not one of simkit's built-in policies",
             "search", "nothing named in a log is imported")
    assert touched == []
    # every built-in name plays from a log, presets and parameters included (search shares mc's id)
    header["policies"] = ["greedy", "search:rollouts=2", "mc:rollouts=2"]
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    review = review_against_reference(log.read_text().splitlines(), seat, samples=2)
    assert review.table == ("expert", "search:rollouts=2", "mc:rollouts=2") and touched == []


# ---------------------------------------------------------------------------- review --out's lock


HOLDER = ("import sys, time\nfrom simkit.storage.lock import FolderLock\nlock = FolderLock(sys.argv[1]).acquire()\n"
          "print('held', flush=True)\ntime.sleep(120)\n")


def test_a_review_folder_being_written_is_refused(tmp_path):
    out = tmp_path / "review"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        review = GameReview(seat=0, policy="expert", seed=0, rollouts=1, luck=None, decisions=())
        with pytest.raises(SimkitError) as info:
            write_review_report(review, out)
        one_line(info.value, str(out), "is being written by another simkit process", f"pid {holder.pid}")
        assert sorted(p.name for p in out.iterdir()) == [".simkit.lock"]  # nothing written
    finally:
        holder.kill()
        holder.wait()


# ---------------------------------------------------------------------------- fuzz

JUNK: tuple[object, ...] = (None, True, 0, -1, 2**70, 1e308, -0.0, "", "zzz", "RJ*9", "seat=0", [], {}, [1, "x"],
                            {"a": {"b": []}}, "\n", "\u0000", "9" * 5000)


def _deep(rng: random.Random) -> str:
    depth = rng.choice([65, 200, 999, 1000, 5000, 100_000])
    return rng.choice("[{") * depth if rng.random() < 0.5 else '{"a": ' * depth


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _model_file(good: bytes, rng: random.Random) -> bytes:
    """A malformed variant of the model file ``good``."""
    with zipfile.ZipFile(io.BytesIO(good)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(str(np.load(io.BytesIO(members["meta.npy"]))[()]))
    block = np.load(io.BytesIO(members["block.npy"]))
    kind = rng.randrange(12)
    if kind == 0:
        return good[: rng.randrange(len(good))]
    if kind == 1:
        return _flip(good, rng)
    if kind == 2:
        return bytes(rng.getrandbits(8) for _ in range(rng.randrange(200)))
    if kind == 3:  # a wrong dtype or shape
        array = rng.choice([block.astype(np.float32), block.astype(np.int64), block[:30].reshape(5, 6), block[:0],
                            np.array("text"), np.zeros((2, 2, 2)), block.astype(">f8"), np.zeros(10, "complex128")])
        members[rng.choice(["block.npy", "meta.npy"])] = _npy(array)
    elif kind == 4:  # a huge declared shape
        shape = rng.choice([(10**12,), (2**62,), (-1,), (0,), (3, 10**9), ()])
        members["block.npy"] = _npy_header(rng.choice(["<f8", "<U100000000", "|O", "<f4"]), shape) + bytes(64)
    elif kind == 5:  # nested metadata
        members["meta.npy"] = _npy(np.array(_deep(rng)))
    elif kind == 6:  # wrong types in the metadata
        meta[rng.choice(["format", "features", "rules", "training", "layout_version", "hidden"])] = rng.choice(JUNK)
        meta["format"] = meta["format"] if rng.random() < 0.8 else rng.choice(JUNK)
        if rng.random() < 0.5:
            meta["rules"] = {rng.choice(["tianhu", "hu_tolerance", "next_dealer", "bogus"]): rng.choice(JUNK)}
        members["meta.npy"] = _npy(np.array(json.dumps(meta)))
    elif kind == 7:  # wrong members
        name = rng.choice(["block.npy", "meta.npy"])
        members[rng.choice(["blocks.npy", "block", "../block.npy", name.upper()])] = members.pop(name)
    elif kind == 8:  # a block of wrong numbers
        block = block.copy()
        block[rng.randrange(min(block.size, 30))] = rng.choice([np.nan, np.inf, -1.0, 1e300, 0.5, 12345.0, 0.0])
        members["block.npy"] = _npy(block)
    elif kind == 9:
        members["extra.npy"] = _npy(np.zeros(rng.randrange(1, 5)))
    elif kind == 10:  # a member whose .npy header disagrees with its data
        members["block.npy"] = _npy_header("<f8", (block.size + rng.choice([-7, -1, 1, 100]),)) + block.tobytes()
    else:
        return _zip(members, zipfile.ZIP_BZIP2 if rng.random() < 0.5 else zipfile.ZIP_LZMA)
    return _zip(members, rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))


def _position_text(good: str, rng: random.Random) -> str:
    """A malformed variant of the position text or JSON ``good``."""
    kind = rng.randrange(7)
    if kind == 0:
        return good[: rng.randrange(len(good))]
    if kind == 1:
        return good + f"; got=tianhu; exposed{rng.randrange(3)}=peng:RC"
    if good.startswith("{"):
        data = json.loads(good)
        if kind == 2:
            data[rng.choice(sorted(data))] = rng.choice(JUNK)
        elif kind == 3:
            data.pop(rng.choice(sorted(data)))
        elif kind == 4:
            data[rng.choice(["rules", "exposed", "hand", "tianhu", "bogus"])] = rng.choice(JUNK)
        elif kind == 5:
            return good[:-1] + ', "dead": ' + _deep(rng)
        else:
            return json.dumps(rng.choice(JUNK))
        return json.dumps(data)
    items = [item for item in good.split(";") if item.strip()]
    if kind == 2:
        k = rng.randrange(len(items))
        items[k] = items[k].split("=")[0] + "=" + str(rng.choice(JUNK))
    elif kind == 3:
        items.pop(rng.randrange(len(items)))
    elif kind == 4:
        items.append(rng.choice(items))
    elif kind == 5:
        items.append(rng.choice(["tianhu=maybe", "hand", "=", "rules=" + _deep(rng)]))
    else:
        return "; ".join(items).replace(rng.choice("0123456789"), rng.choice(["X", "99", "-1", ""]))
    return "; ".join(items)


def _log_lines(lines: list[str], typed: list[str], rng: random.Random) -> list[str]:
    """A malformed variant of a replay log or a typed decision log."""
    replay = rng.random() < 0.6
    out = list(lines if replay else typed)
    kind = rng.randrange(7)
    k = rng.randrange(len(out))
    if kind == 0:
        return out[: rng.randrange(1, len(out))] if replay else out + ["{"]
    if kind == 1:
        out[k] = out[k][: rng.randrange(len(out[k]))]
    elif kind == 2:
        out[k] = _deep(rng)
    elif kind == 3:
        entry = json.loads(out[k])
        key = rng.choice(sorted(entry))
        entry[key] = rng.choice(JUNK)
        out[k] = json.dumps(entry)
    elif kind == 4:
        header = json.loads(lines[0])
        header[rng.choice(["hands", "stock", "rules", "dealer", "policies"])] = rng.choice(JUNK)
        return [json.dumps(header), *lines[1:]]
    elif kind == 5:
        j = rng.randrange(1, len(out))
        out[1], out[j] = out[j], out[1]
        if out == lines or out == typed:
            out.pop()
    else:
        out[k] = json.dumps(rng.choice(JUNK))
    return out


def _outcome(call: Callable[[], object]) -> str:
    try:
        call()
    except SimkitError as exc:
        assert "\n" not in str(exc), repr(exc)
        return "refused"
    return "accepted"


def test_fuzz_of_malformed_files(logged, tmp_path):
    rng = random.Random(36)
    lines, decisions = logged
    typed = [json.dumps({"position": d.position.text(), "chosen": action_text(d.action, d.position)})
             for d in decisions[:6]]
    assert len(parse_decision_log(typed)) == len(typed)  # the typed log is good
    positions = [d.position for d in decisions[:: max(1, len(decisions) // 8)]]
    texts = [p.text() for p in positions] + [p.to_json() for p in positions]
    outcomes: dict[str, list[str]] = {"model": [], "value": [], "position": [], "log": []}
    for i in range(90):
        for kind, good, load in (("model", BUILTIN_MODEL, load_model),
                                 ("value", BUILTIN_VALUE_MODEL, load_value_model)):
            path = tmp_path / f"{kind}-{i}.npz"
            path.write_bytes(_model_file(good.read_bytes(), rng))
            outcomes[kind].append(_outcome(lambda: load(path)))
        text = _position_text(rng.choice(texts), rng)
        outcomes["position"].append(_outcome(lambda: parse_position(text)))
        log = _log_lines(lines, typed, rng)
        outcomes["log"].append(_outcome(lambda: parse_decision_log(log, "fuzz.jsonl")))
    refused = {kind: results.count("refused") for kind, results in outcomes.items()}
    assert sum(refused.values()) >= 300, refused
    assert all(count >= 0.8 * len(outcomes[kind]) for kind, count in refused.items()), refused  # nearly all malformed
