"""The read-only ZooKeeper session and the pipelined walker.

Everything zkstorm reads from a live ensemble goes through ``ReadOnlySession``. It owns its kazoo client
and refuses, at the last point before the socket, any request that is not a read: a write cannot leave
the process even through a bug elsewhere.

The walker batches its reads into ZooKeeper's ``multiRead`` request (3.6+): one request carries up to
``batch_size`` getData/getChildren ops, and several batches are in flight at once. Against stock kazoo
pipelining this removes the per-request wake-up of kazoo's I/O thread and most per-request server work
(see STYLE.md, "Where a kazoo walk spends its time"). Servers without ``multiRead`` get the same walk
with one pipelined request per op.
"""

from __future__ import annotations

import logging
import os
import re
import struct
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import NotAllowedError, NotFoundError, UsageError, ZkstormError, ZookeeperError
from ..redact import kazoo_logger
from .base import Denied, RawNode, Stat, WalkStats


class BadConnectString(ZookeeperError):
    """A ``--zk`` value that cannot name an ensemble (exit 3, like an unreachable one)."""


log = logging.getLogger(__name__)

DEFAULT_ZK = "127.0.0.1:2181"
DEFAULT_TIMEOUT = 10.0

_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9_.-]+))(?::(?P<port>\d+))?$")


@dataclass(frozen=True, slots=True)
class ZkTarget:
    """A parsed ``host:port[,host:port…][/chroot]`` connect string."""

    hosts: tuple[tuple[str, int], ...]
    chroot: str = ""

    @classmethod
    def parse(cls, value: str) -> ZkTarget:
        text = value.strip()
        if not text:
            raise BadConnectString("--zk is empty; expected host:port[,host:port…][/chroot]")
        hosts_part, slash, chroot = text.partition("/")
        chroot = (slash + chroot).rstrip("/") if slash else ""
        if chroot and ("//" in chroot or any(p in (".", "..") for p in chroot.split("/")[1:])):
            raise BadConnectString(f"--zk {value!r}: bad chroot {chroot!r}")
        hosts = []
        for item in hosts_part.split(","):
            m = _HOST_PORT.match(item.strip())
            if not m:
                raise BadConnectString(f"--zk {value!r}: {item.strip()!r} is not host[:port]")
            port = int(m["port"] or 2181)
            if not 0 < port < 65536:
                raise BadConnectString(f"--zk {value!r}: port {port} is out of range")
            hosts.append((m["v6"] or m["host"], port))
        return cls(tuple(hosts), chroot)

    @property
    def hosts_string(self) -> str:
        return ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.hosts)

    def __str__(self) -> str:
        return self.hosts_string + self.chroot


@dataclass(frozen=True, slots=True)
class Credentials:
    """How to authenticate. ``scheme``: ``digest`` (addauth), ``sasl-digest`` or ``sasl-gssapi``.

    Secrets come from the environment or from files, never only from argv (argv shows in ``ps``).
    """

    scheme: str
    user: str = ""
    password: str = field(default="", repr=False)
    service: str = "zookeeper"
    principal: str = ""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, scheme: str | None = None) -> Credentials | None:
        env = dict(os.environ if env is None else env)
        scheme = scheme or env.get("ZKSTORM_AUTH", "")
        if not scheme or scheme == "none":
            return None
        if scheme not in ("digest", "sasl-digest", "sasl-gssapi"):
            raise UsageError(f"unknown auth scheme {scheme!r} (digest, sasl-digest, sasl-gssapi, none)")
        password = env.get("ZKSTORM_PASSWORD", "")
        password_file = env.get("ZKSTORM_PASSWORD_FILE")
        if password_file:
            try:
                with open(password_file, encoding="utf-8") as fh:
                    password = fh.read().strip()
            except OSError as exc:
                raise UsageError(f"cannot read ZKSTORM_PASSWORD_FILE {password_file}: {exc.strerror}") from None
        user = env.get("ZKSTORM_USER", "")
        if scheme != "sasl-gssapi" and not user:
            raise UsageError(f"auth {scheme} needs ZKSTORM_USER (and ZKSTORM_PASSWORD or ZKSTORM_PASSWORD_FILE)")
        return cls(
            scheme=scheme,
            user=user,
            password=password,
            service=env.get("ZKSTORM_SASL_SERVICE", "zookeeper"),
            principal=env.get("ZKSTORM_SASL_PRINCIPAL", ""),
        )


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """Client TLS through kazoo's own options: a CA bundle, and optionally a client cert and key."""

    ca: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    keyfile_password: str | None = field(default=None, repr=False)
    verify: bool = True


