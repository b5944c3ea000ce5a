import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;

/**
 * sasl.jaas.config values as Kafka 4.4's own JaasConfig parses them, for the compat tests.
 *
 * Each stdin line is the hex of one value's UTF-8. For each, one line: "error\t<exception
 * class>\t<hex of the message's UTF-8, or "null">" if parsing throws, else "ok" then, per
 * login module, a tab and "<module>,<flag>,<options>", where the module is hex, the flag is
 * required, requisite, sufficient or optional, and the options are "<key>=<value>" pairs joined
 * by ';' in key order, keys and values hex ("null" for a null key, first).
 *
 * JaasConfig is package-private: it is built by reflection.
 */
public class JaasProbe {
    private static final HexFormat HEX = HexFormat.of();

    private static String hex(String s) {
        return s == null ? "null" : HEX.formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String flag(AppConfigurationEntry.LoginModuleControlFlag f) {
        if (f == AppConfigurationEntry.LoginModuleControlFlag.REQUIRED) return "required";
        if (f == AppConfigurationEntry.LoginModuleControlFlag.REQUISITE) return "requisite";
        if (f == AppConfigurationEntry.LoginModuleControlFlag.SUFFICIENT) return "sufficient";
        return "optional";
    }

    public static void main(String[] args) throws Exception {
        Class<?> cls = Class.forName("org.apache.kafka.common.security.JaasConfig");
        Constructor<?> ctor = cls.getDeclaredConstructor(String.class, String.class);
        ctor.setAccessible(true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String text = new String(HEX.parseHex(line), StandardCharsets.UTF_8);
            StringBuilder out = new StringBuilder();
            try {
                Configuration config = (Configuration) ctor.newInstance("KafkaServer", text);
                out.append("ok");
                for (AppConfigurationEntry e : config.getAppConfigurationEntry("KafkaServer")) {
                    List<String> keys = new ArrayList<>();
                    Map<String, ?> options = e.getOptions();
                    for (String k : options.keySet()) keys.add(k);
                    keys.sort((a, b) -> a == null ? (b == null ? 0 : -1) : b == null ? 1 : a.compareTo(b));
                    List<String> pairs = new ArrayList<>();
                    for (String k : keys) pairs.add(hex(k) + "=" + hex((String) options.get(k)));
                    out.append('\t').append(hex(e.getLoginModuleName())).append(',')
                        .append(flag(e.getControlFlag())).append(',').append(String.join(";", pairs));
                }
            } catch (InvocationTargetException wrapped) {
                Throwable e = wrapped.getCause();
                out.setLength(0);
                out.append("error\t").append(e.getClass().getName()).append('\t').append(hex(e.getMessage()));
            }
            System.out.println(out);
        }
    }
}
