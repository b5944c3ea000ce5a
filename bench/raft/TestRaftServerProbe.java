// `make bench` (raft part): runs Kafka's own raft benchmark server, kafka.tools.TestRaftServer from the
// pinned jars, unchanged, and adds an observer to its commit-latency sensor so that it reports what the
// driver (bench/raft/raft_bench.py) needs and TestRaftServer does not print: the full latency histogram
// (for p50, p99, p99.9 over exactly the measured window) and the committed record count per interval.
//
// Startup mirrors TestRaftServer.main in Kafka 4.4.0: the same options, `process.roles` forced to
// `controller`, KafkaConfig.fromProps(props, doLog = false), new TestRaftServer(config, directoryId,
// throughput, recordSize), a shutdown hook calling shutdown(), startup(). The workload generator,
// the raft client, its network stack and TestRaftServer's own 5 s "Throughput (bytes/second): ..."
// println are all Kafka's code; this class only reads.
//
// Observer: TestRaftServer's WriteStats records, on the leader, for every committed record of the
// leader's epoch, `commit.latency` (the int latency in ms) and `bytes.committed` (the record size).
// Sensor.add attaches extra stats to those sensors, which Sensor.record then feeds with every value.
//
// Output: one JSON line per --report-interval-ms (default 1000) on stdout while this node is the
// leader, in the format specified in bench/raft/README.md (the same format kraftd prints):
//   {"raft_bench":1,"impl":"java","node_id":3,"leader_epoch":1,"start_ms":..,"end_ms":..,
//    "records":5000,"bytes":1280000,"latency_ms_hist":[[0,12],[1,4980],[2,8]]}
//
// --closed-loop N (N > 0): the records timed are those of ClosedLoopWorkload (N in flight, µs
// resolution, "latency_us_hist" added to the line) instead of TestRaftServer's generator, which
// is unregistered and stopped first: it fails on committed records it did not append.
import java.io.FileInputStream;
import java.io.InputStream;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;

import kafka.server.KafkaConfig;
import kafka.tools.TestRaftServer;

import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MeasurableStat;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.RaftClient;
import org.apache.kafka.server.util.ShutdownableThread;

public final class TestRaftServerProbe {

    /** Exact histogram of integer millisecond latencies, drained once per report interval. */
    static final class LatencyCounts implements MeasurableStat {
        private TreeMap<Long, Long> counts = new TreeMap<>();
        private long records;

        @Override
        public synchronized void record(MetricConfig config, double value, long timeMs) {
            counts.merge((long) value, 1L, Long::sum);
            records++;
        }

        @Override
        public synchronized double measure(MetricConfig config, long now) {
            return records;
        }

        synchronized TreeMap<Long, Long> drain() {
            TreeMap<Long, Long> out = counts;
            counts = new TreeMap<>();
            return out;
        }
    }

    /** Sum of the recorded values (committed payload bytes), drained once per report interval. */
    static final class ByteSum implements MeasurableStat {
        private long bytes;

        @Override
        public synchronized void record(MetricConfig config, double value, long timeMs) {
            bytes += (long) value;
        }

        @Override
        public synchronized double measure(MetricConfig config, long now) {
            return bytes;
        }

        synchronized long drain() {
            long out = bytes;
            bytes = 0;
            return out;
        }
    }

