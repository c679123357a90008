"""How one knob change is judged: the words that name it, the words that give its
reason, and limits that fail loudly (a shorter timeout, a gate reset stricter, a GitHub
Actions time limit set where there was none)."""

from __future__ import annotations

import re

from rules.analysis.knobs import (
    RETUNE_REASONS,
    Categories,
    Change,
    fixes_limit_failure,
    number,
    tightening,
)

# How a value was arrived at is its reason: "set to each model's observed minimum minus
# 1.5 points", "calibrated on the nightly runs", "~1.1σ below the mean", "headroom".
_DERIVED = (
    r"\b(?:observed|measured|calibrated|profiled|benchmarked|empirically|derived from|"
    r"headroom|(?:minus|plus|below|above)\s{1,3}~?\d{1,4}(?:\.\d{1,4})?\s{0,2}"
    r"(?:points?|pts|pp|%|percent|σ|sigma|std)|~?\d{1,4}(?:\.\d{1,4})?\s{0,2}(?:σ|sigma)(?!\w))"
)
KNOB_REASONS = re.compile(f"{RETUNE_REASONS.pattern}|{_DERIVED}", re.I)
# A sentence that says the change fixes a named problem gives the reason the rule asks
# for, as "to fix" does: "resolves an attention accuracy issue by … the maximum model
# length". Only beside the knob's name (`mentions`): a value is too weak a subject
# ("0.4" in a title's "score = 0.4761").
FIX_ACCOUNT = re.compile(
    r"\b(?:fix(?:es|ed|ing)?|resolv(?:es|ed|ing)|address(?:es|ed|ing))\b[^.\n]{0,50}?"
    r"\b(?:issues?|bugs?|problems?|errors?|mismatch(?:es)?)\b", re.I)


def subjects(change: Change) -> list[str]:
    """Names and distinctive values a description sentence may use to explain this knob."""
    setting = change.setting
    subjects = [setting.name, setting.raw]
    subjects += [v for v in (setting.value,) if len(v) >= 3 and any(ch.isdigit() for ch in v)]
    return subjects


# GitHub Actions' own time limit of a job or step. Without one a job may run for the
# platform's maximum of six hours, so setting one (to at most that) caps a hang sooner:
# a new limit, not a raise. (Buildkite's `timeout_in_minutes` is not one of these: an
# organization or pipeline default may be lower than the value added.)
_ACTIONS_LIMIT = "timeout-minutes"
_ACTIONS_DEFAULT = 360
_ACTIONS_PATH_RE = re.compile(
    r"(?:^|/)\.github/(?:workflows|actions)/.*\.ya?ml$|(?:^|/)action\.ya?ml$")


def new_platform_limit(path: str, change: Change) -> bool:
    """A GitHub Actions job or step time limit set where the file had none."""
    new = change.new
    if change.old is not None or new is None or new.name != _ACTIONS_LIMIT:
        return False
    minutes = number(new.value)
    return (minutes is not None and 0 < minutes <= _ACTIONS_DEFAULT
            and _ACTIONS_PATH_RE.search(path) is not None)


def shortened_timeout(change: Change, categories: Categories | None) -> bool:
    old, new = change.old, change.new
    if old is None or new is None or (categories or Categories()).kind(new.name) != "timeout":
        return False
    before, after = number(old.value), number(new.value)
    return before is not None and after is not None and 0 < after < before


def stricter(change: Change, categories: Categories | None) -> bool:
    """A timeout shortened, or (when threshold-loosening reads gates, `categories` given)
    a gate reset far stricter (`tightening`): a check that is too strict fails loudly,
    and gates are threshold-loosening's to judge either way."""
    return shortened_timeout(change, categories) or (
        categories is not None and tightening(change, categories) is not None)


def names_its_failure(text: str, change: Change, categories: Categories | None) -> bool:
    """A timeout whose failure the description says the PR fixes ("fix … startup
    timeouts" for `wait_server_timeout`): the limit is named by what it produces."""
    new = change.new
    return new is not None and (categories or Categories()).kind(new.name) == "timeout" \
        and fixes_limit_failure(text, new.name) is not None
