"""Fixtures for the page's tests: a session driven by the test, the app, clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from companion.bots import GreedyBot, RandomBot
from companion.rules import Build, GameConfig, Move, Pass, make_config
from companion.session import GameSession
from companion.web import create_app

PIN = "424242"
JSON_PIN = {"X-Table-PIN": PIN, "Content-Type": "application/json"}


def config(players: int = 4, seed: int = 7, **kw: Any) -> GameConfig:
    return make_config(players, track_cards=True, seed=seed, **kw)


class Driver:
    """Plays deterministic bot moves into a session (the test decides when)."""

    def __init__(self, session: GameSession, seed: int = 3) -> None:
        self.session = session
        self.bots: dict[int, GreedyBot] = {}
        self.seed = seed

    def next_move(self) -> Move:
        state = self.session.state
        bot = self.bots.setdefault(state.to_move, GreedyBot(self.seed * 10 + state.to_move))
        return bot.choose(state)

    def play(self, n: int = 1, *, show_card: bool = True) -> list[Move]:
        played = []
        for _ in range(n):
            move = self.next_move()
            if show_card and isinstance(move, Build | Pass):
                self.session.see_card(move.seat, move.card)
            self.session.play(move)
            played.append(move)
        return played

    def finish_round(self) -> int:
        """Play until one more round is scored; returns the moves played."""
        target = len(self.session.state.scores) + 1
        n = 0
        while len(self.session.state.scores) < target:
            self.play()
            n += 1
        return n

    def finish_game(self) -> int:
        """Play to the end fast: random legal moves (the greedy bot takes ~50 ms a move)."""
        fast = RandomBot(self.seed)
        n = 0
        while not self.session.state.is_over:
            self.session.play(fast.choose(self.session.state))
            n += 1
        return n

    def to_build_phase(self) -> None:
        while self.session.state.phase.value == "commit":
            self.play()


@pytest.fixture
def session() -> GameSession:
    return GameSession(config())


@pytest.fixture
def driver(session: GameSession) -> Driver:
    return Driver(session)


@pytest.fixture
def make_app() -> Callable[..., Flask]:
    def make(session: GameSession | None = None, services: Any = None,
             **cfg: Any) -> Flask:
        base = {"TESTING": True, "PIN": PIN, "SECRET_KEY": "test-secret"}
        base.update(cfg)
        return create_app(base, session=session, services=services)
    return make


@pytest.fixture
def app(make_app: Callable[..., Flask], session: GameSession) -> Flask:
    return make_app(session)


@pytest.fixture
def client(app: Flask) -> Iterator[FlaskClient]:
    with app.test_client() as c:
        yield c


def csrf_of(client: FlaskClient) -> str:
    """Load the page (which creates the session's CSRF token) and read the token."""
    html = client.get("/").get_data(as_text=True)
    marker = 'name="csrf-token" content="'
    start = html.index(marker) + len(marker)
    return html[start:html.index('"', start)]


@pytest.fixture
def unlocked(client: FlaskClient) -> tuple[FlaskClient, dict[str, str]]:
    """A client logged in with the PIN form, and the headers its page sends."""
    token = csrf_of(client)
    resp = client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": token})
    assert resp.status_code == 200, resp.get_json()
    return client, {"X-CSRF-Token": token}


@pytest.fixture
def pin_headers() -> dict[str, str]:
    """What an API client sends: the PIN and the JSON content type."""
    return dict(JSON_PIN)


@pytest.fixture
def pin() -> str:
    return PIN


@pytest.fixture
def get_csrf() -> Callable[[FlaskClient], str]:
    return csrf_of


@pytest.fixture
def new_driver() -> Callable[..., Driver]:
    return Driver


@pytest.fixture
def new_config() -> Callable[..., GameConfig]:
    return config


@pytest.fixture
def upload_client(make_app: Callable[..., Flask], session: GameSession
                  ) -> tuple[FlaskClient, list[list[str]]]:
    """A page's client whose replay service records the names of the files it is
    given (one list per upload), and answers no moves."""
    seen: list[list[str]] = []

    def replay(files: Any) -> dict[str, Any]:
        seen.append([f.name for f in files])
        return {"moves": 0, "warnings": []}

    return make_app(session, services={"replay": replay}).test_client(), seen
