"""Automatic LED mapping on a synthetic camera that sees where each LED shines."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import pytest

from calibration.leds import LedCalibrationError, image_to_board, locate_spot, map_leds
from companion.profiles import load_profile
from hardware.leds.backends import FakeBackend
from hardware.leds.ledmap import edges, serpentine, site_coords
from hardware.leds.strip import LedStrip

K = np.array([[1000.0, 0, 640], [0, 1000.0, 360], [0, 0, 1]])
RVEC = np.array([2.5, 0.0, 0.0])  # looking down from above the South edge
TVEC = np.array([0.0, 80.0, 900.0])
SEAT_XY = {"S": (0, -230), "W": (-300, 0), "N": (0, 230), "E": (300, 0)}


def _site_xy(site: int, profile) -> tuple[float, float]:
    city, row, col = site_coords(site)
    cx, cy = profile["cities"]["centres_mm"][city]
    pitch = profile["sites"]["pitch_mm"]
    return cx + (col - 1) * pitch, cy + (1 - row) * pitch


def _led_positions(ledmap, profile) -> dict[int, tuple[float, float]]:
    """Where each LED physically sits for a one-LED-per-site strip."""
    pos = {}
    for site in range(54):
        for led in ledmap.site_leds(site):
            pos[led] = _site_xy(site, profile)
    for seat, leds in ledmap.seats.items():
        for led in leds:
            pos[led] = SEAT_XY[seat]
    return pos


def _camera(backend: FakeBackend, positions, size=(1280, 720)):
    """Renders the last frame the strip showed: a dark table with light spots, under
    sensor noise (eight seeded noise pictures taken in turn: drawing a frame's worth of
    noise for each of a mapping's 300-420 frames was most of these tests' time)."""
    rng = np.random.default_rng(3)
    noisy = itertools.cycle([cv2.add(np.full((size[1], size[0], 3), 30, np.uint8),
                                     rng.integers(0, 6, (size[1], size[0], 3), dtype=np.uint8))
                             for _ in range(8)])

    def grab() -> np.ndarray:
        img = next(noisy).copy()
        frame = backend.last_frame or ()
        for led, rgb in enumerate(frame):
            if rgb != (0, 0, 0) and led in positions:
                x, y = positions[led]
                uv, _ = cv2.projectPoints(np.array([[x, y, 0.0]]), RVEC, TVEC, K, None)
                u, v = uv.reshape(2)
                cv2.circle(img, (round(u), round(v)), 5, (255, 255, 255), -1, cv2.LINE_AA)
        return img

    return grab


def test_projection_round_trip():
    uv, _ = cv2.projectPoints(np.array([[-140.0, 70.0, 0.0]]), RVEC, TVEC, K, None)
    x, y = image_to_board(tuple(uv.reshape(2)), K, RVEC, TVEC)
    assert abs(x + 140) < 1e-6 and abs(y - 70) < 1e-6


def _serpentine_rig():
    """The reference board's profile, the serpentine layout, a fake strip and its backend."""
    profile = load_profile()
    truth = serpentine()
    backend = FakeBackend()
    return profile, truth, backend, LedStrip(truth.count, backend=backend)


def test_a_serpentine_strip_is_mapped_back_exactly():
    profile, truth, backend, strip = _serpentine_rig()
    grab = _camera(backend, _led_positions(truth, profile))
    found, points = map_leds(strip.show, grab, truth.count, (K, RVEC, TVEC), profile)
    assert found.sites == truth.sites
    assert dict(found.seats) == dict(truth.seats)
    assert backend.last_frame == tuple([(0, 0, 0)] * truth.count)  # left dark


def test_a_dead_led_is_named():
    profile = load_profile()
    truth = serpentine()
    positions = _led_positions(truth, profile)
    dead = truth.site_leds(20)[0]
    del positions[dead]
    backend = FakeBackend()
    strip = LedStrip(truth.count, backend=backend)
    with pytest.raises(LedCalibrationError, match=r"1 site\(s\) have no LED .*first: site 20"):
        map_leds(strip.show, _camera(backend, positions), truth.count, (K, RVEC, TVEC), profile)


def test_spot_finding_ignores_noise():
    base = np.full((100, 100, 3), 20, np.uint8)
    assert locate_spot(base, base) is None
    lit = base.copy()
    cv2.circle(lit, (70, 30), 3, (255, 255, 255), -1)
    u, v = locate_spot(base, lit)
    assert abs(u - 70) < 0.5 and abs(v - 30) < 0.5


def _spot_over_the_whole_frame(baseline, lit, min_delta=40.0):
    """The spot as the whole frame gives it: every half-peak pixel, wherever it is."""
    diff = cv2.absdiff(lit, baseline)
    grey = cv2.GaussianBlur(diff.max(axis=2), (0, 0), 2.0)
    peak = float(grey.max())
    if peak < min_delta:
        return None
    ys, xs = np.nonzero(grey >= 0.5 * peak)
    w = grey[ys, xs].astype(np.float64)
    return float((xs * w).sum() / w.sum()), float((ys * w).sum() / w.sum())


