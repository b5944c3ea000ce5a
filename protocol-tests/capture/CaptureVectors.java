// Captures golden vectors from Apache Kafka's own generated message classes.
//
// For each schema (read from the Kafka jars on the classpath) and every version in its
// validVersions, this builds a JSON document with a non-default value for every field of that
// version, lets Kafka's generated XxxJsonConverter.read turn it into Kafka's message object, and
// writes what Kafka's serializer produces (.bin) next to Kafka's XxxJsonConverter.write output
// (.json). Nothing here encodes Kafka's wire format by hand: the bytes are Kafka's.
//
//   java -cp <kafka classpath>:<dir of this class> CaptureVectors schemas <out dir> [seed]
//   java -cp ... CaptureVectors describe-live <dir of live frames>
//
// Variants per (message, version):
//   v<N>.bin               every field set to a non-default value, arrays with 2 elements
//   v<N>-nulls.bin         as above, but every field nullable at this version set to null
//   v<N>-defaults.bin      Kafka's default-constructed object
//   v<N>-unknown-tags.bin  flexible versions only: the v<N> vector plus unknown tagged fields
//                          (tags 100 and 16384) on the message and on its first nested structs
//
// Reproducible: each vector's random generator is seeded from (seed, message, version, variant).
// Written against Kafka 4.4.0; only the public generated API and reflection are used, so it also
// runs against 4.0.x (record classes moved package between them, hence the reflection there).

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Enumeration;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;

public final class CaptureVectors {
    static final long DEFAULT_SEED = 20260404L;
    static final ObjectMapper MAPPER = new ObjectMapper().enable(JsonParser.Feature.ALLOW_COMMENTS);
    static final JsonNodeFactory NF = JsonNodeFactory.instance;

    // The APIs kraftd serves or sends (by schema name, so 45/46 cannot be confused).
    static final List<String> APIS = List.of(
        "ApiVersions", "DescribeCluster", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch",
        "DescribeQuorum", "Fetch", "FetchSnapshot", "AddRaftVoter", "RemoveRaftVoter",
        "UpdateRaftVoter", "BrokerRegistration", "BrokerHeartbeat", "ControllerRegistration",
        "CreateTopics", "UnregisterBroker", "AllocateProducerIds", "AlterPartition",
        "UpdateFeatures", "AssignReplicasToDirs", "ListPartitionReassignments",
        "IncrementalAlterConfigs", "CreatePartitions", "DeleteTopics", "DescribeConfigs",
        "AlterConfigs", "Metadata", "SaslHandshake", "SaslAuthenticate", "Envelope",
        "CreateAcls", "DeleteAcls", "DescribeAcls", "ElectLeaders", "AlterPartitionReassignments",
        "AlterClientQuotas", "AlterUserScramCredentials", "DescribeUserScramCredentials",
        "CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken",
        "DescribeDelegationToken", "UnregisterController");
    // Headers, raft control records and the quorum-state file; metadata records are all of
    // common/metadata/*.json, listed from the jar.
    static final List<String> OTHERS = List.of(
        "RequestHeader", "ResponseHeader", "LeaderChangeMessage", "SnapshotHeaderRecord",
        "SnapshotFooterRecord", "KRaftVersionRecord", "VotersRecord", "QuorumStateData",
        "DefaultPrincipalData");

    // Strings mix scripts and widths so UTF-8 length and character count differ.
    static final String[] STRINGS = {"kraftd-ünïcødé", "トピック", "crab-🦀", "plain", "Ωmega-λ", "naïve café"};

    public static void main(String[] args) throws Exception {
        if (args.length >= 2 && args[0].equals("schemas")) {
            long seed = args.length > 2 ? Long.parseLong(args[2]) : DEFAULT_SEED;
            new CaptureVectors(seed).captureAll(Path.of(args[1]));
        } else if (args.length == 2 && args[0].equals("describe-live")) {
            describeLive(Path.of(args[1]));
        } else {
            System.err.println("usage: CaptureVectors schemas <out dir> [seed] | describe-live <dir>");
            System.exit(2);
        }
    }

    final long seed;
    final byte[] recordBatch;
    final ArrayNode manifest = NF.arrayNode();

    CaptureVectors(long seed) throws Exception {
        this.seed = seed;
        this.recordBatch = recordBatch();
    }

