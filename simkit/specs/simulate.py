"""The spec of ``simkit simulate``: many deals of three policies into a dataset folder.

:class:`SimulateSpec` is what a run plays (its deals, policies, seed, rules, batch size,
sessions and seating); :func:`simkit.runner.simulate.simulate` runs it.  Its identity is the
dataset manifest's (:func:`simkit.specs.dataset.dataset_identity`): the fields a run recorded
before specs, in their form, so folders written by earlier versions resume.

>>> spec = SimulateSpec(deals=600, policies="greedy,greedy,greedy", seed=7, batch_size=200)
>>> spec.identity()["policies"][0], spec.n_batches, spec.seating
('greedy', 3, 'fixed')
>>> SimulateSpec(deals=20, policies="greedy,random,random", seed=1, session_length=12, batch_size=20).run_batch_size
12
>>> SimulateSpec(deals=0, policies="greedy,greedy,greedy", seed=1)
Traceback (most recent call last):
...
simkit.errors.SimkitError: deals must be a whole number >= 1, got 0
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from simkit.errors import SimkitError
from simkit.policies.registry import (
    PolicySpec,
    effective_params,
    parse_policies,
    policy_label,
    policy_sources,
    warn_model_rules,
)
from simkit.specs.base import IDENTITY, RunSpec, as_rules, check_choice, check_int, check_positive_int, field
from simkit.specs.dataset import (
    MAX_SESSION_LENGTH,
    POLICY_SOURCES,
    READABLE_SCHEMA_VERSIONS,
    SCHEMA_VERSION,
    SEATING_MODES,
    dataset_identity,
)

DEFAULT_BATCH_SIZE = 10_000  # deals per batch file (the resumable unit)


@dataclasses.dataclass(frozen=True)
class SimulateSpec(RunSpec):
    """One ``simkit simulate`` run: ``deals`` deals of ``policies`` (three: ``"a,b,c"`` or a
    sequence; one per seat) from ``seed`` under ``rules`` (None: the default rules), in batch
    files of ``batch_size`` deals.

    ``session_length`` K > 1: sessions of K deals with a rotating dealer (the batch size is
    rounded down to a multiple of K, :attr:`run_batch_size`).  ``seating``: ``fixed``,
    ``rotate`` or ``all``; None: ``rotate`` when the policies differ, ``fixed`` when they are the
    same (:func:`default_seating`).

    Set by a run that resumes a folder, not by a caller: ``schema_version`` (a dataset written
    before version 2 goes on in its own format) and ``labels`` (the values of its policy columns,
    the folder's: :func:`simkit.storage.dataset.column_labels`; None for a new run: each policy's
    plain label).  ``policy_sources`` (not a parameter): the source digest of each user policy,
    computed where the spec is made, so a worker process checks the policies it imports against
    those of the process that started the run."""

    KIND = "simulation"

    deals: int
    policies: Any
    seed: int
    rules: Any = None
    batch_size: int = DEFAULT_BATCH_SIZE
    session_length: int = 1
    seating: str | None = None
    schema_version: int = SCHEMA_VERSION
    labels: tuple[str, ...] | None = field(None, identity=False)
    policy_sources: tuple[tuple[str, str], ...] = dataclasses.field(init=False, repr=False,
                                                                    metadata={IDENTITY: False})

    def check(self) -> None:
        self._set("policies", parse_policies(self.policies))
        self._set("rules", as_rules(self.rules))
        check_positive_int(self, "deals")
        check_int(self, "seed", 0)
        check_positive_int(self, "batch_size")
        check_int(self, "session_length", 1, MAX_SESSION_LENGTH)
        if self.seating is None:
            self._set("seating", default_seating(self.policies))
        check_choice(self, "seating", SEATING_MODES)
        if self.schema_version not in READABLE_SCHEMA_VERSIONS:
            raise SimkitError(f"schema version {self.schema_version} is not one of {READABLE_SCHEMA_VERSIONS}",
                              parameters=("schema_version",))
        if self.schema_version < 2 and self.seating != "fixed":
            raise SimkitError("datasets of schema version 1 have fixed seats", parameters=("seating",))
        if self.labels is not None:
            self._set("labels", tuple(str(label) for label in self.labels))
        self._set("policy_sources", policy_sources(self.policies))
        warn_model_rules(self.policies, self.rules.to_dict())

    @property
    def run_batch_size(self) -> int:
        """The deals per batch file: ``batch_size`` rounded down to whole sessions (at least one),
        :func:`session_batch_size`; what the manifest records."""
        return session_batch_size(self.batch_size, self.session_length)

    @property
    def n_batches(self) -> int:
        return (self.deals + self.run_batch_size - 1) // self.run_batch_size

    def batch_range(self, batch: int) -> tuple[int, int]:
        first = batch * self.run_batch_size
        return first, min(self.deals, first + self.run_batch_size)

    def policy_texts(self) -> list[str]:
        """Each policy with its full parameter vector, by position: the identity's ``policies``."""
        return [PolicySpec(s.name, effective_params(s)).text() for s in self.policies]

    def policy_labels(self) -> list[str]:
        """The values of the dataset's ``policy_0..2`` columns: :attr:`labels` when given, else
        each policy's plain label (``expert``; ``patient:min_units=3``: only the parameters that
        differ from the defaults, :func:`~simkit.policies.registry.policy_label`)."""
        return list(self.labels) if self.labels is not None else [policy_label(s) for s in self.policies]

    def identity(self) -> dict[str, Any]:
        """The manifest's identity: the identity fields serialised, with the batch size the run
        writes, and only what :func:`~simkit.specs.dataset.dataset_identity` keeps (no
        ``session_length`` for independent deals, no ``seating`` for fixed seats, no
        ``policy_sources`` for built-in policies: their datasets are byte for byte as before)."""
        values = {**super().identity(), "batch_size": self.run_batch_size}
        if self.policy_sources:
            values[POLICY_SOURCES] = dict(self.policy_sources)
        return dataset_identity(values)


def default_seating(policies: Sequence[PolicySpec]) -> str:
    """``fixed`` when the three policies are the same (with their parameters), else ``rotate``.

    >>> default_seating(parse_policies("greedy,greedy,greedy")), default_seating(parse_policies("greedy,random,random"))
    ('fixed', 'rotate')
    """
    texts = {PolicySpec(s.name, effective_params(s)).text() for s in policies}
    return "fixed" if len(texts) == 1 else "rotate"


def session_batch_size(batch_size: int, session_length: int) -> int:
    """The batch size of a run in sessions of ``session_length``: rounded down to a multiple
    of it, at least one session.

    >>> session_batch_size(10_000, 1), session_batch_size(10_000, 12), session_batch_size(5, 12)
    (10000, 9996, 12)
    """
    if not 1 <= session_length <= MAX_SESSION_LENGTH:
        raise SimkitError(f"session_length must be in 1..{MAX_SESSION_LENGTH}, got {session_length}",
                          parameters=("session_length",))
    return max(session_length, batch_size - batch_size % session_length)
