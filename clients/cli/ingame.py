"""The commands a player types during a game, as a table: names and aliases → handler.

A handler does the work and returns a typed `Reply`; it never prints (`render.py` turns
replies into text). Anything that is not a command is a move (`CommandTable.fallback`).
The help text and the hint under the board are generated from the table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .games import GameBackend, Outcome
from .rules import NOTATION

#: Asks the person one question and returns the answer (None at the end of input).
Ask = Callable[[str], Awaitable[str | None]]

RESIGN_QUESTION = "End the game and record the result? [y/N] "


# -- replies ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Redraw:
    """Draw the board again."""


@dataclass(frozen=True)
class Help:
    """The move notation of the variant and the commands (name, help) of the table."""

    notation: str
    commands: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class LegalMoves:
    moves: tuple[str, ...]


@dataclass(frozen=True)
class Said:
    """A line from the game backend (a hint, or why there is none)."""

    text: str


@dataclass(frozen=True)
class Played:
    """A move or undo was tried: ok (draw the board) or refused (say why)."""

    outcome: Outcome


@dataclass(frozen=True)
class Resigned:
    """A resign: its outcome, or None when the person did not confirm."""

    outcome: Outcome | None


@dataclass(frozen=True)
class Left:
    """The person leaves the game (`eof`: because the input ended)."""

    eof: bool = False


Reply = Redraw | Help | LegalMoves | Said | Played | Resigned | Left


# -- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """What a handler may use: the game, a way to ask a question, and the table itself."""

    game: GameBackend
    ask: Ask
    table: CommandTable


Handler = Callable[[Turn, str], Awaitable[Reply]]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    handler: Handler
    aliases: tuple[str, ...] = ()


class CommandTable:
    """Commands by name and alias (case-insensitive); any other line goes to `fallback`."""

    def __init__(
        self,
        commands: Sequence[Command],
        fallback: Handler,
        unavailable: Mapping[str, str] | None = None,
    ) -> None:
        """`unavailable`: words of other tables answered with a sentence (why not here), not
        listed in the help and not taken for a move."""
        self.commands = tuple(commands)
        self.fallback = fallback
        self.unavailable = {k.lower(): v for k, v in (unavailable or {}).items()}
        self._by_word: dict[str, Command] = {}
        for command in self.commands:
            for word in (command.name, *command.aliases):
                if word.lower() in self._by_word:
                    raise ValueError(f"{word!r} names two commands")
                self._by_word[word.lower()] = command

    def __iter__(self) -> Iterator[Command]:
        return iter(self.commands)

    def find(self, line: str) -> Command | None:
        """The command a line names (surrounding blanks ignored), or None for a move."""
        return self._by_word.get(line.strip().lower())

    async def dispatch(self, game: GameBackend, ask: Ask, line: str) -> Reply:
        why_not = self.unavailable.get(line.strip().lower())
        if why_not is not None:
            return Said(why_not)
        command = self.find(line)
        handler = command.handler if command is not None else self.fallback
        return await handler(Turn(game, ask, self), line.strip())

    def help_entries(self) -> tuple[tuple[str, str], ...]:
        return tuple((c.name, c.help) for c in self.commands)

    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.commands)


# -- the handlers of the play table -----------------------------------------------------------


async def _redraw(turn: Turn, text: str) -> Reply:
    return Redraw()


async def _help(turn: Turn, text: str) -> Reply:
    return Help(NOTATION[turn.game.variant], turn.table.help_entries())


async def _moves(turn: Turn, text: str) -> Reply:
    return LegalMoves(tuple(turn.game.legal_moves()))


async def _hint(turn: Turn, text: str) -> Reply:
    return Said(await turn.game.hint())


async def _undo(turn: Turn, text: str) -> Reply:
    return Played(await turn.game.undo())


async def _resign(turn: Turn, text: str) -> Reply:
    answer = await turn.ask(RESIGN_QUESTION)
    if (answer or "").strip().lower() not in ("y", "yes"):
        return Resigned(None)
    return Resigned(await turn.game.resign())


async def _quit(turn: Turn, text: str) -> Reply:
    return Left()


async def _move(turn: Turn, text: str) -> Reply:
    return Played(await turn.game.move(text))


_HELP = Command("help", "this text", _help, ("?", "h"))
_MOVES = Command("moves", "list the legal moves", _moves, ("m",))
_UNDO = Command("undo", "take back the last move (counts as a move; not after a reveal)", _undo)
_BOARD = Command(
    "board", "draw the board again (so does an empty line)", _redraw, ("", "show", "b")
)
_QUIT_WORDS = ("exit", "q", ":q")

PLAY_COMMANDS = CommandTable(
    [
        _HELP,
        _MOVES,
        _UNDO,
        Command(
            "hint", "ask the server for a move (counts as a hint and adds a time penalty)", _hint
        ),
        Command("resign", "end the game now and record the result", _resign, ("finish",)),
        _BOARD,
        Command("quit", "leave; the game can be resumed later", _quit, _QUIT_WORDS),
    ],
    fallback=_move,
)
"""A daily game's commands."""

RACE_COMMANDS = CommandTable(
    [
        _HELP,
        _MOVES,
        _UNDO,
        Command(
            "resign", "give up the race now (your result stands as it is)", _resign, ("finish",)
        ),
        _BOARD,
        Command(
            "quit", "leave; the race goes on, and you forfeit if you stay away", _quit, _QUIT_WORDS
        ),
    ],
    fallback=_move,
    unavailable={"hint": "there are no hints in races"},
)
"""A race game's commands: no hints in races."""

PRACTICE_COMMANDS = CommandTable(
    [
        _HELP,
        _MOVES,
        _UNDO,
        Command("resign", "end the game now", _resign, ("finish",)),
        _BOARD,
        Command("quit", "leave (practice games are not kept)", _quit, _QUIT_WORDS),
    ],
    fallback=_move,
    unavailable={"hint": "hints need the server; practice games have none"},
)
"""An offline practice game's commands: no server, so no hints and nothing to resume."""

#: The words a moves script understands besides moves: by command name.
SCRIPT_COMMANDS: tuple[str, ...] = ("quit", "resign", "undo")


def script_command(text: str) -> str | None:
    """The command (``quit``, ``resign`` or ``undo``) a script line names, else None."""
    command = PLAY_COMMANDS.find(text)
    return command.name if command is not None and command.name in SCRIPT_COMMANDS else None
