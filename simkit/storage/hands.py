"""A dealt-hands dataset on disk (``simkit prob --hands`` / ``simkit deals``): ``deals.parquet``
(zstd, one row per deal and seat: :func:`simkit.studies.dealt.deal_table`) and
``manifest.json`` (seed, deals, batch size, rules), each written atomically."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pandas as pd

import simkit
from simkit.rules import RuleSet
from simkit.storage.files import write_json, write_parquet

HANDS_FILE = "deals.parquet"
HANDS_MANIFEST = "manifest.json"  # a dealt-hands folder's manifest (it marks the folder as one)
HANDS_KIND = "dealt_hands"  # the manifest's kind: a dealt-hands folder, not a dataset of deals played


def write_hands_dataset(frame: pd.DataFrame, directory: Path, seed: int, batch_size: int, rules: RuleSet) -> None:
    """Write ``frame`` as ``directory/deals.parquet`` and its ``manifest.json``."""
    directory.mkdir(parents=True, exist_ok=True)
    write_parquet(frame, directory / HANDS_FILE)
    write_json(directory / HANDS_MANIFEST, {
        "kind": HANDS_KIND,
        "schema_version": 1,
        "simkit_version": simkit.__version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "seed": seed,
        "deals": int(frame["deal_id"].nunique()),
        "batch_size": batch_size,
        "rules": rules.to_dict(),
    })
