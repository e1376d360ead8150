"""Java serialization → plain Python, for Storm 0.9's Clojure payloads and 2.x's ``leader-info``.

javaobj-py3 parses the stream into class descriptors and field values; this module turns what Storm
stores into Python data by structure (class name and field names, never offsets): Clojure persistent
maps (array maps and HAMT hash maps), vectors, keywords (``":name"``), records (as dicts keyed by
their demunged field names, with ``"_record"`` naming the class), java.util collections and boxed
numbers.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import DecodeError, FailureType

_MUNGED = (
    ("_GT_", ">"),
    ("_LT_", "<"),
    ("_BANG_", "!"),
    ("_QMARK_", "?"),
    ("_PLUS_", "+"),
    ("_STAR_", "*"),
    ("_SLASH_", "/"),
    ("_EQ_", "="),
    ("_COLON_", ":"),
    ("_AMPERSAND_", "&"),
    ("_PERCENT_", "%"),
)
_BOXED = {
    "java.lang.Integer",
    "java.lang.Long",
    "java.lang.Short",
    "java.lang.Byte",
    "java.lang.Double",
    "java.lang.Float",
    "java.lang.Boolean",
    "java.lang.Character",
}
_MAX_DEPTH = 200
_MAX_ITEMS = 10_000_000  # a seq longer than any Storm znode holds: a cycle of back-references, or damage


def demunge(name: str) -> str:
    """Clojure's field-name munging undone: ``component__GT_executors`` → ``component->executors``."""
    for munged, plain in _MUNGED:
        name = name.replace(munged, plain)
    return name.replace("_", "-")


def loads(data: bytes) -> Any:
    """Parse one Java-serialized object and convert it."""
    try:
        obj = _parse(data)
    except Exception as exc:  # javaobj raises assorted errors on damaged streams
        raise DecodeError(
            f"Java serialization: {type(exc).__name__}: {exc}", failure_type=FailureType.JAVA_DECODE_ERROR
        ) from None
    try:
        return convert(obj)
    except DecodeError:
        raise
    except Exception as exc:
        raise DecodeError(f"unexpected Java object graph: {exc}", failure_type=FailureType.JAVA_DECODE_ERROR) from None


def _parse(data: bytes) -> Any:
    """What ``javaobj.v2.loads`` returns for ``data``, its parser reading through ``_reader_class()``."""
    import io

    from javaobj.utils import java_data_fd
    from javaobj.v2.core import JavaStreamParser
    from javaobj.v2.transformers import DefaultObjectTransformer

    parser = JavaStreamParser(java_data_fd(io.BytesIO(data)), [DefaultObjectTransformer()])
    parser._JavaStreamParser__reader = _reader_class()(parser._JavaStreamParser__fd)  # type: ignore[attr-defined]
    contents = parser.run()
    if not contents:
        return None
    return contents[0] if len(contents) == 1 else contents


