"""runtime-download: tests and CI jobs that fetch data over the network with no cache."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from bot.core.findings import Finding, Severity
from bot.core.snapshot import ChangedFile
from rules.analysis.lines import known_lines
from rules.analysis.yamlscan import ITEM, YamlLine, YamlView, is_yaml, view
from rules.base import Rule, RuleContext

_SURFACES = ("test", "cpu-test", "workflow", "ci-script", "eval-config")
_FETCH_RE = re.compile(r"(?<![\w./-])(curl|wget)(?![\w-])")
_URL_RE = re.compile(r"https?://[^\s\"'<>|;)`]{1,500}")
_PY_URL_CALL_RE = re.compile(
    r"\b(urlopen|urlretrieve|requests\.get|httpx\.get|download_url_to_file|"
    r"load_state_dict_from_url|wget\.download)\s*\(\s*[rbf]?[\"'](https?://[^\"'\s]{1,500})")
_HUB_CALL_RE = re.compile(
    r"\b(hf_hub_download|snapshot_download|torch\.hub\.load|datasets\.load_dataset|load_dataset)"
    r"\s*\(([^)]{0,300})")
_CLI_RE = re.compile(
    r"\b(huggingface-cli\s+download|hf\s+download|pip3?\s+download|aws\s+s3\s+(?:cp|sync)\s+s3://"
    r"|gsutil\s+(?:-m\s+)?(?:cp|rsync)\s+(?:-r\s+)?gs://|git\s+clone)\b([^\n;&|]{0,300})")
_DATA_REPO_RE = re.compile(r"huggingface\.co/|/datasets?/|[\w.-]*data[\w.-]*(?:\.git)?(?:\s|$)",
                           re.I)
_FIRST_ARG_RE = re.compile(r"\A\s*[rf]?[\"']([^\"']{1,200})[\"']")
_LOCAL_BUILDERS = frozenset({"json", "csv", "parquet", "text", "arrow", "pandas",
                             "imagefolder", "audiofolder", "webdataset"})
_LOCAL_HOSTS = ("localhost", "127.", "0.0.0.0", "[::1]", "host.docker.internal")
_TOOL_URL_RE = re.compile(
    r"\.(?:sh|deb|rpm|whl|exe|msi|pkg|gpg|asc|key|pub)(?:$|[?#])|/releases/download/"
    r"|//(?:api|uploads)\.github\.com|//hooks\.slack\.com|//get\.docker\.com", re.I)
_NOT_A_FETCH_RE = re.compile(
    r"\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\|\s*python3?\b|\s-X\s*(?:POST|PUT|PATCH|DELETE)\b"
    r"|\s--data(?:-\w+)?[\s=]|\s-d\s|\s--upload-file\s|\s-T\s|--request\s+(?:POST|PUT)")
_MITIGATION_RE = re.compile(
    r"\b(?:HF_HUB_OFFLINE|TRANSFORMERS_OFFLINE|HF_DATASETS_OFFLINE)\b[\"']?\]?\s*[:=,]\s*[\"']?"
    r"(?i:1|true|yes|on)\b"
    r"|actions/cache\b|cache-buildkite-plugin|buildkite-plugins/cache|\bcache#v"
    r"|\b(?:HF_HOME|HF_HUB_CACHE|HUGGINGFACE_HUB_CACHE|HF_DATASETS_CACHE|TRANSFORMERS_CACHE"
    r"|TORCH_HOME|XDG_CACHE_HOME)\b"
    r"|\b(?![A-Z0-9_]*NO_CACHE)[A-Z][A-Z0-9_]*_CACHE(?:_DIR|_ROOT|_HOME|_PATH)?\b"
    r"|\bcache_dir\s*=|--cache-dir\b|\blocal_files_only\s*=\s*True"
    r"|\.cache[\w./-]{0,200}:/|(?i:\bmirror\b)|\bHF_ENDPOINT\b"
    r"|\[\[?\s+!?\s*-[fesd]\s|\btest\s+-[fesd]\s|os\.path\.(?:exists|isfile|isdir)\(|\.exists\(\)"
    r"|\s(?:-nc|--no-clobber|-N|--timestamping|--continue)\b")
# A host directory mounted into the job's container: `-v /data/hf:/root/.cache/huggingface`.
_VOLUME_RE = re.compile(r"(?:\s-v|--volume|--mount)[\s=]([^\s:]{1,300}):")
_VOLUME_WORDS = ("cache", "data", "model", "huggingface", "hf_")
_SHELL_SUFFIXES = (".sh", ".bash")
_FETCH_WORDS = ("http", "download", "load", "clone", "hub", "s3", "gs://")
_DATA_KEY_RE = re.compile(r"url|data|source|file|path|download", re.I)


@dataclass(frozen=True)
class _Fetch:
    what: str  # "`wget https://…/data.tar`"
    target: str  # the URL / repo / dataset, for the fingerprint


def detect(text: str, python: bool) -> _Fetch | None:
    """The run-time download a line performs, if any."""
    fetch = _FETCH_RE.search(text)
    if fetch is not None:
        url = _URL_RE.search(text, fetch.end())
        if url is not None and _external(url.group(0)) and not _NOT_A_FETCH_RE.search(text) \
                and not _TOOL_URL_RE.search(url.group(0)):
            return _Fetch(f"`{fetch.group(1)} {_clip(url.group(0))}`", url.group(0))
    cli = _CLI_RE.search(text)
    if cli is not None:
        command = re.sub(r"\s+", " ", cli.group(1))
        args = cli.group(2).strip()
        if command != "git clone" or _DATA_REPO_RE.search(args):
            target = args.split()[0] if args.split() else command
            return _Fetch(f"`{_clip(command + ' ' + args)}`", target)
    call = _PY_URL_CALL_RE.search(text)
    if call is not None and _external(call.group(2)):
        return _Fetch(f"`{call.group(1)}(\"{_clip(call.group(2))}\")`", call.group(2))
    hub = _HUB_CALL_RE.search(text)
    if hub is not None:
        name, args = hub.group(1), hub.group(2)
        first = _FIRST_ARG_RE.match(args)
        literal = first.group(1) if first else ""
        if "local_files_only" in args or 'source="local"' in args or "source='local'" in args:
            return None
        if name.endswith("load_dataset") and (
                (literal in _LOCAL_BUILDERS and "http" not in args)
                or literal.startswith(("/", "./", "../", "~"))
                or (not literal and name == "load_dataset")):
            return None  # local files, or a helper of the same name as likely as `datasets`
        shown = f'{name}("{literal}")' if literal else f"{name}(…)"
        return _Fetch(f"`{_clip(shown)}`", literal or name)
    return None


def _external(url: str) -> bool:
    host = url.split("/", 3)[2] if url.count("/") >= 2 else ""
    host = host.rsplit("@", 1)[-1]
    if not host or any(c in host for c in "${}%") or host.startswith(_LOCAL_HOSTS):
        return False
    return "." in host


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 90 else text[:89] + "…"


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
    with no cache or offline setting in the same job or test.

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
        for changed in ctx.files(*_SURFACES):
            if changed.path.lower().endswith((".md", ".txt", ".rst")):
                continue
            # A fetch is only looked for on added lines naming one of these words.
            if any(word in changed.added_text for word in _FETCH_WORDS):
                yield from _FileCheck(self, changed).run()


def _mitigates(text: str) -> bool:
    if _MITIGATION_RE.search(text):
        return True
    return any(any(w in m.group(1).lower() for w in _VOLUME_WORDS)
               for m in _VOLUME_RE.finditer(text))


class _FileCheck:
    def __init__(self, rule: RuntimeDownload, changed: ChangedFile) -> None:
        self.rule, self.changed = rule, changed
        self.python = changed.path.endswith(".py")
        self.workflow = is_yaml(changed.path) and changed.surface in ("workflow", "ci-config")
        self._groups: dict[object, list[int]] | None = None
        self._owner: dict[int, object] = {}
        self._shared: list[int] = []  # lines every group sees (top-level env, module code)
        self._mitigated: dict[object, bool] = {}

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
            if not any(word in text for word in _FETCH_WORDS):
                continue
            fetch = detect(text, self.python) or self.config_url(number)
            if fetch is None or self.is_mitigated(number):
                continue
            yield self.rule.finding(
                f"{fetch.what} fetches data over the network at run time, and nothing in "
                f"{self.scope_name(number)} caches it or sets offline mode: when the host "
                "throttles or starts refusing (the MMLU `data.tar` on people.eecs.berkeley.edu "
                "began answering HTTP 403 and broke SGLang's Xeon CI) the job fails for reasons "
                "unrelated to the change. Cache it (`actions/cache`, a mounted `~/.cache/...` "
                "volume, `HF_HOME` on a persistent disk, `cache_dir=`) or pre-fetch it and set "
                "`HF_HUB_OFFLINE=1`.",
                file=self.changed, line=number, key=fetch.target)

    def config_url(self, number: int) -> _Fetch | None:
        """An eval config value that points at remote data (`dataset_url: https://…`)."""
        if self.changed.surface != "eval-config" or not is_yaml(self.changed.path):
            return None
        text = self.lines().get(number, "")
        key, sep, value = text.strip().lstrip("- ").partition(":")
        url = _URL_RE.search(value) if sep else None
        if url is None or not _external(url.group(0)) or not _DATA_KEY_RE.search(key):
            return None
        return _Fetch(f"`{_clip(key.strip() + ': ' + url.group(0))}`", url.group(0))

    def is_mitigated(self, number: int) -> bool:
        groups = self.groups()
        owner = self._owner.get(number, "file")
        if owner not in self._mitigated:
            lines = self.lines()
            members = (groups[owner] + self._shared) if owner != "file" else list(lines)
            self._mitigated[owner] = any(_mitigates(lines[n]) for n in members if n in lines)
        return self._mitigated[owner]

    def scope_name(self, number: int) -> str:
        owner = self._owner.get(number, "file")
        if isinstance(owner, tuple):
            if owner[0] == "job":
                return "this job" if self.changed.path.startswith(".github/") else "this step"
            return "this test"
        if self.changed.surface == "eval-config":
            return "this eval config"
        if self.changed.head_lines is None and self.changed.status != "added":
            return "the visible part of this file"
        return "this script" if self.changed.path.endswith(_SHELL_SUFFIXES) else "this file"


def _job_anchor(line: YamlLine) -> tuple[int, int] | None:
    """(path index, line) of the GitHub job or the innermost Buildkite step holding `line`."""
    path, anchors = line.path, line.anchors
    if len(path) >= 2 and path[0] == "jobs" and len(anchors) >= 2 and anchors[1]:
        return 1, anchors[1]
    steps = [i for i in range(1, len(path)) if path[i] == ITEM and path[i - 1] == "steps"]
    if steps and steps[-1] < len(anchors) and anchors[steps[-1]]:
        return steps[-1], anchors[steps[-1]]
    return None
