"""Datasets on disk: manifest, atomic per-batch Parquet files, verified loading."""

from simkit.storage.dataset import DatasetError, load_dataset, read_manifest

__all__ = ["DatasetError", "load_dataset", "read_manifest"]