# --- multiRead (OpCode 22, ZooKeeper 3.6+) -----------------------------------------------------------

_GET, _CHILDREN = 4, 8  # ZooDefs.OpCode.getData / getChildren
_TARGET_RESPONSE = 1 << 20  # bytes one multiRead reply should stay near, for the server's sake
_MULTI_READ = 22
_ERROR = -1
_multi_header = struct.Struct("!iBi")
_int = struct.Struct("!i")
_stat = struct.Struct("!qqqqiiiqiiq")


def _write_string(buf: bytearray, text: str) -> None:
    raw = text.encode("utf-8")
    buf += _int.pack(len(raw))
    buf += raw


class MultiRead:
    """A ``multiRead`` request: getData and getChildren ops answered together, each with its own error.

    kazoo has no multiRead; its connection accepts any request object with ``type``, ``serialize`` and
    ``deserialize``, so this plugs into the same session, auth and reconnect logic.
    """

    type = _MULTI_READ

    def __init__(self, ops: list[tuple[int, str]]) -> None:
        self.ops = ops

    def serialize(self) -> bytearray:
        buf = bytearray()
        for op, path in self.ops:
            buf += _multi_header.pack(op, False, -1)
            _write_string(buf, path)
            buf += b"\x00"  # watch = false: the walker never leaves watches behind
        buf += _multi_header.pack(-1, True, -1)
        return buf

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[Any]:
        from kazoo.exceptions import EXCEPTIONS

        out: list[Any] = []
        unpack_header, unpack_int, unpack_stat = _multi_header.unpack_from, _int.unpack_from, _stat.unpack_from
        while True:
            op, done, _ = unpack_header(buf, offset)
            offset += 9
            if done:
                return out
            if op == _GET:
                (n,) = unpack_int(buf, offset)
                offset += 4
                if n < 0:
                    data = None
                else:
                    data = buf[offset : offset + n]
                    offset += n
                out.append((data, Stat._make(unpack_stat(buf, offset))))
                offset += 68
            elif op == _CHILDREN:
                (count,) = unpack_int(buf, offset)
                offset += 4
                names = []
                for _ in range(max(count, 0)):
                    (n,) = unpack_int(buf, offset)
                    names.append(buf[offset + 4 : offset + 4 + n].decode("utf-8"))
                    offset += 4 + n
                out.append(names)
            elif op == _ERROR:
                (err,) = unpack_int(buf, offset)
                offset += 4
                out.append(EXCEPTIONS[err]())
            else:
                raise ValueError(f"unexpected op type {op} in multiRead response")


# --- the session --------------------------------------------------------------------------------------


class ReadOnlyViolation(ZkstormError):
    """Raised if anything tries to send a non-read request through the inspector's session."""


def _read_only_client_class() -> type:
    from kazoo.client import KazooClient
    from kazoo.protocol import serialization as s

    allowed = {
        s.GetData.type,
        s.GetChildren.type,
        s.GetChildren2.type,
        s.Exists.type,
        s.GetACL.type,
        s.Auth.type,
        s.SASL.type,
        s.Close.type,
        s.Ping.type,
        _MULTI_READ,
    }

    class ReadOnlyKazooClient(KazooClient):  # type: ignore[misc]
        """kazoo's client with every outgoing request checked against the read op codes."""

        def _call(self, request: Any, async_object: Any) -> Any:
            if getattr(request, "type", None) not in allowed:
                exc = ReadOnlyViolation(f"refused to send {type(request).__name__}: zkstorm only reads")
                async_object.set_exception(exc)
                raise exc
            return super()._call(request, async_object)

    return ReadOnlyKazooClient