    /** One schema: its JSON, where its classes live. */
    record Schema(String file, JsonNode json, String pkg) {
        String name() { return json.get("name").asText(); }
        String type() { return json.get("type").asText(); }
        // Kafka suffixes request, response and header classes with "Data".
        String dataClass() {
            String t = type();
            boolean suffix = t.equals("request") || t.equals("response") || t.equals("header");
            return pkg + "." + name() + (suffix ? "Data" : "");
        }
    }

    void captureAll(Path out) throws Exception {
        List<Schema> schemas = new ArrayList<>();
        for (String api : APIS) {
            schemas.add(load("common/message/" + api + "Request.json", "org.apache.kafka.common.message"));
            schemas.add(load("common/message/" + api + "Response.json", "org.apache.kafka.common.message"));
        }
        for (String o : OTHERS) {
            String pkg = o.equals("QuorumStateData") ? "org.apache.kafka.raft.generated" : "org.apache.kafka.common.message";
            schemas.add(load("common/message/" + o + ".json", pkg));
        }
        for (String f : listJarDir("common/metadata/TopicRecord.json", "common/metadata/")) {
            schemas.add(load(f, "org.apache.kafka.common.metadata"));
        }
        int count = 0;
        for (Schema s : schemas) count += captureSchema(s, out);
        ObjectNode m = NF.objectNode();
        m.put("kafkaVersion", kafkaVersion());
        m.put("seed", seed);
        m.put("generator", "protocol-tests/capture/CaptureVectors.java");
        m.set("vectors", manifest);
        Files.writeString(out.resolve("manifest.json"),
            MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(m) + "\n");
        System.err.printf("CaptureVectors: wrote %d vectors for %d schemas (Kafka %s, seed %d) to %s%n",
            count, schemas.size(), kafkaVersion(), seed, out);
    }

    /** The kafka-clients version, from the properties file its jar ships (the class reading it moved in 4.4). */
    static String kafkaVersion() throws IOException {
        try (InputStream in = CaptureVectors.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            java.util.Properties p = new java.util.Properties();
            if (in != null) p.load(in);
            return p.getProperty("version", "unknown");
        }
    }

