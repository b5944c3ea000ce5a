import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Topic lives through a broker, for compat tests that check the active controller serves admin
 * requests: for each topic name read from stdin, CreateTopics, IncrementalAlterConfigs (one SET),
 * the config read back from the broker (DescribeConfigs, until the broker has applied it) and
 * DeleteTopics. One Admin client serves the whole run; it retries what Kafka calls retriable
 * (e.g. a broker's NOT_CONTROLLER while leadership moves).
 *
 * <p>Usage: {@code TopicRoundTrip <bootstrap> <partitions> <replication factor> <config key>
 * <config value>}, then one topic name a line on stdin. Each is answered by one JSON line on
 * stdout with each call's milliseconds, or the error that stopped it. Exits at the end of stdin.
 */
public class TopicRoundTrip {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int partitions = Integer.parseInt(args[1]);
        short replicationFactor = Short.parseShort(args[2]);
        String key = args[3];
        String value = args[4];
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Admin admin = Admin.create(props)) {
            String topic;
            while ((topic = in.readLine()) != null) {
                String answer;
                try {
                    answer = roundTrip(admin, topic.trim(), partitions, replicationFactor, key, value);
                } catch (Exception e) {
                    answer = String.format("{\"topic\":\"%s\",\"call\":\"%s\",\"error\":\"%s\"}", topic.trim(), call,
                        String.valueOf(e).replace("\\", "\\\\").replace("\"", "\\\"").replace('\n', ' '));
                }
                System.out.println(answer);
                System.out.flush();
            }
        }
    }

    /** The call under way, named in the error answer if it fails. */
    static String call = "";

    static String roundTrip(Admin admin, String topic, int partitions, short replicationFactor,
                            String key, String value) throws Exception {
        long t0 = System.nanoTime();
        boolean existed = false;
        call = "CreateTopics";
        try {
            admin.createTopics(List.of(new NewTopic(topic, partitions, replicationFactor))).all().get();
        } catch (ExecutionException e) {
            // A request that timed out but went through, retried by the client.
            if (!(e.getCause() instanceof TopicExistsException)) throw e;
            existed = true;
        }
        long t1 = System.nanoTime();
        call = "IncrementalAlterConfigs";
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Collection<AlterConfigOp> ops =
            List.of(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET));
        admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
        long t2 = System.nanoTime();
        call = "DescribeConfigs";
        String seen = null;
        for (int attempt = 0; attempt < 300 && !value.equals(seen); attempt++) {
            if (attempt > 0) Thread.sleep(100);
            try {
                Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
                ConfigEntry entry = config.get(key);
                seen = entry == null ? null : entry.value();
            } catch (ExecutionException e) {
                // The broker answering has not learned of the topic yet.
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
            }
        }
        if (!value.equals(seen)) {
            throw new IllegalStateException("the broker describes " + key + "=" + seen + ", not " + value);
        }
        long t3 = System.nanoTime();
        call = "DeleteTopics";
        admin.deleteTopics(List.of(topic)).all().get();
        long t4 = System.nanoTime();
        return String.format(
            "{\"topic\":\"%s\",\"create_ms\":%d,\"create_found_it_existing\":%b,\"alter_ms\":%d,"
                + "\"describe_ms\":%d,\"delete_ms\":%d}",
            topic, ms(t0, t1), existed, ms(t1, t2), ms(t2, t3), ms(t3, t4));
    }

    static long ms(long from, long to) {
        return (to - from) / 1_000_000;
    }
}
