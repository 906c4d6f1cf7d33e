"""ChArUco calibration on synthetic views; true-size printable sheets."""

from __future__ import annotations

import json
import re

import cv2
import numpy as np
import pytest

from calibration import file as calfile
from calibration.charuco import CalibrationError, CharucoSpec, calibrate, sheet_image
from calibration.printing import marker_sheet, write_pdf
from companion.profiles import load_profile

K_TRUE = np.array([[900.0, 0, 640], [0, 900.0, 360], [0, 0, 1]])


PX_MM = 4.0  # the rendered sheet's pixels per millimetre


def _sheet() -> tuple[np.ndarray, float, float, float]:
    """The ChArUco sheet at PX_MM with a 40 px white border; its margin and size in mm."""
    spec = CharucoSpec()
    px_mm = PX_MM
    w_mm, h_mm = spec.size_mm
    sheet = spec.board().generateImage((round(w_mm * px_mm), round(h_mm * px_mm)), marginSize=0)
    sheet = cv2.copyMakeBorder(sheet, 40, 40, 40, 40, cv2.BORDER_CONSTANT, value=255)
    return sheet, 40 / px_mm, w_mm, h_mm


def _views(n: int, seed: int):
    rng = np.random.default_rng(seed)
    sheet, m, w_mm, h_mm = _sheet()
    corners_px = np.float32([[0, 0], [sheet.shape[1], 0], [sheet.shape[1], sheet.shape[0]],
                             [0, sheet.shape[0]]])
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


def _spread_views(n: int, seed: int, dist=(0.0, 0.0, 0.0, 0.0, 0.0), size=(1280, 720)):
    """Views of the sheet around the picture (a ring from its middle: the corners reach
    77% of it) through K_TRUE and the lens ``dist``, each pixel looked up through the
    lens (so a distorted lens bends the sheet's lines as a real one does)."""
    rng = np.random.default_rng(seed)
    sheet, m, w_mm, h_mm = _sheet()
    dist = np.asarray(dist, np.float64)
    xs, ys = np.meshgrid(np.arange(size[0], dtype=np.float32),
                         np.arange(size[1], dtype=np.float32))
    pixels = np.stack([xs.ravel(), ys.ravel()], 1).reshape(-1, 1, 2)
    ideal = cv2.undistortPoints(pixels, K_TRUE, dist, P=K_TRUE).reshape(-1, 2)
    ideal = np.column_stack([ideal, np.ones(len(ideal))])
    views = []
    for i in range(n):
        turn = 2 * np.pi * i / n
        rvec = np.array([rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4), rng.uniform(-0.3, 0.3)])
        z = rng.uniform(380, 480)
        tvec = np.array([-w_mm / 2 + np.cos(turn) * 0.55 * size[0] / 2 * z / K_TRUE[0, 0],
                         -h_mm / 2 + np.sin(turn) * 0.6 * size[1] / 2 * z / K_TRUE[1, 1], z])
        R, _ = cv2.Rodrigues(rvec)
        H = K_TRUE @ np.column_stack([R[:, 0], R[:, 1], tvec])  # sheet mm -> ideal pixels
        mm = ideal @ np.linalg.inv(H).T
        mm = mm[:, :2] / mm[:, 2:3]
        map_x = ((mm[:, 0] + m) * PX_MM).reshape(size[1], size[0]).astype(np.float32)
        map_y = ((mm[:, 1] + m) * PX_MM).reshape(size[1], size[0]).astype(np.float32)
        views.append(cv2.remap(sheet, map_x, map_y, cv2.INTER_LINEAR, borderValue=128))
    return views


def _corner_shift(camera_matrix, dist, size=(1280, 720)) -> float:
    """How far undistorting moves the picture's corners (px): 0 for a lens without
    distortion."""
    w, h = size
    pts = np.array([[[0, 0]], [[w, 0]], [[0, h]], [[w, h]]], np.float64)
    und = cv2.undistortPoints(pts, camera_matrix, np.asarray(dist, np.float64), P=camera_matrix)
    return float(np.hypot(*(und - pts).reshape(-1, 2).T).max())


def test_charuco_calibration_recovers_the_focal_length():
    cal = calibrate(_spread_views(10, seed=1))
    assert cal.views == 10
    assert cal.rms < 0.5
    assert abs(cal.camera_matrix[0, 0] - 900) / 900 < 0.01
    assert abs(cal.camera_matrix[1, 1] - 900) / 900 < 0.01
    assert abs(cal.camera_matrix[0, 2] - 640) < 10
    js = cal.to_json()
    assert len(js["dist_coeffs"]) == 5 and js["image_size"] == [1280, 720]
    assert js["coverage"] == 0.771  # 37 of the 48 parts of the picture


def test_k3_is_held_at_zero_unless_freed():
    """k3 ran away: a lens without distortion, fitted from views that reach 77% of the
    picture, got k3 = -0.02 (and from views near its middle 3.33, corners moved 324 px)."""
    views = _spread_views(10, seed=1)
    cal = calibrate(views)
    assert cal.dist_coeffs[4] == 0.0
    assert _corner_shift(cal.camera_matrix, cal.dist_coeffs) < 3.0
    free = calibrate(views, free_k3=True)
    assert free.dist_coeffs[4] != 0.0


def test_a_distorted_lens_is_recovered_with_k3_held():
    truth = (-0.12, 0.05, 0.0, 0.0, 0.0)
    cal = calibrate(_spread_views(10, seed=2, dist=truth))
    assert cal.dist_coeffs[4] == 0.0
    assert abs(cal.dist_coeffs[0] - truth[0]) < 0.01
    assert abs(_corner_shift(cal.camera_matrix, cal.dist_coeffs)
               - _corner_shift(K_TRUE, truth)) < 3.0


def test_views_near_the_middle_of_the_picture_are_refused():
    """Eight views near the picture's middle gave k3 = 3.33 at an rms of 0.32 px."""
    with pytest.raises(CalibrationError) as exc:
        calibrate(_views(8, seed=1))
    assert str(exc.value) == (
        "the ChArUco corners reach 27% of the picture (13 of its 8 x 6 parts); at least 50% "
        "are needed, or the lens's distortion toward the edges is a guess: add photos with "
        "the sheet near the picture's corners and edges")


def test_calibrate_camera_command_holds_k3_and_says_the_coverage(tmp_path, capsys) -> None:
    from companion.cli import main

    spread, middle = tmp_path / "spread", tmp_path / "middle"
    for folder, views in ((spread, _spread_views(10, seed=1)), (middle, _views(8, seed=1))):
        folder.mkdir()
        for n, view in enumerate(views):
            cv2.imwrite(str(folder / f"view{n:02d}.png"), view)
    assert main(["calibrate", "camera", str(spread), "--json"]) == 0
    held = json.loads(capsys.readouterr().out)
    assert held["dist_coeffs"][4] == 0.0 and held["coverage"] == 0.771
    assert main(["calibrate", "camera", str(spread), "--json", "--free-k3"]) == 0
    assert json.loads(capsys.readouterr().out)["dist_coeffs"][4] != 0.0
    assert main(["calibrate", "camera", str(middle), "--out", str(tmp_path / "cam.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("companion calibrate: the ChArUco corners reach 27% of the picture")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "cam.json").exists()


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
