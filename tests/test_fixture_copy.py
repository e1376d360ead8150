"""The repository's copy of the fixture set is whole and unedited: every file SHA256SUMS lists is there
with the bytes it had in the shared set, and nothing else is."""

from __future__ import annotations

import gzip
import hashlib

from tests.fixtures import FIXTURES


def _listed() -> dict[str, str]:
    lines = (FIXTURES / "SHA256SUMS").read_text().splitlines()
    return {rel: digest for digest, rel in (line.split("  ", 1) for line in lines if line)}


def test_every_fixture_file_has_its_original_bytes() -> None:
    listed = _listed()
    assert len(listed) > 700  # the whole set, not a handful
    for rel, digest in listed.items():
        plain = FIXTURES / rel
        data = plain.read_bytes() if plain.is_file() else gzip.decompress((FIXTURES / f"{rel}.gz").read_bytes())
        assert hashlib.sha256(data).hexdigest() == digest, rel


def test_the_copy_holds_nothing_unlisted() -> None:
    listed = set(_listed())
    present = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    stored_gzipped = {rel for rel in listed if not (FIXTURES / rel).is_file()}
    assert present == (listed - stored_gzipped) | {f"{rel}.gz" for rel in stored_gzipped}
    assert stored_gzipped == {"zkfiles/expected.json"}  # the one file kept compressed (tests/data/README.md)
