"""Model archives (``.npz``) whose bytes are a function of their arrays only.

A model file's SHA-256 is its identity (datasets and reports record it), so the file must be a
function of what it holds: :func:`numpy.savez` dates every zip member with the current time, and
two trainings with the same settings and seed a second apart gave different files.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # the date of every member of a simkit .npz: the bytes never depend on when


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """The bytes of an uncompressed ``.npz`` archive holding ``arrays`` (name -> array; member
    ``NAME.npy``, in the order given), as :func:`numpy.savez` writes it except that every
    member is dated :data:`ZIP_EPOCH`: ``numpy.savez`` dates them now, so two runs of the same
    training a second apart gave different model files and digests.  No pickled objects.

    >>> import numpy as np
    >>> a = npz_bytes({"x": np.arange(3.0)})
    >>> a == npz_bytes({"x": np.arange(3.0)}), np.load(io.BytesIO(a))["x"].tolist()
    (True, [0.0, 1.0, 2.0])
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_STORED
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    return buffer.getvalue()
