"""Deciding the move from a reading: ranking legal moves against what was seen."""

from __future__ import annotations

from companion.rules import (
    Block,
    Board,
    Build,
    Card,
    Commit,
    Seat,
    Site,
    SiteView,
    apply_move,
    make_config,
    new_game,
)
from companion.tracking import decide


def _state_with(blocks_s=("red", (4, 3, 2, 1, 1, 1))):
    cfg = make_config(4)
    state = new_game(cfg)
    commits = {
        Seat.S: ("red", (4, 3, 2, 1, 1, 1)), Seat.W: ("blue", (4, 3, 2, 1, 1, 1)),
        Seat.N: ("green", (4, 3, 2, 1, 1, 1)), Seat.E: ("black", (4, 3, 2, 1, 1, 1)),
    }
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        color, sizes = commits[seat]
        state = apply_move(state, Commit(seat, tuple(Block(color, s) for s in sizes)))
    return state


def _views(board: Board) -> dict[Site, SiteView]:
    return board.views()


def test_an_exact_reading_gives_the_legal_build():
    state = _state_with()
    board = state.board.with_block(Site(2, 0, 2), Block("red", 3))
    d = decide(state, _views(board), new_cards={Seat.S: Card(0, 2)})
    assert d.kind == "move" and d.legal
    assert d.move == Build(Seat.S, Card(0, 2), Site(2, 0, 2), Block("red", 3))


def test_a_misread_colour_is_explained_by_the_movers_colour():
    state = _state_with()
    views = _views(state.board.with_block(Site(2, 0, 2), Block("red", 2)))
    views[Site(2, 0, 2)] = SiteView(2, "black")  # read as black in a shadow
    d = decide(state, views, new_cards={Seat.S: Card(0, 2)})
    assert d.move == Build(Seat.S, Card(0, 2), Site(2, 0, 2), Block("red", 2))
    assert d.legal


def test_a_height_that_no_committed_block_gives_is_snapped_to_the_nearest_legal_one():
    state = _state_with()
    views = _views(state.board)
    views[Site(0, 1, 1)] = SiteView(5, "red")  # no 5-storey block exists
    d = decide(state, views, new_cards={Seat.S: Card(1, 1)})
    assert d.kind == "move" and d.legal
    assert d.move == Build(Seat.S, Card(1, 1), Site(0, 1, 1), Block("red", 4))


def test_a_card_that_gives_another_site_is_a_wrong_site_warning():
    state = _state_with()
    board = state.board.with_block(Site(0, 0, 0), Block("red", 1))
    d = decide(state, _views(board), new_cards={Seat.S: Card(2, 2)})
    assert d.kind == "move" and not d.legal
    assert d.reason == "wrong-site"
    assert d.move == Build(Seat.S, Card(2, 2), Site(0, 0, 0), Block("red", 1))


def test_a_build_by_the_wrong_player_is_reported_as_such():
    state = _state_with()
    board = state.board.with_block(Site(1, 1, 1), Block("green", 2))
    d = decide(state, _views(board))
    assert d.kind == "move" and not d.legal and d.reason == "wrong-turn"
    assert d.move == Build(Seat.N, Card(1, 1), Site(1, 1, 1), Block("green", 2))


def test_two_changes_at_once_are_reported_not_merged():
    state = _state_with()
    board = state.board.with_block(Site(1, 1, 1), Block("red", 2)).with_block(
        Site(3, 0, 0), Block("red", 1))
    d = decide(state, _views(board))
    assert d.kind == "several" and d.move is None
    assert d.changed == (Site(1, 1, 1), Site(3, 0, 0))
    assert d.message == "2 sites changed at once (Sydney C, Hong Kong NW); confirm each move"
    assert d.suggested == ()  # red twice: no two players' builds in turn explain it


