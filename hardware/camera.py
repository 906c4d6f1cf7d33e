"""Frame sources: one contract (``read() -> Frame``) for the Pi camera, USB/IP cameras,
folders of phone photos, video files and the simulated table.

Every source timestamps frames with an injectable clock so the watchdog and fps
measurements can be tested deterministically, and every source accepts
``lock_exposure()`` / ``lock_white_balance()``: after colour calibration the
controller freezes the camera's automatic controls so block colours don't drift
when a player's hand or a tall tower changes the scene. Sources that cannot lock
record that they could not (``locks``) instead of failing, because a replay from
photos must run through the same controller code.
"""

from __future__ import annotations

import os
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import cv2
import numpy as np

from .device import Closeable
from .errors import CameraUnavailable, EndOfStream, HardwareError, SourceError
from .host import default_backend

Clock = Callable[[], float]
Size = tuple[int, int]  # (width, height), as OpenCV and picamera2 spell sizes

IMAGE_EXTENSIONS: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
VIDEO_EXTENSIONS: tuple[str, ...] = (".mp4", ".avi", ".mkv", ".mov", ".m4v", ".webm", ".h264")

PICAMERA2_ADVICE = (
    "install python3-picamera2 with apt and create the venv with --system-site-packages"
)
NUMPY_ABI_ADVICE = (
    "apt's picamera2/simplejpeg are built for numpy 1.x: run pip install 'numpy<2' in the venv"
)


@dataclass(frozen=True, eq=False)
class Frame:
    """One camera image: BGR uint8 (H x W x 3), seconds on the source's clock, serial index.

    ``label`` names where the frame came from (photo file name) so a replay can
    say which photo a reading belongs to.
    """

    image: np.ndarray
    timestamp: float
    index: int
    label: str | None = None

    @property
    def size(self) -> Size:
        """(width, height) of the image."""
        return (int(self.image.shape[1]), int(self.image.shape[0]))


@dataclass(frozen=True)
class LockRecord:
    """What a lock request did, kept so the doctor and the page can show it."""

    control: str  # "exposure" or "white_balance"
    applied: bool
    detail: str


def as_bgr(image: Any) -> np.ndarray:
    """Normalise grey/BGRA images to BGR uint8, refusing anything else loudly."""
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise ValueError(f"frames must be uint8, got {arr.dtype}")
    if arr.ndim == 2:
        return cv2.cvtColor(arr, cv2.COLOR_GRAY2BGR)
    if arr.ndim == 3 and arr.shape[2] == 3:
        return arr
    if arr.ndim == 3 and arr.shape[2] == 4:
        return cv2.cvtColor(arr, cv2.COLOR_BGRA2BGR)
    raise ValueError(f"frames must be H x W x 3 BGR, got shape {arr.shape}")


def natural_key(name: str) -> tuple[tuple[Any, ...], str]:
    """Sort key so "img2.jpg" comes before "img10.jpg" (phones number photos without padding)."""
    # re.split with one capturing group alternates text, digits, text...: comparisons
    # therefore always pair str with str and int with int.
    parts = re.split(r"(\d+)", name)
    key = tuple(int(p) if i % 2 else p.casefold() for i, p in enumerate(parts))
    return key, name


class FakeClock:
    """A deterministic clock: each call returns the current time, then advances by ``step``."""

    def __init__(self, start: float = 0.0, step: float = 0.0) -> None:
        self.now = float(start)
        self.step = float(step)

    def __call__(self) -> float:
        now = self.now
        self.now += self.step
        return now

    def advance(self, seconds: float) -> None:
        """Move time forward, e.g. to simulate a stalled camera in a watchdog test."""
        self.now += seconds


