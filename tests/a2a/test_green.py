"""The green server: requests parsed and bounded, an assessment end to end from an a2a-sdk client, fuzzing."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_servers import assess, bundled, serve  # skips this module without the a2a extra

from pytest_pibench.a2a.assessment import AssessmentRequestError, parse_request
from pytest_pibench.a2a.green import MAX_REQUEST_BYTES, green_app
from pytest_pibench.a2a.serving import ServerThread
from pytest_pibench.episode.limits import EpisodeLimits
from pytest_pibench.report import report_command

RETAIL = sorted(s.scenario_id for s in bundled() if s.meta.domain == "retail")
URL = "http://127.0.0.1:9019"


@pytest.mark.parametrize(
    ("payload", "url", "agent_id"),
    [
        ({"participants": {"agent": URL}}, URL, URL),  # no id: the URL names it, not the literal role
        ({"participants": {"agent": {"url": URL + "/", "id": "team-x"}}}, URL, "team-x"),
        ({"participants": {"agent": {"endpoint": URL}}, "agentbeats_ids": {"agent": "ab-1"}}, URL, "ab-1"),
        ({"participants": {"purple": URL}}, URL, URL),
        ({"purple_agent_url": URL, "purple_agent_id": "p"}, URL, "p"),
    ],
)
def test_who_toassess(payload, url, agent_id):
    assessment = parse_request(payload)
    assert (assessment.purple_url, assessment.agent_id) == (url, agent_id)
    assert len(assessment.items) == len(bundled())  # all bundled scenarios, one trial, by default


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"scenarios_dir": "/etc"}, "config.scenarios_dir is not accepted"),
        ({"workspace_root": "/"}, "config.workspace_root is not accepted"),
        ({"observer_mode": "block_all"}, "config.observer_mode must be one of ['audit_only', 'hard_gate']"),
        ({"max_steps": 201}, "config.max_steps must be between 1 and 200"),
        ({"max_tool_calls": 0}, "config.max_tool_calls must be between 1 and 1000"),
        ({"max_tool_calls_per_message": 1001}, "config.max_tool_calls_per_message must be between 1 and 1000"),
        ({"episode_timeout": 1801}, "config.episode_timeout must be between 1 and 1800"),
        ({"judge_model": "openai/gpt-4o"}, "config.judge_model 'openai/gpt-4o' is not offered here"),
        ({"judge_votes": 6}, "config.judge_votes must be between 1 and 5"),
        ({"num_trials": 11}, "config.num_trials must be between 1 and 10"),
        ({"num_trials": 1.5}, "must be a whole number"),
        ({"concurrency": 9}, "config.concurrency must be between 1 and 8"),
        ({"domains": ["banking"]}, "unknown domain(s) ['banking']"),
        ({"scenario_ids": ["NOPE"]}, "no bundled scenario (in the chosen domains) has the id(s) ['NOPE']"),
        ({"scenario_scope": "domain"}, "needs config.scenario_domain"),
        ({"scenario_scope": "some"}, 'must be "all" or "domain"'),
        ({"api_base": "http://evil"}, "unknown config key(s) ['api_base']"),
        ({"user_model": "http://evil/model"}, "config.user_model must be a model id"),
        ({"user_url": "file:///etc/passwd"}, "config.user_url must be an http(s) URL"),
        ({"num_shards": 2, "shard_index": 2}, "config.shard_index must be between 0 and 1"),
    ],
)
def test_bad_requests_say_what_to_change(config, fragment):
    with pytest.raises(AssessmentRequestError) as info:
        parse_request({"participants": {"agent": URL}, "config": config})
    assert fragment in str(info.value)


@pytest.mark.parametrize("payload", [[], "x", {"participants": {}}, {"participants": {"agent": "ftp://x"}}])
def test_requests_without_an_agent_are_refused(payload):
    with pytest.raises(AssessmentRequestError):
        parse_request(payload)


def test_shards_split_the_work_without_overlap():
    base = {"participants": {"agent": URL}, "config": {"domains": ["retail"], "num_trials": 2}}
    whole = parse_request(base).items
    shards = [parse_request({**base, "shard_index": i, "num_shards": 3}).items for i in range(3)]
    assert sorted(item for shard in shards for item in shard) == sorted(whole) and len(whole) == 2 * len(RETAIL)
    assert parse_request({**base, "config": {**base["config"], "shard_index": 1, "num_shards": 3}}).items == shards[1]


def test_an_assessment_end_to_end(tmp_path: Path):
    chosen = RETAIL[:5]
    payload = {"participants": {"agent": {"url": "", "id": "team-oracle"}},
               "config": {"domain": "policy_compliance", "scenario_ids": chosen, "num_trials": 2, "seed": 7,
                          "concurrency": 4}}  # fmt: skip
    with serve() as purple, ServerThread(lambda url: green_app(url, results_dir=tmp_path)) as green:
        payload["participants"]["agent"]["url"] = purple
        card = httpx.get(green.url + "/.well-known/agent-card.json").json()
        assert card["capabilities"]["streaming"] is True and card["skills"][0]["id"] == "policy_compliance_assessment"
        events = assess(green.url, payload, as_text=True)
    progress = [e["statusUpdate"]["status"] for e in events if "statusUpdate" in e]
    assert progress[0]["state"] == "TASK_STATE_WORKING" and progress[-1]["state"] == "TASK_STATE_COMPLETED"
    done = [p["message"]["parts"][1]["data"]["done"] for p in progress if len(p.get("message", {}).get("parts", [])) > 1]
    assert done == list(range(1, 11))  # one update per finished episode, 10 in all
    (artifact_event,) = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    artifact = artifact_event["artifact"]["parts"][0]["data"]
    assert artifact["participants"] == {"agent": "team-oracle"}
    result = artifact["results"][0]
    assert result["max_score"] == 10 and result["score"] == 10 and artifact["pibench_validity"]["valid"]
    # the artifact is what `pi report` makes of the same rows (kept with --results-dir)
    (results_file,) = tmp_path.glob("*.json")
    assert report_command([str(results_file)], output=str(tmp_path / "lb.json")) == 0
    reported = json.loads((tmp_path / "lb.json").read_text())
    exact = json.loads(artifact_event["artifact"]["parts"][1]["text"])
    assert exact == reported  # the text part is exactly what pi report writes
    assert _same(reported, artifact)  # the data part too, up to the doubles protobuf makes of numbers
    seeds = [d["seed"] for d in artifact["results"][0]["scenario_details"] if "seed" in d]
    assert seeds and any(isinstance(s, str) for s in seeds)  # 63-bit seeds arrive whole


def _same(reported: Any, artifact: Any) -> bool:
    """Equal up to the int/float of whole numbers (a data part carries every number as a double)."""
    if isinstance(reported, dict) and isinstance(artifact, dict):
        assert reported.keys() == artifact.keys()
        return all(_same(reported[k], artifact[k]) for k in reported)
    if isinstance(reported, list) and isinstance(artifact, list):
        assert len(reported) == len(artifact)
        return all(_same(a, b) for a, b in zip(reported, artifact, strict=True))
    if isinstance(reported, int) and not isinstance(reported, bool) and abs(reported) > 2**53:
        assert artifact == str(reported)  # a 63-bit seed as its exact decimal string (a double would lose digits)
    else:
        assert reported == artifact, (reported, artifact)
    return True


def test_bad_requests_are_json_rpc_errors_and_no_task_runs():
    with ServerThread(lambda url: green_app(url)) as green:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": json.dumps({"config": {}})}]}}}
        answer = httpx.post(green.url + "/", json=body, headers={"A2A-Version": "1.0"}).json()
    assert answer["error"]["code"] == -32602 and "name the agent to assess" in answer["error"]["message"]


def _fuzz_bodies(rng: random.Random) -> list[bytes]:
    valid = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "{}"}]}}}
    atoms: list[Any] = [None, True, 0, -1, 2**70, 1.5, "", "x" * 300, [], {}, [1, [2, [3]]], {"a": {"b": {}}}]
    bodies = [b"", b"{", b"[]", b"null", b"\xff\xfe", b'{"jsonrpc": "2.0"}', json.dumps([valid, valid]).encode(),
              json.dumps({"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod"}).encode(),
              b"[" * 5000 + b"]" * 5000, b'{"a": "' + b"x" * (MAX_REQUEST_BYTES + 10) + b'"}']
    paths = [("jsonrpc",), ("id",), ("method",), ("params",), ("params", "message"), ("params", "message", "parts"),
             ("params", "message", "role"), ("params", "message", "parts", 0), ("params", "configuration")]
    for _ in range(150):
        body = json.loads(json.dumps(valid))
        path = rng.choice(paths)
        target = body
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = rng.choice(atoms)
        bodies.append(json.dumps(body).encode())
    return bodies


def test_fuzzed_json_rpc_never_crashes_the_green_server():
    rng = random.Random(13)
    with ServerThread(lambda url: green_app(url)) as green:
        statuses = []
        with httpx.Client(headers={"A2A-Version": "1.0", "Content-Type": "application/json"}, timeout=20) as client:
            for body in _fuzz_bodies(rng):
                response = client.post(green.url + "/", content=body)
                statuses.append(response.status_code)
                assert response.status_code < 500, (body[:200], response.status_code, response.text[:300])
                if response.status_code == 200 and response.content.startswith(b"{"):
                    answer = response.json()
                    assert "error" in answer or "result" in answer
            assert client.get(green.url + "/health").json()["status"] == "ok"
    assert 413 in statuses and 200 in statuses


def test_a_shard_request_runs_only_its_share(tmp_path: Path):
    chosen = RETAIL[:4]
    with serve() as purple, ServerThread(lambda url: green_app(url, results_dir=tmp_path)) as green:
        for index in range(2):
            payload = {"participants": {"agent": purple}, "shard_index": index, "num_shards": 2,
                       "config": {"scenario_ids": chosen, "num_trials": 2}}  # fmt: skip
            events = assess(green.url, payload, as_text=False)
            artifact = next(e["artifactUpdate"]["artifact"]["parts"][0]["data"] for e in events if "artifactUpdate" in e)
            assert artifact["results"][0]["max_score"] == 4
            assert not artifact["pibench_validity"]["valid"]  # one shard alone is not the run
    files = sorted(str(p) for p in tmp_path.glob("*.json"))
    assert len(files) == 2
    assert report_command(files, results=str(tmp_path / "merged.out")) == 0  # the merge of both shards is the run
    merged = json.loads((tmp_path / "merged.out").read_text())
    assert len(merged["rows"]) == 8 and {(r["scenario_id"], r["trial"]) for r in merged["rows"]} == {
        (sid, t) for sid in chosen for t in (0, 1)
    }


def test_a_blocking_request_gets_the_finished_task_with_its_artifact():
    import asyncio
    import uuid

    from a2a.client import ClientConfig, create_client
    from a2a.types import a2a_pb2
    from google.protobuf.json_format import MessageToDict

    with serve() as purple, ServerThread(lambda url: green_app(url)) as green:
        async def go() -> list[dict[str, Any]]:
            client = await create_client(green.url, client_config=ClientConfig(streaming=False))
            message = a2a_pb2.Message(message_id=uuid.uuid4().hex, role=a2a_pb2.Role.ROLE_USER)
            message.parts.add().data.struct_value.update({"participants": {"agent": purple},
                                                          "config": {"scenario_ids": RETAIL[:2]}})
            request = a2a_pb2.SendMessageRequest(message=message)
            events = [MessageToDict(e) async for e in client.send_message(request)]
            await client.close()
            return events

        (event,) = asyncio.run(go())
    task = event["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    artifact = json.loads(task["artifacts"][0]["parts"][1]["text"])
    assert artifact["results"][0]["score"] == 2 and artifact["participants"] == {"agent": purple}  # no id: its URL


def _send_raw(green_url: str, payload: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": uuid4_hex(), "role": "ROLE_USER", "parts": [{"text": json.dumps(payload)}]}}}
    return httpx.post(green_url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60).json()


def uuid4_hex() -> str:
    import uuid

    return uuid.uuid4().hex


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://purple.internal:9019", True),
        ("http://purple.internal:9019/team/a", True),
        ("http://purple.internal:9020", False),  # another port
        ("https://purple.internal:9019", False),  # another scheme
        ("http://purple.internal:9019@10.0.0.5/", False),  # user information: the host is 10.0.0.5
        ("http://purple.internal.evil.example:9019", False),
        ("http://169.254.169.254/latest", False),
    ],
)
def test_allowed_urls_are_compared_parsed(url, allowed):
    from pytest_pibench.a2a.assessment import url_allowed

    assert url_allowed(url, ["http://purple.internal:9019"]) is allowed


def test_only_allowed_agent_urls_are_called():
    with ServerThread(lambda url: green_app(url, allowed_urls=["http://purple.internal:9019"])) as green:
        answer = _send_raw(green.url, {"participants": {"agent": "http://169.254.169.254/latest"}})
        refused_user = _send_raw(green.url, {"participants": {"agent": "http://purple.internal:9019"},
                                             "config": {"user_url": "http://10.0.0.1:80"}})  # fmt: skip
        userinfo = _send_raw(green.url, {"participants": {"agent": "http://purple.internal:9019@10.0.0.5/"}})
    assert answer["error"]["code"] == -32602 and "is not an agent this server may call" in answer["error"]["message"]
    assert "http://10.0.0.1:80 is not an agent this server may call" in refused_user["error"]["message"]
    assert "must not hold user information" in userinfo["error"]["message"]


def test_a_card_cannot_send_the_client_elsewhere():
    """A card naming another address (port 9, where nothing listens): requests go to the origin the caller named."""
    from a2a_servers import oracle_for

    from pytest_pibench import resolve_agent, run_one
    from pytest_pibench.a2a.purple import purple_app

    scenario = next(s for s in bundled() if s.meta.domain == "retail")
    with ServerThread(lambda url: purple_app(oracle_for, name="o", url="http://127.0.0.1:9")) as named:
        row = run_one(scenario, resolve_agent(f"a2a:{named.url}"))
    assert row["all_passed"], row.get("error")


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ({"seed": float("nan")}, "config.seed must be a whole number"),
        ({"seed": float("inf")}, "config.seed must be a whole number"),
        ({"scenario_ids": [[1]]}, "config.scenario_ids must be a list of scenario ids"),
        ({"domains": [{"a": 1}]}, "config.domains must be a list of domain names"),
        ({"user_model": "openai/gpt-4o-mini"}, "is not offered here; this server allows none"),
    ],
)
def test_odd_values_are_invalid_params_not_internal_errors(config, fragment):
    with ServerThread(lambda url: green_app(url)) as green:
        body = json.dumps({"participants": {"agent": URL}, "config": config}, allow_nan=True)
        answer = _send_raw_text(green.url, body)
    assert answer["error"]["code"] == -32602 and fragment in answer["error"]["message"], answer


def _send_raw_text(green_url: str, text: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": uuid4_hex(), "role": "ROLE_USER", "parts": [{"text": text}]}}}
    return httpx.post(green_url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60).json()


def test_offered_user_models_upstream_aliases_and_shards_past_the_end():
    assessment = parse_request({"participants": {"agent": URL}, "config": {"user_model": "openai/gpt-4o-mini"}},
                               user_models=["openai/gpt-4o-mini"])  # fmt: skip
    assert assessment.user == "litellm:openai/gpt-4o-mini"
    alias = parse_request({"participants": {"agent": URL},
                           "config": {"scenario_scope": "domain", "scenario_domain": "retail_refund_sop_v1"}})
    assert len(alias.items) == len(RETAIL)
    late = parse_request({"participants": {"agent": URL}, "shard_index": 7, "num_shards": 8,
                          "config": {"scenario_ids": RETAIL[:3]}})  # fmt: skip
    assert late.items == () and late.total_before_shard == 3


def test_a_request_becomes_the_run_config_a_local_run_of_the_same_options_has():
    config = {"judge_model": "openai/gpt-4o-mini", "judge_votes": 3, "max_steps": 25, "observer_mode": "hard_gate",
              "episode_timeout": 90, "num_trials": 2, "seed": 3, "scenario_ids": RETAIL[:2]}  # fmt: skip
    run = parse_request({"participants": {"agent": URL}, "config": config}, judge_models=["openai/gpt-4o-mini"])
    assert run.judge == "litellm:openai/gpt-4o-mini" and run.judge_votes == 3
    run_config = run.run_config()
    assert run_config.agents == (f"a2a:{URL}",) and run_config.trials == 2 and run_config.seed == 3
    assert (run_config.limits.max_steps, run_config.limits.observer_mode, run_config.limits.timeout) == (
        25, "hard_gate", 90.0)
    assert run_config.judge == "litellm:openai/gpt-4o-mini" and run_config.agent_args == {"timeout": 120.0}
    defaults = parse_request({"participants": {"agent": URL}}).run_config()
    assert defaults.limits == EpisodeLimits() and defaults.judge is None  # the plugin's defaults, not the server's own


def test_a_shard_past_the_end_completes_with_an_empty_result():
    with serve() as purple, ServerThread(lambda url: green_app(url)) as green:
        events = assess(green.url, {"participants": {"agent": purple}, "shard_index": 5, "num_shards": 6,
                                    "config": {"scenario_ids": RETAIL[:2]}}, as_text=True)  # fmt: skip
    states = [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e]
    artifact = next(e["artifactUpdate"]["artifact"]["parts"][0]["data"] for e in events if "artifactUpdate" in e)
    assert states[-1] == "TASK_STATE_COMPLETED" and artifact["results"][0]["max_score"] == 0


def test_tasks_are_not_listed_and_the_store_is_bounded():
    from pytest_pibench.a2a._green_executor import BoundedTaskStore

    with ServerThread(lambda url: green_app(url)) as green:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
        answer = httpx.post(green.url + "/", json=body, headers={"A2A-Version": "1.0"}).json()
    assert "error" in answer and "not listed" in answer["error"]["message"]

    async def fill() -> list[bool]:
        from a2a.server.context import ServerCallContext
        from a2a.types import a2a_pb2

        store, context = BoundedTaskStore(limit=3), ServerCallContext()
        for i in range(5):
            await store.save(a2a_pb2.Task(id=f"t{i}", context_id="c"), context)
        return [await store.get(f"t{i}", context) is not None for i in range(5)]

    import asyncio

    assert asyncio.run(fill()) == [False, False, True, True, True]

    async def heavy() -> tuple[list[bool], int]:
        from a2a.server.context import ServerCallContext
        from a2a.types import a2a_pb2

        store, context = BoundedTaskStore(limit=100, max_bytes=250_000), ServerCallContext()
        for i in range(5):  # each about 100 kB, like a finished assessment's artifact, scaled down
            task = a2a_pb2.Task(id=f"t{i}", context_id="c")
            task.artifacts.add().parts.add().text = "x" * 100_000
            await store.save(task, context)
        return [await store.get(f"t{i}", context) is not None for i in range(5)], store.bytes

    kept, weight = asyncio.run(heavy())
    assert kept == [False, False, False, True, True] and weight <= 250_000  # bounded by bytes, newest kept


def test_assessments_beyond_the_limit_are_refused_while_one_runs():
    import threading
    import time

    from a2a_servers import oracle_for

    def slow(context: Any, tools: Any) -> Any:
        agent = oracle_for(context, tools)
        generate = agent.generate

        def slowly(message: Any, state: Any) -> Any:
            time.sleep(0.3)
            return generate(message, state)

        agent.generate = slowly
        return agent

    with serve(slow) as purple, ServerThread(lambda url: green_app(url, max_assessments=1)) as green:
        request = {"participants": {"agent": purple}, "config": {"scenario_ids": RETAIL[:1]}}
        first: dict[str, Any] = {}
        worker = threading.Thread(target=lambda: first.update(_send_raw(green.url, request)))
        worker.start()
        time.sleep(0.5)  # the first assessment is running (its episode takes seconds)
        second = _send_raw(green.url, request)
        worker.join(60)
    assert "its limit: try again later" in second["error"]["message"]
    assert first["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.slow
def test_a_cancelled_assessment_keeps_its_slot_until_its_episodes_end(tmp_path: Path):
    import threading
    import time

    from a2a_servers import oracle_for

    def slow(context: Any, tools: Any) -> Any:
        agent = oracle_for(context, tools)
        generate = agent.generate

        def slowly(message: Any, state: Any) -> Any:
            time.sleep(0.4)
            return generate(message, state)

        agent.generate = slowly
        return agent

    green_app_ = lambda url: green_app(url, max_assessments=1, results_dir=tmp_path)  # noqa: E731
    with serve(slow) as purple, ServerThread(green_app_) as green:
        request = {"participants": {"agent": purple}, "config": {"scenario_ids": RETAIL[:3], "concurrency": 1}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": {
            "messageId": uuid4_hex(), "role": "ROLE_USER", "parts": [{"text": json.dumps(request)}]}}}
        task_id: list[str] = []

        def stream() -> None:
            with httpx.stream("POST", green.url + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=60) as r:
                for line in r.iter_lines():
                    if line.startswith("data:") and not task_id:
                        result = json.loads(line[5:])["result"]
                        task_id.append(result.get("task", {}).get("id") or result["statusUpdate"]["taskId"])

        reader = threading.Thread(target=stream, daemon=True)
        reader.start()
        deadline = time.monotonic() + 20
        while not task_id and time.monotonic() < deadline:
            time.sleep(0.05)
        cancel = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task_id[0]}}
        httpx.post(green.url + "/", json=cancel, headers={"A2A-Version": "1.0"}, timeout=30)
        refused = _send_raw(green.url, request)  # the cancelled run's episode is still running
        assert "its limit: try again later" in refused["error"]["message"]
        accepted = None
        while time.monotonic() < deadline + 20:  # once it ends (no new episode starts), the slot is free
            answer = _send_raw(green.url, {**request, "config": {"scenario_ids": RETAIL[:1]}})
            if "result" in answer:
                accepted = answer
                break
            time.sleep(0.3)
    assert accepted is not None and accepted["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    from pytest_pibench.results.document import read_results

    partial = read_results(next(tmp_path.glob(f"{task_id[0]}*")))  # the cancelled run's journal, kept
    assert partial["complete"] is False and len(partial["rows"]) < 3  # no episode started after the cancel


def test_a_streamed_body_without_a_length_over_the_limit_gets_413_not_a_json_rpc_error():
    def chunks():
        for _ in range(64):  # 1 MiB in 16 KiB chunks, no Content-Length
            yield b"x" * 16384

    with ServerThread(lambda url: green_app(url)) as green:
        refused = httpx.post(green.url + "/", content=chunks(), headers={"content-type": "application/json"})
        small = httpx.post(green.url + "/", content=iter([b'{"jsonrpc": "2.0", "id": 1, ', b'"method": "Nope"}']),
                           headers={"content-type": "application/json"})  # fmt: skip
    assert refused.status_code == 413 and refused.text == "request body too large"
    assert small.status_code == 200 and small.json()["error"]["code"] == -32601  # read whole, then answered


def test_requests_choose_from_the_scenarios_loaded_once_and_refused_ones_load_nothing(monkeypatch):
    from pytest_pibench.a2a import assessment

    assessment.bundled_index()  # what the server does before it answers
    loads: list[object] = []
    monkeypatch.setattr(assessment, "load_scenario", lambda path: loads.append(path))
    for config in ({"domains": ["banking"]}, {"num_trials": 99}, {"scenario_ids": ["NOPE"]}, {"domains": ["retail"]}):
        try:
            parse_request({"participants": {"agent": URL}, "config": config})
        except AssessmentRequestError:
            pass
    assert loads == []  # neither refused nor accepted requests read a scenario file


def test_the_card_has_the_fields_a_0_3_client_requires_and_0_3_requests_are_served():
    with ServerThread(lambda url: green_app(url)) as green:
        legacy = httpx.get(green.url + "/.well-known/agent.json").json()
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": json.dumps({"config": {}})}]}}}  # fmt: skip
        answer = httpx.post(green.url + "/", json=body).json()
    assert legacy["url"] == green.url and legacy["protocolVersion"] == "0.3"
    assert legacy["preferredTransport"] == "JSONRPC"
    assert {i["protocolVersion"] for i in legacy["supportedInterfaces"]} == {"1.0", "0.3"}
    assert answer["error"]["code"] == -32602 and "participants" in answer["error"]["message"]  # read as 0.3, refused
