"""Batch simulation to Parquet datasets (``simkit simulate``)."""

from simkit.runner.simulate import simulate
from simkit.specs.simulate import SimulateSpec

__all__ = ["SimulateSpec", "simulate"]
