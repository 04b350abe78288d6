"""A dataset run's identity (``simkit simulate``, the deals of ``simkit equity``), declared once:
the fields a dataset's manifest records, which of them a run adds only where they differ from
what an older manifest implies, and the limits of their values.

:class:`~simkit.specs.simulate.SimulateSpec` and :class:`~simkit.specs.equity.EquitySpec` build
their identity with :func:`dataset_identity`, and :func:`simkit.storage.dataset.manifest_identity`
reads a manifest's with it: the form written and the form checked are one.  This module imports
nothing (the storage layer reads manifests with it without loading numba or a bot).

>>> dataset_identity({"schema_version": 2, "seed": 1, "deals": 9, "batch_size": 9, "rules": {},
...                   "policies": ["greedy"] * 3, "session_length": 1, "seating": "rotate"})
{'schema_version': 2, 'seed': 1, 'deals': 9, 'batch_size': 9, 'rules': {}, 'policies': ['greedy', 'greedy', 'greedy'], 'seating': 'rotate'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SCHEMA_VERSION = 2  # 2: winner columns null on 穿牌, seating; 1: -1 / 0 there, seats fixed
READABLE_SCHEMA_VERSIONS = (1, 2)
SEATING_MODES = ("fixed", "rotate", "all")
MAX_SESSION_LENGTH = 32_767  # deal_in_session is stored as int16
POLICY_SOURCES = "policy_sources"  # {user policy or learned: source / model digest}; absent for other runs
EQUITY = "equity"  # identity of a hand-equity run: {"hand": ..., "seat": ..., "deck": ...}; absent otherwise
IDENTITY_KEYS = ("schema_version", "seed", "deals", "batch_size", "rules", "policies")

_PRESENT = object()  # a key recorded whenever a run has it (never implied by an older manifest)
# the keys added after the first datasets, in the order they are recorded, each with the value
# its absence means: a run whose value is that one leaves the key out, so the identity (and the
# config_digest, and every file) of a run without it is what it was before the key existed
OPTIONAL_KEYS: tuple[tuple[str, Any], ...] = (
    (POLICY_SOURCES, _PRESENT),  # runs with user policies or learned models only
    ("session_length", 1),  # independent deals: absent
    (EQUITY, _PRESENT),  # hand-equity runs only (simkit.runner.equity): the fixed hand and seat
    ("seating", "fixed"),  # fixed seats (or written before seatings): absent
)


def dataset_identity(values: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of a dataset run (what its ``config_digest`` is computed from) out of
    ``values`` (a spec's serialised fields, or a manifest): :data:`IDENTITY_KEYS`, then each of
    :data:`OPTIONAL_KEYS` that ``values`` holds with another value than its absence means."""
    identity = {key: values[key] for key in IDENTITY_KEYS}
    for key, implied in OPTIONAL_KEYS:
        if key in values and values[key] != implied:
            identity[key] = values[key]
    return identity