def test_the_spot_is_the_whole_frames_to_the_bit():
    # the half-peak pixels are looked for in the box that holds them: the same pixels,
    # the same sums, with several lights, big and small, and noise over the frame
    rng = np.random.default_rng(11)
    found = 0
    for k in range(40):
        base = cv2.add(np.full((180, 320, 3), 30, np.uint8),
                       rng.integers(0, 6, (180, 320, 3), dtype=np.uint8))
        lit = base.copy()
        for _ in range(int(rng.integers(0, 3))):
            centre = (int(rng.integers(0, 320)), int(rng.integers(0, 180)))
            colour = tuple(int(c) for c in rng.integers(0, 256, 3))
            cv2.circle(lit, centre, int(rng.integers(1, 9)), colour, -1, cv2.LINE_AA)
        if k % 5 == 0:
            lit = cv2.add(lit, rng.integers(0, 90, lit.shape, dtype=np.uint8))
        want = _spot_over_the_whole_frame(base, lit)
        assert locate_spot(base, lit) == want
        found += want is not None
    assert found >= 20  # lights were there to find


def test_edges_layout_builds_rows_and_columns():
    # the built-in edge layout lights a site by its row LED and its column LED
    m = edges()
    assert all(len(m.site_leds(s)) == 2 for s in range(54))


class _Late:
    """A camera ``lag`` frames late, as real pipelines are: each read returns the
    picture taken ``lag`` reads before (the strip as it was then)."""

    def __init__(self, grab, lag: int) -> None:
        self.grab, self.reads = grab, 0
        self.queue = [grab() for _ in range(lag)]

    def __call__(self) -> np.ndarray:
        self.reads += 1
        self.queue.append(self.grab())
        return self.queue.pop(0)


@pytest.mark.parametrize("lit_before", [False, True])
@pytest.mark.parametrize("lag", [1, 2])
def test_a_camera_some_frames_late_maps_every_led_where_it_is(lag: int, lit_before: bool):
    """A camera one frame late had every LED mapped one place off (sites ((1,), (2,),
    (3,)...) for ((0,), (1,), (2,)...)), in silence; a strip lit before the mapping
    (the camera shows it a while) gave a lit picture for the dark one."""
    profile, truth, backend, strip = _serpentine_rig()
    if lit_before:
        strip.show([(255, 255, 255)] * truth.count)
    grab = _Late(_camera(backend, _led_positions(truth, profile)), lag)
    found, _ = map_leds(strip.show, grab, truth.count, (K, RVEC, TVEC), profile)
    assert found.sites == truth.sites
    assert dict(found.seats) == dict(truth.seats)
    assert backend.last_frame == tuple([(0, 0, 0)] * truth.count)
    # the dark picture after 15 frames; per LED: lit after lag + 1, one more, dark after lag + 1
    assert grab.reads == 15 + truth.count * (2 * lag + 3)


def test_a_camera_whose_picture_froze_is_refused():
    profile, truth, backend, strip = _serpentine_rig()
    live = _camera(backend, _led_positions(truth, profile))
    frozen: list[np.ndarray] = []

    def grab() -> np.ndarray:
        if frozen:
            return frozen[0]
        img = live()
        if backend.lit() == {3: (255, 255, 255)}:
            frozen.append(img)
        return img

    with pytest.raises(LedCalibrationError, match=r"^the camera still saw LED 3 lit 15 frames "
                                                  r"after it was turned off"):
        map_leds(strip.show, grab, truth.count, (K, RVEC, TVEC), profile)


def test_a_distorted_lens_spot_is_undistorted_before_it_is_taken_to_the_board():
    """A calibrated lens with distortion (the calibration file's): the spot is where the
    lens bends it, and goes back to the board through the lens."""
    from calibration.leds import locate_leds

    profile = load_profile()
    truth = serpentine()
    positions = _led_positions(truth, profile)
    dist = np.array([-0.25, 0.08, 0.0, 0.0, 0.0])
    backend = FakeBackend()
    strip = LedStrip(truth.count, backend=backend)

    def grab() -> np.ndarray:
        img = np.full((720, 1280, 3), 30, np.uint8)
        for led in backend.lit():
            uv, _ = cv2.projectPoints(np.array([[*positions[led], 0.0]]), RVEC, TVEC, K, dist)
            u, v = uv.reshape(2)
            cv2.circle(img, (round(u), round(v)), 5, (255, 255, 255), -1, cv2.LINE_AA)
        return img

    found = locate_leds(strip.show, grab, truth.count, (K, RVEC, TVEC), dist=dist)
    errors = [np.hypot(found[led][0] - x, found[led][1] - y) for led, (x, y) in positions.items()]
    assert max(errors) < 1.0  # mm
    bent = locate_leds(strip.show, grab, truth.count, (K, RVEC, TVEC))  # the lens left out
    assert max(np.hypot(bent[led][0] - x, bent[led][1] - y)
               for led, (x, y) in positions.items()) > 5.0  # 8.4 mm at the corners
