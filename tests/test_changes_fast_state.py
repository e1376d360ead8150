"""``changes`` reads a partition state in the common form straight from its bytes
(``decode.kafka.common_partition_state``, called by ``changes/kafka.partition_state``) instead of through
``model.walk.decode_one``. Whatever it reads must be exactly what the full decode gives (the one record,
no failure, the same summary), and it must read the common form itself (else it saves nothing): held here
over the common form and over every payload near it that the full decode reads otherwise."""

from __future__ import annotations

import pytest

from zkstorm.decode.kafka import common_partition_state, state_summary
from zkstorm.layout import Roots
from zkstorm.model.walk import decode_one
from zkstorm.sources.base import RawNode, Stat

ROOTS = Roots(storm=(), kafka=("/", "/kafka"))
PATHS = ("/brokers/topics/orders/partitions/3/state", "/kafka/brokers/topics/t.x-1/partitions/0/state")
STAT = Stat(5, 9, 1_700_000_000_000, 1_700_000_100_000, 7, 0, 0, 0, 0, 0, 9)

# what every controller up to Kafka 3.x writes (``TopicPartitionStateZNode.encode``), and layouts of it
COMMON = [
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2,3]}',
    b'{"controller_epoch":0,"leader":-1,"version":0,"leader_epoch":0,"isr":[]}',
    b' {"version": 1, "leader": 2, "leader_epoch": 11, "isr": [2], "controller_epoch": 9}\n',
]

# near the common form, each read otherwise by the full decode (a warning, a failure, other fields) or by
# the stdlib's JSON reader rather than orjson
NEAR = [
    b'{"controller_epoch":3,"leader":1,"leader":2,"version":1,"leader_epoch":5,"isr":[1,2]}',  # duplicate key
    b'\xef\xbb\xbf{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1]}',  # BOM
    b'{"controller_epoch":3,"\\u006ceader":1,"version":1,"leader_epoch":5,"isr":[1]}',  # escape
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":12345678901234567890,"isr":[1]}',
    b'{"controller_epoch":3,"leader":1,"version":2,"leader_epoch":5,"isr":[1]}',  # a newer version
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1],"leader_recovery_state":1}',
    b'{"controller_epoch":3,"leader":true,"version":1,"leader_epoch":5,"isr":[1]}',
    b'{"controller_epoch":3,"leader":1.0,"version":1,"leader_epoch":5,"isr":[1]}',
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1,"2"]}',
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":null}',
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5}',
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1]} trailing',
    b'{"controller_epoch":3,"leader":NaN,"version":1,"leader_epoch":5,"isr":[1]}',
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1],"note":"a:b"}',
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1]',
    b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":5,"isr":[1\xff]}',
    b"[1, 2]",
    b"null",
    b"7",
    b"",
    None,
]


def _full(path: str, data: bytes | None) -> tuple[list[object], str | None]:
    """The records and summary of the full decode, as ``changes`` keeps them (``kinds.Engine.decoded``)."""
    znode, records, _ = decode_one(RawNode(path, STAT, data), roots=ROOTS)
    return records, znode.summary


def _fast(path: str, data: bytes | None) -> object:
    root = "/kafka" if path.startswith("/kafka/") else "/"
    relative = path[len(root) :].lstrip("/")
    return common_partition_state(root, relative, data, STAT.version)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("data", COMMON)
def test_the_common_form_is_read_straight_as_the_full_decode_reads_it(path: str, data: bytes) -> None:
    fast = _fast(path, data)
    assert fast is not None, "the common form must take the straight read"
    records, summary = _full(path, data)
    assert records == [fast]
    assert summary == state_summary(fast)


@pytest.mark.parametrize("path", PATHS[:1])
@pytest.mark.parametrize("data", NEAR)
def test_anything_else_is_left_to_the_full_decode_or_read_as_it_reads_it(path: str, data: bytes | None) -> None:
    fast = _fast(path, data)
    if fast is not None:  # (the straight read may leave any of these to the full decode)
        records, summary = _full(path, data)
        assert records == [fast]
        assert summary == state_summary(fast)


@pytest.mark.parametrize("data", NEAR[:1] + NEAR[4:6])
def test_a_duplicate_key_a_newer_version_or_a_new_field_is_refused(data: bytes) -> None:
    assert _fast(PATHS[0], data) is None
