"""Experiment files (TOML) and their reports: ``simkit experiment run experiments/NAME.toml``."""

from simkit.experiment.run import run_experiment
from simkit.experiment.spec import ExperimentError, ExperimentSpec, load_experiment, parse_experiment

__all__ = ["ExperimentError", "ExperimentSpec", "load_experiment", "parse_experiment", "run_experiment"]
