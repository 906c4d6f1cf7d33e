"""Property tests: random legal games never break an invariant.

Games are random but reproducible: hypothesis is derandomized and each game is
driven by a seeded random.Random.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from companion.rules import (
    Block,
    Board,
    Build,
    Card,
    Commit,
    GameConfig,
    GameRecord,
    GameState,
    Move,
    Pass,
    Phase,
    Variant,
    all_sites,
    apply_move,
    check_move,
    is_legal,
    legal_builds_at,
    legal_moves,
    make_config,
    new_game,
    parse_board_json,
    parse_move,
    score_board,
)
from companion.rules.cards import ALL_CARDS, full_deck
from companion.rules.record import record_from_moves

GAME_SETTINGS = settings(max_examples=30, derandomize=True, deadline=None,
                         suppress_health_check=[HealthCheck.too_slow])


@dataclass
class Setup:
    config: GameConfig
    game_seed: int
    undeclared: float  # chance a player leaves the selection undeclared
    forced: list[str] = field(default_factory=list)


@st.composite
def setups(draw: st.DrawFn, players: int) -> Setup:
    edition = draw(st.sampled_from(["classic", "2017", "mayfair"]))
    variants = []
    if draw(st.booleans()):
        variants.append("anti-trust")
    if draw(st.booleans()):
        variants.append("slow-growth")
    monster = draw(st.sampled_from([None, "monster", "baby-monster", "godzilla"]))
    if monster:
        variants.append(monster)
    config = make_config(
        players, edition=edition, variants=variants,
        no_build=draw(st.sampled_from(["pass", "forfeit"])),
        track_cards=draw(st.booleans()),
        seed=draw(st.integers(0, 10_000)),
        monster_wrap=draw(st.sampled_from([None, True, False])),
    )
    return Setup(config, draw(st.integers(0, 2**32 - 1)),
                 draw(st.sampled_from([0.0, 0.0, 0.5])))


def board_blocks(board: Board) -> dict[str, Counter[int]]:
    out: dict[str, Counter[int]] = {}
    for t in board.towers:
        for b in t:
            out.setdefault(b.color, Counter())[b.storeys] += 1
    return out


def check_invariants(s: GameState, rng: random.Random, *, full: bool) -> list[Move]:
    """Check the position; return its legal moves. ``full`` adds the JSON round-trip."""
    cfg = s.config
    initial = Counter(dict(cfg.edition.supply))
    on_board = board_blocks(s.board)
    # supply + committed-unplaced + on board + removed == initial, per colour and size
    for color in cfg.colors:
        total = Counter(s.supply[color]) + on_board.get(color, Counter()) \
            + Counter(s.removed.get(color, {}))
        pend = s.pending[color]
        if pend is not None:
            total += Counter(b.storeys for b in pend)
        assert +total == +initial, (color, total, initial)
        assert all(v >= 0 for v in s.supply[color].values())
        assert 0 <= s.placed_this_round[color] <= cfg.blocks_per_color
    assert set(on_board) <= set(cfg.colors)
    # height = sum of blocks, owner = top block: the board's JSON must validate
    views = s.board.views()
    for site, view in views.items():
        t = s.board.tower(site)
        assert view.height == sum(b.storeys for b in t)
        assert view.owner == t[-1].color
    if full:
        parsed, towers, _, _ = parse_board_json(s.board.to_json(list(cfg.colors)))
        assert parsed == views and Board.from_towers(towers) == s.board
    # the monster never stands on a building it destroyed whole
    if s.monster is not None and cfg.monster in (Variant.MONSTER, Variant.GODZILLA):
        assert s.board.tower(s.monster) == ()
    # cards: 45 in all, 4 in each hand
    if s.hands is not None:
        assert s.deck is not None
        cards = Counter(s.deck)
        for h in s.hands:
            cards.update(h)
            assert len(h) == cfg.edition.hand_size
        for stack in s.played.values():
            cards.update(stack)
        assert cards == Counter(full_deck())
    # the start player moves on each round
    if not s.is_over:
        assert s.start == (s.round - 1) % len(cfg.players)
    # every legal move is legal (a sample of the commits, which can be many)
    moves = legal_moves(s)
    if not s.is_over:
        assert moves
    sample = moves if len(moves) <= 12 else rng.sample(moves, 12)
    for m in sample:
        check_move(s, m)
    # the builds found without raising are those check_move allows, in colour and size
    # order, at sites the card names and others (none there), with cards held or not
    # (drawn apart from the game's own generator, which picks its moves)
    pick = random.Random(s.ply)
    for site in pick.sample(all_sites(), 2):
        for card in (Card.for_site(s.seat, site.row, site.col), pick.choice(ALL_CARDS)):
            tried = [Build(s.seat, card, site, Block(c, n)) for c in s.player.colors
                     for n in (1, 2, 3, 4)]
            assert legal_builds_at(s, site, card) == [b for b in tried if is_legal(s, b)]
    return moves


def play_random_game(setup: Setup) -> None:
    cfg = setup.config
    rng = random.Random(setup.game_seed)
    s = new_game(cfg)
    moves = []
    per_round: dict[int, Counter[str]] = {}
    options = check_invariants(s, rng, full=True)
    for _ in range(3000):
        if s.is_over:
            break
        if s.phase is Phase.COMMIT and rng.random() < setup.undeclared:
            move = Commit(s.seat, None)
        else:
            move = rng.choice(options)
        rnd, scored = s.round, len(s.scores)
        if isinstance(move, Build):
            per_round.setdefault(rnd, Counter())[move.block.color] += 1
        elif isinstance(move, Pass) and move.forfeit is not None:
            per_round.setdefault(rnd, Counter())[move.forfeit.color] += 1
        assert parse_move(str(move)) == move
        s = apply_move(s, move)
        moves.append(move)
        round_end = len(s.scores) > scored
        if round_end:
            assert s.scores[-1] == score_board(s.board, cfg.colors)
        options = check_invariants(s, rng, full=round_end)
    assert s.is_over, "the game did not end"
    assert len(s.scores) == cfg.rounds
    assert s.round == cfg.rounds
    # each colour places (or forfeits) exactly its blocks every round
    assert sorted(per_round) == list(range(1, cfg.rounds + 1))
    for counts in per_round.values():
        assert counts == dict.fromkeys(cfg.colors, cfg.blocks_per_color)
    # all of every colour's blocks were used over the game
    for color in cfg.colors:
        assert sum(s.supply[color].values()) == 0
    # the record replays to the same game and its round scores check out
    rec = record_from_moves(cfg, moves, date="2024-01-01")
    data = rec.to_json()
    again = GameRecord.from_json(data)  # replays the moves and checks every round score
    assert again == rec
    assert [r["colors"] for r in data["rounds"]] == [
        sc.to_json()["colors"] for sc in s.scores]
    totals = {c: sum(sc.total(c) for sc in s.scores) for c in cfg.colors}
    assert s.totals() == totals
    assert s.player_totals() == {p.name: sum(totals[c] for c in p.colors)
                                 for p in cfg.players}


@GAME_SETTINGS
@given(setups(4))
def test_random_four_player_games_keep_every_invariant(setup: Setup) -> None:
    play_random_game(setup)


@GAME_SETTINGS
@given(setups(3))
def test_random_three_player_games_keep_every_invariant(setup: Setup) -> None:
    play_random_game(setup)


@GAME_SETTINGS
@given(setups(2))
def test_random_two_player_games_keep_every_invariant(setup: Setup) -> None:
    play_random_game(setup)


# -- random crowded positions: the pass and forfeit paths ---------------------------

def pieces(s: GameState) -> dict[str, Counter[int]]:
    """Every block of every colour, wherever it is (box, selection, board, out of the game)."""
    out = {c: Counter(s.supply[c]) + Counter(s.removed.get(c, {})) for c in s.config.colors}
    for color, pend in s.pending.items():
        if pend is not None:
            out[color] += Counter(b.storeys for b in pend)
    for color, sizes in board_blocks(s.board).items():
        out[color] += sizes
    return {c: +v for c, v in out.items()}


@st.composite
def crowded_positions(draw: st.DrawFn) -> GameState:
    from dataclasses import replace

    from companion.rules import ALL_CARDS, Block, Site

    players = draw(st.sampled_from([2, 4]))
    variants = draw(st.sampled_from([[], ["anti-trust"], ["slow-growth"],
                                     ["anti-trust", "monster"], ["baby-monster"]]))
    cfg = make_config(players, variants=variants, no_build=draw(st.sampled_from(
        ["pass", "forfeit"])), seed=draw(st.integers(0, 99)))
    s = new_game(cfg)
    colors = list(cfg.colors)
    me = s.players[0]
    rivals = [c for c in colors if c not in me.colors]
    # crowded: most sites hold a rival's tower, which small blocks rarely take
    # the sites of a few cells stay empty: exactly the cards giving them allow a build
    open_cells = draw(st.sets(st.tuples(st.integers(0, 2), st.integers(0, 2)), max_size=2))
    empty_in_40 = draw(st.sampled_from([0, 0, 1, 4]))
    own_in_40 = draw(st.sampled_from([0, 0, 1, 3]))
    towers = {}
    for i in range(54):
        k = draw(st.integers(0, 39))
        site = Site.from_index(i)
        if k < empty_in_40 or (site.row, site.col) in open_cells:
            continue
        if k < empty_in_40 + own_in_40:
            top = Block(draw(st.sampled_from(me.colors)), draw(st.integers(1, 4)))
        else:
            top = Block(draw(st.sampled_from(rivals)), draw(st.integers(3, 4)))
        lower = [Block(draw(st.sampled_from(colors)), draw(st.integers(1, 2)))
                 for _ in range(draw(st.integers(0, 1)))]
        towers[site] = (*lower, top)
    board = Board.from_towers(towers)
    pending: dict[str, tuple[Block, ...] | None] = {}
    placed = {}
    box = {c: dict(v) for c, v in s.supply.items()}
    for color in colors:
        if color in me.colors:
            if draw(st.booleans()):
                sizes = draw(st.lists(st.integers(1, 2), min_size=1, max_size=2))
                pending[color] = tuple(Block(color, k) for k in sizes)
                placed[color] = cfg.blocks_per_color - len(sizes)
            else:  # undeclared: builds come from the box, which holds small blocks only
                pending[color] = None
                placed[color] = cfg.blocks_per_color - draw(st.integers(1, 2))
                box[color] = {4: 0, 3: 0, 2: draw(st.integers(0, 2)), 1: draw(st.integers(2, 3))}
        else:
            pending[color] = tuple(Block(color, 1) for _ in range(cfg.blocks_per_color))
            placed[color] = 0
    hands = None
    deck = None
    if draw(st.booleans()):
        hands = tuple(tuple(draw(st.lists(st.sampled_from(ALL_CARDS), min_size=4, max_size=4)))
                      for _ in range(players))
        deck = tuple(draw(st.lists(st.sampled_from(ALL_CARDS), min_size=5, max_size=5)))
    s = replace(s, board=board, phase=Phase.BUILD, pending=pending, placed_this_round=placed,
                hands=hands, deck=deck, supply=box)
    if s.monster is not None:
        s = replace(s, board=board.with_tower(s.monster, ()))
    return s


@settings(max_examples=120, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(crowded_positions())
def test_crowded_positions_pass_and_forfeit_exactly_when_the_rules_say(s: GameState) -> None:
    from companion.rules import ALL_CARDS, NoBuildPolicy, legal_builds

    moves = legal_moves(s)
    assert moves
    builds = [m for m in moves if isinstance(m, Build)]
    passes = [m for m in moves if isinstance(m, Pass)]
    assert not (builds and passes)
    hand = s.hand()
    cards = tuple(sorted(set(hand))) if hand is not None else ALL_CARDS
    # a pass only when no card in hand (or at all, untracked) gives a build
    assert bool(passes) == (legal_builds(s, cards) == [])
    event("pass" if passes else "build")
    if passes:
        nowhere = legal_builds(s, ALL_CARDS) == []
        event("forfeit" if passes[0].forfeit is not None else "keep the blocks")
        must_forfeit = s.config.no_build is NoBuildPolicy.FORFEIT or nowhere
        assert all((p.forfeit is not None) == must_forfeit for p in passes)
        assert {p.card for p in passes} == set(cards)
    before = pieces(s)
    for m in moves[:20]:
        check_move(s, m)
        after = apply_move(s, m)
        assert pieces(after) == before
        assert after.ply == s.ply + 1
        mine = s.players[0].colors
        placed_before = sum(s.placed_this_round[c] for c in mine)
        placed_after = sum(after.placed_this_round.get(c, 0) for c in mine) \
            if after.round == s.round else sum(s.config.blocks_per_color for _ in mine)
        gives_up = isinstance(m, Build) or (isinstance(m, Pass) and m.forfeit is not None)
        assert placed_after == placed_before + (1 if gives_up else 0)
