// What Kafka itself says about a running cluster, for the real-cluster tests (tests/real/kafka.py).
//
// One JVM per cluster, on that Kafka version's own jars, reading one JSON array per line on stdin and
// answering one JSON object per line on stdout:
//
//   ["describe"]                      Kafka's AdminClient: describeCluster, listTopics + describeTopics,
//                                     listOffsets (each leader's epoch), listPartitionReassignments,
//                                     describeConfigs (the dynamic entries; each broker's listeners and
//                                     rack), describeAcls, describeUserScramCredentials,
//                                     describeClientQuotas, listConsumerGroups
//   ["cluster", ms]                   describeCluster alone: the brokers in the metadata and the controller
//   ["tool", class, arg...]           a Kafka command's main (kafka.admin.ConfigCommand, ...) run in this JVM,
//                                     its exit code and what it printed (System.out and Scala's Console)
//   ["consume", group, topic, n, ms]  a KafkaConsumer of the group reads n records and commits them
//
// The tools run in-process because a JVM start per command (Scala's classes loading) costs seconds each on
// the test machine; Kafka's own Exit.setExitProcedure (what Kafka's tests use) turns their exit into a code.
// It compiles against 2.8 and 3.9 alike: what one of them lacks is reached by reflection.

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Exit;

public final class KafkaTruth {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long TIMEOUT_MS = 30_000;

    /** The first Exit.exit or Exit.halt of the running tool: what would have ended its JVM. */
    private static Integer firstExit;

    /** A tool's call of Exit.exit or Exit.halt, turned into an exception that carries its code. */
    static final class Exited extends RuntimeException {
        final int code;

