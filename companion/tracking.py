"""Deciding a move from what changed on the table.

The rules engine proposes; the image disposes. Each candidate move (every
legal build of the player to move, plus the physically possible illegal ones
at the changed site) is scored by how well the board it predicts matches the
reading. A misread storey count or colour is corrected toward the legal move
that explains the photo best; an illegal build that explains it clearly
better is kept, with its legality warning.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from companion.rules import (
    Block,
    Build,
    Card,
    Commit,
    GameState,
    IllegalMoveError,
    Pass,
    Phase,
    Seat,
    Site,
    SiteView,
    apply_move,
    block_exists,
    check_move,
    legal_builds,
)
from companion.rules.board import tower_height

#: Cost weights of the ranking: storeys off, wrong top colour, card disagreeing
#: with the stack the camera read, and the price of calling a move illegal.
HEIGHT_COST = 1.0
COLOR_COST = 2.5
CARD_COST = 1.5
ILLEGAL_COST = 1.2


@dataclass(frozen=True)
class Decision:
    """The explanation of one still scene."""

    kind: str  # "none", "move", "missed", "several", "unexplained"
    move: Build | Pass | None = None
    legal: bool = True
    reason: str | None = None  # legality reason code when not legal
    message: str = ""
    cost: float = 0.0
    changed: tuple[Site, ...] = ()
    #: for "several": the likeliest legal builds, in turn order, that explain every
    #: changed site (recorded as separate moves, each to be checked; none: the
    #: players enter the moves)
    suggested: tuple[Build, ...] = ()


def changed_sites(state: GameState, sites: Mapping[Site, SiteView],
                  unseen: Sequence[Site] = ()) -> list[Site]:
    """Visible sites whose height or owner differs from the record's board."""
    hidden = set(unseen)
    out = []
    for index in range(54):
        site = Site.from_index(index)
        if site in hidden:
            continue
        tower = state.board.tower(site)
        view = sites.get(site)
        expected = (tower_height(tower), tower[-1].color) if tower else None
        seen = (view.height, view.owner) if view else None
        if expected != seen:
            out.append(site)
    return out


