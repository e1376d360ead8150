"""The read-only ZooKeeper session and the pipelined walker.

Everything zkstorm reads from a live ensemble goes through ``ReadOnlySession``. It owns its kazoo client
and refuses, at the last point before the socket, any request that is not a read: a write cannot leave
the process even through a bug elsewhere.

The walker batches its reads into ZooKeeper's ``multiRead`` request (3.6+): one request carries up to
``batch_size`` getData/getChildren ops, and several batches are in flight at once. Against stock kazoo
pipelining this removes the per-request wake-up of kazoo's I/O thread and most per-request server work
(see STYLE.md, "Where a kazoo walk spends its time"). Servers without ``multiRead`` get the same walk
with one pipelined request per op.

The session is bounded against a hostile world: ``--timeout`` covers the whole connection attempt (host
lookups in parallel, socket connects and the handshake cut at the deadline), an ensemble that refuses
every connection is told at once, and a reply longer than ``ZKSTORM_MAX_REPLY_BYTES`` is refused from its
length prefix, before kazoo would allocate it.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import random
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..defaults import TIMEOUT_SECS, ZK
from ..errors import (
    BadConnectString,
    NotAllowedError,
    NotFoundError,
    OutOfMemoryError,
    ReadOnlyViolation,
    ReplyTooLargeError,
    RootNotFoundError,
    UsageError,
    ZkstormError,
    ZookeeperError,
)
from ..redact import kazoo_logger
from .base import Denied, RawNode, Stat, WalkStats

log = logging.getLogger(__name__)


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
        return ",".join(_host_port(h, p) for h, p in self.hosts)

    @property
    def hosts_label(self) -> str:
        """The hosts as a message names them: all of a usual ensemble, the first three of a long list (a
        thousand hosts make no readable line)."""
        if len(self.hosts) <= _LABEL_HOSTS:
            return self.hosts_string
        shown = ",".join(_host_port(h, p) for h, p in self.hosts[:_LABEL_HOSTS])
        return f"{shown},… ({len(self.hosts)} hosts)"

    @property
    def label(self) -> str:
        return self.hosts_label + self.chroot

    def __str__(self) -> str:
        return self.hosts_string + self.chroot


_LABEL_HOSTS = 3


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


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


# --- bounds for a hostile world --------------------------------------------------------------------------

# The largest reply zkstorm reads. A reply's first four bytes say how long it is and kazoo allocates that
# much before reading on, so a broken or hostile endpoint can make the client allocate gigabytes. ZooKeeper's
# Java client refuses packets over jute.maxbuffer, 0xfffff by default (ClientCnxnSocket.readLength,
# ZKClientConfig.CLIENT_MAX_PACKET_LENGTH_DEFAULT); zkstorm's multiRead batches pack many znodes in one
# reply, so its bound is higher: 128 znodes of a default server's largest (1 MiB) take 128 MiB, and a
# listing of a million children some 50 MiB.
DEFAULT_MAX_REPLY_BYTES = 256 << 20
_MIN_MAX_REPLY_BYTES = 64 << 10
# ZooKeeper's default jute.maxbuffer (BinaryInputArchive.maxBuffer, 0xfffff): the largest znode a server
# takes unless its operators raised it. The walk sizes a batch as if each of its znodes were this large (or
# as large as the largest it has met), so that a batch's reply cannot pass the bound.
_ZNODE_CAP = 0xFFFFF
_NAME_CAP = 4 + 256  # what one child name may take in a listing (its length, and more than Kafka's 249 chars)
_REPLY_SLACK = 64 << 10  # reply headers and stats around a batch's payloads
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]i?b?)?\s*$", re.IGNORECASE)


def max_reply_bytes(env: Mapping[str, str] | None = None) -> int:
    """``ZKSTORM_MAX_REPLY_BYTES`` (bytes, or with a K, M or G suffix: powers of 1024), else the default."""
    text = (os.environ if env is None else env).get("ZKSTORM_MAX_REPLY_BYTES", "")
    if not text.strip():
        return DEFAULT_MAX_REPLY_BYTES
    m = _SIZE.match(text)
    if not m:
        raise UsageError(f"ZKSTORM_MAX_REPLY_BYTES={text!r} is not a size such as 268435456 or 512M")
    size = int(m[1]) << {"": 0, "k": 10, "m": 20, "g": 30}[(m[2] or "")[:1].lower()]
    if size < _MIN_MAX_REPLY_BYTES:
        raise UsageError(f"ZKSTORM_MAX_REPLY_BYTES={text!r} is below the 64K a session needs")
    return size


def _mib(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MiB" if size >= 1 << 20 else f"{size:,} bytes"


# --- finding the ensemble's addresses, with a deadline ---------------------------------------------------

_RESOLVERS = 32  # host names looked up at once
_RESOLVE_GRACE = 0.5  # once one host has an address, how long the others get before the connection starts

Endpoint = tuple[str, str, int]  # host as given, one of its addresses, port: what kazoo's connect loop takes


def resolve_hosts(hosts: Sequence[tuple[str, int]], deadline: float) -> tuple[list[Endpoint], dict[str, str]]:
    """Every address of every host, looked up in parallel and given up at ``deadline``: the endpoints in
    the order of ``hosts``, and why each host without one has none (the resolver's error, or no answer).

    kazoo looks the hosts up one after the other in its connection thread, without a deadline, on every
    round of its connection loop: 100 hosts that do not resolve took 15 s under ``--timeout 2`` with a
    resolver that drops a query now and then (glibc asks again after 5 s). Here each lookup runs in a
    daemon thread, so one that hangs is left behind at the deadline; once some host has an address, the
    rest get ``_RESOLVE_GRACE`` more."""
    outcome: dict[int, list[Endpoint] | str] = {}
    work = deque(enumerate(hosts))
    changed = threading.Event()

    def lookups() -> None:
        while True:
            try:
                i, (host, port) = work.popleft()
            except IndexError:
                return
            outcome[i] = _lookup(host, port)
            changed.set()

    for started in range(min(len(hosts), _RESOLVERS)):
        try:
            threading.Thread(target=lookups, name="zkstorm-resolve", daemon=True).start()
        except RuntimeError:  # no thread to be had (a memory limit counts their stacks): look up here
            if not started:
                lookups()
            break
    first_found: float | None = None
    while True:
        now = time.monotonic()
        if first_found is None and any(isinstance(v, list) for v in list(outcome.values())):
            first_found = now
        if len(outcome) == len(hosts) or now >= deadline or (first_found and now >= first_found + _RESOLVE_GRACE):
            break
        changed.wait(min(0.05, max(deadline - now, 0.001)))
        changed.clear()
    found: list[Endpoint] = []
    failed: dict[str, str] = {}
    for i, (host, _) in enumerate(hosts):
        got = outcome.get(i, "no answer from the resolver in time")
        if isinstance(got, list):
            found += [e for e in got if e not in found]
        else:
            failed[host] = got
    return found, failed


def _lookup(host: str, port: int) -> list[Endpoint] | str:
    """The host's addresses as kazoo would look them up, or why there are none."""
    try:
        infos = socket.getaddrinfo(host, port, 0, 0, socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        return exc.strerror or str(exc)
    except (OSError, UnicodeError) as exc:  # a label over 63 characters fails in the IDNA codec
        return f"not a host name ({exc})"
    return [(host, str(info[4][0]), int(info[4][1])) for info in infos] or "no address"


class _Guard:
    """What the connection thread learns that the session must act on, and the bounds it applies: each
    endpoint's last failure while connecting (so that an ensemble that refuses every connection is told at
    once, not after the whole timeout), the connect deadline its socket waits are clamped to, the largest
    reply it reads, and the error that ends the session (a refused reply, memory exhausted)."""

    def __init__(self, endpoints: list[Endpoint], unresolved: dict[str, str], max_reply: int, deadline: float) -> None:
        self.endpoints = endpoints
        self.unresolved = unresolved
        self.max_reply = max_reply
        self.deadline: float | None = deadline  # None once the session is established
        self.failures: dict[Endpoint, tuple[str, bool]] = {}  # what went wrong, and whether it is final
        self.fatal: ZkstormError | None = None
        self.server = ""
        self.attempting: Endpoint | None = None  # the endpoint the connection thread is trying now

    def clamp(self, timeout: float | None) -> float | None:
        """``timeout``, cut to what is left of the connect deadline while the session is being made."""
        if self.deadline is None or timeout is None:
            return timeout
        return max(0.001, min(timeout, self.deadline - time.monotonic()))

    def failed(self, endpoint: Endpoint, exc: BaseException) -> None:
        """Note why ``endpoint`` could not be connected to, and whether trying again could change it."""
        import ssl

        cause = exc.__context__ if exc.__context__ is not None else exc
        if isinstance(cause, ssl.SSLCertVerificationError):  # its certificate will not verify on a second try
            self.failures[endpoint] = (f"TLS certificate not accepted ({cause.verify_message})", True)
        elif isinstance(cause, ConnectionRefusedError):
            self.failures[endpoint] = ("connection refused", True)
        elif isinstance(cause, OSError) and cause.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            self.failures[endpoint] = (f"unreachable ({cause.strerror})", True)
        elif isinstance(cause, OSError) and not isinstance(cause, TimeoutError) and cause.strerror:
            self.failures[endpoint] = (cause.strerror, False)
        else:
            self.failures[endpoint] = ("no answer", False)

    def refuse(self, length: int) -> None:
        if self.fatal is None:
            self.fatal = ReplyTooLargeError(
                f"ZooKeeper at {self.server} sent a reply of {length:,} bytes, more than the {_mib(self.max_reply)} "
                "zkstorm reads (ZKSTORM_MAX_REPLY_BYTES): refused"
                if length >= 0
                else f"ZooKeeper at {self.server} sent a reply of negative length ({length}): refused"
            )

    def out_of_memory(self, what: str) -> None:
        if self.fatal is None:
            self.fatal = OutOfMemoryError(f"out of memory {what} from ZooKeeper at {self.server}")

    def crashed(self, exc: Exception) -> None:
        if isinstance(exc, MemoryError):
            self.out_of_memory("decoding a reply")
        elif self.fatal is None:
            self.fatal = ZookeeperError(f"the connection to ZooKeeper at {self.server} failed: {exc!r}")

    def raise_fatal(self) -> None:
        if self.fatal is not None:
            raise self.fatal

    def hopeless(self) -> str | None:
        """Why no endpoint can be connected to, once each has failed for good (refused, unreachable) and
        the other hosts did not resolve; None while some endpoint may still answer."""
        if len(self.failures) < len(self.endpoints):
            return None
        if not all(final for _, final in self.failures.values()):
            return None
        return _joined(self._reasons())

    def what_happened(self) -> str:
        reasons = self._reasons()
        return f" ({_joined(reasons)})" if reasons else ""

    def _reasons(self) -> list[str]:
        by_reason: dict[str, list[str]] = {}
        failures = dict(self.failures)
        if self.attempting is not None and self.attempting not in failures:
            failures[self.attempting] = ("no answer", False)  # still waiting for it at the deadline
        for endpoint in self.endpoints:
            if endpoint not in failures:
                continue
            host, _, port = endpoint
            reason = failures[endpoint][0]
            named = by_reason.setdefault(reason, [])
            if _host_port(host, port) not in named:
                named.append(_host_port(host, port))
        out = [f"{reason} by {_some(where)}" if reason == "connection refused" else f"{_some(where)}: {reason}"
               for reason, where in by_reason.items()]  # fmt: skip
        if self.unresolved:
            out.append(_unresolved(self.unresolved))
        return out


def _some(names: list[str], shown: int = 3) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _joined(reasons: list[str]) -> str:
    return "; ".join(reasons)


def _unresolved(failed: dict[str, str]) -> str:
    """``cannot resolve host x (why)``, or the first few of many with their reasons."""
    if len(failed) == 1:
        ((host, why),) = failed.items()
        return f"cannot resolve host {host} ({why})"
    by_reason: dict[str, list[str]] = {}
    for host, why in failed.items():
        by_reason.setdefault(why, []).append(host)
    return "cannot resolve hosts " + "; ".join(f"{_some(hosts)} ({why})" for why, hosts in by_reason.items())


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


@functools.cache
def _read_only_client_class() -> type:
    """kazoo's client, made read-only and bounded; a class made once, on first use (kazoo loads lazily)."""
    from kazoo.client import KazooClient
    from kazoo.exceptions import ConnectionDropped
    from kazoo.handlers.threading import SequentialThreadingHandler
    from kazoo.protocol import serialization as s
    from kazoo.protocol.connection import ConnectionHandler

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

    class BoundedHandler(SequentialThreadingHandler):  # type: ignore[misc]
        """kazoo's threading handler whose socket connects end by the session's connect deadline (kazoo
        waits up to the session timeout for each, at least 4 s, whatever ``--timeout`` says)."""

        def __init__(self, guard: _Guard) -> None:
            super().__init__()
            self.guard = guard

        def create_connection(self, *args: Any, **kwargs: Any) -> Any:
            if "timeout" in kwargs:
                kwargs["timeout"] = self.guard.clamp(kwargs["timeout"])
            return super().create_connection(*args, **kwargs)

    class BoundedConnection(ConnectionHandler):  # type: ignore[misc]
        """kazoo's connection handler with the session's bounds: the endpoints resolved once, with a
        deadline (``resolve_hosts``); each connect failure noted for the session; a reply over the bound
        refused from its length prefix, before anything is allocated (kazoo's ``_read_header`` and
        ``_invoke`` read the length, then ``_read`` that many bytes); the reads of the handshake ended by
        the connect deadline; and whatever ends kazoo's connection thread kept as the session's error
        instead of a traceback on stderr."""

        def __init__(self, *args: Any, guard: _Guard, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.guard = guard

        def _expand_client_hosts(self) -> list[Endpoint]:
            endpoints = list(self.guard.endpoints)
            if self.client.randomize_hosts:
                random.shuffle(endpoints)
            return endpoints

        def _connect(self, host: str, hostip: str, port: int) -> Any:
            self.guard.server = _host_port(host, port)
            self.guard.attempting = (host, hostip, port)
            try:
                return super()._connect(host, hostip, port)
            except Exception as exc:
                self.guard.failed((host, hostip, port), exc)
                raise
            finally:
                self.guard.attempting = None

        def _read(self, length: int, timeout: float) -> bytes:
            if not 0 <= length <= self.guard.max_reply:
                self.guard.refuse(length)
                raise ConnectionDropped(f"refused a reply of {length} bytes")
            try:
                return super()._read(length, self.guard.clamp(timeout))  # type: ignore[no-any-return]
            except MemoryError:
                self.guard.out_of_memory(f"reading a reply of {length:,} bytes")
                raise ConnectionDropped("out of memory") from None

        def zk_loop(self) -> None:
            try:
                super().zk_loop()
            except Exception as exc:  # kazoo's thread would end with a traceback on stderr
                self.guard.crashed(exc)
                log.debug("kazoo's connection thread failed", exc_info=True)

    class ReadOnlyKazooClient(KazooClient):  # type: ignore[misc]
        """kazoo's client with every outgoing request checked against the read op codes, and the bounded
        handler and connection above."""

        _connection: Any  # kazoo's, replaced by ours

        def __init__(self, *, guard: _Guard, **kwargs: Any) -> None:
            super().__init__(handler=BoundedHandler(guard), **kwargs)
            stock = self._connection
            self._connection = BoundedConnection(
                self, stock.retry_sleeper, logger=stock.logger, sasl_options=stock.sasl_options, guard=guard
            )

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
        target: ZkTarget | str = ZK,
        *,
        timeout: float = TIMEOUT_SECS,
        credentials: Credentials | None = None,
        tls: TlsOptions | None = None,
        max_reply: int | None = None,
    ) -> None:
        self.target = ZkTarget.parse(target) if isinstance(target, str) else target
        self.timeout = timeout
        self.max_reply = max_reply_bytes() if max_reply is None else max_reply
        self._credentials = credentials
        self._tls = tls
        self._client: Any = None
        self._guard: _Guard | None = None
        self._multiread: bool | None = None

    # lifecycle ----------------------------------------------------------------------------------------

    def __enter__(self) -> ReadOnlySession:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        """Open the session within ``timeout``, all of it: host lookups, socket connects and the handshake.
        An ensemble whose every host refuses the connection or does not resolve is told at once; a chroot
        that does not exist is ``RootNotFoundError``."""
        from kazoo.exceptions import KazooException

        deadline = time.monotonic() + self.timeout
        endpoints, unresolved = resolve_hosts(self.target.hosts, deadline)
        if not endpoints:
            raise ZookeeperError(f"cannot connect to ZooKeeper at {self.target.label}: {_unresolved(unresolved)}")
        guard = _Guard(endpoints, unresolved, self.max_reply, deadline)
        try:
            client = _read_only_client_class()(guard=guard, **self._client_options(endpoints))
        except (KazooException, ValueError) as exc:
            raise ZookeeperError(f"cannot connect to ZooKeeper at {self.target.label}: {exc}") from None
        try:
            self._establish(client, guard, deadline)
        except BaseException:
            _discard(client, self.timeout)
            raise
        guard.deadline = None  # from now on a reconnect waits as kazoo does; the walk has its own patience
        self._client, self._guard = client, guard
        if self._credentials and self._credentials.scheme == "digest":
            self._check_auth()

    def _client_options(self, endpoints: list[Endpoint]) -> dict[str, Any]:
        """kazoo's options: the hosts that resolved (kazoo divides its handshake timeout by their number),
        the session timeout, credentials and TLS."""
        from kazoo.retry import KazooRetry

        hosts = dict.fromkeys(_host_port(host, port) for host, _, port in endpoints)
        kwargs: dict[str, Any] = {
            "hosts": ",".join(hosts) + self.target.chroot,
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
        return kwargs

    def _establish(self, client: Any, guard: _Guard, deadline: float) -> None:
        """Start kazoo's connection and wait for the session, failing as soon as the outcome is known:
        every endpoint refused, a reply refused, or the deadline passed. Then one ``exists`` of the root:
        the chroot must exist (kazoo only warns, with a ``UserWarning`` from its ``start``, which is not
        called here), and a SASL login that the server refuses shows there."""
        from kazoo.exceptions import AuthFailedError, KazooException
        from kazoo.handlers.threading import KazooTimeoutError

        live = client.start_async()
        while not live.wait(0.02):
            guard.raise_fatal()
            hopeless = guard.hopeless()
            if hopeless:
                raise ZookeeperError(f"cannot connect to ZooKeeper at {self.target.label}: {hopeless}")
            if time.monotonic() >= deadline:
                within = f"within {self.timeout:g}s{guard.what_happened()}"
                raise ZookeeperError(f"cannot connect to ZooKeeper at {self.target.label} {within}")
        try:
            found = client.exists_async("/").get(timeout=max(deadline - time.monotonic(), 0.5))
        except AuthFailedError:
            raise ZookeeperError(f"ZooKeeper at {self.target.label} refused the credentials") from None
        except (KazooException, KazooTimeoutError, OSError) as exc:
            guard.raise_fatal()
            raise ZookeeperError(
                f"cannot connect to ZooKeeper at {self.target.label}: {exc or type(exc).__name__}"
            ) from None
        if found is None:
            raise RootNotFoundError(
                f"no znode {self.target.chroot} on {self.target.hosts_label}: the chroot in --zk does not exist"
            )

    def _check_auth(self) -> None:
        # Digest credentials are only sent after the session exists; a refusal surfaces as AUTH_FAILED.
        from kazoo.protocol.states import KeeperState

        deadline = time.monotonic() + min(self.timeout, 2.0)
        while time.monotonic() < deadline:
            if self._client is None:
                return
            if self._client.client_state == KeeperState.AUTH_FAILED:
                self.close()
                raise ZookeeperError(f"ZooKeeper at {self.target} refused the credentials")
            if self._client.client_state == KeeperState.CONNECTED:
                return
            time.sleep(0.01)

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            _discard(client, self.timeout)

    def as_of(self) -> float:
        """The time the data read is as of: a live ensemble is read now."""
        return time.time()

    def without_chroot(self) -> ReadOnlySession:
        """A session like this one (credentials, TLS, bounds) on the same hosts without the chroot: for what
        ZooKeeper keeps at its own root (``/zookeeper/config``, the ensemble's configuration)."""
        return ReadOnlySession(
            ZkTarget(self.target.hosts),
            timeout=self.timeout,
            credentials=self._credentials,
            tls=self._tls,
            max_reply=self.max_reply,
        )

    def ssl_context(self) -> Any:
        """The TLS context this session's connections use (as kazoo builds it from the same options), for
        other connections to the same servers: four-letter words on a secure client port. None without
        TLS."""
        if self._tls is None:
            return None
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
        context.check_hostname = False  # as kazoo's connection: the certificate is verified, not its name
        context.verify_mode = ssl.CERT_REQUIRED if self._tls.verify else ssl.CERT_NONE
        if self._tls.ca:
            context.load_verify_locations(self._tls.ca)
        if self._tls.certfile and self._tls.keyfile:
            context.load_cert_chain(self._tls.certfile, self._tls.keyfile, self._tls.keyfile_password)
        return context

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
                self._raise_fatal()
                if time.monotonic() >= deadline:
                    raise ZookeeperError(f"lost the ZooKeeper connection and could not resume: {exc!r}") from None
                self._wait_connected(deadline)

    def describe(self) -> dict[str, Any]:
        """The ensemble read, for a snapshot's manifest (credentials never appear in it)."""
        return {"zk": str(self.target)}

    def default_cluster_name(self) -> str:
        """The first ensemble host: what operators call a cluster when they name it by its ZooKeeper."""
        return str(self.target.hosts[0][0])

    def problems(self) -> list[str]:
        """None: a znode the session may not read is an ``Unreadable`` record, a lost ensemble an error."""
        return []

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
            self._raise_fatal()
            if self._client is not None and self._client.state == KazooState.CONNECTED:
                return
            time.sleep(0.05)
        self._raise_fatal()
        raise ZookeeperError(f"lost the connection to ZooKeeper at {self.target.label} and could not reconnect")

    def _raise_fatal(self) -> None:
        """The error that ended the session in kazoo's thread (a refused reply, memory exhausted), if any."""
        if self._guard is not None:
            self._guard.raise_fatal()

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

    def _exchange(
        self, todo: deque[_Op], *, sizes: _BatchSizes, in_flight: int, multi: bool, stats: WalkStats
    ) -> Iterator[tuple[list[_Op], list[Any]]]:
        """Send ``todo``'s ops in batches (``sizes.take``), multiRead or pipelined single reads, with up to
        ``in_flight`` batches outstanding; yield each batch's ops with their results (errors as values) as
        they complete. The caller may add to ``todo`` between batches, as the walk does. A batch lost with
        the connection is sent again once the session is back, so nothing is read twice or lost (its ops
        may then come after later ones); a server that answers nothing for a while ends it."""
        from kazoo.exceptions import ConnectionClosedError, ConnectionLoss, SessionExpiredError
        from kazoo.handlers.threading import KazooTimeoutError

        # A server that stops answering (overloaded, out of memory) must end the walk with a clear error,
        # not keep it retrying: give up when no batch has completed for this long.
        patience = max(self.timeout * 3, 5.0)
        last_progress = time.monotonic()
        submit = self._submit_multi if multi else self._submit_single
        flying: deque[tuple[list[_Op], Any]] = deque()
        lost = (ConnectionLoss, ConnectionClosedError, SessionExpiredError, KazooTimeoutError)
        while todo or flying:
            while todo and len(flying) < in_flight:
                ops = sizes.take(todo)
                flying.append((ops, submit([(op, p) for op, p, _, _ in ops])))
                stats.requests += 1
            ops, pending = flying.popleft()
            try:
                results = pending.get(timeout=self.timeout)
            except lost as exc:
                self._raise_fatal()
                stats.retries += 1
                if time.monotonic() - last_progress > patience:
                    raise ZookeeperError(
                        f"ZooKeeper at {self.target.label} stopped answering: no reply for {patience:g}s ({exc!r})"
                    ) from None
                log.warning("connection lost during the walk (%r); resuming", exc)
                self._wait_connected(time.monotonic() + self.timeout)
                todo.extendleft(reversed(ops))
                continue
            last_progress = time.monotonic()
            yield ops, results

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
        """Walk from ``path``: yields each znode once, a parent before its children, children in name order
        per parent; depth first, a batch at a time (what one batch's replies name is read before what was
        waiting), so the reads waiting are the unread siblings along the current path, not a whole level
        of the tree: breadth first, the level of a million Kafka partitions held a million paths at once.

        Children are only asked for where ``numChildren > 0``; no watches are set; nothing is kept
        once yielded. A node deleted between list and get is counted in ``stats.vanished`` and skipped.
        """
        from kazoo.exceptions import NoAuthError, NoNodeError

        stats = stats if stats is not None else WalkStats()
        use_multi = self.supports_multiread() if multiread is None else multiread
        sizes = _BatchSizes(self.max_reply, batch_size)
        start = _normalise(path)
        todo: deque[_Op] = deque([(_GET, start, 0, 0)])
        for ops, results in self._exchange(todo, sizes=sizes, in_flight=in_flight, multi=use_multi, stats=stats):
            found: list[_Op] = []  # what this batch names, read next (depth first)
            for (op, node_path, depth, _), result in zip(ops, results, strict=False):
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
                        size = stat.dataLength
                        sizes.average += (size + 64 - sizes.average) / 32
                        if size > sizes.largest:
                            sizes.largest = size
                        stats.znodes += 1
                        yield RawNode(node_path, stat, data)
                        if stat.numChildren > 0 and (max_depth is None or depth < max_depth):
                            found.append((_CHILDREN, node_path, depth, stat.numChildren))
                elif isinstance(result, list):
                    prefix = node_path if node_path.endswith("/") else node_path + "/"
                    found.extend((_GET, prefix + name, depth + 1, 0) for name in sorted(result))
                elif isinstance(result, NoNodeError):
                    pass  # deleted after we read it: its record is already out, its children are gone
                elif isinstance(result, Exception):
                    log.warning("cannot list children of %s: %r", node_path, result)
            todo.extendleft(reversed(found))
            if len(todo) > stats.pending_max:
                stats.pending_max = len(todo)

    def children_of(
        self, paths: Iterable[str], *, batch_size: int = 128, in_flight: int = 16, stats: WalkStats | None = None
    ) -> Iterator[tuple[str, list[str] | None]]:
        """The child names of each of ``paths``, sorted (None for a path that is gone or may not be listed),
        as the replies come: getChildren ops in the walk's batches, so listing a level of ten thousand
        znodes costs about a hundred requests, not ten thousand round trips."""
        todo: deque[_Op] = deque((_CHILDREN, _normalise(p), 0, 0) for p in paths)
        if not todo:
            return
        stats = stats if stats is not None else WalkStats()
        multi = self.supports_multiread()
        sizes = _BatchSizes(self.max_reply, batch_size)
        for ops, results in self._exchange(todo, sizes=sizes, in_flight=in_flight, multi=multi, stats=stats):
            for (_, path, _, _), result in zip(ops, results, strict=False):
                yield path, sorted(result) if isinstance(result, list) else None


_Op = tuple[int, str, int, int]  # op code, path, depth, children a listing expects (its numChildren; 0 if unknown)


class _BatchSizes:
    """How many ops the next batch takes: near ``_TARGET_RESPONSE`` bytes of reply on the average size
    met (for the server's sake), and never so many that the reply could pass the bound, were each znode
    as large as ZooKeeper takes by default (``_ZNODE_CAP``) or as the largest met, and each expected child
    name ``_NAME_CAP`` long. One reply can exceed the bound only if a single znode or listing does."""

    def __init__(self, max_reply: int, batch_size: int) -> None:
        self.budget = max(max_reply - _REPLY_SLACK, 0)
        self.batch_size = batch_size
        self.average = 256.0  # moving average of data sizes, updated by the walk
        self.largest = _ZNODE_CAP  # the most one op's reply may take, raised by the walk as it meets more

    def take(self, todo: deque[_Op]) -> list[_Op]:
        largest = self.largest
        n = min(
            self.batch_size,
            max(8, int(_TARGET_RESPONSE // self.average)),
            max(1, self.budget // largest),
            len(todo),
        )
        ops = [todo.popleft() for _ in range(n)]
        while len(ops) > 1 and len(ops) * largest + sum(op[3] for op in ops) * _NAME_CAP > self.budget:
            todo.appendleft(ops.pop())  # wide listings: fewer ops in this batch (a lone one goes as it is)
        return ops


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


def _discard(client: Any, within: float) -> None:
    """Stop and close a kazoo client whatever state it is in (kazoo refuses close() before stop()), within
    ``within`` seconds. kazoo's ``stop`` waits for its connection thread for at least ten seconds (its
    ``_safe_close``), longer while it is reconnecting to a server that stopped answering after the read:
    a command then outlived its --timeout by many times. A session not closed by then is left to the
    server to expire, as a killed process's is; the thread that is still closing it is a daemon."""
    done = threading.Event()

    def shut() -> None:
        try:
            client.stop()
        except Exception:
            log.debug("stopping the kazoo client failed", exc_info=True)
        try:
            client.close()
        except Exception:
            log.debug("closing the kazoo client failed", exc_info=True)
        finally:
            done.set()

    threading.Thread(target=shut, name="zkstorm-close", daemon=True).start()
    if not done.wait(within):
        log.info("the session did not close within --timeout (%gs): left to the server to expire", within)


def _normalise(path: str) -> str:
    if not path.startswith("/"):
        raise UsageError(f"znode paths start with '/': {path!r}")
    return path.rstrip("/") or "/"