def test_two_builds_at_once_are_explained_by_the_likeliest_pair_in_turn_order():
    state = _state_with()  # South (red) to move, then West (blue)
    west = Build(Seat.W, Card.for_site(Seat.W, 1, 1), Site(0, 1, 1), Block("blue", 2))
    south = Build(Seat.S, Card(2, 0), Site(4, 2, 0), Block("red", 4))
    board = state.board.with_block(west.site, west.block).with_block(south.site, south.block)
    views = _views(board)
    views[south.site] = SiteView(5, "red")  # a storey too many: no block has 5
    d = decide(state, views, new_cards={Seat.S: south.card, Seat.W: west.card})
    assert d.kind == "several" and d.move is None
    assert d.changed == (west.site, south.site)  # in site order, not turn order
    assert d.suggested == (south, west)
    assert d.message == ("2 sites changed at once (Manhattan C, Sao Paulo SW): recorded as "
                         f"{south}, then {west}; check each move")
    # a change no build of the next player explains: no suggestion
    views[west.site] = SiteView(2, "green")
    d = decide(state, views, new_cards={Seat.S: south.card})
    assert d.kind == "several" and d.suggested == ()


def test_an_unseen_site_is_not_a_change():
    state = _state_with()
    d = decide(state, {}, unseen=[Site(0, 0, 0)])
    assert d.kind == "none"


def test_takeover_with_too_few_storeys_keeps_the_reason():
    state = _state_with()
    state = apply_move(state, Build(Seat.S, Card(0, 0), Site(0, 0, 0), Block("red", 4)))
    # West (blue) puts 2 storeys on red's 4: illegal, but it happened
    board = state.board.with_block(Site(0, 0, 0), Block("blue", 2))
    card = Card.for_site(Seat.W, 0, 0)
    d = decide(state, _views(board), new_cards={Seat.W: card})
    assert d.kind == "move" and not d.legal and d.reason == "too-few-storeys"
    assert d.move == Build(Seat.W, card, Site(0, 0, 0), Block("blue", 2))
    assert "Blue needs 4 storeys" in d.message and "would have 2" in d.message


def test_a_block_the_reading_missed_where_the_pixels_changed_is_a_build_not_a_pass():
    # the reading still shows the board as it stood, but the pixels changed at the
    # site the card just played gives: a block was added there (1 storey is the
    # nearest explanation of an unchanged reading)
    state = _state_with()
    site = Site(4, 0, 2)
    d = decide(state, _views(state.board), new_cards={Seat.S: Card(0, 2)}, pixel_site=site)
    assert d.kind == "move" and d.legal
    assert d.move == Build(Seat.S, Card(0, 2), site, Block("red", 1))
    assert d.changed == (site,)


def test_without_the_pixels_or_with_another_cards_site_it_waits_for_the_block():
    # a card laid down before its block (a still scene between the two): the rules
    # allow a build, none can hide, so no pass is recorded (it was, illegal, and the
    # build after it out of turn)
    state = _state_with()
    views = _views(state.board)
    alone = decide(state, views, new_cards={Seat.S: Card(0, 2)})
    elsewhere = decide(state, views, new_cards={Seat.S: Card(0, 2)}, pixel_site=Site(4, 1, 1))
    for d in (alone, elsewhere):
        assert (d.kind, d.move, d.message) == ("none", None, "c02 is down; its block is not yet")


