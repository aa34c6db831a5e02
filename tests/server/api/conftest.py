"""Fixtures of the API tests: an HTTP session, and a checking client (`ApiClient`) of the
`/api/v1` of `race_app` (tests/server/conftest.py: the app on the session's Redis)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio

from tests.support.apiclient import ApiClient
from tests.support.app import App


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


@pytest_asyncio.fixture
async def api(race_app: App, session: aiohttp.ClientSession) -> ApiClient:
    return ApiClient(race_app.http, session)
