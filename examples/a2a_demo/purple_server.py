"""A purple agent over A2A: the project's litellm reference agent, with the policy-bootstrap extension.

    python examples/a2a_demo/purple_server.py --model openai/gpt-4o-mini --port 9019
    python examples/a2a_demo/purple_server.py --model openai/my-model --agent-arg api_base=http://127.0.0.1:8000/v1

Needs the extras ``[a2a,llm]`` and the model provider's key in the environment
(``OPENAI_API_KEY`` ...). ``--agent-arg KEY=VALUE`` (repeatable, values parsed as
JSON when they parse) goes to litellm, as ``--pibench-agent-arg`` does.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from pytest_pibench.a2a.purple import purple_app
from pytest_pibench.a2a.serving import serve_forever
from pytest_pibench.participants.llm.agent import LiteLLMAgent


def key_values(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            out[key.strip()] = json.loads(raw)
        except ValueError:
            out[key.strip()] = raw
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="openai/gpt-4o-mini", help="litellm model id")
    parser.add_argument("--agent-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9019)
    parser.add_argument("--card-url", help="the URL the agent card advertises (behind a proxy)")
    parser.add_argument("--no-bootstrap", action="store_true", help="do not declare the bootstrap extension")
    args = parser.parse_args()
    options = key_values(args.agent_arg)

    def make_agent(context: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LiteLLMAgent:
        return LiteLLMAgent(args.model, options)

    serve_forever(
        lambda url: purple_app(make_agent, name=f"litellm:{args.model}", url=url, bootstrap=not args.no_bootstrap),
        host=args.host,
        port=args.port,
        url=args.card_url,
    )


if __name__ == "__main__":
    main()
