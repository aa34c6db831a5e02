"""Where the client keeps its identity: one token per server URL in the XDG config dir."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

DEFAULT_SERVER: Final = "ws://localhost:8765/ws"


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/solitaire`` or ``~/.config/solitaire``."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "solitaire"


@dataclass(frozen=True)
class Identity:
    """The stored identity of the player on one server."""

    token: str
    name: str
    player_id: str


class TokenStore:
    """``tokens.json``: ``{server_url: {"token", "name", "player_id"}}``, mode 0600."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or config_dir()) / "tokens.json"

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, url: str) -> Identity | None:
        entry = self._load().get(url)
        if not isinstance(entry, dict) or not entry.get("token"):
            return None
        return Identity(
            str(entry["token"]), str(entry.get("name", "")), str(entry.get("player_id", ""))
        )

    def put(self, url: str, identity: Identity) -> None:
        data = self._load()
        data[url] = {
            "token": identity.token,
            "name": identity.name,
            "player_id": identity.player_id,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, self.path)
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o600)
