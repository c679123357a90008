"""Which names hold a list of tests to skip (`SKIPPED_MODELS`, `disabled_tests`), and
which only look like one (`exclude_modules`, `VLLM_SKIP_P2P_CHECK`)."""

from __future__ import annotations

import re

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SKIP_TOKENS = frozenset({"skip", "skips", "skipped", "skiplist", "exclude", "excludes",
                          "excluded", "disabled", "quarantine", "quarantined", "blocklist",
                          "denylist", "blacklist", "xfail", "xfails", "flaky"})
# What an exclusion list holds when it is not tests: model layers (`exclude_modules`,
# `ignore_layers` of a quantization config), weights, download patterns.
_OBJECT_TOKENS = frozenset({"module", "modules", "layer", "layers", "param", "params",
                            "parameters", "weight", "weights", "tensor", "tensors", "keys",
                            "ops", "patterns", "tokens", "dims", "columns", "fields"})
_TESTISH_TOKENS = frozenset({"test", "tests", "case", "cases", "suite", "suites", "model",
                             "models"})


def skip_name(name: str) -> bool:
    """`SKIPPED_MODELS`, `disabled_tests`, `collect_ignore`, `skipTests`, `exclude`...
    but not `exclude_modules` / `ignore_layers` (model parts, not tests) nor an
    environment-style flag such as `VLLM_SKIP_P2P_CHECK` that merely contains SKIP."""
    last = name.rsplit(".", 1)[-1]
    base = _CAMEL_RE.sub("_", last).lower().replace("-", "_")
    tokens = set(base.split("_"))
    if tokens & _OBJECT_TOKENS and not tokens & _TESTISH_TOKENS:
        return False
    if last.isupper() and len(tokens) > 1 and not tokens & _TESTISH_TOKENS and \
            not base.startswith(("skip_", "skipped_", "disabled_", "exclude")):
        return False  # `VLLM_SKIP_P2P_CHECK`: a feature flag, not a list of tests
    return bool(tokens & _SKIP_TOKENS) or base.startswith(("collect_ignore", "known_fail")) or (
        bool(tokens & {"test", "tests"}) and bool(tokens & {"ignore", "ignored", "disable"}))
