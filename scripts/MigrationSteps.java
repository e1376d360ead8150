// What scripts/capture-kraft.sh's migration run changes once the KRaft controller is in dual-write mode
// (KIP-866): through Kafka's own AdminClient against the still-ZooKeeper-mode brokers, which forward to the
// KRaft controller; it writes each change to its log and then to ZooKeeper. Run with
// `java -cp "<kafka jars>/*" scripts/MigrationSteps.java BOOTSTRAP`. Each step prints one line.

import java.util.*;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.acl.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.*;

public class MigrationSteps {
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

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        try (Admin admin = Admin.create(props)) {
            step("topic dual-written created in dual-write mode", () -> admin.createTopics(List.of(
                new NewTopic("dual-written", 3, (short) 2).configs(Map.of("retention.ms", "3600000"))
            )).all().get(60, TimeUnit.SECONDS));
            step("orders retention.ms changed in dual-write mode", () -> admin.incrementalAlterConfigs(Map.of(
                new ConfigResource(ConfigResource.Type.TOPIC, "orders"), List.of(new AlterConfigOp(
                    new ConfigEntry("retention.ms", "86400000"), AlterConfigOp.OpType.SET))
            )).all().get(30, TimeUnit.SECONDS));
            step("an ACL created in dual-write mode", () -> admin.createAcls(List.of(new AclBinding(
                new ResourcePattern(ResourceType.TOPIC, "dual-written", PatternType.LITERAL),
                new AccessControlEntry("User:carol", "*", AclOperation.WRITE, AclPermissionType.ALLOW)
            ))).all().get(30, TimeUnit.SECONDS));
        }
    }
}
