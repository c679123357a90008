"""The review engine: snapshot + config in, report out. Pure: no I/O, no clock."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from bot.core.config import Config
from bot.core.findings import Finding, Severity
from bot.core.globs import glob_match
from bot.core.limits import DEFAULT_LIMITS as DEFAULT_LIMITS  # re-exported
from bot.core.limits import ReviewLimits as ReviewLimits  # re-exported
from bot.core.limits import cap_notice as cap_notice  # re-exported
from bot.core.limits import file_size as file_size  # re-exported
from bot.core.report import FileError, Report, Suppressed, Waiver
from bot.core.rule import Rule, RuleContext
from bot.core.snapshot import PullRequestSnapshot
from bot.core.suppressions import Suppression, collect
from bot.core.surfaces import classify_files, surface_table

SUPPRESSION_RULE = "suppression"
_SPACE_RE = re.compile(r"\s+")


def limit_snapshot(snapshot: PullRequestSnapshot, limits: ReviewLimits
                   ) -> PullRequestSnapshot:
    """The classified snapshot cut to `limits`, with a notice naming what was skipped."""
    ordered = sorted(range(len(snapshot.files)),
                     key=lambda i: (snapshot.files[i].surface is None, i))
    kept: set[int] = set()
    skipped: list[str] = list(snapshot.capped)
    total = 0
    for i in ordered:
        changed = snapshot.files[i]
        size = file_size(changed)
        if len(kept) < limits.max_files and total + size <= limits.max_bytes:
            kept.add(i)
            total += size
        else:
            skipped.append(changed.path)
    if not skipped:
        return snapshot
    return dataclasses.replace(
        snapshot, files=tuple(f for i, f in enumerate(snapshot.files) if i in kept),
        capped=(), notices=(*snapshot.notices, (None, cap_notice(limits, skipped))))


def classify_snapshot(snapshot: PullRequestSnapshot, config: Config) -> PullRequestSnapshot:
    table = surface_table(config.surfaces)
    surfaces = classify_files(snapshot.files, table, snapshot.repo_view)
    files = tuple(
        dataclasses.replace(f, surface=s) for f, s in zip(snapshot.files, surfaces, strict=True)
    )
    return dataclasses.replace(snapshot, files=files)


def _run_rule(rule: Rule, ctx: RuleContext) -> list[Finding]:
    try:
        return list(rule.check(ctx))
    except Exception as exc:  # a broken rule must not take the review down with it
        return [Finding(
            rule=rule.id,
            severity=Severity.NOTICE,
            message=(f"Rule `{rule.id}` failed on this pull request "
                     f"({type(exc).__name__}: {str(exc)[:200]}); the other rules still ran."),
            key=f"crash:{type(exc).__name__}",
        )]


def _options(rule: Rule, config: Config) -> dict[str, object]:
    merged = dict(rule.options)
    merged.update(config.settings(rule.id).options)
    return merged


def _with_fingerprints(findings: Iterable[Finding], snapshot: PullRequestSnapshot) -> list[Finding]:
    by_path = {f.path: f for f in snapshot.files}
    seen: Counter[str] = Counter()
    out: list[Finding] = []
    for finding in findings:
        key = finding.key
        if not key and finding.path is not None and finding.line is not None:
            changed = by_path.get(finding.path)
            key = (changed.head_line(finding.line) if changed else None) or ""
        if not key:
            key = finding.message
        base = "\0".join((finding.rule, finding.path or "", _SPACE_RE.sub(" ", key).strip()))
        seen[base] += 1
        if seen[base] > 1:
            base += f"\0{seen[base]}"
        digest = hashlib.sha256(base.encode("utf-8", "replace")).hexdigest()[:16]
        out.append(dataclasses.replace(finding, fingerprint=digest))
    return out


def _suppression_notices(
    suppressions: Sequence[Suppression], used: set[Suppression], known: set[str]
) -> list[Finding]:
    notices: list[Finding] = []
    for sup in suppressions:
        if not sup.added:
            continue
        def notice(message: str, sup: Suppression = sup) -> Finding:
            return Finding(SUPPRESSION_RULE, Severity.NOTICE, message, sup.path, sup.line,
                           key=f"{message}|{','.join(sup.rules)}")
        unknown = [r for r in sup.rules if r not in known]
        if unknown:
            notices.append(notice(
                f"Suppression names unknown rule(s) {', '.join(unknown)}; "
                "`ci-stability rules` lists the valid ids."
            ))
        if not sup.reason:
            notices.append(notice(
                "Suppression has no reason: write why after the bracket, e.g. "
                f"`# ci-stability: ignore[{sup.rules[0] if sup.rules else 'rule-id'}] "
                "tracked in #1234`."
            ))
        elif sup not in used and not unknown:
            notices.append(notice(
                f"Unused suppression for {', '.join(sup.rules)}: nothing here is flagged any "
                "more, so the comment can go."
            ))
    return notices


def review(
    snapshot: PullRequestSnapshot,
    config: Config,
    rules: Sequence[Rule],
    waivers: Sequence[Waiver] = (),
    limits: ReviewLimits = DEFAULT_LIMITS,
) -> Report:
    files_total = len(snapshot.files) + len(snapshot.capped)
    snapshot = limit_snapshot(classify_snapshot(snapshot, config), limits)
    errors = [FileError(path, message) for path, message in snapshot.notices]
    errors += [FileError(f.path, f.patch_error) for f in snapshot.files if f.patch_error]
    in_scope_files = sum(1 for f in snapshot.files if f.surface is not None)
    base = Report(
        findings=(), errors=tuple(errors), in_scope=in_scope_files > 0,
        repo=snapshot.repo, number=snapshot.number, title=snapshot.title,
        head_sha=snapshot.head_sha, fail_on=config.fail_on,
        files_total=files_total, files_in_scope=in_scope_files,
        anchor_path=next((f.path for f in snapshot.files
                          if f.surface is not None and f.status != "removed"), None),
    )
    if not in_scope_files:
        return base

    raw: list[Finding] = []
    ran: list[str] = []
    for rule in rules:
        settings = config.settings(rule.id)
        if not settings.enabled:
            continue
        ran.append(rule.id)
        ctx = RuleContext(snapshot, config, rule.id, _options(rule, config))
        for finding in _run_rule(rule, ctx):
            if finding.confidence < config.min_confidence:
                continue
            if settings.severity is not None and finding.rule == rule.id:
                finding = dataclasses.replace(finding, severity=settings.severity)
            raw.append(finding)

    suppressions = collect(snapshot)
    used: set[Suppression] = set()
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    for finding in _with_fingerprints(sorted(raw, key=Finding.sort_key), snapshot):
        inline = next((s for s in suppressions
                       if s.covers(finding.rule, finding.path, finding.line)), None)
        ignore = next((i for i in config.ignores if i.rule == finding.rule and (
            finding.path is None or any(glob_match(p, finding.path) for p in i.paths))), None)
        waiver = next((w for w in waivers if w.covers(finding)), None)
        if inline is not None:
            used.add(inline)
            suppressed.append(Suppressed(finding, inline.reason, "inline"))
        elif ignore is not None:
            suppressed.append(Suppressed(finding, ignore.reason, "config"))
        elif waiver is not None:
            suppressed.append(Suppressed(finding, waiver.reason, "waiver", waiver.by))
        else:
            kept.append(finding)
    known = {rule.id for rule in rules}
    kept += _with_fingerprints(_suppression_notices(suppressions, used, known), snapshot)
    return dataclasses.replace(
        base,
        findings=tuple(sorted(kept, key=Finding.sort_key)),
        suppressed=tuple(suppressed),
        rules_run=tuple(ran),
    )
