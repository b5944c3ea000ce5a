import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.security.ssl.DefaultSslEngineFactory;

/**
 * Key and trust stores as Kafka 4.4 loads them, for the compat tests (one JVM for all).
 *
 * Each stdin line is tab-separated; "-" stands for an unset password:
 *   keytool ARG...                         runs the JDK's keytool in this JVM (needs
 *                                          --add-exports java.base/sun.security.tools.keytool)
 *   key TYPE PATH STOREPASS KEYPASS        ssl.keystore.type/location/password, ssl.key.password
 *   inline-key KEYFILE CHAINFILE KEYPASS   ssl.keystore.key / .certificate.chain (type PEM)
 *   trust TYPE PATH PASS                   ssl.truststore.type/location/password
 *   inline-trust FILE                      ssl.truststore.certificates (type PEM)
 * Every line but keytool's prints one line: Kafka's DefaultSslEngineFactory is configured with
 * those settings (it loads the stores and builds its SSLContext), then
 *   key:   "chains" and, per alias Java's default (SunX509) key manager serves, the SHA-256 of
 *          each certificate of its chain joined by ","; chains sorted, tab-separated;
 *   trust: "trusted" and the SHA-256 of each certificate the default (PKIX) trust manager
 *          accepts as an issuer, sorted, tab-separated;
 *   or "error" and the exception's class and message when Kafka refuses.
 */
public class KeyStoreProbe {
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "keytool":
                    keytool(java.util.Arrays.copyOfRange(f, 1, f.length));
                    break;
                case "key": {
                    Properties p = new Properties();
                    p.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, f[1]);
                    p.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, f[2]);
                    put(p, SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, f[3]);
                    put(p, SslConfigs.SSL_KEY_PASSWORD_CONFIG, f[4]);
                    // Kafka opens keys with ssl.key.password, else the store password.
                    System.out.println(keyManagerChains(p, !f[4].equals("-") ? f[4] : f[3]));
                    break;
                }
                case "inline-key": {
                    Properties p = new Properties();
                    p.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
                    p.put(SslConfigs.SSL_KEYSTORE_KEY_CONFIG, Files.readString(Path.of(f[1])));
                    p.put(SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG, Files.readString(Path.of(f[2])));
                    put(p, SslConfigs.SSL_KEY_PASSWORD_CONFIG, f[3]);
                    System.out.println(keyManagerChains(p, f[3]));
                    break;
                }
                case "trust": {
                    Properties p = new Properties();
                    p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, f[1]);
                    p.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, f[2]);
                    put(p, SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, f[3]);
                    System.out.println(trusted(p));
                    break;
                }
                case "inline-trust": {
                    Properties p = new Properties();
                    p.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
                    p.put(SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG, Files.readString(Path.of(f[1])));
                    System.out.println(trusted(p));
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown command " + f[0]);
            }
        }
    }

    private static void put(Properties p, String key, String value) {
        if (!value.equals("-")) p.put(key, value);
    }

    /** keytool's main class, in this JVM, its output on stderr; a failure ends the probe. */
    private static void keytool(String[] args) throws Exception {
        PrintStream out = System.out;
        System.setOut(System.err);
        try {
            Class.forName("sun.security.tools.keytool.Main")
                .getMethod("main", String[].class)
                .invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw new RuntimeException("keytool " + String.join(" ", args), e.getCause());
        } finally {
            System.setOut(out);
        }
    }

    /** The factory as a Kafka client or broker configures it from these ssl.* settings. */
    private static DefaultSslEngineFactory factory(Properties props) {
        ConfigDef def = new ConfigDef();
        SslConfigs.addClientSslSupport(def);
        Map<String, Object> parsed = def.parse(props);
        DefaultSslEngineFactory factory = new DefaultSslEngineFactory();
        factory.configure(parsed);
        return factory;
    }

    private static String error(Throwable e) {
        StringBuilder b = new StringBuilder("error\t");
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t != e) b.append(" <- ");
            b.append(t.getClass().getName()).append(": ").append(String.valueOf(t.getMessage()).replace('\n', ' '));
        }
        return b.toString();
    }

    private static String fingerprint(Certificate c) throws Exception {
        return HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(c.getEncoded()));
    }

    private static String keyManagerChains(Properties props, String keyPassword) {
        try {
            KeyStore ks = factory(props).keystore();
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, keyPassword.equals("-") ? null : keyPassword.toCharArray());
            List<String> chains = new ArrayList<>();
            for (KeyManager km : kmf.getKeyManagers()) {
                X509KeyManager x = (X509KeyManager) km;
                for (String alias : Collections.list(ks.aliases())) {
                    X509Certificate[] chain = x.getCertificateChain(alias);
                    if (chain == null) continue;
                    List<String> fps = new ArrayList<>();
                    for (X509Certificate c : chain) fps.add(fingerprint(c));
                    chains.add(String.join(",", fps));
                }
            }
            Collections.sort(chains);
            return "chains" + (chains.isEmpty() ? "" : "\t" + String.join("\t", chains));
        } catch (Throwable e) {
            return error(e);
        }
    }

    private static String trusted(Properties props) {
        try {
            KeyStore ts = factory(props).truststore();
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ts);
            List<String> fps = new ArrayList<>();
            for (TrustManager tm : tmf.getTrustManagers()) {
                for (X509Certificate c : ((X509TrustManager) tm).getAcceptedIssuers()) fps.add(fingerprint(c));
            }
            Collections.sort(fps);
            return "trusted" + (fps.isEmpty() ? "" : "\t" + String.join("\t", fps));
        } catch (Throwable e) {
            return error(e);
        }
    }
}
