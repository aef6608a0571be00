"""``odyssey view --serve``: the page over HTTP on the loopback interface, rebuilt on every load.

Only ``127.0.0.1`` is ever bound (there is no option to choose another address): the page shows
everything a run recorded, which is nobody else's business, and the server exists only so that a
browser on the same machine can follow a run in progress by reloading. It serves exactly one page, at
``/``; there is no file system behind it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from odyssey_agents.errors import OdysseyError
from odyssey_eval.viewer.build import build_page

__all__ = ["HOST", "make_server", "serve"]

HOST = "127.0.0.1"


def make_server(build: Callable[[], str], port: int = 0) -> ThreadingHTTPServer:
    """A server (not yet serving) whose ``/`` is ``build()``'s page; ``port`` 0 takes a free port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] not in ("/", "/view.html"):
                self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")
                return
            try:
                body = build().encode("utf-8")
            except OdysseyError as exc:  # the run directory went away or was damaged since
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, f"odyssey view: {exc}\n".encode(), "text/plain")
                return
            self._send(HTTPStatus.OK, body, "text/html")

        def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    try:
        return ThreadingHTTPServer((HOST, port), Handler)
    except OSError as exc:
        raise OdysseyError(f"cannot serve on {HOST}:{port}: {exc.strerror or exc}; try another --port") from None


def serve(run_dir: str | Path, *, port: int = 0, open_browser: bool = False) -> None:
    """Serve ``run_dir``'s page until interrupted."""
    server = make_server(lambda: build_page(run_dir), port)
    url = f"http://{HOST}:{server.server_address[1]}/"
    print(f"serving {url} (Ctrl-C to stop; reload the page to read the run again)", flush=True)
    if open_browser:
        import webbrowser

        threading.Timer(0.3, webbrowser.open, args=(url,)).start()
    try:
        server.serve_forever()
    finally:
        server.server_close()
