"""The API's one error shape, ``{"error": {"code": ..., "message": ...}}`` (docs/api.md).

Codes are the protocol's (`protocol.errors.ErrorCode`) where the meaning is the same, plus
``day_not_closed`` (open data of a day whose games may still change) and ``not_acceptable``.
"""

from __future__ import annotations

import json
from enum import StrEnum

from aiohttp import web

from protocol.errors import ErrorCode

__all__ = ["ApiError", "ApiErrorCode", "error_response"]


class ApiErrorCode(StrEnum):
    """Every ``error.code`` the HTTP API answers with."""

    BAD_REQUEST = ErrorCode.BAD_REQUEST.value
    NOT_FOUND = ErrorCode.NOT_FOUND.value
    RATE_LIMITED = ErrorCode.RATE_LIMITED.value
    UNAVAILABLE = ErrorCode.UNAVAILABLE.value
    INTERNAL = ErrorCode.INTERNAL.value
    DAY_NOT_CLOSED = "day_not_closed"
    METHOD_NOT_ALLOWED = "method_not_allowed"


_STATUS: dict[ApiErrorCode, int] = {
    ApiErrorCode.BAD_REQUEST: 400,
    ApiErrorCode.NOT_FOUND: 404,
    ApiErrorCode.RATE_LIMITED: 429,
    ApiErrorCode.UNAVAILABLE: 503,
    ApiErrorCode.INTERNAL: 500,
    ApiErrorCode.DAY_NOT_CLOSED: 409,
    ApiErrorCode.METHOD_NOT_ALLOWED: 405,
}


class ApiError(Exception):
    """Raised by a route: answered as the error shape with the code's status."""

    def __init__(
        self, code: ApiErrorCode, message: str, *, retry_after_s: int | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after_s = retry_after_s

    @property
    def status(self) -> int:
        return _STATUS[self.code]


def error_response(err: ApiError) -> web.Response:
    body = json.dumps({"error": {"code": err.code.value, "message": err.message}})
    headers = {"Cache-Control": "no-store"}
    if err.retry_after_s is not None:
        headers["Retry-After"] = str(err.retry_after_s)
    return web.Response(
        status=err.status, text=body, content_type="application/json", headers=headers
    )