class FrameSource(Closeable, ABC):
    """Base of every source: numbering, timestamps, lock bookkeeping, context manager."""

    kind: str = "source"
    #: why the asked-for camera was not used and this one was (see open_camera)
    fallback_reason: str | None = None

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock: Clock = clock if clock is not None else time.monotonic
        self._index = 0
        self._closed = False
        self.locks: list[LockRecord] = []
        self.exposure_locked = False
        self.white_balance_locked = False

    # -- the contract -------------------------------------------------------------
    def read(self) -> Frame:
        """The next frame; raises EndOfStream when a finite source is exhausted."""
        if self._closed:
            raise HardwareError(f"{self.kind} source is closed")
        image, label = self._grab()
        frame = Frame(as_bgr(image), self._timestamp(), self._index, label)
        self._index += 1
        return frame

    @property
    @abstractmethod
    def size(self) -> Size:
        """(width, height) of the frames this source serves."""

    @property
    def frames_served(self) -> int:
        """How many frames read() has returned."""
        return self._index

    @property
    def closed(self) -> bool:
        return self._closed

    def lock_exposure(self) -> bool:
        """Freeze exposure and gain at their current values; False if this source can't."""
        applied, detail = self._lock_exposure()
        self.locks.append(LockRecord("exposure", applied, detail))
        self.exposure_locked = self.exposure_locked or applied
        return applied

    def lock_white_balance(self) -> bool:
        """Freeze the colour gains at their current values; False if this source can't."""
        applied, detail = self._lock_white_balance()
        self.locks.append(LockRecord("white_balance", applied, detail))
        self.white_balance_locked = self.white_balance_locked or applied
        return applied

    def describe(self) -> dict[str, Any]:
        """JSON-able state for `companion doctor` and the page."""
        out = {
            "kind": self.kind,
            "size": list(self.size),
            "frames_served": self.frames_served,
            "exposure_locked": self.exposure_locked,
            "white_balance_locked": self.white_balance_locked,
            "locks": [asdict(r) for r in self.locks],
        }
        if self.fallback_reason is not None:
            out["fallback"] = self.fallback_reason
        return out

    def close(self) -> None:
        """Release the device; idempotent."""
        if not self._closed:
            self._closed = True
            self._release()


    def __iter__(self) -> Iterator[Frame]:
        while True:
            try:
                yield self.read()
            except EndOfStream:
                return

    # -- for subclasses -----------------------------------------------------------
    @abstractmethod
    def _grab(self) -> tuple[np.ndarray, str | None]:
        """Return the next image and its label."""

    def _timestamp(self) -> float:
        return float(self._clock())

    def _lock_exposure(self) -> tuple[bool, str]:
        return False, f"{self.kind} source has no exposure control"

    def _lock_white_balance(self) -> tuple[bool, str]:
        return False, f"{self.kind} source has no white-balance control"

    def _release(self) -> None:
        return None


