"""Game set-up and the immutable game state.

A :class:`GameState` is a value: :func:`apply_move` returns a new state. The
state knows the cards in hand only when the game tracks them (bot games and
the simulator); at a real table the companion sees only played cards, so the
state then accepts any card and checks just what the table shows.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from companion.rules.board import Block, Board, Site
from companion.rules.cards import Card, full_deck, shuffled
from companion.rules.editions import Edition, get_edition
from companion.rules.errors import SetupError
from companion.rules.scoring import Score, score_board
from companion.rules.topology import CLOCKWISE, Seat, default_topology
from companion.rules.variants import (
    MONSTERS,
    MonsterStep,
    Variant,
    check_variants,
    default_monster_start,
    monster_move,
)


class Phase(str, enum.Enum):
    COMMIT = "commit"  # players choose their blocks for the round
    BUILD = "build"
    OVER = "over"

    def __repr__(self) -> str:
        return f"Phase.{self.name}"


class NoBuildPolicy(str, enum.Enum):
    """House rule for a player whose card allows no legal build.

    The rulebooks are silent. Either way the card is discarded and a new one
    drawn; with ``forfeit`` the player also gives up one committed block.
    """

    PASS = "pass"
    FORFEIT = "forfeit"


@dataclass(frozen=True)
class Player:
    name: str
    seat: Seat
    colors: tuple[str, ...]

    def __repr__(self) -> str:
        return f"Player({self.name!r}, {self.seat!r}, {self.colors!r})"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "seat": self.seat.value, "colors": list(self.colors)}


MAX_NAME = 40  # a player's name: what a phone's score line has room for


@dataclass(frozen=True)
class GameConfig:
    """Everything fixed at set-up. Player order is the first round's turn order."""

    edition: Edition
    players: tuple[Player, ...]
    variants: frozenset[Variant] = frozenset()
    no_build: NoBuildPolicy = NoBuildPolicy.PASS
    track_cards: bool = False
    seed: int = 0
    reshuffle_at_round_end: bool | None = None  # None: the edition's default
    monster_start: Site | None = None
    monster_wrap: bool | None = None  # None: Godzilla wraps, the Mayfair monster stops at edges
    slow_growth_order: tuple[int, ...] = (0, 1, 2, 3, 4, 5)

    def __post_init__(self) -> None:
        # Accept the plain strings of a header or a keyword argument ("forfeit"):
        # the policy is compared by identity, so it must be the enum member.
        try:
            object.__setattr__(self, "no_build", NoBuildPolicy(self.no_build))
        except ValueError:
            raise SetupError(f"unknown no-build house rule {self.no_build!r} "
                             f"(known: {', '.join(p.value for p in NoBuildPolicy)})") from None
        object.__setattr__(self, "variants", frozenset(
            v if isinstance(v, Variant) else Variant.parse(str(v)) for v in self.variants))
        n = len(self.players)
        rules = self.edition.rules_for(n)
        seats = [p.seat for p in self.players]
        if len(set(seats)) != n:
            raise SetupError("each player needs a different side of the board")
        colors = [c for p in self.players for c in p.colors]
        if len(set(colors)) != len(colors):
            raise SetupError("a colour is given to two players")
        for p in self.players:
            if len(p.colors) != rules.colors_per_player:
                raise SetupError(
                    f"with {n} players each plays {rules.colors_per_player} colour(s);"
                    f" {p.name} has {len(p.colors)}")
            for c in p.colors:
                if c not in self.edition.colors:
                    raise SetupError(
                        f"{c!r} is not a colour of {self.edition.title}"
                        f" ({', '.join(self.edition.colors)})")
            if not p.name:
                raise SetupError("every player needs a name")
            if len(p.name) > MAX_NAME or not p.name.isprintable():
                # shown on every phone at every event, and one line in `companion games`
                raise SetupError(f"a player's name is at most {MAX_NAME} printable "
                                 f"characters: {p.name[:MAX_NAME]!r}...")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not (
                0 <= self.seed < 2 ** 63):
            # as the record keeps it: a seed of -1 made a game that could not be resumed
            raise SetupError(f"the seed must be a whole number from 0 to 2**63-1, not "
                             f"{str(self.seed)[:40]!r}")
        check_variants(self.variants)
        start = self.monster_start
        if self.monster is Variant.GODZILLA and start is not None and (
                start.row, start.col) != (default_topology().rows // 2,
                                          default_topology().cols // 2):
            # the variant: "set it in the center of any city"
            raise SetupError(f"Godzilla starts in the centre of a city, not at {start.code}")
        if sorted(self.slow_growth_order) != list(range(6)):
            raise SetupError("slow_growth_order must list the six cities once each")

    @property
    def colors(self) -> tuple[str, ...]:
        return tuple(c for p in self.players for c in p.colors)

    @property
    def rounds(self) -> int:
        return self.edition.rules_for(len(self.players)).rounds

    @property
    def blocks_per_color(self) -> int:
        return self.edition.rules_for(len(self.players)).blocks_per_color

    @property
    def monster(self) -> Variant | None:
        found = self.variants & MONSTERS
        return next(iter(found)) if found else None

    @property
    def wraps(self) -> bool:
        if self.monster_wrap is not None:
            return self.monster_wrap
        return self.monster is Variant.GODZILLA

    @property
    def reshuffles_each_round(self) -> bool:
        if self.reshuffle_at_round_end is not None:
            return self.reshuffle_at_round_end
        return self.edition.reshuffle_at_round_end

    def player_of(self, seat: Seat) -> Player:
        for p in self.players:
            if p.seat == seat:
                return p
        raise SetupError(f"nobody sits at {seat}")

    def owner_of_color(self, color: str) -> Player | None:
        for p in self.players:
            if color in p.colors:
                return p
        return None


def check_new_game(config: GameConfig) -> GameConfig:
    """What a game set up now must also be, beyond what a stored one was allowed:
    each player a name of their own (the scores are told by name, formats.md's
    ``"players": {"name": total}``; a game journaled before this was checked still
    loads). Returns ``config``."""
    names = [p.name for p in config.players]
    twice = next((name for k, name in enumerate(names) if name in names[:k]), None)
    if twice is not None:
        raise SetupError(f"two players are named {twice!r}")
    return config


def make_config(players: Sequence[tuple[str, str | Seat, Sequence[str]] | Player] | int = 4,
                edition: str | Edition = "classic", variants: Sequence[str | Variant] = (),
                **kw: Any) -> GameConfig:
    """Build a config from plain values; ``players`` may be a count for defaults."""
    ed = edition if isinstance(edition, Edition) else get_edition(edition)
    if isinstance(players, int):
        players = default_players(ed, players)
    plist = []
    for p in players:
        if isinstance(p, Player):
            plist.append(p)
        else:
            name, seat, colors = p
            plist.append(Player(name, seat if isinstance(seat, Seat) else Seat.parse(seat),
                                tuple(colors)))
    vs = frozenset(v if isinstance(v, Variant) else Variant.parse(v) for v in variants)
    return check_new_game(GameConfig(ed, tuple(plist), vs, **kw))


def default_players(edition: Edition, n: int) -> list[Player]:
    rules = edition.rules_for(n)
    seats = {2: [Seat.S, Seat.N], 3: [Seat.S, Seat.W, Seat.N], 4: list(CLOCKWISE)}[n]
    cols = list(edition.colors)
    out = []
    for i, seat in enumerate(seats):
        colors = tuple(cols[i * rules.colors_per_player:(i + 1) * rules.colors_per_player])
        out.append(Player(f"Player {i + 1}", seat, colors))
    return out


@dataclass(frozen=True)
class GameState:
    """A position in a game. Build new ones with :func:`new_game` and :func:`apply_move`."""

    config: GameConfig
    board: Board
    round: int
    phase: Phase
    start: int  # index of this round's start player
    to_move: int  # index of the player to commit or build
    supply: dict[str, dict[int, int]]  # blocks still in the box, per colour and size
    pending: dict[str, tuple[Block, ...] | None]  # committed, unplaced; None = undeclared
    placed_this_round: dict[str, int]
    hands: tuple[tuple[Card, ...], ...] | None
    deck: tuple[Card, ...] | None
    played: dict[Seat, tuple[Card, ...]]  # each seat's face-up stack, top last
    monster: Site | None
    scores: tuple[Score, ...] = ()
    removed: dict[str, dict[int, int]] = field(default_factory=dict)  # destroyed or forfeited
    ply: int = 0
    reshuffles: int = 0
    last_monster_step: MonsterStep | None = None

    def evolve(self, **changes: Any) -> GameState:
        """``dataclasses.replace`` without ``__init__``: a move makes four or five new
        states on the way, and the replay's search makes tens of thousands of moves
        (GameState checks nothing on construction, so nothing is skipped)."""
        unknown = changes.keys() - _STATE_FIELDS
        if unknown:
            raise TypeError(f"GameState has no field {sorted(unknown)[0]!r}")
        new = object.__new__(GameState)
        new.__dict__.update({name: self.__dict__[name] for name in _STATE_FIELDS}, **changes)
        return new

    @property
    def players(self) -> tuple[Player, ...]:
        return self.config.players

    @property
    def player(self) -> Player:
        """The player to act."""
        return self.config.players[self.to_move]

    @property
    def seat(self) -> Seat:
        return self.player.seat

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def round_order(self) -> list[int]:
        """Player indices in this round's turn order (clockwise from the start player)."""
        n = len(self.config.players)
        return [(self.start + k) % n for k in range(n)]

    def hand(self, player: int | None = None) -> tuple[Card, ...] | None:
        if self.hands is None:
            return None
        return self.hands[self.to_move if player is None else player]

    def remaining_blocks(self, player: int | None = None) -> tuple[Block, ...] | None:
        """A player's committed, unplaced blocks; None if undeclared."""
        p = self.config.players[self.to_move if player is None else player]
        out: list[Block] = []
        for c in p.colors:
            pend = self.pending.get(c)
            if pend is None:
                return None
            out.extend(pend)
        return tuple(out)

    def blocks_left_this_round(self, player: int | None = None) -> int:
        p = self.config.players[self.to_move if player is None else player]
        return sum(self.config.blocks_per_color - self.placed_this_round.get(c, 0)
                   for c in p.colors)

    def open_cities(self) -> tuple[int, ...]:
        if Variant.SLOW_GROWTH not in self.config.variants:
            return tuple(range(6))
        n = min(6, 2 + self.round)
        return tuple(sorted(self.config.slow_growth_order[:n]))

    def score(self) -> Score:
        return score_board(self.board, self.config.colors)

    def totals(self) -> dict[str, int]:
        """Running total per colour over the scored rounds."""
        out = {c: 0 for c in self.config.colors}
        for s in self.scores:
            for c in out:
                out[c] += s.total(c)
        return out

    def player_totals(self) -> dict[str, int]:
        col = self.totals()
        return {p.name: sum(col[c] for c in p.colors) for p in self.config.players}


_STATE_FIELDS = frozenset(f.name for f in fields(GameState))


def new_game(config: GameConfig) -> GameState:
    """The position before the first round's block selection."""
    supply = {c: dict(config.edition.supply) for c in config.colors}
    hands: tuple[tuple[Card, ...], ...] | None = None
    deck: tuple[Card, ...] | None = None
    if config.track_cards:
        cards = shuffled(full_deck(config.edition.deck_copies), config.seed, "deal")
        n = len(config.players)
        size = config.edition.hand_size
        dealt = [list(cards[k::n][:size]) for k in range(n)]
        hands = tuple(tuple(h) for h in dealt)
        deck = cards[n * size:]
    monster = None
    if config.monster is not None:
        monster = config.monster_start or default_monster_start(config.monster)
    board = Board.empty()
    return GameState(
        config=config, board=board, round=1, phase=Phase.COMMIT, start=0, to_move=0,
        supply=supply, pending={c: () for c in config.colors},
        placed_this_round={c: 0 for c in config.colors}, hands=hands, deck=deck,
        played={p.seat: () for p in config.players}, monster=monster,
        removed={c: {} for c in config.colors},
    )


# -- transitions used by legality.apply_move ---------------------------------

def _next_builder(state: GameState, after: int) -> int | None:
    """The next player clockwise (in round order) who still has a block to place."""
    order = state.round_order()
    pos = order.index(after)
    for k in range(1, len(order) + 1):
        idx = order[(pos + k) % len(order)]
        if state.blocks_left_this_round(idx) > 0:
            return idx
    return None


def _draw(state: GameState, player: int) -> GameState:
    if state.hands is None or state.deck is None:
        return state
    deck, reshuffles = state.deck, state.reshuffles
    played = dict(state.played)
    if not deck:
        pool = tuple(c for seat in played for c in played[seat])
        reshuffles += 1
        deck = shuffled(pool, state.config.seed, f"reshuffle-{reshuffles}")
        played = {seat: () for seat in played}
    hands = list(state.hands)
    if deck:
        hands[player] = hands[player] + (deck[0],)
        deck = deck[1:]
    return state.evolve(hands=tuple(hands), deck=deck, played=played, reshuffles=reshuffles)


def _play_card(state: GameState, player: int, card: Card) -> GameState:
    seat = state.config.players[player].seat
    played = dict(state.played)
    played[seat] = played[seat] + (card,)
    hands = state.hands
    if hands is not None:
        hand = list(hands[player])
        hand.remove(card)
        hands = hands[:player] + (tuple(hand),) + hands[player + 1:]
    return state.evolve(played=played, hands=hands)


def _move_monster(state: GameState, seat: Seat, card: Card) -> GameState:
    variant = state.config.monster
    if variant is None or state.monster is None:
        return state
    row, col = card.site_cell(seat)
    direction = (row - 1, col - 1)
    board, step = monster_move(variant, state.board, state.monster, direction, state.config.wraps)
    removed = {c: dict(v) for c, v in state.removed.items()}
    for site, count in step.removed:
        for b in state.board.tower(site)[-count:]:
            sizes = removed.setdefault(b.color, {})
            sizes[b.storeys] = sizes.get(b.storeys, 0) + 1
    return state.evolve(board=board, monster=step.end, removed=removed,
                        last_monster_step=step)


def _end_turn(state: GameState, mover: int) -> GameState:
    nxt = _next_builder(state, mover)
    if nxt is not None:
        return state.evolve(to_move=nxt)
    return _end_round(state)


def _end_round(state: GameState) -> GameState:
    scores = state.scores + (score_board(state.board, state.config.colors),)
    if state.round >= state.config.rounds:
        return state.evolve(scores=scores, phase=Phase.OVER)
    n = len(state.config.players)
    start = (state.start + 1) % n
    deck, played, reshuffles = state.deck, state.played, state.reshuffles
    if state.config.reshuffles_each_round and deck is not None:
        pool = deck + tuple(c for seat in played for c in played[seat])
        reshuffles += 1
        deck = shuffled(pool, state.config.seed, f"reshuffle-{reshuffles}")
        played = {seat: () for seat in played}
    return state.evolve(
        scores=scores, round=state.round + 1, phase=Phase.COMMIT, start=start,
        to_move=start, pending={c: () for c in state.config.colors},
        placed_this_round={c: 0 for c in state.config.colors},
        deck=deck, played=played, reshuffles=reshuffles,
    )
