"""Bad input from a command line, found by a sweep of every command: each a one-line
error and a non-zero exit, no traceback, no hang, no gigabytes."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main

DEEP = "[" * 100000 + "]" * 100000  # json's RecursionError: a traceback everywhere


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    path = tmp_path / "deep.json"
    path.write_text(DEEP, encoding="utf-8")
    return path


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo.json"
    os.mkfifo(path)  # opening it would wait for a writer for ever
    return path


def test_score_refuses_what_is_no_board_file(tmp_path: Path, deep: Path, fifo: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:  # sparse: 190 MB of board took 1.4 GB to refuse
        fh.truncate(17 * 1024 * 1024)
    long_name = tmp_path / ("a" * 300 + ".json")
    good = tmp_path / "good.json"
    good.write_text('{"sites": []}', encoding="utf-8")
    digits = tmp_path / "digits.json"  # (Python's own words: "use sys.set_int_max_str_digits()")
    digits.write_text('{"sites": [{"city": 0, "row": 0, "col": 0, "height": 1' + "0" * 5000
                      + ', "owner": "red"}]}', encoding="utf-8")
    assert main(["score", str(deep), str(digits), str(fifo), "/dev/zero", str(big),
                 str(long_name), str(good), "--json"]) == 1
    out = capsys.readouterr()
    assert out.err.strip().splitlines() == [
        f"companion score: {deep}: malformed JSON: nested too deeply",
        f"companion score: {digits}: malformed JSON: a number of thousands of digits",
        f"companion score: {fifo}: not a regular file (a device or a pipe)",
        "companion score: /dev/zero: not a regular file (a device or a pipe)",
        f"companion score: {big}: too large for a board (17825792 bytes; at most 16777216)",
        f"companion score: {long_name}: cannot read (File name too long)",
    ]
    assert out.out.count("\n") == 1  # the last file is still scored


def test_read_refuses_pipes_slivers_and_deep_camera_files(
        tmp_path: Path, deep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pipe = tmp_path / "photo.png"
    os.mkfifo(pipe)
    wide = tmp_path / "wide.png"
    cv2.imwrite(str(wide), np.zeros((1, 2000, 3), np.uint8))  # cv2.resize asserted
    assert main(["read", str(pipe), str(wide), "/dev/zero"]) == 1
    assert _err(capsys).splitlines() == [
        f"companion read: {pipe}: not a regular file (a device or a pipe)",
        f"companion read: {wide}: too small to show a board (2000 x 1 pixels)",
        "companion read: /dev/zero: not a regular file (a device or a pipe)",
    ]
    assert main(["read", str(wide), "--camera", str(deep)]) == 1
    assert _err(capsys) == (f"companion read: {wide}: {deep}: not a camera file (nested "
                            "too deeply)")


def test_replay_says_a_bad_camera_file_once(tmp_path: Path, deep: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    for k in range(3):
        (photos / f"IMG_{k}.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    assert main(["replay", str(photos), "--camera", str(deep)]) == 1
    assert _err(capsys) == f"companion replay: {deep}: not a camera file (nested too deeply)"
    (photos / "game.json").write_text(DEEP, encoding="utf-8")
    assert main(["replay", str(photos)]) == 1
    assert _err(capsys) == (f"companion replay: {photos / 'game.json'}: malformed JSON: "
                            "nested too deeply")


def test_run_refuses_deep_files_before_it_starts(tmp_path: Path, deep: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    base = ["run", "--data-dir", str(tmp_path / "data"), "--camera", "fake", "--leds", "fake",
            "--buttons", "none"]
    for option, message in (("--game", f"{deep}: malformed JSON: nested too deeply"),
                            ("--calibration", f"{deep}: malformed JSON: nested too deeply"),
                            ("--ledmap", f"{deep}: not valid JSON: nested too deeply")):
        assert main([*base, option, str(deep)]) == 1
        assert _err(capsys) == f"companion run: {message}"
    assert not (tmp_path / "data").exists()


def _png_declaring(width: int, height: int) -> bytes:
    from tests.vision.test_photo_files import _png_declaring as png

    return png(width, height)


def test_calibrate_camera_skips_empty_and_huge_photos(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An empty file made OpenCV assert; a PNG declaring 20000 x 20000 took 2.9 GB: the
    reader's limits hold at full size too."""
    (tmp_path / "a.png").write_bytes(b"")
    (tmp_path / "b.png").write_bytes(_png_declaring(20000, 20000))
    assert main(["calibrate", "camera", str(tmp_path)]) == 1
    assert _err(capsys).splitlines() == [
        "companion calibrate: a.png: empty file, skipped",
        "companion calibrate: b.png: too large to read (20000 x 20000 pixels; at most "
        "64000000 once decoded), skipped",
        "companion calibrate: the ChArUco sheet was found in 0 view(s); at least 5 are needed",
    ]


