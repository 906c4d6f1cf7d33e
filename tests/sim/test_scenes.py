"""Scene generators and the one-call photo entry point."""

from __future__ import annotations

import numpy as np

from companion.rules.board import Block, Board, Site
from companion.rules.topology import Seat
from companion.sim import labelled_set, random_board, sample_photo
from companion.sim.layout import default_layout
from companion.sim.sequence import GameState, render_sequence

LAY = default_layout()


def test_random_board_uses_legal_blocks_within_supply() -> None:
    names = list(LAY.colour_set("classic"))
    supply = {int(k): v for k, v in LAY.profile["supply"].items()}
    heights = []
    for seed in range(40):
        board = random_board(np.random.default_rng(seed), 30, names, 25, tall=2)
        assert sum(1 for _ in board.occupied()) == 30
        for colour, sizes in board.blocks_by_color().items():
            assert colour in names
            for storeys, n in sizes.items():
                assert 1 <= storeys <= 4 and n <= supply[storeys]
        heights += [board.height(s) for s in board.occupied()]
    heights_a = np.array(heights)
    assert heights_a.max() <= 25 and heights_a.min() >= 1
    assert (heights_a <= 8).mean() > 0.8  # mostly low buildings
    assert (heights_a >= 15).sum() > 10  # and some skyscrapers


def test_sample_photo_is_reproducible_and_labelled() -> None:
    a = sample_photo(21, "phone", colors="2017", hands=1)
    b = sample_photo(21, "phone", colors="2017", hands=1)
    assert a.image.tobytes() == b.image.tobytes()
    assert a.image.shape == (1200, 1600, 3) and a.image.dtype == np.uint8
    assert a.truth["board"]["colors"] == ["orange", "yellow", "purple", "blue"]
    assert a.truth["seed"] == 21 and a.truth["kind"] == "phone"
    assert len(a.truth["hands"]) == 1
    c = sample_photo(22, "mounted", side=Seat.W, tall=True)
    assert c.image.shape == (720, 1280, 3)
    assert max(s["height"] for s in c.truth["board"]["sites"]) >= 15


def test_labelled_set_names_and_variety() -> None:
    items = list(labelled_set(3, 5, "mounted"))
    assert [n for n, _ in items] == ["mounted-5-0000", "mounted-5-0001", "mounted-5-0002"]
    assert len({r.image.tobytes() for _, r in items}) == 3


def test_sequence_places_the_block_with_a_hand() -> None:
    b0 = Board.empty().with_block(Site(1, 1, 1), Block("red", 3))
    b1 = b0.with_block(Site(1, 1, 1), Block("green", 2))
    states = [GameState(b0, {Seat.S: (0, 0)}),
              GameState(b1, {Seat.S: (0, 0), Seat.N: (1, 1)})]
    frames = list(render_sequence(states, seed=2, fps=4, move_s=1.0, still_s=0.25))
    phases = [f.phase for f in frames]
    assert phases[0] == "still" and phases[-1] == "still"
    assert "enter" in phases and "leave" in phases
    assert any(f.rendered.truth["hands"] for f in frames)
    assert frames[0].rendered.truth["board"]["sites"][0]["owner"] == "red"
    assert frames[-1].rendered.truth["board"]["sites"][0]["owner"] == "green"
    assert frames[-1].rendered.truth["card_stacks"]["N"]["cell"] == [1, 1]
    times = [f.time_s for f in frames]
    assert times == sorted(times) and np.allclose(np.diff(times), 0.25)
