"""Frame sources: the fake camera, folders and videos, and the real backends on stand-ins."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from hardware.camera import (
    PICAMERA2_ADVICE,
    CallableSource,
    FakeCamera,
    FakeClock,
    FolderSource,
    Frame,
    OpenCVSource,
    Picamera2Source,
    natural_key,
    open_camera,
)
from hardware.errors import CameraUnavailable, EndOfStream, HardwareError, SourceError


def solid(value: int, size: tuple[int, int] = (8, 6)) -> np.ndarray:
    return np.full((size[1], size[0], 3), value, dtype=np.uint8)


def write_png(path: Path, value: int, size: tuple[int, int] = (8, 6)) -> None:
    ok, buf = cv2.imencode(".png", solid(value, size))
    assert ok
    path.write_bytes(buf.tobytes())


# -- FakeCamera --------------------------------------------------------------------------
def test_fake_camera_serves_iterable_with_deterministic_timestamps() -> None:
    cam = FakeCamera([solid(1), solid(2), solid(3)], fps=10.0, start=5.0)
    frames = list(cam)
    assert [int(f.image[0, 0, 0]) for f in frames] == [1, 2, 3]
    assert [f.index for f in frames] == [0, 1, 2]
    assert [f.timestamp for f in frames] == [5.0, 5.1, 5.2]
    assert cam.frames_served == 3
    with pytest.raises(EndOfStream):
        cam.read()


def test_fake_camera_callable_and_fake_clock() -> None:
    counter = iter(range(100))
    clock = FakeClock(start=100.0, step=0.5)
    cam = CallableSource(lambda: solid(next(counter)), clock=clock)
    assert cam is not None and isinstance(cam, FakeCamera)
    a, b = cam.read(), cam.read()
    assert (a.timestamp, b.timestamp) == (100.0, 100.5)
    assert int(b.image[0, 0, 0]) == 1
    assert cam.size == (8, 6)
    clock.advance(10)
    assert cam.read().timestamp == 111.0


def test_fake_camera_size_peeks_without_losing_a_frame() -> None:
    values = iter([7, 8])
    cam = FakeCamera(lambda: solid(next(values), (4, 3)))
    assert cam.size == (4, 3)
    assert int(cam.read().image[0, 0, 0]) == 7
    assert int(cam.read().image[0, 0, 0]) == 8


def test_fake_camera_callable_ends_with_stop_iteration() -> None:
    def producer() -> np.ndarray:
        raise StopIteration

    with pytest.raises(EndOfStream):
        FakeCamera(producer).read()


def test_fake_camera_serves_a_single_image_forever() -> None:
    cam = FakeCamera(solid(4, (5, 3)))
    assert cam.size == (5, 3)
    assert [int(cam.read().image[0, 0, 0]) for _ in range(3)] == [4, 4, 4]


def test_fake_camera_loops_a_sequence() -> None:
    cam = FakeCamera([solid(1), solid(2)], loop=True)
    assert [int(cam.read().image[0, 0, 0]) for _ in range(5)] == [1, 2, 1, 2, 1]


def test_fake_camera_converts_grey_and_bgra_and_rejects_floats() -> None:
    grey = np.full((3, 4), 9, dtype=np.uint8)
    bgra = np.zeros((3, 4, 4), dtype=np.uint8)
    frames = list(FakeCamera([grey, bgra]))
    assert [f.image.shape for f in frames] == [(3, 4, 3), (3, 4, 3)]
    with pytest.raises(ValueError, match="uint8"):
        FakeCamera([np.zeros((3, 4, 3), dtype=np.float32)]).read()


def test_fake_camera_test_card_and_locks() -> None:
    with FakeCamera(size=(64, 48)) as cam:
        frame = cam.read()
        assert isinstance(frame, Frame)
        assert frame.size == (64, 48) and frame.image.dtype == np.uint8
        assert cam.lock_exposure() and cam.lock_white_balance()
        assert cam.exposure_locked and cam.white_balance_locked
        assert [r.control for r in cam.locks] == ["exposure", "white_balance"]
        assert cam.describe()["frames_served"] == 1
    assert cam.closed
    with pytest.raises(HardwareError, match="closed"):
        cam.read()


# -- FolderSource ------------------------------------------------------------------------
def test_natural_key_orders_numbers_numerically() -> None:
    names = ["img10.jpg", "img2.jpg", "IMG1.jpg", "img2b.jpg", "a.jpg"]
    assert sorted(names, key=natural_key) == [
        "a.jpg",
        "IMG1.jpg",
        "img2.jpg",
        "img2b.jpg",
        "img10.jpg",
    ]


def test_folder_source_natural_order_and_labels(tmp_path: Path) -> None:
    for name, value in [("img10.png", 10), ("img2.png", 2), ("img1.png", 1), ("IMG3.PNG", 3)]:
        write_png(tmp_path / name, value)
    (tmp_path / "notes.txt").write_text("not an image")
    src = FolderSource(tmp_path, clock=FakeClock(step=1.0))
    assert src.names == ["img1.png", "img2.png", "IMG3.PNG", "img10.png"]
    frames = list(src)
    assert [f.label for f in frames] == src.names
    assert [int(f.image[0, 0, 0]) for f in frames] == [1, 2, 3, 10]
    assert [f.timestamp for f in frames] == [0.0, 1.0, 2.0, 3.0]
    assert src.size == (8, 6)
    assert src.skipped == []
    assert not src.lock_exposure()
    assert src.locks[0].applied is False


def test_folder_source_skips_unreadable_files(tmp_path: Path) -> None:
    write_png(tmp_path / "a1.png", 11)
    (tmp_path / "a2.png").write_bytes(b"this is not a png")
    (tmp_path / "a3.jpg").write_bytes(b"")
    write_png(tmp_path / "a4.png", 44, size=(10, 5))
    src = FolderSource(tmp_path)
    frames = list(src)
    assert [f.label for f in frames] == ["a1.png", "a4.png"]
    assert src.skipped == ["a2.png", "a3.jpg"]
    assert src.size == (10, 5)
    with pytest.raises(EndOfStream):
        src.read()


def test_folder_source_takes_the_applications_decoder_and_order(tmp_path: Path) -> None:
    """The hardware layer knows no HEIC and no EXIF: the application passes its own."""
    write_png(tmp_path / "b.png", 2)
    (tmp_path / "a.heic").write_bytes(b"a photo OpenCV cannot decode")
    seen: list[str] = []

    def decode(path: str) -> np.ndarray | None:
        seen.append(Path(path).name)
        if path.endswith(".heic"):
            return np.full((6, 8, 3), 7, np.uint8)
        return None  # refused by the application's own check

    src = FolderSource(tmp_path, extensions=(".png", ".heic"), decode=decode,
                       order=lambda folder, names: sorted(names, reverse=True))
    assert src.names == ["b.png", "a.heic"]
    assert [(f.label, int(f.image[0, 0, 0])) for f in src] == [("a.heic", 7)]
    assert seen == ["b.png", "a.heic"] and src.skipped == ["b.png"]


def test_folder_source_loops(tmp_path: Path) -> None:
    write_png(tmp_path / "1.png", 1)
    write_png(tmp_path / "2.png", 2)
    src = FolderSource(tmp_path, loop=True)
    assert [src.read().label for _ in range(5)] == ["1.png", "2.png", "1.png", "2.png", "1.png"]


def test_folder_source_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such folder"):
        FolderSource(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("x")
    with pytest.raises(SourceError, match="no images in"):
        FolderSource(empty)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "x.jpg").write_bytes(b"garbage")
    (broken / "y.png").write_bytes(b"garbage")
    with pytest.raises(SourceError, match="none of the 2 images") as info:
        FolderSource(broken)
    assert "x.jpg, y.png" in str(info.value)


def _write_video(path: Path, count: int) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (32, 24))
    assert writer.isOpened()
    for i in range(count):
        writer.write(solid(i * 50, (32, 24)))
    writer.release()


def test_video_file_source(tmp_path: Path) -> None:
    video = tmp_path / "game.avi"
    _write_video(video, 4)
    with open_camera(f"video:{video}") as src:
        assert isinstance(src, FolderSource) and src.kind == "video"
        assert src.size == (32, 24)
        frames = list(src)
    assert [f.label for f in frames] == [f"game.avi#{i}" for i in range(4)]
    assert [f.index for f in frames] == [0, 1, 2, 3]


def test_unreadable_video_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video at all")
    with pytest.raises(SourceError):
        FolderSource(bad)


# -- OpenCVSource on a stand-in VideoCapture ---------------------------------------------
class FakeCapture:
    def __init__(self, device: Any, api: int, opened: bool = True, settable: bool = True) -> None:
        self.device, self.api, self.opened, self.settable = device, api, opened, settable
        self.props: dict[int, float] = {
            cv2.CAP_PROP_EXPOSURE: 156.0,
            cv2.CAP_PROP_WB_TEMPERATURE: 4600.0,
        }
        self.sets: list[tuple[int, float]] = []
        self.released = False
        self.frames = 0

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's spelling
        return self.opened

    def set(self, prop: int, value: float) -> bool:
        self.sets.append((prop, value))
        if not self.settable and prop in (cv2.CAP_PROP_AUTO_EXPOSURE, cv2.CAP_PROP_AUTO_WB):
            return False
        self.props[prop] = value
        return True

    def get(self, prop: int) -> float:
        return self.props.get(prop, 0.0)

    def read(self) -> tuple[bool, np.ndarray | None]:
        self.frames += 1
        if self.frames > 2:
            return False, None
        w = int(self.props[cv2.CAP_PROP_FRAME_WIDTH])
        h = int(self.props[cv2.CAP_PROP_FRAME_HEIGHT])
        return True, np.zeros((h, w, 3), np.uint8)

    def release(self) -> None:
        self.released = True


def test_opencv_source_sets_size_and_locks() -> None:
    caps: list[FakeCapture] = []

    def factory(device: int | str, api: int) -> FakeCapture:
        caps.append(FakeCapture(device, api))
        return caps[-1]

    src = OpenCVSource(2, (640, 480), capture_factory=factory, clock=FakeClock())
    cap = caps[0]
    assert cap.device == 2 and src.size == (640, 480)
    assert src.read().image.shape == (480, 640, 3)
    assert src.lock_exposure() and src.lock_white_balance()
    assert (cv2.CAP_PROP_AUTO_EXPOSURE, 1.0) in cap.sets
    assert (cv2.CAP_PROP_EXPOSURE, 156.0) in cap.sets
    assert (cv2.CAP_PROP_AUTO_WB, 0.0) in cap.sets
    assert (cv2.CAP_PROP_WB_TEMPERATURE, 4600.0) in cap.sets
    src.read()
    with pytest.raises(HardwareError, match="delivered no frame"):
        src.read()
    src.close()
    assert cap.released


def test_opencv_source_records_unsupported_locks() -> None:
    src = OpenCVSource(
        0, capture_factory=lambda d, a: FakeCapture(d, a, settable=False), clock=FakeClock()
    )
    assert not src.lock_exposure()
    assert not src.lock_white_balance()
    assert [(r.control, r.applied) for r in src.locks] == [
        ("exposure", False),
        ("white_balance", False),
    ]


def test_opencv_source_that_cannot_open() -> None:
    with pytest.raises(CameraUnavailable, match="cannot open camera 5"):
        OpenCVSource(5, capture_factory=lambda d, a: FakeCapture(d, a, opened=False))


# -- Picamera2Source on a stand-in module ------------------------------------------------
class FakeRequest:
    def __init__(self, cam: FakePicamera2) -> None:
        self.cam = cam

    def make_array(self, name: str) -> np.ndarray:
        assert name == "main"
        w, h = self.cam.config["main"]["size"]
        return np.full((h, w, 3), 5, np.uint8)

    def get_metadata(self) -> dict[str, Any]:
        return {"SensorTimestamp": 123}

    def release(self) -> None:
        self.cam.released += 1


class FakeJob:
    """picamera2's Job: get_result(timeout) raises TimeoutError when no frame came."""

    def __init__(self, request: FakeRequest | None) -> None:
        self.request = request

    def get_result(self, timeout: float | None = None) -> FakeRequest:
        FakeJob.last_timeout = timeout
        if self.request is None:
            raise TimeoutError
        return self.request

    last_timeout: float | None = None


