"""The CLI's exit codes, in a module of their own so `ci-stability` starts without the rules.

`bot.cli.common` imports the rule registry (half a second); the entry point only
needs these numbers, and `ci-stability logs extract` on a small log should not pay
for rules it never runs.
"""

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
