"""The files a CI text runs or hands to a program, as opposed to the files it merely names.

A workflow names many paths it never runs: the `paths:` filter of its trigger, the
`files:` list of a changed-files step, a variable holding a file a lint step greps for,
a `hashFiles(...)` cache key. Taking every such word for an invocation made library
modules and training configs "CI scripts" (verl's `verl/trainer/main_ppo.py`, named in
the `paths:` filter of a dozen workflows). A path counts here only where a command line
puts it to use:

- it is the command itself (`tools/lint.sh`, `./ci/run.sh`), after any `VAR=value`
  prefixes, or the value of a YAML key outside a path filter (`script: ci/x.sh`);
- a runner precedes it on the same command (`bash`, `python`, `pytest`, `uv run`,
  `coverage run`, `torchrun`, `sh '…'` in a Jenkinsfile), so every later path of that
  command is its script or argument;
- it follows a config/file option (`--config x.yaml`, `-c x.yaml`, `--config-file=x.yaml`).

Lines continued with a backslash are one command; `&&`, `||`, `;`, `|`, `$(` and
backticks separate commands. Everything is linear in the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Keys whose values are path patterns a trigger or a change filter matches, never runs.
_FILTER_KEYS = ("paths", "paths-ignore", "paths_ignore", "files", "files-ignore", "files_ignore",
                "files_yaml", "files_ignore_yaml", "include-paths", "exclude-paths")
_FILTER_KEY_RE = re.compile(
    rf"^(\s*)(?:-\s+)?[\"']?(?:{'|'.join(map(re.escape, _FILTER_KEYS))})[\"']?\s*:")
# Words that only prefix the command (`sudo`, `time`, control keywords).
_PREFIX_WORDS = frozenset({"sudo", "time", "exec", "env", "then", "do", "else", "!", "nohup"})
# A shell line continued on the next one: one command.
_CONTINUATION_RE = re.compile(r"\\\r?\n")
_RUNNERS = frozenset({
    "bash", "sh", "zsh", "source", ".", "python", "python3", "pytest", "py.test",
    "torchrun", "deepspeed", "accelerate", "uv", "coverage", "srun", "mpirun", "timeout",
    "xargs", "node", "perl", "ruby", "pwsh", "poetry", "pipenv", "hatch", "nox", "bats",
})
# What ends one command and starts the next on a line.
_SEPARATOR_RE = re.compile(r"&&|\|\||[;|`]|\$\(")
# A list marker and a YAML key before the command (`- run: `, `command: `).
_LEAD_RE = re.compile(r"^\s*(?:-\s+)*(?:[\"']?[\w.-]+[\"']?:(?:\s+|$))?")
_ASSIGNMENT_RE = re.compile(r"^[A-Za-z_]\w*=")
_PYTHON_RE = re.compile(r"^python\d[\d.]*$")
_FILE_OPTION_RE = re.compile(r"^--?[\w-]*(?:config|cfg|conf|file|script|recipe|yaml|json)[\w-]*$"
                             r"|^-[cf]$", re.I)
# A path as a CI text writes it: `bash tests/ci/run.sh`, `python -m pytest tests/x.py`.
# Split into tokens first (linear), then keep the path-like ones: a single regex for
# "path ending in .sh" backtracks quadratically on long slash-free runs.
_TOKEN_RE = re.compile(r"[^\s\"'`;|&()<>=,:\[\]{}]+")
_PATH_ENDS = (".sh", ".bash", ".py", ".yaml", ".yml", ".json", ".toml")


def _paths(word: str) -> list[str]:
    return [token.lstrip("./") for token in _TOKEN_RE.findall(word)
            if "/" in token and token.endswith(_PATH_ENDS)]


def _logical_lines(text: str) -> Iterator[str]:
    """Lines with backslash continuations joined and path-filter blocks left out."""
    filter_indent: int | None = None
    for raw in _CONTINUATION_RE.sub(" ", text).splitlines():
        if filter_indent is not None:
            stripped = raw.lstrip()
            indent = len(raw) - len(stripped)
            if not stripped or indent > filter_indent or (
                    indent == filter_indent and stripped.startswith("- ")):
                continue
            filter_indent = None
        match = _FILTER_KEY_RE.match(raw)
        if match:
            filter_indent = len(match.group(1))
            continue
        yield raw


def _is_runner(word: str) -> bool:
    name = word.strip("\"'").rsplit("/", 1)[-1]
    return name in _RUNNERS or _PYTHON_RE.match(name) is not None


def _command_paths(command: str) -> Iterator[str]:
    words = command[_LEAD_RE.match(command).end():].split()  # type: ignore[union-attr]
    start = 0
    while start < len(words) and (_ASSIGNMENT_RE.match(words[start])
                                  or words[start] in _PREFIX_WORDS):
        start += 1
    run = False
    previous = ""
    for index in range(start, len(words)):
        word = words[index]
        option, _, value = word.partition("=")
        if run or index == start or _FILE_OPTION_RE.match(previous.strip("\"'")):
            yield from _paths(word)
        elif value and _FILE_OPTION_RE.match(option):
            yield from _paths(value)
        run = run or _is_runner(word)
        previous = word


def invoked_paths(text: str) -> Iterator[str]:
    """Repo-relative-looking paths `text` runs or passes to a program (see the docstring)."""
    for line in _logical_lines(text):
        for command in _SEPARATOR_RE.split(line):
            yield from _command_paths(command)
