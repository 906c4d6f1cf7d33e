"""`companion calibrate leds` end to end: the simulated board shows the fake strip's
lit LEDs (two frames late, as a camera's pipeline delivers them), the command maps
them and writes the LED map `run` and `doctor` take."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from companion.cli import main
from companion.commands import _doctor_ledmap
from hardware.leds.ledmap import LedMap, edges, serpentine


def _calibrate(*options: str) -> int:
    return main(["calibrate", "leds", "--leds", "fake", *options])


def test_the_simulated_table_is_mapped_end_to_end(tmp_path: Path, capsys) -> None:
    """Advertised ("mapped by companion calibrate leds"), but the command had only
    `camera` and `sheets`."""
    assert _calibrate("--camera", "sim", "--data-dir", str(tmp_path), "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary.pop("pose_error_px") < 1.0
    path = tmp_path / "ledmap.json"
    assert summary == {
        "ledmap": str(path), "count": 58, "shared_leds": 0,
        "seats": {"S": [54], "W": [55], "N": [56], "E": [57]},
        "markers": [0, 1, 2, 3], "intrinsics": "estimated", "elevation_deg": 58.0,
        # 15 for the dark picture, then each LED: lit after 3, one more, dark after 3
        "frames": 15 + 58 * 7}
    mapped = LedMap.load(path)  # as `companion run --ledmap` loads it
    assert mapped.sites == serpentine().sites
    assert dict(mapped.seats) == dict(serpentine().seats)
    assert (mapped.layout, mapped.description) == ("calibrated",
                                                   "mapped by companion calibrate leds")
    assert _doctor_ledmap(str(path)) == {"ok": True, "name": str(path), "count": 58}


def test_run_and_doctor_take_the_data_folders_mapped_strip(tmp_path: Path, capsys) -> None:
    """The map written to the data folder is the one the table uses, as its calibration
    file is: the README asked for a systemd drop-in naming it, or the table lit the
    built-in layout's LEDs on a strip wired otherwise."""
    from companion.commands import ledmap_spec

    assert ledmap_spec(None, str(tmp_path)) == "serpentine"
    assert _calibrate("--camera", "sim:edges", "--count", "40", "--data-dir",
                      str(tmp_path)) == 0
    path = tmp_path / "ledmap.json"
    assert capsys.readouterr().out.endswith(
        f"; wrote {path}: companion run and doctor with --data-dir {tmp_path} use it\n")
    assert ledmap_spec(None, str(tmp_path)) == str(path)
    assert ledmap_spec("serpentine", str(tmp_path)) == "serpentine"  # named: as named
    assert main(["doctor", "--camera", "fake", "--leds", "fake", "--buttons", "none",
                 "--data-dir", str(tmp_path), "--frames", "2", "--json"]) in (0, 1)
    report = json.loads(capsys.readouterr().out)
    assert report["ledmap"] == {"ok": True, "name": str(path), "count": 40}


def test_row_and_column_leds_with_the_calibrated_lens(tmp_path: Path, capsys) -> None:
    from companion.sim.ledtable import LedTableView

    lens = LedTableView(lambda: None, edges(), lag=0).camera.to_json()
    (tmp_path / "calibration.json").write_text(json.dumps(
        {"format": "companion-calibration/1", "camera": lens}), encoding="utf-8")
    out = tmp_path / "edges.json"
    assert _calibrate("--camera", "sim:edges", "--count", "40", "--data-dir", str(tmp_path),
                      "--out", str(out)) == 0
    assert capsys.readouterr().out == (
        f"mapped 40 LEDs to the 54 sites (36 lighting a row or column) and seats S [36], "
        f"W [37], N [38], E [39]; wrote {out}: use it with companion run --ledmap {out}\n")
    assert LedMap.load(out).sites == edges().sites
    assert _calibrate("--camera", "sim:edges", "--count", "40", "--data-dir", str(tmp_path),
                      "--out", str(out), "--json") == 0
    assert json.loads(capsys.readouterr().out)["intrinsics"] == "calibrated"


@pytest.mark.parametrize(("options", "message"), [
    (["--camera", "fake"],
     "no board found: the camera sees 0 of the 4 board markers, and at least two are "
     "needed; aim the camera at the whole board and light it"),
    (["--camera", "sim", "--count", "60"],
     "2 of the 60 LEDs never lit up in the camera's picture (LED 58, 59): check the "
     "strip's wiring and power, --count, and that the camera sees where they shine"),
    (["--camera", "sim", "--leds", "spi"],
     "spidev not importable: import of spidev halted; None in sys.modules (pip install "
     "spidev (the [pi] extra))"),
    (["--camera", "picamera2"],
     "picamera2 not importable: import of picamera2 halted; None in sys.modules (install "
     "python3-picamera2 with apt and create the venv with --system-site-packages)"),
    (["--camera", "sim", "--calibration", "{dir}/none.json"],
     "{dir}/none.json: no such calibration file"),
    (["--camera", "sim", "--out", "{dir}/no/ledmap.json"],
     "--out {dir}/no/ledmap.json: no folder {dir}/no to write it in"),
    (["--camera", "sim:spiral"],
     "unknown LED layout 'spiral': expected one of serpentine, edges"),
])
def test_what_cannot_be_mapped_is_one_line(tmp_path: Path, capsys, monkeypatch,
                                           options: list[str], message: str) -> None:
    monkeypatch.setitem(sys.modules, "spidev", None)
    monkeypatch.setitem(sys.modules, "picamera2", None)
    argv = [o.format(dir=tmp_path) for o in options]
    assert _calibrate(*argv, "--data-dir", str(tmp_path)) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"companion calibrate: {message.format(dir=tmp_path)}\n"
    assert not (tmp_path / "ledmap.json").exists()
