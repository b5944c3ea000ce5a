import java.lang.reflect.Field;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.TreeMap;

import kafka.server.KafkaConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.server.config.DynamicConfig;
import org.apache.kafka.server.metrics.ClientMetricsConfigs;
import org.apache.kafka.storage.internals.log.LogConfig;

/**
 * Kafka's broker config definitions as a controller describes them, for the compat tests.
 *
 * table: one line per KafkaConfig key, sorted by name: name, type, default
 * (ConfigDef.convertToString; "<none>" without one, "<null>" for null), whether it is dynamic
 * (DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS), its synonyms (DynamicBrokerConfig
 * .brokerConfigSynonyms with listener overrides, comma-separated), internal, whether it is
 * per-broker only (PER_BROKER_CONFIGS) and whether it is a security config updatable only with a
 * listener prefix (DYNAMIC_SECURITY_CONFIGS), and whether KafkaConfig defines it; tab-separated.
 * Then the dynamic broker configs only DynamicConfig.Broker defines (the replication
 * throttles), in the same columns.
 *
 * docs: one line per documented config of the broker, topic, group and client-metrics
 * definitions: kind, name, documentation with backslash, tab and newline escaped as \\, \t, \n.
 */
public class BrokerConfigProbe {
    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("table")) {
            table();
        } else if (args.length == 1 && args[0].equals("docs")) {
            docs("broker", KafkaConfig.configDef());
            docs("topic", LogConfig.configDefCopy());
            docs("group", GroupConfig.CONFIG_DEF);
            docs("client-metrics", ClientMetricsConfigs.configDef());
        } else {
            System.err.println("usage: BrokerConfigProbe table|docs");
            System.exit(2);
        }
    }

    private static void table() throws Exception {
        Set<String> perBroker = set("PER_BROKER_CONFIGS");
        for (ConfigDef.ConfigKey k : new TreeMap<>(KafkaConfig.configDef().configKeys()).values()) {
            String dflt = !k.hasDefault() ? "<none>"
                : k.defaultValue == null ? "<null>" : ConfigDef.convertToString(k.defaultValue, k.type);
            List<String> synonyms = DynamicBrokerConfig.brokerConfigSynonyms(k.name, true);
            System.out.println(String.join("\t", k.name, k.type.toString(), dflt,
                Boolean.toString(DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS.contains(k.name)),
                String.join(",", synonyms), Boolean.toString(k.internalConfig),
                Boolean.toString(perBroker.contains(k.name)),
                Boolean.toString(DynamicBrokerConfig.DYNAMIC_SECURITY_CONFIGS.contains(k.name)), "true"));
        }
        Map<String, ConfigDef.ConfigKey> all = KafkaConfig.configDef().configKeys();
        for (ConfigDef.ConfigKey k : new TreeMap<>(DynamicConfig.Broker.configKeys()).values()) {
            if (all.containsKey(k.name)) continue;
            System.out.println(String.join("\t", k.name, k.type.toString(), "<none>",
                Boolean.toString(DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS.contains(k.name)),
                k.name, Boolean.toString(k.internalConfig), Boolean.toString(perBroker.contains(k.name)),
                Boolean.toString(DynamicBrokerConfig.DYNAMIC_SECURITY_CONFIGS.contains(k.name)), "false"));
        }
    }

    @SuppressWarnings("unchecked")
    private static Set<String> set(String field) throws Exception {
        Field f = DynamicBrokerConfig.class.getDeclaredField(field);
        f.setAccessible(true);
        return (Set<String>) f.get(null);
    }

    private static void docs(String kind, ConfigDef def) {
        for (Map.Entry<String, ConfigDef.ConfigKey> e : new TreeMap<>(def.configKeys()).entrySet()) {
            String doc = e.getValue().documentation;
            if (doc == null) continue;
            String escaped = doc.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r");
            System.out.println(kind + "\t" + e.getKey() + "\t" + escaped);
        }
    }
}
