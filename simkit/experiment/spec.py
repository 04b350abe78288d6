"""Experiment files: a TOML description of the simulations, comparisons and hand-probability
estimates behind one report.

    name = "dealer_advantage"          # report goes to reports/NAME/report.md
    title = "Dealer advantage"
    description = "Markdown paragraph shown at the top of the report."
    seed = 2026                        # root seed of every run below (each may override it)
    batch_size = 20000                 # deals per batch file (resumable unit)

    [[simulation]]                     # one dataset per entry (simkit simulate)
    label = "greedy x3"
    policies = "greedy,greedy,greedy"
    deals = 1000000
    rules = { lou_doubles = false }    # rule options (docs/rules.md); default rules if absent
    session_length = 12                # optional: sessions of 12 deals with a rotating dealer
                                       # (default 1: independent deals; batch_size is rounded
                                       # down to a multiple of it)
    seating = "rotate"                 # optional: fixed | rotate | all (simkit simulate --seating);
                                       # default rotate when the policies differ, else fixed
    baseline = "greedy x3"             # optional: the earlier simulation this one's changes are
                                       # measured against, paired per deal when both play the
                                       # same deals; default the first simulation; "" for none

    [[comparison]]                     # one duplicate comparison per entry (simkit compare)
    a = "greedy"
    b = "random"
    deals = 100000
    sprt = [0.05, 0.05, 0.05]          # optional: delta, alpha, beta; deals is then the cap
    burn_in = 300                      # optional: deals before the sequential test may decide
                                       # (default max(300, 9 / delta²), as compare --sprt)
    luck = true                        # optional: also luck-adjusted (true: the shipped value model,
                                       # a value-model file's path, or "playouts:K")
    design = "six"                     # optional: six (the default) or pairs (each pair of seatings
                                       # on deals of its own; not with luck; docs/compare.md)

    [tournament]                       # optional: one round robin of duplicate matches (simkit tournament)
    policies = ["random", "greedy", "patient", "mc"]
    deals = 300                        # duplicate deals per pairing (each in six seatings)
    sprt = [0.2, 0.05, 0.05]           # optional: every pairing as a sequential test; deals is the cap
    burn_in = 300                      # optional, as for a comparison
    luck = true                        # optional, as for a comparison: payoff ratings on adjusted differences
    design = "six"                     # optional, as for a comparison

    [[calibration]]                    # paired play and the review's prediction (simkit calibrate)
    policy = "search"                  # in seat `seat`, the reference in the other two
    reference = "expert"               # optional (default expert): the seat's other player, and the review's
    seat = 1                           # optional (default 1)
    deals = 1000                       # each played twice: with the policy and with the reference in the seat
    first_deal = 0                     # optional (default 0)
    samples = 64                       # optional: stock orders per reviewed decision (default 64)

    [[probabilities]]                  # dealt-hand event probabilities (simkit prob)
    deals = 1000000
    events = ["nao", "jiang_at_least_k:k=8"]   # optional; default: all events
    seats = [0, 1]

Unknown keys, missing required keys and values of the wrong type are refused with one line
naming the key.

>>> spec = parse_experiment('name = "x"\\n[[simulation]]\\npolicies = "random,random,random"\\ndeals = 10\\n')
>>> spec.simulations[0].label, spec.simulations[0].deals, spec.seed
('random,random,random', 10, 0)
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any

from simkit.analysis.exact import normalise_events, parse_event
from simkit.defaults import DEFAULT_DUPLICATE_DESIGN, DUPLICATE_DESIGNS
from simkit.errors import SimkitError
from simkit.policies.registry import parse_policies, parse_policy
from simkit.rules import RuleSet
from simkit.specs.calibrate import CalibrateSpec
from simkit.specs.simulate import SimulateSpec


class ExperimentError(SimkitError):
    """A malformed experiment file."""


@dataclasses.dataclass(frozen=True)
class SimulationEntry:
    label: str
    policies: str
    deals: int
    seed: int
    rules: RuleSet
    details: bool
    session_length: int = 1
    seating: str | None = None  # None: simulate's default (rotate when the policies differ)
    baseline: str | None = None  # label compared against; None: the first simulation; "": none

    REPORT_KEYS = ("label", "details", "baseline")  # the entry's keys that say how it is reported, not what runs

    def run_spec(self, batch_size: int) -> SimulateSpec:
        """The run this entry simulates (the file's ``batch_size``): every other key is a
        :class:`~simkit.specs.simulate.SimulateSpec` field (an unknown one is refused)."""
        run = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in self.REPORT_KEYS}
        return SimulateSpec.from_mapping({**run, "batch_size": batch_size}, f"simulation {self.label!r}")


@dataclasses.dataclass(frozen=True)
class ComparisonEntry:
    a: str
    b: str
    deals: int
    seed: int
    rules: RuleSet
    sprt: tuple[float, float, float] | None
    burn_in: int | None = None
    luck: bool | str = False
    design: str = DEFAULT_DUPLICATE_DESIGN


@dataclasses.dataclass(frozen=True)
class TournamentEntry:
    policies: tuple[str, ...]
    deals: int
    seed: int
    rules: RuleSet
    sprt: tuple[float, float, float] | None
    burn_in: int | None = None
    luck: bool | str = False
    design: str = DEFAULT_DUPLICATE_DESIGN


@dataclasses.dataclass(frozen=True)
class CalibrationEntry:
    """A ``[[calibration]]``: ``policy`` in ``seat`` against ``reference`` (in the other seats),
    paired play and the review's predicted loss (:func:`simkit.studies.reference.calibrate`)."""

    policy: str
    reference: str
    seat: int
    deals: int
    seed: int
    first_deal: int
    samples: int
    rules: RuleSet


@dataclasses.dataclass(frozen=True)
class ProbabilityEntry:
    deals: int
    seed: int
    events: tuple[str, ...] | None
    seats: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class ExperimentSpec:
    name: str
    title: str
    description: str
    seed: int
    batch_size: int
    simulations: tuple[SimulationEntry, ...]
    comparisons: tuple[ComparisonEntry, ...]
    probabilities: tuple[ProbabilityEntry, ...]
    tournament: TournamentEntry | None = None
    calibrations: tuple[CalibrationEntry, ...] = ()


def slug(text: str) -> str:
    """A folder-safe name.

    >>> slug("greedy x3 (lou_doubles=false)")
    'greedy_x3_lou_doubles_false'
    """
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_")


def _take(table: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
    if key not in table:
        if default is ...:
            raise ExperimentError(f"{where}: missing required key '{key}'")
        return default
    value = table[key]
    if isinstance(value, bool) and kind is int or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ExperimentError(f"{where}: '{key}' must be {names}, got {value!r}")
    return value


def _check_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ExperimentError(f"{where}: unknown key '{unknown[0]}' (allowed: {', '.join(sorted(allowed))})")


def _entry(entry: Any, where: str, section: str) -> dict[str, Any]:
    """An entry of an array of tables (``[[section]]``), refused when it is anything else."""
    if not isinstance(entry, dict):
        raise ExperimentError(f"{where}: must be a table ([[{section}]] with keys), got {entry!r}")
    return entry


def _events(events: list[str], where: str) -> None:
    """Every event parses and names a known event with valid parameters."""
    try:
        normalise_events([parse_event(text) for text in events])
    except ValueError as exc:
        raise ExperimentError(f"{where}: {exc}") from None


def _positive(value: int, key: str, where: str) -> int:
    if value < 1:
        raise ExperimentError(f"{where}: '{key}' must be >= 1, got {value}")
    return value


def _rules(table: dict[str, Any], where: str) -> RuleSet:
    value = table.get("rules", {})
    try:
        if isinstance(value, dict):
            return RuleSet.from_dict(value)
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            return RuleSet.from_strings(value)
    except SimkitError as exc:
        raise ExperimentError(f"{where}: rules: {exc}") from None
    raise ExperimentError(f"{where}: 'rules' must be a table or a list of key=value strings, got {value!r}")


def _burn_in(entry: dict[str, Any], where: str) -> int | None:
    value = _take(entry, "burn_in", int, where, None)
    if value is not None and value < 2:
        raise ExperimentError(f"{where}: 'burn_in' must be >= 2, got {value}")
    return value


def _luck(entry: dict[str, Any], where: str) -> bool | str:
    value = entry.get("luck", False)
    if not isinstance(value, (bool, str)) or value == "":
        raise ExperimentError(f"{where}: 'luck' must be true, false, a value-model file's path or 'playouts:K', got {value!r}")
    return value


def _design(entry: dict[str, Any], where: str) -> str:
    """A comparison's or tournament's ``design``: six (the default) or pairs, and not pairs with luck."""
    value = entry.get("design", DEFAULT_DUPLICATE_DESIGN)
    if value not in DUPLICATE_DESIGNS:
        raise ExperimentError(f"{where}: 'design' must be one of {', '.join(DUPLICATE_DESIGNS)}, got {value!r}")
    if value == "pairs" and entry.get("luck", False) is not False:
        raise ExperimentError(f"{where}: 'design' pairs plays each pair of seatings on deals of its own, and 'luck' "
                              "adjusts the six seatings of one deal: drop one of them")
    return value


def _sprt(entry: dict[str, Any], where: str) -> tuple[float, float, float] | None:
    sprt = _take(entry, "sprt", list, where, None)
    if sprt is None:
        return None
    if len(sprt) != 3 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in sprt):
        raise ExperimentError(f"{where}: 'sprt' must be [delta, alpha, beta], got {sprt!r}")
    sprt = tuple(float(x) for x in sprt)
    if not (sprt[0] > 0 and 0 < sprt[1] < 0.5 and 0 < sprt[2] < 0.5):
        raise ExperimentError(f"{where}: 'sprt' needs delta > 0 and 0 < alpha, beta < 0.5, got {list(sprt)}")
    return sprt


def parse_experiment(text: str, source: str = "experiment") -> ExperimentSpec:
    """Parse and validate an experiment file's text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentError(f"{source}: not valid TOML ({exc})") from None
    _check_keys(data, {"name", "title", "description", "seed", "batch_size", "simulation", "comparison",
                       "probabilities", "tournament", "calibration"}, source)
    name = _take(data, "name", str, source)
    if not name or slug(name) != name:
        raise ExperimentError(f"{source}: 'name' must be a plain folder name (letters, digits, _ . -), got {name!r}")
    seed = _take(data, "seed", int, source, 0)
    if seed < 0:
        raise ExperimentError(f"{source}: 'seed' must be >= 0, got {seed}")
    batch_size = _positive(_take(data, "batch_size", int, source, 10_000), "batch_size", source)
    sims = []
    for i, entry in enumerate(_take(data, "simulation", list, source, [])):
        where = f"{source}: simulation[{i}]"
        entry = _entry(entry, where, "simulation")
        _check_keys(entry, {"label", "policies", "deals", "seed", "rules", "details", "session_length", "seating",
                            "baseline"}, where)
        policies = _take(entry, "policies", str, where)
        try:
            parse_policies(policies)
        except SimkitError as exc:
            raise ExperimentError(f"{where}: {exc}") from None
        seating = _take(entry, "seating", str, where, None)
        if seating is not None and seating not in ("fixed", "rotate", "all"):
            raise ExperimentError(f"{where}: 'seating' must be fixed, rotate or all, got {seating!r}")
        baseline = _take(entry, "baseline", str, where, None)
        label = _take(entry, "label", str, where, policies)
        if baseline and baseline not in [s.label for s in sims]:
            raise ExperimentError(f"{where}: 'baseline' must be the label of an earlier simulation, got {baseline!r} "
                                  f"(earlier: {[s.label for s in sims]})")
        sims.append(SimulationEntry(label, policies,
                                    _positive(_take(entry, "deals", int, where), "deals", where),
                                    _take(entry, "seed", int, where, seed), _rules(entry, where),
                                    _take(entry, "details", bool, where, True),
                                    _positive(_take(entry, "session_length", int, where, 1), "session_length", where),
                                    seating, baseline))
    labels = [s.label for s in sims]
    if len(set(map(slug, labels))) != len(labels):
        raise ExperimentError(f"{source}: simulation labels must be distinct, got {labels}")
    comps = []
    for i, entry in enumerate(_take(data, "comparison", list, source, [])):
        where = f"{source}: comparison[{i}]"
        entry = _entry(entry, where, "comparison")
        _check_keys(entry, {"a", "b", "deals", "seed", "rules", "sprt", "burn_in", "luck", "design"}, where)
        a, b = _take(entry, "a", str, where), _take(entry, "b", str, where)
        try:
            parse_policy(a)
            parse_policy(b)
        except SimkitError as exc:
            raise ExperimentError(f"{where}: {exc}") from None
        sprt = _sprt(entry, where)
        deals = _take(entry, "deals", int, where)
        if deals < 2:
            raise ExperimentError(f"{where}: 'deals' must be >= 2, got {deals}")
        comps.append(ComparisonEntry(a, b, deals, _take(entry, "seed", int, where, seed), _rules(entry, where), sprt,
                                     _burn_in(entry, where), _luck(entry, where), _design(entry, where)))
    probs = []
    for i, entry in enumerate(_take(data, "probabilities", list, source, [])):
        where = f"{source}: probabilities[{i}]"
        entry = _entry(entry, where, "probabilities")
        _check_keys(entry, {"deals", "seed", "events", "seats"}, where)
        events = _take(entry, "events", list, where, None)
        if events is not None and not all(isinstance(e, str) for e in events):
            raise ExperimentError(f"{where}: 'events' must be a list of strings, got {events!r}")
        if events:
            _events(events, where)
        seats = _take(entry, "seats", list, where, [0, 1, 2])
        if not seats or any(s not in (0, 1, 2) or isinstance(s, bool) for s in seats):
            raise ExperimentError(f"{where}: 'seats' must list seats 0, 1, 2, got {seats!r}")
        probs.append(ProbabilityEntry(_positive(_take(entry, "deals", int, where), "deals", where),
                                      _take(entry, "seed", int, where, seed),
                                      tuple(events) if events is not None else None, tuple(seats)))
    tournament = None
    if "tournament" in data:
        where = f"{source}: tournament"
        entry = _entry(data["tournament"], where, "tournament")
        _check_keys(entry, {"policies", "deals", "seed", "rules", "sprt", "burn_in", "luck", "design"}, where)
        policies = _take(entry, "policies", list, where)
        if len(policies) < 2 or not all(isinstance(p, str) for p in policies):
            raise ExperimentError(f"{where}: 'policies' must list 2 or more policy names, got {policies!r}")
        try:
            for p in policies:
                parse_policy(p)
        except SimkitError as exc:
            raise ExperimentError(f"{where}: {exc}") from None
        deals = _take(entry, "deals", int, where)
        if deals < 2:
            raise ExperimentError(f"{where}: 'deals' must be >= 2, got {deals}")
        tournament = TournamentEntry(tuple(policies), deals, _take(entry, "seed", int, where, seed),
                                     _rules(entry, where), _sprt(entry, where), _burn_in(entry, where),
                                     _luck(entry, where), _design(entry, where))
    calibrations = []
    defaults = CalibrateSpec.defaults()  # an entry's keys and defaults are the spec's (the level is the run's)
    for i, entry in enumerate(_take(data, "calibration", list, source, [])):
        where = f"{source}: calibration[{i}]"
        entry = _entry(entry, where, "calibration")
        _check_keys(entry, set(CalibrateSpec.field_names()) - {"confidence"}, where)
        policy = _take(entry, "policy", str, where)
        reference = _take(entry, "reference", str, where, defaults["reference"])
        try:
            parse_policy(policy)
            parse_policy(reference)
        except SimkitError as exc:
            raise ExperimentError(f"{where}: {exc}") from None
        seat = _take(entry, "seat", int, where, defaults["seat"])
        if seat not in (0, 1, 2):
            raise ExperimentError(f"{where}: 'seat' must be 0, 1 or 2, got {seat}")
        deals = _take(entry, "deals", int, where)
        if deals < 2:
            raise ExperimentError(f"{where}: 'deals' must be >= 2, got {deals}")
        first_deal = _take(entry, "first_deal", int, where, defaults["first_deal"])
        if first_deal < 0:
            raise ExperimentError(f"{where}: 'first_deal' must be >= 0, got {first_deal}")
        samples = _take(entry, "samples", int, where, defaults["samples"])
        if samples < 2:
            raise ExperimentError(f"{where}: 'samples' must be >= 2, got {samples}")
        calibrations.append(CalibrationEntry(policy, reference, seat, deals, _take(entry, "seed", int, where, seed),
                                             first_deal, samples, _rules(entry, where)))
    if not (sims or comps or probs or tournament or calibrations):
        raise ExperimentError(f"{source}: nothing to run (add [[simulation]], [[comparison]], [tournament], "
                              "[[calibration]] or [[probabilities]])")
    return ExperimentSpec(name, _take(data, "title", str, source, name), _take(data, "description", str, source, ""),
                          seed, batch_size, tuple(sims), tuple(comps), tuple(probs), tournament, tuple(calibrations))


def load_experiment(path: str | Path) -> ExperimentSpec:
    """Read and validate an experiment file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_experiment(text, str(path))
