"""What the strip shows, as pure functions from plain values to a frame.

Inputs are site numbers, seat letters and RGB tuples (not the rules engine's
types), so this module stays independent of ``companion`` and every pattern can be
tested frame by frame. Animated patterns take ``phase``: time measured in blink
periods (phase 0.0-0.5 is the first half of a period, 0.5-1.0 the second), so
the controller decides the speed and tests pick exact instants.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from .colour import BLACK, RED, RGB, WHITE, Frame, as_rgb, scale
from .ledmap import CITIES, LedMap, check_seat, check_site

DIM = 0.25
MONSTER_RGB: RGB = (0, 255, 0)


def blank(ledmap: LedMap) -> Frame:
    """All LEDs off."""
    return [BLACK] * ledmap.count


def _first_half(phase: float) -> bool:
    if not math.isfinite(phase):
        raise ValueError(f"phase must be finite, got {phase!r}")
    return (phase % 1.0) < 0.5


def _paint(frame: Frame, leds: Iterable[int], rgb: RGB) -> None:
    for led in leds:
        frame[led] = rgb


def card_guidance(
    ledmap: LedMap,
    sites_ok: Iterable[int],
    sites_dim: Iterable[int],
    rgb: RGB,
    seat: str | None,
    *,
    dim: float = DIM,
) -> Frame:
    """Where the current card lets the player build.

    The card names one site position; the controller passes that site in each of
    the six cities, split into ``sites_ok`` (the player's blocks can legally go
    there: full colour) and ``sites_dim`` (they can't: ``dim`` x colour, so the
    player still sees where the card points). The seat LED of the player to move
    lights in full colour. Where LEDs are shared, full colour wins over dim.
    """
    colour = as_rgb(rgb)
    dimmed = scale(colour, dim)
    ok = [check_site(s) for s in sites_ok]
    no = [check_site(s) for s in sites_dim]
    both = sorted(set(ok) & set(no))
    if both:
        raise ValueError(f"sites {both} are both legal and not legal")
    frame = blank(ledmap)
    for site in no:
        _paint(frame, ledmap.site_leds(site), dimmed)
    for site in ok:
        _paint(frame, ledmap.site_leds(site), colour)
    if seat is not None:
        _paint(frame, ledmap.seat_leds(check_seat(seat)), colour)
    return frame


def warning(ledmap: LedMap, site: int | None, phase: float) -> Frame:
    """Something is wrong at ``site`` (None: somewhere on the board): red, then white.

    First half of each period the site's LEDs are red, second half white; every
    other LED is off so the warning can't be mistaken for guidance.
    """
    colour = RED if _first_half(phase) else WHITE
    frame = blank(ledmap)
    if site is None:
        leds: set[int] = set()
        for s in range(len(ledmap.sites)):
            leds.update(ledmap.site_leds(s))
        _paint(frame, sorted(leds), colour)
    else:
        _paint(frame, ledmap.site_leds(check_site(site)), colour)
    return frame


def round_end(
    ledmap: LedMap,
    majorities: Mapping[int, RGB],
    tallest_site: int | None,
    phase: float,
) -> Frame:
    """Round scoring: each city in its majority colour, the tallest tower flashing white.

    Cities missing from ``majorities`` (a tie, or no blocks) stay dark. The
    tallest tower's site is white in the first half of each period and off in
    the second, over its city's colour.
    """
    frame = blank(ledmap)
    for city, rgb in majorities.items():
        if isinstance(city, bool) or not isinstance(city, int) or not 0 <= city < CITIES:
            raise ValueError(f"city must be 0..{CITIES - 1}, got {city!r}")
        _paint(frame, ledmap.city_leds(city), as_rgb(rgb))
    if tallest_site is not None:
        flash = WHITE if _first_half(phase) else BLACK
        _paint(frame, ledmap.site_leds(check_site(tallest_site)), flash)
    return frame


def monster(ledmap: LedMap, site: int, rgb: RGB = MONSTER_RGB) -> Frame:
    """The monster variant's monster stands at ``site``: that site in monster green."""
    frame = blank(ledmap)
    _paint(frame, ledmap.site_leds(check_site(site)), as_rgb(rgb))
    return frame


def seat_only(ledmap: LedMap, seat: str, rgb: RGB) -> Frame:
    """Only a seat LED, e.g. "your turn to commit blocks"."""
    frame = blank(ledmap)
    _paint(frame, ledmap.seat_leds(check_seat(seat)), as_rgb(rgb))
    return frame