        Exited(int code) {
            super("exit " + code, null, false, false);
            this.code = code;
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        PrintStream answers = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(new PrintStream(new ByteArrayOutputStream(), true, "UTF-8")); // nothing else reaches the answers
        Exit.setExitProcedure((code, message) -> {
            if (firstExit == null) {
                firstExit = code;
            }
            throw new Exited(code);
        });
        Exit.setHaltProcedure((code, message) -> {
            if (firstExit == null) {
                firstExit = code;
            }
            throw new Exited(code);
        });
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        props.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        props.put(AdminClientConfig.METADATA_MAX_AGE_CONFIG, "1000");
        try (Admin admin = Admin.create(props)) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                Map<String, Object> answer = new LinkedHashMap<>();
                try {
                    List<?> command = JSON.readValue(line, List.class);
                    answer.put("ok", true);
                    answer.put("value", run(admin, bootstrap, command));
                } catch (Throwable e) {
                    Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
                    answer.put("ok", false);
                    answer.put("error", cause.getClass().getName() + ": " + cause.getMessage());
                }
                answers.println(JSON.writeValueAsString(answer));
            }
        }
    }

    private static Object run(Admin admin, String bootstrap, List<?> command) throws Exception {
        String name = (String) command.get(0);
        switch (name) {
            case "describe":
                return describe(admin);
            case "cluster":
                return cluster(admin, ((Number) command.get(1)).intValue());
            case "tool":
                List<String> rest = new ArrayList<>();
                for (Object o : command.subList(2, command.size())) {
                    rest.add((String) o);
                }
                return tool((String) command.get(1), rest.toArray(new String[0]));
            case "consume":
                return consume(bootstrap, (String) command.get(1), (String) command.get(2),
                        ((Number) command.get(3)).intValue(), ((Number) command.get(4)).longValue());
            default:
                throw new IllegalArgumentException("unknown command " + name);
        }
    }

    // --- what Kafka says -------------------------------------------------------------------------------

    private static Map<String, Object> node(Node n) {
        if (n == null || n.id() < 0) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", n.id());
        out.put("host", n.host());
        out.put("port", n.port());
        out.put("rack", n.rack());
        return out;
    }

    private static Map<String, Object> cluster(Admin admin, int timeoutMs) throws Exception {
        DescribeClusterResult result = admin.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cluster_id", result.clusterId().get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        out.put("controller", node(result.controller().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)));
        List<Map<String, Object>> nodes = new ArrayList<>();
        for (Node n : result.nodes().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            nodes.add(node(n));
        }
        nodes.sort((a, b) -> Integer.compare((Integer) a.get("id"), (Integer) b.get("id")));
        out.put("brokers", nodes);
        return out;
    }

    private static List<Integer> ids(Collection<Node> nodes) {
        List<Integer> out = new ArrayList<>();
        for (Node n : nodes) {
            out.add(n.id());
        }
        return out;
    }

    @SuppressWarnings("deprecation")
    private static Map<String, Object> describe(Admin admin) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        long started = System.currentTimeMillis();
        Map<String, Object> took = new LinkedHashMap<>();
        long mark = started;
        out.put("cluster", cluster(admin, (int) TIMEOUT_MS));
        took.put("cluster", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        Map<String, TopicDescription> described = names.isEmpty()
                ? Collections.emptyMap()
                : admin.describeTopics(names).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        Map<String, Object> topics = new TreeMap<>();
        for (TopicDescription d : described.values()) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("internal", d.isInternal());
            t.put("topic_id", topicId(d));
            List<Map<String, Object>> parts = new ArrayList<>();
            for (TopicPartitionInfo p : d.partitions()) {
                Map<String, Object> pm = new LinkedHashMap<>();
                pm.put("partition", p.partition());
                Node leader = p.leader();
                pm.put("leader", leader == null || leader.isEmpty() ? null : leader.id());
                pm.put("replicas", ids(p.replicas()));
                pm.put("isr", ids(p.isr()));
                parts.add(pm);
            }
            parts.sort((a, b) -> Integer.compare((Integer) a.get("partition"), (Integer) b.get("partition")));
            t.put("partitions", parts);
            topics.put(d.name(), t);
        }
        out.put("topics", topics);
        took.put("topics", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        // each led partition's current leader epoch: ListOffsets for the latest offset answers with the
        // leader's epoch (Partition.fetchOffsetForTimestamp), which the controller wrote in its state znode
        // (a topic with a partition offline is left out: 2.8's AdminClient retries its metadata until it times
        // out, and fails every partition of the call with it)
        Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
        for (TopicDescription d : described.values()) {
            boolean led = true;
            for (TopicPartitionInfo p : d.partitions()) {
                led &= p.leader() != null && !p.leader().isEmpty();
            }
            for (TopicPartitionInfo p : d.partitions()) {
                if (led) {
                    latest.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest());
                }
            }
        }
        ListOffsetsResult offsets = admin.listOffsets(latest, new ListOffsetsOptions().timeoutMs(10_000));
        for (TopicPartition tp : latest.keySet()) {
            Integer epoch = null;
            try {
                epoch = offsets.partitionResult(tp).get(TIMEOUT_MS, TimeUnit.MILLISECONDS).leaderEpoch().orElse(null);
            } catch (Exception e) {
                epoch = null; // not answered: left out of the comparison
            }
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> parts = (List<Map<String, Object>>) ((Map<String, Object>) topics.get(tp.topic()))
                    .get("partitions");
            for (Map<String, Object> pm : parts) {
                if (((Integer) pm.get("partition")) == tp.partition()) {
                    pm.put("leader_epoch", epoch);
                }
            }
        }
        took.put("leader_epochs", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        List<Map<String, Object>> moves = new ArrayList<>();
        for (Map.Entry<TopicPartition, PartitionReassignment> e : admin.listPartitionReassignments().reassignments()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).entrySet()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("topic", e.getKey().topic());
            m.put("partition", e.getKey().partition());
            m.put("replicas", e.getValue().replicas());
            m.put("adding", e.getValue().addingReplicas());
            m.put("removing", e.getValue().removingReplicas());
            moves.add(m);
        }
        out.put("reassignments", moves);
        took.put("reassignments", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        // dynamic configs: topic overrides, per-broker and cluster-default broker configs (ZooKeeper's)
        List<ConfigResource> resources = new ArrayList<>();
        for (String t : names) {
            resources.add(new ConfigResource(ConfigResource.Type.TOPIC, t));
        }
        resources.add(new ConfigResource(ConfigResource.Type.BROKER, ""));
        for (Object b : (List<?>) ((Map<?, ?>) out.get("cluster")).get("brokers")) {
            resources.add(new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(((Map<?, ?>) b).get("id"))));
        }
        Map<String, Object> configs = new TreeMap<>();
        Map<String, Object> minIsr = new TreeMap<>();
        Map<String, Object> listeners = new TreeMap<>();
        Map<ConfigResource, Config> described2 = admin.describeConfigs(resources).all()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        for (Map.Entry<ConfigResource, Config> e : described2.entrySet()) {
            String type = e.getKey().type() == ConfigResource.Type.TOPIC ? "topics" : "brokers";
            String entity = e.getKey().name().isEmpty() ? "<default>" : e.getKey().name();
            Map<String, Object> entries = new TreeMap<>();
            for (ConfigEntry c : e.getValue().entries()) {
                String source = String.valueOf(c.source());
                if (type.equals("brokers") && !entity.equals("<default>") && (c.name().equals("advertised.listeners")
                        || c.name().equals("listener.security.protocol.map") || c.name().equals("broker.rack"))) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> of = (Map<String, Object>) listeners.computeIfAbsent(entity, k -> new TreeMap<>());
                    of.put(c.name(), c.value()); // what the broker registered itself with
                }
                if (type.equals("topics") && c.name().equals("min.insync.replicas")) {
                    Map<String, Object> v = new LinkedHashMap<>();
                    v.put("value", c.value());
                    v.put("source", source);
                    minIsr.put(entity, v); // the effective value, whatever its source
                }
                boolean dynamic = source.equals("DYNAMIC_TOPIC_CONFIG")
                        || (source.equals("DYNAMIC_BROKER_CONFIG") && !entity.equals("<default>"))
                        || (source.equals("DYNAMIC_DEFAULT_BROKER_CONFIG") && entity.equals("<default>"));
                if (!dynamic) {
                    continue;
                }
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("value", c.value());
                v.put("sensitive", c.isSensitive());
                v.put("source", source);
                entries.put(c.name(), v);
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> ofType = (Map<String, Object>) configs.computeIfAbsent(type, k -> new TreeMap<>());
            ofType.put(entity, entries);
        }
        out.put("configs", configs);
        out.put("min_isr", minIsr);
        out.put("broker_listeners", listeners);
        took.put("configs", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        List<Map<String, Object>> acls = new ArrayList<>();
        for (AclBinding b : admin.describeAcls(AclBindingFilter.ANY).values().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            Map<String, Object> a = new LinkedHashMap<>();
            a.put("pattern_type", b.pattern().patternType().name());
            a.put("resource_type", b.pattern().resourceType().name());
            a.put("resource_name", b.pattern().name());
            a.put("principal", b.entry().principal());
            a.put("host", b.entry().host());
            a.put("operation", b.entry().operation().name());
            a.put("permission_type", b.entry().permissionType().name());
            acls.add(a);
        }
        out.put("acls", acls);
        took.put("acls", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        Map<String, Object> scram = new TreeMap<>();
        for (UserScramCredentialsDescription u : admin.describeUserScramCredentials().all()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS).values()) {
            List<Map<String, Object>> infos = new ArrayList<>();
            for (ScramCredentialInfo i : u.credentialInfos()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("mechanism", i.mechanism().mechanismName());
                m.put("iterations", i.iterations());
                infos.add(m);
            }
            scram.put(u.name(), infos);
        }
        out.put("scram", scram);
        took.put("scram", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        List<Map<String, Object>> quotas = new ArrayList<>();
        for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : admin.describeClientQuotas(ClientQuotaFilter.all())
                .entities().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).entrySet()) {
            Map<String, Object> q = new LinkedHashMap<>();
            q.put("entity", new TreeMap<>(e.getKey().entries()));
            q.put("quotas", new TreeMap<>(e.getValue()));
            quotas.add(q);
        }
        out.put("quotas", quotas);
        took.put("quotas", System.currentTimeMillis() - mark);
        mark = System.currentTimeMillis();

        List<Map<String, Object>> groups = new ArrayList<>();
        for (ConsumerGroupListing g : admin.listConsumerGroups().all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("group_id", g.groupId());
            m.put("simple", g.isSimpleConsumerGroup());
            groups.add(m);
        }
        groups.sort((a, b) -> ((String) a.get("group_id")).compareTo((String) b.get("group_id")));
        out.put("consumer_groups", groups);
        took.put("consumer_groups", System.currentTimeMillis() - mark);
        out.put("took_ms", took);
        out.put("started_ms", started);
        out.put("finished_ms", System.currentTimeMillis());
        return out;
    }

    /** TopicDescription.topicId(), a KIP-516 Uuid in its base64url form: Kafka 2.8 and 3.9 both have it, but
     * older builds do not, so it is looked up. */
    private static String topicId(TopicDescription d) {
        try {
            Object id = d.getClass().getMethod("topicId").invoke(d);
            return id == null ? null : id.toString();
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    // --- Kafka's own commands, in this JVM -------------------------------------------------------------

    private static Map<String, Object> tool(String className, String[] args) throws Exception {
        Method main = Class.forName(className).getMethod("main", String[].class);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream outStream = new PrintStream(out, true, "UTF-8");
        PrintStream errStream = new PrintStream(err, true, "UTF-8");
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        int code = 0;
        String failure = null;
        firstExit = null;
        System.setOut(outStream);
        System.setErr(errStream);
        try {
            // Scala's println writes to scala.Console.out, a dynamic variable set when Console was first used
            scala.Console.withOut(outStream, (scala.Function0<Object>) () -> scala.Console.withErr(errStream,
                    (scala.Function0<Object>) () -> {
                        try {
                            main.invoke(null, (Object) args);
                        } catch (InvocationTargetException e) {
                            throw new RuntimeException(e.getCause());
                        } catch (IllegalAccessException e) {
                            throw new RuntimeException(e);
                        }
                        return null;
                    }));
        } catch (RuntimeException e) {
            Throwable cause = e;
            while (cause.getCause() != null && !(cause instanceof Exited)) {
                cause = cause.getCause();
            }
            if (!(cause instanceof Exited)) {
                code = -1;
                failure = cause.toString();
            }
        } finally {
            if (firstExit != null) {
                code = firstExit; // a tool that catches the exit of its own finally block still ended there
            }
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("code", code);
        result.put("out", out.toString("UTF-8"));
        result.put("err", err.toString("UTF-8") + (failure == null ? "" : failure));
        return result;
    }

    private static Object consume(String bootstrap, String group, String topic, int count, long timeoutMs) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        int read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(Collections.singletonList(topic));
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (read < count && System.currentTimeMillis() < deadline) {
                read += consumer.poll(Duration.ofMillis(200)).count();
            }
            consumer.commitSync();
        }
        return read;
    }

    private KafkaTruth() {}
}
