"""Legality, separate from applying a move (as in python-chess).

Every refusal is an :class:`IllegalMoveError` whose ``reason`` is one of the
codes in :data:`REASONS`, with a message a player understands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import combinations_with_replacement, product

from companion.rules.board import MAX_STOREYS, Block, Site, storeys_of, tower_owner
from companion.rules.cards import ALL_CARDS, Card
from companion.rules.errors import IllegalMoveError
from companion.rules.moves import Build, Commit, Move, Pass
from companion.rules.state import (
    GameState,
    NoBuildPolicy,
    Phase,
    _draw,
    _end_turn,
    _move_monster,
    _play_card,
)
from companion.rules.topology import Seat, default_topology
from companion.rules.variants import Variant

REASONS: dict[str, str] = {
    "game-over": "the game is over",
    "wrong-phase": "a move of another phase (block selection or building)",
    "wrong-turn": "it is another player's turn",
    "card-not-in-hand": "the card is not in the player's hand",
    "wrong-site": "the site is not the one the card gives from that seat",
    "not-your-color": "the block is not one of the player's colours",
    "block-not-committed": "the block is not among the player's committed, unused blocks",
    "no-blocks-left": "the player has placed all blocks for this round",
    "too-few-storeys": "building on an opponent's tower without as many storeys as its owner",
    "anti-trust": "Anti-trust: no block on one's own building",
    "city-closed": "Slow Growth: the city is not open yet this round",
    "monster-site": "the monster stands on that site",
    "wrong-count": "the selection has the wrong number of blocks",
    "not-in-supply": "the selection takes blocks the player no longer has",
    "build-possible": "a pass is allowed only when the card gives no legal build",
    "bad-forfeit": "the forfeited block is wrong for the house rule in force",
}


def _illegal(reason: str, message: str) -> IllegalMoveError:
    return IllegalMoveError(reason, message)


def _player_index(state: GameState, seat: Seat) -> int:
    for i, p in enumerate(state.config.players):
        if p.seat == seat:
            return i
    raise _illegal("wrong-turn", f"nobody plays from seat {seat}")


def check_move(state: GameState, move: Move) -> None:
    """Raise :class:`IllegalMoveError` if ``move`` is not legal in ``state``."""
    if state.phase is Phase.OVER:
        raise _illegal("game-over", "the game is over")
    idx = _player_index(state, move.seat)
    if isinstance(move, Commit):
        if state.phase is not Phase.COMMIT:
            raise _illegal("wrong-phase", "blocks are chosen at the start of a round")
        if idx != state.to_move:
            raise _illegal("wrong-turn", f"{state.player.name} ({state.seat}) chooses blocks now")
        _check_commit(state, idx, move)
        return
    if state.phase is not Phase.BUILD:
        raise _illegal("wrong-phase", "every player must first choose this round's blocks")
    if idx != state.to_move:
        raise _illegal("wrong-turn",
                       f"it is {state.player.name}'s turn ({state.seat}), not {move.seat}'s")
    hand = state.hand(idx)
    if hand is not None and move.card not in hand:
        raise _illegal("card-not-in-hand", f"{state.player.name} does not hold card {move.card}")
    if isinstance(move, Build):
        check_build(state, idx, move.card, move.site, move.block)
        return
    _check_pass(state, idx, move)


def is_legal(state: GameState, move: Move) -> bool:
    try:
        check_move(state, move)
    except IllegalMoveError:
        return False
    return True


def _check_commit(state: GameState, idx: int, move: Commit) -> None:
    if move.blocks is None:
        return
    player = state.config.players[idx]
    per = state.config.blocks_per_color
    for b in move.blocks:
        if b.color not in player.colors:
            raise _illegal("not-your-color", f"{b.color} is not {player.name}'s colour")
    for color in player.colors:
        chosen = [b.storeys for b in move.blocks if b.color == color]
        available = sum(state.supply[color].values())
        want = min(per, available)
        if len(chosen) != want:
            raise _illegal("wrong-count",
                           f"{player.name} must choose {want} {color} blocks, not {len(chosen)}")
        for size in set(chosen):
            have = state.supply[color].get(size, 0)
            if chosen.count(size) > have:
                raise _illegal("not-in-supply",
                               f"{color} has {have} block(s) of {size} storeys left, not "
                               f"{chosen.count(size)}")


def check_build(state: GameState, idx: int, card: Card, site: Site, block: Block) -> None:
    """The site, block and tower rules for one build (turn and hand checked by the caller)."""
    reason = _build_fault(state, idx, card, site, block)
    if reason is not None:
        raise _illegal(reason, _build_message(reason, state, idx, card, site, block))


def _build_fault(state: GameState, idx: int, card: Card, site: Site, block: Block
                 ) -> str | None:
    """The reason :func:`check_build` refuses the build for, or None: the rules alone,
    without the message (the legal builds are found by trying every block at every
    site, and the illegal ones are most)."""
    return _faults_at(state, idx, card, site)(block)


def _faults_at(state: GameState, idx: int, card: Card, site: Site
               ) -> Callable[[Block], str | None]:
    """:func:`_build_fault` for any block at one site: what does not depend on the
    block is worked out once (the legal builds at a site try every block of the
    player's colours, and the replay's search asks that of hundreds of thousands of
    states). The checks keep their order, so a build at fault twice gets the first."""
    player = state.config.players[idx]
    row, col = card.site_cell(player.seat)
    if (site.row, site.col) != (row, col):
        return _wrong_site
    colors = player.colors
    none_left = state.blocks_left_this_round(idx) <= 0
    per_color = state.config.blocks_per_color
    placed, pending, supply = state.placed_this_round, state.pending, state.supply
    closed = site.city not in state.open_cities()
    on_monster = state.monster is not None and site == state.monster
    tower = state.board.tower(site)
    owner = tower_owner(tower)
    anti_trust = Variant.ANTI_TRUST in state.config.variants

    def fault(block: Block) -> str | None:
        if block.color not in colors:
            return "not-your-color"
        if none_left or placed.get(block.color, 0) >= per_color:
            return "no-blocks-left"
        pend = pending.get(block.color)
        if pend is None:
            if supply[block.color].get(block.storeys, 0) <= 0:
                return "not-in-supply"
        elif block not in pend:
            return "block-not-committed"
        if closed:
            return "city-closed"
        if on_monster:
            return "monster-site"
        if owner is None:
            return None
        if owner in colors:
            return "anti-trust" if anti_trust else None
        if storeys_of(tower, block.color) + block.storeys < storeys_of(tower, owner):
            return "too-few-storeys"
        return None

    return fault


def _wrong_site(block: Block) -> str:
    return "wrong-site"


#: What :func:`check_build` says of the faults that need only the names involved
#: (:func:`_build_message` works out the other three).
_PLAIN_MESSAGES = {
    "not-your-color": "{color} is not {name}'s colour",
    "no-blocks-left": "{name} has no {color} block left to place this round",
    "not-in-supply": "{color} has no {storeys}-storey block left",
    "city-closed": "Slow Growth: {city} opens later",
    "monster-site": "the monster stands on {site}",
    "anti-trust": "Anti-trust: {name} may not build on their own {site}",
}


def _build_message(reason: str, state: GameState, idx: int, card: Card, site: Site,
                   block: Block) -> str:
    """What :func:`check_build` says of a build refused for ``reason``."""
    player = state.config.players[idx]
    topo = default_topology()
    plain = _PLAIN_MESSAGES.get(reason)
    if plain is not None:
        return plain.format(color=block.color, name=player.name, storeys=block.storeys,
                            city=topo.city_names[site.city], site=site.name)
    if reason == "wrong-site":
        row, col = card.site_cell(player.seat)
        return (f"card {card} from seat {player.seat} gives the {topo.site_names[row][col]}"
                f" site, not {site.local_name}")
    if reason == "block-not-committed":
        pend = state.pending.get(block.color) or ()
        left = ", ".join(str(b.storeys) for b in sorted(pend, key=lambda b: -b.storeys)) or "none"
        return (f"{block.color} did not commit a {block.storeys}-storey block for this "
                f"round (left: {left})")
    tower = state.board.tower(site)
    owner = tower_owner(tower)
    assert reason == "too-few-storeys" and owner is not None
    theirs = storeys_of(tower, owner)
    mine = storeys_of(tower, block.color) + block.storeys
    return (f"{block.color.capitalize()} needs {theirs} storeys of its own to take this tower "
            f"from {owner.capitalize()}, and would have {mine}")


def _check_pass(state: GameState, idx: int, move: Pass) -> None:
    hand = state.hand(idx)
    cards = hand if hand is not None else (move.card,)
    for card in cards:
        found = next(_builds_for_card(state, idx, card), None)
        if found is not None:
            where = "the hand" if hand is not None else f"card {move.card}"
            raise _illegal("build-possible",
                           f"{state.config.players[idx].name} can still build with {where}:"
                           f" {found}")
    forfeit_needed = _forfeit_required(state, idx)
    if not forfeit_needed:
        if move.forfeit is not None:
            raise _illegal("bad-forfeit", "the house rule in force keeps every block")
        return
    if move.forfeit is None:
        raise _illegal("bad-forfeit", "a block must be forfeited with this pass")
    remaining = state.remaining_blocks(idx)
    player = state.config.players[idx]
    if move.forfeit.color not in player.colors:
        raise _illegal("not-your-color", f"{move.forfeit.color} is not {player.name}'s colour")
    if remaining is not None and move.forfeit not in remaining:
        raise _illegal("bad-forfeit", f"{move.forfeit} is not among the blocks left")
    color = move.forfeit.color
    if state.placed_this_round.get(color, 0) >= state.config.blocks_per_color:
        raise _illegal("bad-forfeit", f"{player.name} has no {color} block left this round")
    if state.pending.get(color) is None and \
            state.supply[color].get(move.forfeit.storeys, 0) <= 0:
        raise _illegal("bad-forfeit", f"{color} has no {move.forfeit.storeys}-storey block left")


def _forfeit_required(state: GameState, idx: int) -> bool:
    """A forfeit happens under the forfeit house rule, or when no card at all could
    ever place the player's blocks (so the round can still end)."""
    if state.config.no_build is NoBuildPolicy.FORFEIT:
        return True
    return all(next(_builds_for_card(state, idx, c), None) is None for c in ALL_CARDS)


