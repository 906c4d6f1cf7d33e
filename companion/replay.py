"""From a sequence of board readings to a game record.

The camera (live) and a folder of phone photos (replay) both give a series of
observations: per site a height and top colour, sites that could not be seen,
and the top card of each seat's stack. The game record is the source of truth:
each new observation is explained by the legal moves of the rules engine
(ranked against what the photo shows), and what cannot be explained legally is
kept as what happened, with a warning.
"""

from __future__ import annotations

import difflib
import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from companion.imagefiles import damage_warning
from companion.rules import (
    CLOCKWISE,
    Block,
    Board,
    Build,
    Card,
    Commit,
    GameConfig,
    GameRecord,
    GameState,
    IllegalMoveError,
    Move,
    Pass,
    Phase,
    Player,
    RulesError,
    Seat,
    Site,
    SiteView,
    apply_move,
    check_move,
    get_edition,
    legal_builds_at,
    new_game,
    score_views,
)
from companion.rules.board import tower_height
from companion.rules.editions import EDITIONS
from companion.rules.record import MoveEntry
from companion.tracking import (
    COLOR_COST,
    HEIGHT_COST,
    committed,
)


@dataclass(frozen=True)
class Observation:
    """What one photo shows."""

    name: str
    sites: Mapping[Site, SiteView]
    unseen: frozenset[Site] = frozenset()
    cards: Mapping[Seat, Card] = field(default_factory=dict)
    #: read sites whose reading won narrowly: a move there is marked for a check. Not
    #: part of what the photo shows, so two photos reading the same board stay equal.
    doubtful: frozenset[Site] = field(default=frozenset(), compare=False)
    #: the block a camera that stayed put saw built since the photo before (site,
    #: storeys, colour), when the fit to the change was sure: evidence about the move
    #: itself, which a misread tower under it does not shift (companion.stills)
    build: tuple[Site, int, str] | None = field(default=None, compare=False)
    #: sites a camera that stayed put saw unchanged since the photo before: their
    #: reading repeats that photo's (and its misread), so it is no new evidence
    unchanged: frozenset[Site] = field(default=frozenset(), compare=False)
    #: unseen sites whose top colour the photo shows (a tower the reader could not
    #: give a height, its best towers all of one colour: ``Reading.covered_tops``)
    tops: Mapping[Site, str] = field(default_factory=dict, compare=False)
    #: the colour set the photo's tops show, read with every colour (asked of a
    #: game's last photos only: ``Reading.colours_shown``); None when not asked or
    #: when too few towers told
    colours_shown: str | None = field(default=None, compare=False)
    #: the decoder's words when the photo's file was damaged and decoded anyway
    damage: str | None = field(default=None, compare=False)
    #: the reader's warnings of how the photo was read, (reason, message): a board
    #: shown small, a mirrored photo read flipped back (``photo_warnings``)
    notes: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @classmethod
    def from_board(cls, name: str, board: Board, cards: Mapping[Seat, Card] | None = None,
                   unseen: Iterable[Site] = ()) -> Observation:
        hidden = frozenset(unseen)
        views = {s: v for s, v in board.views().items() if s not in hidden}
        return cls(name, views, hidden, dict(cards or {}))


def exact_photos(config: GameConfig, bots: Sequence[Any], builds: int | None = None,
                 ) -> tuple[list[Observation], list[Move], GameState]:
    """A game ``bots`` play (one per player, each a ``choose(state)``), photographed as a
    perfect reader would: the board and the card stacks before the first build and
    after each one (``builds``: that many, None: the whole game). The replay's search on
    its own (the bench, the tests); with the builds played and the last state."""
    state = new_game(config)
    photos = [Observation.from_board("p000", state.board)]
    moves: list[Move] = []
    while not state.is_over and (builds is None or len(moves) < builds):
        move = bots[state.to_move].choose(state)
        state = apply_move(state, move)
        if isinstance(move, Commit):
            continue
        moves.append(move)
        cards = {p.seat: state.played[p.seat][-1] for p in config.players
                 if state.played[p.seat]}
        photos.append(Observation.from_board(f"p{len(moves):03d}", state.board, cards))
    return photos, moves, state


@dataclass
class Change:
    site: Site
    before: tuple[int, str | None]
    after: tuple[int, str]

    @property
    def delta(self) -> int:
        return self.after[0] - self.before[0]


class ReplayError(ValueError):
    """The photos cannot be replayed as a game; the message says why in one line."""


@dataclass
class ReplayResult:
    record: GameRecord
    moves: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    state: GameState
    inferred_players: bool = False
    rounds_override: list[dict[str, Any]] | None = None
    round_boards: list[dict[str, Any]] = field(default_factory=list)
    misreads: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        players = [(p.name, p.colors) for p in self.state.config.players]
        rounds = [{"round": k + 1, **s.to_json(), "players": s.players(players)}
                  for k, s in enumerate(self.state.scores)]
        if self.rounds_override is not None:
            rounds = self.rounds_override
        for r, board in zip(rounds, self.round_boards, strict=False):
            r["board"] = board
        out: dict[str, Any] = {"moves": self.moves, "rounds": rounds, "warnings": self.warnings,
                               "misreads": self.misreads,
                               "players": [p.to_json() for p in self.state.config.players],
                               "record": self.record.to_json()}
        if self.state.is_over:
            out["result"] = out["record"].get("result")
        return out


def diff(board: Board, obs: Observation) -> list[Change]:
    """Sites where the photo disagrees with the board the record gives."""
    out = []
    for index in range(54):
        site = Site.from_index(index)
        if site in obs.unseen:
            continue
        tower = board.tower(site)
        before = (tower_height(tower), tower[-1].color if tower else None)
        view = obs.sites.get(site)
        after = (view.height, view.owner) if view else (0, None)
        if after != before:
            out.append(Change(site, before, after))  # type: ignore[arg-type]
    return out