# --------------------------------------------------------------------------------------
# Raspberry Pi camera (libcamera through picamera2)
# --------------------------------------------------------------------------------------
class Picamera2Source(FrameSource):
    """The Pi camera through picamera2, configured for BGR frames at ``size``.

    picamera2 comes from apt (python3-picamera2) and is imported here, not at module
    import, so the package works where it is absent. ``module`` lets tests pass a
    stand-in for the picamera2 module.
    """

    kind = "picamera2"

    def __init__(
        self,
        size: Size = (1280, 720),
        camera_num: int = 0,
        *,
        clock: Clock | None = None,
        buffer_count: int | None = None,
        module: Any = None,
        frame_timeout: float = 5.0,
    ) -> None:
        super().__init__(clock)
        #: seconds a frame may take (a long exposure in a dark room takes one or two)
        self.frame_timeout = float(frame_timeout)
        if module is None:
            module = _import_picamera2()
        self._cam: Any = module.Picamera2(camera_num)
        try:
            kwargs: dict[str, Any] = {}
            if buffer_count is not None:
                kwargs["buffer_count"] = buffer_count
            # libcamera's "RGB888" is a DRM fourcc: the bytes in memory are B, G, R,
            # which is exactly OpenCV's BGR order.
            config = self._cam.create_video_configuration(
                main={"size": (int(size[0]), int(size[1])), "format": "RGB888"}, **kwargs
            )
            self._cam.configure(config)
            self._size = _stream_size(self._cam, config, size)
            self._cam.start()
        except Exception:
            self._cam.close()
            raise
        self.last_metadata: dict[str, Any] = {}

    @property
    def size(self) -> Size:
        return self._size

    def _grab(self) -> tuple[np.ndarray, str | None]:
        # capture_request gives the image and the metadata of that same frame. Asked to
        # wait, it waits for ever on a camera that started but sends nothing (a loose
        # ribbon cable): `companion doctor` hung, and `run` never told systemd READY
        job = self._cam.capture_request(wait=False)
        try:
            request = job.get_result(timeout=self.frame_timeout)
        except TimeoutError:
            cancel = getattr(self._cam, "cancel_all_and_flush", None)
            if cancel is not None:
                cancel()
            raise HardwareError(
                f"the Pi camera delivered no frame in {self.frame_timeout:g} s",
                "check the ribbon cable and `rpicam-hello --list-cameras`; the service "
                "restarts when frames stop",
            ) from None
        try:
            image = request.make_array("main")
            self.last_metadata = dict(request.get_metadata() or {})
        finally:
            request.release()  # buffers must always go back to libcamera
        return image, None

    def _lock_exposure(self) -> tuple[bool, str]:
        md = self._cam.capture_metadata()
        if "ExposureTime" not in md or "AnalogueGain" not in md:
            return False, "camera metadata has no ExposureTime/AnalogueGain"
        controls = {
            "AeEnable": False,
            "ExposureTime": int(md["ExposureTime"]),
            "AnalogueGain": float(md["AnalogueGain"]),
        }
        self._cam.set_controls(controls)
        return True, (
            f"ExposureTime={controls['ExposureTime']} us, AnalogueGain={controls['AnalogueGain']}"
        )

    def _lock_white_balance(self) -> tuple[bool, str]:
        md = self._cam.capture_metadata()
        gains = md.get("ColourGains")
        if not gains:
            return False, "camera metadata has no ColourGains (monochrome sensor?)"
        red, blue = float(gains[0]), float(gains[1])
        self._cam.set_controls({"AwbEnable": False, "ColourGains": (red, blue)})
        return True, f"ColourGains=({red}, {blue})"

    def _release(self) -> None:
        try:
            self._cam.stop()
        finally:
            self._cam.close()


def _import_picamera2() -> Any:
    try:
        import picamera2  # type: ignore[import-not-found]
    except ImportError as exc:
        raise CameraUnavailable(f"picamera2 not importable: {exc}", PICAMERA2_ADVICE) from exc
    except ValueError as exc:  # "numpy.dtype size changed": simplejpeg vs numpy 2
        raise CameraUnavailable(f"picamera2 not importable: {exc}", NUMPY_ABI_ADVICE) from exc
    return picamera2


def _stream_size(cam: Any, config: Any, requested: Size) -> Size:
    """The size libcamera actually chose (it may align the width)."""
    try:
        size = cam.stream_configuration("main")["size"]
        return (int(size[0]), int(size[1]))
    except Exception:
        try:
            size = config["main"]["size"]
            return (int(size[0]), int(size[1]))
        except Exception:
            return (int(requested[0]), int(requested[1]))


