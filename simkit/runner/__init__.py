"""Batch simulation to Parquet datasets (``simkit simulate``)."""

from simkit.runner.simulate import SimulationConfig, simulate

__all__ = ["SimulationConfig", "simulate"]
