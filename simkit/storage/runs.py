"""Runs and their folders: the one rule for an output folder, and the one identity check.

Every command that writes a folder is a *run kind* of :data:`RUN_KINDS`: its name in words
and the file (or folder) whose presence marks a folder as one it wrote (the *marker*, its
identity file where it has one).  The rule for every output folder, from the command line or
the library alike (:func:`check_run_folder`):

* usable: not empty, not a file, in a folder this process may write to
  (:func:`~simkit.storage.paths.check_out_dir`);
* outside every simkit dataset whose Parquet readers would read its files
  (:func:`~simkit.storage.paths.check_outside_datasets`; a dataset's own folder may be itself
  the dataset it resumes);
* new, empty, or marked as this kind's own (:func:`~simkit.storage.paths.check_new_or_own`):
  never a folder of a user's files.  In a dataset's folder, names Parquet readers skip (``_…``,
  ``.…``) do not count, nor batch files (a folder of this run's batches without its manifest is
  adopted once each batch's metadata names the run).

A run that resumes compares what defines it (its identity: seed, deals, rules, policies, ...)
with the identity its folder holds, and refuses another run's folder in one line naming the
first differing field (:func:`check_run_identity`).

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp()) / "cmp"
>>> check_run_folder(folder, "comparison").name
'cmp'
>>> folder.mkdir(); check_run_identity(folder, "tune", {"seed": 1})
>>> check_run_identity(folder, "tune", {"seed": 2})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.storage.dataset.DatasetError: ... holds another tuning: its seed is 1, this run's is 2 (use another folder for out)
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simkit.storage.dataset import BATCH_NAME, LEGACY_MANIFEST, MANIFEST, DatasetError
from simkit.storage.files import FileError, stored_identity
from simkit.storage.hands import HANDS_MANIFEST
from simkit.storage.paths import check_new_or_own, check_out_dir, check_outside_datasets

# the marker of each kind: one name per file, defined here only
COMPARISON_FILE = "comparison.json"
TOURNAMENT_FILE = "tournament.json"
TUNE_FILE = "tune.json"
TRAIN_FILE = "train.json"
REVIEW_FILE = "review.json"  # the review as JSON: marks a folder a review wrote
REVIEWS_FILE = "reviews.json"  # the index of a review of several logs (one review folder each)
CALIBRATION_FILE = "calibration.json"
REPORT_MARKER = "report.json"  # written first into a folder a report writes
EXPERIMENT_FILE = "experiment.json"  # written first into an experiment's --out folder
EQUITY_FOLDER = "equity"  # an equity study's dataset of equity deals, inside its folder


@dataclasses.dataclass(frozen=True)
class RunKind:
    """A kind of run that writes a folder.

    ``what``: the kind in words, with its article ("a comparison"); ``marker``: the file or
    folder that marks a folder as this kind's own; ``dataset``: the folder is a dataset itself
    (Parquet batches and ``_manifest.json``), so it may be its own dataset but not lie inside
    another; ``older_markers``: the markers of older versions' folders, still resumed in place."""

    what: str
    marker: str
    dataset: bool = False
    older_markers: tuple[str, ...] = ()  # what marked the kind's folders in older versions, still its own

    @property
    def noun(self) -> str:
        """The kind without its article ("comparison")."""
        return self.what.split(" ", 1)[1]


RUN_KINDS: Mapping[str, RunKind] = {
    "simulation": RunKind("a simulation", MANIFEST, dataset=True, older_markers=(LEGACY_MANIFEST,)),
    "equity-deals": RunKind("an equity run", MANIFEST, dataset=True, older_markers=(LEGACY_MANIFEST,)),
    "hands": RunKind("a dealt-hands run", HANDS_MANIFEST),
    "comparison": RunKind("a comparison", COMPARISON_FILE),
    "tournament": RunKind("a tournament", TOURNAMENT_FILE),
    "tune": RunKind("a tuning", TUNE_FILE),
    "train": RunKind("a training run", TRAIN_FILE),
    "review": RunKind("a review", REVIEW_FILE),
    "reviews": RunKind("a review of several logs", REVIEWS_FILE),
    "calibration": RunKind("a calibration", CALIBRATION_FILE),
    "report": RunKind("a report", REPORT_MARKER),
    "experiment": RunKind("an experiment", EXPERIMENT_FILE),
    "equity": RunKind("an equity study", EQUITY_FOLDER),
}


