"""How a Storm znode's bytes are read, for every decoder of ``storm`` and ``storm_heartbeat``: a Thrift
record in its envelope (gzip, zstd or raw, sniffed per znode since a rolling upgrade mixes them; Storm's
``Utils.serialize``/``Utils.gunzip`` and ``ClusterUtils``), a Storm 0.9 payload in Java serialization
(Clojure data, converted by ``storm_legacy``), and the worker slot a path names."""

from __future__ import annotations

from typing import Any

from ..errors import DecodeError, FailureType
from . import java, sniff
from .registry import DecodeContext
from .storm_schema import ENUMS, REQUIRED, STRUCTS
from .thrift import ThriftReader, unwrap

READER = ThriftReader(STRUCTS, ENUMS, REQUIRED)


JAVA_MAGIC = b"\xac\xed\x00\x05"


# unwrap's envelope name → the encoding ``sniff`` gives the same bytes
ENVELOPE_ENCODING = {"gzip": sniff.GZIP, "zstd": sniff.ZSTD, "raw": sniff.THRIFT}


def read_thrift(record_type: str, data: bytes | None, context: DecodeContext) -> dict[str, Any]:
    if not data:
        raise DecodeError(f"no data where a {record_type} belongs", failure_type=FailureType.EMPTY_DATA)
    payload, envelope = unwrap(data)
    record = READER.read(record_type, payload)
    context.encoding = ENVELOPE_ENCODING[envelope]
    return record


def java_payload(data: bytes | None, context: DecodeContext) -> Any | None:
    """The converted 0.9 Clojure object if ``data`` is Java-serialized, else None."""
    if data and data[:4] == JAVA_MAGIC:
        value = java.loads(data)
        context.encoding = sniff.JAVA
        return value
    return None


def split_slot(name: str) -> tuple[str, int]:
    """``{supervisor-id}-{port}``: supervisor ids contain dashes, so split at the last one."""
    node, _, port = name.rpartition("-")
    if not node or not port.isdigit():
        raise DecodeError(f"{name!r} is not {{node}}-{{port}}", failure_type=FailureType.BAD_NODE_NAME)
    return node, int(port)
