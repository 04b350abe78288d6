"""Game sizes are defined once (:mod:`simkit.cards`, :mod:`simkit.deck`, :mod:`simkit.exposed`)
and the kernels use them by name: no kernel module spells 28, 112 or a hand size as a number,
so a size is changed (or checked) in one place."""

from __future__ import annotations

import io
import pathlib
import tokenize

import numpy as np

from simkit.cards import N_CARDS, N_SEATS, N_TYPES
from simkit.deck import DEALER_CARDS, PLAYER_CARDS, STOCK_CARDS
from simkit.evaluator import kernel as K
from simkit.evaluator.tables import N_PARTS, PART_MEMBERS, PART_SIZE
from simkit.exposed import EXP_BLOCK

ROOT = pathlib.Path(__file__).resolve().parent.parent

# modules whose code must name every size (the numba kernels and the tables they read)
SIZED_MODULES = (
    "simkit/deck.py", "simkit/exposed.py", "simkit/generate.py", "simkit/engine/kernel.py", "simkit/engine/layout.py",
    "simkit/evaluator/kernel.py", "simkit/evaluator/features.py", "simkit/evaluator/tables.py",
    "simkit/evaluator/explain.py", "simkit/evaluator/api.py", "simkit/policies/builtin.py",
    "simkit/policies/expert.py", "simkit/studies/dealt.py", "simkit/analysis/exact.py",
    "simkit/studies/probability.py", "simkit/studies/conditional.py",
)
# ... and of these, the ones that may not spell a hand size either (tables.py has a hu value 30)
HAND_SIZED_MODULES = (
    "simkit/generate.py", "simkit/engine/kernel.py", "simkit/engine/layout.py", "simkit/evaluator/kernel.py",
    "simkit/policies/builtin.py", "simkit/policies/expert.py", "simkit/studies/dealt.py",
)
ARRAY_SIZES = {N_TYPES, N_CARDS, EXP_BLOCK, N_SEATS * N_TYPES, N_SEATS * EXP_BLOCK}
HAND_SIZES = {DEALER_CARDS, PLAYER_CARDS, STOCK_CARDS}
BIT_OPERATORS = {"&", "|", "<<", ">>"}  # a number after one is a mask or a shift, not a size


def literal_sizes(source: str, sizes: set[int]) -> list[tuple[int, int, str]]:
    """(line, value, line text) of each integer literal in ``sizes`` in the code of ``source``
    (comments and strings, docstrings included, are not code), bit masks and shifts excepted."""
    found = []
    previous = ""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NUMBER and previous not in BIT_OPERATORS:
            try:
                value = int(tok.string, 0)
            except ValueError:
                value = None  # a float
            if value in sizes:
                found.append((tok.start[0], value, tok.line.strip()))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = tok.string
    return found


def test_the_literal_scan_finds_a_size_in_code_only():
    source = '"""28 cards"""\nx = 28  # 28\ny = f(112, 31)\nz = a & 31\nw = 1 << 30\nv = 28.0\n'
    assert literal_sizes(source, {28, 112, 31, 30}) == [(2, 28, "x = 28  # 28"), (3, 112, "y = f(112, 31)"),
                                                       (3, 31, "y = f(112, 31)")]


def test_kernel_modules_name_every_size():
    """A 28 or a 112 typed into a kernel (instead of N_TYPES, N_CARDS, EXP_BLOCK ...) fails."""
    found = []
    for path in SIZED_MODULES:
        sizes = ARRAY_SIZES | (HAND_SIZES if path in HAND_SIZED_MODULES else set())
        found += [f"{path}:{line}: {value} in {text!r}"
                  for line, value, text in literal_sizes((ROOT / path).read_text(encoding="utf-8"), sizes)]
    assert not found, "sizes spelled as numbers:\n" + "\n".join(found)


GAME_SIZES = ("N_TYPES", "N_COPIES", "N_CARDS", "N_SEATS")


def test_game_sizes_are_imported_from_simkit_cards():
    """Every module takes N_TYPES, N_COPIES, N_CARDS and N_SEATS from :mod:`simkit.cards`,
    where they are defined, never through a module that re-exports them."""
    import ast

    found = []
    for path in sorted((ROOT / "simkit").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module != "simkit.cards":
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name} from {node.module}"
                          for a in node.names if a.name in GAME_SIZES]
    assert not found, "sizes imported from elsewhere than simkit.cards:\n" + "\n".join(found)


def test_part_span_walks_the_part_tables_members():
    """:func:`~simkit.evaluator.kernel.part_span` (first, step, size), which expert's part
    loops use, lists the same members as the table ``PART_MEMBERS`` built apart from it."""
    for part in range(N_PARTS):
        first, step, size = K.part_span(part)
        members = [first + i * step for i in range(size)]
        assert members == PART_MEMBERS[part, : PART_SIZE[part]].tolist(), f"part {part}"
    every = np.sort(np.concatenate([PART_MEMBERS[p, : PART_SIZE[p]] for p in range(N_PARTS)]))
    assert every.tolist() == list(range(N_TYPES))  # the parts split the types
