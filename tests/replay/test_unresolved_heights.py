"""A height the photo cannot tell is still evidence for the replay.

SimTable seed 2 (the mounted camera at 78 degrees), a still photo after each of
its first five moves. Manhattan NW lies near the point under the camera, where a
storey moves a top by under 2 mm of placement: the reader reports it unseen and
lists its guess as ``unresolved`` (after the fifth move, 3 red storeys for the 5
there). The replay, which knows a block went there, weighs the guess as the
reader had it before it told it apart (doubtful only if it won narrowly); from
the fixed camera each build is also fitted to what changed, and every move
comes out right (dropping the guesses, it recorded the red build there as two
storeys instead of three).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.commands import read_folder
from companion.replay import replay
from companion.rules import Site, SiteView
from companion.rules.record import config_from_json
from companion.vision.reader import load_image, read_image
from tests.replay.test_fixed_camera import _stills

NW = Site(2, 0, 0)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("steep")
    return root, _stills(root, 2, 5)


def test_the_reading_lists_the_guess_apart(folder):
    root, _ = folder
    config = config_from_json(json.loads((root / "game.json").read_text()))
    reading = read_image(load_image(root / "005.png"), None, list(config.colors))
    assert NW in reading.unseen and NW not in reading.sites
    assert reading.unresolved[NW] == SiteView(3, "red")
    assert {"city": 2, "row": 0, "col": 0, "height": 3, "owner": "red",
            "doubtful": False, "reason": "steep"} in reading.to_json()["unresolved"]


def test_the_replay_weighs_the_guesses_as_readings(folder):
    root, truth = folder
    config = config_from_json(json.loads((root / "game.json").read_text()))
    alone, skipped, _ = read_folder(root, None, list(config.colors), workers=1,
                                    fixed_camera=False)
    assert skipped == []
    last = alone[-1]
    assert last.sites[NW] == SiteView(3, "red")
    # read as before the reader told it apart: its margin was not narrow
    assert NW not in last.unseen and NW not in last.doubtful
    fixed, _, _ = read_folder(root, None, list(config.colors), workers=1, fixed_camera=True)
    assert [m["notation"] for m in replay(fixed, config).moves] == truth
