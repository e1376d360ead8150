#!/usr/bin/env bash
# The demo: a throwaway sandbox ZooKeeper with a synthetic Storm 2.x and Kafka 3.x cluster, inspected
# with zkstorm. Usage: scripts/demo.sh SANDBOX_DIR [KEEP]
set -euo pipefail
export ZKSTORM_SANDBOX_DIR="$1"
keep="${2:-}"
zkstorm=".venv/bin/zkstorm"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

"$zkstorm" sandbox stop >/dev/null 2>&1 || true
step "zkstorm sandbox start"
ZK=$("$zkstorm" sandbox start)
export ZKSTORM_ZK="$ZK" ZKSTORM_KAFKA_ROOT=/kafka
echo "$ZK"
if [ -z "$keep" ]; then trap '"$zkstorm" sandbox stop >/dev/null 2>&1' EXIT; fi

step "zkstorm tree / --depth 1"
"$zkstorm" tree / --depth 1
step "zkstorm tree /storm --depth 2"
"$zkstorm" tree /storm --depth 2
step "zkstorm tree /kafka/brokers --depth 2"
"$zkstorm" tree /kafka/brokers --depth 2
step "zkstorm storm topologies"
"$zkstorm" storm topologies
step "zkstorm storm nimbus"
"$zkstorm" storm nimbus
step "zkstorm storm workers fraud-scorer"
"$zkstorm" storm workers fraud-scorer
step "zkstorm errors clickstream-enrich --limit 6"
"$zkstorm" errors clickstream-enrich --limit 6
step "zkstorm errors fraud-scorer --limit 1 --full -f json"
"$zkstorm" errors fraud-scorer --limit 1 --full -f json
step "zkstorm kafka brokers   (ZKSTORM_KAFKA_ROOT=/kafka)"
"$zkstorm" kafka brokers
step "zkstorm kafka partitions --offline"
"$zkstorm" kafka partitions --offline
step "zkstorm kafka health --check | head -25"
"$zkstorm" kafka health --check | head -25 || true
step "zkstorm kafka configs --type users   (SCRAM credentials redacted)"
"$zkstorm" kafka configs --type users
step "zkstorm get /kafka/brokers/ids/1"
"$zkstorm" get /kafka/brokers/ids/1
step "zkstorm zk members   (the sandbox is one member; it allows srvr and mntr, not conf)"
"$zkstorm" zk members
step "zkstorm zk usage / --by record_kind --limit 8"
"$zkstorm" zk usage / --by record_kind --limit 8
step "zkstorm tree / -f jsonl | wc -l"
"$zkstorm" tree / -f jsonl | wc -l

snapshots="$(pwd)/.demo-snapshots"
step "zkstorm snapshot $snapshots --cluster sandbox"
"$zkstorm" snapshot "$snapshots" --cluster sandbox
step "what the snapshot wrote (tables, rows per table, one table read back with pyarrow)"
.venv/bin/python - "$snapshots" <<'PY'
import json, pathlib, sys
import pyarrow.dataset as ds
out = pathlib.Path(sys.argv[1])
manifest = json.loads(sorted((out / "_manifests").glob("*.json"))[-1].read_text())
print(f"snapshot {manifest['snapshot_id']}: {manifest['znodes']} znodes, zxids {manifest['zxid_min']:#x}..{manifest['zxid_max']:#x}")
for table, rows in manifest["tables"].items():
    print(f"  {out / table}/  {rows} rows")
errors = ds.dataset(out / "storm_errors", partitioning="hive").to_table(columns=["topology_id", "component"])
print(f"storm_errors read back: {errors.num_rows} rows across {len(set(errors.column('topology_id').to_pylist()))} topologies")
PY

if [ -n "$keep" ]; then
  printf '\nThe sandbox keeps running: export ZKSTORM_ZK=%s ZKSTORM_SANDBOX_DIR=%s\n' "$ZK" "$ZKSTORM_SANDBOX_DIR"
  printf 'Stop it with: ZKSTORM_SANDBOX_DIR=%s %s sandbox stop\n' "$ZKSTORM_SANDBOX_DIR" "$zkstorm"
else
  printf '\nDone; the sandbox is stopped. `make demo KEEP=1` leaves it running to explore.\n'
fi

week="$(pwd)/.demo-week"
rm -rf "$week"
step "a week of nightly snapshots, with incidents staged between the nights (scripts/demo_week.py)"
.venv/bin/python scripts/demo_week.py "$ZK" "$week"
step "zkstorm history $week --html .demo-history.html --out .demo-history"
rm -rf "$(pwd)/.demo-history"  # a fresh history: an earlier demo's week is not this one's past
"$zkstorm" history "$week" --html "$(pwd)/.demo-history.html" --out "$(pwd)/.demo-history"
mapfile -t nights < <(ls "$week/_manifests" | sed 's/\.json$//' | sort)
step "zkstorm diff $week ${nights[1]} ${nights[2]} --table kafka_brokers --table storm_supervisors   (the night the broker died)"
"$zkstorm" diff "$week" "${nights[1]}" "${nights[2]}" --table kafka_brokers --table storm_supervisors
step "zkstorm --from-files \$ZKSTORM_SANDBOX_DIR/data kafka brokers   (the sandbox server's own files, no client session)"
"$zkstorm" --from-files "$ZKSTORM_SANDBOX_DIR/data" kafka brokers