def _distinct_blocks(state: GameState, idx: int) -> list[Block]:
    player = state.config.players[idx]
    out: set[Block] = set()
    for color in player.colors:
        if state.placed_this_round.get(color, 0) >= state.config.blocks_per_color:
            continue
        pend = state.pending.get(color)
        if pend is None:
            out.update(Block(color, s) for s, n in state.supply[color].items() if n > 0)
        else:
            out.update(pend)
    return sorted(out, key=lambda b: (b.color, -b.storeys))


def _builds_for_card(state: GameState, idx: int, card: Card) -> Iterator[Build]:
    seat = state.config.players[idx].seat
    row, col = card.site_cell(seat)
    blocks = _distinct_blocks(state, idx)
    for city in range(default_topology().cities):
        site = Site(city, row, col)
        fault = _faults_at(state, idx, card, site)
        for block in blocks:
            if fault(block) is None:
                yield Build(seat, card, site, block)


def legal_builds(state: GameState, cards: tuple[Card, ...] | None = None) -> list[Build]:
    """Every legal build for the player to move (all nine cards if hands are untracked)."""
    if state.phase is not Phase.BUILD:
        return []
    idx = state.to_move
    if cards is None:
        cards = tuple(sorted(set(state.hand(idx) or ALL_CARDS)))
    return [b for card in cards for b in _builds_for_card(state, idx, card)]