def decide(state: GameState, sites: Mapping[Site, SiteView], unseen: Sequence[Site] = (),
           new_cards: Mapping[Seat, Card] | None = None,
           pixel_site: Site | None = None, out_of_sight: Sequence[Site] = (),
           cards_read: Mapping[Seat, Card] | None = None) -> Decision:
    """Explain a reading of the table as one move of the player to move.

    ``pixel_site``: the one site whose pixels clearly changed since the last
    still scene, if the caller knows it. When the reading shows no change but
    the player to move has just played the card for that site, a block was
    added there that the reading missed or could not see (a storey on a tall
    tower, a site behind one): it is decided as a build there, not as a pass.
    ``out_of_sight``: every site the camera could not see in this reading. A
    card played with no change in view is a build at the one site out of sight
    it gives (below); with none it is an (illegal) pass, and with several it is
    recorded as that pass, its warning naming them.
    ``cards_read``: the top card of every stack as last read. When the change is
    the next player's build, and the card on the stack of the player to move (the
    same card played again shows no change) builds only where the camera cannot
    see, and not at the site that changed (a pair may stand there), the decision
    is ``"missed"``: that player's build there (one storey of
    their first colour, to be corrected if it was more), then the scene again.
    The same when no change is in view but a new card is, and the card builds at
    exactly one site out of sight (a pass would be illegal: the player built).
    With none out of sight, it is ``"none"``: the card is down and its block not
    yet (a still scene between the two).
    Two builds in one scene (a hand hid the board between them) are ``"several"``:
    at two or three sites, or stacked at one whose top is the next player's; with
    ``suggested`` the legal builds in turn order that explain them, to be recorded
    as separate moves and checked (``explain_several``, ``stacked_pair``).
    """
    new_cards = dict(new_cards or {})
    if state.phase is not Phase.BUILD:
        return Decision("none", message="not in a building phase")
    changed = changed_sites(state, sites, unseen)
    card = new_cards.get(state.seat)
    if (not changed and card is not None and pixel_site is not None
            and card.site_cell(state.seat) == (pixel_site.row, pixel_site.col)):
        changed = [pixel_site]
        tower = state.board.tower(pixel_site)
        # what the reading saw there: the tower as it stood (the new block missed)
        sites = {**sites, pixel_site: SiteView(tower_height(tower), tower[-1].color)
                 if tower else SiteView(0, "")}
    if not changed:
        if card is None:
            return Decision("none")
        passed = Pass(state.seat, card)
        try:
            check_move(state, passed)
        except IllegalMoveError as exc:
            message = str(exc)
            builds, where = _builds_out_of_sight(state, card, out_of_sight)
            if len(where) == 1:
                # a legal build exists, so the player built: where the camera cannot see
                return _unseen_build(state, card, builds, where[0])
            if not where:
                # a card laid down before its block (a pause between the two is common):
                # no pass, the rules allow a build, and none can hide: wait for it
                return Decision("none", message=f"{card} is down; its block is not yet")
            # out of sight at several sites: recorded all the same (the turn order stays
            # right for what follows)
            names = ", ".join(x.name for x in where)
            message += (f"; no new block is in view, but it may stand where the camera "
                        f"cannot see ({names}): correct this move if so")
            return Decision("move", passed, False, exc.reason, message, 0.0, ())
        return Decision("move", passed, True, None, "", 0.0, ())
    if len(changed) > 1:
        names = ", ".join(s.name for s in changed)
        suggested = explain_several(state, sites, changed, new_cards, cards_read)
        if suggested:
            return Decision("several", changed=tuple(changed), suggested=suggested,
                            message=f"{len(changed)} sites changed at once ({names}): "
                                    "recorded as " + ", then ".join(map(str, suggested))
                                    + "; check each move")
        return Decision("several", changed=tuple(changed),
                        message=f"{len(changed)} sites changed at once ({names}); "
                                "confirm each move")
    site = changed[0]
    view = sites.get(site)
    if view is None:
        return Decision("unexplained", changed=(site,),
                        message=f"{site.name} looks empty now: blocks are never removed")
    best: tuple[float, Build, bool, str | None, str] | None = None
    seen_card = new_cards.get(state.seat)
    for move, legal, reason, message in _candidates(state, site, view, seen_card):
        cost = _cost(state, move, view, new_cards)
        if not legal:
            cost += ILLEGAL_COST
        if best is None or cost < best[0] - 1e-9:
            best = (cost, move, legal, reason, message)
    if best is None:
        return Decision("unexplained", changed=(site,),
                        message=f"no block of the player to move explains {site.name}")
    cost, move, legal, reason, message = best
    if reason == "wrong-turn" and cards_read:
        missed = _missed_move(state, move, cards_read, out_of_sight)
        if missed is not None:
            return missed
    if reason == "wrong-turn" or move.block.color != view.owner:
        # the next player's colour on top: their build out of turn, or both players
        # built there while a hand hid the board (the pair must explain it better;
        # where the mover's own build explains it but for the colour, a misread
        # colour is as likely, unless the next player's stack shows a new card too)
        pair = stacked_pair(state, site, view, new_cards)
        if pair is not None and pair[0] < cost and (
                reason == "wrong-turn" or pair[1][1].seat in new_cards):
            return Decision("several", changed=(site,), suggested=pair[1],
                            message=f"two blocks were built at {site.name} at once: recorded "
                                    f"as {pair[1][0]}, then {pair[1][1]}; check each move")
    if cost >= HEIGHT_COST * 3 + COLOR_COST:
        return Decision("unexplained", move, legal, reason,
                        f"the change at {site.name} fits no move well", cost, (site,))
    return Decision("move", move, legal, reason, message, cost, (site,))


#: Most sites explained as consecutive builds (orders tried: n factorial).
MAX_SUGGESTED = 3


def explain_several(state: GameState, sites: Mapping[Site, SiteView],
                    changed: Sequence[Site], new_cards: Mapping[Seat, Card],
                    cards_read: Mapping[Seat, Card] | None = None) -> tuple[Build, ...]:
    """The likeliest legal builds, one per changed site and in turn order from the
    player to move, that explain a scene where several sites changed (two players
    built while a hand hid the board). Every order of the sites is tried, each
    site's build ranked as a single change is; the cheapest sequence whose every
    build fits well (the colour read; then at most two storeys off, or the card
    on the stack another or none new) wins. Where none does, one of the sites may
    hold two of the builds, the second on the first (:func:`stacked_pair`: three
    players built while hands hid the board, two of them on one tower), where
    every builder's stack shows the card of their build: new, or the one it
    showed before (``cards_read``: a card played again shows nothing new). Empty
    when nothing explains it, or when more than ``MAX_SUGGESTED`` builds would."""
    if not 1 < len(changed) <= MAX_SUGGESTED:
        return ()
    best = _cheapest(state, sites, changed, new_cards, stacked=None)
    if best is None and len(changed) < MAX_SUGGESTED:
        for site in changed:
            found = _cheapest(state, sites, changed, new_cards, stacked=site)
            # (so many builds at once only where every builder's stack shows its card)
            if found is not None and all(_shows(m, new_cards, cards_read) for m in found[1]) \
                    and (best is None or found[0] < best[0] - 1e-9):
                best = found
    return () if best is None else best[1]