# --------------------------------------------------------------------------------------
# USB / IP cameras through OpenCV
# --------------------------------------------------------------------------------------
class OpenCVSource(FrameSource):
    """A V4L2 device index or a stream URL through ``cv2.VideoCapture``.

    ``capture_factory`` lets tests pass a stand-in for ``cv2.VideoCapture``.
    """

    kind = "opencv"

    # V4L2 through OpenCV: 1 = V4L2_EXPOSURE_MANUAL; 0.25 is the DirectShow spelling.
    _MANUAL_EXPOSURE_VALUES = (1.0, 0.25)

    def __init__(
        self,
        device: int | str = 0,
        size: Size | None = (1280, 720),
        *,
        clock: Clock | None = None,
        api_preference: int = cv2.CAP_ANY,
        capture_factory: Callable[[int | str, int], Any] | None = None,
    ) -> None:
        super().__init__(clock)
        factory = capture_factory if capture_factory is not None else cv2.VideoCapture
        self.device = device
        ffmpeg_quiet()  # a URL refused: FFmpeg's "Connection refused" line, then ours
        with opencv_quiet():  # its own WARN lines would follow our one-line error
            self._cap: Any = factory(device, api_preference)
        if not self._cap.isOpened():
            self._cap.release()
            raise CameraUnavailable(
                f"OpenCV cannot open camera {device!r}",
                "check the device (ls /dev/video*), that no other program holds it, "
                "and that the user is in the video group",
            )
        if size is not None:
            self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, float(size[0]))
            self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, float(size[1]))
        width = int(self._cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(self._cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        self._size: Size = (width, height) if width > 0 and height > 0 else (size or (0, 0))

    @property
    def size(self) -> Size:
        return self._size

    def _grab(self) -> tuple[np.ndarray, str | None]:
        ok, image = self._cap.read()
        if not ok or image is None:
            raise HardwareError(
                f"camera {self.device!r} delivered no frame",
                "check the cable or stream; the service restarts when frames stop",
            )
        self._size = (int(image.shape[1]), int(image.shape[0]))
        return image, None

    def _lock_exposure(self) -> tuple[bool, str]:
        current = self._cap.get(cv2.CAP_PROP_EXPOSURE)
        for value in self._MANUAL_EXPOSURE_VALUES:
            if self._cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, value):
                self._cap.set(cv2.CAP_PROP_EXPOSURE, current)  # hold today's exposure
                return True, f"CAP_PROP_AUTO_EXPOSURE={value}, CAP_PROP_EXPOSURE={current}"
        return False, "the camera driver refused CAP_PROP_AUTO_EXPOSURE"

    def _lock_white_balance(self) -> tuple[bool, str]:
        current = self._cap.get(cv2.CAP_PROP_WB_TEMPERATURE)
        if self._cap.set(cv2.CAP_PROP_AUTO_WB, 0.0):
            if current > 0:
                self._cap.set(cv2.CAP_PROP_WB_TEMPERATURE, current)
            return True, f"CAP_PROP_AUTO_WB=0, CAP_PROP_WB_TEMPERATURE={current}"
        return False, "the camera driver refused CAP_PROP_AUTO_WB"

    def _release(self) -> None:
        self._cap.release()


# --------------------------------------------------------------------------------------
# Recorded input: a folder of photos or a video file
# --------------------------------------------------------------------------------------
class FolderSource(FrameSource):
    """Photos from a folder in natural file-name order, or the frames of a video file.

    Unreadable photos are skipped and their names kept in ``skipped`` (a replay
    should report them, not stop). Images are decoded one at a time: a folder of
    12-megapixel phone photos must not be loaded at once on a Pi. EXIF orientation
    is applied by OpenCV's decoder.
    """

    kind = "folder"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        loop: bool = False,
        clock: Clock | None = None,
        extensions: Iterable[str] = IMAGE_EXTENSIONS,
        decode: Callable[[str], np.ndarray | None] | None = None,
        order: Callable[[str, list[str]], list[str]] | None = None,
    ) -> None:
        """``decode`` (a path to a BGR image, or None when unreadable) and ``order``
        (the folder and its photos' names to the order they are served in) let the
        application bring its own: HEIC photos, photo files checked before decoding,
        EXIF time across cameras. By default OpenCV decodes, in natural name order."""
        super().__init__(clock)
        self._decode = decode if decode is not None else _decode_image
        self.path = os.fspath(path)
        self.loop = loop
        self.skipped: list[str] = []
        self._cap: Any = None
        self._pending: tuple[np.ndarray, str | None] | None = None
        self._pos = 0
        self._decoded = 0
        self._size: Size = (0, 0)
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"no such folder or video file: {self.path}")
        if os.path.isdir(self.path):
            self.kind = "folder"
            exts = tuple(e.lower() for e in extensions)
            names = [
                n
                for n in os.listdir(self.path)
                if n.lower().endswith(exts) and os.path.isfile(os.path.join(self.path, n))
            ]
            if not names:
                raise SourceError(
                    f"no images in {self.path}",
                    f"expected files ending in {', '.join(exts)}",
                )
            self.names: list[str] = (sorted(names, key=natural_key) if order is None
                                     else list(order(self.path, names)))
        else:
            self.kind = "video"
            self.names = [os.path.basename(self.path)]
            ffmpeg_quiet()  # an empty file: FFmpeg's "moov atom not found", then ours
            with opencv_quiet():
                self._cap = cv2.VideoCapture(self.path)
            if not self._cap.isOpened():
                self._cap.release()
                raise SourceError(
                    f"cannot open video file {self.path}", "is it a video OpenCV can decode?"
                )
        # Decode the first frame now: it gives `size` and fails early on a bad source.
        try:
            self._pending = self._next()
        except BaseException:
            self._release()
            raise
        self._size = _image_size(self._pending[0])

    @property
    def size(self) -> Size:
        """Size of the last frame served (photos in one folder may differ)."""
        return self._size

    def _grab(self) -> tuple[np.ndarray, str | None]:
        if self._pending is not None:
            item, self._pending = self._pending, None
        else:
            item = self._next()
        self._size = _image_size(item[0])
        return item

    def _next(self) -> tuple[np.ndarray, str | None]:
        if self._cap is not None:
            return self._next_video()
        return self._next_image()

    def _next_image(self) -> tuple[np.ndarray, str | None]:
        count = len(self.names)
        for _ in range(count):  # at most one full pass over the names per frame
            if self._pos >= count:
                if not self.loop:
                    raise EndOfStream(f"{self.path}: all {count} images served")
                self._pos = 0
            name = self.names[self._pos]
            self._pos += 1
            image = self._decode(os.path.join(self.path, name))
            if image is not None:
                return image, name
            if name not in self.skipped:
                self.skipped.append(name)
        if len(self.skipped) == count:
            raise SourceError(
                f"none of the {count} images in {self.path} could be read",
                "unreadable: " + ", ".join(self.skipped[:10]),
            )
        raise EndOfStream(f"{self.path}: no readable image left")

    def _next_video(self) -> tuple[np.ndarray, str | None]:
        ok, image = self._cap.read()
        if (not ok or image is None) and self.loop and self._decoded > 0:
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, image = self._cap.read()
        if not ok or image is None:
            if self._decoded == 0:
                raise SourceError(
                    f"video file {self.path} has no decodable frame",
                    "is it a video OpenCV can decode?",
                )
            raise EndOfStream(f"{self.path}: end of video")
        self._decoded += 1
        frame_no = int(self._cap.get(cv2.CAP_PROP_POS_FRAMES)) - 1
        return image, f"{self.names[0]}#{frame_no}"

    def _release(self) -> None:
        if self._cap is not None:
            self._cap.release()


