#!/usr/bin/env bash
# The demo: a throwaway sandbox ZooKeeper with a synthetic Storm 2.x and Kafka 3.x cluster, inspected
# with zkstorm. Usage: scripts/demo.sh SANDBOX_DIR [KEEP] [REAL]
# REAL (make demo REAL=1): the same views on real daemons started by the suite's harness instead
# (scripts/demo_real.py: ZooKeeper, three Kafka 3.9.2 brokers, Storm 2.8.3 LocalCluster with a topology),
# all stopped on any exit, Ctrl-C included; then ZooKeeper's own log and files instead of the staged week.
set -euo pipefail
export ZKSTORM_SANDBOX_DIR="$1"
keep="${2:-}"
real="${3:-}"
zkstorm=".venv/bin/zkstorm"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

if [ -n "$real" ]; then
  run="$(pwd)/.demo-real"
  rm -rf "$run"
  mkdir -p "$run"
  if [ -n "$keep" ]; then echo "note: KEEP=1 does not apply to REAL=1: the real daemons stop when the demo ends" >&2; keep=""; fi
  step "scripts/demo_real.py $run   (ZooKeeper, 3 Kafka 3.9.2 brokers, Storm 2.8.3 LocalCluster: tests/real/)"
  .venv/bin/python scripts/demo_real.py "$run" &
  real_pid=$!
  # zk.pid is left only if demo_real.py died without stopping its ZooKeeper
  trap 'kill -TERM "$real_pid" 2>/dev/null || true; wait "$real_pid" 2>/dev/null || true
        if [ -s "$run/zk.pid" ]; then kill -TERM "$(cat "$run/zk.pid")" 2>/dev/null || true; fi' EXIT
  trap 'exit 130' INT TERM
  while [ ! -s "$run/zk" ]; do
    if ! kill -0 "$real_pid" 2>/dev/null; then
      rc=0; wait "$real_pid" || rc=$?
      if [ "$rc" -eq 130 ]; then exit 130; fi  # stopped by Ctrl-C or SIGTERM while starting
      echo "FATAL: the real daemons did not start (logs under $run)" >&2; exit 1
    fi
    sleep 1
  done
  ZK=$(cat "$run/zk")
  data="$run/zk-server/data"
  workers_topology=words errors_topology=words cluster=real
else
  "$zkstorm" sandbox stop >/dev/null 2>&1 || true
  step "zkstorm sandbox start"
  ZK=$("$zkstorm" sandbox start)
  data="$ZKSTORM_SANDBOX_DIR/data"
  workers_topology=fraud-scorer errors_topology=clickstream-enrich cluster=sandbox
fi
export ZKSTORM_ZK="$ZK" ZKSTORM_KAFKA_ROOT=/kafka
echo "$ZK"
if [ -z "$keep" ] && [ -z "$real" ]; then trap '"$zkstorm" sandbox stop >/dev/null 2>&1' EXIT; fi

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
step "zkstorm storm workers $workers_topology"
"$zkstorm" storm workers "$workers_topology"
step "zkstorm errors $errors_topology --limit 6"
"$zkstorm" errors "$errors_topology" --limit 6
step "zkstorm errors $workers_topology --limit 1 --full -f json"
"$zkstorm" errors "$workers_topology" --limit 1 --full -f json
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
if [ -n "$real" ]; then snapshots="$run/snapshots"; fi
step "zkstorm snapshot $snapshots --cluster $cluster"
"$zkstorm" snapshot "$snapshots" --cluster "$cluster"
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

if [ -n "$real" ]; then
  step "zkstorm --from-files $data changes --path /storm   (ZooKeeper's own log: what Storm did since it started)"
  "$zkstorm" --from-files "$data" changes --path /storm
  step "zkstorm --from-files $data storm topologies   (the server's own files, no client session)"
  "$zkstorm" --from-files "$data" storm topologies
  step "zkstorm --from-files $data kafka brokers"
  "$zkstorm" --from-files "$data" kafka brokers
  printf '\nDone; the real daemons stop now (logs under %s).\n' "$run"
  exit 0
fi

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
