"""Prometheus metrics, one registry per app so several apps can live in one process (tests)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar, cast

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector

M = TypeVar("M", bound=MetricWrapperBase)

#: Buckets of the event-loop lag histogram (seconds): fine below 10 ms, up to 1 s.
LOOP_LAG_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02,
                    0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0)


@dataclass
class GcStats:
    """Time spent in the garbage collector, summed by `server.looplag.GcTimer`.

    Plain floats updated from the gc callback (no lock, no prometheus call per collection);
    exported by a collector when /metrics is scraped.
    """

    seconds: float = 0.0
    collections: int = 0


class _GcCollector(Collector):
    def __init__(self, stats: GcStats) -> None:
        self.stats = stats

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily("solitaire_gc_seconds",
                                  "Wall time spent in garbage collections (all generations)",
                                  value=self.stats.seconds)
        yield CounterMetricFamily("solitaire_gc_collections", "Garbage collections",
                                  value=self.stats.collections)


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
        self.engine_cpu = Counter(
            "solitaire_engine_cpu_seconds_total",
            "CPU seconds in the rules engine per move (parse, apply, over, events, view)",
            ["variant"], registry=r)
        # Event-loop lag (server/looplag.py): how late a periodic timer fires.
        self.loop_lag = Histogram(
            "solitaire_loop_lag_seconds",
            "Event-loop lag: how late a periodic timer callback runs", buckets=LOOP_LAG_BUCKETS,
            registry=r)
        self.loop_lag_max = Gauge(
            "solitaire_loop_lag_max_seconds",
            "Largest event-loop lag since the previous scrape (each scrape resets it)",
            registry=r)
        self._loop_lag_max = 0.0
        self._children: dict[tuple[int, str], MetricWrapperBase] = {}
        self.loop_lag_max.set_function(self._take_loop_lag_max)
        self.gc = GcStats()
        r.register(_GcCollector(self.gc))

    def child(self, metric: M, label: str) -> M:
        """`metric.labels(label)`, looked up once: `labels()` takes a lock on every call."""
        key = (id(metric), label)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(label)
        return cast(M, found)

    def observe_loop_lag(self, seconds: float) -> None:
        self.loop_lag.observe(seconds)
        if seconds > self._loop_lag_max:
            self._loop_lag_max = seconds

    def _take_loop_lag_max(self) -> float:
        """The max since the last call, then reset: so a scrape reads the max since the
        previous scrape (benchmarks scrape at both ends of their window)."""
        value, self._loop_lag_max = self._loop_lag_max, 0.0
        return value

    def render(self) -> bytes:
        return generate_latest(self.registry)
