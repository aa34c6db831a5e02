"""docker-compose.yml, the Dockerfile and deploy/ agree: compose cannot run on the test
machines (no container daemon), so what it would run is checked against what the tests run."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import yaml

from tests.support.balancer import CONFIG
from tests.support.procs import ROOT


def normalized(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_the_balancer_runs_the_tested_file_in_front_of_three_servers() -> None:
    services = compose()["services"]
    lb = services["balancer"]
    assert lb["image"].startswith("haproxy:")
    mounts = [v.split(":") for v in lb["volumes"]]
    assert [m[:2] for m in mounts] == [
        ["./deploy/haproxy.cfg", "/usr/local/etc/haproxy/haproxy.cfg"]
    ]
    assert (ROOT / "deploy" / "haproxy.cfg").resolve() == CONFIG.resolve()
    targets = [lb["environment"][f"SOLITAIRE_SERVER_{i}"] for i in (1, 2, 3)]
    assert targets == ["server-1:8765", "server-2:8765", "server-3:8765"]
    for target in targets:
        server = services[target.split(":")[0]]
        assert server["build"] == "."
        assert "ports" not in server  # reached through the balancer only
    assert lb["ports"] == ["8765:8765"]
    # every variable the file reads is one the tests set (tests/support/balancer.py)
    read = set(re.findall(r"\$\{(SOLITAIRE_[A-Z0-9_]+)-", CONFIG.read_text()))
    assert read == {
        "SOLITAIRE_LB_BIND",
        "SOLITAIRE_SERVER_1",
        "SOLITAIRE_SERVER_2",
        "SOLITAIRE_SERVER_3",
        "SOLITAIRE_LB_MAX_CONN",
        "SOLITAIRE_LB_CONN_RATE",
        "SOLITAIRE_LB_STATS_SOCKET",
    }


def test_secrets_are_files_and_redis_needs_its_password() -> None:
    data = compose()
    assert set(data["secrets"]) == {"daily_secret", "redis_password"}
    for name, service in data["services"].items():
        env = service.get("environment", {})
        assert not any(k in env for k in ("SOLITAIRE_DAILY_SECRET", "REDIS_PASSWORD")), name
        for key, value in env.items():
            if key.endswith("_FILE"):
                secret = value.removeprefix("/run/secrets/")
                assert secret in service["secrets"], (name, key)
    redis = data["services"]["redis"]
    assert "--requirepass" in " ".join(redis["command"])
    assert "redis_password" in redis["secrets"]


def test_the_image_runs_as_a_user_with_a_health_check_and_pinned_dependencies() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    final = dockerfile[dockerfile.rindex("FROM ") :]
    user = re.search(r"^USER (\S+)$", final, re.M)
    assert user is not None and user.group(1) not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n?.*readyz", final, re.M)
    assert "-c deploy/constraints.txt" in dockerfile
    pins = {
        normalized(line.split("==")[0])
        for line in (ROOT / "deploy" / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"]:
        name = normalized(re.split(r"[\[<>=;! ]", requirement, maxsplit=1)[0])
        assert name in pins, f"{name} is not pinned in deploy/constraints.txt"
