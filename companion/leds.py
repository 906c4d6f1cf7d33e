"""What the LED strip shows during a game, decided from the session.

Priority: an open warning blinks on its site; right after a round is scored
each city shows its majority colour and the tallest tower flashes; otherwise
the current card's sites light in the player's colour (dimmed where no block
of theirs may go), with the monster's site in the monster variants.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from companion.profiles import load_profile
from companion.rules import GameState
from hardware.errors import HardwareError
from hardware.leds import patterns
from hardware.leds.ledmap import LedMap
from hardware.leds.strip import LedStrip

log = logging.getLogger(__name__)

RGB = tuple[int, int, int]


def color_rgb(name: str, edition_colors: Sequence[str] = (), profile: dict[str, Any] | None = None
              ) -> RGB:
    """The sRGB of a colour in play, via the profile's colour sets (2017 blue differs)."""
    prof = profile or load_profile()
    for mapping in prof["colour_sets"].values():
        if name in mapping and (not edition_colors or set(edition_colors) <= set(mapping)):
            r, g, b = prof["colours"][mapping[name]]
            return (int(r), int(g), int(b))
    if name in prof["colours"]:
        r, g, b = prof["colours"][name]
        return (int(r), int(g), int(b))
    return (255, 255, 255)


class TableLeds:
    """The controller's LED sink: renders patterns on a strip."""

    def __init__(self, strip: LedStrip, ledmap: LedMap, *, round_end_seconds: float = 8.0,
                 blink_period: float = 0.8, clock: Callable[[], float] = time.monotonic) -> None:
        self.strip = strip
        self.ledmap = ledmap
        self.round_end_seconds = round_end_seconds
        self.blink_period = blink_period
        self.clock = clock
        self._scored_rounds = 0
        self._round_end_until = 0.0
        self._last: tuple[Any, ...] | None = None
        #: why the strip refused the last frame (None: it took it)
        self.failure: str | None = None

    def replay_round(self) -> None:
        """The last round's scoring shown again for ``round_end_seconds`` (the next
        round button)."""
        self._round_end_until = self.clock() + self.round_end_seconds

    def show_guidance(self, guidance: dict[str, Any] | None, warning_sites: Sequence[int],
                      state: GameState) -> list[RGB]:
        now = self.clock()
        phase = now / self.blink_period
        if len(state.scores) > self._scored_rounds:
            self._scored_rounds = len(state.scores)
            self._round_end_until = now + self.round_end_seconds
        colors = state.config.colors
        if warning_sites:
            frame = patterns.warning(self.ledmap, warning_sites[-1], phase)
        elif state.scores and now < self._round_end_until:
            score = state.scores[-1]
            majorities = {city: color_rgb(owner, colors)
                          for city, owner in enumerate(score.majorities) if owner}
            tallest = score.tallest_sites[0].index if score.tallest_owner else None
            frame = patterns.round_end(self.ledmap, majorities, tallest, phase)
        elif guidance is not None:
            rgb = color_rgb(guidance["colors"][0], colors)
            frame = patterns.card_guidance(self.ledmap, guidance["lit"], guidance["dim"], rgb,
                                           guidance["seat"])
            if guidance.get("monster") is not None:
                for led in self.ledmap.site_leds(guidance["monster"]):
                    frame[led] = patterns.MONSTER_RGB
        elif state.monster is not None:
            frame = patterns.monster(self.ledmap, state.monster.index)
        elif not state.is_over:
            frame = patterns.seat_only(self.ledmap, state.seat.value,
                                       color_rgb(state.player.colors[0], colors))
        else:
            frame = patterns.blank(self.ledmap)
        try:
            self.strip.show(frame)
        except (OSError, HardwareError) as exc:
            # the LEDs are help, not the game: a strip that fails (its SPI device gone,
            # a loose wire on a level shifter) must not stop the camera's tracking
            if self.failure is None:
                log.error("the LED strip failed (%s): the game goes on without it", exc)
            self.failure = str(exc)
        else:
            if self.failure is not None:
                log.warning("the LED strip works again")
            self.failure = None
        return list(frame)