#: OpenCV's FFmpeg backend sets FFmpeg's log level from this variable when it first
#: starts FFmpeg in the process (its first VideoCapture of a file or URL), and never again
FFMPEG_LOGLEVEL_ENV = "OPENCV_FFMPEG_LOGLEVEL"
#: FFmpeg's AV_LOG_QUIET: no log lines at all (OpenCV's default is AV_LOG_ERROR)
FFMPEG_QUIET = "-8"


def ffmpeg_quiet() -> None:
    """FFmpeg's own log lines off, called before a VideoCapture is made: FFmpeg writes
    them to stderr itself ("[mov,mp4,...] moov atom not found", "Connection refused"),
    ahead of the one-line error that says what failed, and OpenCV's log level does not
    reach them. OpenCV reads the variable once, at its first FFmpeg capture in the
    process, so it must be set before that; a value someone set to debug a camera is
    kept. Not done at import: importing the package configures nothing."""
    os.environ.setdefault(FFMPEG_LOGLEVEL_ENV, FFMPEG_QUIET)


@contextmanager
def opencv_quiet(silent: bool = False) -> Iterator[None]:
    """OpenCV's log held to errors (``silent``: to nothing) while a device is tried or a
    file decoded: what failed is ours to say, in one line."""
    logging = getattr(getattr(cv2, "utils", None), "logging", None)
    if logging is None:
        yield
        return
    level = logging.getLogLevel()
    logging.setLogLevel(logging.LOG_LEVEL_SILENT if silent else logging.LOG_LEVEL_ERROR)
    try:
        yield
    finally:
        logging.setLogLevel(level)


