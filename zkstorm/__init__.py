"""zkstorm: a read-only inspector for the Storm and Kafka metadata kept in ZooKeeper."""

__version__ = "0.1.0"
