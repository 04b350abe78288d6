"""Test configuration: make tests/ importable (naive.py, helpers.py) and keep plots headless."""

import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