    static Schema load(String resource, String pkg) throws IOException {
        try (InputStream in = CaptureVectors.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) throw new IOException("schema " + resource + " is not on the classpath");
            return new Schema(resource, MAPPER.readTree(in), pkg);
        }
    }

    /** Names of the .json files in the jar directory that holds `probe`. */
    static List<String> listJarDir(String probe, String dir) throws IOException {
        URL url = CaptureVectors.class.getClassLoader().getResource(probe);
        if (url == null) throw new IOException(probe + " is not on the classpath");
        List<String> names = new ArrayList<>();
        try (JarFile jar = ((JarURLConnection) url.openConnection()).getJarFile()) {
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                String n = e.nextElement().getName();
                if (n.startsWith(dir) && n.endsWith(".json")) names.add(n);
            }
        }
        names.sort(null);
        return names;
    }

    int captureSchema(Schema s, Path out) throws Exception {
        Class<?> data = Class.forName(s.dataClass());
        Class<?> conv = Class.forName(s.dataClass() + "JsonConverter");
        Method read = conv.getMethod("read", JsonNode.class, short.class);
        // serializeRecords=false: Kafka writes "records" fields as {"recordsSizeInBytes": n} (as its
        // request log does); with true it writes "" whatever the bytes, which says nothing.
        Method write = conv.getMethod("write", data, short.class, boolean.class);
        short[] range = range(s.json.get("validVersions").asText());
        short[] flex = range(s.json.path("flexibleVersions").asText("none"));
        boolean unstableLatest = s.json.path("latestVersionUnstable").asBoolean(false);
        Path dir = out.resolve(s.name());
        Files.createDirectories(dir);
        int count = 0;
        for (short v = range[0]; v <= range[1]; v++) {
            boolean unstable = unstableLatest && v == range[1];
            boolean flexible = in(flex, v);
            for (String variant : List.of("", "nulls", "defaults", "unknown-tags")) {
                if (variant.equals("unknown-tags") && !flexible) continue;
                if (variant.equals("nulls") && !hasNullable(s, s.json.get("fields"), v)) continue;
                // unknown-tags shares the full vector's stream: same values, plus the tags.
                String stream = variant.equals("unknown-tags") ? "" : variant;
                Random rnd = new Random(seed * 31 + (s.name() + "/" + v + "/" + stream).hashCode());
                Message msg;
                try {
                    if (variant.equals("defaults")) {
                        msg = (Message) data.getConstructor().newInstance();
                    } else {
                        JsonNode doc = struct(s, s.json.get("fields"), v, rnd, variant.equals("nulls"));
                        msg = (Message) read.invoke(null, doc, v);
                        if (variant.equals("unknown-tags")) addUnknownTags(msg, rnd);
                    }
                } catch (Exception e) {
                    // An unstable version the converter refuses is left out (and said so).
                    if (unstable) {
                        System.err.printf("skip unstable %s v%d: %s%n", s.name(), v, rootCause(e));
                        break;
                    }
                    throw new RuntimeException(s.name() + " v" + v + " " + variant + ": " + rootCause(e), e);
                }
                byte[] bytes = serialize(msg, v);
                checkKafkaRoundTrip(data, msg, bytes, v, s.name());
                String base = "v" + v + (variant.isEmpty() ? "" : "-" + variant);
                Files.write(dir.resolve(base + ".bin"), bytes);
                JsonNode json = (JsonNode) write.invoke(null, msg, v, false);
                Files.writeString(dir.resolve(base + ".json"),
                    MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n");
                ObjectNode e = manifest.addObject();
                e.put("message", s.name());
                e.put("schemaType", s.type());
                if (s.json.has("apiKey")) e.put("apiKey", s.json.get("apiKey").asInt());
                e.put("version", v);
                e.put("variant", variant.isEmpty() ? "full" : variant);
                e.put("file", s.name() + "/" + base + ".bin");
                e.put("size", bytes.length);
                e.put("flexible", flexible);
                e.put("unstable", unstable);
                count++;
            }
        }
        return count;
    }

    static String rootCause(Throwable e) {
        while (e.getCause() != null) e = e.getCause();
        return e.toString();
    }

    static byte[] serialize(Message m, short v) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, v));
        m.write(new ByteBufferAccessor(buf), cache, v);
        if (buf.hasRemaining()) throw new IllegalStateException("size() and write() disagree");
        return buf.array();
    }

    /** A vector Kafka cannot read back to the same object and bytes would be a bad oracle. */
    static void checkKafkaRoundTrip(Class<?> data, Message orig, byte[] bytes, short v, String name) throws Exception {
        Message back = (Message) data.getConstructor().newInstance();
        ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(bytes));
        back.read(acc, v);
        if (acc.remaining() != 0) throw new IllegalStateException(name + " v" + v + ": trailing bytes on Kafka's read");
        if (!back.equals(orig)) throw new IllegalStateException(name + " v" + v + ": Kafka's read differs from the original");
        if (!Arrays.equals(serialize(back, v), bytes)) throw new IllegalStateException(name + " v" + v + ": Kafka's re-encode differs");
    }

    // ---- building the JSON document from the schema ----

    /** "0+", "1-3", "3", "none" as [lo, hi]; empty range when none. */
    static short[] range(String r) {
        if (r.equals("none")) return new short[] {1, 0};
        if (r.endsWith("+")) return new short[] {Short.parseShort(r.substring(0, r.length() - 1)), Short.MAX_VALUE};
        int dash = r.indexOf('-');
        if (dash > 0) return new short[] {Short.parseShort(r.substring(0, dash)), Short.parseShort(r.substring(dash + 1))};
        short x = Short.parseShort(r);
        return new short[] {x, x};
    }

    static boolean in(short[] r, short v) { return v >= r[0] && v <= r[1]; }

    static boolean present(JsonNode f, short v) { return in(range(f.get("versions").asText()), v); }

    static boolean nullable(JsonNode f, short v) { return in(range(f.path("nullableVersions").asText("none")), v); }

    static JsonNode structFields(Schema s, JsonNode f, String typeName) {
        if (f.has("fields")) return f.get("fields");
        for (JsonNode c : s.json.path("commonStructs")) {
            if (c.get("name").asText().equals(typeName)) return c.get("fields");
        }
        throw new IllegalArgumentException(s.name() + ": no struct " + typeName);
    }

    static boolean isPrimitive(String t) {
        return switch (t) {
            case "bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
                 "string", "uuid", "bytes", "records" -> true;
            default -> false;
        };
    }

    boolean hasNullable(Schema s, JsonNode fields, short v) {
        for (JsonNode f : fields) {
            if (!present(f, v)) continue;
            if (nullable(f, v)) return true;
            String t = f.get("type").asText().replace("[]", "");
            if (!isPrimitive(t) && hasNullable(s, structFields(s, f, t), v)) return true;
        }
        return false;
    }

    ObjectNode struct(Schema s, JsonNode fields, short v, Random rnd, boolean nulls) {
        ObjectNode o = NF.objectNode();
        for (JsonNode f : fields) {
            if (!present(f, v)) continue;
            String name = f.get("name").asText();
            // Kafka's JSON names are the schema names with the first letter lower-cased.
            o.set(Character.toLowerCase(name.charAt(0)) + name.substring(1), value(s, f, v, rnd, nulls));
        }
        return o;
    }

    JsonNode value(Schema s, JsonNode f, short v, Random rnd, boolean nulls) {
        if (nulls && nullable(f, v)) return NF.nullNode();
        String type = f.get("type").asText();
        if (type.startsWith("[]")) {
            String elem = type.substring(2);
            ArrayNode a = NF.arrayNode();
            for (int i = 0; i < 2; i++) {
                a.add(isPrimitive(elem) ? primitive(elem, null, rnd) : struct(s, structFields(s, f, elem), v, rnd, nulls));
            }
            return a;
        }
        if (isPrimitive(type)) return primitive(type, f.get("default"), rnd);
        return struct(s, structFields(s, f, type), v, rnd, nulls);
    }

    /** A random value of the type that differs from the field's default, so tagged fields are written. */
    JsonNode primitive(String type, JsonNode dflt, Random rnd) {
        String d = dflt == null ? null : dflt.asText();
        switch (type) {
            case "bool":
                return NF.booleanNode(!"true".equals(d));
            case "string":
                return NF.textNode(STRINGS[rnd.nextInt(STRINGS.length)] + "-" + rnd.nextInt(1000));
            case "uuid":
                return NF.textNode(new Uuid(rnd.nextLong(), rnd.nextLong()).toString());
            case "bytes": {
                byte[] b = new byte[1 + rnd.nextInt(8)];
                rnd.nextBytes(b);
                return NF.binaryNode(b);
            }
            case "records":
                return NF.binaryNode(recordBatch);
            case "float64":
                return NF.numberNode((rnd.nextInt(2_000_000) - 1_000_000) / 16.0);
            default:
                break;
        }
        long dv = (d == null || d.isEmpty() || d.equals("null")) ? 0 : Long.decode(d);
        long x;
        do {
            x = switch (type) {
                case "int8" -> (byte) rnd.nextInt();
                case "int16" -> (short) rnd.nextInt();
                case "uint16" -> rnd.nextInt(1 << 16);
                case "int32" -> rnd.nextInt();
                case "uint32" -> rnd.nextLong() & 0xffffffffL;
                case "int64" -> rnd.nextLong();
                default -> throw new IllegalArgumentException("unknown type " + type);
            };
        } while (x == dv);
        return switch (type) {
            case "int8", "int16", "uint16", "int32" -> NF.numberNode((int) x);
            default -> NF.numberNode(x);
        };
    }

    /** A real (uncompressed, v2) record batch from Kafka's own builder, for "records" fields. */
    static byte[] recordBatch() throws Exception {
        Class<?> mr = classIn("MemoryRecords"), sr = classIn("SimpleRecord");
        Class<?> comp = Class.forName("org.apache.kafka.common.compress.Compression");
        Object none = comp.getField("NONE").get(null);
        Object recs = Array.newInstance(sr, 2);
        Array.set(recs, 0, sr.getConstructor(long.class, byte[].class, byte[].class)
            .newInstance(1_700_000_000_000L, "key".getBytes(StandardCharsets.UTF_8), "välue".getBytes(StandardCharsets.UTF_8)));
        Array.set(recs, 1, sr.getConstructor(long.class, byte[].class, byte[].class)
            .newInstance(1_700_000_000_001L, null, "second".getBytes(StandardCharsets.UTF_8)));
        Object m = mr.getMethod("withRecords", comp, recs.getClass()).invoke(null, none, recs);
        ByteBuffer b = (ByteBuffer) mr.getMethod("buffer").invoke(m);
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    static Class<?> classIn(String simple) throws ClassNotFoundException {
        for (String p : List.of("org.apache.kafka.common.record.internal.", "org.apache.kafka.common.record.")) {
            try {
                return Class.forName(p + simple);
            } catch (ClassNotFoundException ignored) {
                // try the next package
            }
        }
        throw new ClassNotFoundException(simple);
    }

    /**
     * Unknown tagged fields on the message and on the first element of each of its populated
     * nested structs: tag 100 with 0 bytes (empty body edge case) and tag 16384 (3-byte varint).
     * Known tags in 4.4 stop at 8, and Kafka requires unknown tags in ascending order.
     */
    static void addUnknownTags(Message m, Random rnd) throws Exception {
        for (Message child : children(m)) {
            Message blank = child.getClass().getConstructor().newInstance();
            if (child.equals(blank)) continue; // not populated at this version: would not be written
            child.unknownTaggedFields().add(new RawTaggedField(100, new byte[0]));
        }
        byte[] body = new byte[5];
        rnd.nextBytes(body);
        m.unknownTaggedFields().add(new RawTaggedField(100, new byte[0]));
        m.unknownTaggedFields().add(new RawTaggedField(16384, body));
    }

    static List<Message> children(Message m) throws IllegalAccessException {
        List<Message> out = new ArrayList<>();
        for (Field f : m.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) continue;
            f.setAccessible(true);
            Object x = f.get(m);
            if (x instanceof Message child) out.add(child);
            if (x instanceof Collection<?> c && !c.isEmpty() && c.iterator().next() instanceof Message first) out.add(first);
        }
        return out;
    }

    // ---- live frames ----

    /**
     * For each <n>-<api>-v<ver>-{request,response}.bin frame (header + body, no size prefix)
     * writes <same>.json = {"headerVersion", "header", "body"} from Kafka's own parsers, and checks
     * that Kafka re-encodes the frame byte for byte.
     */
    static void describeLive(Path dir) throws Exception {
        TreeSet<Path> files = new TreeSet<>();
        try (Stream<Path> st = Files.list(dir)) {
            st.filter(p -> p.toString().endsWith("-request.bin")).forEach(files::add);
        }
        if (files.isEmpty()) throw new IOException("no *-request.bin frames in " + dir);
        for (Path req : files) {
            byte[] bytes = Files.readAllBytes(req);
            ByteBuffer bb = ByteBuffer.wrap(bytes);
            ApiKeys key = ApiKeys.forId(bb.getShort(0));
            short v = bb.getShort(2);
            describeFrame(req, bytes, key, v, true);
            Path resp = Path.of(req.toString().replace("-request.bin", "-response.bin"));
            if (Files.exists(resp)) describeFrame(resp, Files.readAllBytes(resp), key, v, false);
        }
    }

    static void describeFrame(Path file, byte[] bytes, ApiKeys key, short v, boolean request) throws Exception {
        ByteBufferAccessor acc = new ByteBufferAccessor(ByteBuffer.wrap(bytes));
        short hv = request ? key.requestHeaderVersion(v) : key.responseHeaderVersion(v);
        Message header = request ? new RequestHeaderData(acc, hv) : new ResponseHeaderData(acc, hv);
        ApiMessageType t = ApiMessageType.fromApiKey(key.id);
        ApiMessage body = request ? t.newRequest() : t.newResponse();
        body.read(acc, v);
        if (acc.remaining() != 0) throw new IOException(file + ": " + acc.remaining() + " trailing bytes");
        byte[] again = concat(serialize(header, hv), serialize(body, v));
        if (!Arrays.equals(again, bytes)) throw new IOException(file + ": Kafka does not re-encode it identically");
        ObjectNode o = NF.objectNode();
        o.put("headerVersion", hv);
        o.set("header", toJson(header, hv));
        o.set("body", toJson(body, v));
        Path json = Path.of(file.toString().replace(".bin", ".json"));
        Files.writeString(json, MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(o) + "\n");
    }

    static JsonNode toJson(Message m, short v) throws Exception {
        Class<?> conv = Class.forName(m.getClass().getName() + "JsonConverter");
        return (JsonNode) conv.getMethod("write", m.getClass(), short.class, boolean.class).invoke(null, m, v, false);
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
