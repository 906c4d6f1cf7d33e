"""Cards: the 45-card deck, 4-card hands, drawing after each build, reshuffles."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from rules_helpers import committed

from companion.rules import (
    ALL_CARDS,
    Block,
    Build,
    Card,
    GameState,
    Phase,
    Seat,
    Site,
    apply_move,
    legal_moves,
    make_config,
    new_game,
)
from companion.rules.cards import full_deck

S, W, N, E = Seat.S, Seat.W, Seat.N, Seat.E


def all_cards(s: GameState) -> Counter[Card]:
    assert s.hands is not None and s.deck is not None
    out: Counter[Card] = Counter(s.deck)
    for h in s.hands:
        out.update(h)
    for stack in s.played.values():
        out.update(stack)
    return out


@pytest.mark.parametrize(("players", "deck_left"), [(4, 29), (3, 33), (2, 37)])
def test_deal_four_cards_each_rest_is_the_deck(players: int, deck_left: int) -> None:
    s = new_game(make_config(players, track_cards=True, seed=5))
    assert s.hands is not None and s.deck is not None
    assert [len(h) for h in s.hands] == [4] * players
    assert len(s.deck) == deck_left
    assert all_cards(s) == Counter(full_deck())
    assert all(stack == () for stack in s.played.values())


def test_untracked_games_have_no_hands() -> None:
    s = new_game(make_config(4))
    assert s.hands is None and s.deck is None and s.hand() is None


def test_dealing_is_reproducible_from_the_seed() -> None:
    a = new_game(make_config(4, track_cards=True, seed=11))
    b = new_game(make_config(4, track_cards=True, seed=11))
    c = new_game(make_config(4, track_cards=True, seed=12))
    assert (a.hands, a.deck) == (b.hands, b.deck)
    assert (a.hands, a.deck) != (c.hands, c.deck)


def _first_build(s: GameState) -> Build:
    for m in legal_moves(s):
        if isinstance(m, Build):
            return m
    raise AssertionError("no build")


def test_play_one_card_draw_one_card() -> None:
    s = committed(make_config(4, track_cards=True, seed=3))
    assert s.hands is not None and s.deck is not None
    move = _first_build(s)
    assert move.card in s.hands[0]
    after = apply_move(s, move)
    assert after.hands is not None and after.deck is not None
    expected = list(s.hands[0])
    expected.remove(move.card)
    assert after.hands[0] == tuple(expected) + (s.deck[0],)
    assert after.deck == s.deck[1:]
    assert after.played[S] == (move.card,)
    assert after.hands[1:] == s.hands[1:]
    assert all_cards(after) == Counter(full_deck())


def test_reshuffle_played_cards_when_the_deck_runs_out() -> None:
    s = committed(make_config(4, track_cards=True, seed=3))
    assert s.hands is not None and s.deck is not None
    # Pretend the deck is exhausted: 25 cards lie on the played stacks.
    stacks = {S: s.deck[:7], W: s.deck[7:13], N: s.deck[13:20], E: s.deck[20:25]}
    s = replace(s, deck=(), played=stacks)
    move = _first_build(s)
    after = apply_move(s, move)
    assert after.reshuffles == 1
    assert all(stack == () for stack in after.played.values())
    assert after.hands is not None and after.deck is not None
    assert len(after.hands[0]) == 4
    assert len(after.deck) == 25  # 25 old + the card just played - the one drawn
    drawn = after.hands[0][-1]
    assert Counter(after.deck) + Counter([drawn]) == \
        Counter(c for st in stacks.values() for c in st) + Counter([move.card])
    # deterministic from the seed
    assert apply_move(s, move).deck == after.deck


def _play_round(s: GameState) -> GameState:
    rnd = s.round
    while not s.is_over and s.round == rnd:
        s = apply_move(s, legal_moves(s)[0])
    return s


def test_hands_are_kept_between_rounds() -> None:
    s = new_game(make_config(4, track_cards=True, seed=8))
    s = _play_round(s)
    assert s.round == 2 and s.phase is Phase.COMMIT
    assert s.hands is not None and [len(h) for h in s.hands] == [4, 4, 4, 4]
    hands_end_of_round_1 = s.hands
    s2 = apply_move(s, legal_moves(s)[0])  # a commit changes no card
    assert s2.hands == hands_end_of_round_1


def test_classic_keeps_played_cards_on_the_stacks_at_round_end() -> None:
    s = _play_round(new_game(make_config(4, track_cards=True, seed=8)))
    assert s.deck is not None
    assert sum(len(st) for st in s.played.values()) == 24
    assert len(s.deck) == 29 - 24
    assert s.reshuffles == 0
    assert all_cards(s) == Counter(full_deck())


def test_mayfair_reshuffles_played_cards_and_deck_at_round_end() -> None:
    s = _play_round(new_game(make_config(4, edition="mayfair", track_cards=True, seed=8)))
    assert s.deck is not None
    assert all(st == () for st in s.played.values())
    assert len(s.deck) == 45 - 16
    assert s.reshuffles == 1
    assert all_cards(s) == Counter(full_deck())


def test_round_end_reshuffle_is_an_option_for_other_editions() -> None:
    cfg = make_config(4, edition="classic", track_cards=True, seed=8,
                      reshuffle_at_round_end=True)
    s = _play_round(new_game(cfg))
    assert s.deck is not None and len(s.deck) == 29
    cfg2 = make_config(4, edition="mayfair", track_cards=True, seed=8,
                       reshuffle_at_round_end=False)
    s2 = _play_round(new_game(cfg2))
    assert sum(len(st) for st in s2.played.values()) == 24


def test_card_conservation_over_a_whole_game() -> None:
    s = new_game(make_config(4, track_cards=True, seed=2))
    mid_round_reshuffle_seen = False
    while not s.is_over:
        before = s.reshuffles
        s = apply_move(s, legal_moves(s)[0])
        if s.reshuffles > before and s.phase is Phase.BUILD:
            mid_round_reshuffle_seen = True
        assert all_cards(s) == Counter(full_deck())
        assert s.hands is not None and all(len(h) == 4 for h in s.hands)
    # 96 builds with 29 cards in the deck: the deck must have run out mid-round.
    assert mid_round_reshuffle_seen


def test_untracked_hands_accept_any_card() -> None:
    s = committed(make_config(4))
    for card in ALL_CARDS:
        r, c = card.site_cell(S)
        apply_move(s, Build(S, card, Site(0, r, c), Block("red", 1)))
