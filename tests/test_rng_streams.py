"""The random streams of a run live in one registry (simkit/rng.py ``STREAMS``).

Every kernel that seeds a state calls ``stream_state(root, n, STREAM, out)`` with STREAM one of
the registry's names (or ``seat_stream(p)``), never a bare number: two modules that picked the
same number by hand would draw the same random numbers for different purposes, and a
module that picked another number for the same purpose would break the pairing that
duplicate comparisons and common random numbers rest on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import simkit
from simkit import rng

PACKAGE = Path(simkit.__file__).parent
REGISTRY_NAMES = {"STREAM_CARDS", "STREAM_SAMPLE", "STREAM_PLAYOUT", "STREAM_BELIEF", "STREAM_BELIEF_PICK", "STREAM_REFERENCE"}


def _stream_arguments():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "stream_state":
                yield path.relative_to(PACKAGE).as_posix(), node.lineno, node.args[2]


def test_every_stream_is_named_from_the_registry():
    seen = 0
    for where, line, argument in _stream_arguments():
        seen += 1
        named = isinstance(argument, ast.Name) and argument.id in REGISTRY_NAMES
        seat = isinstance(argument, ast.Call) and getattr(argument.func, "id", None) in ("seat_stream",
                                                                                        "belief_seat_stream")
        assert named or seat or where == "rng.py", f"{where}:{line}: stream {ast.unparse(argument)} is not in rng's registry"
    assert seen >= 8


def test_the_registry_keeps_the_streams_datasets_were_made_with():
    """Distinct streams, and the numbers every stored dataset and golden digest was drawn with
    (deck 0, seats 1-3, self-play sampling 8, play-outs 9: the naive twins in tests/ use them)."""
    assert len(set(rng.STREAMS.values())) == len(rng.STREAMS)
    assert {k: v for k, v in rng.STREAMS.items() if v < 10} == {"cards": 0, "seat 0": 1, "seat 1": 2, "seat 2": 3,
                                                                 "sample": 8, "playout": 9}
    assert {name for name in vars(rng) if name.startswith("STREAM_")} == REGISTRY_NAMES | {"STREAM_SEAT",
                                                                                           "STREAM_BELIEF_SEAT"}


def test_a_reviews_rollout_seed_is_keyed_by_seed_deal_seed_and_deal():
    """Issue 50 item 5: a review's rollouts of a deal draw from a seed of (review seed, the deal's
    seed, its number): every one of 27 keys gives its own seed, an order of the three counts (a key
    that dropped the deal, or added its parts, would repeat), and none is the review's seed itself
    or a pairs-design seating seed.  Bad parts are a one-line ValueError."""
    keys = [(s, ds, d) for s in range(3) for ds in range(3) for d in range(3)]
    seeds = [rng.deal_review_seed(*k) for k in keys]
    assert len(set(seeds)) == len(keys)
    assert rng.deal_review_seed(0, 5, 1) != rng.deal_review_seed(0, 1, 5) != rng.deal_review_seed(5, 0, 1)
    assert all(0 <= x < 2 ** 62 for x in seeds)
    assert not set(seeds) & ({0, 1, 2} | {rng.seating_pair_seed(s, p) for s in range(3) for p in (1, 2)})
    for bad in ((-1, 0, 0), (0, -1, 0), (0, 0, -1), (0, True, 0), (0, 0, 1.5)):
        with pytest.raises(ValueError, match="a review's rollout seed needs integers >= 0"):
            rng.deal_review_seed(*bad)