def test_a_new_card_with_no_change_in_view_is_a_build_out_of_sight_or_a_pass():
    # S plays c20 (SW of every city) and the reading shows no change. With 0SW out
    # of the camera's sight (3NW too, not c20's site), a pass would be illegal: S
    # built there. It is recorded as the smallest block, for the players to correct.
    state = _state_with()
    views = _views(state.board)
    d = decide(state, views, new_cards={Seat.S: Card(2, 0)},
               out_of_sight=[Site(0, 2, 0), Site(3, 0, 0)])
    assert d.kind == "missed" and d.legal and d.reason == "unseen-move"
    assert str(d.move) == "S c20 red1@0SW" and d.changed == (Site(0, 2, 0),)
    assert d.message == ("Player 1's move was not seen: their card c20 builds only where "
                         f"the camera cannot see ({Site(0, 2, 0).name}); recorded as red 1 "
                         "there, correct it if the block was another")
    # with two such sites out of sight, which one is not known: recorded as the pass
    # it looks like (the turns that follow stay in order), the warning naming both
    two = [Site(0, 2, 0), Site(4, 2, 0)]
    d = decide(state, views, new_cards={Seat.S: Card(2, 0)}, out_of_sight=two)
    assert d.kind == "move" and str(d.move) == "S c20 pass"
    assert not d.legal and d.reason == "build-possible"
    assert d.message == ("Player 1 can still build with card c20: S c20 red4@0SW"
                         "; no new block is in view, but it may stand where "
                         f"the camera cannot see ({Site(0, 2, 0).name}, {Site(4, 2, 0).name}): "
                         "correct this move if so")
    # with none of them out of sight, the block is yet to come
    plain = decide(state, views, new_cards={Seat.S: Card(2, 0)}, out_of_sight=[Site(3, 0, 0)])
    assert (plain.kind, plain.move) == ("none", None)


def test_the_next_players_build_after_a_move_out_of_sight_records_that_move_first():
    # S plays c20 again (the stack shows no new card) and builds on 0SW, where the
    # camera cannot see; then W builds on 1C. The only change in view is W's.
    state = _state_with()
    board = state.board.with_block(Site(1, 1, 1), Block("blue", 2))
    w_card = Card.for_site(Seat.W, 1, 1)
    seen = {Seat.S: Card(2, 0), Seat.W: w_card}
    d = decide(state, _views(board), new_cards={Seat.W: w_card},
               out_of_sight=[Site(0, 2, 0)], cards_read=seen)
    assert d.kind == "missed" and d.legal and d.reason == "unseen-move"
    assert str(d.move) == "S c20 red1@0SW" and d.changed == (Site(0, 2, 0),)
    assert d.message == ("Player 1's move was not seen: their card c20 builds only where "
                         f"the camera cannot see ({Site(0, 2, 0).name}); recorded as red 1 "
                         "there, correct it if the block was another")
    # after it, W's build is W's turn
    after = apply_move(state, d.move)
    d2 = decide(after, _views(board), new_cards={Seat.W: w_card},
                unseen=[Site(0, 2, 0)], out_of_sight=[Site(0, 2, 0)])
    assert d2.kind == "move" and d2.legal
    assert d2.move == Build(Seat.W, w_card, Site(1, 1, 1), Block("blue", 2))
    # not when S's card could build in two hidden places, or nowhere hidden, or
    # without the cards read: then it is W's build out of turn, as before
    for hidden, cards in (([Site(0, 2, 0), Site(4, 2, 0)], seen), ([Site(3, 0, 0)], seen),
                          ([Site(0, 2, 0)], None)):
        d = decide(state, _views(board), new_cards={Seat.W: w_card}, out_of_sight=hidden,
                   cards_read=cards)
        assert d.kind == "move" and d.reason == "wrong-turn", hidden


