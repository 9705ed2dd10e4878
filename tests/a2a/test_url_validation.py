"""Issue 23, class 3: an ``a2a:`` URL that cannot be a URL is refused before any episode.

In the plugin (``--pibench-agent`` and ``--pibench-user``: a usage error, exit 4),
in the green server's request validation (a JSON-RPC "invalid params" error, no
task) and on its command line. A well-formed URL where nothing listens is not an
input error: its episodes are infrastructure error rows, as before.
"""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from a2a_servers import bundled  # skips this module without the a2a extra

from pytest_pibench.a2a.assessment import AssessmentRequestError, parse_request, url_allowed
from pytest_pibench.a2a.green import green_app
from pytest_pibench.a2a.green import main as green_main
from pytest_pibench.a2a.serving import ServerThread
from pytest_pibench.inputs import InputError, http_url
from pytest_pibench.vocab import DEFAULT_RESULTS_PATH

NOT_URLS = [
    ("http://127.0.0.1:99999", "port '99999'"),
    ("http://127.0.0.1:0", "port '0'"),
    ("http://127.0.0.1:80x", "port '80x'"),
    ("http://256.1.1.1:9019", "host '256.1.1.1' is not a valid IPv4 address"),
    ("http://1.2.3:9019", "host '1.2.3' is not a valid IPv4 address"),
    ("http://[::g]:9019", "not a URL"),
    ("http://[::1:9019", "not a URL"),
    ("http://exa..mple:9019", "not a valid host name"),
    ("http://:9019", "names no host"),
    ("http://", "names no host"),
    ("127.0.0.1:9019", "must start with http:// or https://"),
    ("ftp://example.com", "must start with http:// or https://"),
    ("http://exam ple.com", "spaces"),
    ("http://user:secret@example.com", "user information"),
]
URLS = ["http://127.0.0.1:9019", "https://purple.example.com/team/a/", "http://[::1]:65535", "http://localhost:1",
        "http://agent_1.internal", "http://bücher.example"]  # fmt: skip


@pytest.mark.parametrize(("url", "fragment"), NOT_URLS)
def test_what_cannot_be_a_url_is_refused_saying_why(url, fragment):
    with pytest.raises(InputError) as info:
        http_url(url)
    assert fragment in str(info.value)


@pytest.mark.parametrize("url", URLS)
def test_urls_are_accepted_as_given(url):
    assert http_url(url) == url.rstrip("/")


@pytest.mark.parametrize(
    ("args", "flag", "fragment"),
    [
        (["--pibench-agent=a2a:http://127.0.0.1:99999"], "--pibench-agent", "port '99999'"),
        (["--pibench-agent=a2a:http://256.1.1.1:9019"], "--pibench-agent", "'256.1.1.1' is not a valid IPv4"),
        (["--pibench-agent=a2a:gopher://example.com"], "--pibench-agent", "must start with http://"),
        (["--pibench-agent=oracle", "--pibench-user=a2a:http://127.0.0.1:70000"], "--pibench-user", "port '70000'"),
        (["--pibench-agent=oracle", "--pibench-user=a2a:http://999.0.0.1"], "--pibench-user", "'999.0.0.1'"),
        (["--pibench-agent=a2a:http://127.0.0.1:9", '--pibench-agent-arg=timeout="nan"'], "--pibench-agent",
         "timeout must be a number of seconds"),
        (["--pibench-agent=a2a:http://127.0.0.1:9", "--pibench-agent-arg=timeout=inf"], "--pibench-agent",
         "timeout must be a number of seconds"),
        (["--pibench-agent=a2a:http://127.0.0.1:9", "--pibench-agent-arg=timeout=1e7"], "--pibench-agent",
         "timeout must be positive and at most 604800"),
        (["--pibench-agent=oracle", "--pibench-user=a2a:http://127.0.0.1:9", "--pibench-user-arg=timeout=-inf"],
         "--pibench-user", "timeout must be a number of seconds"),
    ],
)  # fmt: skip
def test_a_bad_a2a_spec_is_a_usage_error_before_any_episode(toy_project, args, flag, fragment):
    result = toy_project.runpytest("scenarios", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    errors = result.stderr.str()
    assert f"{flag}: " in errors and fragment in errors, errors
    assert not (toy_project.path / DEFAULT_RESULTS_PATH).exists()


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"participants": {"agent": "http://127.0.0.1:99999"}}, "participants.agent must be an http(s) URL"),
        ({"participants": {"agent": {"url": "http://256.1.1.1:9019"}}}, "'256.1.1.1' is not a valid IPv4"),
        ({"purple_agent_url": "http://[::1:9019"}, "purple_agent_url must be an http(s) URL"),
        ({"participants": {"agent": 9019}}, "participants.agent must be an http(s) URL, got 9019"),
        ({"participants": {"agent": "http://127.0.0.1:9019"}, "config": {"user_url": "http://127.0.0.1:65536"}},
         "config.user_url must be an http(s) URL"),
    ],
)  # fmt: skip
def test_the_green_server_refuses_a_url_that_cannot_be_one(payload, fragment):
    with pytest.raises(AssessmentRequestError) as info:
        parse_request(payload)
    assert fragment in str(info.value)


