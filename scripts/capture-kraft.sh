#!/usr/bin/env bash
# Real KRaft metadata for zkstorm's tests: start a small KRaft cluster of a real Kafka on loopback (a combined
# controller+broker node and two brokers), change it the ways an operator does (KraftScenario.java: topics of
# several partitions and replication factors, topic, broker and client configs with a password config,
# SCRAM users, ACLs under StandardAuthorizer, a topic deleted, partitions added and moved), then kill one
# broker, stop another, kill the controller, and copy the controller's __cluster_metadata-0 folder (and its
# meta.properties) beside what Kafka's own readers say of it (kraft_expected.py: kafka-dump-log
# --cluster-metadata-decoder and kafka-metadata-shell, as expected.json).
#
#   scripts/capture-kraft.sh [VERSION] [OUT]       capture (default 4.4.0 into tests/data/real/kraft-4.x)
#   scripts/capture-kraft.sh jars VERSION          fetch that Kafka's jars (once) and print their folder
#   scripts/capture-kraft.sh shell-jars VERSION    the same for the kafka-metadata-shell that reads it
#   scripts/capture-kraft.sh expect VERSION DIR    what Kafka's readers say of DIR, as JSON on stdout
#   scripts/capture-kraft.sh migrate [VERSION] [OUT]  a ZooKeeper cluster migrated to KRaft, at dual-write
#                                                  (default 3.9.2 into tests/data/real/kraft-migration-3.9)
#
# The jars come from Maven Central through Maven itself: a throwaway pom in a temporary folder, then
# `mvn dependency:copy-dependencies` into ~/.m2/zkstorm-kraft/<name> (ZKSTORM_KRAFT_JARS; the artifacts
# themselves are cached in ~/.m2 as Maven caches them). Needs Java 17+ and Maven; loopback ports only.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
CACHE="${ZKSTORM_KRAFT_JARS:-$HOME/.m2/zkstorm-kraft}"
WORK=""

shell_version() {
  # kafka-shell (MetadataShell) is not published for every release (4.4.0 has none on Maven Central):
  # the newest that is, run on the jars of its own release
  case "$1" in
    4.4.*) echo 4.3.1 ;;
    *) echo "$1" ;;
  esac
}

dump_log_class() {
  # kafka.tools.DumpLogSegments (Scala, in core) until 3.9; org.apache.kafka.tools.DumpLogSegments from 4.0
  case "$1" in
    3.*) echo kafka.tools.DumpLogSegments ;;
    *) echo org.apache.kafka.tools.DumpLogSegments ;;
  esac
}

dep() { echo "<dependency><groupId>org.apache.kafka</groupId><artifactId>$1</artifactId><version>$2</version></dependency>"; }

# the dependencies DEPS (pom XML) of a throwaway pom, copied into $CACHE/NAME once; prints the folder
fetch_jars() {
  local name="$1" deps="$2" dir="$CACHE/$1" tmp
  if [ -f "$dir/.complete" ]; then echo "$dir"; return; fi
  tmp="$(mktemp -d)"
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    echo "<groupId>zkstorm.capture</groupId><artifactId>$name</artifactId><version>1</version><packaging>pom</packaging>"
    echo "<dependencies>$deps</dependencies></project>"
  } > "$tmp/pom.xml"
  mkdir -p "$dir"
  mvn -q -B -f "$tmp/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir" >&2
  rm -rf "$tmp"
  touch "$dir/.complete"
  echo "$dir"
}

# the broker, the storage tool and kafka-dump-log of one release
jars() { fetch_jars "kafka-$1" "$(dep kafka_2.13 "$1")$(dep kafka-tools "$1")"; }

