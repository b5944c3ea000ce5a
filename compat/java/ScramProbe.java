import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * The keys a Kafka 4.4 controller stores for a SCRAM credential, for the compat tests.
 *
 * Each stdin line is "mechanism\tsaltedPasswordHex" (mechanism SCRAM-SHA-256 or SCRAM-SHA-512,
 * an empty hex for an empty password). Prints "storedKeyHex\tserverKeyHex" as
 * ScramControlManager.finishUpsertion derives them, or "error\t" and the exception's class.
 */
public class ScramProbe {
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t", -1);
            ScramFormatter formatter = new ScramFormatter(ScramMechanism.forMechanismName(fields[0]));
            byte[] salted = hex.parseHex(fields[1]);
            try {
                byte[] storedKey = formatter.storedKey(formatter.clientKey(salted));
                byte[] serverKey = formatter.serverKey(salted);
                System.out.println(hex.formatHex(storedKey) + "\t" + hex.formatHex(serverKey));
            } catch (Throwable e) {
                System.out.println("error\t" + e.getClass().getName());
            }
        }
    }
}
