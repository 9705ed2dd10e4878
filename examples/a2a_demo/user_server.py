"""A simulated user over A2A: the scripted user (default, no model) or the litellm user.

    python examples/a2a_demo/user_server.py --port 9020                          # scripted
    python examples/a2a_demo/user_server.py --kind litellm --model openai/gpt-4o-mini --port 9020
"""

from __future__ import annotations

import argparse
from typing import Any

from purple_server import key_values

from pytest_pibench.a2a.serving import serve_forever
from pytest_pibench.a2a.user import user_app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["scripted", "litellm"], default="scripted")
    parser.add_argument("--model", default="openai/gpt-4o-mini", help="litellm model id (with --kind litellm)")
    parser.add_argument("--user-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9020)
    args = parser.parse_args()
    options = key_values(args.user_arg)

    def make_user() -> Any:
        if args.kind == "scripted":
            from pytest_pibench.participants.users import ScriptedUser

            return ScriptedUser()
        from pytest_pibench.participants.llm.user import LiteLLMUser

        return LiteLLMUser(args.model, options)

    serve_forever(lambda url: user_app(make_user, name=f"{args.kind}-user", url=url), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
