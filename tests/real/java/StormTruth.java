// A real Storm cluster and what Storm itself says about it, for the real-cluster tests (tests/real/storm.py).
//
// One JVM on Storm 2.8.3's own jars: org.apache.storm.LocalCluster (Nimbus, two supervisors on hosts of
// their own with real in-process workers) pointed at the suite's ZooKeeper under its own storm.zookeeper.root, with Nimbus's
// Thrift server on. It reads one JSON array per line on stdin and answers one JSON object per line on
// stdout ({"ok": true, "value": ...} or {"ok": false, "error": "..."}):
//
//   ["submit", name, workers]        the test topology (below), through LocalCluster.submitTopology
//   ["truth"]                        what Storm UI shows, from Nimbus's Thrift API over its port:
//                                    getClusterInfo, getLeader, and per topology getTopologyInfo,
//                                    getTopologyPageInfo and getComponentPageInfo for every window
//   ["rebalance", name, wait, workers, component, executors]   Nimbus.rebalance (`storm rebalance`)
//   ["deactivate", name] / ["activate", name]                  (`storm deactivate` / `storm activate`)
//   ["kill", name, wait]                                       Nimbus.killTopologyWithOpts (`storm kill -w`)
//   ["kill_supervisor", id]          the supervisor's workers shut down, then LocalCluster.killSupervisor
//
// Thrift structs go out field by field, by Thrift's own metadata (FieldMetaData), so every field Nimbus
// filled is in the answer under its IDL name; a map keyed by a struct (GlobalStreamId) is keyed
// "component:stream".
//
// The topology: spout "sentences" (2 executors) -> bolt "split" (3 executors over 4 tasks, shuffle) ->
// bolt "count" (2 executors over 4 tasks, fields grouping on the word). "split" reports an error now and
// then (a real exception, caught, through OutputCollector.reportError) and fails a tuple now and then, so
// the errors, failed and complete-latency figures are all live.

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.DaemonConfig;
import org.apache.storm.LocalCluster;
import org.apache.storm.daemon.supervisor.ReadClusterState;
import org.apache.storm.generated.ClusterSummary;
import org.apache.storm.generated.ComponentPageInfo;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.RebalanceOptions;
import org.apache.storm.generated.TopologyPageInfo;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.thrift.TBase;
import org.apache.storm.thrift.TFieldIdEnum;
import org.apache.storm.thrift.TUnion;
import org.apache.storm.thrift.meta_data.FieldMetaData;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;

public final class StormTruth {
    private static final ObjectMapper JSON = new ObjectMapper();
    // Storm UI's windows (StatsUtil: 10 minutes, 3 hours, 1 day, all time)
    private static final String[] WINDOWS = {"600", "10800", "86400", ":all-time"};
    // the supervisors' hosts (tests/real/storm.py SUPERVISOR_HOSTS)
    private static final String[] SUPERVISOR_HOSTS = {"storm-host-1", "storm-host-2"};