def _send(green_url: str, payload: dict) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-url", "role": "ROLE_USER", "parts": [{"text": json.dumps(payload)}]}}}  # fmt: skip
    return httpx.post(green_url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60).json()


@pytest.mark.parametrize("allowed", [(), ("http://127.0.0.1:9019",)], ids=["any-url", "allow-url"])
def test_a_request_naming_a_bad_url_is_invalid_params_and_runs_nothing(allowed):
    with ServerThread(lambda url: green_app(url, allowed_urls=allowed)) as green:
        agent = _send(green.url, {"participants": {"agent": "http://127.0.0.1:99999"}})
        user = _send(green.url, {"participants": {"agent": "http://127.0.0.1:9019"},
                                 "config": {"user_url": "http://256.1.1.1:9019"}})  # fmt: skip
    assert agent["error"]["code"] == -32602 and "port '99999'" in agent["error"]["message"], agent
    assert user["error"]["code"] == -32602 and "'256.1.1.1' is not a valid IPv4" in user["error"]["message"], user


def test_an_allow_list_never_matches_a_url_that_cannot_be_one():
    assert url_allowed("http://127.0.0.1:9019/a", ["http://127.0.0.1:9019"])
    assert not url_allowed("http://127.0.0.1:99999", ["http://127.0.0.1:9019"])  # was a ValueError
    assert not url_allowed("http://127.0.0.1:9019", ["http://127.0.0.1:99999"])


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--port", "99999"], "--port"),
        (["--port", "nan"], "--port"),
        (["--allow-url", "http://256.1.1.1:9019"], "--allow-url"),
        (["--card-url", "ftp://example.com"], "--card-url"),
        (["--max-concurrency", "257"], "--max-concurrency"),
    ],
)
def test_the_green_command_line_refuses_bad_ports_and_urls(capsys, argv, flag):
    with pytest.raises(SystemExit) as exited:
        green_main(argv)  # refused while parsing: nothing is served
    assert exited.value.code == 2  # argparse's usage error, as for the green server's other flags
    assert flag in capsys.readouterr().err


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("role", ["agent", "user"])
@pytest.mark.slow
def test_a_valid_url_where_nothing_listens_is_an_infrastructure_error_row(pytester, role):
    url = f"a2a:http://127.0.0.1:{_closed_port()}"
    spec = [f"--pibench-agent={url}"] if role == "agent" else ["--pibench-agent=oracle", f"--pibench-user={url}"]
    scenario = next(s for s in bundled() if s.meta.domain == "retail").scenario_id
    result = pytester.runpytest_subprocess(*spec, "-k", scenario, "--pibench-results=r.json", "-p", "no:cacheprovider")
    rows = json.loads((pytester.path / "r.json").read_text())["rows"]
    assert len(rows) == 1, rows
    assert (rows[0]["termination_reason"], rows[0]["failure_cause"]) == ("infra_error", "infrastructure"), rows[0]
    assert "unreachable" in rows[0]["error"]
    assert result.ret == 9  # an error row: the error budget (--pibench-max-error-rate 0) is exceeded, no score
