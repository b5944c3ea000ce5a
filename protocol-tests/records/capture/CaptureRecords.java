// Captures record-batch golden vectors from Apache Kafka's own record code.
//
//   java -cp <kafka classpath>:<dir of this class> CaptureRecords build <out dir> <schema vectors dir>
//   java -cp ... CaptureRecords describe <out dir> <name> <file> <description>
//
// `build` writes <out dir>/<name>.bin files made by Kafka's MemoryRecords / MemoryRecordsBuilder
// (data and control batches, every compression type) and by the raft layer's BatchBuilder with
// MetadataRecordSerde (metadata batches, as a KRaft node writes them), plus <out dir>/<name>.json:
// what Kafka's own reader (MemoryRecords.readableRecords(...).batches(), ensureValid, the record
// iterator, ControlRecordUtils, MetadataRecordSerde, the generated JSON converters) sees in them.
// `describe` adds a .json for a file written elsewhere (a real segment or checkpoint).
// manifest.json lists the vectors and Kafka's own tables (MetadataRecordType, ControlRecordType).
// Nothing here encodes a batch by hand: every byte is Kafka's.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.KRaftVersionRecordJsonConverter;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.LeaderChangeMessageJsonConverter;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotFooterRecordJsonConverter;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecordJsonConverter;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.message.VotersRecordJsonConverter;
import org.apache.kafka.common.metadata.MetadataJsonConverters;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.ControlRecordUtils;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.raft.internals.BatchBuilder;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public class CaptureRecords {
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final HexFormat HEX = HexFormat.of();
    static final long T0 = 1700000000000L;

    static Path out;
    static final ArrayNode VECTORS = F.arrayNode();

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "build" -> {
                out = Path.of(args[1]);
                Files.createDirectories(out);
                build(Path.of(args[2]));
                writeManifest();
            }
            case "describe" -> {
                out = Path.of(args[1]);
                byte[] bytes = Files.readAllBytes(Path.of(args[3]));
                save(args[2], args[4], "metadata", ByteBuffer.wrap(bytes));
                ObjectNode manifest = (ObjectNode) MAPPER.readTree(out.resolve("manifest.json").toFile());
                ArrayNode list = (ArrayNode) manifest.get("vectors");
                for (int i = list.size() - 1; i >= 0; i--) {
                    if (list.get(i).get("name").asText().equals(args[2])) list.remove(i);
                }
                list.add(VECTORS.get(0));
                MAPPER.writeValue(out.resolve("manifest.json").toFile(), manifest);
            }
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    // ---------------------------------------------------------------- the vectors

    static void build(Path schemaVectors) throws Exception {
        // Data batches (opaque values), uncompressed.
        save("data-two-records", "MemoryRecords.withRecords(NONE, 2 records), base offset 0", "raw",
            MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(T0, null, bytes("hello")),
                new SimpleRecord(T0 + 1, bytes("k"), bytes("world"))).buffer());
        save("data-keys-headers", "MemoryRecordsBuilder CreateTime: null/empty keys and values, headers, long values, out-of-order and -1 timestamps; base offset 1234567890123, epoch 42",
            "raw", builder(Compression.NONE, TimestampType.CREATE_TIME, 1234567890123L, 42, b -> mixedRecords(b)));
        save("data-log-append-time", "LogAppendTime batch (logAppendTime T0+5000)", "raw",
            buildWith(Compression.NONE, TimestampType.LOG_APPEND_TIME, 7L, T0 + 5000, -1L, (short) -1, -1, false, false, 3, -1L,
                b -> {
                    b.append(T0, bytes("a"), bytes("1"));
                    b.append(T0 + 10, bytes("b"), bytes("2"));
                }));
        save("data-idempotent", "withIdempotentRecords: producer id 123456789, epoch 7, base sequence 42", "raw",
            MemoryRecords.withIdempotentRecords((byte) 2, 100L, Compression.NONE, 123456789L, (short) 7, 42, 3,
                new SimpleRecord(T0, bytes("x")), new SimpleRecord(T0 + 2, bytes("y"))).buffer());
        save("data-transactional", "withTransactionalRecords: transactional bit set", "raw",
            MemoryRecords.withTransactionalRecords((byte) 2, 200L, Compression.NONE, 987654321L, (short) 1, 0, 9,
                new SimpleRecord(T0, bytes("t1")), new SimpleRecord(T0, bytes("t2"))).buffer());
        save("data-offset-gaps", "appendWithOffset at base+0, base+3, base+10 (as after compaction)", "raw",
            builder(Compression.NONE, TimestampType.CREATE_TIME, 50L, 1, b -> {
                b.appendWithOffset(50L, T0, bytes("k0"), bytes("v0"));
                b.appendWithOffset(53L, T0 + 3, bytes("k3"), bytes("v3"));
                b.appendWithOffset(60L, T0 + 1, bytes("k10"), bytes("v10"));
            }));
        save("data-delete-horizon", "MemoryRecordsBuilder with deleteHorizonMs = T0+86400000 (bit 6; base timestamp is the horizon)", "raw",
            buildWith(Compression.NONE, TimestampType.CREATE_TIME, 0L, -1L, -1L, (short) -1, -1, false, false, 4, T0 + 86400000L,
                b -> {
                    b.append(T0, bytes("k"), (byte[]) null);
                    b.append(T0 + 5, bytes("k2"), bytes("v"));
                }));
        save("data-many-records", "300 small records (multi-byte offset deltas), base offset 2^40", "raw",
            builder(Compression.NONE, TimestampType.CREATE_TIME, 1L << 40, 2, b -> {
                for (int i = 0; i < 300; i++) b.append(T0 + i, (byte[]) null, bytes("value-" + i));
            }));

        // Control batches.
        save("control-leader-change", "withLeaderChangeMessage: leader 1, epoch 1, voters {1,2,3}, granted by {1,2} (spec 6.5(a))", "raw",
            MemoryRecords.withLeaderChangeMessage(0L, T0, 1, ByteBuffer.allocate(256),
                new LeaderChangeMessage().setVersion((short) 0).setLeaderId(1)
                    .setVoters(voters(1, 2, 3)).setGrantingVoters(voters(1, 2))));
        save("control-snapshot-header", "withSnapshotHeaderRecord", "raw",
            MemoryRecords.withSnapshotHeaderRecord(0L, T0, 5, ByteBuffer.allocate(256),
                new SnapshotHeaderRecord().setVersion((short) 0).setLastContainedLogTimestamp(T0 - 1)));
        save("control-snapshot-footer", "withSnapshotFooterRecord", "raw",
            MemoryRecords.withSnapshotFooterRecord(10L, T0, 5, ByteBuffer.allocate(256),
                new SnapshotFooterRecord().setVersion((short) 0)));
        save("control-kraft-version", "withKRaftVersionRecord(1)", "raw",
            MemoryRecords.withKRaftVersionRecord(3L, T0, 2, ByteBuffer.allocate(256),
                new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1)));
        save("control-voters", "withVotersRecord: 2 voters, 2 endpoints each", "raw",
            MemoryRecords.withVotersRecord(4L, T0, 2, ByteBuffer.allocate(1024), votersRecord()));
        ByteBuffer checkpoint = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder cb = new MemoryRecordsBuilder(checkpoint, RecordBatch.CURRENT_MAGIC_VALUE, Compression.NONE,
            TimestampType.CREATE_TIME, 0L, T0, -1L, (short) -1, -1, false, true, 0, checkpoint.capacity());
        cb.appendSnapshotHeaderMessage(T0, new SnapshotHeaderRecord().setVersion((short) 0).setLastContainedLogTimestamp(T0));
        cb.appendKRaftVersionMessage(T0, new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1));
        cb.appendVotersMessage(T0, standaloneVoters());
        ByteBuffer first = cb.build().buffer();
        ByteBuffer footer = MemoryRecords.withSnapshotFooterRecord(3L, T0, 0, ByteBuffer.allocate(256),
            new SnapshotFooterRecord().setVersion((short) 0)).buffer();
        save("control-bootstrap-checkpoint", "a --standalone bootstrap checkpoint built with MemoryRecordsBuilder (spec 6.5(b))", "raw",
            concat(first, footer));
        save("control-commit", "withEndTransactionMarker(COMMIT, coordinator epoch 17)", "raw",
            MemoryRecords.withEndTransactionMarker(300L, T0, 6, 4242L, (short) 3,
                new EndTransactionMarker(ControlRecordType.COMMIT, 17)).buffer());
        save("control-abort", "withEndTransactionMarker(ABORT, coordinator epoch 0)", "raw",
            MemoryRecords.withEndTransactionMarker(301L, T0, 6, 4242L, (short) 3,
                new EndTransactionMarker(ControlRecordType.ABORT, 0)).buffer());

        // Metadata batches written as the raft layer writes them.
        List<ApiMessageAndVersion> all = metadataRecords(schemaVectors);
        save("metadata-all-types", "raft BatchBuilder + MetadataRecordSerde: every metadata record vector (all types, all versions, incl. unknown tags), 16 per batch, epoch 5",
            "metadata", metadataBatches(all, Compression.NONE, 0L, 5, 16));

        // Compressed batches, every codec; Kafka writes them, Kafka's reader describes them.
        Compression[] codecs = {
            Compression.gzip().build(), Compression.snappy().build(), Compression.lz4().build(), Compression.zstd().build()
        };
        for (Compression c : codecs) {
            String n = c.type().name;
            save("compressed-" + n + "-small", n + ": the data-keys-headers records", "raw",
                builder(c, TimestampType.CREATE_TIME, 1234567890123L, 42, b -> mixedRecords(b)));
            save("compressed-" + n + "-large", n + ": 250 records of ~400 bytes, 100 KB (several blocks/chunks)", "raw",
                builder(c, TimestampType.CREATE_TIME, 0L, 1, CaptureRecords::largeRecords));
            save("compressed-" + n + "-metadata", n + ": raft BatchBuilder metadata batches", "metadata",
                metadataBatches(all.subList(0, 40), c, 1000L, 7, 20));
        }
        save("compressed-gzip-level9", "gzip level 9", "raw",
            builder(Compression.gzip().level(9).build(), TimestampType.CREATE_TIME, 0L, 1, CaptureRecords::largeRecords));
        save("compressed-lz4-level17", "lz4 level 17 (LZ4 HC)", "raw",
            builder(Compression.lz4().level(17).build(), TimestampType.CREATE_TIME, 0L, 1, CaptureRecords::largeRecords));
        save("compressed-zstd-level22", "zstd level 22", "raw",
            builder(Compression.zstd().level(22).build(), TimestampType.CREATE_TIME, 0L, 1, CaptureRecords::largeRecords));
        save("compressed-zstd-level-1", "zstd level -1 (fast)", "raw",
            builder(Compression.zstd().level(-1).build(), TimestampType.CREATE_TIME, 0L, 1, CaptureRecords::largeRecords));
        save("compressed-snappy-control", "snappy-compressed control batch (LeaderChange)", "raw",
            buildWith(Compression.snappy().build(), TimestampType.CREATE_TIME, 9L, T0, -1L, (short) -1, -1, false, true, 1, -1L,
                b -> b.appendLeaderChangeMessage(T0, new LeaderChangeMessage().setLeaderId(2).setVoters(voters(1, 2, 3)).setGrantingVoters(voters(2, 3)))));

        // A segment-like file: several kinds of batches back to back, contiguous offsets.
        List<ByteBuffer> parts = new ArrayList<>();
        parts.add(MemoryRecords.withLeaderChangeMessage(0L, T0, 1, ByteBuffer.allocate(256),
            new LeaderChangeMessage().setLeaderId(1).setVoters(voters(1)).setGrantingVoters(voters(1))).buffer());
        parts.add(metadataBatches(all.subList(0, 10), Compression.NONE, 1L, 1, 4));
        parts.add(metadataBatches(all.subList(10, 20), Compression.lz4().build(), 11L, 1, 10));
        parts.add(MemoryRecords.withLeaderChangeMessage(21L, T0 + 100, 2, ByteBuffer.allocate(256),
            new LeaderChangeMessage().setLeaderId(1).setVoters(voters(1)).setGrantingVoters(voters(1))).buffer());
        parts.add(metadataBatches(all.subList(20, 23), Compression.NONE, 22L, 2, 3));
        save("segment-mixed", "a segment: LeaderChange, metadata (none, lz4), LeaderChange, metadata; offsets 0..24", "metadata",
            concat(parts.toArray(new ByteBuffer[0])));
    }

    static void mixedRecords(MemoryRecordsBuilder b) {
        Header[] headers = {
            new RecordHeader("h1", bytes("v1")),
            new RecordHeader("", null),
            new RecordHeader("ключ-🦀", new byte[0]),
        };
        b.append(T0, (byte[]) null, (byte[]) null);
        b.append(T0 + 1, new byte[0], new byte[0]);
        b.append(T0 + 2, bytes("key"), bytes("value"), headers);
        b.append(T0 + 3, bytes("long"), filler(300, 1));
        b.append(T0 - 1000, (byte[]) null, filler(20000, 2));
        b.append(-1L, bytes("no-timestamp"), bytes("v"));
        b.append(T0 + 4, bytes("k"), (byte[]) null, new Header[] {new RecordHeader("only", bytes("h"))});
    }

    static void largeRecords(MemoryRecordsBuilder b) {
        for (int i = 0; i < 250; i++) {
            String v = "record " + i + " of a large batch: the quick brown fox jumps over the lazy dog " + (i * 7919 % 1000)
                + " lorem ipsum dolor sit amet " + new String(filler(200 + i % 100, i % 10), StandardCharsets.US_ASCII);
            b.append(T0 + i, bytes("key-" + (i % 50)), bytes(v));
        }
    }

    // ---------------------------------------------------------------- builders

    interface Body {
        void accept(MemoryRecordsBuilder b) throws Exception;
    }

    static ByteBuffer builder(Compression c, TimestampType tt, long baseOffset, int epoch, Body body) throws Exception {
        return buildWith(c, tt, baseOffset, -1L, -1L, (short) -1, -1, false, false, epoch, -1L, body);
    }

    static ByteBuffer buildWith(Compression c, TimestampType tt, long baseOffset, long logAppendTime, long pid, short pepoch,
                                int seq, boolean txn, boolean control, int epoch, long deleteHorizon, Body body) throws Exception {
        ByteBufferOutputStream stream = new ByteBufferOutputStream(1 << 20);
        MemoryRecordsBuilder b = new MemoryRecordsBuilder(stream, RecordBatch.CURRENT_MAGIC_VALUE, c, tt, baseOffset,
            logAppendTime, pid, pepoch, seq, txn, control, epoch, Integer.MAX_VALUE, deleteHorizon);
        body.accept(b);
        return b.build().buffer();
    }

    static ByteBuffer metadataBatches(List<ApiMessageAndVersion> records, Compression c, long baseOffset, int epoch, int perBatch) {
        List<ByteBuffer> batches = new ArrayList<>();
        long offset = baseOffset;
        for (int i = 0; i < records.size(); i += perBatch) {
            List<ApiMessageAndVersion> chunk = records.subList(i, Math.min(records.size(), i + perBatch));
            BatchBuilder<ApiMessageAndVersion> bb = new BatchBuilder<>(ByteBuffer.allocate(1 << 16), MetadataRecordSerde.INSTANCE,
                c, offset, T0 + offset, epoch, 8 << 20);
            ObjectSerializationCache cache = new ObjectSerializationCache();
            for (ApiMessageAndVersion r : chunk) bb.appendRecord(r, cache);
            batches.add(bb.build().buffer());
            offset += chunk.size();
        }
        return concat(batches.toArray(new ByteBuffer[0]));
    }

    /** Every metadata-record schema vector (protocol-tests/vectors/<Record>/v<N>*.bin), parsed by Kafka. */
    static List<ApiMessageAndVersion> metadataRecords(Path dir) throws Exception {
        List<ApiMessageAndVersion> list = new ArrayList<>();
        for (MetadataRecordType t : MetadataRecordType.values()) {
            ApiMessage proto = t.newMetadataRecord();
            String name = proto.getClass().getSimpleName();
            for (short v = t.lowestSupportedVersion(); v <= t.highestSupportedVersion(); v++) {
                for (String variant : new String[] {"", "-defaults", "-nulls", "-unknown-tags"}) {
                    Path p = dir.resolve(name).resolve("v" + v + variant + ".bin");
                    if (!Files.exists(p)) continue;
                    ApiMessage m = t.newMetadataRecord();
                    m.read(new ByteBufferAccessor(ByteBuffer.wrap(Files.readAllBytes(p))), v);
                    list.add(new ApiMessageAndVersion(m, v));
                }
            }
        }
        if (list.size() < 27) throw new IllegalStateException("only " + list.size() + " metadata vectors under " + dir);
        return list;
    }

    static List<LeaderChangeMessage.Voter> voters(int... ids) {
        List<LeaderChangeMessage.Voter> l = new ArrayList<>();
        for (int id : ids) l.add(new LeaderChangeMessage.Voter().setVoterId(id));
        return l;
    }

    static VotersRecord votersRecord() {
        List<VotersRecord.Voter> vs = new ArrayList<>();
        Random r = new Random(20260404);
        for (int id = 1; id <= 2; id++) {
            VotersRecord.EndpointCollection eps = new VotersRecord.EndpointCollection();
            eps.add(new VotersRecord.Endpoint().setName("CONTROLLER").setHost("host-" + id + ".example").setPort(9093));
            eps.add(new VotersRecord.Endpoint().setName("SSL").setHost("::1").setPort(65535));
            vs.add(new VotersRecord.Voter().setVoterId(id).setVoterDirectoryId(new Uuid(r.nextLong(), r.nextLong()))
                .setEndpoints(eps)
                .setKRaftVersionFeature(new VotersRecord.KRaftVersionFeature().setMinSupportedVersion((short) 0).setMaxSupportedVersion((short) 1)));
        }
        return new VotersRecord().setVersion((short) 0).setVoters(vs);
    }

    static VotersRecord standaloneVoters() {
        VotersRecord.EndpointCollection eps = new VotersRecord.EndpointCollection();
        eps.add(new VotersRecord.Endpoint().setName("CONTROLLER").setHost("localhost").setPort(9093));
        return new VotersRecord().setVersion((short) 0).setVoters(List.of(new VotersRecord.Voter().setVoterId(1)
            .setVoterDirectoryId(Uuid.fromString("J8aAPcfLQt2bqs1JT_rMgQ")).setEndpoints(eps)
            .setKRaftVersionFeature(new VotersRecord.KRaftVersionFeature().setMinSupportedVersion((short) 0).setMaxSupportedVersion((short) 1))));
    }

    // ---------------------------------------------------------------- describing with Kafka's reader

    static void save(String name, String description, String valueFormat, MemoryRecords records) throws Exception {
        save(name, description, valueFormat, records.buffer());
    }

    static void save(String name, String description, String valueFormat, ByteBuffer buffer) throws Exception {
        ByteBuffer copy = buffer.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        Files.write(out.resolve(name + ".bin"), bytes);
        ObjectNode doc = F.objectNode();
        doc.put("name", name);
        doc.put("description", description);
        doc.put("valueFormat", valueFormat);
        doc.put("size", bytes.length);
        ArrayNode batches = doc.putArray("batches");
        int position = 0;
        for (MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches()) {
            batch.ensureValid();
            ObjectNode b = batches.addObject();
            b.put("position", position);
            b.put("sizeInBytes", batch.sizeInBytes());
            b.put("baseOffset", batch.baseOffset());
            b.put("lastOffset", batch.lastOffset());
            b.put("partitionLeaderEpoch", batch.partitionLeaderEpoch());
            b.put("magic", batch.magic());
            b.put("crc", batch.checksum());
            b.put("compression", batch.compressionType().name);
            b.put("timestampType", batch.timestampType().name);
            b.put("isTransactional", batch.isTransactional());
            b.put("isControlBatch", batch.isControlBatch());
            b.put("hasDeleteHorizon", batch.deleteHorizonMs().isPresent());
            b.put("baseTimestamp", ((org.apache.kafka.common.record.internal.DefaultRecordBatch) batch).baseTimestamp());
            b.put("maxTimestamp", batch.maxTimestamp());
            b.put("producerId", batch.producerId());
            b.put("producerEpoch", batch.producerEpoch());
            b.put("baseSequence", batch.baseSequence());
            b.put("countOrNull", batch.countOrNull());
            ArrayNode records = b.putArray("records");
            for (Record rec : batch) {
                ObjectNode r = records.addObject();
                r.put("offset", rec.offset());
                r.put("timestamp", rec.timestamp());
                r.put("sizeInBytes", rec.sizeInBytes());
                putBytes(r, "key", rec.key());
                putBytes(r, "value", rec.value());
                ArrayNode hs = r.putArray("headers");
                for (Header h : rec.headers()) {
                    ObjectNode ho = hs.addObject();
                    ho.put("key", h.key());
                    ho.put("value", h.value() == null ? null : HEX.formatHex(h.value()));
                }
                if (batch.isControlBatch()) {
                    r.set("control", describeControl(rec));
                } else if (valueFormat.equals("metadata")) {
                    ByteBuffer v = rec.value();
                    ApiMessageAndVersion mv = MetadataRecordSerde.INSTANCE.read(new ByteBufferAccessor(v.duplicate()), v.remaining());
                    ObjectNode m = r.putObject("metadata");
                    m.put("type", mv.message().apiKey());
                    m.put("typeName", MetadataRecordType.fromId(mv.message().apiKey()).toString());
                    m.put("version", mv.version());
                    m.set("json", MetadataJsonConverters.writeJson(mv.message(), mv.version()));
                }
            }
            position += batch.sizeInBytes();
        }
        if (position != bytes.length) throw new IllegalStateException(name + ": Kafka read " + position + " of " + bytes.length + " bytes");
        MAPPER.writeValue(out.resolve(name + ".json").toFile(), doc);
        ObjectNode entry = F.objectNode();
        entry.put("name", name);
        entry.put("description", description);
        entry.put("valueFormat", valueFormat);
        entry.put("size", bytes.length);
        entry.put("batches", batches.size());
        VECTORS.add(entry);
        System.err.println("CaptureRecords: " + name + " (" + bytes.length + " bytes, " + batches.size() + " batches)");
    }

    static ObjectNode describeControl(Record rec) {
        ObjectNode c = F.objectNode();
        ControlRecordType type = ControlRecordType.parse(rec.key());
        c.put("type", type.type());
        c.put("typeName", type.name());
        JsonNode json = switch (type) {
            case LEADER_CHANGE -> LeaderChangeMessageJsonConverter.write(ControlRecordUtils.deserializeLeaderChangeMessage(rec), (short) 0);
            case SNAPSHOT_HEADER -> SnapshotHeaderRecordJsonConverter.write(ControlRecordUtils.deserializeSnapshotHeaderRecord(rec), (short) 0);
            case SNAPSHOT_FOOTER -> SnapshotFooterRecordJsonConverter.write(ControlRecordUtils.deserializeSnapshotFooterRecord(rec), (short) 0);
            case KRAFT_VERSION -> KRaftVersionRecordJsonConverter.write(ControlRecordUtils.deserializeKRaftVersionRecord(rec), (short) 0);
            case KRAFT_VOTERS -> VotersRecordJsonConverter.write(ControlRecordUtils.deserializeVotersRecord(rec), (short) 0);
            case ABORT, COMMIT -> {
                ObjectNode m = F.objectNode();
                m.put("coordinatorEpoch", EndTransactionMarker.deserialize(rec).coordinatorEpoch());
                yield m;
            }
            default -> F.nullNode();
        };
        c.set("json", json);
        return c;
    }

    static void writeManifest() throws Exception {
        ObjectNode m = F.objectNode();
        m.put("kafkaVersion", org.apache.kafka.common.utils.internals.AppInfoParser.getVersion());
        m.put("how", "protocol-tests/records/capture/capture.sh (CaptureRecords.java): bytes written by Kafka's own record builders");
        ArrayNode types = m.putArray("metadataRecordTypes");
        for (MetadataRecordType t : MetadataRecordType.values()) {
            ObjectNode o = types.addObject();
            o.put("id", t.id());
            o.put("name", t.toString());
            o.put("class", t.newMetadataRecord().getClass().getSimpleName());
            o.put("lowestVersion", t.lowestSupportedVersion());
            o.put("highestVersion", t.highestSupportedVersion());
        }
        ArrayNode ctypes = m.putArray("controlRecordTypes");
        for (ControlRecordType t : ControlRecordType.values()) {
            ObjectNode o = ctypes.addObject();
            o.put("id", t.type());
            o.put("name", t.name());
        }
        m.set("vectors", VECTORS);
        MAPPER.writeValue(out.resolve("manifest.json").toFile(), m);
    }

    // ---------------------------------------------------------------- helpers

    /** Short byte strings as hex; longer ones (> 32 bytes) as size and CRC-32C, to keep the files small. */
    static void putBytes(ObjectNode o, String field, ByteBuffer b) {
        if (b == null || b.remaining() <= 32) {
            o.put(field, hex(b));
            return;
        }
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(b.duplicate());
        ObjectNode d = o.putObject(field);
        d.put("size", b.remaining());
        d.put("crc32c", crc.getValue());
    }

    static String hex(ByteBuffer b) {
        if (b == null) return null;
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return HEX.formatHex(a);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] filler(int n, int seed) {
        byte[] a = new byte[n];
        Random r = new Random(seed);
        for (int i = 0; i < n; i++) a[i] = (byte) ('a' + r.nextInt(26));
        return a;
    }

    static ByteBuffer concat(ByteBuffer... parts) {
        int n = Arrays.stream(parts).mapToInt(ByteBuffer::remaining).sum();
        ByteBuffer all = ByteBuffer.allocate(n);
        for (ByteBuffer p : parts) all.put(p.duplicate());
        all.flip();
        return all;
    }

}
