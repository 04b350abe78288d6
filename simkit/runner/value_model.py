"""Value-model files of the luck adjustment (:mod:`simkit.runner.luck`): what they hold, how
they are checked, and the rule that keeps an evaluation honest.

A value model is fixed before the evaluation that uses it.  A model fitted on the deals it
then adjusts can make the variance look arbitrarily small, so every model records the seeds
of its training deals and :func:`check_evaluation_seed` refuses an evaluation on one of them.

The name ``playouts:K`` (``playouts`` alone: K = :data:`DEFAULT_PLAYOUTS`) is the value model
of K play-outs by the policies at the table (:mod:`simkit.runner.playout_value`): nothing
trained, no seeds to refuse.

A value-model file is a NumPy ``.npz`` archive (no pickled objects), like a ``learned`` model
(:mod:`simkit.policies.model`): ``block`` (float64, the value block of :mod:`simkit.runner.luck`:
its header, then a network block of :mod:`simkit.policies.network`) and ``meta`` (JSON: ``format`` :data:`VALUE_FORMAT`, ``features`` (the feature names, which
must be this simkit's), ``hidden``, ``rules``, ``training``: seeds, deals, check deals, the
policy pairs (a ``learned:PATH`` by its model's SHA-256, not its path), network, rows, fit,
weight, library versions).  The file is a function of its settings, seed and software only
(its SHA-256 is its identity, :attr:`ValueModel.digest`): no path, no time, no machine, in a zip
of fixed dates (:func:`simkit.archive.npz_bytes`), so the same settings and seed give the same
bytes in any folder.  ``simkit luck-model`` writes where, when and how it ran (the file's path
and SHA-256, the command line, the pairs as given, seconds, hardware, time) to the run record
beside it, ``FILE.npz.run.json`` (:func:`run_record_path`), which nothing reads back.
(The shipped ``value.npz`` predates this: its ``training`` still holds its ``wall_s``.)
It is read as a learned model is, with the same bounds derived from its layout
(:data:`VALUE_LAYOUT`: a hostile file is refused before anything large is read or decompressed).
A file of the first block layout (:data:`simkit.policies.network.LEGACY_VALUE_MAGIC`: the
shipped ``value.npz``) keeps its bytes and is converted at load
(:func:`simkit.policies.network.legacy_value_parts`): :attr:`ValueModel.block` is always of the
current layout.

>>> import os, tempfile
>>> from simkit.runner.luck import zero_value_block
>>> path = os.path.join(tempfile.mkdtemp(), "v.npz")
>>> write_value_model(path, zero_value_block(), {"seeds": [11], "deals": 0})
>>> model = load_value_model(path)
>>> model.training_seeds, model.hidden
((11,), 0)
>>> check_evaluation_seed(model, 12)
>>> load_value_model("playouts:16").describe()
'play-outs by the policies at the table (16 per card type at each draw)'
>>> check_evaluation_seed(model, 11)
Traceback (most recent call last):
    ...
simkit.runner.value_model.ValueModelError: value model ...v.npz: was trained on seed 11, the seed of this evaluation: a model fitted on the deals it adjusts is not a fixed control variate (train one on other seeds, or use another seed)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from simkit.archive import npz_bytes
from simkit.errors import SimkitError
from simkit.policies.model import ModelCache, ModelError, ModelLayout
from simkit.policies.network import (
    LEGACY_VALUE_MAGIC,
    NetworkError,
    checked_block,
    legacy_value_parts,
    network_widths,
)
from simkit.runner.playout_value import MAX_PLAYOUTS, PB_PLAYOUTS, PLAYOUT_MAGIC, playout_block
from simkit.storage.files import atomic_write_bytes
from simkit.runner.luck import (
    MAX_VALUE_HIDDEN,
    N_VALUE_FEATURES,
    SEAT_FEATURES,
    VALUE_MAGIC,
    VB_EXACT_WINS,
    VB_HEADER,
    VB_MAGIC,
    VB_NET,
    value_block_of,
    value_block_size,
)

VALUE_FORMAT = "simkit-value-model"
VALUE_FEATURE_NAMES: tuple[str, ...] = tuple(
    f"{seat}:{name}" for seat in ("self", "next", "after_next") for name, _, _ in SEAT_FEATURES.table) + ("stock",)
BUILTIN_VALUE_MODEL = Path(__file__).parent / "models" / "value.npz"  # the shipped value model
PLAYOUTS_NAME = "playouts"  # the name of play-out value models: playouts:K
DEFAULT_PLAYOUTS = 64  # K of ``playouts`` alone (docs/measurements.md: variance reduction against K)
RUN_RECORD_SUFFIX = ".run.json"  # a value model's run record: FILE.npz.run.json (paths, times, machine)
# a file's bounds; a value model's metadata hold no layout_version (its block's magic number names
# its layout): one that claims any is of another simkit, refused before its block is read
VALUE_LAYOUT = ModelLayout(VALUE_FORMAT, value_block_size(N_VALUE_FEATURES, MAX_VALUE_HIDDEN), (None,))


class ValueModelError(SimkitError):
    """A value-model file that is missing, damaged, foreign or of another layout, or one that
    may not adjust this evaluation."""


@dataclasses.dataclass(frozen=True)
class ValueModel:
    """A checked value model: its block, metadata, SHA-256 and path."""

    path: str
    block: np.ndarray = dataclasses.field(repr=False)
    meta: dict = dataclasses.field(repr=False)
    digest: str

    @property
    def is_playouts(self) -> bool:
        """Is this play-out values (:mod:`simkit.runner.playout_value`), not a network?"""
        return bool(self.block[VB_MAGIC] == PLAYOUT_MAGIC)

    @property
    def hidden(self) -> int:
        return 0 if self.is_playouts else _hidden(self.block)

    @property
    def training_seeds(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self.meta.get("training", {}).get("seeds", []))

    @property
    def rules(self) -> dict:
        return dict(self.meta.get("rules", {}))

    def describe(self) -> str:
        """One line: the file (``shipped`` for :data:`BUILTIN_VALUE_MODEL`), its digest, and what
        it was trained on."""
        if self.is_playouts:
            return f"play-outs by the policies at the table ({int(self.block[PB_PLAYOUTS])} per card type at each draw)"
        seeds = ", ".join(str(s) for s in self.training_seeds) or "none"
        shipped = os.path.abspath(self.path) == os.path.abspath(BUILTIN_VALUE_MODEL)
        name = f"shipped ({BUILTIN_VALUE_MODEL.name})" if shipped else self.path
        return f"{name} (sha256:{self.digest[:12]}, trained on seed(s) {seeds})"


def _hidden(block: np.ndarray) -> int:
    """The hidden width of a value block's network (0: the zero network)."""
    return (network_widths(block[VB_NET:]) or (0,))[0]


