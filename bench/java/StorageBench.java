// The Java side of `make bench` (bench/storage.rs runs it, one phase per JVM): Kafka's own
// metadata log, org.apache.kafka.raft.internals.KafkaRaftLog as KafkaRaftClient drives it, over
// the same workload as kraftd. Compiled with javac against target/compat/kafka-<v>/classpath.txt.
//
// Each phase prints one JSON object on stdout; progress goes to stderr.
//
//   append  <partition dir> <records per batch> <record bytes> <warm-up batches> <batches> <max secs>
//           appendAsLeader + flush(false) after every batch, as KafkaRaftClient.flushLeaderLog does
//   write   <partition dir> <records per batch> <record bytes> <megabytes>
//           appends about <megabytes> without fsync, flushes once, and exits without close()
//           (a process crash after the flush)
//   recover <partition dir> <read max bytes>
//           createLog (recovery of every segment: Java treats the metadata log as uncleanly shut
//           down), then reads the whole log with read(offset, UNCOMMITTED, max bytes), copying
//           each fetch into a heap buffer and walking its batch headers
import java.io.File;
import java.nio.ByteBuffer;
import java.util.Properties;
import java.util.Random;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.raft.Isolation;
import org.apache.kafka.raft.LogFetchInfo;
import org.apache.kafka.raft.MetadataLogConfig;
import org.apache.kafka.raft.internals.KafkaRaftLog;
import org.apache.kafka.server.util.KafkaScheduler;

public class StorageBench {
    static final int EPOCH = 1;
    static final int NODE_ID = 1;