    private static void usage(String message) {
        System.err.println("TestRaftServerProbe: " + message);
        System.err.println("usage: TestRaftServerProbe --config FILE --replica-directory-id UUID"
            + " [--throughput RECORDS_PER_S (5000)] [--record-size BYTES (256)] [--report-interval-ms MS (1000)]"
            + " [--closed-loop IN_FLIGHT (0: off)]");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        String configFile = null;
        String directoryId = null;
        int throughput = 5000;   // TestRaftServer's defaults
        int recordSize = 256;
        long reportIntervalMs = 1000;
        int closedLoop = 0;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) usage("missing value for " + a);
            String v = args[++i];
            switch (a) {
                case "--config": configFile = v; break;
                case "--replica-directory-id": directoryId = v; break;
                case "--throughput": throughput = Integer.parseInt(v); break;
                case "--record-size": recordSize = Integer.parseInt(v); break;
                case "--report-interval-ms": reportIntervalMs = Long.parseLong(v); break;
                case "--closed-loop": closedLoop = Integer.parseInt(v); break;
                default: usage("unknown option " + a);
            }
        }
        if (configFile == null) usage("--config is required");
        if (directoryId == null) usage("--replica-directory-id is required");

        Properties props = new Properties();
        try (InputStream in = new FileInputStream(configFile)) {
            props.load(in);
        }
        props.put("process.roles", "controller");
        KafkaConfig config = KafkaConfig.fromProps(props, false);
        int nodeId = config.nodeId();

        TestRaftServer server = new TestRaftServer(config, Uuid.fromString(directoryId), throughput, recordSize);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.shutdown();
            } finally {
                stopped.countDown();
            }
        }, "raft-shutdown-hook"));
        server.startup();

        // The sensors exist once startup() has built the workload generator (its WriteStats).
        Metrics metrics = server.kafka$tools$TestRaftServer$$metrics();
        Sensor latencySensor = metrics.getSensor("commit.latency");
        Sensor bytesSensor = metrics.getSensor("bytes.committed");
        if (latencySensor == null || bytesSensor == null) {
            throw new IllegalStateException("TestRaftServer has no commit.latency / bytes.committed sensor;"
                + " this probe was written against Kafka 4.4.0's TestRaftServer");
        }
        // -Draftbench.jmx=true (raft_bench.py --scrape): TestRaftServer's Metrics has no reporter, so
        // its raft metrics are invisible to JMX; a JmxReporter under the kafka.server namespace, as a
        // controller registers one, gives the JMX exporter the kafka.server:type=raft-metrics beans.
        if (Boolean.getBoolean("raftbench.jmx")) {
            JmxReporter jmx = new JmxReporter();
            jmx.contextChange(new KafkaMetricsContext("kafka.server"));
            metrics.addReporter(jmx);
        }
        LatencyCounts latency = new LatencyCounts();
        ByteSum bytes = new ByteSum();
        latencySensor.add(new MetricName("commit.latency.probe", "raft-bench", "", java.util.Map.of()), latency);
        bytesSensor.add(new MetricName("bytes.committed.probe", "raft-bench", "", java.util.Map.of()), bytes);

        ClosedLoopWorkload closed = null;
        if (closedLoop > 0) {
            java.lang.reflect.Field field = TestRaftServer.class.getDeclaredField("workloadGenerator");
            field.setAccessible(true);
            Object generator = field.get(server);
            @SuppressWarnings("unchecked")
            RaftClient.Listener<byte[]> listener = (RaftClient.Listener<byte[]>) generator;
            server.raftManager().client().unregister(listener);
            ((ShutdownableThread) generator).shutdown();
            closed = new ClosedLoopWorkload(server.raftManager().client(), nodeId, closedLoop, recordSize);
            closed.start();
        }

        long start = System.currentTimeMillis();
        latency.drain();
        bytes.drain();
        while (!stopped.await(Math.max(1, start + reportIntervalMs - System.currentTimeMillis()),
                java.util.concurrent.TimeUnit.MILLISECONDS)) {
            long end = System.currentTimeMillis();
            TreeMap<Long, Long> hist = latency.drain();
            long byteCount = bytes.drain();
            String micros = "";
            if (closed != null) {
                ClosedLoopWorkload.Interval i = closed.drain();
                hist = new TreeMap<>();
                StringBuilder u = new StringBuilder(",\"latency_us_hist\":[");
                for (var e : i.micros.entrySet()) {
                    if (u.charAt(u.length() - 1) != '[') u.append(',');
                    u.append('[').append(e.getKey()).append(',').append(e.getValue()).append(']');
                    hist.merge(e.getKey() / 1000, e.getValue(), Long::sum);
                }
                micros = u.append(']').toString();
                byteCount = i.records * recordSize;
            }
            LeaderAndEpoch le = server.raftManager().client().leaderAndEpoch();
            long records = 0;
            StringBuilder h = new StringBuilder("[");
            for (var e : hist.entrySet()) {
                if (records > 0) h.append(',');
                h.append('[').append(e.getKey()).append(',').append(e.getValue()).append(']');
                records += e.getValue();
            }
            h.append(']');
            if (le.isLeader(nodeId) || records > 0) {
                System.out.println("{\"raft_bench\":1,\"impl\":\"java\",\"node_id\":" + nodeId
                    + ",\"leader_epoch\":" + le.epoch()
                    + ",\"start_ms\":" + start + ",\"end_ms\":" + end
                    + ",\"records\":" + records + ",\"bytes\":" + byteCount
                    + ",\"latency_ms_hist\":" + h + micros + "}");
            }
            start = end;
        }
    }
}
