import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DeleteAclsResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Metadata changes through Kafka's own clients, for the image snapshot tests.
 *
 * <pre>
 * AdminWorkload everything BOOTSTRAP TOPIC PARTITIONS   a topic with a config, a client quota, a
 *                                                       SCRAM user, an ACL and a producer id block
 * AdminWorkload churn BOOTSTRAP TOPIC KEY COUNT         COUNT changes of one topic config key
 * AdminWorkload extra BOOTSTRAP TOPIC                   after everything: a second and a doomed topic,
 *                                                       a cluster-wide broker config, a client-id
 *                                                       quota, a prefixed ACL, a SHA-512 credential
 * AdminWorkload more BOOTSTRAP TOPIC                    after extra: changes to each of those (deletes
 *                                                       fail unless the controller holds the thing),
 *                                                       and the next producer id block
 * AdminWorkload describe BOOTSTRAP                      what Admin describes, one sorted line per item,
 *                                                       once every partition has a leader
 * AdminWorkload setup BOOTSTRAP TOPIC                   everything (3 partitions), extra, describe: one
 *                                                       JVM instead of three
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
                case "extra" -> extra(admin, args[2]);
                case "more" -> more(admin, args[1], args[2]);
                case "describe" -> describe(admin);
                case "setup" -> {
                    everything(admin, args[1], args[2], 3);
                    extra(admin, args[2]);
                    describe(admin);
                }
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
        produce(bootstrap, topic);
    }

    /** An idempotent producer has the controller hand out a producer id block. */
    private static void produce(String bootstrap, String topic) throws Exception {
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

    private static final ConfigResource CLUSTER_BROKERS = new ConfigResource(ConfigResource.Type.BROKER, "");
    private static final ClientQuotaEntity REPORTER = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "reporter"));
    private static final ResourcePattern PREFIXED = new ResourcePattern(ResourceType.TOPIC, "imaged-", PatternType.PREFIXED);

    private static void extra(Admin admin, String topic) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic + "-second", 2, (short) 1)
                .configs(Map.of("cleanup.policy", "compact", "max.message.bytes", "65536")),
            new NewTopic(topic + "-doomed", 1, (short) 1))).all().get();
        admin.incrementalAlterConfigs(Map.of(CLUSTER_BROKERS, List.of(new AlterConfigOp(
            new ConfigEntry("message.max.bytes", "2000000"), AlterConfigOp.OpType.SET)))).all().get();
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(REPORTER, List.of(
            new ClientQuotaAlteration.Op("consumer_byte_rate", 2048.0),
            new ClientQuotaAlteration.Op("request_percentage", 12.5))))).all().get();
        admin.createAcls(List.of(new AclBinding(PREFIXED,
            new AccessControlEntry("User:bob", "*", AclOperation.WRITE, AclPermissionType.DENY)))).all().get();
        admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("bob",
            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "bob-secret"))).all().get();
    }

    private static void more(Admin admin, String bootstrap, String topic) throws Exception {
        admin.deleteTopics(List.of(topic + "-doomed")).all().get();
        admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all().get();
        admin.createTopics(List.of(new NewTopic(topic + "-after", 1, (short) 1))).all().get();
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic + "-second");
        admin.incrementalAlterConfigs(Map.of(resource, List.of(
            new AlterConfigOp(new ConfigEntry("max.message.bytes", ""), AlterConfigOp.OpType.DELETE),
            new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET)))).all().get();
        DeleteAclsResult deleted = admin.deleteAcls(List.of(new AclBindingFilter(
            new ResourcePatternFilter(ResourceType.TOPIC, "imaged-", PatternType.PREFIXED), AccessControlEntryFilter.ANY)));
        if (deleted.values().size() != 1 || deleted.all().get().size() != 1) {
            throw new IllegalStateException("expected to delete one prefixed ACL, deleted " + deleted.all().get());
        }
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(REPORTER, List.of(
            new ClientQuotaAlteration.Op("request_percentage", null))))).all().get();
        admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("alice", ScramMechanism.SCRAM_SHA_256))).all().get();
        produce(bootstrap, topic + "-after");
    }

    /** Lines, sorted within each part, so that two clusters' descriptions compare as text. */
    private static void describe(Admin admin) throws Exception {
        List<String> out = new ArrayList<>();
        out.add("cluster " + admin.describeCluster().clusterId().get());
        FeatureMetadata features = admin.describeFeatures().featureMetadata().get();
        new TreeMap<>(features.finalizedFeatures()).forEach((name, range) ->
            out.add("feature " + name + " " + range.minVersionLevel() + ".." + range.maxVersionLevel()));
        Set<String> names = new TreeSet<>(admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get());
        Map<String, TopicDescription> topics = withLeaders(admin, names);
        List<ConfigResource> resources = new ArrayList<>(List.of(CLUSTER_BROKERS));
        for (String name : names) {
            TopicDescription t = topics.get(name);
            out.add("topic " + name + " id=" + t.topicId() + " internal=" + t.isInternal() + " partitions=" + t.partitions().size());
            for (TopicPartitionInfo p : t.partitions()) {
                out.add("partition " + name + "-" + p.partition() + " leader=" + p.leader().id()
                    + " replicas=" + ids(p.replicas()) + " isr=" + ids(p.isr()));
            }
            resources.add(new ConfigResource(ConfigResource.Type.TOPIC, name));
        }
        Map<ConfigResource, Config> configs = admin.describeConfigs(resources).all().get();
        for (ConfigResource r : resources) {
            Set<String> lines = new TreeSet<>();
            for (ConfigEntry e : configs.get(r).entries()) {
                if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG
                    || e.source() == ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG) {
                    lines.add("config " + r.type() + ":" + r.name() + " " + e.name() + "=" + e.value());
                }
            }
            out.addAll(lines);
        }
        Set<String> acls = new TreeSet<>();
        for (AclBinding b : admin.describeAcls(AclBindingFilter.ANY).values().get()) {
            acls.add("acl " + b.pattern() + " " + b.entry());
        }
        out.addAll(acls);
        Set<String> quotas = new TreeSet<>();
        admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get().forEach((entity, values) ->
            quotas.add("quota " + new TreeMap<>(entity.entries()) + " " + new TreeMap<>(values)));
        out.addAll(quotas);
        Set<String> scram = new TreeSet<>();
        for (UserScramCredentialsDescription d : admin.describeUserScramCredentials().all().get().values()) {
            for (ScramCredentialInfo c : d.credentialInfos()) {
                scram.add("scram " + d.name() + " " + c.mechanism() + " iterations=" + c.iterations());
            }
        }
        out.addAll(scram);
        out.forEach(System.out::println);
    }

    /** The topics' descriptions once every partition has a leader (a restarted broker takes a moment). */
    private static Map<String, TopicDescription> withLeaders(Admin admin, Collection<String> names) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            Map<String, TopicDescription> topics = admin.describeTopics(names).allTopicNames().get();
            boolean led = topics.values().stream().flatMap(t -> t.partitions().stream())
                .allMatch(p -> p.leader() != null && p.leader().id() >= 0);
            if (led) {
                return topics;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("partitions without a leader after 60 s: " + topics);
            }
            Thread.sleep(200);
        }
    }

    private static String ids(List<org.apache.kafka.common.Node> nodes) {
        return nodes.stream().map(n -> Integer.toString(n.id())).toList().toString();
    }
}
