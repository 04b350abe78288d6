"""The random streams of a run live in one registry (simkit/rng.py ``STREAMS``).

Every kernel that seeds a state calls ``stream_state(root, n, STREAM, out)`` with STREAM one of
the registry's names (or ``seat_stream(p)``), never a bare number: two modules that picked the
same number by hand would draw the same random numbers for different purposes, and a
module that picked another number for the same purpose would break the pairing that
duplicate comparisons and common random numbers rest on."""

from __future__ import annotations

import ast
from pathlib import Path

import simkit
from simkit import rng

PACKAGE = Path(simkit.__file__).parent
REGISTRY_NAMES = {"STREAM_CARDS", "STREAM_SAMPLE", "STREAM_PLAYOUT", "STREAM_BELIEF", "STREAM_BELIEF_PICK"}


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
