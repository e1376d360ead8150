"""Which function tells the changes of which znode: a decoder kind (``decode/kafka.py``,
``decode/storm.py``) → its handler in ``kafka.py`` or ``storm.py``. Every other znode gets the generic
created / deleted / data changed records (``kinds.generic``). A new change kind is one function there
and one line here. A kind whose setData only times or counts the write has a rewriter too
(``REWRITES``, ``kinds.Engine.is_rewrite``): the reader then hands such writes over without parsing them."""

from __future__ import annotations

from . import kafka, storm
from .kinds import Handler, Rewriter

# decoder kind (``decode/kafka.py``, ``decode/storm.py``) → the function that tells its changes
HANDLERS: dict[str, Handler] = {
    "kafka_broker": kafka.broker,
    "kafka_controller": kafka.controller,
    "kafka_controller_epoch": kafka.controller_epoch,
    "kafka_partition_state": kafka.partition_state,
    "kafka_topic": kafka.topic,
    "kafka_topic_deletion": kafka.deletion_mark,
    "kafka_reassignment": kafka.admin_reassignment,
    "kafka_config": kafka.config,
    "kafka_acl": kafka.acl,
    "kafka_isr_change": kafka.isr_notification,
    "kafka_log_dir_event": kafka.log_dir_event,
    "storm_topology": storm.topology,
    "storm_assignment": storm.assignment,
    "storm_supervisor": storm.supervisor,
    "storm_worker": storm.heartbeat,
    "storm_error": storm.error,
    "storm_leader_latch": storm.leader_latch,
    "storm_backpressure": storm.backpressure,
}

# decoder kind → what a setData of it tells, from the txn's identity and the path alone (its handler's set
# calls the same function): the reader's fast path reads no data for these
REWRITES: dict[str, Rewriter] = {
    "storm_worker": storm.heartbeat_written,
    "storm_supervisor": storm.supervisor_written,
}
