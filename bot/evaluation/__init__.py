"""Measuring the rules and the log extractor against labeled real-world corpora.

`corpus` reads the cases, `score` is pure (cases + findings in, counts out),
`report` renders the tables; `bot/cli/eval.py` is the edge that reads files.
"""
