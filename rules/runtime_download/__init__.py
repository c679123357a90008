"""runtime-download: tests and CI jobs that fetch data over the network with no cache."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from bot.core.findings import Confidence, Finding, Severity
from bot.core.repo_view import RepoView
from bot.core.snapshot import ChangedFile, PullRequestSnapshot
from rules.analysis.lines import known_lines
from rules.analysis.literals import any_of
from rules.analysis.yamlscan import ITEM, YamlLine, YamlView, is_yaml, view
from rules.base import Rule, RuleContext
from rules.runtime_download.callers import callers_mitigate
from rules.runtime_download.detect import (
    DATA_KEY_RE,
    FETCH_WORDS,
    SHELL_SUFFIXES,
    URL_RE,
    Fetch,
    clip,
    detect,
    external,
    mitigates,
    tolerated,
)
from rules.runtime_download.novelty import (
    Nearby,
    fetched_at_base,
    nearby_convention,
    nearby_texts,
    normalized,
    removed_in_pr,
    sibling_convention,
)

_SURFACES = ("test", "cpu-test", "workflow", "ci-script", "eval-config")

_ANY_FETCH_WORD = any_of(FETCH_WORDS)  # asked of every file's added text
_MAX_CONTINUED = 12  # `\`-continued lines of one command read for its fallback


class RuntimeDownload(Rule):
    """Data fetched over the network at run time needs a cache or an offline setting.

    Why it destabilizes CI
    ----------------------
    A test or job that downloads its data on every run fails whenever the host is
    slow, rate-limits or changes its URL, for reasons unrelated to the change under
    test. SGLang's Xeon CI broke this way: the offline MMLU eval fetched `data.tar` from
    people.eecs.berkeley.edu, which began answering HTTP 403, and every GNR run failed
    until the job mounted `~/.cache/sgl_eval` into the container so the data came from
    the host's cache. The same applies to Hugging Face datasets and snapshots, `torch.hub`
    and `curl`/`wget` of tarballs.

    Flags
    -----
    ```yaml
    - name: Run MMLU
      run: |
        wget https://people.eecs.berkeley.edu/~hendrycks/data.tar
        python3 run_eval.py --eval-name mmlu
    ```
    (also `urllib.request.urlopen("https://…")`, `requests.get("https://…")`,
    `datasets.load_dataset("…")`, `hf_hub_download`, `snapshot_download`,
    `huggingface-cli download`, `torch.hub.load`, `git clone` of data, `pip download`)
    with no cache or offline setting in the same job or test. Not when the command
    itself tolerates the failure (`gsutil cp … || echo "Warning: …"`, `wget … || true`):
    then the host's refusal cannot fail the job. Nor when it fetches a tool, not data: an
    install script (`.sh`, `.bash`), a package or release binary, or a download run straight
    into a shell (`curl … | bash`, `bash <(curl …/download-actionlint.bash)`).

    Prefer
    ------
    ```yaml
    - name: Run MMLU
      run: |
        docker run -v $HOME/.cache/sgl_eval:/root/.cache/sgl_eval ... \\
          python3 run_eval.py --eval-name mmlu
    ```
    or `actions/cache`, `HF_HOME` on a persistent disk, `cache_dir=`, or a pre-fetched
    cache with `HF_HUB_OFFLINE=1` / `HF_DATASETS_OFFLINE=1`.
    """

    id = "runtime-download"
    severity = Severity.NOTICE

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        removed: frozenset[str] | None = None
        for changed in ctx.files(*_SURFACES):
            if changed.path.lower().endswith((".md", ".txt", ".rst")):
                continue
            # A fetch is only looked for on added lines naming one of these words.
            if _ANY_FETCH_WORD(changed.added_text):
                if removed is None:
                    removed = removed_in_pr(ctx.snapshot)
                yield from _FileCheck(self, changed, removed, ctx.snapshot.repo_view,
                                      ctx.snapshot).run()


class _FileCheck:
    def __init__(self, rule: RuntimeDownload, changed: ChangedFile,
                 removed: frozenset[str] = frozenset(), repo: RepoView | None = None,
                 snapshot: PullRequestSnapshot | None = None) -> None:
        self.rule, self.changed = rule, changed
        self.removed, self.repo, self.snapshot = removed, repo, snapshot
        self._callers_mitigate: bool | None = None
        self._nearby: tuple[Nearby] | None = None  # walked once, on the first need
        self.python = changed.path.endswith(".py")
        self.workflow = is_yaml(changed.path) and changed.surface in ("workflow", "ci-config")
        self._groups: dict[object, list[int]] | None = None
        self._owner: dict[int, object] = {}
        self._shared: list[int] = []  # lines every group sees (top-level env, module code)
        self._mitigated: dict[object, bool] = {}

    def detect(self, text: str) -> Fetch | None:
        return detect(text, self.python)

    def lines(self) -> Mapping[int, str]:
        return known_lines(self.changed)

    def groups(self) -> dict[object, list[int]]:
        """Lines by job/step (workflows) or top-level block (Python), built once."""
        if self._groups is None:
            self._groups = {}
            if self.workflow:
                self._group_yaml(view(self.changed))
            elif self.python:
                self._group_python(self.lines())
        return self._groups

    def _group_yaml(self, scanned: YamlView) -> None:
        assert self._groups is not None
        for line in scanned:
            if line.path[:1] == ("env",) or (line.key == "env" and not line.path):
                self._shared.append(line.number)
            anchor = _job_anchor(line)
            if anchor is not None:
                self._groups.setdefault(("job", anchor[1]), []).append(line.number)
                self._owner[line.number] = ("job", anchor[1])

    def _group_python(self, lines: Mapping[int, str]) -> None:
        assert self._groups is not None
        start: int | None = None
        kind = ""
        previous = -1
        for number in sorted(lines):
            text = lines[number]
            if number != previous + 1:
                start = None  # a gap in a partial view
            previous = number
            top = bool(text.strip()) and not text.startswith((" ", "\t", "#", ")", "]", "}"))
            if top and not (kind == "@" and text.lstrip().startswith(
                    ("def ", "async def ", "class ", "@"))):
                start = number
                kind = "@" if text.startswith("@") else text.split(None, 1)[0]
            if start is None:
                continue
            if kind in ("def", "async", "class", "@"):
                self._groups.setdefault(("block", start), []).append(number)
                self._owner[number] = ("block", start)
            else:
                self._shared.append(number)

    def run(self) -> Iterator[Finding]:
        for added in self.changed.added_lines:
            text = added.text
            number = added.new_no
            stripped = text.strip()
            if number is None or not stripped or stripped.startswith(("#", "//")):
                continue
            if not any(word in text for word in FETCH_WORDS):
                continue
            fetch = detect(text, self.python) or self.config_url(number)
            if fetch is None or self.is_mitigated(number):
                continue
            if not self.python and tolerated(self.command(number, text),
                                             max(0, text.find(fetch.target))):
                continue  # `|| echo "Warning…"`: the script goes on without the data
            if (normalized(text) in self.removed
                    or fetched_at_base(self.changed, fetch.kind, self.detect, fetch.target)):
                continue  # moved, re-indented, or an existing download with new arguments
            convention = sibling_convention(self.repo, self.changed, fetch.kind, fetch.target)
            known = convention is not None  # the confidence rests on the siblings alone
            if convention is None and self.snapshot is not None:
                # A new folder: its ancestors and cousin folders hold the convention.
                if self._nearby is None:
                    self._nearby = (nearby_texts(self.snapshot, self.changed),)
                convention = nearby_convention(self._nearby[0], self.changed, fetch.kind)
            if convention:
                continue  # how the sibling (or nearby) files fetch: the repository's idiom
            if self.callers_cache():
                continue  # a pre-fetch step of jobs that cache around it
            yield self.rule.finding(
                f"{fetch.what} fetches data over the network at run time, and nothing in "
                f"{self.scope_name(number)} caches it or sets offline mode: when the host "
                "throttles or starts refusing (the MMLU `data.tar` on people.eecs.berkeley.edu "
                "began answering HTTP 403 and broke SGLang's Xeon CI) the job fails for reasons "
                "unrelated to the change. Cache it (`actions/cache`, a mounted `~/.cache/...` "
                "volume, `HF_HOME` on a persistent disk, `cache_dir=`) or pre-fetch it and set "
                "`HF_HUB_OFFLINE=1`.",
                file=self.changed, line=number, key=fetch.target,
                # Without the repository we cannot tell a new habit from the house style.
                confidence=Confidence.HIGH if known else Confidence.MEDIUM)

    def command(self, number: int, text: str) -> str:
        """The line with its `\\` continuation lines: where a fallback may be written."""
        lines = self.lines()
        parts = [text]
        while parts[-1].rstrip().endswith("\\") and len(parts) < _MAX_CONTINUED:
            following = lines.get(number + len(parts))
            if following is None:
                break
            parts.append(following)
        return " ".join(p.rstrip().removesuffix("\\") for p in parts)

    def callers_cache(self) -> bool:
        """A CI script every invoking job caches around (see `callers`), read once."""
        if self.changed.surface != "ci-script" or self.snapshot is None:
            return False
        if self._callers_mitigate is None:
            self._callers_mitigate = callers_mitigate(self.snapshot, self.changed, mitigates)
        return self._callers_mitigate

    def config_url(self, number: int) -> Fetch | None:
        """An eval config value that points at remote data (`dataset_url: https://…`)."""
        if self.changed.surface != "eval-config" or not is_yaml(self.changed.path):
            return None
        text = self.lines().get(number, "")
        key, sep, value = text.strip().lstrip("- ").partition(":")
        url = URL_RE.search(value) if sep else None
        if url is None or not external(url.group(0)) or not DATA_KEY_RE.search(key):
            return None
        return Fetch(f"`{clip(key.strip() + ': ' + url.group(0))}`", url.group(0), "url")

    def is_mitigated(self, number: int) -> bool:
        groups = self.groups()
        owner = self._owner.get(number, "file")
        if owner not in self._mitigated:
            lines = self.lines()
            members = (groups[owner] + self._shared) if owner != "file" else list(lines)
            self._mitigated[owner] = any(mitigates(lines[n]) for n in members if n in lines)
        return self._mitigated[owner]

    def scope_name(self, number: int) -> str:
        owner = self._owner.get(number, "file")
        if isinstance(owner, tuple):
            if owner[0] == "job":
                return "this job" if self.changed.path.startswith(".github/") else "this step"
            # A function of a CI script (a data-prep tool a workflow runs) is no test.
            return "this test" if self.changed.surface in ("test", "cpu-test") else "this function"
        if self.changed.surface == "eval-config":
            return "this eval config"
        if self.changed.head_lines is None and self.changed.status != "added":
            return "the visible part of this file"
        return "this script" if self.changed.path.endswith(SHELL_SUFFIXES) else "this file"


def _job_anchor(line: YamlLine) -> tuple[int, int] | None:
    """(path index, line) of the GitHub job or the innermost Buildkite step holding `line`."""
    path, anchors = line.path, line.anchors
    if len(path) >= 2 and path[0] == "jobs" and len(anchors) >= 2 and anchors[1]:
        return 1, anchors[1]
    steps = [i for i in range(1, len(path)) if path[i] == ITEM and path[i - 1] == "steps"]
    if steps and steps[-1] < len(anchors) and anchors[steps[-1]]:
        return steps[-1], anchors[steps[-1]]
    return None
