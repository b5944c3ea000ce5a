import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import kafka.server.ControllerConfigurationValidator;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

/**
 * Kafka's topic configs as a controller sees them, for the compat tests.
 *
 * table: one line per LogConfig key in definition order: name, type, default, validator,
 * synonyms (name:factor of a value of 1), internal; tab-separated.
 *
 * validate: each stdin line is "topic\tname=value\t...". Prints "OK" or the exception's
 * simple class name and message, as a Java 4.4 controller's ControllerConfigurationValidator
 * (on default KafkaConfig values) answers for a topic being created.
 */
public class TopicConfigProbe {
    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("table")) {
            table();
        } else if (args.length == 1 && args[0].equals("validate")) {
            validate();
        } else {
            System.err.println("usage: TopicConfigProbe table|validate");
            System.exit(2);
        }
    }

    private static void table() throws Exception {
        ConfigDef def = LogConfig.configDefCopy();
        for (ConfigDef.ConfigKey k : def.configKeys().values()) {
            String dflt = !k.hasDefault() ? "<none>"
                : k.defaultValue == null ? "<null>" : ConfigDef.convertToString(k.defaultValue, k.type);
            StringBuilder syn = new StringBuilder();
            List<ConfigSynonym> synonyms = ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS
                .getOrDefault(k.name, Collections.emptyList());
            for (ConfigSynonym s : synonyms) {
                if (syn.length() > 0) syn.append(',');
                syn.append(s.name()).append(':').append(s.converter().apply("1"));
            }
            System.out.println(String.join("\t", k.name, k.type.toString(), dflt,
                validator(k.validator), syn.toString(), Boolean.toString(k.internalConfig)));
        }
    }

    private static String validator(ConfigDef.Validator v) throws Exception {
        if (v == null) return "-";
        String name = v.getClass().getSimpleName();
        if (v instanceof ConfigDef.ValidList) {
            return name + " " + v + " empty=" + flag(v, "isEmptyAllowed") + " null=" + flag(v, "isNullAllowed");
        }
        return name + " " + v;
    }

    private static Object flag(Object o, String field) throws Exception {
        Field f = o.getClass().getDeclaredField(field);
        f.setAccessible(true);
        return f.get(o);
    }

    private static void validate() throws Exception {
        Properties p = new Properties();
        p.put("process.roles", "controller");
        p.put("node.id", "1");
        p.put("controller.quorum.voters", "1@localhost:9093");
        p.put("controller.listener.names", "CONTROLLER");
        p.put("listeners", "CONTROLLER://localhost:9093");
        ControllerConfigurationValidator validator =
            new ControllerConfigurationValidator(KafkaConfig.fromProps(p, false));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            Map<String, String> configs = new LinkedHashMap<>();
            for (int i = 1; i < parts.length; i++) {
                int eq = parts[i].indexOf('=');
                configs.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
            }
            try {
                validator.validate(new ConfigResource(ConfigResource.Type.TOPIC, parts[0]),
                    configs, Collections.emptyMap());
                System.out.println("OK");
            } catch (Throwable e) {
                System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }
}
