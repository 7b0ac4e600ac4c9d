"""Read numpy's .npy files without numpy: a memoryview over the file's data.

The hook's recall searches the small indexes (the bundled cards, a project's learned cards) in pure
Python (sentinel.memory.retrieval.small), because importing numpy costs more than the whole search. The
index files stay the .npy files numpy writes (format 1.0-3.0: a magic string, a version, a header
length, a header that is a Python dict literal, then the raw array in C or Fortran order); this module reads
the little-endian 1-D and 2-D arrays of the dtypes an index holds, and refuses anything else
with a ValueError naming the file.
"""

from __future__ import annotations

import ast
import mmap
import os
import struct
import sys
from pathlib import Path

MAGIC = b"\x93NUMPY"
# numpy dtype descr -> memoryview format (native sizes; the data length is checked against them)
_FORMATS = {"<i8": "q", "<i4": "i", "<u2": "H", "<f4": "f", "<f8": "d", "|i1": "b", "|u1": "B", "|b1": "?"}
MAP_ABOVE = 1 << 16  # larger files are mapped: a query reads a few pages of them
MAX_HEADER = 1 << 16


class NpyArray:
    """A 1-D or 2-D array: `data` is a flat memoryview of its elements in file order (C order, or
    column by column when `fortran`), `shape` its shape."""

    __slots__ = ("data", "fortran", "shape")

    def __init__(self, data: memoryview, shape: tuple[int, ...], fortran: bool = False):
        self.data = data
        self.shape = shape
        self.fortran = fortran

    def __len__(self) -> int:
        return self.shape[0]

    def row(self, i: int) -> memoryview:
        """Row i of a 2-D array (a view, no copy)."""
        rows, cols = self.shape
        return self.data[i::rows] if self.fortran else self.data[i * cols:(i + 1) * cols]

    def column(self, j: int) -> memoryview:
        """Column j of a 2-D array (a view, no copy)."""
        rows, cols = self.shape
        return self.data[j * rows:(j + 1) * rows] if self.fortran else self.data[j::cols]


def load(path: str | Path) -> NpyArray:
    path = Path(path)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAP_ABOVE:
            raw = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
        else:
            raw = memoryview(fh.read())
    if bytes(raw[:6]) != MAGIC or len(raw) < 10:
        raise ValueError(f"{path} is not a .npy file")
    major = raw[6]
    if major == 1:
        hlen, start = int.from_bytes(raw[8:10], "little"), 10
    elif major in (2, 3):
        hlen, start = int.from_bytes(raw[8:12], "little"), 12
    else:
        raise ValueError(f"{path}: unsupported .npy version {major}")
    if hlen > MAX_HEADER:  # numpy itself refuses headers above 10,000 bytes unless told otherwise
        raise ValueError(f"{path}: a .npy header of {hlen} bytes")
    try:
        header = ast.literal_eval(bytes(raw[start:start + hlen]).decode("latin-1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], tuple(int(d) for d in header["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise ValueError(f"{path}: unreadable .npy header") from None
    fmt = _FORMATS.get(descr)
    if fmt is None or len(shape) > 2 or sys.byteorder != "little":
        raise ValueError(f"{path}: array {descr} {shape} is not one this reader takes")
    count = 1
    for d in shape:
        count *= d
    data = raw[start + hlen:]
    if len(data) != count * struct.calcsize(fmt):
        raise ValueError(f"{path}: {len(data)} bytes of data for shape {shape}")
    return NpyArray(data.cast(fmt), shape if shape else (1,), bool(fortran) and len(shape) == 2)