@pytest.mark.parametrize(("edit", "message"), [
    ({"dictionary": "DICT_NOPE"}, "unknown ArUco dictionary 'DICT_NOPE' (e.g. DICT_4X4_50)"),
    ({"size_mm": 100000}, "markers of 100000 mm with 8 mm quiet zones do not fit four to a "
                          "297 mm page"),
    ({"size_mm": float("inf")}, "markers of inf mm with 8 mm quiet zones do not fit four to "
                                "a 297 mm page"),
    ({"centres_mm": {"0": [0, 0], "999": [1, 1]}}, "marker id 999 is not in DICT_4X4_50 (ids "
                                                   "0 to 49)"),
])
def test_calibrate_sheets_names_a_markers_layout_it_cannot_draw(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict, message: str) -> None:
    import json

    from companion.profiles import load_profile

    profile = load_profile()
    profile["markers"].update(edit)
    path = tmp_path / "board.json"
    path.write_text(json.dumps(profile), encoding="utf-8")
    assert main(["calibrate", "sheets", "--profile", str(path), "--out",
                 str(tmp_path / "out")]) == 1
    assert _err(capsys) == f"companion calibrate: board profile {path}: {message}"
    assert not list((tmp_path / "out").glob("*.pdf"))


@pytest.mark.parametrize(("argv", "message"), [
    (["play", "--bots", "2", "--seed", "-1"], "argument --seed: from 0 to 2**63-1, got -1"),
    (["replay", ".", "--workers", "0"], "argument --workers: from 1 to 64, got 0"),
    (["replay", ".", "--workers", "99999999999999999999"],
     "argument --workers: from 1 to 64, got 99999999999999999999"),
    (["run", "--threads", "100000000"], "argument --threads: from 16 to 256, got 100000000"),
    (["demo", "--threads", "0"], "argument --threads: from 16 to 256, got 0"),
    (["demo", "--speed", "1e-300"], "argument --speed: from 0.01 to 100, got 1e-300"),
    (["run", "--pin", "1"], "argument --pin: 4 to 12 digits, got '1'"),
    (["demo", "--pin", "abcd"], "argument --pin: 4 to 12 digits, got 'abcd'"),
    (["run", "--budget-ma", "1e308"], "argument --budget-ma: from 0 to 20000 mA, got 1e308"),
    (["evaluate", "--n", "0"], "argument --n: from 1 to 10000, got 0"),
    # (no upper bound rendered for ever; numpy's own words named no option)
    (["evaluate", "--n", "99999999999999999999"],
     "argument --n: from 1 to 10000, got 99999999999999999999"),
    (["evaluate", "--seed", "-5"], "argument --seed: from 0 to 2**63-1, got -5"),
    (["doctor", "--frames", "0"], "argument --frames: must be 1 or more, got 0"),
])
def test_option_values_out_of_range_are_usage_errors(
        capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    """A seed of -1 made a record `import` refuses; 0 workers read nothing and said so
    nowhere, a huge number forked until the machine stalled; a hundred million threads
    could not start; a speed of 1e-300 overflowed the clock on every step; a PIN of one
    character (or of letters a phone's number pad cannot type) was taken; 0 frames made
    doctor blame the camera."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"companion {argv[0]}: error: {message}")


@pytest.mark.parametrize(("override", "message"), [
    ('{"sites": {"max_height": 100000}}', "sites.max_height must be from 1 to 400, got 100000"),
    ('{"sites": {"depth_step_mm": NaN}}', "sites.depth_step_mm must be a finite number, got nan"),
    ('{"sites": {"print_grid": 1000}}', "sites.print_grid must be from 4 to 100, got 1000"),
    # a division by zero, 82 GB of samples, a segfault of 1,000,000 BLAS threads, an
    # OpenCV assertion on an empty map: each refused before any photo is read
    ('{"sharpness": {"step_mm": 0}}', "sharpness.step_mm must be from 0.05 to 2, got 0"),
    ('{"sites": {"depth_step_mm": 1e-09}}',
     "sites.depth_step_mm must be from 0.1 to 10, got 1e-09"),
    ('{"sites": {"blas_threads": 1000000}}',
     "sites.blas_threads must be from 1 to 16, got 1000000"),
    ('{"cards": {"px_per_mm": 0}}', "cards.px_per_mm must be from 0.5 to 10, got 0"),
])
def test_config_overrides_stay_in_range(capsys: pytest.CaptureFixture[str], override: str,
                                        message: str) -> None:
    """`evaluate --config` with sites.max_height 100000 took 20 GB before it was killed."""
    assert main(["evaluate", "--n", "1", "--config", override]) == 1
    assert _err(capsys) == f"companion evaluate: inline config: {message}"


@pytest.mark.parametrize(("argv", "message"), [
    (["replay", ""], "companion replay: give a folder of photos: companion replay DIR"),
    (["replay", "DIR", "--html", ""], "companion replay: --html needs a file name"),
    (["evaluate", "--n", "1", "--sites", ""], "companion evaluate: --sites needs a file name"),
    (["calibrate", "camera", "DIR", "--out", ""], "companion calibrate: --out needs a file name"),
    (["play", "--bots", "2", "--record", "no/such/folder/game.json"],
     "companion play: --record no/such/folder/game.json: no folder no/such/folder to write "
     "it in"),
    (["calibrate", "camera", "DIR", "--out", "no/such/folder/camera.json"],
     "companion calibrate: --out no/such/folder/camera.json: no folder no/such/folder to "
     "write it in"),
    (["play", "--bots", "2", "--record", ""], "companion play: --record needs a file name"),
    (["games", "--data-dir", ""], "companion games: --data-dir needs a folder"),
    (["export", "g1", "-o", ""], "companion export: -o needs a file name (or - for stdout)"),
])
def test_empty_names_are_refused(capsys: pytest.CaptureFixture[str], argv: list[str],
                                 message: str) -> None:
    """replay "" read the current folder; play --record "" played and wrote nothing;
    --data-dir "" used the default folder; export -o "" wrote to stdout; replay
    --html "" and evaluate --csv/--sites/--diff "" wrote no file and said nothing;
    calibrate camera --out and play --record found their folder missing only at the end."""
    assert main(argv) == 1
    assert _err(capsys) == message


def test_an_output_never_takes_the_place_of_an_input(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """replay --html g.zip g.zip wrote its report over the game's photos (and over a
    photo or the game.json in the folder); evaluate --csv over a truth file, and two
    of its outputs of one name kept only the last. Refused, the inputs untouched."""
    monkeypatch.chdir(tmp_path)
    game = tmp_path / "g"
    game.mkdir()
    photo = game / "IMG_1.jpg"
    photo.write_bytes(b"\xff\xd8\xff\xd9")
    (game / "IMG_1.json").write_text("{}")
    with zipfile.ZipFile(tmp_path / "g.zip", "w") as zf:
        zf.write(photo, "IMG_1.jpg")
    kept = {p: p.read_bytes() for p in (photo, game / "IMG_1.json", tmp_path / "g.zip")}
    for argv, message in (
            (["replay", "g.zip", "--html", "g.zip"],
             "companion replay: --html g.zip: that is the input g.zip; not writing over it"),
            (["replay", "g", "--html", "g/IMG_1.jpg"],
             "companion replay: --html g/IMG_1.jpg: the command reads such files in g; "
             "write it elsewhere"),
            (["replay", "g", "--html", "g/game.json"],
             "companion replay: --html g/game.json: the command reads such files in g; "
             "write it elsewhere"),
            (["evaluate", "--folder", "g", "--csv", "g/IMG_1.json"],
             "companion evaluate: --csv g/IMG_1.json: the command reads such files in g; "
             "write it elsewhere"),
            (["evaluate", "--folder", "g", "--csv", "out.csv", "--sites", "./out.csv"],
             "companion evaluate: --csv and --sites name the same file ./out.csv"),
            (["calibrate", "camera", "g", "--out", "g/camera.json"],
             "companion calibrate: --out g/camera.json: the command reads such files in g; "
             "write it elsewhere")):
        assert main(argv) == 1, argv
        assert _err(capsys) == message
    assert {p: p.read_bytes() for p in kept} == kept
    # a report beside the photos is no input of theirs
    assert main(["replay", "g", "--html", "g/report.html"]) == 1  # (no board in the stub)
    assert "report.html" not in _err(capsys)


@pytest.mark.parametrize(("argv", "line"), [
    (["read"], "companion read: error: the following arguments are required: PHOTO"),
    (["read", "x.jpg", "--workers", "2"], "companion: error: unrecognized arguments: --workers 2"),
    (["replay", "DIR", "--workers", "x"],
     "companion replay: error: argument --workers: expected a whole number, got 'x'"),
    (["score", "b.json", "--nope"], "companion: error: unrecognized arguments: --nope"),
])
def test_a_usage_error_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                   line: str) -> None:
    """argparse printed its usage (two or three lines) before the reason: a script
    reading stderr, or a player, got the reason last, after what --help shows."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err == line + "\n"


