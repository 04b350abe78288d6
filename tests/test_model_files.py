"""Hostile or broken model files (issue 36): the ``.npz`` files of ``learned:PATH`` policies and
of the luck adjustment's value models (``--luck FILE``), both read by
:func:`simkit.policies.model.read_model_file`.

What each test catches:

* ``test_a_compressed_bomb_is_refused_unread``: a reader that decompresses a member before it
  checks the member's declared size against the layout (a 256 MiB block of zeros in a 0.3 MB
  file took 0.5 GB of memory before it was refused; 1 GiB in 1 MB: 2.2 GB, 7-60 s);
* ``test_hostile_files_are_one_line_errors``: each broken file of the issue (a header declaring
  10^12 numbers: MemoryError; an ``.npy`` named ``.npz``: TypeError; metadata nested 100,000
  deep: RecursionError; ``rules: "zzz"``: ValueError for ``learned``, accepted for a value
  model; a wrong magic number reported as "another layout (444 features, this simkit has
  444)") and more (a lying ``.npy`` header, members added, objects, other dtypes, NaN in the
  header, other compression) refused in one line naming the file and the problem;
* ``test_the_size_cap_compares_the_files_size``: a cap that compares anything but the file's
  size (the mutation ``len(path) > MAX_MODEL_BYTES`` survived every test before): a file one
  byte over the cap is refused with its size, a small model under a long path is read.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from simkit.errors import SimkitError
from simkit.policies.network import LEGACY_H_HIDDEN1, LEGACY_VB_FEATURES
from simkit.policies.model import BUILTIN_MODEL, LEARNED_LAYOUT, MAX_MODEL_BYTES, ModelError, load_model
from simkit.runner.value_model import BUILTIN_VALUE_MODEL, VALUE_LAYOUT, ValueModelError, load_value_model

KINDS = {  # kind: (loader, its error, a good file, its layout)
    "learned": (load_model, ModelError, BUILTIN_MODEL, LEARNED_LAYOUT),
    "value": (load_value_model, ValueModelError, BUILTIN_VALUE_MODEL, VALUE_LAYOUT),
}


def members_of(kind: str) -> dict[str, bytes]:
    """The members of the shipped model file of ``kind``."""
    with zipfile.ZipFile(KINDS[kind][2]) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    """An ``.npy`` header alone (version 1.0), declaring any dtype and shape."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def write_zip(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def block_of(members: dict[str, bytes]) -> np.ndarray:
    return np.load(io.BytesIO(members["block.npy"])).copy()


def meta_of(members: dict[str, bytes]) -> dict:
    return json.loads(str(np.load(io.BytesIO(members["meta.npy"]))[()]))


def refused(kind: str, path: Path, *needles: str) -> str:
    """The one-line error of loading ``path`` as a model of ``kind``, naming the file and
    holding every needle."""
    load, error, _, _ = KINDS[kind]
    with pytest.raises(error) as info:
        load(path)
    assert isinstance(info.value, SimkitError)
    text = str(info.value)
    assert "\n" not in text and str(path) in text, text
    for needle in needles:
        assert needle in text, (needle, text)
    return text