def stack_card(seat: Seat, new_cards: Mapping[Seat, Card],
               cards_read: Mapping[Seat, Card] | None) -> Card | None:
    """The card ``seat`` just played, else the one on their stack as last read (the
    same card played again shows no new card); None for a stack never read."""
    return new_cards.get(seat) or (cards_read or {}).get(seat)


def _shows(move: Build, new_cards: Mapping[Seat, Card],
           cards_read: Mapping[Seat, Card] | None) -> bool:
    """Whether ``move``'s seat's stack shows its card: new, or on top already."""
    return stack_card(move.seat, new_cards, cards_read) == move.card


def _cheapest(state: GameState, sites: Mapping[Site, SiteView], changed: Sequence[Site],
              new_cards: Mapping[Seat, Card], stacked: Site | None
              ) -> tuple[float, tuple[Build, ...]] | None:
    """:func:`explain_several`'s cheapest sequence over every order of ``changed``,
    with two builds stacked at ``stacked`` (None: one build a site), and its cost."""
    best: tuple[float, tuple[Build, ...]] | None = None
    for order in itertools.permutations(changed):
        now, total, moves = state, 0.0, []
        for site in order:
            view = sites.get(site)
            if view is None or now.phase is not Phase.BUILD:
                break
            if site == stacked:
                pair = stacked_pair(now, site, view, new_cards)  # (its cards weighed)
                if pair is None or pair[0] >= COLOR_COST:
                    break
                total += pair[0]
                for move in pair[1]:
                    moves.append(move)
                    now = apply_move(now, move)
                continue
            # a player whose stack shows no new card is less likely to have built
            step = best_build(now, site, view, new_cards,
                              CARD_COST if now.seat not in new_cards else 0.0)
            if step is None or step[0] >= COLOR_COST:
                break  # a suggestion keeps the colour seen
            total += step[0]
            moves.append(step[1])
            now = apply_move(now, step[1])
        else:
            if best is None or total < best[0] - 1e-9:
                best = (total, tuple(moves))
    return best


def stacked_pair(state: GameState, site: Site, view: SiteView,
                 new_cards: Mapping[Seat, Card]) -> tuple[float, tuple[Build, Build]] | None:
    """The likeliest pair of legal builds at one site, the player to move's and then
    the next player's on it, that explains what is seen there, and its cost: a
    top of the next player's colour is their build out of turn, or both built
    while a hand hid the board. A player to move with no new card on their stack
    is less likely to have built (``CARD_COST``)."""
    best: tuple[float, tuple[Build, Build]] | None = None
    for first in legal_builds(state):
        if first.site != site:
            continue
        card = new_cards.get(first.seat)
        cost = CARD_COST if card != first.card else 0.0
        if best is not None and cost >= best[0]:
            continue
        after = apply_move(state, first)
        if after.phase is not Phase.BUILD:
            continue
        second = best_build(after, site, view, new_cards, cost)
        if second is not None and (best is None or second[0] < best[0] - 1e-9):
            best = (second[0], (first, second[1]))
    return best


def best_build(state: GameState, site: Site, view: SiteView, new_cards: Mapping[Seat, Card],
               extra: float = 0.0) -> tuple[float, Build] | None:
    """The legal build at ``site`` of the player to move ranked best against
    ``view`` (as a single change is), and its cost plus ``extra``."""
    return min(((_cost(state, m, view, new_cards) + extra, m)
                for m in legal_builds(state) if m.site == site),
               key=lambda cm: cm[0], default=None)