def infer_players(observations: Sequence[Observation], colors: Sequence[str] | None = None,
                  ) -> tuple[GameConfig, list[str]]:
    """Colours and seats from the photos: who builds when whose card stack changes."""
    notes: list[str] = []
    seen_colors: list[str] = []
    for obs in observations:
        for site in sorted(obs.sites):
            c = obs.sites[site].owner
            if c not in seen_colors:
                seen_colors.append(c)
    if colors:
        seen_colors = [c for c in colors if c in seen_colors] or list(colors)
    seats_seen = [s for s in CLOCKWISE if any(s in o.cards for o in observations)]
    votes: dict[str, Counter[Seat]] = {c: Counter() for c in seen_colors}
    first: tuple[Seat, str] | None = None
    prev_board: dict[Site, SiteView] = {}
    prev_cards: Mapping[Seat, Card] = {}
    for obs in observations:
        changed = [s for s, v in obs.sites.items() if prev_board.get(s) != v]
        stacks = [s for s, c in obs.cards.items() if prev_cards.get(s) != c]
        if len(changed) == 1 and len(stacks) == 1:
            color = obs.sites[changed[0]].owner
            votes.setdefault(color, Counter())[stacks[0]] += 1
            if first is None:
                first = (stacks[0], color)
        prev_board, prev_cards = dict(obs.sites), obs.cards
    n_colors = len(seen_colors)
    n_seats = len(seats_seen)
    if n_seats not in (2, 3, 4):
        n_seats = 2 if n_colors == 4 and n_seats == 2 else min(max(n_colors, 2), 4)
        seats_seen = {2: [Seat.S, Seat.N], 3: [Seat.S, Seat.W, Seat.N],
                      4: list(CLOCKWISE)}[n_seats]
        notes.append(f"no card stacks seen: assumed {n_seats} players at "
                     f"{', '.join(s.value for s in seats_seen)}")
    per_player = 2 if n_seats == 2 else 1
    # the colours named, when they are, say the edition and who may play what
    named = list(colors or ())
    edition = "classic"
    for ed in EDITIONS.values():
        if set(named or seen_colors) <= set(ed.colors):
            edition = ed.name
            break
    all_colors = list(get_edition(edition).colors)
    pool = list(dict.fromkeys([*seen_colors, *named, *all_colors]))
    assignment: dict[Seat, list[str]] = {s: [] for s in seats_seen}
    for color in sorted(pool, key=lambda c: -sum(votes.get(c, Counter()).values())):
        ranked = [s for s, _ in votes.get(color, Counter()).most_common() if s in assignment]
        for seat in ranked + list(seats_seen):
            if len(assignment[seat]) < per_player:
                assignment[seat].append(color)
                break
        if all(len(v) == per_player for v in assignment.values()):
            break
    start = first[0] if first else seats_seen[0]
    k = seats_seen.index(start)
    order = seats_seen[k:] + seats_seen[:k]
    players = tuple(Player(f"{seat.value} ({'+'.join(assignment[seat])})", seat,
                           tuple(assignment[seat])) for seat in order)
    notes.append("players inferred from the photos: " + "; ".join(
        f"{p.seat.value} plays {'+'.join(p.colors)}" for p in players)
        + f"; {players[0].seat.value} starts")
    config = GameConfig(get_edition(edition), players)
    return config, notes


def replay(observations: Sequence[Observation], config: GameConfig | None = None,
           *, skipped: Sequence[tuple[str, str]] = (),
           colors: Sequence[str] | None = None) -> ReplayResult:
    """Explain a photographed game move by move (or, across gaps, as sets of builds).

    ``colors``: the colours named in play when no ``config`` says who plays
    them (the players are inferred from the photos among those colours)."""
    warnings: list[dict[str, Any]] = [
        {"photo": name, "reason": "bad-photo", "message": f"{name}: {why}; skipped"}
        for name, why in skipped]
    # photos of another board are left out before anything is read from them
    observations, apart = fitting_photos(observations, config)
    warnings.extend(apart)
    late = late_start(observations)
    if late is not None:
        raise ReplayError(late)
    warnings.extend({"photo": o.name, "reason": "damaged",
                     "message": f"{o.name}: {damage_warning(o.damage)}"}
                    for o in observations if o.damage)
    warnings.extend({"photo": o.name, "reason": reason, "message": f"{o.name}: {message}"}
                    for o in observations for reason, message in o.notes)
    inferred = config is None
    if config is None:
        config, notes = infer_players(observations, colors)
        warnings.extend({"photo": None, "reason": "inferred-players", "message": n}
                        for n in notes)
    if _mostly_gaps(observations):
        return _replay_rounds(observations, config, warnings, inferred)
    chosen, others = _search(observations, config)
    ties = _ties(chosen, others) if chosen is not None else {}
    result = _record(observations, config, chosen.step if chosen else None, warnings, inferred,
                     ties)
    if chosen is not None and chosen.pending is not None:
        result.warnings.append(_unshown_build(chosen.state, chosen.pending, observations))
    return result


# --- photos that do not fit the game ------------------------------------------------
#
# A tower never shrinks (bar a monster's step): a photo in which most of the towers of
# the photo before are gone, or lower by two storeys or more, is not of this game (a
# photo of another table, of the board put away), however cheaply a few invented
# builds and misreads explain it. The photos read a storey low now and then, and lose
# a tower or two behind taller ones (a late game's photos lose at most 4 of 18-26),
# never most of them.

#: the fewest towers gone that make a photo not fit the photo before it ...
STRANGER_TOWERS = 3
#: ... and the least share of that photo's towers (seen in both) they must be
STRANGER_SHARE = 0.5
#: photos after a photo that does not fit looked at: when none of them fits the game
#: either, a new game began there
NEW_GAME_PHOTOS = 2


def _gone(before: Observation, after: Observation) -> tuple[int, int]:
    """Of the towers ``before`` shows at sites ``after`` shows too, how many ``after``
    shows gone (empty, two storeys or more lower, or lower under another colour), and
    how many there are."""
    gone = towers = 0
    for site, was in before.sites.items():
        if site in after.unseen:
            continue
        towers += 1
        now = after.sites.get(site)
        if now is None or now.height <= was.height - 2 or (
                now.height < was.height and now.owner != was.owner):
            gone += 1
    return gone, towers


