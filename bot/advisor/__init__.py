"""The LLM advisor: explanations of prior failures and dedup-note drafts (optional).

Deterministic rules decide; a language model may only help a human read the
evidence. `inputs` and `prompt` build the request from quoted, redacted data within a
token budget, `verify` checks and defuses the answer, `advice` renders it, `client` and
`runtime` talk to any OpenAI-compatible server within per-PR and per-day budgets.
Nothing here imports the App or the CLI, and `openai` is imported only when a client
is built.
"""
