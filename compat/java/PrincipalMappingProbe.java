import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.HexFormat;

import org.apache.kafka.common.security.ssl.SslPrincipalMapper;

/**
 * The principal names Kafka 4.4 derives from client certificates, for the compat tests.
 *
 * Each stdin line is one question, its fields separated by tabs, strings given as the hex of
 * their UTF-8:
 *   "cert\t<hex DER>": prints "cert\tok\t<name>" with X500Principal.getName() of the
 *     certificate's subject (what SSLSession.getPeerPrincipal() gives Kafka's principal
 *     builder), or "cert\terror\t<exception class>";
 *   "map\t<rules>\t<name>,<name>,...": prints "map\tparse-error\t<exception class>" if
 *     SslPrincipalMapper.fromRules(rules) throws, else "map\tok" and, per name, a tab and
 *     "=<mapped name>" or "!<exception class>" from getName(name).
 * Answers are printed as the hex of their UTF-16 code units (four digits each), so that unpaired
 * surrogates show.
 */
public class PrincipalMappingProbe {
    private static final HexFormat HEX = HexFormat.of();

    private static String utf16(String s) {
        StringBuilder out = new StringBuilder(s.length() * 4);
        for (int i = 0; i < s.length(); i++) {
            out.append(String.format("%04x", (int) s.charAt(i)));
        }
        return out.toString();
    }

    private static String text(String hex) {
        return new String(HEX.parseHex(hex), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] fields = line.split("\t", -1);
            StringBuilder out = new StringBuilder(fields[0]);
            if (fields[0].equals("cert")) {
                try {
                    X509Certificate cert = (X509Certificate) factory.generateCertificate(
                        new ByteArrayInputStream(HEX.parseHex(fields[1])));
                    out.append("\tok\t").append(utf16(cert.getSubjectX500Principal().getName()));
                } catch (Throwable e) {
                    out.append("\terror\t").append(e.getClass().getName());
                }
            } else {
                SslPrincipalMapper mapper = null;
                try {
                    mapper = SslPrincipalMapper.fromRules(text(fields[1]));
                    out.append("\tok");
                } catch (Throwable e) {
                    out.append("\tparse-error\t").append(e.getClass().getName());
                }
                if (mapper != null && !fields[2].isEmpty()) {
                    for (String name : fields[2].split(",", -1)) {
                        try {
                            String mapped = mapper.getName(text(name));
                            out.append("\t=").append(utf16(mapped));
                        } catch (Throwable e) {
                            out.append("\t!").append(e.getClass().getName());
                        }
                    }
                }
            }
            System.out.println(out);
        }
    }
}
