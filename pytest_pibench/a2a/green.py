"""``pi-bench-green``: the benchmark as an A2A "green" server that assesses a remote purple agent.

A request (see :mod:`~pytest_pibench.a2a.assessment` for its shape) becomes an
A2A task: ``submitted``, then ``working`` with one status update per finished
episode (a data part ``{"done", "total", "scenario_id", "trial", "passed"}``),
then ``completed`` with the leaderboard artifact (the AgentBeats results shape
``pi report`` writes) as the task's artifact (a data part, and the exact JSON as a
text part), or ``failed`` with the reason. A
request the server will not run is a JSON-RPC "invalid params" error before any
task exists; a malformed JSON-RPC body gets the SDK's JSON-RPC error; a body over
:data:`MAX_REQUEST_BYTES` gets HTTP 413.

    pi-bench-green --host 127.0.0.1 --port 9009 [--card-url URL] [--max-concurrency 8] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from a2a.helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2
from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pytest_pibench.a2a.assessment import Assessment, AssessmentRequestError, parse_request, run_assessment
from pytest_pibench.a2a.serving import serve_forever
from pytest_pibench.participants.a2a.wire import narrow_numbers
from pytest_pibench.results.document import Journal, atomic_write_json, journal_path
from pytest_pibench.results.leaderboard import run_artifacts
from pytest_pibench.results.types import ResultRow
from pytest_pibench.vocab import __version__

__all__ = ["MAX_REQUEST_BYTES", "GreenExecutor", "green_app", "green_card", "main"]

MAX_REQUEST_BYTES = 64 * 1024
"""Largest JSON-RPC body the green server reads; an assessment request is a few hundred bytes."""


def request_payload(message: a2a_pb2.Message | None) -> Any:
    """The assessment request in a message: its first data part, else JSON in its first text part."""
    parts = list(message.parts) if message is not None else []
    for part in parts:
        if part.HasField("data"):
            return narrow_numbers(MessageToDict(part.data))
    for part in parts:
        if part.text.strip():
            try:
                return json.loads(part.text)
            except ValueError as exc:
                raise InvalidParamsError(message=f"the text part is not a JSON assessment request: {exc}") from None
    raise InvalidParamsError(message="send the assessment request as a data part or as JSON in a text part")


class GreenExecutor(AgentExecutor):
    """Runs one assessment per request, on a worker thread, streaming progress as status updates."""

    def __init__(
        self,
        *,
        max_concurrency: int = 8,
        results_dir: Path | None = None,
        max_assessments: int = 4,
        allowed_urls: Sequence[str] = (),
    ) -> None:
        self.max_concurrency = max_concurrency
        self.results_dir = results_dir
        self.max_assessments = max_assessments
        self.allowed_urls = tuple(allowed_urls)
        self._running = 0

    def _check_urls(self, *urls: str) -> None:
        """With ``--allow-url`` prefixes given, every URL the request names must start with one."""
        for url in urls:
            if self.allowed_urls and not any(url.startswith(prefix) for prefix in self.allowed_urls):
                raise InvalidParamsError(message=f"{url} is not an agent this server may call (see --allow-url)")

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        try:
            assessment = parse_request(request_payload(context.message), max_concurrency=self.max_concurrency)
        except AssessmentRequestError as exc:
            raise InvalidParamsError(message=str(exc)) from None
        self._check_urls(assessment.purple_url, *([assessment.user[4:]] if assessment.user.startswith("a2a:") else []))
        if self._running >= self.max_assessments:
            raise InvalidParamsError(
                message=f"the server is running {self._running} assessments, its limit: try again later"
            )
        self._running += 1
        try:
            await self._assess(context, event_queue, assessment)
        finally:
            self._running -= 1

    async def _assess(self, context: RequestContext, event_queue: EventQueue, assessment: Assessment) -> None:
        task = context.current_task
        if task is None:
            assert context.message is not None  # parse_request read it
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        total = len(assessment.items)
        await updater.start_work(updater.new_agent_message([new_text_part(f"0/{total} episodes done")]))
        loop = asyncio.get_running_loop()

        def progress(row: ResultRow, done: int, total: int) -> None:
            update = {"done": done, "total": total, "scenario_id": row.get("scenario_id"), "trial": row.get("trial"),
                      "passed": bool(row.get("all_passed"))}  # fmt: skip
            message = updater.new_agent_message([new_text_part(f"{done}/{total} episodes done"), new_data_part(update)])
            asyncio.run_coroutine_threadsafe(updater.update_status(a2a_pb2.TASK_STATE_WORKING, message), loop).result()

        journal = None
        if self.results_dir is not None:
            journal = Journal(journal_path(self.results_dir / f"{task.id}.json"))
            journal.open({"task_id": task.id, "agent_id": assessment.agent_id})
            journal.planned(total)
        try:
            document = await asyncio.to_thread(run_assessment, assessment, progress, journal=journal)
        except Exception as exc:  # the server must answer, whatever broke
            await updater.failed(updater.new_agent_message([new_text_part(f"assessment failed: {exc}")]))
            if journal is not None:
                journal.close(remove=False)
            return
        if journal is not None and self.results_dir is not None:
            atomic_write_json(self.results_dir / f"{task.id}.json", document)
            journal.close(remove=True)
        artifacts, problems = run_artifacts(document, domain=assessment.label)
        (artifact,) = artifacts.values()
        # The data part is what platforms read; it carries numbers as doubles (a 63-bit seed loses
        # digits), so the exact JSON goes along as a text part.
        exact = new_text_part(json.dumps(artifact), media_type="application/json")
        await updater.add_artifact([new_data_part(artifact), exact], name="pi-bench assessment results")
        summary = f"{total} episodes assessed"
        if problems:
            summary += f"; NOT VALID FOR THE LEADERBOARD: {'; '.join(problems)}"
        await updater.complete(updater.new_agent_message([new_text_part(summary)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise UnsupportedOperationError(message="an assessment cannot be cancelled once it runs")


def green_card(url: str) -> a2a_pb2.AgentCard:
    """The green server's agent card: what it assesses, streaming, one skill."""
    card = a2a_pb2.AgentCard(
        name="pi-bench",
        description=(
            "pi-bench policy-compliance benchmark (pytest-pibench): assesses an A2A agent on enterprise "
            "scenarios (FINRA/AML finance, retail refunds and returns, IT helpdesk access control) under a "
            "written policy, with deterministic checks over its tool calls and the final state."
        ),
        version=__version__,
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json"],
    )
    card.supported_interfaces.add(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
    card.capabilities.streaming = True
    card.skills.add(
        id="policy_compliance_assessment",
        name="Policy-compliance assessment",
        description=(
            'Send {"participants": {"agent": "<purple agent URL>"}, "config": {"domains": [...], "num_trials": N, '
            '"seed": S}}; progress streams as status updates and the leaderboard results come back as the artifact.'
        ),
        tags=["benchmark", "policy", "compliance", "finra", "aml", "retail", "helpdesk"],
        examples=['{"participants": {"agent": "http://127.0.0.1:9019"}, "config": {"domains": ["retail"]}}'],
    )
    return card


class _BodyLimit:
    """Refuses request bodies over ``limit`` bytes with HTTP 413, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await Response("request body too large", status_code=413)(scope, receive, send)
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, bounded, send)
        except _TooLarge:
            await Response("request body too large", status_code=413)(scope, receive, send)


class _TooLarge(Exception):
    pass


def green_app(
    url: str,
    *,
    max_concurrency: int = 8,
    results_dir: Path | None = None,
    max_assessments: int = 4,
    allowed_urls: Sequence[str] = (),
) -> ASGIApp:
    """The green server: card at the well-known path, JSON-RPC at ``/``, ``/health``."""
    card = green_card(url)
    executor = GreenExecutor(
        max_concurrency=max_concurrency,
        results_dir=results_dir,
        max_assessments=max_assessments,
        allowed_urls=allowed_urls,
    )
    handler = DefaultRequestHandler(
        agent_executor=executor,
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )

    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        Route("/health", health, methods=["GET"]),
    ]
    return _BodyLimit(Starlette(routes=routes), MAX_REQUEST_BYTES)


def main(argv: Sequence[str] | None = None) -> None:
    """``pi-bench-green``: serve the benchmark over A2A until interrupted."""
    parser = argparse.ArgumentParser(prog="pi-bench-green", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 only when asked)")
    parser.add_argument("--port", type=int, default=9009)
    parser.add_argument("--card-url", help="the URL the agent card advertises (behind a proxy or in a container)")
    parser.add_argument("--max-concurrency", type=int, default=8, help="episodes in flight per assessment, at most")
    parser.add_argument("--results-dir", type=Path, help="keep each assessment's results file here")
    parser.add_argument("--max-assessments", type=int, default=4, help="assessments running at once, at most")
    parser.add_argument(
        "--allow-url", action="append", default=[], metavar="PREFIX",
        help="only agents (and users) whose URL starts with PREFIX may be assessed (repeatable; default: any)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not 1 <= args.max_concurrency <= 256:
        parser.error("--max-concurrency must be between 1 and 256")
    if not 1 <= args.max_assessments <= 64:
        parser.error("--max-assessments must be between 1 and 64")
    serve_forever(
        lambda url: green_app(url, max_concurrency=args.max_concurrency, results_dir=args.results_dir,
                              max_assessments=args.max_assessments, allowed_urls=args.allow_url),
        host=args.host, port=args.port, url=args.card_url,
    )  # fmt: skip



if __name__ == "__main__":
    main()