def test_two_builds_out_of_sight_before_the_one_seen_are_recorded_in_turn():
    # S plays c20 and builds on 0SW, W plays its card for the NW cells and builds
    # on 3NW, both where the camera cannot see (a cup set down over them); then N
    # builds on 1C, the only change in view. Each skipped build is recorded in turn
    # (its storeys a guess), then N's build is N's turn.
    state = _state_with()
    board = state.board.with_block(Site(1, 1, 1), Block("green", 2))
    w_card, n_card = Card.for_site(Seat.W, 0, 0), Card.for_site(Seat.N, 1, 1)
    seen = {Seat.S: Card(2, 0), Seat.W: w_card, Seat.N: n_card}
    hidden = [Site(0, 2, 0), Site(3, 0, 0)]
    d = decide(state, _views(board), new_cards={Seat.N: n_card}, out_of_sight=hidden,
               cards_read=seen)
    assert d.kind == "missed" and str(d.move) == "S c20 red1@0SW"
    after = apply_move(state, d.move)
    # (the site recorded so is unseen in the reading, as the controller has it)
    d2 = decide(after, _views(board), unseen=hidden[:1], new_cards={Seat.N: n_card},
                out_of_sight=hidden, cards_read=seen)
    assert d2.kind == "missed" and d2.move == Build(Seat.W, w_card, Site(3, 0, 0),
                                                    Block("blue", 1))
    assert d2.message == ("Player 2's move was not seen: their card "
                          f"{w_card} builds only where the camera cannot see "
                          f"({Site(3, 0, 0).name}); recorded as blue 1 there, correct it "
                          "if the block was another")
    d3 = decide(apply_move(after, d2.move), _views(board), unseen=hidden,
                new_cards={Seat.N: n_card}, out_of_sight=hidden, cards_read=seen)
    assert d3.kind == "move" and d3.legal
    assert d3.move == Build(Seat.N, n_card, Site(1, 1, 1), Block("green", 2))
    # not when W's card builds nowhere out of sight: then N's build is out of turn
    plain = decide(state, _views(board), new_cards={Seat.N: n_card},
                   out_of_sight=[Site(0, 2, 0)], cards_read=seen)
    assert plain.kind == "move" and plain.reason == "wrong-turn"


def test_a_build_seen_where_the_skipped_players_card_builds_is_not_put_out_of_sight():
    # S plays c20 and W's blue tops 1SW, a site c20 gives S too, while 0SW is out of
    # sight: S may have built under W's blue there, so S's build is not put out of
    # sight (SimTable quick pairs recorded it so, in the wrong city)
    state = _state_with()
    site = Site(1, 2, 0)
    south = Build(Seat.S, Card(2, 0), site, Block("red", 1))
    west = Build(Seat.W, Card.for_site(Seat.W, 2, 0), site, Block("blue", 1))
    board = state.board.with_block(site, south.block).with_block(site, west.block)
    cards = {Seat.S: south.card, Seat.W: west.card}
    # S's stack shows c20 anew: the pair
    d = decide(state, _views(board), new_cards=cards, out_of_sight=[Site(0, 2, 0)],
               cards_read=cards)
    assert d.kind == "several" and d.changed == (site,) and d.suggested == (south, west)
    # c20 played again (no new card): W's build out of turn, for the controller to
    # look at again (the pair, read allowing two blocks)
    d = decide(state, _views(board), new_cards={Seat.W: west.card},
               out_of_sight=[Site(0, 2, 0)], cards_read=cards)
    assert d.kind == "move" and d.reason == "wrong-turn" and d.changed == (site,)
    assert d.move == Build(Seat.W, west.card, site, Block("blue", 2))


def test_two_blocks_stacked_at_once_are_two_builds_not_one_out_of_turn():
    state = _state_with()  # South (red) to move, then West (blue)
    south = Build(Seat.S, Card(1, 1), Site(2, 1, 1), Block("red", 2))
    west = Build(Seat.W, Card.for_site(Seat.W, 1, 1), Site(2, 1, 1), Block("blue", 3))
    board = state.board.with_block(south.site, south.block).with_block(west.site, west.block)
    d = decide(state, _views(board), new_cards={Seat.S: south.card, Seat.W: west.card})
    assert d.kind == "several" and d.changed == (south.site,)
    assert d.suggested == (south, west)
    assert d.message == (f"two blocks were built at Frankfurt C at once: recorded as {south}, "
                         f"then {west}; check each move")
    # a blue 4 there and no new card on South's stack: West built out of turn, alone
    # (South's red 1 under a blue 3 would explain it too, but South played no card)
    alone = Build(Seat.W, west.card, west.site, Block("blue", 4))
    d = decide(state, _views(state.board.with_block(alone.site, alone.block)),
               new_cards={Seat.W: west.card})
    assert d.kind == "move" and not d.legal and d.reason == "wrong-turn"
    assert d.move == alone


