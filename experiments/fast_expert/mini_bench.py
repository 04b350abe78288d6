"""The greedy ×3 and expert ×3 rows of ``simkit bench engine`` alone (same code, fewer rows):
python experiments/fast_expert/mini_bench.py [DEALS] [ROUNDS]"""

from __future__ import annotations

import sys

from simkit import bench

if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with bench._one_numba_thread():
        rows = bench._engine_rows(["greedy", "expert"], n, 2026, rounds)
    base = rows[0]["cpu_s"]
    for row in rows:
        print(f"{row['policy']:12s} {row['deals']:7d} deals {row['cpu_s']:.3f} CPU s  "
              f"{base / row['cpu_s']:.3f} × greedy ×3  rows {row['rows_sha256']}")
