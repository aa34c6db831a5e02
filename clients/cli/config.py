"""Where the client keeps its identities: one token per server URL and local profile in the XDG
config dir. Several people on one computer keep apart with ``--profile NAME`` (or ``--name
NAME``); without either, the default profile of the server is used."""

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


def _key(url: str, profile: str | None) -> str:
    """The entry of a profile: the server URL for the default one, ``URL#profile=NAME`` else."""
    return url if not profile else f"{url}#profile={profile.lower()}"


class TokenStore:
    """``tokens.json``: ``{server_url[#profile=NAME]: {"token", "name", "player_id"}}``, mode
    0600."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = (directory or config_dir()) / "tokens.json"

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, url: str, profile: str | None = None) -> Identity | None:
        entry = self._load().get(_key(url, profile))
        if not isinstance(entry, dict) or not entry.get("token"):
            return None
        return Identity(
            str(entry["token"]), str(entry.get("name", "")), str(entry.get("player_id", ""))
        )

    def put(self, url: str, identity: Identity, profile: str | None = None) -> None:
        data = self._load()
        data[_key(url, profile)] = {
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

    def find(
        self, url: str, profile: str | None, name: str | None
    ) -> tuple[Identity | None, str | None]:
        """The identity to use and the profile it is kept under.

        ``--profile P``: P's identity. ``--name N`` alone: the profile N, or the default one
        when it is the player called N (as a first ``--name`` run stored it). Neither: the
        default profile."""
        if profile:
            return self.get(url, profile), profile
        if name:
            own = self.get(url, name)
            if own is not None:
                return own, name
            default = self.get(url)
            if default is not None and default.name.lower() == name.lower():
                return default, None
            return None, name
        return self.get(url), None

    def keep(
        self, url: str, identity: Identity, profile: str | None, replacing: Identity | None = None
    ) -> None:
        """Store a new identity under its profile. The first player of a server is also its
        default one (so later runs without --name or --profile are that player), and so is a
        player created again for a default one the server forgot (`replacing`)."""
        self.put(url, identity, profile)
        default = self.get(url)
        if profile and (default is None or (replacing is not None and default == replacing)):
            self.put(url, identity)
