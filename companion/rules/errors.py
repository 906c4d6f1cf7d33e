"""Every error the rules engine raises is a ValueError, as in python-chess."""

from __future__ import annotations


class RulesError(ValueError):
    """Base of all rules-engine errors."""


class InvalidBoardError(RulesError):
    """A board description is malformed or impossible."""


class NotationError(RulesError):
    """A move or site could not be parsed from text."""


class RecordError(RulesError):
    """A game record is malformed or inconsistent."""


class SetupError(RulesError):
    """A game set-up is inconsistent (players, seats, colours, edition)."""


class IllegalMoveError(RulesError):
    """A move breaks a rule; ``reason`` says which one."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