@functools.cache
def _reader_class() -> type:
    """javaobj's ``DataStreamReader`` with the same answers, faster: it builds a ``struct`` format for every
    primitive it reads and decodes every string one character at a time through a generator (Modified
    UTF-8, which for ASCII without NUL is ASCII). Here the formats are compiled once and such strings are
    decoded by ``bytes.decode``; any other string still goes through javaobj's own decoder. The parsing itself
    (handles, class descriptors, field values) stays javaobj's. Reading Storm 0.9's 382 payloads of the
    walk benchmark's tree: 390 ms -> 310 ms. ``tests/test_clojure_streams.py`` checks that both readers
    give the same objects on every stream a real Clojure wrote. Made on first use: a walk with no Java
    payload never imports javaobj."""
    import struct

    from javaobj.modifiedutf8 import decode_modified_utf8
    from javaobj.v2.stream import DataStreamReader

    structs: dict[str, struct.Struct] = {}
    ushort, short, integer, long = (struct.Struct(f).unpack for f in (">H", ">h", ">i", ">q"))

    class Reader(DataStreamReader):  # type: ignore[misc]
        def __init__(self, fd: Any) -> None:
            super().__init__(fd)
            self._read = fd.read

        def _exactly(self, n: int) -> bytes:
            data: bytes = self._read(n)
            if len(data) != n:
                raise EOFError("Stream has ended unexpectedly while parsing.")
            return data

        def read(self, struct_format: str) -> tuple[Any, ...]:
            unpacker = structs.get(struct_format)
            if unpacker is None:
                unpacker = structs[struct_format] = struct.Struct(struct_format)
            return unpacker.unpack(self._exactly(unpacker.size))

        def read_byte(self) -> int:
            value = self._exactly(1)[0]
            return value - 256 if value > 127 else value

        def read_ubyte(self) -> int:
            return self._exactly(1)[0]

        def read_bool(self) -> bool:
            return bool(self._exactly(1)[0])

        def read_short(self) -> int:
            return short(self._exactly(2))[0]  # type: ignore[no-any-return]

        def read_ushort(self) -> int:
            return ushort(self._exactly(2))[0]  # type: ignore[no-any-return]

        def read_int(self) -> int:
            return integer(self._exactly(4))[0]  # type: ignore[no-any-return]

        def read_long(self) -> int:
            return long(self._exactly(8))[0]  # type: ignore[no-any-return]

        def read_UTF(self) -> str:
            raw = self._read(self.read_ushort())  # as javaobj: a short read decodes what is there
            if raw.isascii() and b"\0" not in raw:  # Modified UTF-8 writes NUL as C0 80: a raw one is damage
                return raw.decode("ascii")
            return decode_modified_utf8(raw)[0]  # type: ignore[no-any-return]

    return Reader


