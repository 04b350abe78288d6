"""The bots' figures of the review's headline, "played like" (issue 52, item 2).

Each bot (random, greedy, patient, expert, search: the strongest) plays seat SEAT of deals
0 .. DEALS-1 of SEED against the table ``simkit play`` seats by default (its two bots), the
dealer rotating by deal (deal N: seat N mod 3 deals), seats fixed; each deal is reviewed as
``simkit review`` reviews a played log: against the default reference (expert) with the default
stock orders per decision (64), review seed 0.  Per bot it records the loss against the
reference per deal and per decision with a choice (a ratio over deals, its interval by the delta
method, deals independent) and the agreement (the share of decisions where the bot took the
reference's action, likewise).  The table goes to simkit's package data
(``simkit/studies/data/played_like.json``), which the headline shows when a review's settings
are the table's (:func:`simkit.studies.headline.played_like`).

Usage: python experiments/played_like.py [--deals 20] [--seed 52052] [--seat 0]
       [--out simkit/studies/data/played_like.json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time

import numpy as np

from simkit.defaults import DEFAULT_BOTS, DEFAULT_REFERENCE, DEFAULT_SAMPLES
from simkit.replay import replay_jsonl
from simkit.studies.headline import PLAYED_LIKE_BOTS, PLAYED_LIKE_FILE, ratio_interval, settings_identity
from simkit.studies.reference import review_against_reference

CONFIDENCE = 0.95
REVIEW_SEED = 0


def measure(bot: str, seed: int, deals: int, seat: int) -> dict:
    losses, decisions, agrees = [], [], []
    for deal in range(deals):
        policies = list(DEFAULT_BOTS)
        policies.insert(seat, bot)
        lines = replay_jsonl(seed, deal, policies, dealer=deal % 3, seating="fixed").splitlines()
        r = review_against_reference(lines, seat, DEFAULT_REFERENCE, DEFAULT_SAMPLES, REVIEW_SEED, CONFIDENCE)
        losses.append(r.total)
        decisions.append(len(r.decisions))
        agrees.append(r.agree)
    per, per_lo, per_hi = ratio_interval(losses, decisions, CONFIDENCE)
    share, share_lo, share_hi = ratio_interval(agrees, decisions, CONFIDENCE)
    deal_mean, deal_lo, deal_hi = ratio_interval(losses, [1] * deals, CONFIDENCE)
    return {"bot": bot, "deals": deals, "decisions": int(sum(decisions)),
            "loss_per_deal": deal_mean, "loss_per_deal_lo": deal_lo, "loss_per_deal_hi": deal_hi,
            "loss_per_decision": per, "loss_per_decision_lo": per_lo, "loss_per_decision_hi": per_hi,
            "agreement": share, "agreement_lo": share_lo, "agreement_hi": share_hi,
            "per_deal": {"loss": [float(x) for x in losses], "decisions": decisions, "agree": agrees}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--seed", type=int, default=52052)
    parser.add_argument("--seat", type=int, default=0)
    parser.add_argument("--out", default=str(PLAYED_LIKE_FILE))
    args = parser.parse_args(argv)
    command = "python experiments/played_like.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    rows = []
    for bot in PLAYED_LIKE_BOTS:
        start = time.perf_counter()
        rows.append(measure(bot, args.seed, args.deals, args.seat))
        r = rows[-1]
        print(f"{bot:<8} {r['decisions']:>4} decisions, loss per decision {r['loss_per_decision']:.3f} "
              f"[{r['loss_per_decision_lo']:.3f}, {r['loss_per_decision_hi']:.3f}], agreement {r['agreement']:.0%} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    table = {"about": "the bots' figures of simkit review's headline (experiments/played_like.py)",
             "command": command.strip(), "seed": args.seed, "deals": args.deals, "first_deal": 0,
             "review_seed": REVIEW_SEED, "confidence": CONFIDENCE,
             "settings": settings_identity(DEFAULT_REFERENCE, DEFAULT_SAMPLES, True),
             "table": {"seat": args.seat, "others": list(DEFAULT_BOTS), "dealer": "deal N: seat N mod 3"},
             "bots": rows}
    write_table(table, args.out)
    print(f"wrote {args.out}")
    return 0


def write_table(table: dict, path: str) -> None:
    """The table as JSON: one key a line, one bot a line (its per-deal figures on it)."""
    parts = []
    for key, value in table.items():
        if key == "bots":
            bots = ",\n  ".join(json.dumps(b, ensure_ascii=False) for b in value)
            parts.append(f' "bots": [\n  {bots}\n ]')
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(parts) + "\n}\n")


if __name__ == "__main__":
    raise SystemExit(main())
