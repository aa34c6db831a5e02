"""Daily-challenge deal seeds and UTC day arithmetic."""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import hmac

__all__ = [
    "DAY_MS",
    "daily_seed",
    "day_start_ms",
    "last_of_month",
    "ms_until_rollover",
    "utc_date",
]

DAY_MS = 86_400_000
_SEED_MASK = (1 << 53) - 1  # JS-safe integer: clients may see derived values as JSON numbers


def daily_seed(secret: bytes, variant: str, date: dt.date) -> int:
    """Deal seed for ``variant`` on ``date``: unpredictable without ``secret``, stable across
    restarts, and distinct per variant/day. HMAC-SHA256, first 8 bytes big-endian, 53 bits."""
    msg = f"daily:{variant}:{date.isoformat()}".encode()
    digest = hmac.new(secret, msg, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & _SEED_MASK


def utc_date(now_ms: int) -> dt.date:
    """The UTC calendar date containing ``now_ms``."""
    return dt.date(1970, 1, 1) + dt.timedelta(days=now_ms // DAY_MS)


def day_start_ms(date: dt.date) -> int:
    """Epoch milliseconds of 00:00 UTC on ``date``."""
    return (date - dt.date(1970, 1, 1)).days * DAY_MS


def last_of_month(date: dt.date) -> dt.date:
    """The last day of ``date``'s month."""
    return dt.date(date.year, date.month, calendar.monthrange(date.year, date.month)[1])


def ms_until_rollover(now_ms: int) -> int:
    """Milliseconds until the next 00:00 UTC (in ``(0, DAY_MS]``)."""
    return DAY_MS - now_ms % DAY_MS
