"""Efficiency of a `simkit compare` option against plain duplicate (issue 39; issue 50 item 4).

Each command runs as a child process, `simkit compare A B --workers 1 --json --quiet` with
``--variance-reduction none`` on one seed and with the option on another.  The variance per row
is the squared standard error x rows of the estimate the command reports (the adjusted one when
it adjusts).

For an option without an adjustment (``--design pairs``) a row costs the same CPU under both
designs by construction, so what differs is the variance: the headline is the **variance ratio**
``variance per row of plain / of the option`` (above 1 the option gives a narrower interval for
the same rows, and the same CPU), with a 95 % percentile bootstrap interval over rows (each
folder's rows resampled on their own, 2,000 resamples).  The CPU of each command (the child's
user + system time minus that of a 20-deal run of the same command) is printed beside it, one
reading per command, not multiplied in.  With an adjustment, whose CPU differs, the point
efficiency ``(variance x CPU) of plain / (variance x CPU) of the option`` is printed, without an
interval.

Usage: python experiments/compare_efficiency.py A B DEALS SEED_PLAIN SEED_OPTION OPTION...
e.g.   python experiments/compare_efficiency.py expert greedy 40000 5205021 5205022 --design pairs
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from simkit.studies.compare import seating_differences

RESAMPLES = 2000


def run(a: str, b: str, deals: int, seed: int, options: list[str], out: str) -> tuple[dict, float]:
    """The JSON of one compare command and the CPU seconds its process took."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "simkit", "compare", a, b, "--deals", str(deals), "--seed", str(seed),
                           "--workers", "1", "--json", "--quiet", "--out", out] + options,
                          capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return json.loads(proc.stdout), (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measured(a: str, b: str, deals: int, seed: int, options: list[str], root: str, label: str) -> dict:
    """One method's rows, variance per row and CPU (the run's minus a 20-deal run's)."""
    _, fixed = run(a, b, 20, seed, options, f"{root}/{label}-20")
    result, cpu = run(a, b, deals, seed, options, f"{root}/{label}")
    estimate = result["adjusted"] if result["adjusted"] is not None else result["duplicate"]
    rows = None if result["adjusted"] is not None else seating_differences(f"{root}/{label}").mean(axis=1)
    print(f"{label}: {' '.join(options)}: estimate {estimate['estimate']:+.4f} ± {estimate['standard_error']:.4f} "
          f"over {result['deals']:,} rows (design {result['design']}), CPU {cpu:.1f} s - {fixed:.1f} s "
          f"(20 deals) = {cpu - fixed:.1f} s")
    return {"variance": estimate["standard_error"] ** 2 * result["deals"], "cpu": cpu - fixed, "rows": rows}


def main(a: str, b: str, deals: int, seed_plain: int, seed_option: int, options: list[str]) -> None:
    with tempfile.TemporaryDirectory() as root:
        plain = measured(a, b, deals, seed_plain, ["--variance-reduction", "none"], root, "plain")
        option = measured(a, b, deals, seed_option, options, root, "option")
    cpu = (f"CPU per row {1e3 * plain['cpu'] / deals:.3f} vs {1e3 * option['cpu'] / deals:.3f} ms, "
           "one reading each")
    if plain["rows"] is not None and option["rows"] is not None:
        rng = np.random.default_rng(seed_option)
        p, o = plain["rows"], option["rows"]
        ratio = p.var(ddof=1) / o.var(ddof=1)
        boot = [p[rng.integers(0, p.size, p.size)].var(ddof=1) / o[rng.integers(0, o.size, o.size)].var(ddof=1)
                for _ in range(RESAMPLES)]
        lo, hi = np.quantile(boot, [0.025, 0.975])
        print(f"variance ratio of {' '.join(options)} over --variance-reduction none: {ratio:.3f}, 95 % bootstrap "
              f"[{lo:.3f}, {hi:.3f}] (variance per row {plain['variance']:.3f} vs {option['variance']:.3f}; {cpu})")
        return
    efficiency = plain["variance"] * plain["cpu"] / (option["variance"] * option["cpu"])
    print(f"efficiency of {' '.join(options)} over --variance-reduction none: {efficiency:.3f} (variance per row "
          f"{plain['variance']:.3f} vs {option['variance']:.3f}; {cpu})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:])
