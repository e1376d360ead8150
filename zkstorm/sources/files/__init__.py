"""ZooKeeper's own data files as a tree source: snapshots (plain, gz, snappy-java) and transaction logs,
read and replayed without a client session (docs/zookeeper-files.md)."""
