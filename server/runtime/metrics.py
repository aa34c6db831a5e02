"""Prometheus metrics, one registry per app so several apps can live in one process (tests).

The per-request metrics (`LabeledCounter`, `LabeledHistogram`) are plain numbers updated
without a lock or a library call (the server is one thread: an event loop) and exported by a
collector when /metrics is scraped; prometheus_client's own metrics take a lock per update,
which cost ~5 % of a move's CPU (issue #11). The rare ones keep prometheus_client's types.

/metrics is not public (it counts, among others, the results the fair-play screen held):
`scrape_allowed` lets a scraper on the same host in (a loopback peer that sends no
``X-Forwarded-For``/``Forwarded``: a request through a proxy on this host carries them), and
anyone sending ``Authorization: Bearer <--metrics-token>`` (docs/reliability.md).
"""

from __future__ import annotations

import bisect
import hmac
import ipaddress
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector


def scrape_allowed(peer: str | None, headers: Mapping[str, str], token: str) -> bool:
    """Whether a /metrics request may read the metrics: a bearer of ``token`` (when one is
    set), or a loopback peer whose request no proxy forwarded."""
    if token:
        sent = headers.get("Authorization", "")
        if hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            return True
    if "X-Forwarded-For" in headers or "Forwarded" in headers or peer is None:
        return False
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


#: Buckets of the event-loop lag histogram (seconds): fine below 10 ms, up to 1 s.
LOOP_LAG_BUCKETS = (
    0.0002,
    0.0005,
    0.001,
    0.002,
    0.003,
    0.005,
    0.0075,
    0.01,
    0.015,
    0.02,
    0.03,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.5,
    0.75,
    1.0,
)


@dataclass
class GcStats:
    """Time spent in the garbage collector, summed by `server.runtime.looplag.GcTimer`.

    Plain floats updated from the gc callback (no lock, no prometheus call per collection);
    exported by a collector when /metrics is scraped.
    """

    seconds: float = 0.0
    collections: int = 0
    #: Objects the collections freed: garbage that reference counting could not (cycles).
    collected: int = 0


class _GcCollector(Collector):
    def __init__(self, stats: GcStats) -> None:
        self.stats = stats

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(
            "solitaire_gc_seconds",
            "Wall time spent in garbage collections (all generations)",
            value=self.stats.seconds,
        )
        yield CounterMetricFamily(
            "solitaire_gc_collections", "Garbage collections", value=self.stats.collections
        )
        yield CounterMetricFamily(
            "solitaire_gc_collected_objects",
            "Objects freed by garbage collections (reference cycles)",
            value=self.stats.collected,
        )


class LabeledCounter(Collector):
    """A counter with one label, as a dict of floats (one event loop: no lock needed)."""

    def __init__(self, name: str, documentation: str, label: str) -> None:
        self.name, self.documentation, self.label = name, documentation, label
        self.values: dict[str, float] = {}

    def inc(self, label: str, amount: float = 1.0) -> None:
        values = self.values
        values[label] = values.get(label, 0.0) + amount

    def value(self, label: str) -> float:
        return self.values.get(label, 0.0)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=[self.label])
        for label, value in sorted(self.values.items()):
            family.add_metric([label], value)
        yield family


class LabeledHistogram(Collector):
    """A histogram with one label: per label, a count per bucket and the sum."""

    def __init__(self, name: str, documentation: str, label: str, buckets: Iterable[float]) -> None:
        self.name, self.documentation, self.label = name, documentation, label
        self.bounds = sorted(buckets)
        self._counts: dict[str, list[int]] = {}
        self._sums: dict[str, float] = {}

    def observe(self, label: str, value: float) -> None:
        counts = self._counts.get(label)
        if counts is None:
            counts = self._counts[label] = [0] * (len(self.bounds) + 1)
            self._sums[label] = 0.0
        counts[bisect.bisect_left(self.bounds, value)] += 1
        self._sums[label] += value

    def count(self, label: str) -> int:
        return sum(self._counts.get(label, ()))

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=[self.label])
        for label, counts in sorted(self._counts.items()):
            cumulative, running = [], 0
            for bound, n in zip([*self.bounds, float("inf")], counts, strict=True):
                running += n
                cumulative.append((_bound_text(bound), float(running)))
            family.add_metric([label], cumulative, self._sums[label])
        yield family


def _bound_text(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.connections = Gauge("solitaire_connections", "Open WebSocket connections", registry=r)
        self.messages = LabeledCounter("solitaire_messages", "Requests received, by type", "type")
        self.moves = LabeledCounter("solitaire_moves", "Moves accepted, by variant", "variant")
        self.errors = LabeledCounter("solitaire_errors", "Error replies, by code", "code")
        self.latency = LabeledHistogram(
            "solitaire_request_seconds",
            "Time to handle a request, by type",
            "type",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
        )
        self.games_finished = LabeledCounter(
            "solitaire_games_finished", "Games finished, by variant", "variant"
        )
        self.results_held = LabeledCounter(
            "solitaire_results_held",
            "Finished games the fair-play screen held for review, by variant",
            "variant",
        )
        self.engine_cpu = LabeledCounter(
            "solitaire_engine_cpu_seconds",
            "Seconds in the rules engine: deal and replay, parse, apply, game over, events, view",
            "variant",
        )
        for collector in (
            self.messages,
            self.moves,
            self.errors,
            self.latency,
            self.games_finished,
            self.results_held,
            self.engine_cpu,
        ):
            r.register(collector)
        # Event-loop lag (server/runtime/looplag.py): how late a periodic timer fires.
        self.loop_lag = Histogram(
            "solitaire_loop_lag_seconds",
            "Event-loop lag: how late a periodic timer callback runs",
            buckets=LOOP_LAG_BUCKETS,
            registry=r,
        )
        self.loop_lag_max = Gauge(
            "solitaire_loop_lag_max_seconds",
            "Largest event-loop lag since the previous scrape (each scrape resets it)",
            registry=r,
        )
        self._loop_lag_max = 0.0
        self.loop_lag_max.set_function(self._take_loop_lag_max)
        self.gc = GcStats()
        r.register(_GcCollector(self.gc))

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
