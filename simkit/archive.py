"""Model archives (``.npz``) whose bytes are a function of their arrays only.

A model file's SHA-256 is its identity (datasets and reports record it), so the file must be a
function of what it holds, never of when it was written.  A zip member carries a date;
:func:`numpy.savez` leaves it to :mod:`zipfile`, whose ``ZipFile.open(name, "w")`` dates a
member 1980-01-01 today (numpy 2.4, Python 3.11: the shipped models, written by ``np.savez``,
carry that date), while ``ZipFile.writestr`` and ``ZipFile.write`` date it by the clock or the
file's time (older numpy wrote each member through a temporary file, dated by that file).
:func:`npz_bytes` fixes the date itself, so a model's bytes depend on no numpy or zipfile
default: it writes what ``np.savez`` writes today, byte for byte (``tests/test_archive.py``).
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # the date of every member of a simkit .npz: the bytes never depend on when
ZIP_UNIX = 3  # the "made by" system of every member: zipfile writes 0 on Windows, 3 elsewhere
ZIP_MODE = 0o600 << 16  # every member's Unix permissions (zipfile's default for a written member)


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    """The bytes of an uncompressed ``.npz`` archive holding ``arrays`` (name -> array; member
    ``NAME.npy``, in the order given, each zip64-ready as numpy's), as :func:`numpy.savez`
    writes it on Linux, every member explicitly dated :data:`ZIP_EPOCH` and made by Unix with
    mode 0600 (no time or operating system enters the bytes, whatever numpy's or zipfile's
    default).  No pickled objects; :func:`numpy.load` reads it.

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
            info.create_system, info.external_attr = ZIP_UNIX, ZIP_MODE  # the same bytes on every system
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    return buffer.getvalue()