def run_kind(kind: str) -> RunKind:
    """The :class:`RunKind` named ``kind`` (a programming error otherwise)."""
    try:
        return RUN_KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown run kind {kind!r} (known: {', '.join(RUN_KINDS)})") from None


def check_run_folder(path: str | os.PathLike, kind: str, option: str = "out", finished_readable: bool = False) -> Path:
    """``path`` as a Path once it may hold a run of ``kind``: usable, outside every dataset
    (above it, for a dataset kind) and new, empty or this kind's own (module docstring).
    Creates nothing; a one-line :class:`~simkit.errors.SimkitError` naming ``option`` otherwise.
    ``finished_readable``: a folder of this kind where nothing can be written (read-only media)
    passes too: a resumable run then finds it complete, with nothing to write, or says in one
    line that it cannot write what is missing.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "notes.txt").write_text("mine")
    >>> check_run_folder(folder, "tournament", "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    simkit.errors.SimkitError: --out ... holds notes.txt and no tournament.json: a tournament writes only into a new or empty folder or one it wrote; choose another folder
    """
    spec = run_kind(kind)
    if finished_readable and os.fspath(path) and os.path.isdir(path) and not os.access(path, os.W_OK | os.X_OK) \
            and any(os.path.lexists(Path(path) / m) for m in (spec.marker, *spec.older_markers)):
        return check_outside_datasets(path, option, itself=not spec.dataset)
    out = check_out_dir(path, option)
    check_outside_datasets(out, option, itself=not spec.dataset)
    if any(os.path.lexists(out / marker) for marker in spec.older_markers):
        return out
    if spec.dataset:  # Parquet readers skip "_" and "." names; batch files are verified when adopted
        return check_new_or_own(out, spec.marker, spec.what, option, ignored=("_", "."), also_own=BATCH_NAME)
    return check_new_or_own(out, spec.marker, spec.what, option)


def identity_mismatch(folder: Path, kind: str, stored: Mapping[str, Any], identity: Mapping[str, Any],
                      option: str = "out") -> str | None:
    """The one-line refusal of a folder whose stored identity is not ``identity`` (its first
    differing field, in ``identity``'s order, then the stored file's), or None when they agree."""
    keys = [*identity, *(k for k in stored if k not in identity)]
    for key in keys:
        if stored.get(key) != identity.get(key):
            return (f"{folder} holds another {run_kind(kind).noun}: its {key} is {stored.get(key)!r}, this run's is "
                    f"{identity.get(key)!r} (use another folder for {option})")
    return None


def check_run_identity(folder: Path, kind: str, identity: Mapping[str, Any],
                       recorded: Mapping[str, Any] | None = None, option: str = "out",
                       stored: Mapping[str, Any] | None = None, implied: Mapping[str, Any] | None = None) -> None:
    """Write ``identity`` to the kind's identity file in ``folder`` (with its digest) if there
    is none; otherwise refuse, in one line naming the first differing field, a folder that holds
    another run of ``kind``.  ``recorded``: fields written with a new identity but not compared
    (what the identity implies, such as parameters by name; older files lack them).
    ``implied``: compared fields added to the identity later, with the value a file written
    before them implied (a comparison's ``design``: ``six``); such a file is read, not rewritten.
    ``stored``: the identity already read (a folder that cannot be written is checked, not
    written).  An identity file that is unreadable or edited is a one-line error naming it."""
    recorded = dict(recorded or {})
    if stored is None:
        try:
            stored = stored_identity(folder / run_kind(kind).marker, {**identity, **recorded},
                                     f"{run_kind(kind).what}'s identity")
        except FileError as exc:
            raise DatasetError(str(exc), parameters=(option,) if option.isidentifier() else ()) from None
        if stored is None:
            return
    compared = {**dict(implied or {}), **{k: v for k, v in stored.items() if k not in recorded}}
    problem = identity_mismatch(folder, kind, compared, identity, option)
    if problem is not None:
        raise DatasetError(problem, parameters=(option,) if option.isidentifier() else ())
