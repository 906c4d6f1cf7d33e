"""The suite's header names the numpy and OpenCV it runs on, and says when they are not
the versions ``constraints.txt`` pins: the vision tests pin exact readings, and another
OpenCV moves some of them (docs/vision-errors.md, fifty-third session). A failure
there under other versions is the versions' before it is the reader's."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

from tests.shots import VARIABLE

CONSTRAINTS = Path(__file__).resolve().parents[1] / "constraints.txt"


def pinned_versions(text: str) -> dict[str, str]:
    """``name==version`` lines of a constraints file (comments and ranges left out)."""
    out = {}
    for line in text.splitlines():
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s#;]+)\s*(;[^#]*)?(#.*)?", line)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def version_notes(pinned: dict[str, str]) -> list[str]:
    """One line of the versions in use, and one per pinned package that differs."""
    lines, have = [], {}
    for name in sorted(pinned):
        try:
            have[name] = version(name)
        except PackageNotFoundError:
            have[name] = "not installed"
    lines.append("pinned packages: " + ", ".join(f"{n} {v}" for n, v in have.items()))
    lines += [f"note: {n} is {have[n]}, not {v} as constraints.txt pins: exact readings "
              "may differ (make test installs the pinned versions)"
              for n, v in pinned.items() if have[n] != v]
    return lines


@cache
def _notes() -> tuple[str, ...]:
    """The header's lines, made once for the header and the summary."""
    if not CONSTRAINTS.exists():
        return ()
    return tuple(version_notes(pinned_versions(CONSTRAINTS.read_text(encoding="utf-8"))))


#: the run's folder of shared photos, in the process that made it
_SHOTS = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    # the run's folder of shared photos (tests/shots.py): made by the first process,
    # before pytest-xdist starts its workers, which inherit the variable
    if not os.environ.get(VARIABLE):
        folder = tempfile.mkdtemp(prefix="companion-shots-")
        os.environ[VARIABLE] = folder
        config.stash[_SHOTS] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_SHOTS, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(VARIABLE, None)


def pytest_report_header() -> list[str]:
    return list(_notes())


def pytest_terminal_summary(terminalreporter: Any) -> None:
    # at the end too, where a quiet run (the suite's -q) shows it beside the failures
    for line in _notes():
        if line.startswith("note:"):
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def classic_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A 1994 two-player bot game, six builds photographed (no game.json): the replay's
    and the page upload's colour check (tests/replay/test_colour_mismatch.py)."""
    from tests.replay.photogame import play, shoot

    game = play(2, 5, turns=6)
    folder = tmp_path_factory.mktemp("classic")
    names = shoot(game, folder, range(len(game.states)), seed=5, game_json=False)
    assert game.config.edition.name == "classic"
    return folder, names
