"""How much of expert ×3's time in the deal kernel is expert's own decisions, split by phase:
python experiments/fast_expert/ceiling.py [DEALS] [ROUNDS] [--states STATES.npz]

The deal kernel compiles expert into itself, so a profile cannot split its time by function.
This measures it by difference instead: in a copy of the package (a temporary folder; the
working tree is not touched) ``expert_state`` decides twice — at every decision, at discard
decisions only, or at claim decisions only — and the greedy ×3 and expert ×3 rows of
``simkit bench engine`` are timed for the unchanged copy and for each variant.  A decision taken
twice costs its time once more, so (variant − unchanged) is the CPU time of those decisions
inside the deal kernel; the rows' digests show the choices did not change (the second call must
agree with the first, or the variant returns an illegal action and the run fails).  Each variant
compiles afresh in a cache folder of its own (a minute or two each).

With ``--states`` (a file of record.py) it also counts how many discard decisions directly
follow a claim the same seat took: the discards a claim decision's own search of "the best
discard after the claim" could in principle serve."""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
CALL = "    return _expert_core(s, seat, mask, params, rules, work, work[:0].view(np.float64), np.inf, eps)\n"
TWICE = """    choice = _expert_core(s, seat, mask, params, rules, work, work[:0].view(np.float64), np.inf, eps)
    if {condition}:
        again = _expert_core(s, seat, mask, params, rules, work, work[:0].view(np.float64), np.inf, eps)
        if again != choice:
            return -1
    return choice
"""
VARIANTS = {"unchanged": None, "every decision twice": "True",
            "discards twice": "s[S_PHASE] == PH_DISCARD", "claims twice": "s[S_PHASE] != PH_DISCARD"}
ROW = re.compile(r"^(greedy|expert) ×3\s+(\d+) deals ([0-9.]+) CPU s .* rows ([0-9a-f]+)$")


def package_copy(folder: pathlib.Path, condition: str | None) -> pathlib.Path:
    """A copy of the simkit package under ``folder`` with expert_state deciding twice where
    ``condition`` holds (None: unchanged)."""
    target = folder / "simkit"
    shutil.copytree(ROOT / "simkit", target, ignore=shutil.ignore_patterns("__pycache__"))
    if condition is not None:
        path = target / "policies" / "expert.py"
        text = path.read_text(encoding="utf-8")
        if text.count(CALL) != 1:
            raise SystemExit("expert_state's call of _expert_core is not where this script expects it")
        path.write_text(text.replace(CALL, TWICE.format(condition=condition)), encoding="utf-8")
    return folder


def rows(folder: pathlib.Path, deals: int, rounds: int) -> dict[str, tuple[float, str]]:
    env = dict(os.environ, PYTHONPATH=str(folder), NUMBA_CACHE_DIR=str(folder / "numba-cache"))
    out = subprocess.run([sys.executable, str(ROOT / "experiments" / "fast_expert" / "mini_bench.py"),
                          str(deals), str(rounds)], env=env, check=True, capture_output=True, text=True,
                         cwd=folder).stdout
    found = {}
    for line in out.splitlines():
        match = ROW.match(line.strip())
        if match:
            found[match.group(1)] = (float(match.group(3)), match.group(4))
    return found


def after_claim_share(states_path: str) -> None:
    import numpy as np

    from simkit.engine import layout as L

    data = np.load(states_path)
    phase = data["states"][:, L.S_PHASE]
    actions = data["actions"]
    players = data["players"]
    discard = phase == L.PH_DISCARD
    after = discard[1:] & ~discard[:-1] & (actions[:-1] != L.A_PASS) & (players[:-1] == players[1:])
    print(f"{int(discard.sum())} discard decisions, {int(after.sum())} right after the same seat's claim "
          f"({after.sum() / discard.sum():.1%}); {int((~discard).sum())} claim decisions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("deals", nargs="?", type=int, default=20_000)
    parser.add_argument("rounds", nargs="?", type=int, default=3)
    parser.add_argument("--states")
    args = parser.parse_args()
    if args.states:
        after_claim_share(args.states)
    results = {}
    for name, condition in VARIANTS.items():
        with tempfile.TemporaryDirectory(prefix="simkit-ceiling-") as tmp:
            results[name] = rows(package_copy(pathlib.Path(tmp), condition), args.deals, args.rounds)
        greedy, expert = results[name]["greedy"], results[name]["expert"]
        print(f"{name:22s} greedy ×3 {greedy[0]:.3f} CPU s, expert ×3 {expert[0]:.3f} CPU s "
              f"({greedy[0] / expert[0]:.3f} × greedy ×3), rows {expert[1]}", flush=True)
    base = results["unchanged"]["expert"][0]
    for name in list(VARIANTS)[1:]:
        extra = results[name]["expert"][0] - base
        print(f"{name:22s}: those decisions cost {extra:.3f} CPU s of expert ×3's {base:.3f} ({extra / base:.0%})")


if __name__ == "__main__":
    main()