def test_keys_given_twice_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's json keeps the last of two equal keys: a board's second "sites" list, a
    camera's second "fx" would silently replace what the file's writer meant."""
    board = tmp_path / "board.json"
    board.write_text('{"sites": [], "colors": ["red"], "sites": []}', encoding="utf-8")
    assert main(["score", str(board)]) == 1
    assert _err(capsys) == f'companion score: {board}: malformed JSON: key "sites" given twice'
    game = tmp_path / "game.json"
    game.write_text('{"players": [{"name": "Ann", "seat": "S", "name": "Bo"}]}',
                    encoding="utf-8")
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "IMG_0.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    (photos / "game.json").write_text(game.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["replay", str(photos)]) == 1
    assert _err(capsys) == (f"companion replay: {photos / 'game.json'}: malformed JSON: "
                            'key "name" given twice')
    camera = tmp_path / "camera.json"
    camera.write_text('{"fx": 900, "fx": 1000}', encoding="utf-8")
    assert main(["read", str(photos / "IMG_0.jpg"), "--camera", str(camera)]) == 1
    assert _err(capsys) == (f"companion read: {photos / 'IMG_0.jpg'}: {camera}: not a camera "
                            'file (key "fx" given twice)')
    record = tmp_path / "record.json"
    record.write_text('{"format": "manhattan-game/1", "format": "x"}', encoding="utf-8")
    assert main(["import", str(record), "--data-dir", str(tmp_path / "data")]) == 1
    assert _err(capsys) == (f'companion import: {record}: malformed JSON: key "format" given '
                            "twice")
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    base = ["run", "--data-dir", str(tmp_path / "data"), "--camera", "fake", "--leds", "fake",
            "--buttons", "none"]
    ledmap = tmp_path / "ledmap.json"
    ledmap.write_text('{"count": 60, "sites": [], "count": 6}', encoding="utf-8")
    calibration = tmp_path / "calibration.json"
    calibration.write_text('{"format": "companion-calibration/1", "camera": {}, "camera": {}}',
                           encoding="utf-8")
    for option, path, message in (
            ("--game", game, 'malformed JSON: key "name" given twice'),
            ("--calibration", calibration, 'malformed JSON: key "camera" given twice'),
            ("--ledmap", ledmap, 'not valid JSON: key "count" given twice')):
        assert main([*base, option, str(path)]) == 1
        assert _err(capsys) == f"companion run: {path}: {message}"
    assert not (tmp_path / "data").exists()
