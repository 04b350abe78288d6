"""Model files of the ``learned`` policy: what they hold, how they are checked and loaded.

A model file is a NumPy ``.npz`` archive (no pickled objects) with two members:

* ``block``: ``float64``, the model block the kernel reads
  (:mod:`simkit.policies.learned`: a header, the expert weights of the feature ``F_EXPERT``,
  the layers' weights with each feature's scale folded into the first layer);
* ``meta``: one JSON text: ``format`` (:data:`MODEL_FORMAT`), ``layout_version`` and
  ``features`` (the feature names, which must be this simkit's), ``hidden`` (layer widths),
  ``rules`` (the rule options it was trained for) and ``training`` (command, seed,
  generations, deals, library and versions, wall time).

:func:`load_model` refuses, in one line naming the file, a missing or unreadable file, a
truncated or foreign one, and a model of another feature layout.  A model's identity is the
SHA-256 of its file (:attr:`LoadedModel.digest`), which datasets record.

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

import dataclasses
import functools
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from simkit.errors import SimkitError
from simkit.policies.learned import (
    FEATURE_NAMES,
    FEATURE_SCALE,
    FEATURES,
    H_EXPERT,
    H_FEATURES,
    H_HIDDEN1,
    H_HIDDEN2,
    H_MAGIC,
    H_MARGIN,
    H_SIZE,
    LAYOUT_VERSION,
    MAX_HIDDEN,
    MODEL_MAGIC,
    N_EXPERT_WEIGHTS,
    N_FEATURES,
    block_size,
)

MODEL_FORMAT = "simkit-learned-model"
BUILTIN_MODEL = Path(__file__).parent / "models" / "learned.npz"  # the shipped model of ``learned``
MAX_MODEL_BYTES = 64 << 20  # a larger file is not a model of this layout


class ModelError(SimkitError):
    """A model file that is missing, unreadable, truncated, foreign or of another layout."""


@dataclasses.dataclass(frozen=True)
class LoadedModel:
    """A checked model file: its block, metadata, SHA-256 and path."""

    path: str
    block: np.ndarray
    meta: dict
    digest: str

    @property
    def hidden(self) -> tuple[int, int]:
        return int(self.block[H_HIDDEN1]), int(self.block[H_HIDDEN2])

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
    header = np.zeros(H_SIZE, dtype=np.float64)
    header[H_MAGIC] = MODEL_MAGIC
    header[H_FEATURES] = n_features
    header[H_HIDDEN1] = h1
    header[H_HIDDEN2] = h2
    header[H_MARGIN] = float(margin)
    header[H_EXPERT : H_EXPERT + N_EXPERT_WEIGHTS] = np.asarray(expert_weights, dtype=np.float64)
    block = np.concatenate([header, w1.ravel(), np.ravel(b1), w2.ravel(), np.ravel(b2), np.ravel(w3),
                            np.array([float(b3)])]).astype(np.float64)
    assert block.size == block_size(n_features, h1, h2)
    return block


def model_bytes(block: np.ndarray, meta: dict[str, Any]) -> bytes:
    """The bytes of a model file holding ``block`` and ``meta`` (format fields added)."""
    meta = {"format": MODEL_FORMAT, "layout_version": LAYOUT_VERSION, "features": list(FEATURE_NAMES),
            "feature_regions": [[name, size] for name, _, size in FEATURES.table],
            "hidden": [int(block[H_HIDDEN1]), int(block[H_HIDDEN2])], **meta}
    buffer = io.BytesIO()
    np.savez(buffer, block=np.asarray(block, dtype=np.float64), meta=np.array(json.dumps(meta, sort_keys=True)))
    return buffer.getvalue()


def _refuse(path: str, problem: str) -> ModelError:
    return ModelError(f"model file {path}: {problem}")


def _read(path: str) -> bytes:
    try:
        size = os.path.getsize(path)
        if not os.path.isfile(path):
            raise _refuse(path, "is not a regular file")
        if size > MAX_MODEL_BYTES:
            raise _refuse(path, f"is {size} bytes, larger than any model ({MAX_MODEL_BYTES} at most)")
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise _refuse(path, "does not exist") from None
    except IsADirectoryError:
        raise _refuse(path, "is a folder, not a model file") from None
    except OSError as exc:
        raise _refuse(path, f"cannot be read ({exc.strerror or exc})") from None


def _parse(path: str, data: bytes, fmt: str = MODEL_FORMAT) -> tuple[np.ndarray, dict]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            names = set(archive.files)
            if not {"block", "meta"} <= names:
                raise _refuse(path, f"is not a simkit model (an .npz without 'block' and 'meta': {sorted(names)})")
            block = np.array(archive["block"])
            meta_text = str(archive["meta"][()])
    except ModelError:
        raise
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, KeyError) as exc:
        raise _refuse(path, f"is not a simkit model or is truncated ({type(exc).__name__}: {exc})") from None
    try:
        meta = json.loads(meta_text)
    except json.JSONDecodeError:
        raise _refuse(path, "its metadata is not JSON (not a simkit model, or damaged)") from None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise _refuse(path, f"is not a {fmt} file (format {found!r})")
    return block, meta


def read_model_file(path: str | os.PathLike, fmt: str) -> tuple[np.ndarray, dict, str]:
    """(block, metadata, SHA-256) of an ``.npz`` model file of format ``fmt`` (unchecked
    contents); a one-line :class:`ModelError` naming the file when it is missing, unreadable,
    truncated or foreign."""
    text = os.fspath(path)
    data = _read(text)
    block, meta = _parse(text, data, fmt)
    return block, meta, hashlib.sha256(data).hexdigest()


def _check(path: str, block: np.ndarray, meta: dict) -> None:
    version = meta.get("layout_version")
    features = meta.get("features")
    if version != LAYOUT_VERSION or features != list(FEATURE_NAMES):
        n = len(features) if isinstance(features, list) else "?"
        raise _refuse(path, f"was trained for another feature layout (version {version}, {n} feature groups; this "
                            f"simkit reads version {LAYOUT_VERSION}, {len(FEATURE_NAMES)}): train it again "
                            "with `simkit train`")
    if block.dtype != np.float64 or block.ndim != 1 or block.size < H_SIZE:
        raise _refuse(path, "its block is not a float64 vector with a header (damaged)")
    if block[H_MAGIC] != MODEL_MAGIC or int(block[H_FEATURES]) != N_FEATURES:
        raise _refuse(path, f"its block was made for another layout ({int(block[H_FEATURES])} features, this "
                            f"simkit has {N_FEATURES})")
    h1, h2 = block[H_HIDDEN1], block[H_HIDDEN2]
    if not (h1 == int(h1) and h2 == int(h2) and 1 <= h1 <= MAX_HIDDEN and 1 <= h2 <= MAX_HIDDEN):
        raise _refuse(path, f"hidden layers {h1:g} and {h2:g} wide: 1..{MAX_HIDDEN} only (damaged?)")
    expected = block_size(N_FEATURES, int(h1), int(h2))
    if block.size != expected:
        raise _refuse(path, f"its block holds {block.size} numbers, its header says {expected} (truncated?)")
    if not np.all(np.isfinite(block)):
        raise _refuse(path, "its weights hold NaN or infinite numbers")
    if block[H_MARGIN] < 0:
        raise _refuse(path, f"its margin {block[H_MARGIN]:g} is negative (damaged?)")


@functools.lru_cache(maxsize=16)
def _load_cached(path: str, mtime_ns: int, size: int) -> LoadedModel:
    block, meta, digest = read_model_file(path, MODEL_FORMAT)
    _check(path, block, meta)
    block.setflags(write=False)
    return LoadedModel(path, block, meta, digest)


def file_key(path: str | os.PathLike) -> tuple[str, int, int]:
    """(path, modification time in ns, size) of a model file: the key under which loaders cache
    it (a changed file is read again); a one-line :class:`ModelError` naming the file when it is
    missing or cannot be read."""
    text = os.fspath(path)
    try:
        stat = os.stat(text)
    except FileNotFoundError:
        raise _refuse(text, "does not exist") from None
    except OSError as exc:
        raise _refuse(text, f"cannot be read ({exc.strerror or exc})") from None
    return text, stat.st_mtime_ns, stat.st_size


def load_model(path: str | os.PathLike) -> LoadedModel:
    """The checked model of file ``path`` (cached while the file is unchanged); a one-line
    :class:`ModelError` naming the file when it is missing, unreadable, truncated, foreign or
    of another layout."""
    return _load_cached(*file_key(path))


def _option_text(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def rules_difference(trained: dict, played: dict) -> list[str]:
    """The rule options (``name=value``, as ``--rule`` writes them) where ``played`` differs
    from ``trained`` (an option ``trained`` lacks counts as different).

    >>> rules_difference({"must_kong": True, "hu_tolerance": 1}, {"must_kong": False, "hu_tolerance": 1})
    ['must_kong=off']
    """
    return [f"{k}={_option_text(played[k])}" for k in sorted(played) if k not in trained or trained[k] != played[k]]


