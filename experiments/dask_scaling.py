"""Wall-clock scaling of ``--backend dask`` against ``local`` for ``compare`` (plain, ``--luck``
with the shipped value network and with play-out values) and ``equity``: each command run as a
subprocess, locally and on a started ``LocalCluster`` of 1 and of 2 single-threaded worker
processes (``--scheduler``), after one warm-up run of each (kernels compiled and cached).  Prints
a markdown table (docs/datasets.md, "Scaling measured on a 2-core machine") and checks that
every dask run printed the local ``--json`` (timings aside).

    python experiments/dask_scaling.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from dask.distributed import LocalCluster

HAND = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"  # seat 0's 31 cards
COMMANDS = (
    ("compare expert greedy --deals 20000 --batch-size 1000 --seed 417001",
     ["compare", "expert", "greedy", "--deals", "20000", "--batch-size", "1000", "--seed", "417001"]),
    ("compare expert greedy --deals 4000 --batch-size 1000 --luck --seed 417002",
     ["compare", "expert", "greedy", "--deals", "4000", "--batch-size", "1000", "--luck", "--seed", "417002"]),
    ("compare greedy random --deals 60 --batch-size 20 --luck playouts:4 --seed 417003",
     ["compare", "greedy", "random", "--deals", "60", "--batch-size", "20", "--luck", "playouts:4",
      "--seed", "417003"]),
    ("equity HAND --policies expert,expert,expert --deals 40000 --batch-size 5000 --seed 417004",
     ["equity", HAND, "--policies", "expert,expert,expert", "--deals", "40000", "--batch-size", "5000",
      "--seed", "417004"]),
)
TIMING_FIELDS = ("cpu_seconds", "cpu_duplicate_seconds", "efficiency_vs_duplicate", "seconds", "wall_seconds")


def run(argv: list[str], out: str, extra: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "simkit", *argv, "--out", out, "--quiet", *extra],
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def comparable(stdout: str) -> object:
    """A run's printed result without its timings (``--json`` of compare; equity's text as is,
    but its time lines)."""
    try:
        fields = json.loads(stdout)
    except json.JSONDecodeError:
        return [line for line in stdout.splitlines() if " s)" not in line and "seconds" not in line]
    return {k: v for k, v in fields.items() if k not in TIMING_FIELDS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        clusters = {n: LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
                    for n in (1, 2)}
        try:
            for label, argv in COMMANDS:
                if argv[0] == "compare":
                    argv = argv + ["--json"]
                times: dict[str, list[float]] = {"local": [], "1": [], "2": []}
                printed = {}
                for repeat in range(args.repeats + 1):  # the first: warm-up, not timed
                    for name, extra in (("local", []),
                                        *((str(n), ["--backend", "dask", "--scheduler", c.scheduler_address])
                                          for n, c in clusters.items())):
                        out = os.path.join(scratch, f"{len(rows)}-{name}-{repeat}")
                        seconds, stdout = run(argv, out, extra)
                        printed[name] = comparable(stdout)
                        if repeat:
                            times[name].append(seconds)
                same = printed["1"] == printed["local"] and printed["2"] == printed["local"]
                span = {k: f"{min(v):.1f}–{max(v):.1f} s" for k, v in times.items()}
                ratio = f"{min(times['2']) / min(times['1']):.2f}"
                rows.append(f"| `{label}` | {span['local']} | {span['1']} | {span['2']} | {ratio} | "
                            f"{'yes' if same else 'NO'} |")
                print(rows[-1], flush=True)
        finally:
            for cluster in clusters.values():
                cluster.close()
    print("| command | `--backend local` | started cluster, 1 worker | started cluster, 2 workers | 2 / 1 workers "
          "(fastest) | same result as local |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
