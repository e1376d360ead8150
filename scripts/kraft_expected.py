"""What Kafka's own readers say of a captured ``__cluster_metadata-0`` folder, as one JSON document on stdout
(``scripts/capture-kraft.sh expect``): the tests hold zkstorm's KRaft reader against it without Java.

- ``dump``: per file (segment or snapshot), every batch and record as ``kafka-dump-log
  --cluster-metadata-decoder --deep-iteration --print-data-log`` prints them: the batch's offsets, leader
  epoch, control flag, create time and CRC; each record's offset, create time and its decoded payload
  (``{"type", "version", "data"}`` for a metadata record; the control record's name and JSON for one).
- ``shell``: per file the metadata shell read, its ``tree /`` (the image as ``kafka-metadata-shell`` builds
  it), as nested objects; a leaf's lines joined. A file the shell could not read has its error instead.

Usage: kraft_expected.py --kafka VERSION --shell VERSION WORK_DIR FOLDER
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

BATCH = re.compile(
    r"^baseOffset: (?P<base>-?\d+) lastOffset: (?P<last>-?\d+) count: (?P<count>\d+) .*?"
    r"partitionLeaderEpoch: (?P<epoch>-?\d+) isTransactional: (?P<txn>\w+) isControl: (?P<control>\w+) .*?"
    r"position: (?P<position>\d+) CreateTime: (?P<time>-?\d+) size: (?P<size>\d+) magic: (?P<magic>\d+) "
    r"compresscodec: (?P<codec>\w+) crc: (?P<crc>\d+) isvalid: (?P<valid>\w+)"
)
RECORD = re.compile(r"^\| offset: (?P<offset>\d+) CreateTime: (?P<time>-?\d+) .*?headerKeys: \[[^]]*\] (?P<rest>.*)$")
CONTROL = re.compile(r"^(?P<name>[A-Za-z]+):? (?P<json>\{.*\})$")


def parse_dump(text: str) -> dict[str, Any]:
    files: dict[str, Any] = {}
    current: dict[str, Any] | None = None
    batch: dict[str, Any] | None = None
    for line in text.splitlines():
        if line.startswith("== "):
            current = files[line[3:].strip()] = {"batches": []}
            continue
        if current is None:
            continue
        if line.startswith("Snapshot end offset:"):
            current["snapshot_id"] = line.strip()
        m = BATCH.match(line)
        if m:
            batch = {
                "base_offset": int(m["base"]),
                "last_offset": int(m["last"]),
                "count": int(m["count"]),
                "leader_epoch": int(m["epoch"]),
                "transactional": m["txn"] == "true",
                "control": m["control"] == "true",
                "position": int(m["position"]),
                "create_time": int(m["time"]),
                "size": int(m["size"]),
                "compression": m["codec"],
                "crc": int(m["crc"]),
                "valid": m["valid"] == "true",
                "records": [],
            }
            current["batches"].append(batch)
            continue
        m = RECORD.match(line)
        if m and batch is not None:
            rest = m["rest"]
            record: dict[str, Any] = {"offset": int(m["offset"]), "create_time": int(m["time"])}
            if rest.startswith("payload: "):
                record["payload"] = json.loads(rest[len("payload: ") :])
            else:
                c = CONTROL.match(rest)
                if c:
                    record["control"] = {"type": c["name"], "data": json.loads(c["json"])}
                else:
                    record["other"] = rest
            batch["records"].append(record)
    return files


# the shell prints SCRAM credentials whole: the expected values keep their iterations only
SCRAM_SECRET = re.compile(r"(salt|storedKey|serverKey)=[0-9a-f]+")


def parse_tree(text: str) -> dict[str, Any]:
    """``tree /`` of the metadata shell: a name per line ending in ``:``, indented two spaces a level; the
    other lines are the text of the node above them."""
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any], str | None]] = [(-1, root, None)]
    for line in text.splitlines():
        if not line.strip() or line.startswith(("SLF4J", "WARN", "INFO", "ERROR")):
            continue
        indent = len(line) - len(line.lstrip(" "))
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        body = SCRAM_SECRET.sub(lambda m: f"{m[1]}=<removed>", line.strip())
        if body.endswith(":") and not body.startswith(("{", "[")):
            node: dict[str, Any] = {}
            parent[body[:-1]] = node
            stack.append((indent, node, body[:-1]))
        else:
            parent["_text"] = (parent.get("_text", "") + "\n" + body).lstrip("\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kafka", required=True)
    parser.add_argument("--shell", required=True)
    parser.add_argument("work")
    parser.add_argument("folder")
    args = parser.parse_args()
    work = Path(args.work)
    shell: dict[str, Any] = {}
    for out in sorted(work.glob("shell-*.txt")):
        name = out.name[len("shell-") : -len(".txt")]
        tree = parse_tree(out.read_text())
        errors = (work / f"shell-{name}.err").read_text() if (work / f"shell-{name}.err").exists() else ""
        problem = next((line for line in errors.splitlines() if "fault" in line or "Exception" in line), None)
        shell[name] = {"tree": tree, "error": problem}
    document = {
        "kafka": args.kafka,
        "tools": {
            "dump": f"kafka-dump-log --cluster-metadata-decoder (Kafka {args.kafka})",
            "shell": f"kafka-metadata-shell --snapshot FILE tree / (Kafka {args.shell})",
        },
        "dump": parse_dump((work / "dump.txt").read_text()),
        "shell": shell,
    }
    print(json.dumps(document, sort_keys=True))


if __name__ == "__main__":
    main()
