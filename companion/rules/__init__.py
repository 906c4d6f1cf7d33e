"""The rules of Manhattan: pure Python, standard library only.

Modelled on python-chess: small immutable values, legality separate from
applying a move, errors that subclass ValueError, a notation that round-trips.
"""

from companion.rules.board import Block, Board, Site, SiteView, all_sites, parse_board_json
from companion.rules.cards import ALL_CARDS, Card
from companion.rules.editions import EDITIONS, Edition, TieBreak, get_edition
from companion.rules.endgame import Standing, standings
from companion.rules.errors import (
    IllegalMoveError,
    InvalidBoardError,
    NotationError,
    RecordError,
    RulesError,
    SetupError,
)
from companion.rules.legality import (
    REASONS,
    apply_move,
    block_exists,
    check_move,
    has_legal_build,
    is_legal,
    legal_builds,
    legal_builds_at,
    legal_moves,
)
from companion.rules.moves import Build, Commit, Move, Pass
from companion.rules.notation import format_moves, parse_move, parse_moves
from companion.rules.record import GameRecord, config_from_json
from companion.rules.scoring import ColorScore, Score, score_board, score_views
from companion.rules.state import (
    GameConfig,
    GameState,
    NoBuildPolicy,
    Phase,
    Player,
    check_new_game,
    make_config,
    new_game,
)
from companion.rules.topology import CLOCKWISE, Seat, Topology, default_topology
from companion.rules.variants import Variant

__all__ = [
    "ALL_CARDS", "CLOCKWISE", "EDITIONS", "REASONS", "Block", "Board", "Build", "Card",
    "ColorScore", "Commit", "Edition", "GameConfig", "GameRecord", "GameState",
    "IllegalMoveError", "InvalidBoardError", "Move", "NoBuildPolicy", "NotationError", "Pass",
    "Phase", "Player", "RecordError", "RulesError", "Score", "Seat", "SetupError", "Site",
    "SiteView", "Standing", "TieBreak", "Topology", "Variant", "all_sites", "apply_move",
    "block_exists", "check_move", "config_from_json", "default_topology", "format_moves",
    "check_new_game", "get_edition", "has_legal_build", "is_legal", "legal_builds",
    "legal_builds_at", "legal_moves", "make_config",
    "new_game", "parse_board_json", "parse_move", "parse_moves", "score_board", "score_views",
    "standings",
]
