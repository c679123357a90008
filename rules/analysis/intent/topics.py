"""Subjects of CI work that are not CI-stability fixes, even under a `fix` verb or `[CI]` tag.

"fix(ci): correct the path filter" repairs when a job runs, not a red job; "[CI] fix the
nightly report's data count" repairs bookkeeping. Each topic is a class of CI work seen
on real repositories: capacity, triggers, logging, reports and dashboards, schedules, speed,
automatic updates, security scanners and tokens, repository bots, docs. (A failing
release or deployment workflow is a red job like any other.)
"""

from __future__ import annotations

import re

# Topics about what CI reports or automates: a failure word there is the content of
# the report ("banner on pass/fail"), so only a stability word overrides them.
_META = {
    "logging": r"\blog(?:s|ging)?\b|\bverbose\b|\bprint(?:s|ing)?\b|\bbanners?\b|"
               r"\bstep summary\b|\bdebug (?:output|info)\b|\bsurfac\w+ (?:\w+ )?info\b|"
               r"\btruncat\w*",
    "report": r"\breports?\b|\breporting\b|\bdashboards?\b|\bsummar(?:y|ies|i[sz]e)\b|\bplots?\b|"
              r"\bcharts?\b|\bcsv\b|\bleaderboards?\b|\bbadges?\b|\bnotif\w+|\bslack\b|"
              r"\be-?mails?\b(?!@)|\b(?:data|result|record|row)\s+counts?\b|\bcoverage report\b|"
              r"\bupload(?:s|ing)? (?:\w+ )?(?:results?|metrics|artifacts?)\b",
    # Tooling that analyses failures: "[CI] Failure analyze for …", "add a failure triage bot".
    "failure analysis": r"\bfailures? (?:analy[sz]\w*|triage|classif\w*|categori[sz]\w*|"
                        r"attribution|statistics|stats|tracker|tracking)\b|"
                        r"\banaly[sz](?:e|es|er|ing|is)\b (?:[\w.-]+ ){0,3}failures?\b",
    "schedule": r"\bcron\b|\bschedul(?:e|es|ed|ing)\b|\bschedulable\b|\btime ?zone\b|"
                r"\b(?:daily|weekly) (?:run|trigger|time)\b",
    "auto-update": r"\blkg\b|\bauto-?updat\w*|\bdependabot\b|\brenovate\b|\bmain2main\b|"
                   r"\bupdate (?:\w+ )?(?:commit|hash|sha)\b|"
                   r"\bbump\w* (?:the )?(?:version|deps?)\b",
    "security": r"\bscorecard\b|\bcodeql\b|\bzizmor\b|\bsarif\b|\bpermissions\b(?! error)|"
                r"\btokens?\b|\bsecrets?\b|\bsha-?pin\w*|"
                r"\bpin\w* (?:[\w/.@-]+ ){1,3}to (?:a )?(?:full )?(?:commit|sha)\b|"
                r"\bleast[- ]privilege\b|\bharden\w*|\bsecurity\b|\bvulnerab\w*|\bcves?\b|"
                r"\bbandit\b|\btrivy\b|\bgitleaks\b|\bsso\b|\bexposure\b",
    "bot": r"\bbots?\b|\blabel(?:s|er|ing)?\b|\bauto-?clos\w*|\bstale\b|\bassign\w*|"
           r"\bcodeowners\b|\bpr[- ]title\b|\bdco\b|\bmergify\b|\bwelcome\b|\bcode freeze\b",
    # Making CI faster or cheaper: "10 steps -> 3 to speed up CI", "reduce runtime".
    "speed": r"\bspeed(?:s|ing)? up\b|\bfaster\b|\b(?:reduce|cut|shorten)\w* (?:the )?"
             r"(?:ci |test |job )?(?:run ?time|duration|wall ?time|cost)\b",
    # Not "comment out the failing tests": that silences them.
    "docs": r"\btypos?\b|\bdocs?\b|\bdocumentation\b|\breadme\b|\bdocstrings?\b|\bspelling\b|"
            r"\bgrammar\b|\bcomments?\b(?![- ]out\b)|\bdescription strings?\b|\blink ?check\w*|"
            r"\blinkspector\b",
}
# Topics about where and when jobs run: a named failure ("jobs fail on the old
# runners") makes them a fix again.
_INFRA = {
    "trigger": r"\btrigger\w*|\bon forks?\b|\bfrom forks?\b|\bpath[- ]?filters?\b|"
               r"\bpaths-ignore\b|\bchanged files\b|\bonly (?:run|check)\w*|\bif_changed\b|"
               r"\bconcurrency(?: group)?\b|\bready[- ]label\b|\b(?:skip|run) ci\b|"
               r"\bexclud\w+ .{0,40}\bfrom\b",
    # Not vLLM's "model runner" (a worker class): "adapt the model runner to upstream".
    "capacity": r"(?<!model )(?<!model_)\brunners?\b|\bmachines?\b|\bcapacity\b|\bclusters?\b|"
                r"\bnodes? pool\b|"
                r"\bself-hosted\b|\bhost network\b|\bmore (?:gpus|nodes|workers)\b",
}
_META_RE = {name: re.compile(p, re.I) for name, p in _META.items()}
_INFRA_RE = {name: re.compile(p, re.I) for name, p in _INFRA.items()}


def meta_topic(text: str) -> str | None:
    """A reporting/automation topic of the text, or None."""
    return next((name for name, rx in _META_RE.items() if rx.search(text)), None)


def infra_topic(text: str) -> str | None:
    """A trigger/capacity topic of the text, or None."""
    return next((name for name, rx in _INFRA_RE.items() if rx.search(text)), None)
