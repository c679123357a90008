"""Analyses shared by two or more rules, by topic; each package's `__init__` is its API.

- `lines`: the known head lines of a file, a hunk's two sides, `#` comments on a line.
- `yamlscan`: the YAML line scanner and the per-file scanned view.
- `knobs`: knob names, values, settings, changes, categories, loosening, rationale.
- `intent`: CI-fix intent of a PR (title, squash subjects, description, labels).
- `prtext`: the PR description: failure evidence, references, reasons.
- `siblings`: base-revision texts of a file's siblings (the repository's conventions).
- `literals`: whether a text holds any of a set of words, in one pass.
- `model_identity`: whether a one-model config now configures another model (a new config).

`memo.memoized` keeps what these compute per hunk or file with the snapshot. An
analysis only one rule needs lives in that rule's package instead.
"""
