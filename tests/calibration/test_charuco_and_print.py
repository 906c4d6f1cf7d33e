"""ChArUco calibration on synthetic views; true-size printable sheets."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest

from calibration import file as calfile
from calibration.charuco import CalibrationError, CharucoSpec, calibrate, sheet_image
from calibration.printing import marker_sheet, write_pdf
from companion.profiles import load_profile

K_TRUE = np.array([[900.0, 0, 640], [0, 900.0, 360], [0, 0, 1]])


def _views(n: int, seed: int):
    rng = np.random.default_rng(seed)
    spec = CharucoSpec()
    px_mm = 4.0
    w_mm, h_mm = spec.size_mm
    sheet = spec.board().generateImage((round(w_mm * px_mm), round(h_mm * px_mm)), marginSize=0)
    sheet = cv2.copyMakeBorder(sheet, 40, 40, 40, 40, cv2.BORDER_CONSTANT, value=255)
    corners_px = np.float32([[0, 0], [sheet.shape[1], 0], [sheet.shape[1], sheet.shape[0]],
                             [0, sheet.shape[0]]])
    m = 40 / px_mm
    corners_mm = np.float32([[-m, -m, 0], [w_mm + m, -m, 0], [w_mm + m, h_mm + m, 0],
                             [-m, h_mm + m, 0]])
    views = []
    for _ in range(n):
        rvec = np.array([rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), rng.uniform(-0.3, 0.3)])
        tvec = np.array([-w_mm / 2 + rng.uniform(-20, 20), -h_mm / 2 + rng.uniform(-20, 20),
                         rng.uniform(380, 520)])
        img_pts, _ = cv2.projectPoints(corners_mm, rvec, tvec, K_TRUE, None)
        H = cv2.getPerspectiveTransform(corners_px, img_pts.reshape(4, 2).astype(np.float32))
        view = cv2.warpPerspective(sheet, H, (1280, 720), borderValue=128)
        views.append(view)
    return views


def test_charuco_calibration_recovers_the_focal_length():
    cal = calibrate(_views(8, seed=1))
    assert cal.views >= 6
    assert cal.rms < 1.0
    assert abs(cal.camera_matrix[0, 0] - 900) / 900 < 0.03
    assert abs(cal.camera_matrix[1, 1] - 900) / 900 < 0.03
    assert abs(cal.camera_matrix[0, 2] - 640) < 25
    js = cal.to_json()
    assert len(js["dist_coeffs"]) == 5 and js["image_size"] == [1280, 720]


def test_too_few_views_is_a_clear_error():
    blank = [np.full((720, 1280), 200, np.uint8)] * 3
    with pytest.raises(CalibrationError, match=r"found in 0 view\(s\); at least 5"):
        calibrate(blank)


def test_sheets_are_true_size():
    dpi = 300
    page = sheet_image(dpi=dpi)
    assert page.shape == (round(210 / 25.4 * dpi), round(297 / 25.4 * dpi))
    sheet = marker_sheet(load_profile(), dpi=dpi)
    det = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
    corners, ids, _ = det.detectMarkers(sheet)
    assert sorted(np.asarray(ids).reshape(-1).tolist()) == [0, 1, 2, 3]
    for c in corners:
        c = np.asarray(c).reshape(4, 2)
        side_px = np.linalg.norm(c[1] - c[0])
        assert abs(side_px / dpi * 25.4 - 40.0) < 0.5  # 40 mm markers


def test_pdf_page_is_the_paper_size(tmp_path):
    out = tmp_path / "markers.pdf"
    write_pdf(marker_sheet(load_profile(), dpi=100), out, (297.0, 210.0))
    data = out.read_bytes()
    assert data.startswith(b"%PDF-1.4")
    box = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    assert box
    assert abs(float(box.group(1)) - 841.89) < 0.01
    assert abs(float(box.group(2)) - 595.28) < 0.01
    assert data.rstrip().endswith(b"%%EOF")


def test_calibration_file_round_trip_and_errors(tmp_path):
    path = tmp_path / "cal.json"
    assert calfile.load(path)["format"] == calfile.FORMAT
    calfile.update(path, "camera", {"camera_matrix": K_TRUE.tolist()})
    assert calfile.load(path)["camera"]["camera_matrix"][0][0] == 900.0
    with pytest.raises(calfile.CalibrationFileError, match="unknown calibration section"):
        calfile.update(path, "nonsense", {})
    path.write_text("{bad")
    with pytest.raises(calfile.CalibrationFileError, match="malformed JSON at line 1"):
        calfile.load(path)


@pytest.mark.parametrize("args, message", [
    (["--dpi", "0"], "companion calibrate: error: argument --dpi: must be 1 or more, got 0"),
    (["--dpi", "100000"],
     "companion calibrate: error: argument --dpi: a printer's resolution, 72-1200, got 100000"),
    (["--profile", "nope"],
     "companion calibrate: no board profile 'nope' (built in: reference-board; or a .json file)"),
    (["--profile", "{dir}/none.json"],
     "companion calibrate: {dir}/none.json: no such board profile"),
    (["--profile", "{dir}/bad.json"],
     "companion calibrate: {dir}/bad.json: not JSON (Expecting value, line 1)"),
    (["--profile", "{dir}/list.json"],
     "companion calibrate: {dir}/list.json: a board profile is a JSON object"),
    (["--profile", "{dir}/empty.json"],
     "companion calibrate: board profile {dir}/empty.json: no markers' layout (KeyError: "
     "'markers')"),
])
def test_sheets_refuse_bad_options_in_one_line(tmp_path, capsys, args, message) -> None:
    from companion.cli import main

    (tmp_path / "bad.json").write_text("nope", encoding="utf-8")
    (tmp_path / "list.json").write_text("[1]", encoding="utf-8")
    (tmp_path / "empty.json").write_text("{}", encoding="utf-8")
    argv = ["calibrate", "sheets", "--out", str(tmp_path / "out"),
            *[a.format(dir=tmp_path) for a in args]]
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        status = int(exc.code or 0)
    assert status in (1, 2)
    assert capsys.readouterr().err.strip().splitlines()[-1] == message.format(dir=tmp_path)
    assert not (tmp_path / "out" / "board-markers.png").exists()


def _png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every chunk of a PNG file, each CRC checked."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, kind
        chunks.append((kind, body))
        pos += 12 + length
    assert pos == len(data)
    return chunks


@pytest.mark.parametrize("dpi, ppm", [(150, 5906), (300, 11811)])
def test_sheet_pngs_say_their_resolution(tmp_path, capsys, dpi, ppm) -> None:
    """The PNGs had no pHYs chunk: printed "at 100%" they came out at the viewer's
    72 or 96 dpi, not true size."""
    import struct

    from companion.cli import main

    assert main(["calibrate", "sheets", "--out", str(tmp_path), "--dpi", str(dpi)]) == 0
    for name in ("board-markers", "charuco-sheet"):
        data = (tmp_path / f"{name}.png").read_bytes()
        chunks = _png_chunks(data)
        kinds = [k for k, _ in chunks]
        assert kinds.count(b"pHYs") == 1
        assert kinds.index(b"IHDR") == 0 < kinds.index(b"pHYs") < kinds.index(b"IDAT")
        body = dict(chunks)[b"pHYs"]
        assert struct.unpack(">IIB", body) == (ppm, ppm, 1)  # pixels per metre
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
        assert image.shape == (round(210 / 25.4 * dpi), round(297 / 25.4 * dpi))
