import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;

import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;
import org.apache.kafka.common.security.scram.ScramExtensionsCallback;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCredentialCallback;

/**
 * Kafka 4.4's own SCRAM client and server, one exchange of each at a time, for
 * compat/tests/security/scram_sasl.rs. Their randomness (nonces) is fixed by the test: the
 * SecureRandom of each one's ScramFormatter is replaced by one that returns given bytes.
 *
 * One question per stdin line, tab-separated, binary fields in hex; one JSON answer per line:
 *   client  mech user pass random17 [extensions "k=v,k=v"]  -> {"message": first message}
 *   client-step hex                    -> {"message": hex or null, "complete": b} | error
 *   server  mech user salt stored server iterations random17 (user empty: no credential)
 *                                      -> {"ok": true}
 *   server-step hex                    -> {"message": hex, "complete": b, "authzid": s} | error
 * An error is {"error": exception class, "text": its message}.
 */
public class ScramSaslProbe {
    private static final HexFormat HEX = HexFormat.of();

    /** Returns the given bytes, over and over, as its random bytes. */
    static final class FixedRandom extends SecureRandom {
        private final byte[] bytes;

        FixedRandom(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public void nextBytes(byte[] out) {
            for (int i = 0; i < out.length; i++)
                out[i] = bytes[i % bytes.length];
        }
    }

    /** Replaces the SecureRandom of the ScramFormatter of a ScramSaslClient or ScramSaslServer. */
    static void fixRandom(Object saslObject, byte[] random) throws Exception {
        Field formatterField = saslObject.getClass().getDeclaredField("formatter");
        formatterField.setAccessible(true);
        Object formatter = formatterField.get(saslObject);
        Field randomField = formatter.getClass().getDeclaredField("random");
        randomField.setAccessible(true);
        randomField.set(formatter, new FixedRandom(random));
    }

    static String quote(String s) {
        if (s == null)
            return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\')
                b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e)
                b.append(String.format("\\u%04x", (int) c));
            else
                b.append(c);
        }
        return b.append('"').toString();
    }

    static String hexOrNull(byte[] bytes) {
        return bytes == null ? "null" : quote(HEX.formatHex(bytes));
    }

    static String error(Throwable e) {
        return "{\"error\": " + quote(e.getClass().getName()) + ", \"text\": " + quote(e.getMessage()) + "}";
    }

    static String text(String hex) {
        return new String(HEX.parseHex(hex), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ScramSaslClient client = null;
        ScramSaslServer server = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            String answer;
            try {
                switch (f[0]) {
                    case "client": {
                        String user = text(f[2]);
                        char[] password = text(f[3]).toCharArray();
                        Map<String, String> extensions = new LinkedHashMap<>();
                        if (f.length > 5 && !f[5].isEmpty()) {
                            for (String kv : text(f[5]).split(",")) {
                                String[] p = kv.split("=", 2);
                                extensions.put(p[0], p[1]);
                            }
                        }
                        CallbackHandler handler = callbacks -> {
                            for (Callback c : callbacks) {
                                if (c instanceof NameCallback)
                                    ((NameCallback) c).setName(user);
                                else if (c instanceof PasswordCallback)
                                    ((PasswordCallback) c).setPassword(password);
                                else if (c instanceof ScramExtensionsCallback)
                                    ((ScramExtensionsCallback) c).extensions(extensions);
                                else
                                    throw new UnsupportedCallbackException(c);
                            }
                        };
                        client = new ScramSaslClient(ScramMechanism.forMechanismName(f[1]), handler);
                        fixRandom(client, HEX.parseHex(f[4]));
                        answer = "{\"message\": " + hexOrNull(client.evaluateChallenge(new byte[0])) + "}";
                        break;
                    }
                    case "client-step": {
                        byte[] reply = client.evaluateChallenge(HEX.parseHex(f[1]));
                        answer = "{\"message\": " + hexOrNull(reply) + ", \"complete\": " + client.isComplete() + "}";
                        break;
                    }
                    case "server": {
                        String user = text(f[2]);
                        ScramCredential credential = new ScramCredential(HEX.parseHex(f[3]),
                            HEX.parseHex(f[4]), HEX.parseHex(f[5]), Integer.parseInt(f[6]));
                        CallbackHandler handler = callbacks -> {
                            String name = null;
                            for (Callback c : callbacks) {
                                if (c instanceof NameCallback)
                                    name = ((NameCallback) c).getDefaultName();
                                else if (c instanceof DelegationTokenCredentialCallback) {
                                    // No delegation tokens: the owner stays null.
                                } else if (c instanceof ScramCredentialCallback) {
                                    if (!user.isEmpty() && user.equals(name))
                                        ((ScramCredentialCallback) c).scramCredential(credential);
                                } else
                                    throw new UnsupportedCallbackException(c);
                            }
                        };
                        server = new ScramSaslServer(ScramMechanism.forMechanismName(f[1]), Map.of(), handler);
                        fixRandom(server, HEX.parseHex(f[7]));
                        answer = "{\"ok\": true}";
                        break;
                    }
                    case "server-step": {
                        byte[] reply = server.evaluateResponse(HEX.parseHex(f[1]));
                        String authzid = server.isComplete() ? server.getAuthorizationID() : null;
                        answer = "{\"message\": " + hexOrNull(reply) + ", \"complete\": " + server.isComplete()
                            + ", \"authzid\": " + quote(authzid) + "}";
                        break;
                    }
                    default:
                        answer = "{\"error\": \"probe\", \"text\": " + quote("unknown question " + f[0]) + "}";
                }
            } catch (Throwable e) {
                answer = error(e);
            }
            System.out.println(answer);
            System.out.flush();
        }
    }
}