# kafka-metadata-shell, on the jars of its own release
shell_jars() { local v; v="$(shell_version "$1")"; fetch_jars "kafka-shell-$v" "$(dep kafka-shell "$v")"; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# What Kafka's own readers say of a captured folder: every record of every segment and snapshot as
# kafka-dump-log decodes it, and the image as kafka-metadata-shell shows it, as one JSON document.
expect() {
  local version="$1" dir="$2" cp shell_cp dump work f
  cp="$(jars "$version")/*"
  shell_cp="$(shell_jars "$version")/*"
  dump="$(dump_log_class "$version")"
  work="$(mktemp -d)"
  : > "$work/dump.txt"
  for f in "$dir"/*.log "$dir"/*.checkpoint; do
    [ -e "$f" ] || continue
    echo "== $(basename "$f")" >> "$work/dump.txt"
    java -cp "$cp" "$dump" --cluster-metadata-decoder --deep-iteration --print-data-log --files "$f" \
      >> "$work/dump.txt" 2>> "$work/dump.err" || true
  done
  # the shell replays one file of batches from its start: the segment (the whole log here) and each snapshot;
  # with a log4j binding, so that a file it cannot read says why (it logs its faults and goes on)
  local log4j="$work/log4j.properties" logging
  printf '%s\n' "log4j.rootLogger=ERROR, e" "log4j.appender.e=org.apache.log4j.ConsoleAppender" \
    "log4j.appender.e.Target=System.err" "log4j.appender.e.layout=org.apache.log4j.PatternLayout" > "$log4j"
  logging="$(fetch_jars log4j-binding "<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>")/*"
  # a subtree at a time (`tree /` of a whole image stops at the first node its printer fails on: 3.9's fails
  # on the default user's client quota, an entity with a null name), every subtree of a file from one shell:
  # its commands on stdin (a dumb terminal), run once its loader has caught up with the file (interactive
  # mode waits for that; one command per run does not, and may print the empty image). A ">> " prompt comes
  # before each command's output. A command that ends the shell (the printer's fault) is its last output:
  # the subtrees after it are asked of a new shell. A shell that hangs (30 s) is asked again, three times.
  local subs=(provenance features cluster topics configs acls scram producerIds delegationToken clientQuotas)
  local name next tries rc taken sub out try
  for f in "$dir"/*.log "$dir"/*.checkpoint; do
    [ -e "$f" ] || continue
    name="$(basename "$f")"
    next=0
    tries=0
    while [ "$next" -lt "${#subs[@]}" ]; do
      rc=0
      printf 'tree /image/%s\n' "${subs[@]:next}" | timeout -k 5 30 java -Dlog4j.configuration="file:$log4j" \
        -cp "$shell_cp:$logging" org.apache.kafka.shell.MetadataShell --snapshot "$f" > "$work/run.out" \
        2> "$work/try.err" || rc=$?
      cat "$work/try.err" >> "$work/shell-$name.err"
      # how many of the subtrees asked it answered (written to the file's tree text), from its prompts
      taken="$(python3 - "$rc" "$work/run.out" "$work/shell-$name.txt" "${subs[@]:next}" <<'SPLIT'
import sys
rc, out, txt, subs = int(sys.argv[1]), open(sys.argv[2], errors="replace").read(), sys.argv[3], sys.argv[4:]
_, banner, rest = out.partition("[ Kafka Metadata Shell ]\n")
parts = rest.split(">> ")[1:] if banner else []  # the output after each prompt; the last one's is the end
answered = parts[: len(subs)]
if rc != 0 and len(parts) <= len(subs):
    answered = answered[:-1]  # it hung or failed in this one: what it printed of it may be cut short
with open(txt, "a") as f:
    for sub, part in zip(subs, answered):
        body = "\n".join("  " + line for line in part.rstrip("\n").split("\n")) if part.strip() else ""
        f.write(f"{sub}:\n{body}\n")
print(len(answered))
SPLIT
)" || taken=0
      taken="${taken:-0}"  # (nothing read of it: as if it answered nothing)
      if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ "$((next + taken))" -lt "${#subs[@]}" ]; then
        # the shell ended in this subtree (its printer's fault), its output unflushed: that subtree alone,
        # as a command of its own (whose output is flushed as it ends), once its loader has published it
        sub="${subs[next + taken]}"
        for try in 1 2 3; do
          out="$(timeout -k 5 30 java -Dlog4j.configuration="file:$log4j" -cp "$shell_cp:$logging" \
            org.apache.kafka.shell.MetadataShell --snapshot "$f" tree "/image/$sub" < /dev/null 2> "$work/try.err" \
            | sed 's/^/  /')" || true
          [ -n "$out" ] && break
        done
        printf '%s:\n%s\n' "$sub" "$out" >> "$work/shell-$name.txt"
        taken=$((taken + 1))
      elif [ "$taken" -eq 0 ]; then
        # it answered nothing (it hung loading the file, say a damaged one): asked again, and after three
        # tries the file's subtrees left are empty, with the reason as its error
        tries=$((tries + 1))
        [ "$tries" -lt 3 ] && continue
        echo "shell fault: no answer from kafka-metadata-shell in three tries (rc $rc)" >> "$work/shell-$name.err"
        for sub in "${subs[@]:next}"; do printf '%s:\n\n' "$sub" >> "$work/shell-$name.txt"; done
        taken=$((${#subs[@]} - next))
      fi
      next=$((next + taken))
      tries=0
    done
  done
  python3 "$HERE/kraft_expected.py" --kafka "$version" --shell "$(shell_version "$version")" "$work" "$dir"
  rm -rf "$work"
}

capture() {
  local version="$1" out="$2" cp cid c1 p1 p2 p3 common n f
  cp="$(jars "$version")/*"
  WORK="$(mktemp -d)"
  local work="$WORK"
  trap 'for p in $(cat "$WORK"/*.pid 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
  cid="$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)"
  c1="$(free_port)"; p1="$(free_port)"; p2="$(free_port)"; p3="$(free_port)"
  common="controller.quorum.voters=1@127.0.0.1:$c1
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
metadata.log.max.record.bytes.between.snapshots=3000
metadata.max.idle.interval.ms=1000
broker.session.timeout.ms=6000
broker.heartbeat.interval.ms=1000"
  printf '%s\n' "process.roles=broker,controller" "node.id=1" "broker.rack=rack-a" \
    "listeners=PLAINTEXT://127.0.0.1:$p1,CONTROLLER://127.0.0.1:$c1" \
    "advertised.listeners=PLAINTEXT://127.0.0.1:$p1" "log.dirs=$work/n1" "$common" > "$work/n1.properties"
  printf '%s\n' "process.roles=broker" "node.id=2" "broker.rack=rack-b" "listeners=PLAINTEXT://127.0.0.1:$p2" \
    "log.dirs=$work/n2" "$common" > "$work/n2.properties"
  printf '%s\n' "process.roles=broker" "node.id=3" "broker.rack=rack-c" "listeners=PLAINTEXT://127.0.0.1:$p3" \
    "log.dirs=$work/n3" "$common" > "$work/n3.properties"
  for n in 1 2 3; do
    java -cp "$cp" kafka.tools.StorageTool format -t "$cid" -c "$work/n$n.properties" > "$work/format-$n.log" 2>&1
  done
  for n in 1 2 3; do
    java -Xmx384m -cp "$cp" kafka.Kafka "$work/n$n.properties" > "$work/kafka-$n.log" 2>&1 &
    echo $! > "$work/n$n.pid"
  done
  echo "capture-kraft: Kafka $version, cluster $cid, controller 127.0.0.1:$c1, brokers :$p1 :$p2 :$p3" >&2
  java -cp "$cp" "$HERE/KraftScenario.java" "127.0.0.1:$p1" > "$work/scenario.log" 2>&1 || {
    cat "$work/scenario.log" >&2; tail -40 "$work/kafka-1.log" >&2; exit 1
  }
  grep -E '^(ok|FAIL) ' "$work/scenario.log" >&2
  # broker 3 dies (the controller fences it and shrinks its partitions' ISRs), broker 2 is stopped (a
  # controlled shutdown), then the combined node is killed: its folder holds the cluster as it last was
  kill -9 "$(cat "$work/n3.pid")"; rm "$work/n3.pid"
  sleep 12
  kill -TERM "$(cat "$work/n2.pid")"
  for _ in $(seq 60); do kill -0 "$(cat "$work/n2.pid")" 2>/dev/null || break; sleep 1; done
  rm "$work/n2.pid"
  sleep 30  # the controller's no-op records then take it past a snapshot's worth of bytes
  kill -9 "$(cat "$work/n1.pid")"; rm "$work/n1.pid"
  wait 2>/dev/null || true
  rm -rf "$out"
  mkdir -p "$out/__cluster_metadata-0"
  cp "$work/n1/meta.properties" "$out/meta.properties"
  # the segments, snapshots and raft state; not the offset and time indexes (derived, and left 10 MiB
  # sparse by a killed process: Kafka rebuilds them)
  for f in "$work/n1/__cluster_metadata-0"/*; do
    case "$f" in *.index|*.timeindex|*.deleted|*.part) continue ;; esac
    cp "$f" "$out/__cluster_metadata-0/"
  done
  chmod u+rw,go+r "$out/__cluster_metadata-0"/*
  expect "$version" "$out/__cluster_metadata-0" > "$out/expected.json"
  echo "capture-kraft: wrote $out ($(du -sh "$out" | cut -f1))" >&2
}

# A ZooKeeper-mode Kafka cluster migrated to a KRaft controller (KIP-866), as docs/ops.html "ZooKeeper to
# KRaft Migration" has it (3.9): a ZooKeeper (the one Kafka ships with) and three ZooKeeper-mode brokers
# (AclAuthorizer), changed as KraftScenario.java changes a KRaft cluster; then a KRaft controller (node
# 3000) formatted with the cluster's id and started with zookeeper.metadata.migration.enable, and the brokers
# restarted one by one with the migration settings; once the controller has copied the metadata and writes
# to both (its log: "Completed migration of metadata from ZooKeeper to KRaft"), MigrationSteps.java changes
# it through the brokers. Then everything is stopped at once (kill -9: no shutdown writes) and ZooKeeper
# cleanly, and OUT gets ZooKeeper's data dir (zookeeper/version-2) and the controller's metadata folder
# (kraft/__cluster_metadata-0, kraft/meta.properties): the two sides at dual-write, ZooKeeper-mode brokers
# still registered.
migrate() {
  local version="$1" out="$2" cp zkp c p1 p2 p3 common cid n f
  cp="$(jars "$version")/*"
  WORK="$(mktemp -d)"
  local work="$WORK"
  trap 'for p in $(cat "$WORK"/*.pid 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
  zkp="$(free_port)"; c="$(free_port)"; p1="$(free_port)"; p2="$(free_port)"; p3="$(free_port)"
  # preAllocSize (KiB): ZooKeeper's logs are otherwise 64 MiB of preallocated zeros
  printf '%s\n' "dataDir=$work/zk" "clientPort=$zkp" "clientPortAddress=127.0.0.1" "admin.enableServer=false" \
    "preAllocSize=64" "snapCount=100000" > "$work/zk.properties"
  java -Xmx256m -cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$work/zk.properties" \
    > "$work/zk.log" 2>&1 &
  echo $! > "$work/zk.pid"
  # Kafka logs nothing without a log4j configuration; the controller's log says when the migration is done
  printf '%s\n' "log4j.rootLogger=INFO, o" "log4j.appender.o=org.apache.log4j.ConsoleAppender" \
    "log4j.appender.o.layout=org.apache.log4j.PatternLayout" "log4j.appender.o.layout.ConversionPattern=[%d] %p %m (%c)%n" \
    > "$work/log4j.properties"
  local log4j="-Dlog4j.configuration=file:$work/log4j.properties"
  common="zookeeper.connect=127.0.0.1:$zkp
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
inter.broker.protocol.version=${version%.*}
authorizer.class.name=kafka.security.authorizer.AclAuthorizer
super.users=User:ANONYMOUS
password.encoder.secret=zkstorm-capture-encoder-secret
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0"
  local migration="zookeeper.metadata.migration.enable=true
controller.quorum.voters=3000@127.0.0.1:$c
controller.listener.names=CONTROLLER"
  for n in 1 2 3; do
    local port; port="$(eval echo "\$p$n")"
    printf '%s\n' "broker.id=$n" "broker.rack=rack-$(echo abc | cut -c$n)" "listeners=PLAINTEXT://127.0.0.1:$port" \
      "log.dirs=$work/n$n" "$common" > "$work/n$n.properties"
    { cat "$work/n$n.properties"; echo "$migration"; } > "$work/n$n-migrating.properties"
  done
  for n in 1 2 3; do
    java -Xmx384m "$log4j" -cp "$cp" kafka.Kafka "$work/n$n.properties" > "$work/kafka-$n.log" 2>&1 &
    echo $! > "$work/n$n.pid"
  done
  echo "capture-kraft migrate: Kafka $version, ZooKeeper 127.0.0.1:$zkp, brokers :$p1 :$p2 :$p3" >&2
  java -cp "$cp" "$HERE/KraftScenario.java" "127.0.0.1:$p1" > "$work/scenario.log" 2>&1 || {
    cat "$work/scenario.log" >&2; tail -40 "$work/kafka-1.log" >&2; exit 1
  }
  grep -E '^(ok|FAIL) ' "$work/scenario.log" >&2
  cid="$(sed -n 's/^cluster.id=//p' "$work/n1/meta.properties")"
  printf '%s\n' "process.roles=controller" "node.id=3000" "controller.quorum.voters=3000@127.0.0.1:$c" \
    "controller.listener.names=CONTROLLER" "listeners=CONTROLLER://127.0.0.1:$c" \
    "zookeeper.metadata.migration.enable=true" "zookeeper.connect=127.0.0.1:$zkp" \
    "inter.broker.listener.name=PLAINTEXT" "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT" \
    "password.encoder.secret=zkstorm-capture-encoder-secret" "log.dirs=$work/c" \
    "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer" "super.users=User:ANONYMOUS" \
    > "$work/c.properties"
  java -cp "$cp" kafka.tools.StorageTool format -t "$cid" -c "$work/c.properties" > "$work/format-c.log" 2>&1
  java -Xmx384m "$log4j" -cp "$cp" kafka.Kafka "$work/c.properties" > "$work/controller.log" 2>&1 &
  echo $! > "$work/c.pid"
  echo "capture-kraft migrate: KRaft controller 3000 on :$c (cluster $cid); brokers restarted to migrate" >&2
  for n in 1 2 3; do
    kill -TERM "$(cat "$work/n$n.pid")"
    for _ in $(seq 90); do kill -0 "$(cat "$work/n$n.pid")" 2>/dev/null || break; sleep 1; done
    java -Xmx384m "$log4j" -cp "$cp" kafka.Kafka "$work/n$n-migrating.properties" >> "$work/kafka-$n.log" 2>&1 &
    echo $! > "$work/n$n.pid"
    sleep 5
  done
  for _ in $(seq 120); do
    grep -q "Completed migration of metadata from ZooKeeper to KRaft" "$work/controller.log" && break
    sleep 1
  done
  grep -q "Completed migration of metadata from ZooKeeper to KRaft" "$work/controller.log" || {
    echo "capture-kraft migrate: the controller never completed the migration" >&2
    grep -iE "migration|error" "$work/controller.log" | tail -40 >&2; exit 1
  }
  echo "capture-kraft migrate: dual-write" >&2
  java -cp "$cp" "$HERE/MigrationSteps.java" "127.0.0.1:$p1" > "$work/steps.log" 2>&1 || cat "$work/steps.log" >&2
  grep -E '^(ok|FAIL) ' "$work/steps.log" >&2
  sleep 10  # the controller writes each change to ZooKeeper after its log
  local dual_write brokers_on_kraft finalized
  dual_write="$(date +%s%3N)"
  # the brokers restarted in KRaft mode (docs/ops.html "Migrating brokers to KRaft"): node.id for broker.id,
  # process.roles=broker, no zookeeper.* settings, StandardAuthorizer; ZooKeeper then has none registered
  echo "capture-kraft migrate: brokers restarted in KRaft mode" >&2
  for n in 1 2 3; do
    local port; port="$(eval echo "\$p$n")"
    printf '%s\n' "process.roles=broker" "node.id=$n" "broker.rack=rack-$(echo abc | cut -c$n)" \
      "listeners=PLAINTEXT://127.0.0.1:$port" "log.dirs=$work/n$n" \
      "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT" "inter.broker.listener.name=PLAINTEXT" \
      "controller.quorum.voters=3000@127.0.0.1:$c" "controller.listener.names=CONTROLLER" \
      "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer" "super.users=User:ANONYMOUS" \
      "password.encoder.secret=zkstorm-capture-encoder-secret" "offsets.topic.replication.factor=1" \
      "transaction.state.log.replication.factor=1" "transaction.state.log.min.isr=1" > "$work/n$n-kraft.properties"
    kill -TERM "$(cat "$work/n$n.pid")"
    for _ in $(seq 90); do kill -0 "$(cat "$work/n$n.pid")" 2>/dev/null || break; sleep 1; done
    java -Xmx384m "$log4j" -cp "$cp" kafka.Kafka "$work/n$n-kraft.properties" >> "$work/kafka-$n.log" 2>&1 &
    echo $! > "$work/n$n.pid"
    sleep 5
  done
  sleep 20
  brokers_on_kraft="$(date +%s%3N)"
  # finalized (docs/ops.html "Finalizing the migration"): the controller restarted without the migration
  # settings writes ZkMigrationStateRecord POST_MIGRATION, and ZooKeeper is written no more
  echo "capture-kraft migrate: finalizing" >&2
  grep -vE "^zookeeper\." "$work/c.properties" > "$work/c-final.properties"
  kill -TERM "$(cat "$work/c.pid")"
  for _ in $(seq 60); do kill -0 "$(cat "$work/c.pid")" 2>/dev/null || break; sleep 1; done
  java -Xmx384m "$log4j" -cp "$cp" kafka.Kafka "$work/c-final.properties" >> "$work/controller.log" 2>&1 &
  echo $! > "$work/c.pid"
  for _ in $(seq 120); do
    grep -q "from MIGRATION to POST_MIGRATION" "$work/controller.log" && break
    sleep 1
  done
  grep -q "from MIGRATION to POST_MIGRATION" "$work/controller.log" || echo "capture-kraft migrate: never finalized" >&2
  sleep 10
  finalized="$(date +%s%3N)"
  for n in c n1 n2 n3; do kill -9 "$(cat "$work/$n.pid")"; rm "$work/$n.pid"; done
  kill -TERM "$(cat "$work/zk.pid")"
  for _ in $(seq 30); do kill -0 "$(cat "$work/zk.pid")" 2>/dev/null || break; sleep 1; done
  rm "$work/zk.pid"
  wait 2>/dev/null || true
  rm -rf "$out"
  mkdir -p "$out/zookeeper/version-2" "$out/kraft/__cluster_metadata-0"
  cp "$work"/zk/version-2/snapshot.* "$work"/zk/version-2/log.* "$out/zookeeper/version-2/"
  cp "$work/c/meta.properties" "$out/kraft/meta.properties"
  for f in "$work/c/__cluster_metadata-0"/*; do
    case "$f" in *.index|*.timeindex|*.deleted|*.part) continue ;; esac
    cp "$f" "$out/kraft/__cluster_metadata-0/"
  done
  grep -E "Completed migration|migration state|ZkMigrationState" "$work/controller.log" | head -20 > "$out/controller-migration.log" || true
  # when each phase was settled (epoch ms): `--at` reads both sides as of one of them
  printf '{"dual_write": %s, "brokers_on_kraft": %s, "finalized": %s}\n' "$dual_write" "$brokers_on_kraft" \
    "$finalized" > "$out/moments.json"
  chmod -R u+rw,go+r "$out"
  echo "capture-kraft migrate: wrote $out ($(du -sh "$out" | cut -f1))" >&2
}

case "${1:-}" in
  jars) jars "$2" ;;
  migrate) migrate "${2:-3.9.2}" "${3:-$REPO/tests/data/real/kraft-migration-3.9}" ;;
  shell-jars) shell_jars "$2" ;;
  expect) expect "$2" "$3" ;;
  *)
    version="${1:-4.4.0}"
    out="${2:-$REPO/tests/data/real/kraft-$(echo "$version" | cut -d. -f1).x}"
    capture "$version" "$out"
    ;;
esac
