"""Model archives (``simkit/archive.py``): the bytes of an ``.npz`` model are a function of its
arrays only (issue 36), in the format the shipped models were written in.

What each test catches: a member dated by the clock, or marked by the writing system (two
writings a second apart, or on two systems, would differ); a change of the writing format
that would change the shipped models' bytes and digests if they were written again (their
arrays written by ``npz_bytes`` must give their files byte for byte); a shipped model that no
longer loads.
"""

from __future__ import annotations

import hashlib
import io
import time
import zipfile

import numpy as np
import pytest

from simkit.archive import ZIP_EPOCH, npz_bytes
from simkit.policies.model import BUILTIN_MODEL, load_model
from simkit.runner.value_model import BUILTIN_VALUE_MODEL, load_value_model


def test_the_bytes_depend_on_the_arrays_only(monkeypatch):
    arrays = {"block": np.arange(5.0), "meta": np.array('{"format": "x"}')}
    data = npz_bytes(arrays)
    real_time = time.time
    monkeypatch.setattr(time, "time", lambda: real_time() + 86_400.0 * 400)
    # zipfile's default date for a member (1980-01-01 today, which np.savez relies on) moved too
    defaults = tuple((2031, 5, 6, 7, 8, 10) if d == ZIP_EPOCH else d for d in zipfile.ZipInfo.__init__.__defaults__)
    monkeypatch.setattr(zipfile.ZipInfo.__init__, "__defaults__", defaults)
    assert npz_bytes(arrays) == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == ["block.npy", "meta.npy"]
    assert {(i.date_time, i.create_system, i.external_attr, i.compress_type) for i in infos} == {
        (ZIP_EPOCH, 3, 0o600 << 16, zipfile.ZIP_STORED)}
    with np.load(io.BytesIO(data), allow_pickle=False) as loaded:
        assert loaded["block"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and str(loaded["meta"][()]) == '{"format": "x"}'


def test_the_shipped_models_load_and_their_format_is_the_writers():
    """The shipped models were written by ``np.savez`` before ``npz_bytes``: their arrays
    written again give the same bytes, so the writer changed no format and they are kept as
    they are (reports record their digests)."""
    for path, load in ((BUILTIN_MODEL, load_model), (BUILTIN_VALUE_MODEL, load_value_model)):
        data = path.read_bytes()
        model = load(path)
        assert model.digest == hashlib.sha256(data).hexdigest()
        with np.load(path, allow_pickle=False) as stored:
            assert npz_bytes({"block": stored["block"], "meta": stored["meta"]}) == data, path.name


def test_an_array_of_python_objects_is_refused_not_pickled():
    """No pickles in a model file (loading one would need ``allow_pickle=True``, which runs
    code from the file): an object array is refused, not written as a pickle that
    ``load_model``'s ``allow_pickle=False`` could not read back."""
    with pytest.raises(ValueError, match="Object arrays cannot be saved when allow_pickle=False"):
        npz_bytes({"block": np.arange(3.0), "meta": np.array([{"format": "x"}], dtype=object)})
