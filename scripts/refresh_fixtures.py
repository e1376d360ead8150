"""Copy the fixture clusters the tests use from a shared fixtures folder into tests/data/fixtures.

The copy is byte-exact, except ``zkfiles/expected.json`` (2.2 MB of expected values), which is stored
gzipped (198 KB) so the checkout stays small; ``SHA256SUMS`` lists the digest of every file as it is in
the source folder (for the gzipped one, of its decompressed bytes), and ``tests/test_fixture_copy.py``
checks the copy against it.

    python scripts/refresh_fixtures.py PATH/TO/fixtures
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import sys
from pathlib import Path

DEST = Path(__file__).resolve().parents[1] / "tests" / "data" / "fixtures"
# Files kept compressed in the copy; everything else is copied as it is.
GZIPPED = {"zkfiles/expected.json"}


def refresh(source: Path, dest: Path = DEST) -> int:
    if not (source / "README.md").is_file():
        raise SystemExit(f"{source} does not look like a fixtures folder (no README.md)")
    if dest.exists():
        shutil.rmtree(dest)
    sums = []
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        rel = path.relative_to(source).as_posix()
        data = path.read_bytes()
        sums.append(f"{hashlib.sha256(data).hexdigest()}  {rel}")
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel in GZIPPED:
            # mtime=0: the same bytes give the same .gz, so a refresh without changes is no diff
            target.with_name(target.name + ".gz").write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        else:
            target.write_bytes(data)
    (dest / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    return len(sums)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(f"copied {refresh(Path(sys.argv[1]))} files into {DEST}")
