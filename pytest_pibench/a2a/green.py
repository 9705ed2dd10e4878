"""``pi-bench-green``: the benchmark as an A2A "green" server that assesses a remote purple agent.

A request (see :mod:`~pytest_pibench.a2a.assessment` for its shape) becomes an
A2A task: ``submitted``, then ``working`` with one status update per finished
episode (a data part ``{"done", "total", "scenario_id", "trial", "passed"}``),
then ``completed`` with the leaderboard artifact (the AgentBeats results shape
``pi report`` writes) as the task's artifact (a data part, and the exact JSON as a
text part), or ``failed`` with the reason. A request the server will not run is
a JSON-RPC "invalid params" error before any episode runs; a malformed JSON-RPC
body gets the SDK's JSON-RPC error; a body over :data:`MAX_REQUEST_BYTES` gets
HTTP 413. The bounds on what runs are in :mod:`~pytest_pibench.a2a._green_executor`.

    pi-bench-green --host 127.0.0.1 --port 9009 [--card-url URL] [--max-concurrency 8] [--results-dir DIR]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.types import a2a_pb2
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pytest_pibench.a2a._green_executor import BoundedTaskStore, GreenExecutor, request_payload
from pytest_pibench.a2a.assessment import bundled_index
from pytest_pibench.a2a.serving import serve_forever
from pytest_pibench.inputs import MAX_CONCURRENCY, argument_type, http_url, whole_number
from pytest_pibench.vocab import __version__

__all__ = ["MAX_REQUEST_BYTES", "GreenExecutor", "green_app", "green_card", "main", "request_payload"]

LEGACY_CARD_PATH = "/.well-known/agent.json"
"""Where A2A 0.x clients (and upstream's tooling) look for the card."""
MAX_REQUEST_BYTES = 64 * 1024
"""Largest JSON-RPC body the green server reads; an assessment request is a few hundred bytes."""


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
    # The same endpoint in 0.3's JSON-RPC (served: enable_v0_3_compat): with it the SDK also writes the
    # card's 0.3 fields (url, protocolVersion, preferredTransport), which 0.3 clients require.
    card.supported_interfaces.add(url=url, protocol_binding="JSONRPC", protocol_version="0.3")
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
        # The body is read here, whole and bounded, before the app sees it: an app that reads it itself
        # (the SDK's JSON-RPC route) would turn the refusal into its own error reply.
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            if len(body) > self.limit:
                return await Response("request body too large", status_code=413)(scope, receive, send)
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: the disconnect, when it comes
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def green_app(
    url: str,
    *,
    max_concurrency: int = 8,
    results_dir: Path | None = None,
    max_assessments: int = 4,
    allowed_urls: Sequence[str] = (),
    user_models: Sequence[str] = (),
    judge_models: Sequence[str] = (),
) -> ASGIApp:
    """The green server: card at the well-known path, JSON-RPC at ``/``, ``/health``.

    The bundled scenarios are loaded here, once, before the server answers: no request, refused
    or not, loads a scenario file on the server's event loop.
    """
    bundled_index()
    card = green_card(url)
    executor = GreenExecutor(
        max_concurrency=max_concurrency,
        results_dir=results_dir,
        max_assessments=max_assessments,
        allowed_urls=allowed_urls,
        user_models=user_models,
        judge_models=judge_models,
    )
    handler = DefaultRequestHandler(agent_executor=executor, task_store=BoundedTaskStore(), agent_card=card)

    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    routes = [
        *create_agent_card_routes(card),
        *create_agent_card_routes(card, card_url=LEGACY_CARD_PATH),  # where 0.3 clients look
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),  # message/send of 0.3 gateways
        Route("/health", health, methods=["GET"]),
    ]
    return _BodyLimit(Starlette(routes=routes), MAX_REQUEST_BYTES)


_url = argument_type(http_url, "URL")
"""An http(s) URL flag: one that cannot be a URL (port 99999, host 256.1.1.1) is a usage error (exit 2)."""


def main(argv: Sequence[str] | None = None) -> None:
    """``pi-bench-green``: serve the benchmark over A2A until interrupted."""
    parser = argparse.ArgumentParser(prog="pi-bench-green", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 only when asked)")
    parser.add_argument("--port", type=argument_type(lambda t: whole_number(t, 0, 65535), "port"), default=9009,
                        help="port to listen on, 0 for any free one (default 9009)")  # fmt: skip
    parser.add_argument("--card-url", type=_url, help="the URL the card advertises (behind a proxy, in a container)")
    parser.add_argument("--max-concurrency", "--concurrency", dest="max_concurrency", type=int, default=8,
                        help="episodes in flight per assessment, at most (--concurrency: the name AgentBeats' "
                             "generated start command uses)")  # fmt: skip
    parser.add_argument("--results-dir", type=Path, help="keep each assessment's results file here")
    parser.add_argument("--max-assessments", type=int, default=4, help="assessments running at once, at most")
    parser.add_argument(
        "--allow-url", action="append", default=[], metavar="URL", type=_url,
        help="only agents (and users) at this origin, under this path, may be assessed (repeatable; default: any)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-user-model", action="append", default=[], metavar="MODEL",
        help="a litellm model callers may ask for as user simulator, on this server's keys (default: none)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-judge-model", action="append", default=[], metavar="MODEL",
        help="a litellm model callers may ask for as Tier-2 judge, on this server's keys (default: none)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not 1 <= args.max_concurrency <= MAX_CONCURRENCY:
        parser.error(f"--max-concurrency must be between 1 and {MAX_CONCURRENCY}")
    if not 1 <= args.max_assessments <= 64:
        parser.error("--max-assessments must be between 1 and 64")
    serve_forever(
        lambda url: green_app(url, max_concurrency=args.max_concurrency, results_dir=args.results_dir,
                              max_assessments=args.max_assessments, allowed_urls=args.allow_url,
                              user_models=args.allow_user_model, judge_models=args.allow_judge_model),
        host=args.host, port=args.port, url=args.card_url,
    )  # fmt: skip



if __name__ == "__main__":
    main()