class ReadOnlySession:
    """A connected, read-only view of one ensemble. Use as a context manager."""

    cheap_listings = True  # one getChildren request

    def __init__(
        self,
        target: ZkTarget | str = DEFAULT_ZK,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        credentials: Credentials | None = None,
        tls: TlsOptions | None = None,
    ) -> None:
        self.target = ZkTarget.parse(target) if isinstance(target, str) else target
        self.timeout = timeout
        self._credentials = credentials
        self._tls = tls
        self._client: Any = None
        self._multiread: bool | None = None

    # lifecycle ----------------------------------------------------------------------------------------

    def __enter__(self) -> ReadOnlySession:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        from kazoo.exceptions import AuthFailedError, KazooException
        from kazoo.handlers.threading import KazooTimeoutError
        from kazoo.retry import KazooRetry

        kwargs: dict[str, Any] = {
            "hosts": self.target.hosts_string + self.target.chroot,
            "timeout": max(self.timeout, 4.0),  # session timeout; the server clamps it to its own range
            "connection_retry": KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            "read_only": True,  # a server cut off from its quorum can still answer reads
            "logger": kazoo_logger(),  # its DEBUG lines tell requests by type and path, never payloads
        }
        creds = self._credentials
        if creds and creds.scheme == "digest":
            kwargs["auth_data"] = [("digest", f"{creds.user}:{creds.password}")]
        elif creds:
            try:
                import puresasl  # noqa: F401
            except ImportError:
                raise ZookeeperError("SASL needs the pure-sasl package (pip install pure-sasl)") from None
            sasl: dict[str, Any] = {"mechanism": "GSSAPI" if creds.scheme == "sasl-gssapi" else "DIGEST-MD5"}
            sasl["service"] = creds.service
            if creds.scheme == "sasl-digest":
                sasl.update(username=creds.user, password=creds.password)
            elif creds.principal:
                sasl["principal"] = creds.principal
            kwargs["sasl_options"] = sasl
        if self._tls:
            kwargs.update(
                use_ssl=True,
                ca=self._tls.ca,
                certfile=self._tls.certfile,
                keyfile=self._tls.keyfile,
                keyfile_password=self._tls.keyfile_password,
                verify_certs=self._tls.verify,
            )
        client = _read_only_client_class()(**kwargs)
        try:
            client.start(timeout=self.timeout)
        except KazooTimeoutError:
            _discard(client)
            raise ZookeeperError(f"cannot connect to ZooKeeper at {self.target} within {self.timeout:g}s") from None
        except AuthFailedError:
            _discard(client)
            raise ZookeeperError(f"ZooKeeper at {self.target} refused the credentials") from None
        except (KazooException, OSError, ValueError) as exc:
            _discard(client)
            raise ZookeeperError(f"cannot connect to ZooKeeper at {self.target}: {exc or type(exc).__name__}") from None
        self._client = client
        if creds and creds.scheme == "digest":
            self._check_auth()

    def _check_auth(self) -> None:
        # Digest credentials are only sent after the session exists; a refusal surfaces as AUTH_FAILED.
        from kazoo.protocol.states import KeeperState

        deadline = time.monotonic() + min(self.timeout, 2.0)
        while time.monotonic() < deadline:
            if self._client.client_state == KeeperState.AUTH_FAILED:
                self.close()
                raise ZookeeperError(f"ZooKeeper at {self.target} refused the credentials")
            if self._client.client_state == KeeperState.CONNECTED:
                return
            time.sleep(0.01)

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            _discard(client)

    def as_of(self) -> float:
        """The time the data read is as of: a live ensemble is read now."""
        return time.time()

    @property
    def client_for_reads(self) -> Any:
        """The guarded kazoo client, for read-only helpers that need it (e.g. benchmarks)."""
        return self._require()

    def _require(self) -> Any:
        if self._client is None:
            raise ZookeeperError("not connected")
        return self._client

    # single reads -------------------------------------------------------------------------------------

    def _retrying(self, fn: Any, *args: Any) -> Any:
        from kazoo.exceptions import (
            ConnectionClosedError,
            ConnectionLoss,
            NoAuthError,
            NoNodeError,
            SessionExpiredError,
        )
        from kazoo.handlers.threading import KazooTimeoutError

        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return fn(*args)
            except NoNodeError:
                raise NotFoundError(f"no znode at {args[0]}") from None
            except NoAuthError:
                raise NotAllowedError(f"not allowed to read {args[0]} (NoAuth)") from None
            except (ConnectionLoss, ConnectionClosedError, SessionExpiredError, KazooTimeoutError) as exc:
                if time.monotonic() >= deadline:
                    raise ZookeeperError(f"lost the ZooKeeper connection and could not resume: {exc!r}") from None
                self._wait_connected(deadline)

    def describe(self) -> dict[str, Any]:
        """The ensemble read, for a snapshot's manifest (credentials never appear in it)."""
        return {"zk": str(self.target)}

    def default_cluster_name(self) -> str:
        """The first ensemble host: what operators call a cluster when they name it by its ZooKeeper."""
        return str(self.target.hosts[0][0])

    def get(self, path: str) -> RawNode:
        data, stat = self._retrying(self._require().get, path)
        return RawNode(path, Stat._make(stat), data)

    def get_children(self, path: str) -> list[str]:
        return sorted(self._retrying(self._require().get_children, path))

    def exists(self, path: str) -> bool:
        return self._retrying(self._require().exists, path) is not None

    def _wait_connected(self, deadline: float) -> None:
        from kazoo.protocol.states import KazooState

        while time.monotonic() < deadline:
            if self._client is not None and self._client.state == KazooState.CONNECTED:
                return
            time.sleep(0.05)
        raise ZookeeperError(f"lost the connection to ZooKeeper at {self.target} and could not reconnect")

    # the walk -----------------------------------------------------------------------------------------

    def supports_multiread(self) -> bool:
        """Probe once: ZooKeeper before 3.6 does not know op 22. ``ZKSTORM_MULTIREAD=0`` skips it
        (for a proxy or server that mishandles op 22; the walk then pipelines single reads)."""
        if self._multiread is None and os.environ.get("ZKSTORM_MULTIREAD", "1") == "0":
            self._multiread = False
        if self._multiread is None:
            from kazoo.exceptions import ConnectionClosedError, ConnectionLoss

            try:
                self._submit_multi([(_GET, "/")]).get(timeout=self.timeout)
                self._multiread = True
            except (ConnectionLoss, ConnectionClosedError):
                self._multiread = False
            except Exception as exc:
                log.info("multiRead not available (%r); using pipelined single reads", exc)
                self._multiread = False
            if not self._multiread:
                self._wait_connected(time.monotonic() + self.timeout)
        return self._multiread

    def _submit_multi(self, ops: list[tuple[int, str]]) -> Any:
        client = self._require()
        chroot = client.chroot
        result = client.handler.async_result()
        ops = [(op, (chroot + path if path != "/" else chroot) if chroot else path) for op, path in ops]
        client._call(MultiRead(ops), result)
        return result

    def _submit_single(self, ops: list[tuple[int, str]]) -> _Pipelined:
        client = self._require()
        return _Pipelined([client.get_async(p) if op == _GET else client.get_children_async(p) for op, p in ops])

    def walk(
        self,
        path: str = "/",
        *,
        max_depth: int | None = None,
        batch_size: int = 128,
        in_flight: int = 16,
        multiread: bool | None = None,
        stats: WalkStats | None = None,
    ) -> Iterator[RawNode | Denied]:
        """Breadth-first walk from ``path``: yields each znode once, children in name order per parent.

        Children are only asked for where ``numChildren > 0``; no watches are set; nothing is kept
        once yielded. A node deleted between list and get is counted in ``stats.vanished`` and skipped.
        """
        from kazoo.exceptions import (
            ConnectionClosedError,
            ConnectionLoss,
            NoAuthError,
            NoNodeError,
            SessionExpiredError,
        )
        from kazoo.handlers.threading import KazooTimeoutError

        stats = stats if stats is not None else WalkStats()
        use_multi = self.supports_multiread() if multiread is None else multiread
        # A server that stops answering (overloaded, out of memory) must end the walk with a clear error,
        # not keep it retrying: give up when no batch has completed for this long.
        patience = max(self.timeout * 3, 5.0)
        last_progress = time.monotonic()
        average_size = 256.0  # moving average of data sizes: keeps one response near _TARGET_RESPONSE
        submit = self._submit_multi if use_multi else self._submit_single
        start = _normalise(path)
        todo: deque[tuple[int, str, int]] = deque([(_GET, start, 0)])
        flying: deque[tuple[list[tuple[int, str, int]], Any]] = deque()
        lost = (ConnectionLoss, ConnectionClosedError, SessionExpiredError, KazooTimeoutError)
        while todo or flying:
            while todo and len(flying) < in_flight:
                adaptive = min(batch_size, max(8, int(_TARGET_RESPONSE // average_size)))
                n = min(adaptive, len(todo))
                ops = [todo.popleft() for _ in range(n)]
                flying.append((ops, submit([(op, p) for op, p, _ in ops])))
                stats.requests += 1
            ops, pending = flying.popleft()
            try:
                results = pending.get(timeout=self.timeout)
            except lost as exc:
                stats.retries += 1
                if time.monotonic() - last_progress > patience:
                    raise ZookeeperError(
                        f"ZooKeeper at {self.target} stopped answering: no reply for {patience:g}s ({exc!r})"
                    ) from None
                log.warning("connection lost during the walk (%r); resuming", exc)
                self._wait_connected(time.monotonic() + self.timeout)
                todo.extendleft(reversed(ops))
                continue
            last_progress = time.monotonic()
            for (op, node_path, depth), result in zip(ops, results, strict=False):
                if op == _GET:
                    if isinstance(result, NoNodeError):
                        if node_path == start:
                            raise NotFoundError(f"no znode at {start}")
                        stats.vanished += 1
                    elif isinstance(result, NoAuthError):
                        stats.unreadable += 1
                        yield Denied(node_path, "NoAuth")
                    elif isinstance(result, Exception):
                        stats.unreadable += 1
                        yield Denied(node_path, type(result).__name__)
                    else:
                        data, stat = result
                        stat = stat if type(stat) is Stat else Stat._make(stat)
                        average_size += (stat.dataLength + 64 - average_size) / 32
                        stats.znodes += 1
                        yield RawNode(node_path, stat, data)
                        if stat.numChildren > 0 and (max_depth is None or depth < max_depth):
                            todo.append((_CHILDREN, node_path, depth))
                elif isinstance(result, list):
                    prefix = node_path if node_path.endswith("/") else node_path + "/"
                    todo.extend((_GET, prefix + name, depth + 1) for name in sorted(result))
                elif isinstance(result, NoNodeError):
                    pass  # deleted after we read it: its record is already out, its children are gone
                elif isinstance(result, Exception):
                    log.warning("cannot list children of %s: %r", node_path, result)


class _Pipelined:
    """One async result per op, presented like a multiRead result (errors as values, in op order)."""

    def __init__(self, results: list[Any]) -> None:
        self._results = results

    def get(self, timeout: float) -> list[Any]:
        """Every op's result; a lost connection fails the whole batch, as it does a multiRead."""
        from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, KazooException, SessionExpiredError

        out: list[Any] = []
        lost: Exception | None = None
        for result in self._results:
            try:
                out.append(result.get(timeout=timeout))
            except (ConnectionLoss, ConnectionClosedError, SessionExpiredError) as exc:
                lost = lost or exc
            except KazooException as exc:
                out.append(exc)
        if lost is not None:
            raise lost
        return out


def _discard(client: Any) -> None:
    """Stop and close a kazoo client whatever state it is in (kazoo refuses close() before stop())."""
    try:
        client.stop()
    except Exception:
        log.debug("stopping the kazoo client failed", exc_info=True)
    try:
        client.close()
    except Exception:
        log.debug("closing the kazoo client failed", exc_info=True)


def _normalise(path: str) -> str:
    if not path.startswith("/"):
        raise UsageError(f"znode paths start with '/': {path!r}")
    return path.rstrip("/") or "/"
