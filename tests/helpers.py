"""Adapters shared by the tests: run the fast evaluator through the naive oracle's interface."""

from __future__ import annotations

import importlib
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np
from numba import njit

from simkit.engine import layout as L
from simkit.evaluator import evaluate
from simkit.evaluator.explain import explained_total
from simkit.evaluator.kernel import EXP_KONG, EXP_PENG, EXP_TABLE, EXP_ZHAN
from simkit.exposed import ExposedGroup
from simkit.rules import RuleSet

def fast_evaluate(concealed: Sequence[int], exposed: Sequence[tuple[str, tuple[int, ...]]], rules: Mapping | None = None) -> dict:
    """simkit.evaluator.evaluate with the naive oracle's call and result shape, passing every
    rule option.  Also checks that the lines of the best decomposition add up to the hu."""
    groups = [ExposedGroup(kind, tuple(types)) for kind, types in exposed]
    res = evaluate(np.asarray(concealed, dtype=np.int64), groups, RuleSet(**dict(rules or {})))
    if res.complete:
        assert explained_total(res.best) == res.hu, res.best
    return {
        "complete": res.complete,
        "hu": res.hu,
        "lou": res.lou,
        "steps": res.steps,
        "units": res.units,
        "wins": res.wins,
        "patterns": frozenset(res.patterns),
        "min_idle": res.min_idle,
    }


def arrays_to_groups(exposed: np.ndarray, n_chow: int) -> list[tuple[str, tuple[int, ...]]]:
    """Kernel exposed arrays -> naive (kind, types) list.  Chows get a stand-in 圆 (their
    cards never change the score: an exposed 圆 is 1 hu whatever it holds)."""
    groups: list[tuple[str, tuple[int, ...]]] = []
    for row, kind in ((EXP_ZHAN, "zhan"), (EXP_PENG, "peng"), (EXP_KONG, "kong"), (EXP_TABLE, "table")):
        for t in range(28):
            groups.extend([(kind, (t,))] * int(exposed[row, t]))
    groups.extend([("chow", (0, 1, 2))] * int(n_chow))
    return groups


@njit
def first_legal(obs, mask, params, rng, rules, work):
    """A user policy for the plug-in tests: a legal win, else the lowest legal action."""
    if mask[L.A_WIN]:
        return L.A_WIN
    for a in range(L.N_ACTIONS):
        if mask[a]:
            return a
    return -1


def module_on_path(folder: Path, name: str, source: str) -> Iterator[Path]:
    """Write ``source`` as module ``name`` in ``folder`` and put the folder on sys.path while
    the generator is suspended (a module-scoped fixture yields from it); then remove both the
    path and the imported module."""
    (folder / f"{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)


def run_cli(argv, capsys) -> tuple[int, str]:
    """``simkit ARGV`` in this process: (exit status, stderr)."""
    from simkit.cli import main  # the CLI imports its commands lazily; so does this helper

    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr().err


def one_line_error(rc: int, err: str, *needles: str) -> str:
    """The one stderr line of a refused command (exit 2, ``simkit: error: ...``) containing
    every needle."""
    lines = err.strip().splitlines()
    assert rc == 2, err
    assert len(lines) == 1 and lines[0].startswith("simkit: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def proc_table() -> dict[int, tuple[int, str, str, bytes]]:
    """pid -> (ppid, state, start time, command line) of every process, from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        table[int(entry)] = (int(fields[1]), fields[0], fields[19], cmdline)
    return table


def descendants(pid: int, table: dict | None = None) -> dict[int, tuple[str, bytes]]:
    """pid -> (start time, command line) of every process below ``pid`` (children, theirs...)."""
    table = proc_table() if table is None else table
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, _, start, cmdline) in table.items():
            if ppid == parent and child not in found:
                found[child] = (start, cmdline)
                frontier.append(child)
    return found


def alive(procs: dict[int, tuple[str, bytes]]) -> list[int]:
    """The processes of ``procs`` (as :func:`descendants` gives them) still running: the same
    pid with the same start time, not a zombie."""
    table = proc_table()
    return [pid for pid, (start, _) in procs.items()
            if pid in table and table[pid][2] == start and table[pid][1] not in ("Z", "X")]


def paused_tables(policies: str, seed: int, deals: int, rules: RuleSet, every: int = 3) -> list[dict]:
    """The whole table before every ``every``-th stock draw of deals 0 .. ``deals`` - 1 of a
    fixed-seat run of ``policies``, played one decision at a time from Python with the engine
    paused before each draw: copies of the state ``s``, engine workspace ``work``, random
    streams ``rngs``, observation ``obs`` and policy workspace ``pwork``, and the ``deal``."""
    from simkit.deck import deal_deck
    from simkit.engine import kernel as E
    from simkit.policies.dispatch import builtin_act_state
    from simkit.policies.registry import parse_policies, policy_arrays
    from simkit.rng import root_key, stream_state
    from simkit.runner.play import DECK_RNG, new_scratch

    ids, params, _ = policy_arrays(parse_policies(policies))
    rules_array = rules.to_array()
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, _, _ = new_scratch()
    root = root_key(seed)
    out = []
    for deal in range(deals):
        deal_deck(root, deal, rngs[DECK_RNG], deck)
        for p in range(3):
            stream_state(root, deal, 1 + p, rngs[p])
        work[E.EW_CHANCE] = E.CHANCE_PAUSE
        E.start(s, deck, 0, rules_array, mask, work, ev, ev_n)
        E.new_deal_observation(obs)
        k = 0
        while s[L.S_PHASE] != L.PH_OVER:
            if s[L.S_PHASE] == L.PH_DRAW:
                if k % every == 0:
                    out.append(dict(s=s.copy(), work=work.copy(), rngs=rngs.copy(), obs=obs.copy(),
                                    pwork=pwork.copy(), deal=deal))
                k += 1
                E.advance(s, rules_array, mask, work, ev, ev_n)
                continue
            p = s[L.S_PLAYER]
            action = builtin_act_state(ids[p], s, obs, mask, params[p], rngs[p], rules_array, pwork)
            E.apply_legal(s, action, rules_array, mask, work, ev, ev_n)
    return out


def read_only(monkeypatch, folder: Path) -> None:
    """``os.access`` as on read-only media for ``folder`` and what it holds (the tests may run
    as root, for whom permission bits do not stop a write, so chmod would not do)."""
    real_access = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and Path(path).resolve().is_relative_to(folder.resolve()):
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


# ---------------------------------------------------------------------------- a page's visible text


class PageText(HTMLParser):
    """The text a reader sees (outside ``<style>``), and every ``title`` and ``class`` attribute."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.shown: list[str] = []
        self.titles: list[str] = []
        self.classes: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "style":
            self._skip += 1
        if attrs.get("title") is not None:
            self.titles.append(attrs["title"])
        if attrs.get("class"):
            self.classes.append(attrs["class"])

    def handle_endtag(self, tag):
        if tag == "style":
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.shown.append(data)


def fed(parser: HTMLParser, html: str) -> HTMLParser:
    """``parser`` after reading all of ``html``."""
    parser.feed(html)
    parser.close()
    return parser


def read_page(html: str) -> PageText:
    """A page or fragment parsed: its shown text, titles and classes."""
    return fed(PageText(), html)


def shown_text(html: str) -> str:
    """The text a reader sees in ``html``, whitespace collapsed (tooltips are attributes: not in it)."""
    return " ".join("".join(read_page(html).shown).split())


PLAY_PROMPT = re.compile(r"choose 1-(\d+) \(h hint, q quit\): $")  # simkit play's prompt at a decision
