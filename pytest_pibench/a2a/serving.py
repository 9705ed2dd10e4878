"""Run an ASGI app with uvicorn on a background thread: the tests' and the demo's servers.

The socket is bound first, so the app (and the URL its agent card
advertises) can be built knowing the port, also when the port is 0 (any free one)::

    with ServerThread(lambda url: purple_app(make_agent, name="oracle", url=url)) as server:
        run_against(server.url)
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

__all__ = ["ServerThread", "listening_socket", "serve_forever"]


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket for uvicorn, with ``TCP_NODELAY`` (which accepted connections inherit).

    uvicorn writes a response's head and body separately; with Nagle's algorithm
    the body waits for the client's delayed ACK, about 40 ms a request. It listens
    at once, so a client that connects as soon as the server says where it
    serves is queued until uvicorn accepts, never refused.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def serve_forever(build_app: Callable[[str], Any], host: str = "127.0.0.1", port: int = 0,
                  url: str | None = None) -> None:
    """Serve ``build_app(url)`` on ``host:port`` until interrupted (the command-line servers use this).

    ``url`` is what the app advertises (its agent card); by default ``http://host:port``.
    """
    sock = listening_socket(host, port)
    bound = sock.getsockname()[1]
    app = build_app(url or f"http://{host}:{bound}")
    print(f"serving on http://{host}:{bound}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off")).run(sockets=[sock])


class ServerThread:
    """One uvicorn server on ``host:port`` (port 0: a free one), serving ``build_app(url)``."""

    def __init__(self, build_app: Callable[[str], Any], host: str = "127.0.0.1", port: int = 0) -> None:
        self.build_app = build_app
        self.host = host
        self.port = port
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 10.0) -> ServerThread:
        sock = listening_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        self.url = f"http://{self.host}:{self.port}"
        config = uvicorn.Config(self.build_app(self.url), log_level="warning", lifespan="off")
        server = self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server on {self.url} did not start")
            time.sleep(0.01)
        return self

    def request_stop(self) -> None:
        """Ask the server to stop after the requests in progress (returns at once; safe from a handler)."""
        if self._server is not None:
            self._server.should_exit = True

    def stop(self) -> None:
        """Stop the server and wait for its thread."""
        self.request_stop()
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
