"""`companion run` options of the live loop: stillness and the resting-arm timeout."""

from __future__ import annotations

import pytest

from companion.cli import _load_extra_commands, build_parser, main
from companion.controller import Controller
from companion.rules import make_config
from companion.session import GameSession


def _parser():
    _load_extra_commands()
    return build_parser()


def test_the_arm_timeout_reaches_the_controllers_arm_watch() -> None:
    args = _parser().parse_args(["run", "--still", "0.4", "--arm-timeout", "2.5"])
    assert (args.still, args.arm_timeout) == (0.4, 2.5)
    ctl = Controller(GameSession(make_config(2)), lambda image, pose=None: None,
                     change_config={"arm_timeout_seconds": args.arm_timeout})
    assert ctl.arm_watch.timeout_seconds == 2.5
    # without the option the vision config's value holds
    assert _parser().parse_args(["run"]).arm_timeout is None
    assert Controller(GameSession(make_config(2)),
                      lambda image, pose=None: None).arm_watch.timeout_seconds == 5.0


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--arm-timeout", "soon", "argument --arm-timeout: not a number of seconds: 'soon'"),
    ("--arm-timeout", "-1", "argument --arm-timeout: seconds must be from 0 to 3600, not -1"),
    ("--still", "nan", "argument --still: seconds must be from 0 to 3600, not nan"),
])
def test_bad_seconds_are_a_usage_error(capsys: pytest.CaptureFixture[str], option: str,
                                       value: str, message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", option, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"companion run: error: {message}"


def _refused_before_start(tmp_path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    """``companion run`` with fake devices and ``options``: it fails in one line before
    anything starts (no data folder made); that line."""
    code = main(["run", "--data-dir", str(tmp_path / "data"), *options,
                 "--camera", "fake", "--leds", "fake", "--buttons", "fake"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1
    assert not (tmp_path / "data").exists()  # nothing started
    return err


def test_a_malformed_calibrated_camera_stops_run_before_it_starts(
        tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked at start: read per frame, it would fail every frame instead."""
    from calibration import file as calfile

    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    cal = tmp_path / "calibration.json"
    calfile.update(cal, "camera", {"dist_coeffs": [0, 0, 0, 0, 0]})
    err = _refused_before_start(tmp_path, capsys, "--calibration", str(cal))
    assert err == (f"companion run: {cal}: camera: malformed camera JSON: "
                   "'camera_matrix'")


def test_a_calibration_file_named_must_be_there(
        tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A typo started the table uncalibrated, and said nothing."""
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    cal = tmp_path / "calibraton.json"
    err = _refused_before_start(tmp_path, capsys, "--calibration", str(cal))
    assert err == f"companion run: {cal}: no such calibration file"


def test_the_buttons_follow_the_backend_as_the_camera_and_leds_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`COMPANION_BACKEND=fake companion run` asked for the Pi's GPIO buttons (doctor, the
    same way, checked the fake ones), and `doctor --buttons none` called none a fault."""
    from hardware.doctor import probe

    _load_extra_commands()
    assert build_parser().parse_args(["run"]).buttons is None  # the backend's default
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    from hardware.buttons import TableButtons

    buttons = TableButtons(backend=None)
    try:
        assert buttons.backend == "fake" and buttons.mock
    finally:
        buttons.close()
    report = probe("fake", "fake", "none", sample_frames=1)
    assert report["buttons"] == {"backend": "none", "ok": True, "pin_factory": None,
                                 "checks": {}, "advice": []}


def test_a_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "--port", "99999"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "companion run: error: argument --port: a port is 0-65535 (0: any free one), got 99999")


@pytest.mark.parametrize(("content", "message"), [
    (None, "{game}: no such file"),
    ("{", "{game}: malformed JSON at line 1"),
    ("[]", "{game}: the set-up must be an object, not list"),
    ('{"format": "manhattan-game/1"}', "{game}: the set-up needs a list of players"),
])
def test_a_bad_game_file_stops_run_before_it_starts(
        tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        content: str | None, message: str) -> None:
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    game = tmp_path / "game.json"
    if content is not None:
        game.write_text(content, encoding="utf-8")
    err = _refused_before_start(tmp_path, capsys, "--game", str(game))
    assert err == f"companion run: {message.format(game=game)}"


def test_a_camera_that_is_not_there_stops_run_in_one_line_before_it_starts(
        tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A HardwareError (camera, strip or buttons) ended `companion run` with a traceback,
    after the journal had been opened."""
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    stream = tmp_path / "no-such-stream.mjpg"
    code = main(["run", "--data-dir", str(tmp_path / "data"), "--camera", f"opencv:{stream}",
                 "--leds", "fake", "--buttons", "none"])
    assert code == 1
    assert capsys.readouterr().err.strip() == (
        f"companion run: OpenCV cannot open camera '{stream}' (check the device "
        "(ls /dev/video*), that no other program holds it, and that the user is in the "
        "video group)")
    assert not (tmp_path / "data").exists()  # nothing started


def _refused_port() -> int:
    """A local port nothing listens on: a connection to it is refused at once."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("camera", ["video:{dir}/empty.mp4",
                                    "opencv:http://127.0.0.1:{port}/stream.mjpg"])
def test_ffmpegs_own_log_lines_do_not_precede_the_one_line_error(tmp_path, camera: str) -> None:
    """FFmpeg wrote "[mov,mp4,...] moov atom not found" (an empty video) and "[tcp @ ...]
    Connection ... refused" (a stream) to stderr itself, ahead of run's one line.
    In a process of its own: OpenCV takes FFmpeg's log level once, at its first capture."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "empty.mp4").write_bytes(b"")
    spec = camera.format(dir=tmp_path, port=_refused_port())
    env = {k: v for k, v in os.environ.items() if k != "OPENCV_FFMPEG_LOGLEVEL"}
    result = subprocess.run(
        [sys.executable, "-m", "companion", "run", "--data-dir", str(tmp_path / "data"),
         "--camera", spec, "--leds", "fake", "--buttons", "none"],
        cwd=Path(__file__).resolve().parents[2], env={**env, "COMPANION_BACKEND": "fake"},
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    if spec.startswith("video:"):
        assert result.stderr == (f"companion run: cannot open video file {tmp_path}/empty.mp4 "
                                 "(is it a video OpenCV can decode?)\n")
    else:
        assert result.stderr == (
            f"companion run: OpenCV cannot open camera '{spec[len('opencv:'):]}' (check the "
            "device (ls /dev/video*), that no other program holds it, and that the user is "
            "in the video group)\n")
    assert not (tmp_path / "data").exists()


def test_a_recorded_game_played_to_its_end_leaves_the_page_up(tmp_path) -> None:
    """`--camera folder:DIR` ran off its last photo into EndOfStream and a traceback;
    now the page stays until the companion is stopped, and it stops cleanly."""
    import os
    import select
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import cv2

    from companion.sim import sample_photo

    photos = tmp_path / "photos"
    photos.mkdir()
    cv2.imwrite(str(photos / "IMG_0001.png"), sample_photo(10, "mounted").image)
    root = Path(__file__).resolve().parents[2]
    import socket

    systemd = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # as systemd listens
    systemd.bind(str(tmp_path / "notify"))
    # a drop-in's WatchdogSec=2: a keep-alive every second, not every 5 s
    env = {**os.environ, "COMPANION_BACKEND": "fake", "NOTIFY_SOCKET": str(tmp_path / "notify"),
           "WATCHDOG_USEC": "2000000"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "companion", "run", "--data-dir", str(tmp_path / "data"),
         "--camera", f"folder:{photos}", "--leds", "fake", "--buttons", "none",
         "--host", "127.0.0.1", "--port", "0"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 120)
        assert ready, "companion run said nothing in 120 s"
        line = proc.stderr.readline()  # run says the recording ended
        assert line.strip() == ("companion run: the camera's recording has no more "
                                "frames; the page stays up until the companion is stopped")
        time.sleep(3.5)
        assert proc.poll() is None  # still serving the page
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        systemd.setblocking(False)
        said = []
        while True:
            try:
                said.append(systemd.recv(4096).decode())
            except BlockingIOError:
                break
    finally:
        systemd.close()
        if proc.poll() is None:
            proc.kill()
    assert said[0] == "READY=1\nSTATUS=camera folder delivers frames"
    assert said[-1] == "STOPPING=1"
    assert set(said[1:-1]) == {"WATCHDOG=1"} and len(said[1:-1]) >= 3
    assert proc.returncode == 0, err
    assert err.strip() == ""
    assert out.startswith("companion run: page on http://127.0.0.1:")


def test_a_frame_that_fails_does_not_end_the_table(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A bug on one frame (here every frame's reading fails) used to end `companion
    run`: the page and the camera with it, and systemd stops restarting after a few
    crashes. The loop goes on, says so with the traceback once, and stops cleanly."""
    import os
    import signal
    import threading

    import cv2

    from companion import pipeline
    from companion.sim import sample_photo

    class Broken:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def __call__(self, *args, **kwargs):
            raise RuntimeError("a reader bug")

    monkeypatch.setattr(pipeline, "VisionReader", Broken)
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    photos = tmp_path / "photos"
    photos.mkdir()
    image = sample_photo(10, "mounted").image
    for k in range(30):  # the motion gate lets a still scene through to the reader
        cv2.imwrite(str(photos / f"IMG_{k:04d}.png"), image)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    timer = threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        code = main(["run", "--data-dir", str(tmp_path / "data"), "--camera",
                     f"folder:{photos}", "--leds", "fake", "--buttons", "none",
                     "--host", "127.0.0.1", "--port", "0", "--still", "0"])
    finally:
        timer.cancel()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert code == 0
    assert caplog.text.count("a frame could not be processed (1 so far)") == 1
    assert "RuntimeError: a reader bug" in caplog.text
