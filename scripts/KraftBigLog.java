// A KRaft metadata log of a large cluster, written by Kafka's own writer, for bench/bench_kraft.py.
//
// The batches come from org.apache.kafka.raft.internals.BatchBuilder (what KafkaRaftClient's BatchAccumulator
// builds every metadata batch with: log format v2, CRC32C) over org.apache.kafka.metadata.MetadataRecordSerde
// (the records' own generated writers), appended by org.apache.kafka.common.record.FileRecords, as the
// controller's log does; the raft leader's LeaderChangeMessage opens the log as it opens a real one
// (MemoryRecords.withLeaderChangeMessage). What it holds, in the order a controller writes it:
//   - metadata.version (3.9-IV0, level 21), then BROKERS broker registrations (RegisterBrokerRecord v3, one
//     log dir each, racks) and their unfencing, one broker per batch as the controller registers them;
//   - PARTITIONS partitions in topics of PER_TOPIC: each topic one batch (TopicRecord v0, a ConfigRecord,
//     PER_TOPIC PartitionRecord v1 with replicas, ISR and log dirs, replication factor 3), as CreateTopics
//     writes one atomic batch per topic; a NoOpRecord batch between topics (the controller's heartbeat
//     of the log, KIP-835);
//   - CHANGES PartitionChangeRecord v1 in batches of ten: an ISR shrunk then grown back, a leader moved.
// Run: java -cp '<kafka-3.9.2 jars>/*' scripts/KraftBigLog.java OUT [PARTITIONS [PER_TOPIC [BROKERS [CHANGES]]]]
// writes OUT/__cluster_metadata-0/00000000000000000000.log and OUT/meta.properties.
import java.io.File;
import java.io.FileWriter;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.NoOpRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.raft.internals.BatchBuilder;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public class KraftBigLog {
    static final int EPOCH = 1;
    static final int MAX_BATCH = 8 * 1024 * 1024; // KafkaRaftClient.MAX_BATCH_SIZE_BYTES
    static long offset = 0;
    static long timeMs = 1767225600000L; // 2026-01-01T00:00:00Z
    static FileRecords log;

    static void batch(List<ApiMessageAndVersion> records) throws Exception {
        ByteBuffer buffer = ByteBuffer.allocate(MAX_BATCH);
        BatchBuilder<ApiMessageAndVersion> builder = new BatchBuilder<>(
            buffer, MetadataRecordSerde.INSTANCE, Compression.NONE, offset, timeMs, EPOCH, MAX_BATCH);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        for (ApiMessageAndVersion record : records) builder.appendRecord(record, cache);
        log.append(builder.build());
        offset += records.size();
        timeMs += 50;
    }

    static ApiMessageAndVersion v(org.apache.kafka.common.protocol.ApiMessage message, int version) {
        return new ApiMessageAndVersion(message, (short) version);
    }

    public static void main(String[] args) throws Exception {
        File out = new File(args[0]);
        int partitions = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        int perTopic = args.length > 2 ? Integer.parseInt(args[2]) : 100;
        int brokers = args.length > 3 ? Integer.parseInt(args[3]) : 30;
        int changes = args.length > 4 ? Integer.parseInt(args[4]) : 100_000;
        File folder = new File(out, "__cluster_metadata-0");
        folder.mkdirs();
        Random random = new Random(43);
        try (FileWriter meta = new FileWriter(new File(out, "meta.properties"))) {
            meta.write("version=1\ncluster.id=" + new Uuid(43, 43) + "\nnode.id=1\n");
        }
        log = FileRecords.open(new File(folder, "00000000000000000000.log"));
        ByteBuffer control = ByteBuffer.allocate(256);
        log.append(MemoryRecords.withLeaderChangeMessage(offset++, timeMs, EPOCH, control,
            new LeaderChangeMessage().setVersion((short) 0).setLeaderId(1)));
        batch(List.of(v(new FeatureLevelRecord().setName("metadata.version").setFeatureLevel((short) 21), 0)));
        Uuid[] dirs = new Uuid[brokers + 1];
        for (int b = 1; b <= brokers; b++) {
            dirs[b] = new Uuid(random.nextLong(), random.nextLong());
            RegisterBrokerRecord.BrokerEndpointCollection endpoints = new RegisterBrokerRecord.BrokerEndpointCollection();
            endpoints.add(new RegisterBrokerRecord.BrokerEndpoint().setName("PLAINTEXT")
                .setHost("broker-" + b + ".kafka.example").setPort(9092).setSecurityProtocol((short) 0));
            RegisterBrokerRecord.BrokerFeatureCollection features = new RegisterBrokerRecord.BrokerFeatureCollection();
            features.add(new RegisterBrokerRecord.BrokerFeature().setName("metadata.version")
                .setMinSupportedVersion((short) 1).setMaxSupportedVersion((short) 21));
            batch(List.of(v(new RegisterBrokerRecord().setBrokerId(b).setIncarnationId(new Uuid(b, b))
                .setBrokerEpoch(offset).setEndPoints(endpoints).setFeatures(features).setRack("rack-" + (b % 3))
                .setFenced(true).setLogDirs(List.of(dirs[b])), 3)));
        }
        for (int b = 1; b <= brokers; b++) {
            batch(List.of(v(new UnfenceBrokerRecord().setId(b).setEpoch(b + 1), 0)));
        }
        List<Uuid> topicIds = new ArrayList<>();
        for (int t = 0; t * perTopic < partitions; t++) {
            Uuid id = new Uuid(random.nextLong(), random.nextLong());
            topicIds.add(id);
            String name = String.format("events.%05d", t);
            List<ApiMessageAndVersion> records = new ArrayList<>();
            records.add(v(new TopicRecord().setName(name).setTopicId(id), 0));
            records.add(v(new ConfigRecord().setResourceType((byte) 2).setResourceName(name)
                .setName("retention.ms").setValue("604800000"), 0));
            for (int p = 0; p < perTopic && t * perTopic + p < partitions; p++) {
                int first = 1 + (t + p) % brokers;
                List<Integer> replicas = Arrays.asList(first, 1 + first % brokers, 1 + (first + 1) % brokers);
                List<Uuid> replicaDirs = new ArrayList<>();
                for (int r : replicas) replicaDirs.add(dirs[r]);
                records.add(v(new PartitionRecord().setPartitionId(p).setTopicId(id).setReplicas(replicas)
                    .setIsr(replicas).setLeader(first).setLeaderEpoch(0).setPartitionEpoch(0)
                    .setDirectories(replicaDirs), 1));
            }
            batch(records);
            batch(List.of(v(new NoOpRecord(), 0)));
        }
        for (int c = 0; c < changes; c += 10) {
            List<ApiMessageAndVersion> records = new ArrayList<>();
            for (int k = c; k < c + 10 && k < changes; k++) {
                int t = random.nextInt(topicIds.size());
                int p = random.nextInt(Math.min(perTopic, partitions - t * perTopic));
                int first = 1 + (t + p) % brokers;
                PartitionChangeRecord change = new PartitionChangeRecord().setTopicId(topicIds.get(t)).setPartitionId(p);
                switch (k % 3) {
                    case 0 -> change.setIsr(Arrays.asList(first, 1 + first % brokers));
                    case 1 -> change.setIsr(Arrays.asList(first, 1 + first % brokers, 1 + (first + 1) % brokers));
                    default -> change.setLeader(1 + first % brokers);
                }
                records.add(v(change, 1));
            }
            batch(records);
        }
        log.flush();
        log.close();
        System.out.println(offset + " records in " + folder);
    }
}
