"""The former name of `server.redis.batch` (kept for one round so branches merge; import
`Batcher` from `server.redis.batch`)."""

from server.redis.batch import Batcher, Command, LuaScript

MoveLog = Batcher

__all__ = ["Batcher", "Command", "LuaScript", "MoveLog"]
