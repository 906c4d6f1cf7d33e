"""`companion doctor` tells how steeply the camera looks at the board, and advises.

Heights are read worst from a steep camera (a storey barely moves a top) and
towers hide the most from a low one (docs/vision-errors.md, by elevation).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration import file as calfile
from companion.cli import main
from companion.commands import view_of_board
from companion.sim import sample_photo
from companion.vision.geometry import (
    Pose,
    board_geometry,
    good_elevation,
    intrinsics_for_fov,
    look_at_pose,
)


def _markers(pose: Pose) -> dict[int, np.ndarray]:
    g = board_geometry()
    return {i: pose.project(g.marker_corners(i)) for i in g.marker_centres}


@pytest.mark.parametrize(("elevation", "advice"), [
    (80.0, "the camera looks down at 80 degrees: from so steep a view a storey more or less "
           "barely moves a tower's top, and many heights go unread; tilt it to 45-70 degrees "
           "(50-65 is best)"),
    (58.0, None),
    (40.0, "the camera looks at the board from 40 degrees: tall towers hide the sites behind "
           "them; raise it to 45-70 degrees (50-65 is best)"),
])
def test_the_view_is_measured_from_the_markers(elevation: float, advice: str | None) -> None:
    pose = look_at_pose(intrinsics_for_fov((1280, 720), 64.0), 950.0, elevation, 33.0,
                        (15.0, -10.0, 0.0), 1.5)
    view = view_of_board(_markers(pose), (720, 1280, 3))
    assert view["elevation_deg"] == pytest.approx(elevation, abs=0.5)
    assert view.get("view_advice") == advice
    assert view["intrinsics"] == "estimated"
    assert good_elevation() == ((45.0, 70.0), (50.0, 65.0))  # the board profile's


def test_doctor_prints_the_elevation_and_stays_ok_with_a_poor_view(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    shot = sample_photo(5, "mounted")  # a camera at 79 degrees
    cv2.imwrite(str(tmp_path / "frame.png"), shot.image)
    R = cv2.Rodrigues(np.array(shot.truth["pose"]["rvec"]))[0]
    truth = float(np.degrees(np.arcsin(abs(R[2, 2]))))
    code = main(["doctor", "--camera", f"folder:{tmp_path}", "--leds", "fake",
                 "--buttons", "fake", "--frames", "2", "--json",
                 "--data-dir", str(tmp_path / "nothing-here")])
    report = json.loads(capsys.readouterr().out)
    markers = report["markers"]
    assert markers["ok"] and len(markers["visible"]) >= 2
    assert markers["elevation_deg"] == pytest.approx(truth, abs=1.0)
    assert truth == pytest.approx(79.2, abs=0.1)
    assert [a for a in report.get("advice", []) if "degrees" in a] == [
        "the camera looks down at 79 degrees: from so steep a view a storey more or less "
        "barely moves a tower's top, and many heights go unread; tilt it to 45-70 degrees "
        "(50-65 is best)"]
    assert code == 0 and report["ok"]  # advice about the view is no failure
    # the photo files a replay reads here, iPhone's HEIC among them
    assert report["photos"]["ok"] and ".heic" in report["photos"]["suffixes"]
    assert report["photos"]["heic"].startswith("pillow-heif ")


def _doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
            ) -> tuple[int, dict]:
    code = main(["doctor", "--camera", f"folder:{tmp_path / 'frames'}", "--leds", "fake",
                 "--buttons", "fake", "--frames", "2", "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_doctor_measures_the_view_with_the_calibrated_lens(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the calibration file `companion run` uses, the lens is not guessed."""
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    shot = sample_photo(5, "mounted")
    (tmp_path / "frames").mkdir()
    cv2.imwrite(str(tmp_path / "frames" / "frame.png"), shot.image)
    R = cv2.Rodrigues(np.array(shot.truth["pose"]["rvec"]))[0]
    truth = float(np.degrees(np.arcsin(abs(R[2, 2]))))
    data = tmp_path / "data"
    data.mkdir()
    calfile.update(data / "calibration.json", "camera", shot.truth["camera"])
    code, report = _doctor(tmp_path, capsys, "--data-dir", str(data))
    assert report["calibration"] == {"ok": True, "file": str(data / "calibration.json"),
                                     "camera": "calibrated"}
    assert report["markers"]["intrinsics"] == "calibrated"
    assert report["markers"]["elevation_deg"] == pytest.approx(truth, abs=0.3)
    assert code == 0
    # no file: estimated, and said so
    code, report = _doctor(tmp_path, capsys, "--calibration", str(tmp_path / "none.json"))
    assert report["calibration"]["camera"] == "not calibrated: intrinsics estimated"
    assert report["markers"]["intrinsics"] == "estimated"
    assert code == 0


@pytest.mark.parametrize(("text", "error"), [
    ("{", "malformed JSON at line 1"),
    (json.dumps({"format": calfile.FORMAT, "camera": {"dist_coeffs": [0, 0, 0, 0, 0]}}),
     "malformed camera JSON"),
    (json.dumps({"format": calfile.FORMAT, "camera": [1, 2]}),
     "malformed camera JSON: expected an object, got list"),
    (json.dumps({"format": 1}), "not a calibration file"),
])
def test_a_broken_calibration_file_is_a_problem_not_a_crash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        text: str, error: str) -> None:
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    (tmp_path / "frames").mkdir()
    cv2.imwrite(str(tmp_path / "frames" / "frame.png"), sample_photo(5, "mounted").image)
    bad = tmp_path / "calibration.json"
    bad.write_text(text)
    code, report = _doctor(tmp_path, capsys, "--calibration", str(bad))
    cal = report["calibration"]
    assert not cal["ok"] and error in cal["error"] and "\n" not in cal["error"]
    assert f"the calibration file cannot be used: {cal['error']}" in report["advice"]
    assert report["markers"]["intrinsics"] == "estimated"  # the view is still measured
    assert code == 1 and not report["ok"]


def test_a_profile_without_camera_advice_gives_none() -> None:
    assert good_elevation({"name": "bare"}) == ((0.0, 90.0), (0.0, 90.0))
    assert good_elevation({"camera_advice": {"good_elevation_deg": [40, 75]}}) == (
        (40.0, 75.0), (40.0, 75.0))
