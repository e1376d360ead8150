// What scripts/capture-kraft.sh does to its KRaft cluster, through Kafka's own AdminClient (the API every
// operator's tool uses), so the metadata log holds the records real operations write. Run with
// `java -cp "<kafka jars>/*" scripts/KraftScenario.java BOOTSTRAP` (Java's single-file source launcher).
// Each step prints one line; a step a Kafka version refuses is reported and the rest goes on.

import java.util.*;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.*;
import org.apache.kafka.common.resource.*;

public class KraftScenario {
    static Admin admin;

    interface Step { void run() throws Exception; }

    static void step(String what, Step step) {
        try {
            step.run();
            System.out.println("ok    " + what);
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            System.out.println("FAIL  " + what + ": " + cause.getClass().getSimpleName() + ": " + cause.getMessage());
        }
    }

    static NewTopic topic(String name, int partitions, int rf, Map<String, String> configs) {
        return new NewTopic(name, partitions, (short) rf).configs(configs);
    }

    static AclBinding acl(ResourceType type, String name, PatternType pattern, String principal, String host,
                          AclOperation op, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
            new AccessControlEntry(principal, host, op, permission));
    }

    static void alter(ConfigResource resource, String key, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(
            new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        admin = Admin.create(props);
        long deadline = System.currentTimeMillis() + 120_000;
        while (admin.describeCluster().nodes().get().size() < 3) {
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("three brokers never registered");
            Thread.sleep(500);
        }
        System.out.println("ok    three brokers registered");
        step("topics", () -> admin.createTopics(List.of(
            topic("orders", 6, 3, Map.of("min.insync.replicas", "2", "retention.ms", "604800000")),
            topic("payments", 3, 3, Map.of("cleanup.policy", "compact", "min.insync.replicas", "2")),
            topic("clicks", 4, 2, Map.of()),
            topic("audit-log", 2, 1, Map.of("retention.ms", "-1")),
            topic("doomed", 3, 2, Map.of("segment.bytes", "1048576"))
        )).all().get(60, TimeUnit.SECONDS));
        step("topic config clicks retention.bytes", () ->
            alter(new ConfigResource(ConfigResource.Type.TOPIC, "clicks"), "retention.bytes", "1073741824"));
        step("cluster-wide broker default log.cleaner.threads", () ->
            alter(new ConfigResource(ConfigResource.Type.BROKER, ""), "log.cleaner.threads", "2"));
        step("broker 2 log.cleaner.io.max.bytes.per.second", () ->
            alter(new ConfigResource(ConfigResource.Type.BROKER, "2"), "log.cleaner.io.max.bytes.per.second", "10485760"));
        // a password config (Type.PASSWORD): a listener's SSL key password, set per broker
        step("broker 1 password config listener.name.plaintext.ssl.key.password", () ->
            alter(new ConfigResource(ConfigResource.Type.BROKER, "1"), "listener.name.plaintext.ssl.key.password",
                "kraft-capture-key-password"));
        step("client quotas", () -> admin.alterClientQuotas(List.of(
            new ClientQuotaAlteration(new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice")),
                List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0))),
            new ClientQuotaAlteration(new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "billing app*1")),
                List.of(new ClientQuotaAlteration.Op("consumer_byte_rate", 2097152.0))),
            new ClientQuotaAlteration(new ClientQuotaEntity(Collections.singletonMap(ClientQuotaEntity.USER, null)),
                List.of(new ClientQuotaAlteration.Op("request_percentage", 50.0)))
        )).all().get(30, TimeUnit.SECONDS));
        step("SCRAM users", () -> admin.alterUserScramCredentials(List.of(
            new UserScramCredentialUpsertion("alice", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "alice-scram-secret"),
            new UserScramCredentialUpsertion("bob", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "bob-scram-secret")
        )).all().get(30, TimeUnit.SECONDS));
        // a request may name a user once: alice's second mechanism, and two more users, in requests of their own
        step("SCRAM-SHA-512 for alice", () -> admin.alterUserScramCredentials(List.of(
            new UserScramCredentialUpsertion("alice", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "alice-scram-secret-512")
        )).all().get(30, TimeUnit.SECONDS));
        step("SCRAM users carol and dave", () -> admin.alterUserScramCredentials(List.of(
            new UserScramCredentialUpsertion("carol", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "carol-scram-secret"),
            new UserScramCredentialUpsertion("dave", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "dave-scram-secret")
        )).all().get(30, TimeUnit.SECONDS));
        AclBinding aliceDescribe = acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*",
            AclOperation.DESCRIBE, AclPermissionType.ALLOW);
        step("ACLs", () -> admin.createAcls(List.of(
            acl(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
            aliceDescribe,
            acl(ResourceType.TOPIC, "logs.", PatternType.PREFIXED, "User:bob", "*", AclOperation.WRITE, AclPermissionType.ALLOW),
            acl(ResourceType.GROUP, "billing-", PatternType.PREFIXED, "User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW),
            acl(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, "User:ops", "*", AclOperation.DESCRIBE_CONFIGS, AclPermissionType.ALLOW),
            acl(ResourceType.TOPIC, "*", PatternType.LITERAL, "User:mallory", "10.0.0.66", AclOperation.ALL, AclPermissionType.DENY),
            acl(ResourceType.TRANSACTIONAL_ID, "tx-1", PatternType.LITERAL, "User:bob", "*", AclOperation.WRITE, AclPermissionType.ALLOW)
        )).all().get(30, TimeUnit.SECONDS));
        step("an ACL deleted", () -> admin.deleteAcls(List.of(aliceDescribe.toFilter())).all().get(30, TimeUnit.SECONDS));
        step("SCRAM credential deleted (bob)", () -> admin.alterUserScramCredentials(List.of(
            new UserScramCredentialDeletion("bob", ScramMechanism.SCRAM_SHA_512))).all().get(30, TimeUnit.SECONDS));
        step("topic deleted (doomed)", () -> admin.deleteTopics(List.of("doomed")).all().get(60, TimeUnit.SECONDS));
        step("partitions added (clicks 4 -> 5)", () ->
            admin.createPartitions(Map.of("clicks", NewPartitions.increaseTo(5))).all().get(30, TimeUnit.SECONDS));
        step("clicks-0 moved to [3, 1]", () -> {
            admin.alterPartitionReassignments(Map.of(new TopicPartition("clicks", 0),
                Optional.of(new NewPartitionReassignment(List.of(3, 1))))).all().get(30, TimeUnit.SECONDS);
            long until = System.currentTimeMillis() + 60_000;
            while (!admin.listPartitionReassignments().reassignments().get().isEmpty()) {
                if (System.currentTimeMillis() > until) throw new IllegalStateException("reassignment never finished");
                Thread.sleep(500);
            }
        });
        step("preferred leaders elected", () -> admin.electLeaders(org.apache.kafka.common.ElectionType.PREFERRED, null)
            .all().get(30, TimeUnit.SECONDS));
        admin.close();
    }
}