def late_start(observations: Sequence[Observation]) -> str | None:
    """Why the photos cannot be replayed when the first already shows more moves than
    one photo may show (:data:`MAX_MOVES_PER_PHOTO`): the photographing began mid-game,
    and the builds before it would be invented, or dropped, and the moves after them
    recorded against the wrong players. None when it is not so.

    A tower of h storeys took ceil(h / 4) builds at least (a block has four storeys at
    most; its lower storeys are often hidden), and a seat with a card on its stack has
    moved. Only what the next photo shows too (or does not see) counts: a phantom tower
    on the empty board is not read again."""
    if not observations:
        return None
    first = observations[0]
    nxt = observations[1] if len(observations) > 1 else None
    towers = [v for s, v in first.sites.items()
              if nxt is None or s in nxt.unseen or s in nxt.sites]
    seats = [s for s in first.cards if nxt is None or s in nxt.cards]
    builds = sum(-(-v.height // 4) for v in towers)
    moves = max(builds, len(seats))
    if moves <= MAX_MOVES_PER_PHOTO:
        return None
    storeys = sum(v.height for v in towers)
    return (f"{first.name}, the first photo, already shows {moves} moves at least "
            f"({len(towers)} towers of {storeys} storeys, a card played at {len(seats)} "
            f"seats), more than the {MAX_MOVES_PER_PHOTO} one photo may show: the replay "
            "needs the photos from the game's start (the empty board, or its first builds)")


def fitting_photos(observations: Sequence[Observation], config: GameConfig | None = None,
                   ) -> tuple[list[Observation], list[dict[str, Any]]]:
    """The photos of the game, and warnings for those left out: a photo that does not fit
    the photos around it (another game's, the board cleared for a moment) is left out;
    when the photos after it do not fit the game either, a new game began: the photos
    from there are left out, and the warning says where it began.

    Left in, another game's photo is explained by up to three invented builds (and
    misreads), which puts the turn order off for the rest of the game; a second game's
    builds would be spliced onto the first."""
    least = STRANGER_TOWERS + (MAX_MOVES_PER_PHOTO if config is not None
                               and config.monster is not None else 0)

    def apart(a: Observation, b: Observation) -> tuple[int, int] | None:
        """(gone, towers) when ``b`` lost most of the towers of ``a``, else None."""
        gone, towers = _gone(a, b)
        return (gone, towers) if gone >= least and gone >= STRANGER_SHARE * towers else None

    obs = list(observations)
    kept: list[Observation] = []
    warnings: list[dict[str, Any]] = []
    k = 0
    while k < len(obs):
        this = obs[k]
        nxt = obs[k + 1] if k + 1 < len(obs) else None
        prev = kept[-1] if kept else None
        lost = apart(prev, this) if prev is not None else None
        # its towers gone in the next photo, which fits the game (or, for the first
        # photo, in the two after it)
        ahead = apart(this, nxt) if nxt is not None else None
        if ahead is not None and nxt is not None and (
                apart(prev, nxt) is not None if prev is not None
                else k + 2 < len(obs) and apart(this, obs[k + 2]) is None):
            ahead = None
        if lost is None and ahead is None:
            kept.append(this)
            k += 1
            continue
        if lost is not None and prev is not None:
            after = obs[k + 1:k + 1 + NEW_GAME_PHOTOS]
            back = next((j for j, o in enumerate(after) if apart(prev, o) is None), None)
            if after and back is None:
                left = len(obs) - k
                warnings.insert(0, {
                    "photo": this.name, "reason": "new-game",
                    "message": f"{this.name}: {lost[0]} of the {lost[1]} towers {prev.name} "
                               "shows are gone from here on: a new game? The replay stops "
                               f"at {prev.name}; the {left} photos from {this.name} on are "
                               "left out (replay them as a game of their own)"})
                break
            for o in [this, *after[:back]]:
                gone, towers = _gone(prev, o)
                warnings.append({
                    "photo": o.name, "reason": "stranger-photo",
                    "message": f"{o.name}: {gone} of the {towers} towers {prev.name} shows "
                               "are gone or lower here, which no move and no misread "
                               "explains: a photo of another board? Left out"})
            k += 1 + (back or 0)
        else:
            assert ahead is not None and nxt is not None
            warnings.append({
                "photo": this.name, "reason": "stranger-photo",
                "message": f"{this.name}: {ahead[0]} of its {ahead[1]} towers are gone or "
                           f"lower in {nxt.name}, which no move and no misread explains: "
                           "a photo of another board? Left out"})
            k += 1
        if k < len(obs):
            # what a camera that stayed put saw change was since the photo left out
            obs[k] = replace(obs[k], build=None, unchanged=frozenset())
    return kept, warnings


def grouped_warnings(warnings: Sequence[Mapping[str, Any]], named: int = 3
                     ) -> list[dict[str, Any]]:
    """The replay's warnings with those that say the same of several photos said once
    (forty cropped photos of one phone: one line naming the first ``named`` of them and
    how many more), in the order each was first said; ``photos`` lists them all.

    The JSON output keeps one warning per photo (formats.md); a player reads this."""
    out: list[dict[str, Any]] = []
    by: dict[tuple[str, str], dict[str, Any]] = {}
    for w in warnings:
        photo, message = w.get("photo"), str(w.get("message", ""))
        prefix = f"{photo}: "
        if not photo or not message.startswith(prefix):
            out.append(dict(w))
            continue
        key = (str(w.get("reason", "")), message[len(prefix):])
        if key in by:
            by[key]["photos"].append(photo)
            continue
        by[key] = {**w, "photos": [photo]}
        out.append(by[key])
    for key, w in by.items():
        photos = w["photos"]
        if len(photos) > 1:
            more = len(photos) - named
            w["message"] = (f"{', '.join(photos[:named])} and {more} more photos: {key[1]}"
                            if more > 1 else
                            f"{', '.join(photos[:-1])} and {photos[-1]}: {key[1]}")
    return out


def _unshown_build(state: GameState, pend: _Pending, observations: Sequence[Observation],
                   ) -> dict[str, Any]:
    """The warning for a build that the last photos do not show (no photo came after
    to say which it was): it is not recorded, but the players are told."""
    name = observations[pend.photo].name
    seat = state.seat
    card = pend.obs.cards.get(seat)
    where = ""
    # of the sites the card allows, those the photo does not show (a build at one it
    # shows unchanged would be a misread); all of them when it shows every one
    sites = (pend.sites & pend.obs.unseen) or pend.sites
    if pend.named and len(sites) <= 6:
        where = " (at " + " or ".join(s.name for s in sorted(sites)) + ")"
    played = f"with card {card}" if card is not None and pend.named else "(no card read)"
    return {"photo": name, "reason": "build-not-shown",
            "message": f"{name}: {seat.value}'s build {played}{where} shows in no photo; "
                       "not recorded: photograph the table again to add it"}


# --- per-turn photos: the move list that explains every photo best -------------------
#
# Each photo is taken after one move (sometimes two, when a photo is missing, or none).
# A hypothesis is a game state reached by legal moves (illegal ones at a price); its cost
# sums, over every photo so far, how far the board it gives is from what the photo shows,
# site by site (a misread site costs every hypothesis the same), and whether the card
# stacks read show the cards it played. Misreads are independent from photo to photo
# (each photo is taken from elsewhere), the true moves show in every later photo: the
# cheapest hypothesis after the last photo is the game. A beam keeps the best few.

_ALL_SITES = tuple(Site.from_index(i) for i in range(54))
_ALL_SITES_SET = frozenset(_ALL_SITES)

#: Hypotheses kept after each photo.
BEAM = 64
#: The most a site that the photo shows differently from a hypothesis costs.
SITE_CAP = 2.5
#: A photo that shows no new move (a retaken photo).
NO_MOVE_COST = 2.0
#: Each move more than one that a photo shows (the photos between them are missing).
TWO_MOVES_COST = 2.5
#: builds one photo may show that the photo before did not (turns not photographed)
MAX_MOVES_PER_PHOTO = 3
#: the cheapest partial chains of builds in one photo that are carried on
CHAIN_WIDTH = 3
#: A build the rules forbid, kept because the photos show it.
ILLEGAL_PRICE = 3.0
#: A card stack read showing another card than the hypothesis played there: cards are
#: read well, a read card outweighs a legal build's convenience.
CARD_PRICE = 3.5
#: A build at the site a fixed camera saw built on, of another block than it saw there:
#: more than a storey misread, so the block seen outweighs a misread tower under it.
BUILD_PRICE = 2.0
#: A tower topped by another colour than an unseen site's top shows (its height
#: unknown, its colour right nine times in ten): less than a read site's colour.
TOP_PRICE = 1.5




def _legal_at(state: GameState, site: Site) -> list[Build]:
    """The legal builds of the player to move at one site, with the card that site takes."""
    return legal_builds_at(state, site, Card.for_site(state.seat, site.row, site.col))

@dataclass(frozen=True)
class _Step:
    """Moves recorded at one photo, linked to the steps before."""

    prev: _Step | None
    photo: int
    moves: tuple[Build | Pass, ...]
    legal: tuple[bool, ...]


@dataclass(frozen=True)
class _Pending:
    """The mover's build that photo ``photo`` does not show.

    Made at one of ``sites``: sites the photo does not show, or shows unchanged or no
    likelier built on than not (a misread, paid for when the build is known;
    ``charged``: the least such cost, paid already). ``named``: the card was read and
    names these sites.
    """

    photo: int
    sites: frozenset[Site]
    named: bool
    obs: Observation
    charged: float = 0.0


@dataclass
class _Hyp:
    state: GameState
    cost: float
    step: _Step | None
    key: tuple[Any, ...] = ()
    #: The mover's build that a photo does not show: the state is the one before it. The
    #: next photos say which build it was.
    pending: _Pending | None = None


_Offer = tuple[float, int, _Hyp, tuple[tuple[int, tuple[Build | Pass, ...], tuple[bool, ...]], ...],
               GameState | None, _Pending | None]


class _Pool:
    """The children of one photo, the cheapest per key, in the order first offered.

    A child is its parent, the steps (photo, moves, legal) it adds, and its state when
    known already (otherwise the moves are applied to the parent's when it is kept).
    """

    def __init__(self) -> None:
        self.items: dict[Any, _Offer] = {}
        #: the cheapest costs offered (negated, a heap): twice the beam, as some children
        #: reach the same state
        self._best: list[float] = []

    def bound(self) -> float:
        """A cost no child kept will exceed (once twice the beam are offered)."""
        return -self._best[0] if len(self._best) >= 2 * BEAM else float("inf")

    def offer(self, cost: float, h: _Hyp, steps: tuple[tuple[int, tuple[Build | Pass, ...],
                                                            tuple[bool, ...]], ...],
              state: GameState | None, key: Any,
              pending: _Pending | None = None) -> None:
        if key not in self.items or cost < self.items[key][0] - 1e-9:
            self.items[key] = (cost, len(self.items), h, steps, state, pending)
            if len(self._best) < 2 * BEAM:
                heapq.heappush(self._best, -cost)
            elif cost < -self._best[0]:
                heapq.heapreplace(self._best, -cost)


def _top_cost(pred: SiteView | None, obs: Observation, site: Site) -> float:
    """What a tower ``pred`` at an unseen site costs against the top colour the photo
    shows there (nothing where it shows none, or no tower is predicted)."""
    colour = obs.tops.get(site)
    if (colour is None or pred is None or pred.owner == colour or site not in obs.unseen
            or site in obs.unchanged):
        return 0.0
    return TOP_PRICE


def _site_cost(pred: SiteView | None, seen: SiteView | None) -> float:
    if pred == seen:
        return 0.0
    if pred is None or seen is None:
        return SITE_CAP
    return min(SITE_CAP, HEIGHT_COST * abs(pred.height - seen.height)
               + (COLOR_COST if pred.owner != seen.owner else 0.0))


def _tops(state: GameState) -> dict[Seat, Card | None]:
    return {seat: (cards[-1] if cards else None) for seat, cards in state.played.items()}


def _card_cost(tops: Mapping[Seat, Card | None], obs: Observation) -> float:
    return sum(CARD_PRICE for seat, card in obs.cards.items()
               if seat in tops and tops[seat] != card)


def _key(state: GameState) -> tuple[Any, ...]:
    return (state.board, tuple(sorted((s.value, c) for s, c in _tops(state).items()
                                      if c is not None)), state.round, state.to_move,
            state.phase)


def _candidates(state: GameState, obs: Observation, base: Mapping[Site, SiteView],
                unseen_too: bool = True) -> list[tuple[Build | Pass, bool]]:
    """The mover's moves worth trying against a photo.

    Builds at sites the photo shows grown (legal ones of any storeys; an illegal one
    only as the photo shows it), builds at sites the photo does not show that the
    mover's card allows (when it is read), and a pass with the card read.
    """
    if state.phase is not Phase.BUILD:
        return []
    seat = state.seat
    player = state.player
    card = obs.cards.get(seat)
    grown = [site for site, view in obs.sites.items() if _grown(base.get(site), view)]
    # a new colour on top is a build however tall the tower reads (tall ones are read
    # worst)
    wanted = set(grown) | {s for s, v in obs.sites.items()
                           if s in base and v.owner != base[s].owner}
    # the same for a tower the photo shows only the top colour of
    wanted |= {s for s, c in obs.tops.items() if s in base and c != base[s].owner
               and s in obs.unseen and s not in obs.unchanged}
    if card is not None:
        # the card read names the site in each city: one the photo does not show, or
        # shows otherwise than before, may be it (with no card read, a build at a site
        # the photo does not show waits for the next photo)
        allowed = card.site_cell(seat)
        wanted |= {s for s in obs.sites if (s.row, s.col) == allowed
                   and obs.sites[s] != base.get(s)}
        if unseen_too:
            wanted |= {s for s in obs.unseen if (s.row, s.col) == allowed}
    out: list[tuple[Build | Pass, bool]] = []
    have: set[tuple[Site, Block]] = set()
    for site in sorted(wanted):
        for build in _legal_at(state, site):
            out.append((build, True))
            have.add((site, build.block))
    for site in grown:
        view = obs.sites[site]
        delta = view.height - base[site].height if site in base else view.height
        if view.owner not in player.colors or not 1 <= delta <= 4:
            continue
        use = card if card is not None else Card.for_site(seat, site.row, site.col)
        if use == Card.for_site(seat, site.row, site.col) \
                and (site, Block(view.owner, delta)) in have:
            continue
        out.append((Build(seat, use, site, Block(view.owner, delta)), False))
    if card is not None and _tops(state).get(seat) != card:
        move = Pass(seat, card)
        try:
            check_move(state, move)
            out.append((move, True))
        except IllegalMoveError:
            pass
    return out


def _after(state: GameState, move: Build | Pass) -> GameState | None:
    """The state after ``move`` (None: no such move can be made), unchecked: the search
    takes a move as legal only when it found it legal at this very state
    (``legal_builds_at``, or ``check_move`` for a pass), and makes the others as the
    table did (``check=False``), so checking again was work done twice (a third of
    the work of applying a move)."""
    try:
        return committed(apply_move(state, move, check=False))
    except RulesError:
        return None


_Chain = tuple[float, tuple["Build | Pass", ...], tuple[bool, ...], GameState,
               Mapping[Site, float]]


def _search(observations: Sequence[Observation], config: GameConfig,
            ) -> tuple[_Hyp | None, list[_Hyp]]:
    """The cheapest hypothesis over all photos (its steps: the moves per photo), and the
    others that cost as little, which the tie-break below passed over."""
    start = committed(new_game(config))
    beam = [_Hyp(start, 0.0, None, _key(start))]
    for k, obs in enumerate(observations):
        beam = _advance(beam, k, obs)
    if not beam:
        return None, []
    # No later photo will break a tie: of the cheapest, the one the last photo shows
    # best (two moves in it rather than one and a misread site, which cost the same),
    # first by the sites it read surely, then by the fewer moves (a tower that narrowly
    # beat the empty site, often a nearer tower's top seen past it, is no evidence of a
    # turn left unphotographed), then by all its sites
    last = observations[-1]
    best = [h for h in beam if h.cost <= beam[0].cost + 1e-9]

    def shown(h: _Hyp) -> tuple[float, int, float]:
        per_site = _scored(h.state, last)[1]
        sure = sum(c for s, c in per_site.items() if s not in last.doubtful)
        return sure, h.state.ply, sum(per_site.values())

    chosen = min(best, key=shown)
    return chosen, [h for h in best if h is not chosen]


def _ties(chosen: _Hyp, others: Sequence[_Hyp]) -> dict[tuple[int, int], list[str]]:
    """The chosen story's moves that another story of the same cost tells otherwise, by
    (photo, place among the photo's moves), with what the others have instead.

    Two photos that disagree (one reads a tower 16 storeys, the next 13) make two stories
    that cost the same; the tie-break takes one, and the photos do not say it is right."""
    def story(h: _Hyp) -> list[tuple[tuple[int, int], str]]:
        out: list[tuple[tuple[int, int], str]] = []
        step = h.step
        while step is not None:
            out[:0] = [((step.photo, n), str(m)) for n, m in enumerate(step.moves)]
            step = step.prev
        return out

    mine = story(chosen)
    ties: dict[tuple[int, int], list[str]] = {}
    for other in others:
        theirs = [m for _, m in story(other)]
        match = difflib.SequenceMatcher(None, [m for _, m in mine], theirs, autojunk=False)
        for op, i1, i2, j1, j2 in match.get_opcodes():
            if op not in ("replace", "delete"):
                continue
            for t, (where, _move) in enumerate(mine[i1:i2]):
                # as many moves each way: move for move; else all of theirs there
                instead = ([theirs[j1 + t]] if i2 - i1 == j2 - j1 else theirs[j1:j2])
                alts = ties.setdefault(where, [])
                alts.extend(m for m in instead if m not in alts)
    return ties


def _advance(beam: list[_Hyp], k: int, obs: Observation) -> list[_Hyp]:
    """The hypotheses after photo ``k``: each one's children, the cheapest kept."""
    pool = _Pool()
    for h in beam:
        st = h.state
        views, per_site, base = _scored(st, obs)
        here = h.cost + base + _card_cost(_tops(st), obs)
        if h.pending is not None:
            _resolve(pool, h, k, obs, views, per_site, here)
            continue
        pool.offer(here + (NO_MOVE_COST if k else 0.0), h, (), st, ("same", h.key))
        if st.is_over:
            continue
        firsts = _expand(pool, h, k, obs, st, views, per_site, here, ())
        # several moves in one photo (a turn or two not photographed): all at sites
        # the photo shows grown; an earlier one may be hidden under a later one (the
        # next player built on it)
        firsts.sort(key=lambda t: t[0])
        chains: list[_Chain] = [
            (cost1, (move1,), (legal1,), st, per_site)
            for cost1, move1, legal1 in firsts[:CHAIN_WIDTH] + _covered(st, views, per_site,
                                                                        here, obs)]
        for extra in range(1, MAX_MOVES_PER_PHOTO):
            longer: list[_Chain] = []
            for cost1, moves, legals, before, per in chains:
                move1 = moves[-1]
                if not isinstance(move1, Build) or move1.site in obs.unseen:
                    continue
                st1 = _after(before, move1)
                if st1 is None or st1.is_over:
                    continue
                views1 = st1.board.views()
                per1 = {**per, move1.site: _site_cost(views1.get(move1.site),
                                                      obs.sites.get(move1.site))}
                for cost, move2, legal2 in (_moves_from(st1, views1, per1, cost1, obs, False)
                                            + _covered(st1, views1, per1, cost1, obs)):
                    if isinstance(move2, Build):
                        pool.offer(cost + extra * TWO_MOVES_COST, h,
                                   ((k, (*moves, move2), (*legals, legal2)),),
                                   None, (id(h), *moves, move2))
                        longer.append((cost, (*moves, move2), (*legals, legal2), st1, per1))
            longer.sort(key=lambda t: t[0])
            chains = longer[:CHAIN_WIDTH]
    ranked = sorted(pool.items.values(), key=lambda t: (t[0], t[1]))
    out: list[_Hyp] = []
    seen: set[tuple[Any, ...]] = set()
    for item in ranked:
        _keep(item, out, seen)
        if len(out) >= BEAM:
            break
    return out


def _keep(item: _Offer, out: list[_Hyp], seen: set[tuple[Any, ...]]) -> None:
    """Add an offered child to ``out`` unless its state is there already."""
    cost, _, h, steps, state, pending = item
    if state is None:
        state = h.state
        for _photo, moves, _legal in steps:
            for move in moves:
                state = _after(state, move) if state is not None else None
        if state is None:
            return
    key = h.key if state is h.state else _key(state)
    full = key if pending is None else (*key, "pending", pending.photo)
    if full in seen:
        return
    seen.add(full)
    step = h.step
    for photo, moves, legal in steps:
        step = _Step(step, photo, moves, legal)
    out.append(_Hyp(state, cost, step, key, pending))


def _scored(state: GameState, obs: Observation,
            ) -> tuple[dict[Site, SiteView], dict[Site, float], float]:
    """The state's board, and its cost against the photo site by site and in all."""
    views = state.board.views()
    per_site = {s: _site_cost(views.get(s), obs.sites.get(s))
                for s in set(views) | set(obs.sites)
                if s not in obs.unseen and s not in obs.unchanged}
    for s in obs.tops:
        if s in obs.unseen:
            per_site[s] = _top_cost(views.get(s), obs, s)
    return views, per_site, sum(per_site.values())


def _moves_from(state: GameState, views: Mapping[Site, SiteView], per_site: Mapping[Site, float],
                here: float, obs: Observation, unseen_too: bool = True,
                ) -> list[tuple[float, Build | Pass, bool]]:
    """The mover's candidate moves, each with its cost (``here``: the state's cost)."""
    tops = _tops(state)
    cards = _card_cost(tops, obs)
    out: list[tuple[float, Build | Pass, bool]] = []
    for move, legal in _candidates(state, obs, views, unseen_too):
        cost = here + (0.0 if legal else ILLEGAL_PRICE)
        if isinstance(move, Build) and move.site not in obs.unseen:
            site = move.site
            new = SiteView(state.board.height(site) + move.block.storeys, move.block.color)
            seen = obs.sites.get(site)
            gain = per_site.get(site, 0.0) - _site_cost(new, seen)
            if gain <= 0.0 and (seen is None or seen.owner != new.owner):
                # the photo shows it no better than no build there, nor its colour on top:
                # a misread, which the pending build (what the next photo shows) stands for
                continue
            cost -= gain
            seen_build = obs.build
            if seen_build is not None and seen_build[0] == site and (
                    move.block.storeys, move.block.color) != seen_build[1:]:
                cost += BUILD_PRICE
        elif isinstance(move, Build) and move.site in obs.tops:
            new = SiteView(state.board.height(move.site) + move.block.storeys,
                           move.block.color)
            cost += _top_cost(new, obs, move.site) - per_site.get(move.site, 0.0)
        cost += _card_cost({**tops, move.seat: move.card}, obs) - cards
        out.append((cost, move, legal))
    return out


def _covered(state: GameState, views: Mapping[Site, SiteView], per_site: Mapping[Site, float],
             here: float, obs: Observation) -> list[tuple[float, Build | Pass, bool]]:
    """The mover's builds that the next build may have covered before the photo: at a
    site shown at least two storeys taller, topped by a colour not the mover's."""
    if state.phase is not Phase.BUILD:
        return []
    seat, colors = state.seat, state.player.colors
    # the covering build is the next builder's (anyone's when the round ends here)
    order = state.round_order()
    pos = order.index(state.to_move)
    after = [order[(pos + k) % len(order)] for k in range(1, len(order))]
    nxt = next((i for i in after if state.blocks_left_this_round(i) > 0), None)
    others = (set(state.config.players[nxt].colors) if nxt is not None
              else {c for p in state.config.players for c in p.colors} - set(colors))
    tops = _tops(state)
    out: list[tuple[float, Build | Pass, bool]] = []
    for site, seen in obs.sites.items():
        old = views.get(site)
        grew = seen.height - (old.height if old else 0)
        if grew < 2 or seen.owner not in others:
            continue
        for build in _legal_at(state, site):
            if build.block.storeys >= grew:
                continue
            new = SiteView((old.height if old else 0) + build.block.storeys, build.block.color)
            cost = here + _site_cost(new, seen) - per_site.get(site, 0.0) \
                + _card_cost({**tops, seat: build.card}, obs) - _card_cost(tops, obs)
            out.append((cost, build, True))
    return out


def _expand(pool: _Pool, h: _Hyp, k: int, obs: Observation, state: GameState,
            views: Mapping[Site, SiteView], per_site: Mapping[Site, float], here: float,
            pre: tuple[tuple[int, tuple[Build | Pass, ...], tuple[bool, ...]], ...],
            ) -> list[tuple[float, Build | Pass, bool]]:
    """Offer the mover's moves at photo ``k`` from ``state`` (``pre``: steps before)."""
    firsts = _moves_from(state, views, per_site, here, obs, unseen_too=False)
    tag = tuple(m for _p, moves, _l in pre for m in moves)
    for cost, move, legal in firsts:
        pool.offer(cost, h, (*pre, (k, (move,), (legal,))), None, (id(h), tag, move))
    if state.phase is Phase.BUILD:
        # the mover's build may be at a site the photo does not show, or misreads (one of
        # the read card's, if read): which one, and how tall, the next photo says
        card = obs.cards.get(state.seat)
        cost = here
        # sites the photo shows built on (as some candidate build)
        shown = {m.site for _c, m, _l in firsts if isinstance(m, Build)}
        if card is not None:
            cell = card.site_cell(state.seat)
            sites = frozenset(s for s in _ALL_SITES if (s.row, s.col) == cell) - shown
            tops = _tops(state)
            cost += _card_cost({**tops, state.seat: card}, obs) - _card_cost(tops, obs)
        else:
            sites = _ALL_SITES_SET - shown
        # a site read empty costs the most a site can
        least = 0.0 if not sites.isdisjoint(obs.unseen) else min(
            (_least_misread(state, views.get(s), obs.sites[s])
             for s in sites if s in obs.sites), default=SITE_CAP)
        if sites:
            pool.offer(cost + least, h, pre, state if not pre else None,
                       (id(h), tag, "pending"),
                       _Pending(k, sites, card is not None, obs, least))
    return firsts


def _resolve(pool: _Pool, h: _Hyp, k: int, obs: Observation, views: Mapping[Site, SiteView],
             per_site: Mapping[Site, float], here: float) -> None:
    """The pending build of ``h`` as this photo shows it, then this photo's move."""
    assert h.pending is not None
    pend = h.pending
    st = h.state
    seat = st.seat
    tops = _tops(st)
    cards = _card_cost(tops, obs)
    before = pend.obs
    for site in sorted(pend.sites):
        # a site this photo shows unchanged was not built on, unless the card read named
        # it and the photo before did not show it (tall towers are read worst)
        if site not in obs.unseen and not _grown(views.get(site), obs.sites.get(site)) \
                and not (pend.named and site in before.unseen):
            continue
        # what the photo before read there, now a misread
        then = 0.0 if site in before.unseen else -_site_cost(views.get(site),
                                                             before.sites.get(site))
        for build in _legal_at(st, site):
            st1 = _after(st, build)
            if st1 is None:
                continue
            views1 = st1.board.views()
            per1 = dict(per_site)
            cost1 = here + _card_cost({**tops, seat: build.card}, obs) - cards - pend.charged
            if site not in before.unseen:
                cost1 += then + _site_cost(views1.get(site), before.sites.get(site))
            else:
                cost1 += (_top_cost(views1.get(site), before, site)
                          - _top_cost(views.get(site), before, site))
            if site not in obs.unseen:
                per1[site] = _site_cost(views1.get(site), obs.sites.get(site))
                cost1 += per1[site] - per_site.get(site, 0.0)
            elif site in obs.tops:
                per1[site] = _top_cost(views1.get(site), obs, site)
                cost1 += per1[site] - per_site.get(site, 0.0)
            pre = ((pend.photo, (build,), (True,)),)
            pool.offer(cost1 + NO_MOVE_COST, h, pre, st1, (id(h), build))
            # a move lowers the cost by at most a site's and a card's price
            least = cost1 - max(per1.values(), default=0.0) - CARD_PRICE
            if not st1.is_over and least <= pool.bound():
                _expand(pool, h, k, obs, st1, views1, per1, cost1, pre)


def _least_misread(state: GameState, old: SiteView | None, seen: SiteView) -> float:
    """The least a build by the mover on tower ``old`` costs against the reading ``seen``."""
    low = (old.height if old else 0) + 1
    off = max(0, low - seen.height, seen.height - (low + 3))
    paint = 0.0 if seen.owner in state.player.colors else COLOR_COST
    return min(SITE_CAP, HEIGHT_COST * off + paint)


def _grown(old: SiteView | None, new: SiteView | None) -> bool:
    """Can a build make the tower ``old`` look like ``new``?"""
    if new is None:
        return False
    return old is None or new.height > old.height or (new.owner != old.owner
                                                      and new.height >= old.height)


def _record(observations: Sequence[Observation], config: GameConfig, last: _Step | None,
            warnings: list[dict[str, Any]], inferred: bool,
            ties: Mapping[tuple[int, int], list[str]] | None = None) -> ReplayResult:
    """The game record, move list, warnings and misreads of the chosen hypothesis.

    ``ties``: its moves that another as cheap tells otherwise (:func:`_ties`), marked."""
    steps: list[_Step] = []
    while last is not None:
        steps.append(last)
        last = last.prev
    by_photo = {s.photo: s for s in steps}
    state = new_game(config)
    record = GameRecord(config)
    moves: list[dict[str, Any]] = []
    misreads: list[dict[str, Any]] = []
    boards: list[dict[str, Any]] = []
    turn = 0
    prev: Observation | None = None
    # builds no photo has shown as built yet, by site: (index in moves, in the record)
    unshown: dict[Site, list[tuple[int, int]]] = {}
    # sites whose last build is illegal or told two ways, by site: its notation, and
    # whether the photos read surely since have all shown the tower as recorded (None:
    # none has; False for an illegal build, whatever they show); a build on it while
    # they have not is marked too
    unsure: dict[Site, tuple[str, bool | None]] = {}
    for k, obs in enumerate(observations):
        step = by_photo.get(k)
        if state.is_over and step is None and k and obs != prev:
            warnings.append({"photo": obs.name, "reason": "after-end",
                             "message": f"{obs.name}: the game was already over; ignored"})
        for n, move in enumerate(step.moves if step else ()):
            state, record = _commit_round(state, record)
            if n:
                warnings.append({"photo": obs.name, "reason": "photo-skipped-turn",
                                 "message": f"{obs.name}: {move} was made since the "
                                            "last photo as well"})
            turn += 1
            doubt = _doubt(move, obs, turn, (ties or {}).get((k, n)), unsure, warnings)
            state, record, info = _apply(state, record, move, obs, turn, warnings, doubt=doubt)
            if info and isinstance(move, Build):
                unshown.setdefault(move.site, []).append((len(moves), len(record.entries) - 1))
                # a site read narrowly is one photo's doubt, which the photos after it
                # read again (15 of 15 builds on such builds right, in three games); one
                # the photos tell two ways is the photos' own, unless those after read it
                # as recorded; an illegal one is the photos' against the rules (a tower
                # read a storey low in every photo is a legal build read as an illegal one)
                if not info[0]["legal"]:
                    unsure[move.site] = (info[0]["notation"], False)
                elif "doubt" in info[0]:
                    unsure[move.site] = (info[0]["notation"], None)
                else:
                    unsure.pop(move.site, None)
            moves.extend(info)
        if unsure:
            views = state.board.views()
            for site, (built, agree) in list(unsure.items()):
                if site not in obs.unseen and site not in obs.doubtful and agree is not False:
                    unsure[site] = (built, obs.sites.get(site) == views.get(site))
        if unshown:
            views = state.board.views()
            # the photo shows the site as the moves built it, or near; a narrow reading
            # only where the builds there are marked already (it adds no check)
            for site in [s for s in unshown if _shows(views.get(s), obs.sites.get(s)) and (
                    s not in obs.doubtful
                    or all(moves[m].get("doubtful") for m, _ in unshown[s]))]:
                del unshown[site]
        if len(state.scores) > len(boards):
            boards.append(state.board.to_json(state.config.colors))
        for ch in diff(state.board, obs):
            if prev is not None and (ch.site in prev.unseen
                                     or prev.sites.get(ch.site) != obs.sites.get(ch.site)):
                why = ("a tower never shrinks: the record's tower is kept" if not _grows(ch)
                       else "no move explains it")
                misreads.append(_misread(obs, ch, why))
        prev = obs
    record = _never_shown(unshown, moves, record, warnings)
    return ReplayResult(record, moves, warnings, state, inferred, round_boards=boards,
                        misreads=misreads)


def _doubt(move: Build | Pass, obs: Observation, turn: int, alts: list[str] | None,
           unsure: Mapping[Site, tuple[str, bool | None]], warnings: list[dict[str, Any]],
           ) -> str | None:
    """Why a move its photo read surely is to be checked all the same, said in a warning,
    or None: another story as cheap tells it otherwise (``alts``: what it has instead), or
    it builds on a build flagged illegal or told two ways (``unsure``) whose tower no
    photo read surely as recorded since (its storeys and this one's the photos show only
    together: of a black 3 and a red 3 read as one tower, a black 2, flagged illegal, and
    a red 4)."""
    if isinstance(move, Build) and move.site in obs.doubtful:
        return None  # marked already, for its own reading
    if alts is not None:
        instead = " or ".join(alts) if alts else "no move there"
        warnings.append({"photo": obs.name, "turn": turn, "reason": "ambiguous",
                         "message": f"{obs.name}: {move}: the photos fit {instead} as "
                                    "well (they disagree): check it", "instead": alts})
        return "ambiguous"
    if isinstance(move, Build) and move.site in unsure and unsure[move.site][1] is not True:
        below = unsure[move.site][0]
        warnings.append({"photo": obs.name, "turn": turn, "reason": "built-on-doubtful",
                         "message": f"{obs.name}: {move}: built on {below}, which is to "
                                    "be checked; the photos show their storeys only "
                                    "together: check both"})
        return "built-on-doubtful"
    return None


def _shows(built: SiteView | None, seen: SiteView | None) -> bool:
    """Whether a photo's reading of a site tells about the tower built there: the same
    colour on top, a storey or two off at most (:func:`_site_cost` under its cap)."""
    return seen is not None and _site_cost(built, seen) < SITE_CAP


def _never_shown(unshown: Mapping[Site, list[tuple[int, int]]], moves: list[dict[str, Any]],
                 record: GameRecord, warnings: list[dict[str, Any]]) -> GameRecord:
    """Builds that no photo showed (the site unseen, read far otherwise, or read near
    only by a narrow margin, in every photo until the next build there; a narrow
    reading still shows a build marked for its own photo already): a reading past
    :data:`SITE_CAP` costs every storey count alike, so the rules and the beam chose
    their storeys among equals. They are marked for the players to check, and said.
    A narrow reading is a guess the reader would have left unseen: a tiny photo's
    13-storey guess at a 16-storey tower "showed" a blue 1 built on 12, which went
    unmarked (the replay QA folder of photos at several sizes)."""
    flagged = sorted(i for built in unshown.values() for i in built)
    if not flagged:
        return record
    entries = list(record.entries)
    for m, e in flagged:
        info = moves[m]
        info["doubtful"] = info["never_shown"] = True
        if info.get("doubt") == "ambiguous":
            # the storeys another story as cheap gives it: what this warning says
            at = "@" + info["notation"].split("@")[-1]
            said = [w for w in warnings if w.get("reason") == "ambiguous"
                    and w.get("turn") == info["turn"] and w.get("photo") == info["photo"]]
            if all(w["instead"] and all(a.endswith(at) for a in w["instead"]) for w in said):
                del info["doubt"]
                warnings[:] = [w for w in warnings if not any(w is x for x in said)]
        entry = entries[e]
        entries[e] = (replace(entry, doubtful=True, never_shown=True)
                      if isinstance(entry, MoveEntry) else replace(entry, doubtful=True))
        warnings.append({"photo": info["photo"], "turn": info["turn"], "reason": "never-shown",
                         "message": f"{info['photo']}: {info['notation']}: no photo shows "
                                    f"{info['site']} near as built ({info['color']} "
                                    f"{info['storeys']}): unseen there, read far otherwise, or "
                                    "only narrowly; its storeys are a guess: check it"})
    return replace(record, entries=tuple(entries))


def _grows(ch: Change) -> bool:
    """A change a build can make: taller, or a new colour on top (however tall it reads)."""
    return ch.after[1] is not None and (ch.delta > 0 or ch.after[1] != ch.before[1])


def _confirmed(site: Site, view: SiteView, nxt: Observation | None) -> bool | None:
    """Does the next photo still show what this one shows at ``site``? None: cannot tell."""
    if nxt is None or site in nxt.unseen:
        return None
    later = nxt.sites.get(site)
    if later is None:
        return False
    return later == view or later.height > view.height


def _misread(obs: Observation, ch: Change, why: str) -> dict[str, Any]:
    def show(v: tuple[int, str | None]) -> str:
        return f"{v[0]} {v[1]}" if v[1] else "empty"

    return {"photo": obs.name, "site": ch.site.name, "read": list(ch.after),
            "record": list(ch.before),
            "message": f"{obs.name}: {ch.site.name} read as {show(ch.after)}, the record has "
                       f"{show(ch.before)}; {why}"}


def _mostly_gaps(observations: Sequence[Observation]) -> bool:
    """One photo per round (or so): most photos show several new builds.

    Only sites that grew (taller, or another colour on top) and that the photo
    after still shows count: a misread is seldom repeated by the next photo,
    and a tower read shorter or empty never is a build.
    """
    counts = []
    for k in range(1, len(observations)):
        a, b = observations[k - 1], observations[k]
        c = observations[k + 1] if k + 1 < len(observations) else None
        changed = 0
        for site, v in b.sites.items():
            if site in a.unseen:
                continue
            old = a.sites.get(site)
            grew = old is None or v.height > old.height or v.owner != old.owner
            if old != v and grew and _confirmed(site, v, c) is not False:
                changed += 1
        if changed:
            counts.append(changed)
    if not counts:
        return False
    counts.sort()
    return counts[len(counts) // 2] > 3


def _replay_rounds(observations: Sequence[Observation], config: GameConfig,
                   warnings: list[dict[str, Any]], inferred: bool) -> ReplayResult:
    """Photos taken after whole rounds: builds as sets, scores from the photos.

    The order of builds between two photos cannot be known; each changed site
    gives its new owner and the storeys added (several blocks when more than
    one block could add). Rounds are scored from the boards the photos show.
    """
    per_round = sum(config.blocks_per_color for _ in config.colors)
    gaps = [(a, b) for a, b in zip(observations, observations[1:], strict=False)
            if diff_views(a, b)]
    one_per_round = len(gaps) == config.rounds or len(gaps) < config.rounds and all(
        len(diff_views(a, b)) >= per_round // 2 for a, b in gaps)
    moves: list[dict[str, Any]] = []
    rounds: list[dict[str, Any]] = []
    round_boards: list[dict[str, Any]] = []
    cumulative = 0
    round_no = 1
    state = new_game(config)
    players = [(p.name, p.colors) for p in config.players]
    # What the photos have shown so far: a tower never shrinks, so a site read
    # shorter or empty (or hidden) keeps its last tower, for the builds and the score.
    known: dict[Site, SiteView] = dict(observations[0].sites) if observations else {}
    for a, b in gaps:
        builds = 0
        for index in range(54):
            site = Site.from_index(index)
            if site in b.unseen:
                continue
            old, new = known.get(site), b.sites.get(site)
            if new == old:
                continue
            before = (old.height, old.owner) if old else (0, None)
            after = (new.height, new.owner) if new else (0, None)
            delta = after[0] - before[0]
            if new is None or delta <= 0:
                warnings.append({"photo": b.name, "reason": "shrunk",
                                 "message": f"{b.name}: {site.name} went from {before[0]} to "
                                            f"{after[0]} storeys; a tower cannot shrink "
                                            "(misread?): kept the last tower seen"})
                continue
            known[site] = new
            owner = config.owner_of_color(new.owner)
            n_blocks = -(-delta // 4)
            builds += n_blocks
            moves.append({
                "turn": None, "round": round_no, "seat": owner.seat.value if owner else None,
                "color": new.owner, **site.to_json(),
                "storeys": delta, "blocks_min": n_blocks, "site": site.name,
                "card": str(Card.for_site(owner.seat, site.row, site.col)) if owner else None,
                "photo": b.name, "order_known": False,
                **({"doubtful": True} if site in b.doubtful else {}),
            })
        cumulative += builds
        ends_round = one_per_round or cumulative >= round_no * per_round * 0.8
        warnings.append({"photo": b.name, "reason": "order-unknown",
                         "message": f"{b.name}: {builds} or more builds since {a.name}; their "
                                    "order is not known"})
        if ends_round or (a, b) == gaps[-1]:
            score = score_views(known, config.colors)
            board = {"format": "manhattan-board/1", "colors": list(config.colors),
                     "sites": [{**s.to_json(), "height": v.height, "owner": v.owner}
                               for s, v in sorted(known.items())],
                     "unseen": [s.to_json() for s in sorted(b.unseen)]}
            round_boards.append(board)
            rounds.append({"round": round_no, "photo": b.name, **score.to_json(),
                           "players": score.players(players), "complete": ends_round})
            if b.unseen:
                warnings.append({"photo": b.name, "reason": "unseen",
                                 "message": f"{b.name}: {len(b.unseen)} site(s) not visible; "
                                            "the round score may miss them"})
            if ends_round:
                round_no += 1
    record = GameRecord(config, meta={"photographed": "per-round", "order_known": False})
    result = ReplayResult(record, moves, warnings, state, inferred)
    result.rounds_override = rounds
    result.round_boards = round_boards
    return result


_Seen = tuple[int, str | None]  # (storeys, owner); (0, None) for an empty site


def diff_views(a: Observation, b: Observation) -> list[tuple[Site, _Seen, _Seen]]:
    """The sites both photos show that differ: the site, as it was, as it is."""
    out: list[tuple[Site, _Seen, _Seen]] = []
    for index in range(54):
        site = Site.from_index(index)
        if site in a.unseen or site in b.unseen:
            continue
        va, vb = a.sites.get(site), b.sites.get(site)
        if va != vb:
            out.append((site, (va.height, va.owner) if va else (0, None),
                        (vb.height, vb.owner) if vb else (0, None)))
    return out


def _commit_round(state: GameState, record: GameRecord) -> tuple[GameState, GameRecord]:
    """Photos do not show block selection: record it as undeclared."""
    while state.phase is Phase.COMMIT:
        move = Commit(state.seat, None)
        state = apply_move(state, move)
        record = record.with_move(move)
    return state, record


def _move_dict(move: Build | Pass, turn: int | None, state: GameState, photo: str,
               legal: bool, order_known: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"turn": turn, "round": state.round, "seat": move.seat.value,
                           "card": str(move.card), "notation": str(move), "photo": photo,
                           "legal": legal}
    if isinstance(move, Build):
        out.update(color=move.block.color, city=move.site.city, row=move.site.row,
                   col=move.site.col, storeys=move.block.storeys, site=move.site.name)
    else:
        out.update(color=None, city=None, row=None, col=None, storeys=0, passed=True)
    if not order_known:
        out["order_known"] = False
    return out


def _apply(state: GameState, record: GameRecord, move: Build | Pass, obs: Observation,
           turn: int | None, warnings: list[dict[str, Any]], order_known: bool = True,
           doubt: str | None = None,
           ) -> tuple[GameState, GameRecord, list[dict[str, Any]]]:
    """Record one move; ``doubt``: why it is to be checked though its photo read its site
    surely (:func:`_doubt`)."""
    try:
        check_move(state, move)
        legal, warning = True, None
    except IllegalMoveError as exc:
        legal, warning = False, f"{exc.reason}: {exc}"
        warnings.append({"photo": obs.name, "turn": turn, "reason": exc.reason,
                         "message": f"{obs.name}: {move}: {exc}"})
    info = _move_dict(move, turn, state, obs.name, legal, order_known)
    # about half the reader's wrong sites were read by a narrow margin: the players
    # should look there
    doubtful = isinstance(move, Build) and move.site in obs.doubtful or doubt is not None
    if doubtful:
        info["doubtful"] = True
    if doubt is not None:
        info["doubt"] = doubt
    try:
        new_state = apply_move(state, move, check=legal)
    except RulesError as exc:
        warnings.append({"photo": obs.name, "turn": turn, "reason": "impossible",
                         "message": f"{obs.name}: {move} cannot be recorded: {exc}"})
        return state, record, []
    record = record.with_move(move, forced=not legal, warning=warning, doubtful=doubtful)
    return new_state, record, [info]


def board_views_score(obs: Observation, colors: Sequence[str]) -> dict[str, Any]:
    return score_views(obs.sites, colors).to_json()

