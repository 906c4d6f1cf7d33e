"""From a sequence of board readings to a game record.

The camera (live) and a folder of phone photos (replay) both give a series of
observations: per site a height and top colour, sites that could not be seen,
and the top card of each seat's stack. The game record is the source of truth:
each new observation is explained by the legal moves of the rules engine
(ranked against what the photo shows), and what cannot be explained legally is
kept as what happened, with a warning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

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
    new_game,
    score_views,
)
from companion.rules.board import tower_height
from companion.rules.editions import EDITIONS
from companion.tracking import (
    CARD_COST,
    COLOR_COST,
    HEIGHT_COST,
    ILLEGAL_COST,
    Decision,
    decide,
)


@dataclass(frozen=True)
class Observation:
    """What one photo shows."""

    name: str
    sites: Mapping[Site, SiteView]
    unseen: frozenset[Site] = frozenset()
    cards: Mapping[Seat, Card] = field(default_factory=dict)

    @classmethod
    def from_board(cls, name: str, board: Board, cards: Mapping[Seat, Card] | None = None,
                   unseen: Iterable[Site] = ()) -> Observation:
        hidden = frozenset(unseen)
        views = {s: v for s, v in board.views().items() if s not in hidden}
        return cls(name, views, hidden, dict(cards or {}))


@dataclass
class Change:
    site: Site
    before: tuple[int, str | None]
    after: tuple[int, str]

    @property
    def delta(self) -> int:
        return self.after[0] - self.before[0]


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
    edition = "classic"
    for ed in EDITIONS.values():
        if set(seen_colors) <= set(ed.colors):
            edition = ed.name
            break
    all_colors = list(get_edition(edition).colors)
    pool = [c for c in seen_colors] + [c for c in all_colors if c not in seen_colors]
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
           *, skipped: Sequence[tuple[str, str]] = ()) -> ReplayResult:
    """Explain a photographed game move by move (or, across gaps, as sets of builds)."""
    warnings: list[dict[str, Any]] = [
        {"photo": name, "reason": "bad-photo", "message": f"{name}: {why}; skipped"}
        for name, why in skipped]
    inferred = config is None
    if config is None:
        config, notes = infer_players(observations)
        warnings.extend({"photo": None, "reason": "inferred-players", "message": n}
                        for n in notes)
    if _mostly_gaps(observations):
        return _replay_rounds(observations, config, warnings, inferred)
    state = new_game(config)
    record = GameRecord(config)
    moves: list[dict[str, Any]] = []
    misreads: list[dict[str, Any]] = []
    prev_cards: dict[Seat, Card] = {}
    boards: list[dict[str, Any]] = []
    turn = 0
    prev_obs: Observation | None = None
    doubtful: set[Site] = set()
    for k, raw in enumerate(observations):
        if state.is_over:
            warnings.append({"photo": raw.name, "reason": "after-end",
                             "message": f"{raw.name}: the game was already over; ignored"})
            continue
        # the photos before the player who moves now moves again
        later = observations[k + 1:k + min(3, len(config.players))]
        obs = raw if prev_obs is None else _fresh_only(state, prev_obs, raw, doubtful)
        prev_obs = raw
        changes = diff(state.board, obs)
        new_cards = {s: c for s, c in obs.cards.items() if prev_cards.get(s) != c}
        if k == 0 and not changes:
            prev_cards.update(obs.cards)
            continue
        if not changes and not new_cards:
            doubtful = set()
            continue
        state, record = _commit_round(state, record)
        if _few_builds(changes, new_cards, later[0] if later else None, obs):
            step = _explain(state, record, changes, new_cards, obs, later, turn, warnings,
                            misreads)
            state, record, info, turn, deferred, doubtful = step
        else:
            state, record, info, turn = _gap(state, record, changes, obs, turn, warnings)
            deferred, doubtful = set(), set()
        moves.extend(info)
        if len(state.scores) > len(boards):
            boards.append(state.board.to_json(state.config.colors))
        prev_cards.update({s: c for s, c in obs.cards.items() if s not in deferred})
    return ReplayResult(record, moves, warnings, state, inferred, round_boards=boards,
                        misreads=misreads)


def _grows(ch: Change) -> bool:
    """A change a build can make: taller, or a new colour on top (however tall it reads)."""
    return ch.after[1] is not None and (ch.delta > 0 or ch.after[1] != ch.before[1])


def _few_builds(changes: list[Change], new_cards: Mapping[Seat, Card],
               nxt: Observation | None, obs: Observation) -> bool:
    """A photo one (or a few) builds after the last: explained move by move.

    Many growing sites at once, that the next photo still shows (a photo after
    a long gap), are a set of builds instead. Misreads are few per photo and
    seldom repeat in the next photo, taken from elsewhere.
    """
    growing = [c for c in changes if _grows(c)
               and _confirmed(c.site, obs.sites[c.site], nxt) is not False]
    if len(new_cards) <= 1:
        return True  # at most one stack changed: one move, the rest are misreads
    return len(growing) <= max(3, len(new_cards) + 1)


def _confirmed(site: Site, view: SiteView, nxt: Observation | None) -> bool | None:
    """Does the next photo still show what this one shows at ``site``? None: cannot tell."""
    if nxt is None or site in nxt.unseen:
        return None
    later = nxt.sites.get(site)
    if later is None:
        return False
    return later == view or later.height > view.height


def _explain(state: GameState, record: GameRecord, changes: list[Change],
             new_cards: Mapping[Seat, Card], obs: Observation, later: Sequence[Observation],
             turn: int, warnings: list[dict[str, Any]], misreads: list[dict[str, Any]],
             ) -> tuple[GameState, GameRecord, list[dict[str, Any]], int, set[Seat], set[Site]]:
    """One photo of a per-turn series: the move(s) that explain what changed.

    Only a growing site can be a build (blocks are never removed): a tower read
    shorter, or gone, is a misread. Each growing site is ranked as the move of
    the player to move (the rules' legal builds, the card on the mover's stack,
    the colour and storeys seen, and whether the next photo still shows it);
    the best explains the photo. A second growing site is a second move only
    when it is an exact legal build of the next player that their stack shows
    (or, the stack unread, the next photo confirms); else it is a misread,
    looked at again in the next photo.
    """
    out: list[dict[str, Any]] = []
    deferred: set[Seat] = set()
    nxt = later[0] if later else None
    growing = [c for c in changes if _grows(c)]
    for ch in changes:
        if not _grows(ch):
            misreads.append(_misread(obs, ch, "a tower never shrinks: the record's tower is kept"))
    if not growing:
        card = new_cards.get(state.seat)
        if card is None:
            for seat, c in new_cards.items():
                misreads.append({"photo": obs.name, "seat": seat.value, "card": str(c),
                                 "message": f"{obs.name}: {seat.value}'s stack shows {c} but "
                                            "nothing was built and it is not their turn"})
            return state, record, out, turn, deferred, set()
        move = Pass(state.seat, card)
        try:
            check_move(state, move)
        except IllegalMoveError:
            if nxt is not None:
                # A card on the stack and no build seen yet: the build may show next.
                deferred.add(state.seat)
                return state, record, out, turn, deferred, set()
        turn += 1
        state, record, info = _apply(state, record, move, obs, turn, warnings)
        return state, record, info, turn, deferred, set()
    first = True
    used: set[Seat] = set()
    while growing and not state.is_over:
        state, record = _commit_round(state, record)
        ranked = sorted(((_rank(state, ch, obs, later, new_cards), n, ch)
                         for n, ch in enumerate(growing)), key=lambda t: (t[0][0], t[1]))
        (score, decision), _, ch = ranked[0]
        if decision.move is None or decision.kind != "move":
            if first:
                turn += 1
                warnings.append({"photo": obs.name, "turn": turn, "reason": decision.kind,
                                 "message": f"{obs.name}: {decision.message}"})
            break
        if not first:
            mover = state.seat
            card = new_cards.get(mover)
            exact = decision.cost == 0 and decision.legal
            agrees = card is not None and card == decision.move.card
            # the stack shows the card, or (stack not read) the next photo shows the build
            unread = mover not in obs.cards
            shown = _confirmed(ch.site, obs.sites[ch.site], nxt) is True
            if not (exact and mover not in used and (agrees or unread and shown)):
                break
            warnings.append({"photo": obs.name, "reason": "photo-skipped-turn",
                             "message": f"{obs.name}: {decision.move} was made since the "
                                        "last photo as well"})
        turn += 1
        used.add(decision.move.seat)
        state, record, info = _apply(state, record, decision.move, obs, turn, warnings)
        out.extend(info)
        growing.remove(ch)
        first = False
    for ch in growing:
        misreads.append(_misread(obs, ch, "no move explains it: looked at again in the "
                                          "next photo"))
    return state, record, out, turn, deferred, {ch.site for ch in growing}


def _rank(state: GameState, ch: Change, obs: Observation, later: Sequence[Observation],
          new_cards: Mapping[Seat, Card]) -> tuple[float, Decision]:
    """How well a single build at ``ch.site`` explains the photo (lower is better).

    The next photos (before the same player moves again) vote too: a storey
    count misread in one photo is outvoted by the photos after it. Each later
    view adds at most ``LATER_CAP``; a later view with another colour on a
    taller tower (built on since) has no vote.
    """
    view = obs.sites[ch.site]
    # a later photo that shows the site empty disagrees with every build there
    views: list[SiteView | None] = [view]
    for o in later:
        v = o.sites.get(ch.site)
        if ch.site in o.unseen or v is not None and v.owner != view.owner \
                and v.height > view.height:
            continue  # not seen, or built on since: no vote
        views.append(v)
    base = dict(state.board.views())
    decisions = []
    for v in views:
        if v is None:
            continue
        sites = dict(base)
        sites[ch.site] = v
        d = decide(state, sites, (), new_cards)
        if d.kind == "move" and isinstance(d.move, Build) \
                and all(d.move != e.move for e in decisions):
            decisions.append(d)
    if not decisions:
        sites = dict(base)
        sites[ch.site] = view
        d = decide(state, sites, (), new_cards)
        return 10.0 + d.cost, d
    best: tuple[float, Decision] | None = None
    for d in decisions:
        move = d.move
        assert isinstance(move, Build)
        here = _view_cost(state, move, view)
        score = here + (0.0 if d.legal else ILLEGAL_COST)
        seen_card = new_cards.get(move.seat)
        if seen_card is not None and seen_card != move.card:
            score += CARD_COST
        score += sum(min(_view_cost(state, move, v), LATER_CAP) for v in views[1:])
        if best is None or score < best[0] - 1e-9:
            best = (score, replace(d, cost=here + (0.0 if seen_card in (None, move.card)
                                                   else CARD_COST)))
    assert best is not None
    return best


#: The most one later photo's disagreement adds to a candidate's cost.
LATER_CAP = 1.5


def _view_cost(state: GameState, move: Build, view: SiteView | None) -> float:
    if view is None:
        return LATER_CAP
    height = state.board.height(move.site) + move.block.storeys
    return HEIGHT_COST * abs(height - view.height) + (
        COLOR_COST if move.block.color != view.owner else 0.0)


def _misread(obs: Observation, ch: Change, why: str) -> dict[str, Any]:
    def show(v: tuple[int, str | None]) -> str:
        return f"{v[0]} {v[1]}" if v[1] else "empty"

    return {"photo": obs.name, "site": ch.site.name, "read": list(ch.after),
            "record": list(ch.before),
            "message": f"{obs.name}: {ch.site.name} read as {show(ch.after)}, the record has "
                       f"{show(ch.before)}; {why}"}


def _fresh_only(state: GameState, prev: Observation, obs: Observation,
                doubtful: Iterable[Site] = ()) -> Observation:
    """Keep a photo's reading only where it differs from the previous photo's.

    A site misread the same way in two photos did not change between them; its
    tower stays as the record has it. Only what changed can be a move. Sites
    the previous photo showed changed but no move explained (``doubtful``) are
    looked at again.
    """
    again = set(doubtful)
    record = state.board.views()
    sites = dict(record)
    for site in set(obs.sites) | set(prev.sites) | set(record):
        if site in obs.unseen:
            continue
        now = obs.sites.get(site)
        if site in prev.unseen or site in again or prev.sites.get(site) != now:
            if now is None:
                sites.pop(site, None)
            else:
                sites[site] = now
    hidden = frozenset(s for s in obs.unseen if s not in record)
    return Observation(obs.name, sites, hidden, obs.cards)


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
                "color": new.owner, "city": site.city, "row": site.row, "col": site.col,
                "storeys": delta, "blocks_min": n_blocks, "site": site.name,
                "card": str(Card.for_site(owner.seat, site.row, site.col)) if owner else None,
                "photo": b.name, "order_known": False,
            })
        cumulative += builds
        ends_round = one_per_round or cumulative >= round_no * per_round * 0.8
        warnings.append({"photo": b.name, "reason": "order-unknown",
                         "message": f"{b.name}: {builds} or more builds since {a.name}; their "
                                    "order is not known"})
        if ends_round or (a, b) == gaps[-1]:
            score = score_views(known, config.colors)
            board = {"format": "manhattan-board/1", "colors": list(config.colors),
                     "sites": [{"city": s.city, "row": s.row, "col": s.col, "height": v.height,
                                "owner": v.owner} for s, v in sorted(known.items())],
                     "unseen": [{"city": s.city, "row": s.row, "col": s.col}
                                for s in sorted(b.unseen)]}
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


def diff_views(a: Observation, b: Observation) -> list[tuple[Site, tuple[int, str | None],
                                                            tuple[int, str | None]]]:
    out = []
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
           ) -> tuple[GameState, GameRecord, list[dict[str, Any]]]:
    try:
        check_move(state, move)
        legal, warning = True, None
    except IllegalMoveError as exc:
        legal, warning = False, f"{exc.reason}: {exc}"
        warnings.append({"photo": obs.name, "turn": turn, "reason": exc.reason,
                         "message": f"{obs.name}: {move}: {exc}"})
    info = _move_dict(move, turn, state, obs.name, legal, order_known)
    try:
        new_state = apply_move(state, move, check=legal)
    except RulesError as exc:
        warnings.append({"photo": obs.name, "turn": turn, "reason": "impossible",
                         "message": f"{obs.name}: {move} cannot be recorded: {exc}"})
        return state, record, []
    record = record.with_move(move, forced=not legal, warning=warning)
    return new_state, record, [info]


def _gap(state: GameState, record: GameRecord, changes: list[Change], obs: Observation,
         turn: int, warnings: list[dict[str, Any]]) -> tuple[GameState, GameRecord,
                                                             list[dict[str, Any]], int]:
    """Several builds between two photos: recover them as a set, in a playable order."""
    pending: list[tuple[Site, Block]] = []
    for ch in changes:
        if ch.delta <= 0:
            warnings.append({"photo": obs.name, "reason": "shrunk",
                             "message": f"{obs.name}: {ch.site.name} went from "
                                        f"{ch.before[0]} to {ch.after[0]} storeys; a tower "
                                        "cannot shrink (misread?)"})
            continue
        pending.extend((ch.site, b) for b in _split(state, ch))
    warnings.append({"photo": obs.name, "reason": "order-unknown",
                     "message": f"{obs.name}: {len(pending)} builds since the last photo; "
                                "their order is not known"})
    out: list[dict[str, Any]] = []
    guard = 0
    while pending and not state.is_over and guard < 400:
        guard += 1
        state, record = _commit_round(state, record)
        mover = state.player
        mine = [(s, b) for s, b in pending if b.color in mover.colors]
        if not mine:
            # The photos skip this player's build: nothing to explain with it.
            others = pending[0]
            owner = state.config.owner_of_color(others[1].color)
            if owner is None:
                pending.pop(0)
                continue
            mine = [others]
        choice = _best_order_choice(state, mine)
        pending.remove(choice)
        site, block = choice
        card = Card.for_site(state.config.owner_of_color(block.color).seat,  # type: ignore[union-attr]
                             site.row, site.col)
        seat = state.config.owner_of_color(block.color).seat  # type: ignore[union-attr]
        turn += 1
        state, record, info = _apply(state, record, Build(seat, card, site, block), obs, None,
                                     warnings, order_known=False)
        out.extend(info)
    return state, record, out, turn


def _split(state: GameState, ch: Change) -> list[Block]:
    """Blocks that explain a height change: the top one is the new owner's."""
    color = ch.after[1]
    d = ch.delta
    blocks: list[Block] = []
    while d > 0:
        size = min(4, d)
        blocks.append(Block(color, size))
        d -= size
    return list(reversed(blocks))


def _best_order_choice(state: GameState, options: list[tuple[Site, Block]]
                       ) -> tuple[Site, Block]:
    """Prefer a build that is legal now, so the recovered order is a possible one."""
    for site, block in options:
        owner = state.config.owner_of_color(block.color)
        if owner is None or owner.seat != state.seat:
            continue
        card = Card.for_site(owner.seat, site.row, site.col)
        try:
            check_move(state, Build(owner.seat, card, site, block))
            return site, block
        except IllegalMoveError:
            continue
    return options[0]


def board_views_score(obs: Observation, colors: Sequence[str]) -> dict[str, Any]:
    return score_views(obs.sites, colors).to_json()

