"""KRaft's metadata log as a tree source (``--from-kraft``): a controller's or broker's ``__cluster_metadata-0``
folder (snapshots and log segments) read without Kafka and served as the znodes ZooKeeper-mode Kafka kept,
under the root ``kraft:``, so every Kafka decoder, join, health rule, view and the snapshot read it
unchanged.

Why a ZooKeeper-shaped tree: the cluster model, its Kafka views, health rules, the Parquet snapshot and
the history job are written against znodes and the records their decoders make (``sources.base``). A
KRaft image rendered as the znodes Kafka itself wrote for the same facts (a broker's registration, a
topic's assignment, a partition's leader and ISR, ``config/…``, ``kafka-acl…``, ``controller``,
``controller_epoch``, ``feature``), in Kafka's own JSON forms, reaches all of them through the one
contract, and a cluster that moved from ZooKeeper to KRaft reads the same way before and after. What only
KRaft has rides in those forms under names no ZooKeeper-mode Kafka writes (a registration's ``fenced`` and
``in_controlled_shutdown``, a partition state's ``eligible_leader_replicas`` and ``last_known_elr``; the
metadata version is a feature), and the decoders fill new nullable fields of the records from them
(``KafkaBroker.fenced``, ``KafkaPartition.eligible_leader_replicas``, ``KafkaFeature.metadata_version``):
None over ZooKeeper, where Kafka has no such thing. The root is ``kraft:``, not a path, so a KRaft
cluster's rows never pass for a ZooKeeper chroot's.

- ``messages.py``: Kafka's message schemas (``schemas/``, copied from apache/kafka) read generically.
- ``batches.py``: record batches (log format v2, CRC32C) and records.
- ``image.py``: the records replayed into an image, and the image as znodes.
- ``source.py``: the folder, the snapshot and log chosen and read, the tree served (``KraftSource``).
"""
