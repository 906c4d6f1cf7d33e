"""A simulated camera over the reference board that sees an LED strip's lit LEDs.

``companion calibrate leds --camera sim[:LAYOUT]`` maps the strip it drives
with this camera instead of a real one: the board (no towers) is rendered once
from a camera on a stand over the South edge, and every frame shows, as spots
of light, the LEDs the strip shows lit, where a table wired as LAYOUT (a
built-in layout: serpentine or edges) has them. Like a real camera's pipeline
it delivers each picture ``lag`` frames late, so the mapping is tested against
the delay it has to wait out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hardware.camera import FakeCamera
from hardware.leds.ledmap import SITES, LedMap, site_coords

RGB = tuple[int, int, int]

#: how far outside the board's edge a seat's LED sits (mm)
SEAT_LED_OUT_MM = 15.0
#: a row or column LED's distance from its city's centre, in site pitches: beside
#: the city's outer row or column (at 2 it would be as near the next city)
EDGE_LED_PITCHES = 1.9
#: the camera on its stand: distance (mm), elevation and azimuth (degrees; 0 = over
#: the South edge), field of view: the whole board and the seat LEDs in the picture
CAMERA = {"distance_mm": 950.0, "elevation_deg": 58.0, "azimuth_deg": 0.0, "hfov_deg": 62.0}


def led_positions(ledmap: LedMap, profile: dict[str, Any]) -> dict[int, tuple[float, float]]:
    """Where a table wired as ``ledmap`` has each LED (board mm): a site's own LED at
    its centre, a row's LED west of its city, a column's south of it, a seat's just
    outside the board's edge on that side. LEDs the map does not use are nowhere."""
    from companion.vision.geometry import BoardGeometry

    centres = profile["cities"]["centres_mm"]
    pitch = float(profile["sites"]["pitch_mm"])
    half_w, half_h = (float(v) / 2 for v in profile["board"]["size_mm"])
    site_xy = BoardGeometry.from_profile(profile).site_xy

    def centre(site: int) -> tuple[float, float]:
        return float(site_xy[site][0]), float(site_xy[site][1])

    lit_sites: dict[int, list[int]] = {}
    for site in range(SITES):
        for led in ledmap.site_leds(site):
            lit_sites.setdefault(led, []).append(site)
    out: dict[int, tuple[float, float]] = {}
    for led, sites in lit_sites.items():
        if len(sites) == 1:
            out[led] = centre(sites[0])
            continue
        cities, rows, cols = zip(*(site_coords(s) for s in sites), strict=True)
        cx, cy = centres[cities[0]]
        if len(set(cities)) == 1 and len(set(rows)) == 1:  # a row's LED
            out[led] = (cx - EDGE_LED_PITCHES * pitch, centre(sites[0])[1])
        elif len(set(cities)) == 1 and len(set(cols)) == 1:  # a column's LED
            out[led] = (centre(sites[0])[0], cy - EDGE_LED_PITCHES * pitch)
        else:
            points = np.array([centre(s) for s in sites])
            out[led] = (float(points[:, 0].mean()), float(points[:, 1].mean()))
    outside = {"S": (0.0, -half_h - SEAT_LED_OUT_MM), "N": (0.0, half_h + SEAT_LED_OUT_MM),
               "W": (-half_w - SEAT_LED_OUT_MM, 0.0), "E": (half_w + SEAT_LED_OUT_MM, 0.0)}
    for seat, leds in ledmap.seats.items():
        for led in leds:
            out.setdefault(led, outside[seat])
    return out


class LedTableView:
    """The frames: the board rendered once, the lit LEDs drawn on a copy each time,
    handed out ``lag`` frames late."""

    def __init__(self, lit: Callable[[], Sequence[RGB] | None], ledmap: LedMap, *,
                 lag: int = 2, size: tuple[int, int] = (1280, 720), seed: int = 1) -> None:
        from companion.profiles import load_profile
        from companion.rules.board import Board
        from companion.sim.camera import look_at_camera, spherical_eye
        from companion.sim.layout import default_layout
        from companion.sim.render import render
        from companion.sim.scene import Lighting, Scene

        if lag < 0:
            raise ValueError(f"lag must be 0 or more frames, got {lag}")
        self.lit = lit
        lay = default_layout()
        scene = Scene(Board.empty(), lay.colour_set("classic"), deck=False, table="dark",
                      layout=lay)
        self.camera = look_at_camera(
            spherical_eye(CAMERA["distance_mm"], CAMERA["elevation_deg"], CAMERA["azimuth_deg"]),
            width=size[0], height=size[1], hfov_deg=CAMERA["hfov_deg"])
        rng = np.random.default_rng(seed)
        # a dimmed room, as for mapping LEDs: their light stands out
        self.board = render(scene, self.camera, Lighting(exposure=0.6), rng=rng, noise=0.004,
                            blur=0.6, vignetting=0.2).image
        self.noise = [rng.integers(0, 4, self.board.shape, dtype=np.uint8) for _ in range(4)]
        positions = led_positions(ledmap, load_profile())
        leds = sorted(positions)
        pixels = self.camera.project(np.array([[*positions[i], 0.0] for i in leds]))
        self.pixels = {led: (round(float(u)), round(float(v)))
                       for led, (u, v) in zip(leds, pixels, strict=True)}
        self.frames = 0
        self.queue: deque[np.ndarray] = deque(self.picture() for _ in range(lag))

    def picture(self) -> np.ndarray:
        """The board as the strip lights it now."""
        import cv2

        img = cv2.add(self.board, self.noise[self.frames % len(self.noise)])
        self.frames += 1
        light = None
        for led, rgb in enumerate(self.lit() or ()):
            if tuple(rgb) != (0, 0, 0) and led in self.pixels:
                if light is None:
                    light = np.zeros_like(img)
                r, g, b = (int(v) for v in rgb)
                cv2.circle(light, self.pixels[led], 5, (b, g, r), -1, cv2.LINE_AA)
        # an LED's light adds to what the board shows there (and saturates)
        return img if light is None else cv2.add(img, light)

    def __call__(self) -> np.ndarray:
        self.queue.append(self.picture())
        return self.queue.popleft()


def led_table_camera(lit: Callable[[], Sequence[RGB] | None], ledmap: LedMap, *,
                     lag: int = 2, size: tuple[int, int] = (1280, 720)) -> FakeCamera:
    """A frame source (the hardware package's fake camera) over :class:`LedTableView`:
    ``lit()`` gives what the strip shows now (``LedStrip.last_output``)."""
    return FakeCamera(LedTableView(lit, ledmap, lag=lag, size=size), size=size)
