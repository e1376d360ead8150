"""Java serialization → plain Python, for Storm 0.9's Clojure payloads and 2.x's ``leader-info``.

javaobj-py3 parses the stream into class descriptors and field values; this module turns what Storm
stores into Python data by structure (class name and field names, never offsets): Clojure persistent
maps (array maps and HAMT hash maps), vectors, keywords (``":name"``), records (as dicts keyed by
their demunged field names, with ``"_record"`` naming the class), java.util collections and boxed
numbers.
"""

from __future__ import annotations

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


def demunge(name: str) -> str:
    """Clojure's field-name munging undone: ``component__GT_executors`` → ``component->executors``."""
    for munged, plain in _MUNGED:
        name = name.replace(munged, plain)
    return name.replace("_", "-")


def loads(data: bytes) -> Any:
    """Parse one Java-serialized object and convert it."""
    import javaobj.v2 as javaobj

    try:
        obj = javaobj.loads(data)
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


def _fields(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fields in obj.field_data.values():
        for field, value in fields.items():
            out[field.name] = value
    return out


def convert(obj: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise DecodeError("Java object graph nested too deep", failure_type=FailureType.JAVA_DECODE_ERROR)
    if obj is None or isinstance(obj, bool | int | float):
        return obj
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, bytes | bytearray):
        return bytes(obj)
    if isinstance(obj, list):  # Java arrays
        return [convert(item, depth + 1) for item in obj]
    if isinstance(obj, dict):  # javaobj's own transform of java.util.HashMap and friends
        return {_key(convert(k, depth + 1)): convert(v, depth + 1) for k, v in obj.items()}
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
    if name == "clojure.lang.PersistentArrayMap":
        array = fields.get("array") or []
        return {_key(convert(array[i], depth + 1)): convert(array[i + 1], depth + 1) for i in range(0, len(array), 2)}
    if name == "clojure.lang.PersistentHashMap":
        out: dict[Any, Any] = {}
        if fields.get("hasNull"):
            out[None] = convert(fields.get("nullValue"), depth + 1)
        if fields.get("root") is not None:
            _hamt(fields["root"], out, depth + 1)
        return out
    if name in ("clojure.lang.PersistentVector", "clojure.lang.APersistentVector"):
        items: list[Any] = []
        _vector_node(fields.get("root"), items, depth + 1)
        items.extend(fields.get("tail") or [])
        return [convert(item, depth + 1) for item in items[: fields.get("cnt", len(items))]]
    if name in ("clojure.lang.PersistentList", "clojure.lang.PersistentList$EmptyList"):
        return _seq(obj, depth)
    if name.startswith("clojure.lang.PersistentHashSet") or name == "clojure.lang.PersistentTreeSet":
        return sorted(convert(fields.get("impl"), depth + 1), key=repr)
    if name == "java.util.ArrayList":
        return [convert(item, depth + 1) for item in getattr(obj, "annotations", [])[1:]]
    # A Clojure record (backtype.storm.daemon.common.StormBase …) or a plain Java bean.
    record: dict[str, Any] = {"_record": name}
    for field_name, value in fields.items():
        if field_name.startswith("__"):
            continue  # __hash, __hasheq, __extmap, __meta: Clojure's bookkeeping
        record[demunge(field_name)] = convert(value, depth + 1)
    return record


def _key(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else (tuple(sorted(key.items())) if isinstance(key, dict) else key)


def _hamt(node: Any, out: dict[Any, Any], depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise DecodeError("hash map nested too deep", failure_type=FailureType.JAVA_DECODE_ERROR)
    fields = _fields(node)
    array = fields.get("array") or []
    if node.classdesc.name.endswith("ArrayNode"):
        for child in array:
            if child is not None:
                _hamt(child, out, depth + 1)
        return
    for i in range(0, len(array) - 1, 2):
        key, value = array[i], array[i + 1]
        if key is None:
            if value is not None:
                _hamt(value, out, depth + 1)  # a sub-node
        else:
            out[_key(convert(key, depth + 1))] = convert(value, depth + 1)


def _vector_node(node: Any, items: list[Any], depth: int) -> None:
    if node is None or depth > _MAX_DEPTH:
        return
    for child in _fields(node).get("array") or []:
        if child is None:
            continue
        if getattr(child, "classdesc", None) is not None and child.classdesc.name.endswith("PersistentVector$Node"):
            _vector_node(child, items, depth + 1)
        else:
            items.append(child)


def _seq(obj: Any, depth: int) -> list[Any]:
    items = []
    while obj is not None and getattr(obj, "classdesc", None) is not None:
        fields = _fields(obj)
        if "_first" not in fields:
            break
        items.append(convert(fields["_first"], depth + 1))
        obj = fields.get("_rest")
    return items
