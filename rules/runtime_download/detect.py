"""What counts as a run-time download on one line, and what mitigates one."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FETCH_RE = re.compile(r"(?<![\w./-])(curl|wget)(?![\w-])")
URL_RE = re.compile(r"https?://[^\s\"'<>|;)`]{1,500}")
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
# A tool or its installer is no test data (the rule's thesis is data from hosts that throttle
# or move): a script (`.sh`, `.bash`), a package or a release binary, and any download run
# straight into a shell (`curl … | bash`, `bash <(curl …)`: the fetched text is executed).
_TOOLURL_RE = re.compile(
    r"\.(?:sh|bash|deb|rpm|whl|exe|msi|pkg|gpg|asc|key|pub)(?:$|[?#])|/releases/download/"
    r"|//(?:api|uploads)\.github\.com|//hooks\.slack\.com|//get\.docker\.com", re.I)
_NOT_A_FETCH_RE = re.compile(
    r"\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\|\s*python3?\b|\s-X\s*(?:POST|PUT|PATCH|DELETE)\b"
    r"|(?<![\w-])(?:(?:ba|z)?sh|source|\.)\s+<\(\s*(?:curl|wget)\b"
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
SHELL_SUFFIXES = (".sh", ".bash")
FETCH_WORDS = ("http", "download", "load", "clone", "hub", "s3", "gs://")
DATA_KEY_RE = re.compile(r"url|data|source|file|path|download", re.I)


@dataclass(frozen=True)
class Fetch:
    what: str  # "`wget https://…/data.tar`"
    target: str  # the URL / repo / dataset, for the fingerprint
    kind: str  # how it fetches ("wget", "snapshot_download", "git clone"): what a repo's idiom is


def detect(text: str, python: bool) -> Fetch | None:
    """The run-time download a line performs, if any."""
    fetch = _FETCH_RE.search(text)
    if fetch is not None:
        url = URL_RE.search(text, fetch.end())
        if url is not None and external(url.group(0)) and not _NOT_A_FETCH_RE.search(text) \
                and not _TOOLURL_RE.search(url.group(0)):
            return Fetch(f"`{fetch.group(1)} {clip(url.group(0))}`", url.group(0), fetch.group(1))
    cli = _CLI_RE.search(text)
    if cli is not None:
        command = re.sub(r"\s+", " ", cli.group(1))
        args = cli.group(2).strip()
        if command != "git clone" or _DATA_REPO_RE.search(args):
            target = args.split()[0] if args.split() else command
            return Fetch(f"`{clip(command + ' ' + args)}`", target, command)
    call = _PY_URL_CALL_RE.search(text)
    if call is not None and external(call.group(2)):
        return Fetch(f"`{call.group(1)}(\"{clip(call.group(2))}\")`", call.group(2),
                      call.group(1))
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
        return Fetch(f"`{clip(shown)}`", literal or name, name.rsplit(".", 1)[-1])
    return None


def external(url: str) -> bool:
    host = url.split("/", 3)[2] if url.count("/") >= 2 else ""
    host = host.rsplit("@", 1)[-1]
    if not host or any(c in host for c in "${}%") or host.startswith(_LOCAL_HOSTS):
        return False
    return "." in host


def clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 90 else text[:89] + "…"


def mitigates(text: str) -> bool:
    if _MITIGATION_RE.search(text):
        return True
    return any(any(w in m.group(1).lower() for w in _VOLUME_WORDS)
               for m in _VOLUME_RE.finditer(text))


# A fetch the script itself lets fail (`gsutil cp … || echo "Warning: …"`, `wget … || true`)
# cannot fail the job when the host throttles or moves: the author chose to go on without
# the data. The fallback must end the fetch's own command (no `;` before it) and must not
# exit, return or chain on (`|| echo failed && exit 1` still fails the job).
_QUOTED_RE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")
_FALLBACK_RE = re.compile(r"\|\|\s*(?:true|:|echo|printf|>&2\s+echo)(?![\w-])(.*)\Z", re.S)
_STILL_FAILS_RE = re.compile(r"&&|\|\||\bexit\b|\breturn\b|\bfalse\b")


def tolerated(command: str, at: int) -> bool:
    """The shell command list holding the fetch at `at` swallows the fetch's failure."""
    # Quoted text (the warning's words, a quoted URL) is blanked in place, so its `;`,
    # `&&` or `exit` say nothing and `at` still points at the fetch.
    masked = _QUOTED_RE.sub(lambda m: '"' + "x" * (len(m.group(0)) - 2) + '"', command)
    segment = re.split(r";|\n", masked[max(0, at):], maxsplit=1)[0]
    fallback = _FALLBACK_RE.search(segment)
    return fallback is not None and not _STILL_FAILS_RE.search(fallback.group(1))