class FakePicamera2:
    instances: list[FakePicamera2] = []
    stalled = False  # started, but no frame ever completes

    def __init__(self, camera_num: int = 0) -> None:
        self.camera_num = camera_num
        self.calls: list[str] = []
        self.controls: list[dict[str, Any]] = []
        self.released = 0
        self.config: dict[str, Any] = {}
        FakePicamera2.instances.append(self)

    def create_video_configuration(self, main: dict[str, Any], **kw: Any) -> dict[str, Any]:
        return {"main": dict(main), **kw}

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config
        self.calls.append("configure")

    def stream_configuration(self, name: str) -> dict[str, Any]:
        return self.config[name]

    def start(self) -> None:
        self.calls.append("start")

    def capture_request(self, wait: bool | None = None) -> FakeJob:
        assert wait is False  # the source waits on the job, with a timeout
        return FakeJob(None if self.stalled else FakeRequest(self))

    def cancel_all_and_flush(self) -> None:
        self.calls.append("cancel_all_and_flush")

    def capture_metadata(self) -> dict[str, Any]:
        return {"ExposureTime": 12000, "AnalogueGain": 2.0, "ColourGains": (1.5, 2.25)}

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.controls.append(controls)

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")


class FakePicamera2Module:
    Picamera2 = FakePicamera2


