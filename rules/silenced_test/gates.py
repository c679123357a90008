"""What a silencing-looking marker really does: gate on a capability, rerun nothing, or
silence; and whether a silencing is tracked.

A skip that says what the test needs ("requires CUDA", `skip_if_rocm`, "Need GPU",
`skipif(not torch.cuda.is_available())`) keeps the test running wherever it can run:
it is a capability gate, not a hidden failure, unless its reason says the test fails.
`flaky(reruns=0)` turns retries off. An existing skip reworded into `skipif(True, …)` or
from one excluded version to a whole range silences more than it did.
"""

from __future__ import annotations

import re
from itertools import islice

from rules.analysis.prtext import issue_link
from rules.silenced_test.backends import platforms_named
from rules.silenced_test.kept_markers import test_below
from rules.silenced_test.line_structure import KnownLines, SilencingView

# Words that say a test needs hardware, a platform or a dependency the runner may lack.
_CAPABILITY_RE = re.compile(
    r"\b(?:rocm|hip|cuda|gpus?|npus?|tpus?|xpus?|hpus?|mps|multi[- ]?gpu|device_count|"
    r"devices?|sm_?\d{2,3}|compute capability|hopper|blackwell|ampere|a100|h100|h200|b200|"
    r"mi\d{3}\w*|is_available|available|installed|platform|darwin|windows|win32|macos|"
    r"linux|aarch64|arm64|x86(?:_64)?|requires?|requirements?|need(?:s|ed)?|not supported|"
    r"unsupported|only (?:on|for|with|runs|supported|available)|find_spec|importorskip)\b"
    r"|\b(?:skip|require)s?_(?:if_)?(?:no_?|not_?|non_?)?(?:rocm|hip|cuda|gpu|npu|tpu|xpu|hpu|mps|"
    r"cpu|sm\d+|torch|triton|transformers|windows|mac|linux|arch|platform|\w*device\w*|"
    r"multi_?gpu|\d+_?gpus?|\w+_available)\b"
    r"|\bhas_\w+|\bis_\w+_available\b|\bis_(?:rocm|hip|cuda|npu|xpu|hpu|tpu|cpu)\w*"
    # A repository's own requirement helper names what the test needs: a dtype, a
    # library, a feature (`@require_fp16`, `@requires_deepspeed`, `skip_unless_fp8`).
    r"|(?<![\w.])@?(?:[\w]+\.)?(?:requires?|skip_?unless|skip_if_no|skip_if_not)_\w+"
    r"|\b(?:fp16|bf16|fp8|fp4|int8|int4|float16|bfloat16|half precision|tf32|nvfp4|mxfp\d)\b",
    re.I,
)
# What a requirement helper requires (`require_fp16` → `fp16`): a PR sentence that
# names it, or the test, says this gate is about a failure.
_REQUIRED_RE = re.compile(r"(?:requires?|skip_?unless|skip_if_not?)_(\w+)")
_ZERO_RERUNS_RE = re.compile(
    r"\b(?:reruns|retries|max_retries|times|tries_remaining)\s*=\s*0\b|\bmax_runs\s*=\s*1\b"
)
_UNCONDITIONAL_RE = re.compile(r"\bskip(?:if|_if|If)?\s*\(\s*(?:True|1|[\"']True[\"'])\s*[,)]")
_VERSION_OP_RE = re.compile(r"(?<![<>=!])(==|!=|<=|>=|<|>)\s*[\"']?v?\d")
_VERSION_IS_RE = re.compile(r"version_is\w*\s*\(|\bversion\w*\s*(?:==|!=)")
# Jira-style keys (`SW-241408`, `ABC-1234`): the internal tracker of many repositories.
_TRACKER_KEY_RE = re.compile(r"(?<![\w./-])(?P<project>[A-Z][A-Z_]{1,9})-\d{2,7}(?![\w-])")
# A PR or issue named by its number without a bare `#`, the way some repositories write
# them ("PR30684", "PR-1311", "PR#1311", "PR's: 30627, 31036", "issue 4521"): the word right
# before a number of at least two digits that is no version or count ("PR 2 of", "v0.10",
# "issues: 12 tests").
_NUMBERED_REF_RE = re.compile(
    r"(?<![\w-])(?:PRs?|PR's|pull requests?|issues?)(?:\s*(?:no\.|number|:)|[-_#])?\s*"
    r"(?P<number>\d{2,7})(?![\w%]|\.\d)(?!\s*(?:x\b|of\b|out of\b|more\b|tests?\b|cases?\b|"
    r"times\b|failures?\b|errors?\b|[gnt]pus?\b|nodes?\b|cards?\b|devices?\b|runs?\b|"
    r"steps?\b|tokens?\b|samples?\b|models?\b|files?\b|lines?\b|(?:milli)?seconds?\b|"
    r"minutes?\b|hours?\b|days?\b))",
    re.I,
)
# The number first, "PR" right after it ("waiting for 1311pr to merge", "1311-PR", "the
# 1311 PR"): at least three digits, one "PR" (a plural is a count: "120 PRs"), and not a
# year when a space parts them ("2024 PR roadmap"). A number alone is never a reference.
_NUMBER_FIRST_REF_RE = re.compile(
    r"(?<![\w.#/-])(?:(?P<glued>\d{3,7})[-_]?|(?!(?:19|20)\d\d\b)(?P<spaced>\d{3,7})\s)"
    r"(?:PR|pull request)(?![\w'’-])",
    re.I,
)
# Upper-case words followed by a number that are not tracker projects.
_NOT_PROJECTS = frozenset({
    "CUDA", "ROCM", "HIP", "SM", "CVE", "UTF", "ISO", "GPT", "LLAMA", "FP", "BF", "INT",
    "UINT", "CANN", "PY", "TP", "DP", "PP", "EP", "CP", "SP", "RFC", "PEP", "MI", "NCCL",
    "HCCL", "RCCL", "GCC", "CLANG", "LLVM", "API", "V", "VLLM", "SGLANG", "JAX", "XLA",
})


