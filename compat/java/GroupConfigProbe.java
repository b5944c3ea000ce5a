import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import kafka.server.ControllerConfigurationValidator;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.coordinator.group.GroupConfig;

/**
 * Kafka's group configs as a controller sees them, for the compat tests.
 *
 * table: one line per GroupConfig key in definition order: name, type, default, validator,
 * broker synonym (name:1), internal; tab-separated, as TopicConfigProbe prints topic configs.
 *
 * validate [key=value ...]: each stdin line is "group\tname=value\t...". Prints "OK" or the
 * exception's simple class name and message, as a Java 4.4 controller's
 * ControllerConfigurationValidator answers for that group's configs; the arguments are extra
 * controller properties (the broker-level bounds group configs are checked against).
 */
public class GroupConfigProbe {
    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("table")) {
            table();
        } else if (args.length >= 1 && args[0].equals("validate")) {
            validate(args);
        } else {
            System.err.println("usage: GroupConfigProbe table | validate [key=value ...]");
            System.exit(2);
        }
    }

    private static void table() throws Exception {
        for (ConfigDef.ConfigKey k : GroupConfig.CONFIG_DEF.configKeys().values()) {
            String dflt = !k.hasDefault() ? "<none>"
                : k.defaultValue == null ? "<null>" : ConfigDef.convertToString(k.defaultValue, k.type);
            Optional<String> synonym = GroupConfig.brokerSynonym(k.name);
            System.out.println(String.join("\t", k.name, k.type.toString(), dflt,
                validator(k.validator), synonym.map(s -> s + ":1").orElse(""),
                Boolean.toString(k.internalConfig)));
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

    private static void validate(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("process.roles", "controller");
        p.put("node.id", "1");
        p.put("controller.quorum.voters", "1@localhost:9093");
        p.put("controller.listener.names", "CONTROLLER");
        p.put("listeners", "CONTROLLER://localhost:9093");
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            p.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
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
                validator.validate(new ConfigResource(ConfigResource.Type.GROUP, parts[0]),
                    configs, Collections.emptyMap());
                System.out.println("OK");
            } catch (Throwable e) {
                System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }
}
