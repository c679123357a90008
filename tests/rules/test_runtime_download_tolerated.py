"""`tolerated`: a fetch whose failure its own command swallows cannot fail the job."""

from __future__ import annotations

import pytest

from rules.runtime_download.detect import tolerated

URL = "https://example.org/data/a.tar"


@pytest.mark.parametrize("command", [
    f"wget {URL} || true",
    f"wget {URL} -O a.tar || :",
    f'curl -fsSL "{URL}" -o a.tar || echo "Warning: failed; exit 1 && retry later"',
    f"x=$(curl -s {URL} || echo '')",
    f"wget {URL} && tar xf a.tar || true  # optional",
    "gsutil -m cp -r gs://bucket/x/* \"$DIR\" || printf 'no configs\\n'",
])
def test_tolerated(command: str) -> None:
    assert tolerated(command, command.index("http") if "http" in command else 0)


@pytest.mark.parametrize("command", [
    f"wget {URL}",
    f"wget {URL} || exit 1",
    f"wget {URL} || echo failed && exit 1",
    f"wget {URL} || echo failed || false",
    f"wget {URL}; ls || true",
    f"wget {URL} || {{ echo failed; exit 1; }}",
    f"wget {URL} || return 1",
    f"wget {URL} | tar x; true",
])
def test_not_tolerated(command: str) -> None:
    assert not tolerated(command, command.index("http"))


def test_only_the_fetchs_own_command_counts() -> None:
    command = f"ls || true; wget {URL}"
    assert not tolerated(command, command.index("wget"))