def _missed_move(state: GameState, seen: Build, cards_read: Mapping[Seat, Card],
                 out_of_sight: Sequence[Site]) -> Decision | None:
    """The build of the player to move that the camera could not see, if their card
    allows it only out of sight and the build seen is the next player's; or the
    first of several such builds in turn, each player's card building only out of
    sight, when the build seen is the player's after them (a cup set down hid a
    site that two players built on in turn)."""
    if seen.seat is state.seat:
        return None
    card = cards_read.get(state.seat)
    if card is None:
        return None
    if any(m.card == card and m.site == seen.site for m in legal_builds(state)):
        return None  # the card builds where the change is: both built there, maybe
    builds, sites = _builds_out_of_sight(state, card, out_of_sight)
    if len(sites) != 1:
        return None  # no such site, or several: which one is not known
    missed = _unseen_build(state, card, builds, sites[0])
    assert missed.move is not None
    after = committed(apply_move(state, missed.move))
    if after.phase is not Phase.BUILD or after.seat is state.seat:
        return None
    if after.seat is seen.seat or _missed_move(after, seen, cards_read, out_of_sight):
        return missed
    return None


def committed(state: GameState) -> GameState:
    """``state`` past a commit phase: the camera cannot see block selection, so
    each player's is recorded as undeclared."""
    while state.phase is Phase.COMMIT:
        state = apply_move(state, Commit(state.seat, None))
    return state


def _builds_out_of_sight(state: GameState, card: Card, out_of_sight: Sequence[Site]
                         ) -> tuple[list[Build], list[Site]]:
    """The legal builds of the player to move with ``card`` at sites the camera
    cannot see, and those sites in index order."""
    hidden = set(out_of_sight)
    if not hidden:
        return [], []
    builds = [m for m in legal_builds(state) if m.card == card and m.site in hidden]
    return builds, sorted({m.site for m in builds}, key=lambda s: s.index)


def _unseen_build(state: GameState, card: Card, builds: Sequence[Build], site: Site
                  ) -> Decision:
    """The build of the player to move at the one site out of sight their card gives:
    the smallest block of their first colour, to be corrected by the players."""
    player = state.player
    smallest = min((m for m in builds if m.site == site),
                   key=lambda m: (m.block.storeys, player.colors.index(m.block.color)))
    message = (f"{player.name}'s move was not seen: their card {card} builds only where the "
               f"camera cannot see ({site.name}); recorded as {smallest.block.color} "
               f"{smallest.block.storeys} there, correct it if the block was another")
    return Decision("missed", smallest, True, "unseen-move", message, 0.0, (site,))


def _candidates(state: GameState, site: Site, view: SiteView, seen_card: Card | None,
                ) -> Iterator[tuple[Build, bool, str | None, str]]:
    """Legal builds at the site, then every physically possible build there (not a
    block its colour no longer has: that reading is a misread, and no move can
    place it)."""
    seen: set[Build] = set()
    for move in legal_builds(state):
        if move.site == site:
            seen.add(move)
            yield move, True, None, ""
    player = state.player
    cards = [Card.for_site(player.seat, site.row, site.col)]
    if seen_card is not None and seen_card not in cards:
        cards.append(seen_card)  # the card on the stack, though it gives another site
    for color in player.colors:
        for storeys in range(1, 5):
            for card in cards:
                move = Build(player.seat, card, site, Block(color, storeys))
                if move in seen:
                    continue
                try:
                    check_move(state, move)
                except IllegalMoveError as exc:
                    if exc.reason in ("wrong-phase", "game-over", "not-your-color") \
                            or not block_exists(state, move.block):
                        continue
                    yield move, False, exc.reason, str(exc)
                    continue
                yield move, True, None, ""
    # Another player's colour: the wrong player built (reported, not hidden).
    for other in state.config.players:
        if other == player or view.owner not in other.colors:
            continue
        for storeys in range(1, 5):
            if not block_exists(state, Block(view.owner, storeys)):
                continue
            card = Card.for_site(other.seat, site.row, site.col)
            move = Build(other.seat, card, site, Block(view.owner, storeys))
            yield move, False, "wrong-turn", (
                f"{view.owner.capitalize()} built at {site.name}, but it is "
                f"{player.name}'s turn ({'+'.join(player.colors)})")


def _cost(state: GameState, move: Build, view: SiteView, new_cards: Mapping[Seat, Card]) -> float:
    height = state.board.height(move.site) + move.block.storeys
    cost = HEIGHT_COST * abs(height - view.height)
    if move.block.color != view.owner:
        cost += COLOR_COST
    seen_card = new_cards.get(move.seat)
    if seen_card is not None and seen_card != move.card:
        cost += CARD_COST
    if move.seat != state.seat and state.seat in new_cards and move.seat not in new_cards:
        cost += 2 * CARD_COST  # the player to move just played a card: they built
    return cost
