"""``to_znode``: the hot-path constructor gives exactly the record the dataclass constructor gives."""

from __future__ import annotations

import dataclasses

from zkstorm.collect import to_znode
from zkstorm.records import Znode
from zkstorm.sources.base import RawNode, Stat


def test_to_znode_sets_every_field_as_the_dataclass_would() -> None:
    stat = Stat(11, 12, 1_700_000_000_000, 1_700_000_001_000, 3, 4, 5, 0x1234, 9, 2, 13)
    built = to_znode(RawNode("/storm/supervisors/s1", stat, b"123456789"), "binary", "summary", "decoded")
    expected = Znode(
        path="/storm/supervisors/s1",
        czxid=11,
        mzxid=12,
        pzxid=13,
        ctime_ms=1_700_000_000_000,
        mtime_ms=1_700_000_001_000,
        version=3,
        cversion=4,
        aversion=5,
        ephemeral_owner=0x1234,
        data_length=9,
        num_children=2,
        ephemeral=True,
        encoding="binary",
        summary="summary",
        decode_status="decoded",
    )
    # asdict reads every declared slot: one that to_znode forgot would raise AttributeError here
    assert dataclasses.asdict(built) == dataclasses.asdict(expected)
    assert built == expected


def test_to_znode_defaults_and_persistent_nodes() -> None:
    built = to_znode(RawNode("/", Stat(0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0), None), "empty")
    assert built.ephemeral is False
    assert (built.summary, built.decode_status) == (None, "not-decoded")
