"""LedStrip: brightness, the current budget (exact values) and the fake backend."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from hardware.leds import FakeBackend, LedStrip, estimate_ma, frame_to_json

WHITE = (255, 255, 255)


def strip(count: int, **kw: object) -> tuple[LedStrip, FakeBackend]:
    backend = FakeBackend(count)
    return LedStrip(count, backend=backend, **kw), backend  # type: ignore[arg-type]


def test_estimate_is_20_ma_per_full_channel() -> None:
    assert estimate_ma([WHITE]) == 60.0
    assert estimate_ma([(255, 0, 0), (0, 0, 0)]) == 20.0
    assert estimate_ma([(51, 0, 0)], milliamps_per_channel=10) == 2.0


def test_show_without_limits_sends_the_pixels() -> None:
    s, fake = strip(3)
    s[0] = (1, 2, 3)
    s[2] = (255, 0, 9)
    assert s.show() == [(1, 2, 3), (0, 0, 0), (255, 0, 9)]
    fake.assert_frame([(1, 2, 3), (0, 0, 0), (255, 0, 9)])
    fake.assert_frame({0: (1, 2, 3), 2: (255, 0, 9)})


def test_brightness_floors_exactly() -> None:
    s, fake = strip(4, brightness=0.5)
    s.show([WHITE, (70, 30, 0), (1, 1, 1), (0, 0, 0)])
    assert fake.last_frame == ((127, 127, 127), (35, 15, 0), (0, 0, 0), (0, 0, 0))
    s.brightness = 0.7  # 70 * 0.7 is 48.99999999999999 in floats; we want 49
    s.show([(70, 10, 255), (0, 0, 0), (0, 0, 0), (0, 0, 0)])
    assert fake.last_frame[0] == (49, 7, 178)  # type: ignore[index]
    with pytest.raises(ValueError, match="brightness"):
        s.brightness = 1.5


def test_budget_scales_the_whole_frame() -> None:
    s, fake = strip(10, budget_ma=300)
    out = s.show([WHITE] * 10)  # 600 mA wanted
    assert out == [(127, 127, 127)] * 10
    assert fake.last_frame == tuple([(127, 127, 127)] * 10)
    assert s.last_estimate_ma == pytest.approx(298.8235294)
    assert s.last_estimate_ma <= 300
    assert s.last_scale == 0.5


def test_budget_keeps_hue_and_applies_after_brightness() -> None:
    s, fake = strip(4, brightness=0.5, budget_ma=20)
    s.show([(255, 0, 0)] * 4)  # 127 each after brightness: 39.8 mA > 20 mA
    assert fake.last_frame == tuple([(63, 0, 0)] * 4)
    assert s.last_estimate_ma == pytest.approx(19.7647058)
    s.show([(200, 100, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0)])  # 100+50 -> 11.76 mA, under
    assert fake.last_frame[0] == (100, 50, 0)  # type: ignore[index]


def test_budget_not_exceeded_leaves_frame_alone_and_zero_budget_is_dark() -> None:
    s, fake = strip(2, budget_ma=120)
    s.show([WHITE, WHITE])  # exactly 120 mA
    assert fake.last_frame == (WHITE, WHITE)
    s.budget_ma = 0
    s.show([WHITE, (3, 0, 0)])
    assert fake.last_frame == ((0, 0, 0), (0, 0, 0))


@pytest.mark.parametrize("budget", [1, 7.5, 33.3, 100, 250])
def test_budget_is_never_exceeded(budget: float) -> None:
    import random

    rng = random.Random(1234)
    s, _ = strip(58, budget_ma=budget)
    for _ in range(20):
        frame = [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(58)]
        out = s.show(frame)
        assert estimate_ma(out) <= budget + 1e-9


def test_pixels_validation_and_helpers() -> None:
    s, fake = strip(3)
    with pytest.raises(ValueError, match="0..255"):
        s[0] = (256, 0, 0)
    with pytest.raises(ValueError, match="3 pixels|has 2 pixels"):
        s.set_frame([(0, 0, 0)] * 2)
    with pytest.raises(IndexError):
        s[3] = (0, 0, 0)
    s.fill((1, 2, 3))
    assert s.pixels == [(1, 2, 3)] * 3
    assert s.output_frame() == [(1, 2, 3)] * 3
    assert fake.frames == []  # output_frame does not show
    s.clear()
    assert s.pixels == [(0, 0, 0)] * 3
    with pytest.raises(ValueError, match="positive"):
        LedStrip(0, backend=FakeBackend())


def test_strip_json_for_the_page() -> None:
    s, _ = strip(2, brightness=0.5, budget_ma=1000)
    assert s.to_json()["pixels"] == ["#000000", "#000000"]
    s.show([(255, 0, 0), (0, 0, 0)])
    assert s.to_json() == {
        "backend": "fake",
        "count": 2,
        "brightness": 0.5,
        "budget_ma": 1000.0,
        "estimate_ma": 9.961,
        "pixels": ["#7f0000", "#000000"],
    }


def test_close_blanks_the_strip_and_closes_backend() -> None:
    with LedStrip(2, backend="fake") as s:
        s.show([WHITE, WHITE])
        fake = s.backend
    assert isinstance(fake, FakeBackend)
    assert fake.last_frame == ((0, 0, 0), (0, 0, 0))
    assert fake.closed and s.closed
    with pytest.raises(RuntimeError, match="closed"):
        s.show()


def test_default_backend_is_fake_off_a_pi() -> None:
    assert isinstance(LedStrip(5).backend, FakeBackend)


def test_fake_backend_assertions_report_differences() -> None:
    fake = FakeBackend(3)
    with pytest.raises(AssertionError, match="no frame"):
        fake.assert_frame([])
    fake.show([(1, 1, 1), (0, 0, 0), (2, 2, 2)])
    with pytest.raises(AssertionError, match=r"LED 2: got \(2, 2, 2\), expected \(0, 0, 0\)"):
        fake.assert_frame({0: (1, 1, 1)})
    assert fake.lit() == {0: (1, 1, 1), 2: (2, 2, 2)}
    with pytest.raises(ValueError, match="strip has 3"):
        fake.show([(0, 0, 0)])


def test_fake_backend_json_and_png() -> None:
    fake = FakeBackend(3)
    fake.show([(255, 0, 0), (0, 16, 255), (0, 0, 0)])
    assert fake.to_json() == {
        "backend": "fake",
        "count": 3,
        "frames_shown": 1,
        "pixels": ["#ff0000", "#0010ff", "#000000"],
    }
    assert frame_to_json([(1, 2, 3)]) == ["#010203"]
    png = fake.render_png(led_px=10, gap=2)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (14, 38, 3)  # 3 cells of 12 px + 2 px margin, one row
    assert tuple(int(v) for v in image[2 + 5, 2 + 5]) == (0, 0, 255)  # BGR of red LED 0
    assert tuple(int(v) for v in image[2 + 5, 14 + 5]) == (255, 16, 0)
    grid = fake.render(columns=2, led_px=10, gap=2)
    assert grid.shape == (26, 26, 3)