def value_model_bytes(block: np.ndarray, training: dict[str, Any], rules: dict | None = None) -> bytes:
    """The bytes of a value-model file holding ``block``, ``training`` (what the settings, seed
    and software give: never a path, time or machine, which belong in the run record) and
    ``rules``: a function of its arguments only (keys sorted, zip members of a fixed date)."""
    meta = {"format": VALUE_FORMAT, "features": list(VALUE_FEATURE_NAMES), "hidden": _hidden(block),
            "rules": rules or {}, "training": training}
    return npz_bytes({"block": np.asarray(block, dtype=np.float64), "meta": np.array(json.dumps(meta, sort_keys=True))})


def write_value_model(path: str | os.PathLike, block: np.ndarray, training: dict[str, Any],
                      rules: dict | None = None) -> None:
    """Write a value-model file (through a temporary file: an existing file is replaced whole)."""
    atomic_write_bytes(path, value_model_bytes(block, training, rules))


def run_record_path(path: str | os.PathLike) -> Path:
    """The run record of the value-model file ``path`` (``FILE.npz.run.json`` beside it): where,
    when and how the file was made (``simkit luck-model``), which the file itself never holds.

    >>> run_record_path("models/v.npz").as_posix()
    'models/v.npz.run.json'
    """
    target = Path(path)
    return target.with_name(target.name + RUN_RECORD_SUFFIX)


def _refuse(path: str, problem: str) -> ValueModelError:
    return ValueModelError(f"value model {path}: {problem}")


def _from_legacy(block: np.ndarray) -> np.ndarray:
    """The current block of a block of the first layout (the shipped ``value.npz``'s)."""
    exact_wins, weight, net = legacy_value_parts(block, N_VALUE_FEATURES)
    return value_block_of(net, exact_wins, weight)


