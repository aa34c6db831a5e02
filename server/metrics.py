"""Prometheus metrics, one registry per app so several apps can live in one process (tests)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.connections = Gauge("solitaire_connections", "Open WebSocket connections",
                                 registry=r)
        self.messages = Counter("solitaire_messages_total", "Requests received, by type",
                                ["type"], registry=r)
        self.moves = Counter("solitaire_moves_total", "Moves accepted, by variant",
                             ["variant"], registry=r)
        self.errors = Counter("solitaire_errors_total", "Error replies, by code", ["code"],
                              registry=r)
        self.latency = Histogram(
            "solitaire_request_seconds", "Time to handle a request, by type", ["type"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
            registry=r)
        self.games_finished = Counter("solitaire_games_finished_total",
                                      "Games finished, by variant", ["variant"], registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)