def test_a_top_of_the_next_players_colour_on_the_movers_build_needs_their_new_card():
    state = _state_with()  # South (red) to move, then West (blue)
    south = Build(Seat.S, Card(1, 1), Site(2, 1, 1), Block("red", 2))
    west = Build(Seat.W, Card.for_site(Seat.W, 1, 1), Site(2, 1, 1), Block("blue", 1))
    views = _views(state.board)
    views[south.site] = SiteView(3, "blue")
    # both stacks show a new card: both built (which of them built the 2 and which
    # the 1 the picture cannot tell: the players check)
    d = decide(state, views, new_cards={Seat.S: south.card, Seat.W: west.card})
    assert d.kind == "several"
    assert [(m.seat, m.card, m.site, m.block.color) for m in d.suggested] == [
        (Seat.S, south.card, south.site, "red"), (Seat.W, west.card, west.site, "blue")]
    assert sum(m.block.storeys for m in d.suggested) == 3
    # only South's: South's red 3, its colour misread, is as likely: one move
    d = decide(state, views, new_cards={Seat.S: south.card})
    assert d.kind == "move" and d.legal
    assert d.move == Build(Seat.S, south.card, south.site, Block("red", 3))


def test_a_block_its_colour_no_longer_has_is_no_move():
    # red has placed its committed blocks and the box holds no red 4 any more: a
    # tower read 4 storeys taller is a misread. Deciding the red 4 (illegal, as
    # photographed) made the live table's recording raise "red has no 4-storey block
    # left at all" and lose the move (seen in `make demo`)
    from dataclasses import replace

    from companion.rules import block_exists

    state = _state_with()
    supply = {c: dict(v) for c, v in state.supply.items()}
    supply["red"][4] = 0
    state = replace(state, supply=supply, pending={**state.pending, "red": ()})
    assert not block_exists(state, Block("red", 4)) and block_exists(state, Block("red", 3))
    views = _views(state.board)
    views[Site(2, 0, 2)] = SiteView(4, "red")
    d = decide(state, views, new_cards={Seat.S: Card(0, 2)})
    assert (d.kind, d.move, d.legal, d.reason) == (
        "move", Build(Seat.S, Card(0, 2), Site(2, 0, 2), Block("red", 3)), False,
        "block-not-committed")
    after = apply_move(state, d.move, check=False)  # recorded as the players' to check
    assert after.supply["red"][3] == state.supply["red"][3] - 1


def test_three_builds_at_once_two_of_them_stacked_are_explained_when_every_card_shows():
    # hands hid the board while three players built, West and North on one tower (a
    # SimTable game with no still scene between three builds). One build a site
    # explains no order of the two sites; one of them holding two builds does, each
    # builder's new card on its stack
    state = _state_with()  # South (red) to move, then West (blue), North (green)
    south = Build(Seat.S, Card.for_site(Seat.S, 1, 1), Site(1, 1, 1), Block("red", 2))
    west = Build(Seat.W, Card.for_site(Seat.W, 1, 1), Site(2, 1, 1), Block("blue", 1))
    north = Build(Seat.N, Card.for_site(Seat.N, 1, 1), Site(2, 1, 1), Block("green", 2))
    board = state.board.with_block(south.site, south.block).with_block(
        west.site, west.block).with_block(north.site, north.block)
    cards = {Seat.S: south.card, Seat.W: west.card, Seat.N: north.card}
    d = decide(state, _views(board), new_cards=cards)
    assert d.kind == "several" and d.changed == (south.site, west.site)
    assert d.suggested == (south, west, north)
    assert d.message == ("2 sites changed at once (Sydney C, Frankfurt C): recorded as "
                         f"{south}, then {west}, then {north}; check each move")
    # North's stack shows no new card: so many builds are not suggested
    d = decide(state, _views(board), new_cards={Seat.S: south.card, Seat.W: west.card})
    assert d.kind == "several" and d.suggested == ()
    # unless the card on it is that build's, played again (nothing new to see)
    d = decide(state, _views(board), new_cards={Seat.S: south.card, Seat.W: west.card},
               cards_read={Seat.N: north.card})
    assert d.suggested == (south, west, north)