def test_picamera2_source_configures_bgr_and_locks_current_values() -> None:
    FakePicamera2.instances.clear()
    src = Picamera2Source((640, 360), camera_num=1, module=FakePicamera2Module, clock=FakeClock())
    cam = FakePicamera2.instances[0]
    assert cam.camera_num == 1
    assert cam.config["main"] == {"size": (640, 360), "format": "RGB888"}
    assert cam.calls == ["configure", "start"]
    assert src.size == (640, 360)
    frame = src.read()
    assert frame.image.shape == (360, 640, 3) and cam.released == 1
    assert src.last_metadata == {"SensorTimestamp": 123}
    assert src.lock_exposure()
    assert src.lock_white_balance()
    assert cam.controls == [
        {"AeEnable": False, "ExposureTime": 12000, "AnalogueGain": 2.0},
        {"AwbEnable": False, "ColourGains": (1.5, 2.25)},
    ]
    src.close()
    src.close()
    assert cam.calls[-2:] == ["stop", "close"]


def test_a_picamera2_that_sends_no_frame_is_an_error_not_a_hang(
        monkeypatch: pytest.MonkeyPatch) -> None:
    FakePicamera2.instances.clear()
    monkeypatch.setattr(FakePicamera2, "stalled", True)
    src = Picamera2Source((640, 360), module=FakePicamera2Module, clock=FakeClock(),
                          frame_timeout=2.5)
    with pytest.raises(HardwareError) as info:
        src.read()
    assert FakeJob.last_timeout == 2.5
    assert str(info.value) == (
        "the Pi camera delivered no frame in 2.5 s (check the ribbon cable and "
        "`rpicam-hello --list-cameras`; the service restarts when frames stop)")
    cam = FakePicamera2.instances[0]
    assert cam.calls == ["configure", "start", "cancel_all_and_flush"] and cam.released == 0
    src.close()


