"""Failure classes the catalog handles in general, on small logs written for these tests.

Each log mixes the cause with the symptoms a naive extractor would pick (exit codes,
wrapper errors, counts, timeouts printed on the way) and is run through both matchers:
the compiled one (Hyperscan + RE2) and the pure-Python fallback must agree.
"""

from __future__ import annotations

import pytest

from bot.evidence.extract import RootCause, extract_bytes
from bot.evidence.multimatch import Engine, engines_available

ENGINES: list[Engine] = ["python", "compiled"] if engines_available() else ["python"]

CASES: dict[str, tuple[str, int, str]] = {
    # name: (log, expected root-cause line, expected category)
    "crash exception inside a pytest report is a test failure": (
        "tests/test_x.py:12: in test_shape\n"
        "    out = model(x)\n"
        "E   AttributeError: 'NoneType' object has no attribute 'shape'\n"
        "=========================== 1 failed in 0.31s ===========================\n"
        "##[error]Process completed with exit code 1.\n",
        3, "pytest-failure"),
    "the same exception outside a test run stays other": (
        "Traceback (most recent call last):\n"
        '  File "run.py", line 3, in <module>\n'
        "AttributeError: module 'torch' has no attribute 'foo'\n"
        "##[error]Process completed with exit code 1.\n",
        3, "other"),
    "artifact service refusal outranks the step's exit code": (
        "Run actions/upload-artifact@v4\n"
        "With the provided path, there will be 1 file uploaded\n"
        "Error: Failed to CreateArtifact: Received non-retryable error: Failed request: (409) "
        "Conflict\n"
        "##[error]Process completed with exit code 1.\n",
        3, "container-infra"),
    "nvcc compile cascade reports the first compiler error": (
        "[12/40] Building CUDA object kernels/gemm.cu.o\n"
        "kernels/gemm.cu(42): error: identifier \"foo\" is undefined\n"
        "kernels/gemm.cu(57): error: identifier \"bar\" is undefined\n"
        "2 errors detected in the compilation of \"kernels/gemm.cu\".\n"
        "ninja: build stopped: subcommand failed.\n"
        "CMake Error at setup.cmake:10 (message):\n",
        2, "build-error"),
    "a failed package post-install build is a build error": (
        "Building initial module for 6.8.0-1015-aws\n"
        "Error! Bad return status for module build on kernel: 6.8.0-1015-aws (x86_64)\n"
        "dpkg: error processing package example-dkms (--configure):\n"
        "E: Sub-process /usr/bin/dpkg returned an error code (1)\n",
        2, "build-error"),
    "pre-commit hook verdict outranks a timeout printed on the way": (
        "check yaml...............................................................Passed\n"
        "ruff.....................................................................Failed\n"
        "- hook id: ruff\n"
        "::debug::socket timed out after 5000 ms\n"
        "##[error]Process completed with exit code 1.\n",
        2, "other"),
    "package index refusing an upload is not a test failure": (
        "Uploading distributions to https://upload.pypi.org/legacy/\n"
        "ERROR    HTTPError: 400 Bad Request from https://upload.pypi.org/legacy/\n"
        "         File too large.\n"
        "##[error]Process completed with exit code 1.\n",
        2, "other"),
    "a per-file timeout of a suite runner is the visible surface": (
        "Begin (1/3): python3 test_a.py\n"
        "End (1/3): elapsed=12.0s\n"
        "Begin (2/3): python3 test_serving.py\n"
        "\n"
        "Timeout after 1800 seconds when running test_serving.py\n"
        "Fail. Time elapsed: 1820.55s\n",
        5, "timeout-surface"),
    "a kernel built for another GPU architecture is device infrastructure": (
        "E   RuntimeError: CUDA error: no kernel image is available for execution on the "
        "device\n"
        "FAILED tests/test_attn.py::test_decode - RuntimeError: CUDA error\n",
        1, "other"),
    "a missing compiler outranks pip's wheel-build wrappers": (
        "  Building wheel for cffi (setup.py): finished with status 'error'\n"
        "  error: subprocess-exited-with-error\n"
        "      unable to execute 'gcc': No such file or directory\n"
        "  error: command 'gcc' failed with exit status 1\n"
        "  ERROR: Failed building wheel for cffi\n",
        3, "build-error"),
    "the compiler driver's fatal error outranks the failed command": (
        "  building 'pandas._libs.window.aggregations' extension\n"
        "gcc: fatal error: cannot execute 'cc1plus': execvp: No such file or directory\n"
        "  compilation terminated.\n"
        "  error: command 'gcc' failed with exit status 1\n",
        2, "build-error"),
    "a C++ unit-test check failure is an assertion, not a compile error": (
        "/src/tests/test_basic.cpp:20: error: Failure in TEST(TestConcat, concat_12)\n"
        "\texpected <onetwo>\n"
        "\tbut was  <oneone>\n"
        "Errors (1 failures, 2 tests, 2 ran, 3 checks, 0 ignored, 0 filtered out, 0 ms)\n"
        "##[error]Process completed with exit code 1.\n",
        1, "assertion"),
    "an unresolvable pin outranks the step's exit code": (
        "Run pip install torch==9.9.9+cpu\n"
        "ERROR: Could not find a version that satisfies the requirement torch==9.9.9+cpu "
        "(from versions: 2.0.0, 2.1.0)\n"
        "ERROR: No matching distribution found for torch==9.9.9+cpu\n"
        "##[error]Process completed with exit code 1.\n",
        2, "other"),
    "an unreachable index behind an unresolvable pin is the download error": (
        "WARNING: Retrying (Retry(total=0)) after connection broken by "
        "'NewConnectionError(\"Failed to establish a new connection\")': /simple/torch/\n"
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: "
        "none)\n"
        "ERROR: No matching distribution found for torch\n",
        1, "http-download-error"),
    "the CUDA driver API's out-of-memory code is a device OOM": (
        "thread 'gemm_fp16' panicked at src/driver/tests.rs:1033:54:\n"
        'C: MemoryAllocation("CUDA driver error: CUDA_ERROR_OUT_OF_MEMORY (code: 2)")\n'
        "test result: FAILED. 2602 passed; 2 failed; 12 ignored\n",
        2, "cuda-oom"),
    "nvidia-smi seeing no GPU is device infrastructure": (
        "Run nvidia-smi\n"
        "No devices were found\n"
        "Error: Process completed with exit code 6.\n",
        2, "other"),
    "a connection cut mid-download inside a test traceback is a download error": (
        ">               raise ProtocolError(\"Connection broken: %r\" % e, e)\n"
        "E               urllib3.exceptions.ProtocolError: (\"Connection broken: "
        "ConnectionResetError(104, 'Connection reset by peer')\", ConnectionResetError(104))\n"
        "FAILED tests/test_model.py::test_download - urllib3.exceptions.ProtocolError\n",
        2, "http-download-error"),
    "Travis's job time limit is the visible surface": (
        "$ pytest -x tests/\n"
        "tests/test_slow.py ....\n"
        "The job exceeded the maximum time limit for jobs, and has been terminated.\n",
        3, "timeout-surface"),
    "a missing linker under cargo is a build error": (
        "   Compiling libc v0.2.150\n"
        "error: linker `cc` not found\n"
        "  |\n"
        "  = note: No such file or directory (os error 2)\n"
        "error: could not compile `libc` (build script) due to 1 previous error\n"
        "##[error]Process completed with exit code 101.\n",
        2, "build-error"),
    "exit status 139 from the runner is an inferred segfault": (
        "Running tests in suite Collections\n"
        "/ci/tests.targets(202,5): warning MSB3073: The command \"./RunTests.sh\" exited with "
        "code 139.\n"
        "/ci/tests.targets(211,5): error : One or more tests failed while running tests\n"
        "##[error]Process completed with exit code 1.\n",
        2, "segfault"),
    "a crash message outranks the inferred segfault it explains": (
        "Fatal Python error: Segmentation fault\n"
        "Error: Process completed with exit code 139.\n",
        1, "segfault"),
    "npm's failed build script is a build error": (
        "> app@1.0.0 build\n"
        "npm ERR! Lifecycle script `build` failed with error: \n"
        "npm ERR! Error: command failed \n"
        "##[error]Process completed with exit code 1.\n",
        2, "build-error"),
    "create-react-app refusing to compile is a build error": (
        "Treating warnings as errors because process.env.CI = true.\n"
        "\n"
        "Failed to compile.\n"
        "\n"
        "./src/App.js\n"
        "  Line 3:7:  'x' is assigned a value but never used  no-unused-vars\n",
        3, "build-error"),
    "a model hub saying the repository does not exist is a download error": (
        "Downloading model org/tiny-model\n"
        "2025-01-01 00:00:00,000 - modelscope - ERROR - Repo org/tiny-model not exists on "
        "either https://www.modelscope.cn/ or https://www.modelscope.ai/\n"
        "Error: Process completed with exit code 1.\n",
        2, "http-download-error"),
    "a refused connection to localhost is a service that never came up": (
        "tests/test_api.py::test_health FAILED\n"
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8000): "
        "Max retries exceeded with url: /health (Caused by NewConnectionError('Failed to "
        "establish a new connection: [Errno 111] Connection refused'))\n",
        2, "other"),
    "the same refusal from a remote host is a download error": (
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.org', port=443): "
        "Max retries exceeded with url: /data.bin (Caused by NewConnectionError('Failed to "
        "establish a new connection: [Errno 111] Connection refused'))\n",
        1, "http-download-error"),
    "vLLM engines that never report in are a server start timeout": (
        "INFO 01-01 00:00:00 [core.py:100] Loading weights took 600.1 seconds\n"
        "TimeoutError: Timed out waiting for engines to send initial message on input socket.\n",
        2, "server-start-timeout"),
    "git's fatal error outranks the exit code after it": (
        "Run git rebase upstream/main\n"
        "fatal: Not a valid object name upstream/main\n"
        "Error: Process completed with exit code 128.\n",
        2, "other"),
    "apt's E: line outranks the step's exit code": (
        "Reading state information...\n"
        "The following packages have unmet dependencies:\n"
        " libfoo-dev : Depends: libfoo1 (= 1.2) but 1.3 is to be installed\n"
        "E: Unable to correct problems, you have held broken packages.\n"
        "E: Error, pkgProblemResolver::Resolve generated breaks, this may be caused by held "
        "packages\n"
        "##[error]Process completed with exit code 100.\n",
        5, "other"),
    "apt failing to fetch a package list is still a download error": (
        "E: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/jammy/InRelease  "
        "503  Service Unavailable [IP: 1.2.3.4 80]\n"
        "##[error]Process completed with exit code 100.\n",
        1, "http-download-error"),
    "a Go program's lower-case no space left on device is a full disk": (
        "~~~ Preparing working directory\n"
        "\U0001F6A8 Error: Error creating hook script: write /tmp/hook-runner-1: no space left on "
        "device\n"
        "^^^ +++\n"
        "\U0001F6A8 Error: The command exited with status 1\n",
        2, "other"),
    "CircleCI's killed notice is a host kill, not the count before it": (
        "collected 120 items\n"
        "tests/test_big.py ........\n"
        'Received "killed" signal\n',
        3, "host-oom-killed"),
    "an action's failure message copied from the web UI is its annotation": (
        "Run sigstore/cosign-installer@v3\n"
        "Error: signing dist/pkg.tar.gz: create bundle file: open : no such file or directory\n",
        2, "other"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_class_names_its_cause(name: str, engine: Engine) -> None:
    log, line_no, category = CASES[name]
    result = extract_bytes(log.encode(), engine=engine)
    assert isinstance(result, RootCause), result
    assert (result.line_no, result.category) == (line_no, category), result.line


@pytest.mark.parametrize("engine", ENGINES)
def test_the_chain_names_the_symptoms_the_cause_explains(engine: Engine) -> None:
    log, line_no, _ = CASES["artifact service refusal outranks the step's exit code"]
    result = extract_bytes(log.encode(), engine=engine)
    assert isinstance(result, RootCause)
    assert result.explain() == f"exit-code at line 4 ← container-infra at line {line_no}"
