"""Editions as data: what differs between the printed rulebooks.

Sources: the 1994 Hans im Glueck rules (and John Webley's translation), the
2017 Mandoo/FoxMind rules and the Mayfair rules with its variants
(../shared/rules/).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from companion.rules.errors import SetupError

#: Blocks per colour: storeys -> count (3 x 4, 4 x 3, 6 x 2, 11 x 1 = 47 storeys).
STANDARD_SUPPLY: tuple[tuple[int, int], ...] = ((4, 3), (3, 4), (2, 6), (1, 11))

CLASSIC_COLORS = ("red", "blue", "green", "black")
COLORS_2017 = ("orange", "yellow", "purple", "blue")


class TieBreak(str, enum.Enum):
    """How a tie for the most points at game end is settled."""

    SHARED = "shared"  # 1994 and Mayfair: the rulebooks name no tie-break
    HIGHEST_THEN_MOST = "highest-then-most"  # 2017: highest building, then most buildings


@dataclass(frozen=True)
class PlayerCountRules:
    """Rounds and blocks for one number of players."""

    rounds: int
    blocks_per_color: int  # blocks each colour commits per round
    colors_per_player: int


@dataclass(frozen=True)
class Edition:
    """One printed edition of Manhattan."""

    name: str
    title: str
    colors: tuple[str, ...]
    supply: tuple[tuple[int, int], ...] = STANDARD_SUPPLY
    deck_kinds: int = 9
    deck_copies: int = 5
    hand_size: int = 4
    players: dict[int, PlayerCountRules] = field(default_factory=lambda: {
        4: PlayerCountRules(4, 6, 1),
        3: PlayerCountRules(6, 4, 1),
        2: PlayerCountRules(6, 4, 2),
    })
    tie_break: TieBreak = TieBreak.SHARED
    # Mayfair: "Shuffle the discard pile and the deck together at the end of
    # each round"; offered as an option, the default in that edition.
    reshuffle_at_round_end: bool = False
    # Mayfair: the start player may be asked to finalise the selection first;
    # every edition commits in turn order from the start player.
    city_names: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return f"EDITIONS[{self.name!r}]"

    def rules_for(self, n_players: int) -> PlayerCountRules:
        try:
            return self.players[n_players]
        except KeyError:
            raise SetupError(
                f"{self.title} is played by {', '.join(map(str, sorted(self.players)))} players,"
                f" not {n_players}") from None

    @property
    def storeys_per_color(self) -> int:
        return sum(s * n for s, n in self.supply)

    @property
    def blocks_per_color_total(self) -> int:
        return sum(n for _, n in self.supply)


EDITIONS: dict[str, Edition] = {
    "classic": Edition(
        name="classic",
        title="Manhattan (Hans im Glueck, 1994)",
        colors=CLASSIC_COLORS,
    ),
    "2017": Edition(
        name="2017",
        title="Manhattan (Mandoo Games / FoxMind, 2017)",
        colors=COLORS_2017,
        tie_break=TieBreak.HIGHEST_THEN_MOST,
    ),
    "mayfair": Edition(
        name="mayfair",
        title="Manhattan (Mayfair Games)",
        colors=CLASSIC_COLORS,
        reshuffle_at_round_end=True,
    ),
}
EDITION_ALIASES = {"1994": "classic", "hig": "classic", "mandoo": "2017", "foxmind": "2017"}


def get_edition(name: str) -> Edition:
    key = name.strip().lower()
    key = EDITION_ALIASES.get(key, key)
    try:
        return EDITIONS[key]
    except KeyError:
        raise SetupError(
            f"unknown edition {name!r} (known: {', '.join(EDITIONS)})") from None


def supply_blocks(edition: Edition) -> dict[int, int]:
    return dict(edition.supply)