    public static void main(String[] args) throws Exception {
        String phase = args[0];
        File dir = new File(args[1]);
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "bench-scheduler-");
        scheduler.startup();
        String json;
        switch (phase) {
            case "append":
                json = append(scheduler, dir, Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                        Integer.parseInt(args[4]), Integer.parseInt(args[5]), Double.parseDouble(args[6]));
                break;
            case "write":
                json = write(scheduler, dir, Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                        Long.parseLong(args[4]));
                break;
            case "recover":
                json = recover(scheduler, dir, Integer.parseInt(args[2]));
                break;
            default:
                throw new IllegalArgumentException("unknown phase " + phase);
        }
        System.out.println(json);
        System.out.flush();
        // No close(): the write phase simulates a crash, and the others need no clean shutdown.
        Runtime.getRuntime().halt(0);
    }

    static KafkaRaftLog open(KafkaScheduler scheduler, File dir) throws Exception {
        Properties props = new Properties();
        props.put(MetadataLogConfig.METADATA_LOG_DIR_CONFIG, dir.getParentFile().getAbsolutePath());
        MetadataLogConfig config = new MetadataLogConfig(new AbstractConfig(MetadataLogConfig.CONFIG_DEF, props, false));
        return KafkaRaftLog.createLog(new TopicPartition("__cluster_metadata", 0), Uuid.METADATA_TOPIC_ID,
                dir, Time.SYSTEM, scheduler, config, NODE_ID);
    }

    /** One batch of `count` records with `bytes`-byte values (null keys, as metadata records). */
    static ByteBuffer template(int count, int bytes) {
        Random rnd = new Random(42);
        long now = System.currentTimeMillis();
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            byte[] value = new byte[bytes];
            rnd.nextBytes(value);
            records[i] = new SimpleRecord(now, null, value);
        }
        return MemoryRecords.withRecords(0L, Compression.NONE, EPOCH, records).buffer();
    }

    /**
     * A fresh copy of the template at `baseOffset`, as KafkaRaftClient's accumulator builds batches
     * with their final offsets (the raft leader append does not assign them). The base offset is
     * outside the CRC.
     */
    static MemoryRecords copy(ByteBuffer template, long baseOffset) {
        ByteBuffer b = ByteBuffer.allocate(template.remaining());
        b.put(template.duplicate());
        b.flip();
        b.putLong(0, baseOffset);
        return MemoryRecords.readableRecords(b);
    }

    static String append(KafkaScheduler scheduler, File dir, int perBatch, int recordBytes, int warmup,
                         int batches, double maxSecs) throws Exception {
        KafkaRaftLog log = open(scheduler, dir);
        log.initializeLeaderEpoch(EPOCH);
        ByteBuffer template = template(perBatch, recordBytes);
        int batchBytes = template.remaining();
        for (int i = 0; i < warmup; i++) {
            log.appendAsLeader(copy(template, log.endOffset().offset()), EPOCH);
            log.flush(false);
        }
        long start = System.nanoTime();
        long deadline = start + (long) (maxSecs * 1e9);
        long nextReport = start + 5_000_000_000L;
        int done = 0;
        while (done < batches) {
            log.appendAsLeader(copy(template, log.endOffset().offset()), EPOCH);
            log.flush(false);
            done++;
            if ((done & 63) == 0) {
                long now = System.nanoTime();
                if (now >= deadline) break;
                if (now >= nextReport) {
                    System.err.printf("  java append: %d/%d batches%n", done, batches);
                    nextReport = now + 5_000_000_000L;
                }
            }
        }
        double secs = (System.nanoTime() - start) / 1e9;
        return String.format("{\"batches\":%d,\"batch_bytes\":%d,\"bytes\":%d,\"secs\":%.6f,\"end_offset\":%d}",
                done, batchBytes, (long) done * batchBytes, secs, log.endOffset().offset());
    }

    static String write(KafkaScheduler scheduler, File dir, int perBatch, int recordBytes, long megabytes)
            throws Exception {
        KafkaRaftLog log = open(scheduler, dir);
        log.initializeLeaderEpoch(EPOCH);
        ByteBuffer template = template(perBatch, recordBytes);
        long target = megabytes << 20;
        long written = 0;
        long start = System.nanoTime();
        long nextReport = start + 5_000_000_000L;
        while (written < target) {
            MemoryRecords r = copy(template, log.endOffset().offset());
            written += r.sizeInBytes();
            log.appendAsLeader(r, EPOCH);
            long now = System.nanoTime();
            if (now >= nextReport) {
                System.err.printf("  java write: %d/%d MiB%n", written >> 20, megabytes);
                nextReport = now + 5_000_000_000L;
            }
        }
        log.flush(true);
        double secs = (System.nanoTime() - start) / 1e9;
        return String.format("{\"bytes\":%d,\"secs\":%.6f,\"end_offset\":%d}", written, secs,
                log.endOffset().offset());
    }

    static String recover(KafkaScheduler scheduler, File dir, int maxBytes) throws Exception {
        long t0 = System.nanoTime();
        KafkaRaftLog log = open(scheduler, dir);
        double openSecs = (System.nanoTime() - t0) / 1e9;
        long end = log.endOffset().offset();
        System.err.printf("  java recover: opened in %.3f s, end offset %d; reading%n", openSecs, end);
        ByteBuffer buf = ByteBuffer.allocate(maxBytes + (8 << 20));
        long offset = log.startOffset();
        long bytes = 0;
        long batches = 0;
        long t1 = System.nanoTime();
        while (offset < end) {
            LogFetchInfo info = log.read(offset, Isolation.UNCOMMITTED, maxBytes);
            Records records = info.records;
            int size = records.sizeInBytes();
            if (size == 0) throw new IllegalStateException("empty read at offset " + offset);
            if (buf.capacity() < size) buf = ByteBuffer.allocate(size);
            buf.clear();
            buf.limit(size); // readInto fills the buffer, past the slice's end

            if (records instanceof FileRecords) {
                ((FileRecords) records).readInto(buf, 0);
            } else {
                buf.put(((MemoryRecords) records).buffer().duplicate());
                buf.flip();
            }
            long next = offset;
            for (MutableRecordBatch b : MemoryRecords.readableRecords(buf).batches()) {
                next = b.nextOffset();
                batches++;
            }
            bytes += size;
            offset = next;
        }
        double readSecs = (System.nanoTime() - t1) / 1e9;
        return String.format("{\"open_secs\":%.6f,\"end_offset\":%d,\"read_bytes\":%d,\"read_batches\":%d,\"read_secs\":%.6f}",
                openSecs, end, bytes, batches, readSecs);
    }
}
