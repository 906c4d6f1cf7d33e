"""One BLAS thread for the reader.

The reader's matrix products are small (a few thousand rows by 3 to 22
columns): OpenBLAS's worker threads cost more to wake, and spin far longer,
than the products take, which roughly halves the site stage's speed on a
busy two-core machine. Results do not depend on the thread count (products
are split by rows, never along a sum). Linux only; elsewhere, or with a BLAS
it does not know, nothing changes.
"""

from __future__ import annotations

import ctypes
import sys

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_done: set[int] = set()


def limit_blas_threads(n: int = 1) -> bool:
    """Set every loaded OpenBLAS to ``n`` threads (once per n); True if one was found."""
    if n < 1 or not sys.platform.startswith("linux"):
        return False
    if n in _done:
        return True
    import numpy  # noqa: F401  (loads numpy's BLAS)

    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            paths = sorted({ln.split()[-1] for ln in fh
                            if "openblas" in ln.lower() and ".so" in ln})
    except OSError:
        return False
    found = False
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn.restype = None
                fn(int(n))
                found = True
                break
    if found:
        _done.clear()
        _done.add(n)
    return found
