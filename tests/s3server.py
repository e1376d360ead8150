"""A real S3-protocol server for tests and benchmarks: moto's S3 (``moto[server]`` from PyPI) on loopback."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

S3_ACCESS_KEY, S3_SECRET_KEY = "zkstorm-test-key", "s3-secret-Xq7vT2pLw9"  # moto's, on loopback only


class S3Server:
    """moto's S3 server (its WSGI application under werkzeug, as ``moto_server`` runs it) on a free
    loopback port, in a thread of the test process. ``hold`` can stall the requests whose method and key
    match, as a hung endpoint does, until the test lets them go: the server stays real, it only waits."""

    def __init__(self) -> None:
        import logging

        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request otherwise
        self._app = DomainDispatcherApplication(create_backend_app)
        self._holds: list[tuple[re.Pattern[str], threading.Event, threading.Event]] = []
        self.server = make_server("127.0.0.1", 0, self._gated, threaded=True, request_handler=MotoRequestHandler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.env = {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": S3_ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": S3_SECRET_KEY,
            "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",  # no instance-metadata lookups off this machine
        }
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _gated(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = f"{environ['REQUEST_METHOD']} {environ.get('PATH_INFO', '')}"
        for pattern, reached, release in list(self._holds):
            if pattern.search(request):
                reached.set()
                release.wait(120)
        return self._app(environ, start_response)

    @contextlib.contextmanager
    def hold(self, request: str) -> Iterator[threading.Event]:
        """Stall every request whose ``METHOD /bucket/key`` matches the pattern ``request`` until the block
        ends; the event yielded is set once one arrived."""
        entry = (re.compile(request), threading.Event(), threading.Event())
        self._holds.append(entry)
        try:
            yield entry[1]
        finally:
            self._holds.remove(entry)
            entry[2].set()

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=S3_ACCESS_KEY,
            aws_secret_access_key=S3_SECRET_KEY,
            region_name="us-east-1",
        )

    def stop(self) -> None:
        self.server.shutdown()
        self._thread.join(10)
