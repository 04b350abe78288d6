"""Model files of the ``learned`` policy: what they hold, how they are checked and loaded.

A model file is a NumPy ``.npz`` archive (no pickled objects) with two members:

* ``block``: ``float64``, the model block the kernel reads
  (:mod:`simkit.policies.learned`: a header with the margin and the expert weights of the
  feature ``F_EXPERT``, then the network block of :mod:`simkit.policies.network`, each
  feature's scale folded into the first layer).  A file of layout version 2
  (:data:`LEGACY_LAYOUT_VERSION`, the shipped ``learned.npz`` among them) holds the block of
  before that format; it keeps its bytes and is converted at load
  (:func:`simkit.policies.network.legacy_learned_parts`), so :attr:`LoadedModel.block` is
  always of the current layout;
* ``meta``: one JSON text: ``format`` (:data:`MODEL_FORMAT`), ``layout_version`` and
  ``features`` (the feature names, which must be this simkit's), ``hidden`` (layer widths),
  ``feature_regions``, ``rules`` (the rule options it was trained for) and ``training`` (seed,
  generation, deals seen, settings, margin, validation figures, library and simkit versions,
  and the base policy of its self-play: ``expert``, or the previous generation as
  ``learned:gen-NNN/model.npz`` relative to the run's folder with its ``base_model_sha256``).

The file is a function of its settings, seed and software only: no path, no time, no machine,
so the same training gives the same bytes and digest in any folder, at any time.  Those go to
the run record beside it (``simkit train``: each generation's ``metrics.json``, with the
command line that names ``--out``, the base model's path, the seconds, the hardware and the
model's SHA-256; ``train.json`` holds the run's settings).  The metadata are JSON with sorted
keys and the zip members carry a fixed date and system (:func:`simkit.archive.npz_bytes`).
(The shipped ``learned.npz`` predates this: its ``training`` still holds the command that made
it, with its relative ``--out``; it is kept as it is, since reports record its digest.)

:func:`load_model` refuses, in one line naming the file, a missing or unreadable file, a
truncated or foreign one, and a model of another feature layout or layout version.  A model's
identity is the SHA-256 of its file (:attr:`LoadedModel.digest`), which datasets record; the
loaders of both kinds cache a model by its resolved path and that digest (:class:`ModelCache`),
so a file rewritten in place, whatever its size and modification time, is read anew.

A file may be hostile (a few KB that inflate to GBs, an ``.npy`` header declaring 10^12
numbers), so the reader of both kinds (:func:`read_model_file`, :class:`ModelCache`; the value
models of the luck adjustment are :mod:`simkit.runner.value_model`'s) reads nothing it has not
bounded first, each bound derived from the kind's :class:`ModelLayout` (its block's largest
legal size): the file's size; the zip's member list (exactly ``block.npy`` and ``meta.npy``,
stored or deflated, none flagged encrypted or patched) and each member's declared uncompressed
size; each member's ``.npy`` header (dtype and shape, checked
against the layout before any data is read); then no more than the bytes the header declares.
Metadata are JSON of at most :data:`MAX_META_BYTES`, of a layout version the kind reads
(:attr:`ModelLayout.versions`, checked before the block is read), their ``rules`` rule options
of this simkit.  Refusing a 1 MB file of 1 GiB of compressed zeros takes milliseconds and no memory.

>>> import numpy as np, tempfile, os
>>> block = model_block(np.zeros((N_FEATURES, 4)), np.zeros(4), np.zeros((4, 2)), np.zeros(2),
...                     np.zeros(2), 0.5, np.zeros(16))
>>> path = os.path.join(tempfile.mkdtemp(), "m.npz")
>>> with open(path, "wb") as f:
...     _ = f.write(model_bytes(block, {"rules": {}, "training": {}}))
>>> load_model(path).hidden
(4, 2)
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import io
import json
import os
import threading
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any, Callable, Generic, TypeVar

import numpy as np

from simkit.archive import npz_bytes
from simkit.errors import RuleError, SimkitError, loads_json
from simkit.policies.learned import (
    FEATURE_NAMES,
    FEATURE_SCALE,
    FEATURES,
    H_EXPERT,
    H_MAGIC,
    H_MARGIN,
    H_NET,
    H_SIZE,
    LAYOUT_VERSION,
    MAX_HIDDEN,
    MODEL_MAGIC,
    N_EXPERT_WEIGHTS,
    N_FEATURES,
    block_size,
)
from simkit.policies.network import (
    LEGACY_LEARNED_MAGIC,
    NetworkError,
    checked_block,
    legacy_learned_parts,
    network_widths,
    pack_network,
)
from simkit.rules import RuleSet

MODEL_FORMAT = "simkit-learned-model"
LEGACY_LAYOUT_VERSION = 2  # the block of before simkit.policies.network: read, converted at load, never written
BUILTIN_MODEL = Path(__file__).parent / "models" / "learned.npz"  # the shipped model of ``learned``
BLOCK_MEMBER, META_MEMBER = MEMBERS = ("block.npy", "meta.npy")  # an .npz's members: exactly these
MAX_META_BYTES = 1 << 20  # the most bytes of metadata (a model's is a few KB: format, features, rules, training)
MAX_NPY_HEADER = 10_000  # the longest .npy header read (numpy's own default bound)
NPY_PREAMBLE = 12  # an .npy member's magic, version and header length (version 2.0: 6 + 2 + 4 bytes)
# general-purpose flag bits of a zip member that zipfile cannot read without a password or at all
# (it raises RuntimeError / NotImplementedError): refused by name before any member is opened
ZIP_UNREADABLE_FLAGS = ((0x1, "encrypted"), (0x20, "compressed patched data"), (0x40, "strongly encrypted"))
ZIP_SLACK = 1 << 17  # room for the zip's own records and a deflated member's growth (a few hundred bytes in practice)


M = TypeVar("M")  # the model a ModelCache holds (LoadedModel, or a value model)


class ModelError(SimkitError):
    """A model file that is missing, unreadable, truncated, foreign or of another layout."""


def _npy_bytes(data_bytes: int) -> int:
    """The most bytes an ``.npy`` member holding ``data_bytes`` of data may declare: its magic,
    version, header length and header (:data:`MAX_NPY_HEADER` at most), then the data."""
    return NPY_PREAMBLE + MAX_NPY_HEADER + data_bytes


@dataclasses.dataclass(frozen=True)
class ModelLayout:
    """What a model file of one kind may hold: its ``format`` (the metadata's), its block's
    largest legal size in floats and the ``layout_version`` values of its metadata this simkit
    reads (None: the field absent), checked with the metadata, before the block is read.  Every
    other bound follows: a member's declared size, the file's size (the members at their
    largest, stored, plus the zip's own records)."""

    fmt: str
    max_block: int
    versions: tuple[int | None, ...]

    def versions_text(self) -> str:
        """The layout versions read, in words (for a message)."""
        known = [str(v) for v in self.versions if v is not None]
        absent = "no layout_version field" if None in self.versions else ""
        return " or ".join([*([f"layout version {' or '.join(known)}"] if known else []), *([absent] if absent else [])])

    def member_limits(self) -> dict[str, int]:
        """The most bytes each member (``block.npy``, ``meta.npy``) may declare."""
        return {BLOCK_MEMBER: _npy_bytes(8 * self.max_block), META_MEMBER: _npy_bytes(MAX_META_BYTES)}

    @property
    def max_file_bytes(self) -> int:
        """The largest model file of this kind."""
        return sum(self.member_limits().values()) + ZIP_SLACK


LEARNED_LAYOUT = ModelLayout(MODEL_FORMAT, block_size(N_FEATURES, MAX_HIDDEN, MAX_HIDDEN),
                             (LEGACY_LAYOUT_VERSION, LAYOUT_VERSION))  # a learned model's
MAX_MODEL_BYTES = LEARNED_LAYOUT.max_file_bytes  # a larger file is not a model of this layout


@dataclasses.dataclass(frozen=True)
class LoadedModel:
    """A checked model file: its block, metadata, SHA-256 and path."""

    path: str
    block: np.ndarray
    meta: dict
    digest: str

    @property
    def hidden(self) -> tuple[int, ...]:
        return network_widths(self.block[H_NET:])

    @property
    def margin(self) -> float:
        return float(self.block[H_MARGIN])

    @property
    def rules(self) -> dict:
        """The rule options the model was trained for (by name)."""
        return dict(self.meta.get("rules", {}))


def model_block(w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray, w3: np.ndarray, b3: float,
                expert_weights: np.ndarray, margin: float = 0.0, scaled: bool = True) -> np.ndarray:
    """The block of a network ``features → H1 → H2 → 1`` (ReLU) fitted on scaled features
    (``x × FEATURE_SCALE``): w1 (F, H1), b1 (H1), w2 (H1, H2), b2 (H2), w3 (H2), b3.  The
    scale is folded into w1 (``scaled``), so that the kernel reads raw feature values.
    ``margin``: the policy leaves expert's choice only for an action valued more than
    ``margin`` above it."""
    w1 = np.asarray(w1, dtype=np.float64)
    n_features, h1 = w1.shape
    w2 = np.asarray(w2, dtype=np.float64).reshape(h1, -1)
    h2 = w2.shape[1]
    if n_features != N_FEATURES:
        raise ModelError(f"a model's first layer must take {N_FEATURES} features, got {n_features}")
    if not 1 <= h1 <= MAX_HIDDEN or not 1 <= h2 <= MAX_HIDDEN:
        raise ModelError(f"hidden layers must be 1..{MAX_HIDDEN} wide, got {h1} and {h2}")
    if scaled:
        w1 = w1 * FEATURE_SCALE[:, None]
    try:
        net = pack_network([w1, w2, w3], [b1, b2, float(b3)])
    except NetworkError as exc:
        raise ModelError(str(exc)) from None
    block = learned_block(net, margin, expert_weights)
    assert block.size == block_size(n_features, h1, h2)
    return block


def learned_block(net: np.ndarray, margin: float, expert_weights: np.ndarray) -> np.ndarray:
    """The model block of the network block ``net`` (:func:`simkit.policies.network.pack_network`),
    the ``margin`` and expert's weights of the feature ``F_EXPERT``."""
    header = np.zeros(H_SIZE, dtype=np.float64)
    header[H_MAGIC] = MODEL_MAGIC
    header[H_MARGIN] = float(margin)
    header[H_EXPERT : H_EXPERT + N_EXPERT_WEIGHTS] = np.asarray(expert_weights, dtype=np.float64)
    return np.concatenate([header, np.asarray(net, dtype=np.float64)])


def model_bytes(block: np.ndarray, meta: dict[str, Any]) -> bytes:
    """The bytes of a model file holding ``block`` and ``meta`` (format fields added): a
    function of its arguments only (JSON with sorted keys, zip members of a fixed date), so
    ``meta`` must hold what the training's settings, seed and software give, never a path, time
    or machine (those belong in the run record, ``metrics.json``)."""
    meta = {"format": MODEL_FORMAT, "layout_version": LAYOUT_VERSION, "features": list(FEATURE_NAMES),
            "feature_regions": [[name, size] for name, _, size in FEATURES.table],
            "hidden": list(network_widths(block[H_NET:])), **meta}
    return npz_bytes({"block": np.asarray(block, dtype=np.float64), "meta": np.array(json.dumps(meta, sort_keys=True))})


def _refuse(path: str, problem: str) -> ModelError:
    return ModelError(f"model file {path}: {problem}")


def _read(path: str, limit: int) -> bytes:
    """The bytes of the model file ``path``, refused unread when larger than ``limit``."""
    try:
        size = os.path.getsize(path)
        if not os.path.isfile(path):
            raise _refuse(path, "is not a regular file")
        if size > limit:
            raise _refuse(path, f"is {size} bytes, larger than any model of its kind ({limit} at most)")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise _refuse(path, "does not exist") from None
    except IsADirectoryError:
        raise _refuse(path, "is a folder, not a model file") from None
    except OSError as exc:
        raise _refuse(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:  # it grew after the size was taken
        raise _refuse(path, f"is more than {limit} bytes, larger than any model of its kind")
    return data


def _members(path: str, archive: zipfile.ZipFile, layout: ModelLayout) -> dict[str, zipfile.ZipInfo]:
    """The archive's two members, checked before any is read: exactly ``block`` and ``meta``,
    stored or deflated, neither encrypted nor patched (:data:`ZIP_UNREADABLE_FLAGS`), each declaring no more bytes than its layout allows."""
    names = archive.namelist()
    if sorted(names) != sorted(MEMBERS):
        shown = ", ".join(_short(n.removesuffix(".npy")) for n in names[:8]) + (", ..." if len(names) > 8 else "")
        raise _refuse(path, f"is not a simkit model (an .npz of {len(names)} members ({shown}), not exactly "
                            "'block' and 'meta')")
    infos = {info.filename: info for info in archive.infolist()}
    for name, limit in layout.member_limits().items():
        info = infos[name]
        for bit, what in ZIP_UNREADABLE_FLAGS:
            if info.flag_bits & bit:
                raise _refuse(path, f"its member {name} is {what} (zip flag bit 0x{bit:x}; not a simkit model)")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _refuse(path, f"its member {name} is compressed by method {info.compress_type}; an .npz is "
                                "stored or deflated (not a simkit model)")
        if info.file_size > limit:
            raise _refuse(path, f"its member {name} declares {info.file_size} bytes, more than a {layout.fmt} "
                                f"holds ({limit} at most)")
    return infos


def _npy_header(stream: IO[bytes]) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape, dtype, header bytes) of the ``.npy`` array ``stream`` starts with (read from the
    stream: nothing of its data); a ``ValueError`` when it is no ``.npy`` header."""
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream, max_header_size=MAX_NPY_HEADER)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream, max_header_size=MAX_NPY_HEADER)
    else:
        raise ValueError(f"an .npy header of version {version[0]}.{version[1]}, not 1.0 or 2.0")
    return shape, dtype, stream.tell()


def _member_array(path: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, what: str,
                  problem: Callable[[tuple[int, ...], np.dtype], str | None]) -> np.ndarray:
    """The array of member ``info``: its ``.npy`` header is read and checked (``problem(shape,
    dtype)``: what is wrong, None when it fits) before its data, of which at most the bytes the
    header declares are read (the header and the member's declared size must agree)."""
    with archive.open(info) as stream:
        shape, dtype, header = _npy_header(stream)
        wrong = "it holds Python objects" if dtype.hasobject or dtype.subdtype is not None else problem(shape, dtype)
        if wrong:
            raise _refuse(path, f"its {what} is {wrong} (not a simkit model, or damaged)")
        size = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if header + size != info.file_size:
            raise _refuse(path, f"its {what} declares {info.file_size - header} bytes of data, its .npy header "
                                f"{size} (damaged)")
        data = stream.read(size)
    if len(data) != size:
        raise EOFError(f"{what}: {len(data)} of {size} bytes")
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def _parse(path: str, data: bytes, layout: ModelLayout) -> tuple[np.ndarray, dict]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = _members(path, archive, layout)
            meta_text = str(_member_array(path, archive, infos[META_MEMBER], "metadata", _text_problem)[()])
            meta = _metadata(path, meta_text, layout)
            block = _member_array(path, archive, infos[BLOCK_MEMBER], "block",
                                  functools.partial(_block_problem, layout=layout)).copy()
    except ModelError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError, KeyError, TypeError, SyntaxError,
            RecursionError, MemoryError) as exc:  # MemoryError, RecursionError: the parser of a hostile .npy header
        text = " ".join(str(exc).split())[:200]
        raise _refuse(path, f"is not a simkit model or is truncated ({type(exc).__name__}: {text})") from None
    return block, meta


def _text_problem(shape: tuple[int, ...], dtype: np.dtype) -> str | None:
    """What keeps an ``.npy`` header from being metadata's: one text, :data:`MAX_META_BYTES` at most."""
    if shape != () or dtype.kind != "U":
        return f"{dtype.str} of shape {_shape_text(shape)}, not one text"
    if dtype.itemsize > MAX_META_BYTES:
        return f"a text of {dtype.itemsize} bytes, more than {MAX_META_BYTES}"
    return None


def _block_problem(shape: tuple[int, ...], dtype: np.dtype, layout: ModelLayout) -> str | None:
    """What keeps an ``.npy`` header from being a block of ``layout``: a float64 vector of
    1..``layout.max_block`` numbers."""
    if dtype != np.float64 or len(shape) != 1:
        return f"{dtype.str} of shape {_shape_text(shape)}, not a vector of float64 numbers"
    if not 1 <= shape[0] <= layout.max_block:
        return f"{shape[0]} numbers by its .npy header: a {layout.fmt} holds 1..{layout.max_block}"
    return None


def _shape_text(shape: tuple[int, ...]) -> str:
    """A declared shape in a message (a hostile header may declare thousands of dimensions)."""
    return str(shape) if len(shape) <= 4 else f"({len(shape)} dimensions)"


def _metadata(path: str, text: str, layout: ModelLayout) -> dict:
    """The metadata of a model file of ``layout``: a JSON object of its format and of a layout
    version it reads (checked here, before the block is read), whose ``rules`` (if any) are rule
    options this simkit knows."""
    fmt = layout.fmt
    try:
        meta = loads_json(text)
    except json.JSONDecodeError as exc:
        raise _refuse(path, f"its metadata is not JSON ({exc.msg}: not a simkit model, or damaged)") from None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise _refuse(path, f"is not a {fmt} file (format {_short(found)})")
    version = meta.get("layout_version")
    if not (version is None or type(version) is int) or version not in layout.versions:  # no 3.0, no true
        claim = "no layout_version" if version is None else f"layout version {_short(version)}"
        raise _refuse(path, f"its metadata claim {claim}; this simkit reads {fmt} files of {layout.versions_text()} "
                            "(made by another simkit, or damaged)")
    try:
        RuleSet.from_dict(meta.get("rules", {}))
    except RuleError as exc:
        raise _refuse(path, f"its metadata's rules are not this simkit's rule options ({exc})") from None
    return meta


def _short(value: Any) -> str:
    """A value of a file in a message: a text or number as ``repr`` (80 characters at most),
    anything else by its type (its ``repr`` may be as large, or as deep, as the file)."""
    if not isinstance(value, (str, int, float, type(None))):
        return f"a JSON {type(value).__name__}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def read_model_file(path: str | os.PathLike, layout: ModelLayout) -> tuple[np.ndarray, dict, str]:
    """(block, metadata, SHA-256) of an ``.npz`` model file of ``layout`` (its block's contents
    unchecked); a one-line :class:`ModelError` naming the file when it is missing, unreadable,
    truncated, foreign, larger than the layout allows (the file, a member's declared size, its
    ``.npy`` header: each checked before anything past it is read) or of unknown rules."""
    text = os.fspath(path)
    data = _read(text, layout.max_file_bytes)
    block, meta = _parse(text, data, layout)
    return block, meta, hashlib.sha256(data).hexdigest()


def _from_legacy(block: np.ndarray) -> np.ndarray:
    """The current block of a block of layout version 2 (:data:`LEGACY_LAYOUT_VERSION`)."""
    margin, expert, net = legacy_learned_parts(block, N_FEATURES)
    return learned_block(net, margin, expert)


def _check(path: str, block: np.ndarray, meta: dict) -> np.ndarray:
    """The checked block of a model file (one of :data:`LEGACY_LAYOUT_VERSION` converted to
    the current layout); a one-line :class:`ModelError` when it is not one."""
    version = meta.get("layout_version")
    features = meta.get("features")
    if version not in (LEGACY_LAYOUT_VERSION, LAYOUT_VERSION) or features != list(FEATURE_NAMES):
        n = len(features) if isinstance(features, list) else "?"
        raise _refuse(path, f"was trained for another feature layout (version {_short(version)}, {n} feature groups; "
                            f"this simkit reads versions {LEGACY_LAYOUT_VERSION} and {LAYOUT_VERSION}, "
                            f"{len(FEATURE_NAMES)}): train it again with `simkit train`")
    first = block[0] if block.ndim == 1 and block.size > 0 else None
    of_block = {LEGACY_LEARNED_MAGIC: LEGACY_LAYOUT_VERSION, MODEL_MAGIC: LAYOUT_VERSION}.get(first)
    if of_block is not None and of_block != version:  # another magic number: checked_block names it
        raise _refuse(path, f"its metadata claim layout version {version}, its block is of layout version "
                            f"{of_block} (damaged?)")
    try:
        block = checked_block(block, H_SIZE, MODEL_MAGIC, N_FEATURES, (2,), LEGACY_LEARNED_MAGIC, _from_legacy)
    except NetworkError as exc:
        raise _refuse(path, str(exc)) from None
    if block[H_MARGIN] < 0:
        raise _refuse(path, f"its margin {block[H_MARGIN]:g} is negative (damaged?)")
    return block


class ModelCache(Generic[M]):
    """The checked models of one kind's files, cached by (resolved path, SHA-256 of the file's
    bytes): every load reads the file (bounded by ``layout``) and hashes it, and only a file
    whose bytes were checked before skips the parsing and the checks.  A file rewritten in
    place is read anew whatever its size and modification time (a key of path, mtime and size
    served the old weights of a file rewritten at the same size within the clock's tick, or
    with its time set back).  ``check(path, block, meta, digest)`` makes the model of a parsed
    file (a dataclass with a ``path`` field: a hit under another name of the same file comes
    back under the name asked for); the ``maxsize`` models used last are kept."""

    def __init__(self, layout: ModelLayout, check: Callable[[str, np.ndarray, dict, str], M], maxsize: int) -> None:
        self.layout, self._check, self.maxsize = layout, check, maxsize
        self._models: collections.OrderedDict[tuple[str, str], M] = collections.OrderedDict()
        self._lock = threading.Lock()

    def load(self, path: str | os.PathLike) -> M:
        """The checked model of the file ``path`` (a one-line :class:`ModelError` naming it)."""
        text = os.fspath(path)
        data = _read(text, self.layout.max_file_bytes)
        digest = hashlib.sha256(data).hexdigest()
        key = (os.path.realpath(text), digest)
        with self._lock:
            model = self._models.get(key)
            if model is not None:
                self._models.move_to_end(key)
        if model is None:
            block, meta = _parse(text, data, self.layout)
            model = self._check(text, block, meta, digest)
            with self._lock:
                self._models[key] = model
                while len(self._models) > self.maxsize:
                    self._models.popitem(last=False)
        return model if model.path == text else dataclasses.replace(model, path=text)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


def _checked_model(path: str, block: np.ndarray, meta: dict, digest: str) -> LoadedModel:
    block = _check(path, block, meta)
    block.setflags(write=False)
    return LoadedModel(path, block, meta, digest)


MODELS = ModelCache(LEARNED_LAYOUT, _checked_model, maxsize=16)  # load_model's


def load_model(path: str | os.PathLike) -> LoadedModel:
    """The checked model of file ``path`` (cached by its resolved path and its bytes' SHA-256,
    :class:`ModelCache`); a one-line :class:`ModelError` naming the file when it is missing,
    unreadable, truncated, foreign or of another layout."""
    return MODELS.load(path)


def _option_text(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def rules_difference(trained: dict, played: dict) -> list[str]:
    """The rule options (``name=value``, as ``--rule`` writes them) where ``played`` differs
    from ``trained`` (an option ``trained`` lacks counts as different).

    >>> rules_difference({"must_kong": True, "hu_tolerance": 1}, {"must_kong": False, "hu_tolerance": 1})
    ['must_kong=off']
    """
    return [f"{k}={_option_text(played[k])}" for k in sorted(played) if k not in trained or trained[k] != played[k]]


