"""The suite's shared photos (tests/shots.py): one render per key and run, and each
caller its own copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.shots import VARIABLE, shared


def test_a_photo_is_rendered_once_and_each_caller_gets_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, str(tmp_path))
    calls: list[int] = []

    def render(seed: int) -> tuple[np.ndarray, dict[str, int]]:
        calls.append(seed)
        return np.full((2, 3), seed, np.uint8), {"seed": seed}

    first = shared(("t", 1), lambda: render(1))
    first[0][0, 0] = 99  # a test that changes its photo changes no other test's
    again = shared(("t", 1), lambda: render(1))
    other = shared(("t", 2), lambda: render(2))
    assert calls == [1, 2]
    assert again[0].tolist() == [[1, 1, 1], [1, 1, 1]] and again[1] == {"seed": 1}
    assert other[0].tolist() == [[2, 2, 2], [2, 2, 2]]
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".pickle", ".pickle"]


def test_without_the_runs_folder_every_photo_is_rendered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    calls: list[int] = []
    for _ in range(2):
        shared(("t", 1), lambda: calls.append(1))
    assert calls == [1, 1]
