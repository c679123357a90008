"""A command quoted in a finding, clipped to a readable length on a word boundary.

Cutting at a fixed width turns `…/test_x.py::test_models_distributed_DeepSeek` into
`…::test_model`, a test id that names a different test (or none). So the clip keeps a
token that ends soon after the limit whole, and otherwise cuts back to the last space,
`::` or `/` before it, marking the cut with `…`.
"""

from __future__ import annotations

LIMIT = 80  # characters of a quoted command
_SLACK = 40  # a token that ends this soon after the limit is kept whole
_BREAKS = (" ", "::", "/", ",")


def clip(code: str, limit: int = LIMIT) -> str:
    """`code` whole when it fits, else cut on a boundary with `…` after it."""
    if len(code) <= limit:
        return code
    end = next((i for i in range(limit, min(len(code), limit + _SLACK)) if code[i].isspace()),
               None)
    if end is not None:
        return code[:end].rstrip() + "…"  # the token at the limit, whole
    if len(code) <= limit + _SLACK:
        return code  # the last token ends soon after the limit: the whole command
    cut = max(code.rfind(b, 0, limit) + (len(b) if b != " " else 0) for b in _BREAKS)
    return (code[:cut] if cut > limit // 2 else code[:limit]).rstrip() + "…"
