"""block-scalar-comment: a `#` "comment" inside a YAML block scalar that is really content."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile
from rules.analysis.yamlscan import ITEM, BlockScalar, YamlView, indent_of, is_yaml, view
from rules.base import Rule, RuleContext

# Keys whose scalar is a shell script: a literal (`|`) script keeps its newlines, so
# `#` lines there are real shell comments.
_SHELL_KEYS = frozenset({
    "run", "script", "scripts", "command", "commands", "cmd", "entrypoint",
    "before_script", "after_script", "pre-command", "post-command", "shell",
})
_SNIPPET = 60


def _norm(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def comment_start(text: str, quote: str = "") -> tuple[int, str]:
    """(index of a comment-like `#` or -1, quote state at the end of the line).

    `#` counts when it is outside quotes, at the start of the text or after
    whitespace, and reads as a comment: followed by a space or the end of the line,
    a whole-line `#word`, or two spaces before it. `#123` after a word is an issue
    reference, and `http://x/#frag`, `'a#b'`, `$#` are not comments at all.
    """
    i = 0
    n = len(text)
    first = len(text) - len(text.lstrip())
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "\\":
            i += 2
            continue
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            nxt = text[i + 1] if i + 1 < n else " "
            heading = i == first and nxt == "#"  # `## Title`: markdown prose, not a comment
            if not heading and (nxt in " \t" or (i == first and not nxt.isdigit())
                                or text[max(0, i - 2):i] == "  "):
                return i, quote
        i += 1
    return -1, quote


class BlockScalarComment(Rule):
    """A `#` "comment" inside a folded (or argument) block scalar is part of the value.

    Why it destabilizes CI
    ----------------------
    YAML has no comments inside block scalars: a `#` line there is content. In a folded
    scalar (`>`, `>-`, `>+`) the lines are joined with spaces, so a "comment" added
    next to one server flag swallows every flag after it once a shell sees the joined
    line, or reaches the server as stray arguments (`#`, `保留`, …) that make it refuse
    to start. vLLM's GSM8K eval configs pass `server_args: >-` to `vllm serve`, and an
    excerpt of the GLM-5.2 PCP config carried exactly this:
    `--max-num-batched-tokens 32768  # 保留 32K 批大小…` inside `server_args: >-`.
    Buildkite `commands: - >-` blocks fold the same way. The failure surfaces far from
    the edit (a server-start timeout or a silently shorter command).

    Flags
    -----
    ```yaml
    server_args: >-
      --max-model-len 4096
      --max-num-batched-tokens 32768  # keep 32K to cover the large-batch path
      --kv-cache-dtype fp8
    ```
    Also `#` lines in literal (`|`) scalars under argument keys (option `arg_keys`:
    `server_args`, `args`, `extra_args`, …). Literal shell scripts (`run: |`,
    `script: |`, `command: |`) and action `with:` inputs are never flagged.

    Prefer
    ------
    ```yaml
    # keep 32K to cover the large-batch path
    server_args: >-
      --max-model-len 4096
      --max-num-batched-tokens 32768
      --kv-cache-dtype fp8
    ```
    """

    id = "block-scalar-comment"
    severity = Severity.ERROR
    options: ClassVar[Mapping[str, Any]] = {
        "arg_keys": (
            "server_args", "server-args", "args", "extra_args", "extra-args",
            "engine_args", "engine-args", "extra_server_args", "server_flags",
            "model_args", "launch_args", "cli_args",
        ),
    }

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        arg_keys = frozenset(_norm(k) for k in ctx.option("arg_keys"))
        for changed in ctx.files():
            if not is_yaml(changed.path):
                continue
            # Only an added line with a `#` can be flagged: most files skip the YAML scan.
            if "#" not in changed.added_text:
                continue
            yield from self._check_file(changed, arg_keys)

    def _check_file(self, changed: ChangedFile, arg_keys: frozenset[str]) -> Iterator[Finding]:
        scanned = view(changed)
        comments: dict[int, dict[int, int]] = {}  # block key line → {line: `#` index}
        joined: dict[int, dict[int, int]] = {}  # block key line → {line: lines folded onto it}
        for added in changed.added_lines:
            if added.new_no is None or "#" not in added.text:
                continue
            line = scanned.get(added.new_no)
            if line is None or line.block is None:
                continue
            scalar = line.block
            key = _effective_key(scalar)
            is_args = _norm(key) in arg_keys
            if not scalar.folded and (not is_args or "with" in scalar.path[:-1]):
                continue
            cache_key = scalar.key_line or -scalar.first
            if cache_key not in comments:
                comments[cache_key] = _block_comments(scanned, scalar)
            at = comments[cache_key].get(added.new_no, -1)
            if at < 0:
                continue
            if scalar.folded and cache_key not in joined:
                joined[cache_key] = _joined_counts(scanned, scalar)
            count = joined[cache_key].get(added.new_no, 0) if scalar.folded else 0
            yield self._finding(changed, scalar, added.new_no, line.text, at, is_args,
                                _norm(key) in _SHELL_KEYS, count)

    def _finding(self, changed: ChangedFile, scalar: BlockScalar, number: int, text: str,
                 at: int, is_args: bool, is_shell: bool, joined: int) -> Finding:
        comment = text[at:].strip()
        snippet = comment if len(comment) <= _SNIPPET else comment[: _SNIPPET - 1] + "…"
        code = text[:at].rstrip()
        where = f"`{scalar.header}`" + (f" (line {scalar.key_line})" if scalar.key_line else "")
        target = f"`{scalar.key}:`" if scalar.key else f"`{scalar.header}`"
        above = f"above {target}" + (f" (line {scalar.key_line})" if scalar.key_line else "")
        if scalar.folded:
            if is_args:
                what = (f"`{snippet}` is not a YAML comment: inside the folded scalar {where} "
                        "it becomes part of the arguments")
                if joined:
                    what += (f", and folding joins the next {joined} line(s) onto it, so a "
                             "shell would drop them as part of the comment")
            elif is_shell and joined:
                what = (f"`{snippet}` is not a YAML comment: folding joins the lines of {where}, "
                        f"so this `#` comments out the next {joined} folded line(s) of the "
                        "command")
            else:
                what = (f"`{snippet}` is not a YAML comment: inside the folded scalar {where} "
                        "it is part of the value")
        else:
            what = (f"`{snippet}` is not a YAML comment: inside the literal scalar {where} it is "
                    "part of the value passed on as arguments")
        message = f"{what}. Move the comment {above}."
        suggestion = code if code.strip() else None
        return self.finding(
            message, file=changed, line=number, suggestion=suggestion,
            key=f"{scalar.header}|{comment}",
        )


def _effective_key(scalar: BlockScalar) -> str:
    if scalar.key:
        return scalar.key
    path = scalar.path
    if len(path) >= 2 and path[-1] == ITEM:
        return path[-2]
    return ""


def _block_comments(scanned: YamlView, scalar: BlockScalar) -> dict[int, int]:
    """Comment-like `#` positions in a block's content, quote state carried across lines."""
    found: dict[int, int] = {}
    quote = ""
    for number in range(scalar.first, scalar.last + 1):
        line = scanned.get(number)
        if line is None or line.block is not scalar:
            quote = ""  # a gap in a partial view: start afresh
            continue
        at, quote = comment_start(line.text, quote)
        if at >= 0:
            found[number] = at
            quote = ""  # the rest of the line is the "comment"
    return found


def _joined_counts(scanned: YamlView, scalar: BlockScalar) -> dict[int, int]:
    """For each content line, how many following lines folding joins onto it.

    Folding joins a line to the next when both sit at the content indentation and no
    blank line separates them; computed backwards in one pass.
    """
    counts: dict[int, int] = {}
    following = 0
    next_joins = False  # the line after the current one can be joined onto it
    for number in range(scalar.last, scalar.first - 1, -1):
        line = scanned.get(number)
        plain = (line is not None and line.block is scalar and bool(line.text.strip())
                 and indent_of(line.text) == scalar.content_indent
                 and line.text[scalar.content_indent:][:1] not in (" ", "\t"))
        counts[number] = following if plain and next_joins else 0
        following = counts[number] + 1 if plain else 0
        next_joins = plain
    return counts