    public static void main(String[] args) throws Exception {
        // stdout is the answer channel: whatever Storm or its logging would print goes to stderr instead
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        String zkHost = args[0];
        int zkPort = Integer.parseInt(args[1]);
        String root = args[2];
        int metricsSecs = Integer.parseInt(args[3]);

        Map<String, Object> conf = new HashMap<>();
        conf.put(Config.STORM_ZOOKEEPER_SERVERS, List.of(zkHost));
        conf.put(Config.STORM_ZOOKEEPER_PORT, zkPort);
        conf.put(Config.STORM_ZOOKEEPER_ROOT, root);
        conf.put(Config.NIMBUS_THRIFT_PORT, Integer.parseInt(args[4])); // what Nimbus registers in nimbuses/
        conf.put(Config.NIMBUS_SEEDS, List.of("localhost"));
        // the executors' figures reach ZooKeeper's workerbeats every executor.metrics.frequency.secs (60 by
        // default): a few seconds, so a short test sees them move
        conf.put(Config.EXECUTOR_METRICS_FREQUENCY_SECS, metricsSecs);
        // the even scheduler honours topology.workers (the resource-aware default packs as it sees fit)
        conf.put(DaemonConfig.STORM_SCHEDULER, "org.apache.storm.scheduler.DefaultScheduler");
        // a supervisor rewrites its registration every supervisor.heartbeat.frequency.secs: every write is
        // a moment the tests cannot use (tests/real/storm_scenario.py), so seldom; a stopped supervisor
        // closes its session, so its registration goes at once whatever the timeout
        conf.put(DaemonConfig.SUPERVISOR_HEARTBEAT_FREQUENCY_SECS, 10);
        conf.put(DaemonConfig.NIMBUS_SUPERVISOR_TIMEOUT_SECS, 30);
        // a stopped supervisor's executors move within seconds, not a minute
        conf.put(DaemonConfig.NIMBUS_TASK_TIMEOUT_SECS, 8);
        // an executor younger than nimbus.task.launch.secs counts as alive without a heartbeat
        // (HeartbeatCache.getAliveExecutors): 120 s by default would keep a stopped supervisor's
        // executors assigned for two minutes
        conf.put(DaemonConfig.NIMBUS_TASK_LAUNCH_SECS, 15);
        conf.put(Config.STORM_ZOOKEEPER_SESSION_TIMEOUT, 6000);

        LocalCluster cluster = new LocalCluster.Builder()
            .withDaemonConf(conf)
            .withSupervisors(0)
            .withNimbusDaemon()
            .build();
        // two supervisors of three slots, each on a host of its own, so a stopped supervisor is one host
        // gone, as in production, and not one of two "localhost"s. A supervisor registers the hostname its
        // constructor got from the static Utils.hostname() (Supervisor.java: this.hostName =
        // Utils.hostname(), which reads the process's storm.local.hostname, not the supervisor's conf), so
        // a per-supervisor conf cannot name it: Storm's own test hook (Utils.setInstance) answers the
        // host while each supervisor is made, then the real Utils is back for everything after. The
        // names are not resolved: LocalCluster's workers talk through its in-process messaging context.
        for (String host : SUPERVISOR_HOSTS) {
            Utils real = Utils.setInstance(new Utils() {
                @Override
                protected String hostnameImpl() {
                    return host;
                }
            });
            try {
                cluster.addSupervisor(3, null, null);
            } finally {
                Utils.setInstance(real);
            }
        }
        Map<String, Object> clientConf = Utils.readStormConfig();
        clientConf.putAll(cluster.getDaemonConf());
        NimbusClient client = new NimbusClient(clientConf, "localhost", cluster.getThriftServerPort(), 30_000);
        Nimbus.Iface nimbus = client.getClient();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> answer = new LinkedHashMap<>();
            try {
                List<?> command = JSON.readValue(line, List.class);
                answer.put("value", run(cluster, nimbus, command));
                answer.put("ok", true);
            } catch (Throwable e) {
                answer.put("ok", false);
                answer.put("error", e.getClass().getName() + ": " + e.getMessage());
            }
            out.println(JSON.writeValueAsString(answer));
        }
        client.close();
        cluster.close();
        System.exit(0);
    }

    private static Object run(LocalCluster cluster, Nimbus.Iface nimbus, List<?> command) throws Exception {
        String name = (String) command.get(0);
        switch (name) {
            case "submit": {
                Map<String, Object> topoConf = new HashMap<>();
                topoConf.put(Config.TOPOLOGY_WORKERS, ((Number) command.get(2)).intValue());
                topoConf.put(Config.TOPOLOGY_MAX_SPOUT_PENDING, 50);
                topoConf.put(Config.TOPOLOGY_STATS_SAMPLE_RATE, 1.0); // every tuple counted, no sampling
                cluster.submitTopology((String) command.get(1), topoConf, topology());
                return null;
            }
            case "truth":
                return truth(nimbus);
            case "rebalance": {
                RebalanceOptions options = new RebalanceOptions();
                options.set_wait_secs(((Number) command.get(2)).intValue());
                options.set_num_workers(((Number) command.get(3)).intValue());
                options.put_to_num_executors((String) command.get(4), ((Number) command.get(5)).intValue());
                nimbus.rebalance((String) command.get(1), options);
                return null;
            }
            case "deactivate":
                nimbus.deactivate((String) command.get(1));
                return null;
            case "activate":
                nimbus.activate((String) command.get(1));
                return null;
            case "kill": {
                KillOptions options = new KillOptions();
                options.set_wait_secs(((Number) command.get(2)).intValue());
                nimbus.killTopologyWithOpts((String) command.get(1), options);
                return null;
            }
            case "kill_supervisor": {
                // its workers first (LocalCluster's are threads of this JVM: a supervisor's close() alone
                // leaves them running and beating, as a real supervisor's death leaves its worker
                // processes), then the supervisor: the node gone, as when a machine goes
                String id = (String) command.get(1);
                cluster.getSupervisor(id).shutdownAllWorkers(null, ReadClusterState.THREAD_DUMP_ON_ERROR);
                cluster.killSupervisor(id);
                return null;
            }
            default:
                throw new IllegalArgumentException("unknown command " + name);
        }
    }

    /** Everything Storm UI shows, read in one go through the Thrift client. */
    private static Map<String, Object> truth(Nimbus.Iface nimbus) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("time_ms", System.currentTimeMillis());
        ClusterSummary summary = nimbus.getClusterInfo();
        out.put("cluster", thrift(summary));
        out.put("leader", thrift(nimbus.getLeader()));
        Map<String, Object> topologies = new TreeMap<>();
        for (TopologySummary topology : summary.get_topologies()) {
            String id = topology.get_id();
            Map<String, Object> one = new LinkedHashMap<>();
            try {
                one.put("info", thrift(nimbus.getTopologyInfo(id)));
                Map<String, Object> pages = new LinkedHashMap<>();
                Map<String, Object> components = new TreeMap<>();
                for (String window : WINDOWS) {
                    TopologyPageInfo page = nimbus.getTopologyPageInfo(id, window, false);
                    page.unset_topology_conf(); // the whole topology configuration: nothing of it is compared
                    pages.put(window, thrift(page));
                    List<String> ids = new ArrayList<>(page.get_id_to_spout_agg_stats().keySet());
                    ids.addAll(page.get_id_to_bolt_agg_stats().keySet());
                    for (String component : ids) {
                        @SuppressWarnings("unchecked")
                        Map<String, Object> byWindow =
                            (Map<String, Object>) components.computeIfAbsent(component, k -> new LinkedHashMap<>());
                        ComponentPageInfo componentPage = nimbus.getComponentPageInfo(id, component, window, false);
                        // per executor and the errors again: the topology's info has both already
                        componentPage.unset_exec_stats();
                        componentPage.unset_errors();
                        byWindow.put(window, thrift(componentPage));
                    }
                }
                one.put("pages", pages);
                one.put("components", components);
            } catch (org.apache.storm.generated.NotAliveException e) {
                one.put("not_alive", true); // killed between the summary and these calls
            }
            topologies.put(id, one);
        }
        out.put("topologies", topologies);
        return out;
    }

    /** A Thrift value as plain JSON: structs by their fields' IDL names (only the fields set), unions as
     * {field: value}, maps keyed by a GlobalStreamId as "component:stream". */
    @SuppressWarnings({"rawtypes", "unchecked"})
    static Object thrift(Object value) {
        if (value instanceof TUnion) {
            TUnion union = (TUnion) value;
            Map<String, Object> out = new LinkedHashMap<>();
            if (union.getSetField() != null) {
                out.put(union.getSetField().getFieldName(), thrift(union.getFieldValue()));
            }
            return out;
        }
        if (value instanceof TBase) {
            TBase struct = (TBase) value;
            Map<String, Object> out = new LinkedHashMap<>();
            Map<? extends TFieldIdEnum, FieldMetaData> fields = FieldMetaData.getStructMetaDataMap(struct.getClass());
            for (TFieldIdEnum field : fields.keySet()) {
                if (struct.isSet(field)) {
                    out.put(field.getFieldName(), thrift(struct.getFieldValue(field)));
                }
            }
            return out;
        }
        if (value instanceof Map) {
            Map<String, Object> out = new TreeMap<>();
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                Object key = entry.getKey();
                String text = key instanceof GlobalStreamId
                    ? ((GlobalStreamId) key).get_componentId() + ":" + ((GlobalStreamId) key).get_streamId()
                    : String.valueOf(key);
                out.put(text, thrift(entry.getValue()));
            }
            return out;
        }
        if (value instanceof Collection) {
            List<Object> out = new ArrayList<>();
            for (Object item : (Collection<?>) value) {
                out.add(thrift(item));
            }
            return out;
        }
        if (value instanceof java.nio.ByteBuffer) {
            return null; // no binary field is compared
        }
        if (value instanceof Double && (((Double) value).isNaN() || ((Double) value).isInfinite())) {
            return String.valueOf(value);
        }
        return value;
    }

    static org.apache.storm.generated.StormTopology topology() {
        TopologyBuilder builder = new TopologyBuilder();
        builder.setSpout("sentences", new SentenceSpout(), 2);
        builder.setBolt("split", new SplitBolt(), 3).setNumTasks(4).shuffleGrouping("sentences");
        builder.setBolt("count", new CountBolt(), 2).setNumTasks(4).fieldsGrouping("split", new Fields("word"));
        return builder.createTopology();
    }

    /** Sentences with message ids (so acks and complete latency are real), about 50 a second per task. */
    public static final class SentenceSpout extends BaseRichSpout {
        private static final String[] SENTENCES = {
            "the cow jumped over the moon", "an apple a day keeps the doctor away",
            "four score and seven years ago", "snow white and the seven dwarfs", "i am at two with nature",
        };
        private SpoutOutputCollector collector;
        private long sent;

        @Override
        public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
            this.collector = collector;
        }

        @Override
        public void nextTuple() {
            Utils.sleep(20);
            collector.emit(new Values(SENTENCES[(int) (sent % SENTENCES.length)]), sent);
            sent++;
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(new Fields("sentence"));
        }
    }

    /** Splits sentences into words; its 50th tuple and every 5000th report an error (a caught exception, as
     * a bolt that survives a bad record does: each task's first soon after it starts, then seldom, so the
     * errors znodes are quiet while the tests read them) and every 89th tuple fails. */
    public static final class SplitBolt extends BaseRichBolt {
        private OutputCollector collector;
        private long seen;

        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
            this.collector = collector;
        }

        @Override
        public void execute(Tuple tuple) {
            seen++;
            if (seen == 50 || seen % 5000 == 0) {
                try {
                    throw new IllegalStateException("zkstorm-real: bad sentence #" + seen + " <" + tuple.getString(0) + ">");
                } catch (IllegalStateException e) {
                    collector.reportError(e);
                }
            }
            if (seen % 89 == 0) {
                collector.fail(tuple);
                return;
            }
            for (String word : tuple.getString(0).split(" ")) {
                collector.emit(tuple, new Values(word));
            }
            collector.ack(tuple);
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(new Fields("word"));
        }
    }

    /** Counts words and emits each new count (on a stream no one subscribes to: emitted, not transferred). */
    public static final class CountBolt extends BaseRichBolt {
        private OutputCollector collector;
        private final Map<String, Long> counts = new HashMap<>();

        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
            this.collector = collector;
        }

        @Override
        public void execute(Tuple tuple) {
            String word = tuple.getString(0);
            long count = counts.merge(word, 1L, Long::sum);
            collector.emit(tuple, new Values(word, count));
            collector.ack(tuple);
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(new Fields("word", "count"));
        }
    }
}