def legal_builds_at(state: GameState, site: Site, card: Card) -> list[Build]:
    """The legal builds of the player to move at ``site`` with ``card``: each of their
    colours in turn, 1 to 4 storeys (what :func:`check_move` allows of those moves,
    without raising for each one it refuses)."""
    if state.phase is not Phase.BUILD:
        return []
    idx = state.to_move
    hand = state.hand(idx)
    if hand is not None and card not in hand:
        return []
    player = state.config.players[idx]
    fault = _faults_at(state, idx, card, site)
    return [Build(player.seat, card, site, block) for block in _every_block(player.colors)
            if fault(block) is None]


@lru_cache(maxsize=16)
def _every_block(colors: tuple[str, ...]) -> tuple[Block, ...]:
    """Each colour's blocks of 1 to 4 storeys, in that order: made once per player's
    colours, not at each site the replay's search tries."""
    return tuple(Block(color, storeys) for color in colors
                 for storeys in range(1, MAX_STOREYS + 1))


def legal_moves(state: GameState) -> list[Move]:
    """All legal moves: selections in the commit phase, builds (or passes) otherwise."""
    if state.phase is Phase.OVER:
        return []
    idx = state.to_move
    player = state.config.players[idx]
    if state.phase is Phase.COMMIT:
        per_color: list[list[tuple[Block, ...]]] = []
        for color in player.colors:
            sizes = [s for s, n in sorted(state.supply[color].items()) if n > 0]
            want = min(state.config.blocks_per_color, sum(state.supply[color].values()))
            options = []
            for combo in combinations_with_replacement(sorted(sizes, reverse=True), want):
                if all(combo.count(s) <= state.supply[color][s] for s in set(combo)):
                    options.append(tuple(Block(color, s) for s in combo))
            per_color.append(options)
        return [Commit(player.seat, tuple(b for part in parts for b in part))
                for parts in product(*per_color)]
    builds = legal_builds(state)
    if builds:
        return list(builds)
    hand = state.hand(idx)
    cards = tuple(sorted(set(hand))) if hand is not None else ALL_CARDS
    if not _forfeit_required(state, idx):
        return [Pass(player.seat, c) for c in cards]
    remaining = state.remaining_blocks(idx)
    forfeits = set(_distinct_blocks(state, idx)) if remaining is None else set(remaining)
    return [Pass(player.seat, c, b) for c in cards for b in sorted(forfeits)]