def _decode_image(path: str) -> np.ndarray | None:
    """Decode without cv2.imread, which prints warnings to stderr for unreadable files."""
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except OSError:
        return None
    if data.size == 0:
        return None
    with opencv_quiet(silent=True):  # the source lists it as skipped
        image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return None if image is None else np.asarray(image)


def _image_size(image: np.ndarray) -> Size:
    return (int(image.shape[1]), int(image.shape[0]))


# --------------------------------------------------------------------------------------
# The fake camera: the simulated table and tests plug in here
# --------------------------------------------------------------------------------------
FrameProducer = Callable[[], Any]


class FakeCamera(FrameSource):
    """Frames from a Python callable or iterable (or a plain test card), on a fake clock.

    * ``frames`` is a callable returning one BGR image per call (the simulated
      table renders here), an iterable of images (ends with EndOfStream, or
      restarts with ``loop=True`` when it is a re-iterable sequence), a single
      image (served on every read), or None for a deterministic test card of
      ``size``.
    * Timestamps are ``start + index / fps`` unless a ``clock`` is passed, so runs
      are reproducible. A callable may raise StopIteration or EndOfStream to end.
    * Exposure and white-balance locks are accepted and recorded, so tests can
      assert that the controller locked the camera after calibration.
    """

    kind = "fake"

    def __init__(
        self,
        frames: FrameProducer | Iterable[Any] | None = None,
        *,
        size: Size | None = None,
        fps: float = 30.0,
        start: float = 0.0,
        clock: Clock | None = None,
        loop: bool = False,
    ) -> None:
        super().__init__(clock)
        if fps <= 0:
            raise ValueError("fps must be positive")
        self.fps = float(fps)
        self.start = float(start)
        self._use_clock = clock is not None
        self._requested_size = size
        self._last_size: Size | None = None
        self._peeked: np.ndarray | None = None
        self._loop = loop
        self._callable: FrameProducer | None = None
        self._iterable: Iterable[Any] | None = None
        self._iterator: Iterator[Any] | None = None
        if frames is None:
            self._callable = self._test_card
            if self._requested_size is None:
                self._requested_size = (1280, 720)
        elif isinstance(frames, np.ndarray):
            still = as_bgr(frames)  # one image: served forever (iterating would give rows)
            self._callable = lambda: still
        elif callable(frames):
            self._callable = frames
        else:
            self._iterable = frames
            self._iterator = iter(frames)

    @property
    def size(self) -> Size:
        if self._last_size is not None:
            return self._last_size
        if self._requested_size is not None:
            return (int(self._requested_size[0]), int(self._requested_size[1]))
        if self._peeked is None:
            self._peeked = as_bgr(self._produce())
        return _image_size(self._peeked)

    def _timestamp(self) -> float:
        if self._use_clock:
            return float(self._clock())
        return self.start + self._index / self.fps

    def _grab(self) -> tuple[np.ndarray, str | None]:
        if self._peeked is not None:
            image, self._peeked = self._peeked, None
        else:
            image = self._produce()
        image = as_bgr(image)
        self._last_size = _image_size(image)
        return image, None

    def _produce(self) -> Any:
        if self._callable is not None:
            try:
                return self._callable()
            except StopIteration as exc:
                raise EndOfStream("frame callable is exhausted") from exc
        assert self._iterator is not None
        try:
            return next(self._iterator)
        except StopIteration:
            if self._loop and self._iterable is not None and self.frames_served > 0:
                self._iterator = iter(self._iterable)
                try:
                    return next(self._iterator)
                except StopIteration:
                    pass
            raise EndOfStream("frame iterable is exhausted") from None

    def _test_card(self) -> np.ndarray:
        width, height = self._requested_size or (1280, 720)
        image = np.full((int(height), int(width), 3), 96, dtype=np.uint8)
        cv2.putText(
            image,
            f"fake camera #{self._index}",
            (16, max(24, int(height) // 2)),
            cv2.FONT_HERSHEY_SIMPLEX,
            1.0,
            (255, 255, 255),
            2,
            cv2.LINE_8,
        )
        return image

    def _lock_exposure(self) -> tuple[bool, str]:
        return True, "fake camera: exposure lock recorded"

    def _lock_white_balance(self) -> tuple[bool, str]:
        return True, "fake camera: white-balance lock recorded"


CallableSource = FakeCamera
"""The same class under the name the simulated table uses."""


# --------------------------------------------------------------------------------------
# Factory
# --------------------------------------------------------------------------------------
CAMERA_SPECS = (
    "picamera2[:N]",
    "opencv:INDEX",
    "opencv:URL",
    "folder:/path",
    "video:/path.mp4",
    "fake",
)


def default_camera_spec() -> str:
    """The spec for this machine: picamera2 on the Pi backend, fake otherwise."""
    return "picamera2" if default_backend() == "pi" else "fake"


def _pi_camera_or_usb(kw: dict[str, Any]) -> FrameSource:
    """The Pi's default camera: picamera2, or, where picamera2 is not importable (a venv
    made without --system-site-packages, an OS without the package), OpenCV's first
    device (a USB camera). Named, ``picamera2`` is only picamera2."""
    opencv_only = ("capture_factory", "api_preference")
    try:
        return Picamera2Source(**{k: v for k, v in kw.items() if k not in opencv_only})
    except CameraUnavailable as first:
        try:
            source = OpenCVSource(0, **kw)
        except CameraUnavailable as second:
            raise CameraUnavailable(f"{first.message}, and {second.message}",
                                    first.advice) from None
        import logging

        logging.getLogger(__name__).info("%s: using OpenCV's camera 0", first.message)
        source.fallback_reason = first.message
        return source


def open_camera(spec: str | None = None, **kw: Any) -> FrameSource:
    """Open a source from a short spec string (config files and the command line use these).

    Accepted: "picamera2" or "picamera2:1" (camera number), "opencv:0" (device
    index) or "opencv:rtsp://..." (URL), "folder:/path", "video:/path.mp4", "fake".
    None or "" picks the environment's default (see :func:`default_camera_spec`); on the
    Pi that is picamera2, falling back to ``opencv:0`` where picamera2 is not importable.
    Keyword arguments go to the source's constructor (``size``, ``clock``...);
    recorded sources keep their own size, so ``size`` is dropped for them.
    """
    if not spec:
        spec = default_camera_spec()
        if spec == "picamera2":
            return _pi_camera_or_usb(kw)
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "picamera2":
        if arg and not arg.strip().isdigit():
            raise ValueError(f"picamera2:{arg}: the camera number is 0, 1, ... "
                             "(e.g. picamera2:1, or picamera2 for the first)")
        return Picamera2Source(camera_num=int(arg) if arg else 0, **kw)
    if kind == "opencv":
        if not arg:
            raise ValueError("opencv: needs a device index or URL, e.g. opencv:0")
        device: int | str = int(arg) if arg.isdigit() else arg
        return OpenCVSource(device, **kw)
    if kind in ("folder", "video"):
        kw.pop("size", None)
    if kind == "folder":
        if not arg:
            raise ValueError("folder: needs a path, e.g. folder:/home/pi/photos")
        if os.path.exists(arg) and not os.path.isdir(arg):
            raise ValueError(f"folder:{arg} is a file; use video:{arg} for a video")
        return FolderSource(arg, **kw)
    if kind == "video":
        if not arg:
            raise ValueError("video: needs a path, e.g. video:/home/pi/game.mp4")
        if os.path.isdir(arg):
            raise ValueError(f"video:{arg} is a folder; use folder:{arg}")
        return FolderSource(arg, **kw)
    if kind == "fake":
        if arg:
            raise ValueError("fake takes no argument")
        return FakeCamera(**kw)
    raise ValueError(f"unknown camera spec {spec!r}; expected one of: {', '.join(CAMERA_SPECS)}")
