import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Metadata changes through Kafka's own clients, for the image snapshot tests.
 *
 * <pre>
 * AdminWorkload everything BOOTSTRAP TOPIC PARTITIONS   a topic with a config, a client quota, a
 *                                                       SCRAM user, an ACL and a producer id block
 * AdminWorkload churn BOOTSTRAP TOPIC KEY COUNT         COUNT changes of one topic config key
 * </pre>
 */
public final class AdminWorkload {
    private AdminWorkload() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
        try (Admin admin = Admin.create(props)) {
            switch (args[0]) {
                case "everything" -> everything(admin, args[1], args[2], Integer.parseInt(args[3]));
                case "churn" -> churn(admin, args[2], args[3], Integer.parseInt(args[4]));
                default -> throw new IllegalArgumentException("unknown command " + args[0]);
            }
        }
    }

    private static void everything(Admin admin, String bootstrap, String topic, int partitions) throws Exception {
        NewTopic newTopic = new NewTopic(topic, partitions, (short) 1).configs(Map.of("retention.ms", "3600000"));
        admin.createTopics(List.of(newTopic)).all().get();
        ClientQuotaEntity alice = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice"));
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(alice,
            List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0))))).all().get();
        admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("alice",
            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), "alice-secret"))).all().get();
        admin.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)))).all().get();
        // An idempotent producer has the controller hand out a producer id block.
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic, "hello".getBytes())).get();
        }
    }

    /** Each value differs from the last: setting a config to its current value writes no record. */
    private static void churn(Admin admin, String topic, String key, int count) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        for (int i = 0; i < count; i++) {
            AlterConfigOp op = new AlterConfigOp(new ConfigEntry(key, Integer.toString(3600001 + i)), AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get();
        }
    }
}
