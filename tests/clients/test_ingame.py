"""The in-game command table: lookup, dispatch on a real offline game, generated help, and
the rendering of its replies."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from clients.cli import render
from clients.cli.games import LocalGame
from clients.cli.ingame import (
    PLAY_COMMANDS,
    RESIGN_QUESTION,
    Command,
    CommandTable,
    Help,
    Left,
    LegalMoves,
    Played,
    Redraw,
    Resigned,
    Said,
    script_command,
)


class Answers:
    """Answers the confirmation questions in order, noting each question."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, question: str) -> str | None:
        self.asked.append(question)
        return self.answers.pop(0)


def text_of(renderable: object) -> str:
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("", "board"),
        ("  b ", "board"),
        ("?", "help"),
        ("H", "help"),
        ("m", "moves"),
        ("Q", "quit"),
        (":q", "quit"),
        ("exit", "quit"),
        ("finish", "resign"),
        ("undo", "undo"),
    ],
)
def test_words_name_commands(line: str, name: str) -> None:
    command = PLAY_COMMANDS.find(line)
    assert command is not None and command.name == name


def test_anything_else_is_a_move() -> None:
    assert PLAY_COMMANDS.find("3 7") is None
    assert PLAY_COMMANDS.find("d") is None


def test_a_word_may_name_one_command_only() -> None:
    async def nothing(turn: object, text: str) -> Redraw:
        return Redraw()

    with pytest.raises(ValueError, match="'B'"):
        CommandTable(
            [Command("board", "", nothing, ("b",)), Command("back", "", nothing, ("B",))],
            fallback=nothing,
        )


async def test_dispatch_plays_on_a_real_game() -> None:
    game = LocalGame("fourteen-out", 3)
    legal = game.legal_moves()
    ask = Answers()
    assert await PLAY_COMMANDS.dispatch(game, ask, "") == Redraw()
    assert await PLAY_COMMANDS.dispatch(game, ask, " moves ") == LegalMoves(tuple(legal))
    assert await PLAY_COMMANDS.dispatch(game, ask, "hint") == Said(await game.hint())
    played = await PLAY_COMMANDS.dispatch(game, ask, legal[0])
    assert isinstance(played, Played) and played.outcome.ok
    assert game.view["cleared"] == 2
    refused = await PLAY_COMMANDS.dispatch(game, ask, "1 1")
    assert isinstance(refused, Played) and not refused.outcome.ok
    assert "different piles" in str(refused.outcome.reason)
    undone = await PLAY_COMMANDS.dispatch(game, ask, "UNDO")
    assert isinstance(undone, Played) and undone.outcome.ok and game.view["cleared"] == 0
    assert await PLAY_COMMANDS.dispatch(game, ask, "q") == Left()
    assert ask.asked == []


async def test_resign_asks_first() -> None:
    game = LocalGame("fourteen-out", 3)
    ask = Answers("n", None, " Y ")
    assert await PLAY_COMMANDS.dispatch(game, ask, "resign") == Resigned(None)
    assert await PLAY_COMMANDS.dispatch(game, ask, "finish") == Resigned(None)  # input ended
    assert not game.finished
    reply = await PLAY_COMMANDS.dispatch(game, ask, "resign")
    assert isinstance(reply, Resigned) and reply.outcome is not None and reply.outcome.ok
    assert game.finished and game.result is not None and game.result.resigned
    assert ask.asked == [RESIGN_QUESTION] * 3


async def test_help_is_generated_from_the_table() -> None:
    game = LocalGame("triple-deck", 1)
    reply = await PLAY_COMMANDS.dispatch(game, Answers(), "help")
    assert isinstance(reply, Help)
    assert [name for name, _ in reply.commands] == [c.name for c in PLAY_COMMANDS]
    text = text_of(render.reply_text(reply))
    assert "w 5" in text  # the variant's notation
    for command in PLAY_COMMANDS:
        assert f"  {command.name:<8} {command.help}" in text
    intro = render.intro_text(PLAY_COMMANDS.names()).plain
    assert all(f"'{c.name}'" in intro for c in PLAY_COMMANDS)


def test_script_words() -> None:
    assert script_command("UNDO") == "undo"
    assert script_command("finish") == "resign"
    assert script_command(":q") == "quit"
    assert script_command("moves") is None  # a script sends it as a move (and is refused)
    assert script_command("3 7") is None


def test_replies_as_text() -> None:
    assert render.reply_text(LegalMoves(())) is not None
    assert str(render.reply_text(LegalMoves(()))) == "legal moves: (none)"
    assert str(render.reply_text(Left(), "Bye.")) == "Left the game. Bye."
    assert str(render.reply_text(Left(eof=True))) == "\nLeft the game."
    assert str(render.reply_text(Resigned(None))) == "not resigned"
