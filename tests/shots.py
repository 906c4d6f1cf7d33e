"""Rendered test photos shared by the suite's processes within one run.

A few photos are rendered by more than one test (raycast mounted 14 by three
modules, synth phone 5 by three), and pytest-xdist sends those tests to either
process: each rendered its own (about 40 s of the suite's CPU). The suite's
first process makes a folder for the run (``pytest_configure`` in
tests/conftest.py, named in ``COMPANION_TEST_SHOTS``, which its workers
inherit, removed at the end); a photo rendered once is stored there and read
back by the next test that asks. Each call returns objects of its own, so a
test that changes its photo changes no other test's. Outside a test run (the
variable unset, as in ``make eval-sets``) every photo is rendered.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

#: the environment variable naming the run's folder
VARIABLE = "COMPANION_TEST_SHOTS"


def shared(key: tuple[Any, ...], render: Callable[[], T]) -> T:
    """``render()``, or what it returned for ``key`` earlier in this run.

    ``key`` holds every input of the render (its ``repr`` names the file), so
    two renders that could differ never share a file."""
    folder = os.environ.get(VARIABLE)
    if not folder or not Path(folder).is_dir():
        return render()
    name = hashlib.sha256(repr(key).encode()).hexdigest()[:32] + ".pickle"
    path = Path(folder) / name
    try:
        with path.open("rb") as f:
            out: T = pickle.load(f)
        return out
    except FileNotFoundError:
        pass
    data = pickle.dumps(render(), protocol=pickle.HIGHEST_PROTOCOL)
    # written whole under another name first: another process never reads half a file
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".part")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    # the first caller gets a copy made from the same bytes as the later ones: every
    # test sees its photo alike (arrays contiguous and writable) whichever ran first
    fresh: T = pickle.loads(data)
    return fresh
