"""The defaults that several rooms share, each defined once: the library's arguments, the CLI's options
and their help texts read them from here."""

from __future__ import annotations

ZK = "127.0.0.1:2181"  # the ensemble when none is given
TIMEOUT_SECS = 10.0  # the whole connection attempt, then any one answer
STORM_ROOT = "/storm"  # Storm's storm.zookeeper.root default (Config.STORM_ZOOKEEPER_ROOT, defaults.yaml)
KAFKA_ROOT = "/"  # a Kafka cluster without a chroot in zookeeper.connect
# nimbus.task.timeout.secs (Storm's defaults.yaml): after this long without a heartbeat nimbus reassigns a
# worker's executors, so a worker heartbeat older than this is stale
STALE_AFTER_SECS = 30.0
# a snapshot lock of another host is taken over once this old: longer than a snapshot plausibly runs (the
# 312k-znode benchmark tree snapshots in under a minute)
LOCK_STALE_AFTER_SECS = 6 * 3600.0