def _check(path: str, block: np.ndarray, meta: dict) -> np.ndarray:
    """The checked block of a value-model file (one of the first layout converted to the
    current one); a one-line :class:`ValueModelError` when it is not one."""
    if meta.get("features") != list(VALUE_FEATURE_NAMES):
        raise _refuse(path, "was made for another feature layout: train it again with `simkit luck-model`")
    try:
        block = checked_block(block, VB_HEADER, VALUE_MAGIC, N_VALUE_FEATURES, (0, 1), LEGACY_VALUE_MAGIC, _from_legacy)
    except NetworkError as exc:
        raise _refuse(path, str(exc)) from None
    if block[VB_EXACT_WINS] not in (0.0, 1.0):
        raise _refuse(path, "its exact-wins flag is neither 0 nor 1 (damaged?)")
    seeds = meta.get("training", {}).get("seeds") if isinstance(meta.get("training"), dict) else None
    if not isinstance(seeds, list) or not all(isinstance(s, int) for s in seeds):
        raise _refuse(path, "does not record the seeds of its training deals")
    return block


def _checked_model(path: str, block: np.ndarray, meta: dict, digest: str) -> ValueModel:
    block = _check(path, block, meta)
    block.setflags(write=False)
    return ValueModel(path, block, meta, digest)


VALUE_MODELS = ModelCache(VALUE_LAYOUT, _checked_model, maxsize=8)  # load_value_model's


def playout_value_model(playouts: int = DEFAULT_PLAYOUTS) -> ValueModel:
    """The value model of ``playouts`` play-outs per candidate card by the table's policies."""
    try:
        block = playout_block(playouts)
    except ValueError as exc:
        raise _refuse(f"{PLAYOUTS_NAME}:{playouts}", str(exc)) from None
    block.setflags(write=False)
    digest = hashlib.sha256(b"simkit-playout-values:" + block.tobytes()).hexdigest()
    meta = {"format": VALUE_FORMAT, "kind": PLAYOUTS_NAME, "playouts": int(playouts), "training": {"seeds": []}}
    return ValueModel(f"{PLAYOUTS_NAME}:{int(playouts)}", block, meta, digest)


def _playouts_named(name: str) -> ValueModel | None:
    """The play-out model the name ``playouts[:K]`` asks for; None for other names."""
    if name == PLAYOUTS_NAME:
        return playout_value_model()
    if not name.startswith(PLAYOUTS_NAME + ":"):
        return None
    count = name[len(PLAYOUTS_NAME) + 1 :]
    if not count.isdigit():
        raise _refuse(name, f"K of playouts:K must be an integer in 1..{MAX_PLAYOUTS}, got {count!r}")
    return playout_value_model(int(count))


def load_value_model(path: str | os.PathLike | None = None) -> ValueModel:
    """The checked value model of file ``path`` (default: the shipped one,
    :data:`BUILTIN_VALUE_MODEL`), or play-out values for the name ``playouts:K``; a one-line
    :class:`ValueModelError` naming the file when it is missing, unreadable, truncated, foreign
    or of another layout.  Cached as a learned model is (:class:`simkit.policies.model.ModelCache`:
    by resolved path and the SHA-256 of the file's bytes)."""
    if isinstance(path, str) and (model := _playouts_named(path)) is not None:
        return model
    try:
        return VALUE_MODELS.load(BUILTIN_VALUE_MODEL if path is None else path)
    except ModelError as exc:
        raise ValueModelError(str(exc).replace("model file ", "value model ", 1)) from None


def check_evaluation_seed(model: ValueModel, seed: int) -> None:
    """Refuse (:class:`ValueModelError`) to adjust an evaluation on seed ``seed`` with a model
    trained on that seed's deals."""
    if int(seed) in model.training_seeds:
        raise _refuse(model.path, f"was trained on seed {int(seed)}, the seed of this evaluation: a model fitted on "
                                  "the deals it adjusts is not a fixed control variate (train one on other seeds, "
                                  "or use another seed)")


def value_model_for(luck: "bool | str | os.PathLike | ValueModel | None", seed: int) -> ValueModel | None:
    """The value model an evaluation on ``seed`` asks for: None for ``luck`` None / False, the
    shipped one for True, a file's, play-out values (``playouts:K``) or the :class:`ValueModel`
    given; refused when it was trained
    on ``seed`` (:func:`check_evaluation_seed`)."""
    if luck is None or luck is False:
        return None
    model = luck if isinstance(luck, ValueModel) else load_value_model(None if luck is True else luck)
    check_evaluation_seed(model, seed)
    return model
