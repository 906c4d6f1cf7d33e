"""A file named on the command line or in a config: there, and a regular file.

A pipe would hold its reader until a writer came, and ``/dev/zero`` never ends:
the commands and the reader open only regular files, each refusal one line.
"""

from __future__ import annotations

import errno
import stat
from pathlib import Path

#: the errors for which Path.exists() says a file is not there
_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def input_size(path: str | Path, what: str, error: type[Exception] = ValueError) -> int:
    """The size of the regular file at ``path``, or ``error("PATH: why")``: no such file,
    a folder (not ``what``), a device or a pipe, or it cannot be looked at (a name too
    long, say)."""
    try:
        st = Path(path).stat()
    except OSError as exc:
        if exc.errno in _MISSING:
            raise error(f"{path}: no such file") from None
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{path}: is a folder, not {what}")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: not a regular file (a device or a pipe)")
    return st.st_size
