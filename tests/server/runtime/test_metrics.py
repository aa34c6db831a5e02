"""Per-app Prometheus metrics: children, the loop-lag max, GC counters, and /metrics."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import aiohttp
import redis.asyncio
from prometheus_client.parser import text_string_to_metric_families

from server.runtime.metrics import Metrics, scrape_allowed
from tests.support.app import serve
from tests.support.races import race_config


def samples(text: str | bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    raw = text.decode() if isinstance(text, bytes) else text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(raw)
        for s in fam.samples
    }


def test_labels_count_separately_per_metric() -> None:
    m = Metrics()
    m.moves.inc("fourteen-out")
    m.moves.inc("fourteen-out", 2)
    m.moves.inc("triple-deck")
    assert m.moves.value("fourteen-out") == 3
    assert m.moves.value("triple-deck") == 1
    assert m.games_finished.value("fourteen-out") == 0, "each metric counts its own"


def test_histogram_buckets_sum_and_count() -> None:
    m = Metrics()
    for s in (0.0001, 0.0005, 0.003, 2.0):
        m.latency.observe("move", s)
    got = samples(m.render())
    label = (("le", "0.0005"), ("type", "move"))
    assert got[("solitaire_request_seconds_bucket", label)] == 2, "le is inclusive"
    assert got[("solitaire_request_seconds_bucket", (("le", "0.005"), ("type", "move")))] == 3
    assert got[("solitaire_request_seconds_bucket", (("le", "+Inf"), ("type", "move")))] == 4
    assert got[("solitaire_request_seconds_count", (("type", "move"),))] == 4
    assert abs(got[("solitaire_request_seconds_sum", (("type", "move"),))] - 2.0036) < 1e-9
    assert m.latency.count("move") == 4 and m.latency.count("ping") == 0


def test_counts_land_in_the_rendered_text() -> None:
    m = Metrics()
    m.moves.inc("fourteen-out")
    m.moves.inc("fourteen-out", 2)
    m.errors.inc("not_found")
    m.connections.inc()
    got = samples(m.render())
    assert got[("solitaire_moves_total", (("variant", "fourteen-out"),))] == 3
    assert got[("solitaire_errors_total", (("code", "not_found"),))] == 1
    assert got[("solitaire_connections", ())] == 1


def test_two_apps_do_not_share_counts() -> None:
    a, b = Metrics(), Metrics()
    a.messages.inc("ping")
    assert ("solitaire_messages_total", (("type", "ping"),)) not in samples(b.render())


def test_loop_lag_max_is_reset_by_each_scrape() -> None:
    m = Metrics()
    for s in (0.004, 0.050, 0.010):
        m.observe_loop_lag(s)
    first = samples(m.render())
    assert first[("solitaire_loop_lag_max_seconds", ())] == 0.050
    assert first[("solitaire_loop_lag_seconds_count", ())] == 3
    assert first[("solitaire_loop_lag_seconds_bucket", (("le", "0.005"),))] == 1
    again = samples(m.render())
    assert again[("solitaire_loop_lag_max_seconds", ())] == 0.0
    assert again[("solitaire_loop_lag_seconds_count", ())] == 3, "the histogram keeps counting"


def test_gc_stats_are_exported_at_scrape_time() -> None:
    m = Metrics()
    m.gc.seconds, m.gc.collections, m.gc.collected = 0.25, 7, 1234
    got = samples(m.render())
    assert got[("solitaire_gc_seconds_total", ())] == 0.25
    assert got[("solitaire_gc_collections_total", ())] == 7
    assert got[("solitaire_gc_collected_objects_total", ())] == 1234


async def test_requests_and_errors_are_counted_on_the_metrics_endpoint(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    async with serve(race_config(redis_url, tmp_path)) as app:
        c = await app.client("metered")
        for _ in range(3):
            assert (await c.request("ping"))["type"] == "pong"
        bad = await c.request("race.get", race_id="20300615-nosuchrace")
        assert bad["type"] == "error"
        async with aiohttp.ClientSession() as http, http.get(app.http + "/metrics") as r:
            assert r.status == 200
            got = samples(await r.text())
        await c.close()
    assert got[("solitaire_messages_total", (("type", "ping"),))] == 3
    assert got[("solitaire_errors_total", (("code", bad["code"]),))] == 1
    assert got[("solitaire_connections", ())] == 1
    assert got[("solitaire_request_seconds_count", (("type", "ping"),))] == 3


async def test_metrics_answer_a_scraper_on_this_host_or_with_the_token_only(
    redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> None:
    """An outsider reaching /metrics through the balancer (haproxy adds X-Forwarded-For) read
    the counts of held results; now 403 unless it is a scraper on this host or has the
    token (``--metrics-token``)."""
    outside = {"X-Forwarded-For": "203.0.113.9"}
    config = replace(race_config(redis_url, tmp_path), metrics_token="s3cret-scrape")
    async with serve(config) as app, aiohttp.ClientSession() as http:
        url = app.http + "/metrics"
        for headers in (
            outside,
            {"Forwarded": "for=203.0.113.9"},
            {**outside, "Authorization": "Bearer wrong"},
            {**outside, "Authorization": "s3cret-scrape"},
        ):
            async with http.get(url, headers=headers) as r:
                assert r.status == 403, headers
                body = await r.text()
                assert "solitaire_results_held" not in body and "--metrics-token" in body
        async with http.get(url, headers={**outside, "Authorization": "Bearer s3cret-scrape"}) as r:
            assert r.status == 200 and "solitaire_results_held" in await r.text()
        async with http.get(url) as r:  # this host's own scraper (the tests, a local agent)
            assert r.status == 200 and "solitaire_results_held" in await r.text()
    async with (
        serve(race_config(redis_url, tmp_path)) as plain,
        aiohttp.ClientSession() as http,
        http.get(plain.http + "/metrics", headers=outside) as r,
    ):
        assert r.status == 403, "no token set: this host only"


def test_scrape_allowed_reads_the_peer_and_the_token() -> None:
    assert scrape_allowed("127.0.0.1", {}, "")
    assert scrape_allowed("::1", {}, "")
    assert scrape_allowed("::ffff:127.0.0.1", {}, "")
    assert not scrape_allowed("10.0.0.5", {}, "")
    assert not scrape_allowed(None, {}, "")
    assert not scrape_allowed("not an address", {}, "")
    assert scrape_allowed("10.0.0.5", {"Authorization": "Bearer t"}, "t")
    assert not scrape_allowed("10.0.0.5", {"Authorization": "Bearer "}, "")