def has_legal_build(state: GameState) -> bool:
    return bool(state.phase is Phase.BUILD and legal_builds(state))


def apply_move(state: GameState, move: Move, *, check: bool = True) -> GameState:
    """Return the state after ``move``; checks legality unless ``check=False``.

    ``check=False`` is for what really happened at a table (an illegal build
    that the players let stand); the move must still be physically possible.
    """
    if check:
        check_move(state, move)
    if state.phase is Phase.OVER:
        raise _illegal("game-over", "the game is over")
    idx = _player_index(state, move.seat)
    if isinstance(move, Commit):
        return _apply_commit(state, idx, move)
    if state.phase is not Phase.BUILD:
        raise _illegal("wrong-phase", "every player must first choose this round's blocks")
    hand = state.hand(idx)
    if hand is not None and move.card not in hand:
        raise _illegal("card-not-in-hand",
                       f"{state.config.players[idx].name} does not hold card {move.card}")
    s = _play_card(state, idx, move.card)
    if isinstance(move, Build):
        s = _take_block(s, move.block)
        s = s.evolve(board=s.board.with_block(move.site, move.block))
    elif move.forfeit is not None:
        s = _take_block(s, move.forfeit)
        removed = {c: dict(v) for c, v in s.removed.items()}
        sizes = removed.setdefault(move.forfeit.color, {})
        sizes[move.forfeit.storeys] = sizes.get(move.forfeit.storeys, 0) + 1
        s = s.evolve(removed=removed)
    if isinstance(move, Build) or s.config.monster is not Variant.GODZILLA:
        # Godzilla moves "after you play a card and build a piece"; the Mayfair
        # monsters move whenever a card is played.
        s = _move_monster(s, move.seat, move.card)
    s = _draw(s, idx)
    s = s.evolve(ply=s.ply + 1)
    return _end_turn(s, idx)


def _block_source(state: GameState, block: Block) -> str | None:
    """Where a block placed now comes from, legal or not: "committed" (this round's
    selection), "supply" (the box: no selection, or an illegal build), "swap" (a
    committed block of that colour given up for it, to keep the counts right), or
    None: the colour has no such block at all, so no build can have placed it."""
    pend = state.pending.get(block.color)
    if pend is not None and block in pend:
        return "committed"
    if state.supply.get(block.color, {}).get(block.storeys, 0) > 0:
        return "supply"
    if pend is not None and any(b.color == block.color for b in pend):
        return "swap"
    return None


def block_exists(state: GameState, block: Block) -> bool:
    """Whether a build, legal or not, can place ``block`` now: a reading that shows a
    block its colour no longer has is a misread, not a move."""
    return block.color in state.pending and _block_source(state, block) is not None


def _take_block(state: GameState, block: Block) -> GameState:
    color = block.color
    if color not in state.pending:
        raise _illegal("not-your-color", f"{color} is not a colour in this game")
    placed = dict(state.placed_this_round)
    placed[color] = placed.get(color, 0) + 1
    pend = state.pending[color]
    pending = dict(state.pending)
    supply = {c: dict(v) for c, v in state.supply.items()}
    source = _block_source(state, block)
    if source is None:
        raise _illegal("not-in-supply", f"{color} has no {block.storeys}-storey block left at all")
    if source == "supply":
        # Undeclared selection, or an illegal build with a block from the box.
        supply[color][block.storeys] -= 1
    else:
        # Committed; or, illegal at the table (a block of another size than committed),
        # the count kept right by giving up a committed block of that colour.
        assert pend is not None
        rest = list(pend)
        rest.remove(block if source == "committed" else next(b for b in pend
                                                               if b.color == color))
        pending[color] = tuple(rest)
    return state.evolve(pending=pending, supply=supply, placed_this_round=placed)


def _apply_commit(state: GameState, idx: int, move: Commit) -> GameState:
    player = state.config.players[idx]
    pending = dict(state.pending)
    supply = {c: dict(v) for c, v in state.supply.items()}
    for color in player.colors:
        if move.blocks is None:
            pending[color] = None
            continue
        chosen = tuple(b for b in move.blocks if b.color == color)
        for b in chosen:
            if supply[color].get(b.storeys, 0) <= 0:
                raise _illegal("not-in-supply", f"{color} has no {b.storeys}-storey block left")
            supply[color][b.storeys] -= 1
        pending[color] = chosen
    s = state.evolve(pending=pending, supply=supply)
    order = s.round_order()
    pos = order.index(idx)
    if pos + 1 < len(order):
        return s.evolve(to_move=order[pos + 1])
    return s.evolve(phase=Phase.BUILD, to_move=order[0])
