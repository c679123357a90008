"""Prometheus metrics of the App, on a registry of its own (never the global one).

Other layers record through the methods of one shared `Metrics` object:

    metrics.github_call("pulls/list-files", 200)
    metrics.rate_limit_remaining(4987)          # from x-ratelimit-remaining
    metrics.review_latency(3.2)                 # webhook received → check completed

Queue depth and dead letters are read from the store at scrape time, so they are
right even when another process (a second worker, an operator) changed the queue.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from bot.github.calls import OnCall
from bot.store.base import Store

CONTENT_TYPE = CONTENT_TYPE_LATEST
_LABEL_SAFE = re.compile(r"[a-z0-9_./-]{1,64}")
ADVISOR_TOKEN_BUCKETS = (250, 500, 1000, 2000, 4000, 8000, 16000, 32000)
REVIEW_BUCKETS = (0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)


def label(value: str | int | None) -> str:
    """A bounded label value: header-derived strings must not blow up cardinality."""
    text = str(value).lower() if value is not None else "none"
    return text if _LABEL_SAFE.fullmatch(text) else "other"


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._watched: set[int] = set()
        self._received = Counter(
            "ci_stability_webhook_deliveries",
            "Webhook deliveries at intake, by event and outcome "
            "(accepted, duplicate, ignored, ping, unauthorized, too_large, bad_request, error).",
            ["event", "outcome"], registry=self.registry,
        )
        self._processed = Counter(
            "ci_stability_deliveries_processed",
            "Queued deliveries handled by the workers, by event and outcome "
            "(done, retry, dead, superseded).",
            ["event", "outcome"], registry=self.registry,
        )
        self._latency = Histogram(
            "ci_stability_review_latency_seconds",
            "Time from a webhook's arrival to its review being published.",
            buckets=REVIEW_BUCKETS, registry=self.registry,
        )
        self._github_calls = Counter(
            "ci_stability_github_api_calls",
            "GitHub API requests by operation and HTTP status.",
            ["operation", "status"], registry=self.registry,
        )
        self._advisor_requests = Counter(
            "ci_stability_advisor_requests",
            "LLM advisor requests by outcome (answered, failed, skipped by a budget).",
            ["outcome"], registry=self.registry,
        )
        self._advisor_tokens = Histogram(
            "ci_stability_advisor_tokens_per_request",
            "Tokens (prompt + completion) one advisor request spent on a pull request.",
            buckets=ADVISOR_TOKEN_BUCKETS, registry=self.registry,
        )
        self._rate_limit = Gauge(
            "ci_stability_github_rate_limit_remaining",
            "x-ratelimit-remaining of the last GitHub response, by rate-limit resource.",
            ["resource"], registry=self.registry,
        )

    def watch_store(self, store: Store) -> None:
        """Export queue depth, dead letters and store health from `store` at each scrape."""
        if id(store) in self._watched:  # build_web_app may run more than once (tests)
            return
        self._watched.add(id(store))
        self.registry.register(_QueueCollector(store))

    def delivery_received(self, event: str, outcome: str, count: int = 1) -> None:
        self._received.labels(label(event), outcome).inc(count)

    def delivery_processed(self, event: str, outcome: str) -> None:
        self._processed.labels(label(event), outcome).inc()

    def github_call(self, op: str, status: int | str) -> None:
        self._github_calls.labels(label(op), label(status)).inc()

    def rate_limit_remaining(self, n: int, resource: str = "core") -> None:
        self._rate_limit.labels(label(resource)).set(n)

    def advisor_request(self, outcome: str, tokens: int) -> None:
        self._advisor_requests.labels(label(outcome)).inc()
        if outcome == "answered":
            self._advisor_tokens.observe(tokens)

    def review_latency(self, seconds: float) -> None:
        self._latency.observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _QueueCollector(Collector):
    def __init__(self, store: Store) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ci_stability_store_up", "1 when the store answers a query.")
        try:
            counts = self._store.counts()
        except Exception:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        depth = GaugeMetricFamily(
            "ci_stability_queue_deliveries", "Deliveries in the queue by status.",
            labels=["status"],
        )
        for status, count in counts.items():
            depth.add_metric([status], count)
        yield depth
        dead = GaugeMetricFamily(
            "ci_stability_dead_letters", "Deliveries that failed every attempt."
        )
        dead.add_metric([], counts.get("dead", 0))
        yield dead


def metrics_hook(metrics: Metrics) -> OnCall:
    """An `on_call` that feeds the App's Prometheus metrics."""

    def on_call(operation: str, status: int, remaining: int | None) -> None:
        metrics.github_call(operation or "unknown", status)
        if remaining is not None:
            resource = "search" if operation.startswith("search/") else "core"
            metrics.rate_limit_remaining(remaining, resource)

    return on_call