def tracked(text: str) -> str | None:
    """An issue link, `#N`, a PR or issue named by number (`PR 30627`, `1311pr`), or
    tracker key (`SW-241408`) in a line or comment."""
    if link := issue_link(text):
        return link
    if numbered := _NUMBERED_REF_RE.search(text[:20_000]) or \
            _NUMBER_FIRST_REF_RE.search(text[:20_000]):
        return numbered.group(0)
    for match in _TRACKER_KEY_RE.finditer(text[:20_000]):
        if match.group("project") not in _NOT_PROJECTS:
            return match.group(0)
    return None


def call_text(view: KnownLines, n: int, text: str) -> str:
    """The marker call starting on line n, across continuation lines (≤ 8, balanced)."""
    parts, depth = [text], text.count("(") - text.count(")")
    for m in range(n + 1, n + 8):
        if depth <= 0:
            break
        line = view.get(m)
        if line is None:
            break
        parts.append(line)
        depth += line.count("(") - line.count(")")
    return " ".join(parts)


def zero_reruns(call: str) -> bool:
    return _ZERO_RERUNS_RE.search(call) is not None


def unconditional(call: str) -> bool:
    """`skipif(True, …)`: an unconditional skip dressed as a condition."""
    return _UNCONDITIONAL_RE.search(call) is not None


def capability_gate(call: str, silence_reason: re.Pattern[str]) -> bool:
    """A skip that names what the test needs and does not say that the test fails."""
    return (not unconditional(call) and silence_reason.search(call) is None
            and _CAPABILITY_RE.search(call) is not None)


def kept_gate(view: SilencingView, n: int, call: str, silence_reason: re.Pattern[str]) -> bool:
    """A capability gate that silences nothing: it keeps the test off a backend this PR
    adds (it never ran there), or the PR says nothing of failures about this gate."""
    if not capability_gate(call, silence_reason):
        return False
    platforms = platforms_named(call)
    return bool(platforms & view.backends) or not view.failing.about(
        [*platforms, *_REQUIRED_RE.findall(call), test_below(view, n)])


def widened(old: str, new: str) -> bool:
    """An existing version gate that went from one version (`== X`, `!= X`,
    `version_is(X)`) to a range (`>= Y`, `< Y`): it now skips every version on one side."""
    old_ops = {m.group(1) for m in islice(_VERSION_OP_RE.finditer(old), 8)}
    new_ops = {m.group(1) for m in islice(_VERSION_OP_RE.finditer(new), 8)}
    pinpoint = (bool(old_ops) and old_ops <= {"==", "!="}) or (
        not old_ops and _VERSION_IS_RE.search(old) is not None)
    return pinpoint and bool(new_ops - {"==", "!="})