def _fields(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fields in obj.field_data.values():
        for field, value in fields.items():
            out[field.name] = value
    return out


def convert(obj: Any, depth: int = 0) -> Any:
    """One Java object → Python, by its class name and field names: Clojure's maps → dicts, vectors,
    lists, seqs, sets and queues → lists (sets sorted), keywords → ``":name"``, records and beans → dicts
    (see ``_record``)."""
    if depth > _MAX_DEPTH:
        raise DecodeError("Java object graph nested too deep", failure_type=FailureType.JAVA_DECODE_ERROR)
    if obj is None or isinstance(obj, bool | int | float):
        return obj
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, bytes | bytearray):
        return bytes(obj)
    if isinstance(obj, list):  # Java arrays, and javaobj's own java.util lists
        return [convert(item, depth + 1) for item in obj]
    if isinstance(obj, set | frozenset):  # javaobj's own java.util sets
        return sorted((convert(item, depth + 1) for item in obj), key=repr)
    if isinstance(obj, dict):  # javaobj's own java.util maps
        return {_key(convert(k, depth + 1)): convert(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, _Entry):  # an entry of a map's seq: a [key value] pair, as Clojure prints it
        return [convert(obj.key, depth + 1), convert(obj.val, depth + 1)]
    classdesc = getattr(obj, "classdesc", None)
    if classdesc is None:
        return str(obj)
    name = classdesc.name
    fields = _fields(obj) if hasattr(obj, "field_data") else {}
    if name in _BOXED:
        return convert(fields.get("value"), depth + 1)
    if name == "clojure.lang.Keyword":
        sym = _fields(fields["sym"])
        ns = sym.get("ns")
        return f":{ns}/{sym['name']}" if ns else f":{sym['name']}"
    if name == "clojure.lang.Symbol":
        return str(fields.get("name"))
    if name in _MAPS:
        return {_key(convert(k, depth + 1)): convert(v, depth + 1) for k, v in _MAPS[name](fields, depth + 1)}
    if name in _SETS:
        return sorted((convert(k, depth + 1) for k, _ in _map_entries(fields.get("impl"), depth + 1)), key=repr)
    if name in ("clojure.lang.MapEntry", "clojure.lang.AMapEntry"):
        return [convert(_field(fields, "key"), depth + 1), convert(_field(fields, "val"), depth + 1)]
    items = _sequence(name, fields, depth + 1)
    if items is not None:
        return [convert(item, depth + 1) for item in items]
    return _record(name, fields, depth)


def _field(fields: dict[str, Any], name: str) -> Any:
    """A field that Clojure versions spell ``key`` or ``_key`` (1.2-1.8 vs 1.9+ MapEntry, and others)."""
    return fields[name] if name in fields else fields.get(f"_{name}")


def _record(name: str, fields: dict[str, Any], depth: int) -> dict[str, Any]:
    """A Clojure record (backtype.storm.daemon.common.StormBase …) or a plain Java bean: its fields by
    demunged name, ``"_record"`` naming the class. A record's ``__extmap`` (keys assoc'ed beyond the
    declared fields) is kept aside under ``"_extmap"``; ``__meta``, ``__hash`` and ``__hasheq`` are
    Clojure's bookkeeping."""
    record: dict[str, Any] = {"_record": name}
    for field_name, value in fields.items():
        if field_name == "__extmap":
            extra = convert(value, depth + 1)
            if extra:
                record["_extmap"] = extra
        elif not field_name.startswith("__"):
            record[demunge(field_name)] = convert(value, depth + 1)
    return record


def _key(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else (tuple(sorted(key.items())) if isinstance(key, dict) else key)


# --- maps: (key, value) pairs of the raw Java objects -------------------------------------------------


def _map_entries(node: Any, depth: int) -> list[tuple[Any, Any]]:
    """The entries of a serialized map object of any kind (Clojure or java.util)."""
    if node is None:
        return []
    if isinstance(node, dict):
        return list(node.items())
    name = node.classdesc.name
    if name not in _MAPS:
        raise DecodeError(f"expected a map, found {name}", failure_type=FailureType.JAVA_DECODE_ERROR)
    return _MAPS[name](_fields(node), depth + 1)


def _array_map(fields: dict[str, Any], depth: int) -> list[tuple[Any, Any]]:
    array = fields.get("array") or []
    return [(array[i], array[i + 1]) for i in range(0, len(array) - 1, 2)]


def _hash_map(fields: dict[str, Any], depth: int) -> list[tuple[Any, Any]]:
    out: list[tuple[Any, Any]] = []
    if fields.get("hasNull"):
        out.append((None, fields.get("nullValue")))
    if fields.get("root") is not None:
        _hamt(fields["root"], out, depth + 1)
    return out


def _hamt(node: Any, out: list[tuple[Any, Any]], depth: int) -> None:
    """PersistentHashMap's trie: ArrayNode (children), BitmapIndexedNode and HashCollisionNode (key,
    value pairs, a null key marking a sub-node in the value's place)."""
    if depth > _MAX_DEPTH:
        raise DecodeError("hash map nested too deep", failure_type=FailureType.JAVA_DECODE_ERROR)
    array = _fields(node).get("array") or []
    if node.classdesc.name.endswith("ArrayNode"):
        for child in array:
            if child is not None:
                _hamt(child, out, depth + 1)
        return
    _hamt_pairs(array, 0, out, depth)


def _hamt_pairs(array: list[Any], start: int, out: list[tuple[Any, Any]], depth: int) -> None:
    for i in range(start, len(array) - 1, 2):
        key, value = array[i], array[i + 1]
        if key is not None:
            out.append((key, value))
        elif value is not None:
            _hamt(value, out, depth + 1)


def _tree_map(fields: dict[str, Any], depth: int) -> list[tuple[Any, Any]]:
    """PersistentTreeMap: red/black nodes with ``key``, ``val`` (the *Val classes) and ``left``/``right``
    (the *Branch classes), read in order."""
    out: list[tuple[Any, Any]] = []
    stack: list[tuple[Any, int]] = [(fields.get("tree"), depth)]
    while stack:
        node, level = stack.pop()
        if node is None:
            continue
        if level > _MAX_DEPTH + depth:
            raise DecodeError("sorted map nested too deep", failure_type=FailureType.JAVA_DECODE_ERROR)
        if isinstance(node, tuple):  # an entry whose left side is done
            out.append(node)
            continue
        node_fields = _fields(node)
        stack.append((node_fields.get("right"), level + 1))
        stack.append(((node_fields.get("key"), node_fields.get("val")), level))
        stack.append((node_fields.get("left"), level + 1))
    return out


_MAPS = {
    "clojure.lang.PersistentArrayMap": _array_map,
    "clojure.lang.PersistentHashMap": _hash_map,
    "clojure.lang.PersistentTreeMap": _tree_map,
}
_SETS = {"clojure.lang.PersistentHashSet", "clojure.lang.PersistentTreeSet"}


# --- sequences: the raw Java items ---------------------------------------------------------------------


def _sequence(name: str, fields: dict[str, Any], depth: int) -> list[Any] | None:
    """The items of a serialized Clojure vector, list, seq, range or queue, or None if ``name`` is none
    of them. Seqs are followed through their fields (a LazySeq's realized ``s``/``sv``, a Cons's
    ``_first``/``_more``, a chunk's array), never by calling code: an unrealized lazy seq (its ``fn``
    only) is a DecodeError."""
    if depth > _MAX_DEPTH:
        raise DecodeError("sequence nested too deep", failure_type=FailureType.JAVA_DECODE_ERROR)
    if name in ("clojure.lang.PersistentVector", "clojure.lang.APersistentVector"):
        items: list[Any] = []
        _vector_node(fields.get("root"), int(fields.get("shift") or 5), items, depth + 1)
        items.extend(fields.get("tail") or [])
        return items[: fields.get("cnt", len(items))]
    if name == "clojure.lang.PersistentVector$ChunkedSeq":
        vector = _sequence("clojure.lang.PersistentVector", _fields(fields["vec"]), depth + 1) or []
        return vector[int(fields.get("i") or 0) + int(fields.get("offset") or 0) :]
    if name in ("clojure.lang.ArraySeq", "clojure.lang.StringSeq") or name.startswith("clojure.lang.ArraySeq$"):
        return list((fields.get("array") or [])[int(fields.get("i") or 0) :])
    if name == "clojure.lang.PersistentArrayMap$Seq":
        array = fields.get("array") or []
        return [_Entry(array[i], array[i + 1]) for i in range(int(fields.get("i") or 0), len(array) - 1, 2)]
    if name == "clojure.lang.PersistentHashMap$NodeSeq":
        pairs: list[tuple[Any, Any]] = []
        start = int(fields.get("i") or 0)
        if fields.get("s") is not None:
            head = _items(fields["s"], depth + 1)
            pairs.extend(_pair(e) for e in head)
            start += 2
        _hamt_pairs(fields.get("array") or [], start, pairs, depth + 1)
        return [_Entry(k, v) for k, v in pairs]
    if name == "clojure.lang.PersistentHashMap$ArrayNode$Seq":
        pairs = []
        if fields.get("s") is not None:
            pairs.extend(_pair(e) for e in _items(fields["s"], depth + 1))
        for child in (fields.get("nodes") or [])[int(fields.get("i") or 0) :]:
            if child is not None:
                _hamt(child, pairs, depth + 1)
        return [_Entry(k, v) for k, v in pairs]
    if name in ("clojure.lang.APersistentMap$KeySeq", "clojure.lang.APersistentMap$ValSeq"):
        index = 0 if name.endswith("KeySeq") else 1
        if fields.get("iterable") is not None:  # 1.7+: the map itself
            return [pair[index] for pair in _map_entries(fields["iterable"], depth + 1)]
        return [_pair(e)[index] for e in _items(fields.get("seq"), depth + 1)]
    if name in ("clojure.lang.LongRange", "clojure.lang.Range"):
        bounds = (fields.get("start"), fields.get("end"), fields.get("step"))
        if not all(isinstance(v, int) for v in bounds) or not bounds[2]:
            return None  # a range of doubles or ratios: kept aside as a record
        first, end, step = (int(v) for v in bounds)  # type: ignore[arg-type]
        if abs((end - first) // step) > _MAX_ITEMS:
            raise DecodeError("range too long", failure_type=FailureType.JAVA_DECODE_ERROR)
        return list(range(first, end, step))
    if name == "clojure.lang.PersistentQueue":
        return _items(fields.get("f"), depth + 1) + _items(fields.get("r"), depth + 1)
    if name == "clojure.lang.ArrayChunk":
        return list((fields.get("array") or [])[int(fields.get("off") or 0) : fields.get("end")])
    if name in _LINKED:
        out: list[Any] = []
        node_name, node_fields = name, fields
        for _ in range(_MAX_ITEMS):
            if node_name == "clojure.lang.LazySeq":
                nxt = node_fields.get("s") if node_fields.get("s") is not None else node_fields.get("sv")
                if nxt is None and node_fields.get("fn") is not None:
                    raise DecodeError(
                        "an unrealized lazy seq: its items are not in the stream, only the code that makes them",
                        failure_type=FailureType.JAVA_DECODE_ERROR,
                    )
            elif node_name == "clojure.lang.ChunkedCons":
                out.extend(_items(node_fields.get("chunk"), depth + 1))
                nxt = node_fields.get("_more")
            elif "_first" in node_fields:
                out.append(node_fields["_first"])
                nxt = node_fields.get("_rest", node_fields.get("_more"))
            else:  # PersistentList's empty tail
                nxt = None
            if nxt is None:
                return out
            next_name = getattr(getattr(nxt, "classdesc", None), "name", None)
            if next_name not in _LINKED:  # a vector's seq, an array seq, a Java list: read whole
                return out + _items(nxt, depth + 1)
            node_name, node_fields = next_name, _fields(nxt)
        raise DecodeError("sequence too long (or cyclic)", failure_type=FailureType.JAVA_DECODE_ERROR)
    return None


_LINKED = {
    "clojure.lang.PersistentList",
    "clojure.lang.PersistentList$EmptyList",
    "clojure.lang.Cons",
    "clojure.lang.LazySeq",
    "clojure.lang.ChunkedCons",
}


def _items(obj: Any, depth: int) -> list[Any]:
    """The raw items of any sequential object (a Java array or list included); [] for None."""
    if obj is None:
        return []
    if isinstance(obj, list):
        return list(obj)
    classdesc = getattr(obj, "classdesc", None)
    if classdesc is None:
        raise DecodeError(
            f"expected a sequence, found {type(obj).__name__}", failure_type=FailureType.JAVA_DECODE_ERROR
        )
    items = _sequence(classdesc.name, _fields(obj), depth)
    if items is None:
        raise DecodeError(f"expected a sequence, found {classdesc.name}", failure_type=FailureType.JAVA_DECODE_ERROR)
    return items


class _Entry:
    """A map entry met inside a seq (a KeySeq's or NodeSeq's items), kept raw until converted."""

    __slots__ = ("key", "val")

    def __init__(self, key: Any, val: Any) -> None:
        self.key, self.val = key, val


def _pair(entry: Any) -> tuple[Any, Any]:
    if isinstance(entry, _Entry):
        return entry.key, entry.val
    fields = _fields(entry) if hasattr(entry, "field_data") else {}
    if "key" in fields or "_key" in fields:
        return _field(fields, "key"), _field(fields, "val")
    if isinstance(entry, list) and len(entry) == 2:
        return entry[0], entry[1]
    raise DecodeError("expected a map entry", failure_type=FailureType.JAVA_DECODE_ERROR)


def _vector_node(node: Any, level: int, items: list[Any], depth: int) -> None:
    """A PersistentVector trie below ``root`` with ``shift`` = ``level``: nodes hold child nodes down to
    level 0, whose arrays hold the items. Clojure 1.0/1.1 kept bare Object[] arrays where later versions
    keep PersistentVector$Node objects; both read the same."""
    if node is None:
        return
    if depth > _MAX_DEPTH:
        raise DecodeError("vector nested too deep", failure_type=FailureType.JAVA_DECODE_ERROR)
    array = node if isinstance(node, list) else _fields(node).get("array") or []
    if level <= 0:
        items.extend(array)  # a leaf: the trie's leaves are always full, the count trims the end
        return
    for child in array:
        if child is not None:
            _vector_node(child, level - 5, items, depth + 1)