# ---------------------------------------------------------------------------- a compressed bomb


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    """0.3 MB of zip holding a 256 MiB ``block.npy`` of zeros (a valid ``.npy``) and good metadata."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.npz"
    chunk = bytes(1 << 24)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("block.npy", "w", force_zip64=True) as member:
            member.write(npy_header("<f8", (16 * len(chunk) // 8,)))
            for _ in range(16):
                member.write(chunk)
        archive.writestr("meta.npy", members_of("learned")["meta.npy"])
    return path


MEASURE = textwrap.dedent("""
    import json, resource, sys, time
    from simkit.policies.model import load_model
    from simkit.runner.value_model import load_value_model
    load = load_model if sys.argv[1] == "learned" else load_value_model
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        load(sys.argv[2])
        error = None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(json.dumps({"error": error, "seconds": seconds, "grown_mb": grown,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_compressed_bomb_is_refused_unread(kind, bomb):
    assert bomb.stat().st_size < 400_000
    done = subprocess.run([sys.executable, "-c", MEASURE, kind, str(bomb)], capture_output=True, text=True,
                          timeout=300, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    error = result["error"]
    assert error is not None and error.startswith(KINDS[kind][1].__name__), result
    assert "\n" not in error and str(bomb) in error and "member block.npy declares 268435584 bytes" in error, error
    assert result["seconds"] < 2.0, result
    assert result["grown_mb"] < 64, result  # nothing decompressed: the peak of the imports alone


# ---------------------------------------------------------------------------- broken files


def _with_block(change: Callable[[np.ndarray], None]) -> Callable[[dict[str, bytes]], dict[str, bytes]]:
    def build(members: dict[str, bytes]) -> dict[str, bytes]:
        block = block_of(members)
        change(block)
        return dict(members, **{"block.npy": npy(block)})
    return build


def _with_meta(change: Callable[[dict], object]) -> Callable[[dict[str, bytes]], dict[str, bytes]]:
    def build(members: dict[str, bytes]) -> dict[str, bytes]:
        meta = meta_of(members)
        text = change(meta)
        return dict(members, **{"meta.npy": npy(np.array(text if isinstance(text, str) else json.dumps(meta)))})
    return build


def _lying_header(members: dict[str, bytes]) -> dict[str, bytes]:
    block = block_of(members)  # the header says 5 numbers fewer than the member holds
    return dict(members, **{"block.npy": npy_header("<f8", (block.size - 5,)) + block.tobytes()})


def _too_large(extra: int) -> Callable[[dict[str, bytes], str], dict[str, bytes]]:
    def build(members: dict[str, bytes], kind: str) -> dict[str, bytes]:
        return dict(members, **{"block.npy": npy(np.zeros(KINDS[kind][3].max_block + extra))})
    return build


def _magic(kind: str) -> Callable[[np.ndarray], None]:
    def change(block: np.ndarray) -> None:
        block[0] = 12345.0  # both kinds' magic number (the shipped files are of the legacy layouts)
    return change


def _nan_header(kind: str) -> Callable[[np.ndarray], None]:
    def change(block: np.ndarray) -> None:
        block[LEGACY_H_HIDDEN1 if kind == "learned" else LEGACY_VB_FEATURES] = np.nan
    return change


CASES: dict[str, tuple[Callable[[dict[str, bytes], str], dict[str, bytes] | bytes], str]] = {
    # the files
    "declares-10^12-numbers": (lambda m, k: dict(m, **{"block.npy": npy_header("<f8", (10**12,)) + bytes(64)}),
                               "1000000000000 numbers"),
    "npy-named-npz": (lambda m, k: npy(np.zeros(3)), "not a simkit model"),
    "metadata-nested-deep": (lambda m, k: dict(m, **{"meta.npy": npy(np.array("[" * 100_000))}), "nested too deeply"),
    "metadata-object-nested-deep": (lambda m, k: dict(m, **{"meta.npy": npy(np.array('{"format": ' + "[" * 100_000))}),
                                    "nested too deeply"),
    "rules-zzz": (lambda m, k: _with_meta(lambda meta: meta.update(rules="zzz"))(m), "rules"),
    "magic-number": (lambda m, k: _with_block(_magic(k))(m), "magic number is 12345"),
    # more
    "unknown-rule-option": (lambda m, k: _with_meta(lambda meta: meta.update(rules={"no_such_option": True}))(m),
                            "no_such_option"),
    "bad-rule-value": (lambda m, k: _with_meta(lambda meta: meta.update(rules={"hu_tolerance": 99}))(m),
                       "hu_tolerance"),
    "lying-npy-header": (lambda m, k: _lying_header(m), "declares"),
    "block-one-number-too-many": (_too_large(1), "numbers by its .npy header"),
    "block-member-too-large": (_too_large(2000), "member block.npy declares"),
    "extra-member": (lambda m, k: dict(m, **{"evil.npy": npy(np.zeros(2))}), "not exactly 'block' and 'meta'"),
    "missing-member": (lambda m, k: {"block.npy": m["block.npy"]}, "not exactly 'block' and 'meta'"),
    "object-block": (lambda m, k: dict(m, **{"block.npy": npy_header("|O", (4,)) + bytes(32)}), "Python objects"),
    "int-block": (lambda m, k: dict(m, **{"block.npy": npy(block_of(m).astype(np.int64))}), "float64"),
    "matrix-block": (lambda m, k: dict(m, **{"block.npy": npy(block_of(m)[:100].reshape(10, 10))}), "float64"),
    "number-metadata": (lambda m, k: dict(m, **{"meta.npy": npy(np.zeros(3))}), "not one text"),
    "metadata-not-an-object": (lambda m, k: dict(m, **{"meta.npy": npy(np.array("[1, 2]"))}), "not a simkit"),
    "nan-in-header": (lambda m, k: _with_block(_nan_header(k))(m), "NaN"),
    "npy-version-3": (lambda m, k: dict(m, **{"block.npy": b"\x93NUMPY\x03\x00" + m["block.npy"][8:]}),
                      "truncated"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_hostile_files_are_one_line_errors(kind, case, tmp_path):
    build, needle = CASES[case]
    built = build(members_of(kind), kind)
    path = tmp_path / f"{case}.npz"
    if isinstance(built, bytes):
        path.write_bytes(built)
    else:
        write_zip(path, built)
    refused(kind, path, needle)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_other_compression_and_lying_zip_sizes_are_refused(kind, tmp_path):
    members = members_of(kind)
    refused(kind, write_zip(tmp_path / "bz2.npz", members, zipfile.ZIP_BZIP2), "compressed by method 12")
    deflated = write_zip(tmp_path / "deflated.npz", members, zipfile.ZIP_DEFLATED)
    assert KINDS[kind][0](deflated).digest  # deflated, as np.savez_compressed writes: read
    stored = write_zip(tmp_path / "stored.npz", members)
    with zipfile.ZipFile(stored) as archive:
        size = archive.getinfo("block.npy").file_size.to_bytes(4, "little")
    data = stored.read_bytes()
    assert data.count(size) == 4  # its compressed and uncompressed sizes, in its local and central headers
    lie = data.replace(size, (int.from_bytes(size, "little") - 8).to_bytes(4, "little"))
    (tmp_path / "lie.npz").write_bytes(lie)  # the zip says 8 bytes fewer than the .npy header
    refused(kind, tmp_path / "lie.npz", "declares")


# ---------------------------------------------------------------------------- the size cap


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_size_cap_compares_the_files_size(kind, tmp_path):
    cap = KINDS[kind][3].max_file_bytes
    assert MAX_MODEL_BYTES == LEARNED_LAYOUT.max_file_bytes
    over = tmp_path / "over.npz"
    good = KINDS[kind][2].read_bytes()
    with open(over, "wb") as f:  # a good model padded (sparse) to one byte over the cap
        f.write(good)
        f.truncate(cap + 1)
    refused(kind, over, f"is {cap + 1} bytes", f"({cap} at most)")
    deep = tmp_path.joinpath(*["a-long-folder-name-" + "x" * 40] * 12)
    deep.mkdir(parents=True)
    small = deep / "model.npz"
    small.write_bytes(good)
    assert len(str(small)) > 700
    assert KINDS[kind][0](small).digest == KINDS[kind][0](KINDS[kind][2]).digest
    os.remove(small)


# ---------------------------------------------------------------------------- zip flags a reader cannot follow


def with_flags(data: bytes, flags: int) -> bytes:
    """``data`` (a zip) with ``flags`` or-ed into every member's general-purpose flag bits, in
    its local headers and its central directory (which :mod:`zipfile` reads them from)."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        at = archive.start_dir
        locals_ = [info.header_offset for info in archive.infolist()]
    for offset in locals_:
        assert out[offset : offset + 4] == b"PK\x03\x04"
        out[offset + 6 : offset + 8] = (int.from_bytes(out[offset + 6 : offset + 8], "little") | flags).to_bytes(2, "little")
    for _ in locals_:
        assert out[at : at + 4] == b"PK\x01\x02"
        out[at + 8 : at + 10] = (int.from_bytes(out[at + 8 : at + 10], "little") | flags).to_bytes(2, "little")
        at += 46 + sum(int.from_bytes(out[at + k : at + k + 2], "little") for k in (28, 30, 32))
    return bytes(out)


@pytest.mark.parametrize("bit, words", [(0x1, "is encrypted"), (0x20, "is compressed patched data"),
                                        (0x40, "is strongly encrypted")], ids=["encrypted", "patched", "strong"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_members_zipfile_cannot_read_are_one_line_errors(kind, bit, words, tmp_path):
    """zipfile raises RuntimeError (a password needed) or NotImplementedError for these bits: a
    check of the wrong bit (``flag_bits & 0x2`` for encryption survived the suite) let them
    through as a traceback."""
    path = tmp_path / "flagged.npz"
    path.write_bytes(with_flags(KINDS[kind][2].read_bytes(), bit))
    refused(kind, path, f"its member block.npy {words} (zip flag bit 0x{bit:x}")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_members_with_the_flags_writers_set_are_read(kind, tmp_path):
    """A data descriptor (0x8, zipfile's own when it streams), UTF-8 names (0x800) and a deflate
    level (0x2, 0x4) are no reason to refuse a model: a check of any bit but the unreadable ones
    (``flag_bits != 0``, or a mask that takes one of these) refuses it."""
    load, _, good, _ = KINDS[kind]
    path = tmp_path / "flags.npz"
    path.write_bytes(with_flags(good.read_bytes(), 0x8 | 0x800 | 0x2 | 0x4))
    with zipfile.ZipFile(path) as archive:
        assert {info.flag_bits for info in archive.infolist()} == {0x80E}
    assert np.array_equal(load(path).block, load(good).block)


# ---------------------------------------------------------------------------- layout versions


def _block_of_another_dtype(members: dict[str, bytes]) -> dict[str, bytes]:
    return dict(members, **{"block.npy": npy(block_of(members).astype(np.float32))})


@pytest.mark.parametrize("kind, version, words", [
    ("learned", 999, "its metadata claim layout version 999; this simkit reads simkit-learned-model files of layout "
                     "version 2 or 3"),
    ("learned", 2.0, "its metadata claim layout version 2.0"),  # a float is no version
    ("learned", None, "its metadata claim no layout_version"),
    ("value", 999, "its metadata claim layout version 999; this simkit reads simkit-value-model files of no "
                   "layout_version field"),
    ("value", 1, "its metadata claim layout version 1"),
])
def test_an_unknown_layout_version_is_refused_before_the_block(kind, version, words, tmp_path):
    """A value model claiming layout version 999 loaded (nothing read the field).  The version
    is checked with the metadata, before the block: here a block of float32, which would be
    refused too, is not the problem named."""
    members = members_of(kind)
    meta = meta_of(members)
    meta.pop("layout_version", None)
    if version is not None:
        meta["layout_version"] = version
    changed = dict(members, **{"meta.npy": npy(np.array(json.dumps(meta)))})
    refused(kind, write_zip(tmp_path / "v.npz", changed), words)
    text = refused(kind, write_zip(tmp_path / "v2.npz", _block_of_another_dtype(changed)), words)
    assert "float64" not in text


def test_a_learned_models_version_must_be_its_blocks(tmp_path):
    """The shipped model's block is of layout version 2 (converted at load); metadata claiming
    version 3 for it are damaged, not a model of the current layout."""
    members = members_of("learned")
    meta = meta_of(members)
    assert meta["layout_version"] == 2
    meta["layout_version"] = 3
    path = write_zip(tmp_path / "v3.npz", dict(members, **{"meta.npy": npy(np.array(json.dumps(meta)))}))
    refused("learned", path, "its metadata claim layout version 3, its block is of layout version 2")


# ---------------------------------------------------------------------------- the cache


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_file_rewritten_in_place_is_read_anew(kind, tmp_path):
    """A model file rewritten in place, at the same size and with its modification time set
    back, serves its new weights at the next load: the cache keyed on (path, mtime, size) served
    the old ones (and no test noticed a key that ignored the file's contents)."""
    load, _, good, _ = KINDS[kind]
    members = members_of(kind)
    old = write_zip(tmp_path / "old.npz", members).read_bytes()
    block = block_of(members)
    block[-1] += 1.0  # the output's bias (last in both kinds' blocks): other weights, same size
    new = write_zip(tmp_path / "new.npz", dict(members, **{"block.npy": npy(block)})).read_bytes()
    assert len(new) == len(old) and new != old
    path = tmp_path / "model.npz"
    path.write_bytes(old)
    before = load(path)
    stat = path.stat()
    with open(path, "r+b") as f:  # in place: the same inode, the same size
        f.write(new)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_mtime_ns, path.stat().st_size) == (stat.st_mtime_ns, stat.st_size)
    after = load(path)
    fresh = load(tmp_path / "new.npz")
    assert after.digest == fresh.digest != before.digest
    assert np.array_equal(after.block, fresh.block) and not np.array_equal(after.block, before.block)
    link = tmp_path / "link.npz"
    link.symlink_to(path)
    again = load(link)  # the same file by another name: cached, under the name asked for
    assert again.path == str(link) and again.digest == after.digest and again.block is after.block


# --- mutation tests (docs/testing.md): the reader, the writer and the words of the messages ---

def test_read_model_file_returns_the_block_the_metadata_and_the_files_sha256(tmp_path):
    """The public reader: the SHA-256 is of the file's bytes (hashlib on the bytes read here),
    the block is the stored float64 block, and a foreign file is a one-line ModelError."""
    import hashlib

    from simkit.policies.model import read_model_file

    block, meta, digest = read_model_file(BUILTIN_MODEL, LEARNED_LAYOUT)
    assert digest == hashlib.sha256(BUILTIN_MODEL.read_bytes()).hexdigest()
    with np.load(BUILTIN_MODEL) as stored:
        np.testing.assert_array_equal(block, stored["block"])
    assert meta["format"] == LEARNED_LAYOUT.fmt and block.dtype == np.float64
    foreign = tmp_path / "foreign.npz"
    foreign.write_bytes(b"PK not a zip")
    with pytest.raises(ModelError, match=r"^model file .*foreign\.npz: ") as caught:
        read_model_file(foreign, LEARNED_LAYOUT)
    assert "\n" not in str(caught.value)


def test_model_bytes_is_a_function_of_the_contents_not_of_the_order_of_the_metadata():
    """Written metadata: keys sorted (the same bytes whatever the order the caller built its dict
    in), the layout's fields under their names, the block stored as float64 whatever it came as."""
    from simkit.policies.model import model_bytes

    with np.load(BUILTIN_MODEL) as stored:
        shipped = json.loads(str(stored["meta"]))
    block = load_model(BUILTIN_MODEL).block           # the current layout's block of the shipped model
    first = model_bytes(block, {"seed": 1, "generations": 2})
    assert first == model_bytes(block, {"generations": 2, "seed": 1})
    with np.load(io.BytesIO(model_bytes(block.astype(np.float32), {}))) as written:
        assert written["block"].dtype == np.float64
        meta = json.loads(str(written["meta"]))
    assert list(meta) == sorted(meta)
    assert {"format", "layout_version", "features", "feature_regions", "hidden"} <= set(meta)
    # the shipped file's own record of its layout (written when it was trained)
    assert meta["hidden"] == shipped["hidden"] and meta["feature_regions"] == shipped["feature_regions"]


@pytest.mark.parametrize("versions, words", [
    ((2, 3), "layout version 2 or 3"),
    ((None,), "no layout_version field"),
    ((2, None), "layout version 2 or no layout_version field"),
])
def test_a_layouts_versions_in_words(versions, words):
    from simkit.policies.model import ModelLayout

    assert ModelLayout("f", 10, versions).versions_text() == words


def test_the_words_messages_use_for_a_files_values():
    from simkit.policies.model import _option_text, _shape_text, _short

    assert [_short(v) for v in ("abc", 5, 2.5, None)] == ["'abc'", "5", "2.5", "None"]
    assert _short([1, 2]) == "a JSON list" and _short({"a": 1}) == "a JSON dict"
    assert _short("x" * 78) == "'" + "x" * 78 + "'"          # 80 characters: kept whole
    assert _short("x" * 79) == "'" + "x" * 76 + "..."        # 81: cut to 80
    assert _shape_text((1, 2, 3, 4)) == "(1, 2, 3, 4)" and _shape_text((1,) * 5) == "(5 dimensions)"
    assert [_option_text(v) for v in (True, False, 3, "x")] == ["on", "off", "3", "x"]