def test_missing_picamera2_gives_apt_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # makes `import picamera2` fail
    with pytest.raises(CameraUnavailable) as info:
        open_camera("picamera2")
    assert isinstance(info.value, RuntimeError)
    assert str(info.value).startswith("picamera2 not importable")
    assert info.value.advice == PICAMERA2_ADVICE
    assert "--system-site-packages" in str(info.value)


# -- open_camera -------------------------------------------------------------------------
def test_open_camera_specs(tmp_path: Path) -> None:
    write_png(tmp_path / "1.png", 1)
    assert isinstance(open_camera(), FakeCamera)  # COMPANION_BACKEND=fake in tests
    assert isinstance(open_camera("fake", size=(32, 24)), FakeCamera)
    assert open_camera("fake", size=(32, 24)).size == (32, 24)
    assert isinstance(open_camera(f"folder:{tmp_path}", size=(1280, 720)), FolderSource)
    with pytest.raises(ValueError, match="use video:"):
        open_camera(f"folder:{tmp_path / '1.png'}")
    with pytest.raises(ValueError, match="use folder:"):
        open_camera(f"video:{tmp_path}")
    with pytest.raises(ValueError, match="device index or URL"):
        open_camera("opencv:")
    with pytest.raises(ValueError, match="unknown camera spec 'webcam'"):
        open_camera("webcam")
    with pytest.raises(ValueError, match=r"^picamera2:x: the camera number is 0, 1, \.\.\. "):
        open_camera("picamera2:x")


@pytest.mark.parametrize("usb", [True, False])
def test_the_pis_default_camera_falls_back_to_opencv(monkeypatch: pytest.MonkeyPatch,
                                                     usb: bool) -> None:
    """picamera2 is imported lazily and, when it is not there (a venv made without
    --system-site-packages), the Pi's default camera is OpenCV's first device; named,
    picamera2 stays picamera2."""
    monkeypatch.setenv("COMPANION_BACKEND", "pi")
    monkeypatch.setitem(sys.modules, "picamera2", None)

    def factory(device: int | str, api: int) -> FakeCapture:
        return FakeCapture(device, api, opened=usb)

    if not usb:
        with pytest.raises(CameraUnavailable) as info:
            open_camera(capture_factory=factory)
        assert str(info.value) == (
            "picamera2 not importable: import of picamera2 halted; None in sys.modules, and "
            f"OpenCV cannot open camera 0 ({PICAMERA2_ADVICE})")
        return
    src = open_camera(capture_factory=factory, size=(640, 480), clock=FakeClock())
    assert isinstance(src, OpenCVSource) and src.device == 0 and src.size == (640, 480)
    assert src.describe()["fallback"] == ("picamera2 not importable: import of picamera2 "
                                          "halted; None in sys.modules")
    src.close()
    with pytest.raises(CameraUnavailable, match="^picamera2 not importable"):
        open_camera("picamera2")
