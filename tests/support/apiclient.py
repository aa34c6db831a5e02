"""An HTTP client of the public API (`/api/v1`, docs/api.md) that checks every answer it gets
against the served OpenAPI document, with openapi-spec-validator (the document) and
openapi-schema-validator (each JSON body against its operation's schema)."""

from __future__ import annotations

import functools
import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import aiohttp
from multidict import CIMultiDict
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec

OPENAPI_FILE = Path(__file__).resolve().parents[2] / "server" / "api" / "openapi.json"


@functools.cache
def openapi() -> dict[str, Any]:
    """The OpenAPI document in the tree, checked to be valid OpenAPI 3.1 (once)."""
    doc = cast(dict[str, Any], json.loads(OPENAPI_FILE.read_text()))
    validate_spec(doc)
    return doc


def schema_validate(instance: object, name_or_schema: str | dict[str, Any]) -> None:
    """Validate against a component (by name) or a schema of the document; raises."""
    doc = openapi()
    schema = (
        {"$ref": f"#/components/schemas/{name_or_schema}"}
        if isinstance(name_or_schema, str)
        else name_or_schema
    )
    OAS31Validator({**schema, "components": doc["components"]}).validate(instance)


def _operation(path: str) -> dict[str, Any]:
    for template, item in openapi()["paths"].items():
        pattern = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            return cast(dict[str, Any], item["get"])
    raise AssertionError(f"{path} is not in the OpenAPI document")


@dataclass
class Answer:
    status: int
    headers: CIMultiDict[str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def code(self) -> str:
        return str(self.json()["error"]["code"])

    def lines(self) -> list[dict[str, Any]]:
        """A gzipped NDJSON body's lines."""
        return [json.loads(x) for x in gzip.decompress(self.body).splitlines() if x]


def check(path: str, answer: Answer) -> None:
    """The answer is one the document describes for ``path``: its status, and its JSON body
    against the status's schema."""
    op = _operation(path.split("?", 1)[0])
    responses = op["responses"]
    assert str(answer.status) in responses, (path, answer.status, answer.body[:300])
    described = responses[str(answer.status)]
    if answer.status == 304:
        assert answer.body == b""
        return
    content = described.get("content", {})
    ctype = answer.headers.get("Content-Type", "").split(";")[0]
    assert ctype in content, (path, ctype, list(content))
    if ctype == "application/json":
        schema = content[ctype]["schema"]
        OAS31Validator({**schema, "components": openapi()["components"]}).validate(answer.json())


class ApiClient:
    """GETs under an app's HTTP root, each answer checked against the document."""

    def __init__(self, http: str, session: aiohttp.ClientSession) -> None:
        self.http = http
        self.session = session

    async def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        async with self.session.get(
            self.http + path, headers=headers or {}, auto_decompress=True
        ) as r:
            answer = Answer(r.status, CIMultiDict(r.headers), await r.read())
        check(path, answer)
        return answer
