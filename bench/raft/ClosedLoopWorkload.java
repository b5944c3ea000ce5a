// Closed-loop raft workload for bench/raft (TestRaftServerProbe --closed-loop N): while this node
// leads, keep exactly N records appended and not yet committed; each commit frees room for the
// next appends. TestRaftServer's own generator is open loop only, so this drives the same
// KafkaRaftClient through its public RaftClient API (prepareAppend / schedulePreparedAppend, one
// record of `recordSize` zero bytes per call, as TestRaftServer appends) and times each record
// from its append to the handleCommit that delivers it, in µs (System.nanoTime).
//
// Threads: handleCommit and handleLeaderChange run on the raft thread and only enqueue; a
// generator thread of its own appends, matches commits to its pending offsets and keeps the
// interval's histogram, which the probe drains once per report interval.
import java.util.ArrayDeque;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.BatchReader;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.RaftClient;
import org.apache.kafka.snapshot.SnapshotReader;

final class ClosedLoopWorkload implements RaftClient.Listener<byte[]> {
    /** A committed batch of some epoch, seen at `nanos`; or a leader change when `leader` is set. */
    private record Event(int epoch, long lastOffset, long nanos, LeaderAndEpoch leader) {}

    /** One report interval's commits: µs buckets (3 significant digits) and record count. */
    static final class Interval {
        final TreeMap<Long, Long> micros = new TreeMap<>();
        long records;
    }

    private final RaftClient<byte[]> client;
    private final int nodeId;
    private final int window;
    private final byte[] payload;
    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private Interval interval = new Interval();

    ClosedLoopWorkload(RaftClient<byte[]> client, int nodeId, int window, int recordSize) {
        this.client = client;
        this.nodeId = nodeId;
        this.window = window;
        this.payload = new byte[recordSize];
    }

    /** The same bucketing as kraftd's: µs rounded down to 3 significant digits. */
    static long bucket(long micros) {
        long scale = 1;
        while (micros / scale >= 1000) scale *= 10;
        return micros / scale * scale;
    }

    synchronized Interval drain() {
        Interval out = interval;
        interval = new Interval();
        return out;
    }

    private synchronized void record(long micros) {
        interval.micros.merge(bucket(micros), 1L, Long::sum);
        interval.records++;
    }

    void start() {
        client.register(this);
        Thread t = new Thread(this::run, "closed-loop-workload");
        t.setDaemon(true);
        t.start();
    }

    private void run() {
        int epoch = -1;                                   // the epoch this node leads, or -1
        ArrayDeque<long[]> pending = new ArrayDeque<>();  // {offset, append nanos}, ascending
        while (true) {
            Event e;
            try {
                // While leading with room in the window, do not wait long: append first.
                e = events.poll(epoch >= 0 && pending.size() < window ? 0 : 100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ie) {
                return;
            }
            if (e != null && e.leader() != null) {
                epoch = e.leader().isLeader(nodeId) ? e.leader().epoch() : -1;
                pending.clear();
            } else if (e != null && e.epoch() == epoch) {
                while (!pending.isEmpty() && pending.peekFirst()[0] <= e.lastOffset()) {
                    record((e.nanos() - pending.pollFirst()[1]) / 1000);
                }
            }
            if (epoch < 0) continue;
            boolean appended = false;
            try {
                while (pending.size() < window) {
                    long now = System.nanoTime();
                    long offset = client.prepareAppend(epoch, List.of(payload));
                    pending.addLast(new long[] {offset, now});
                    appended = true;
                }
            } catch (IllegalStateException full) {
                // The accumulator holds 10 batches at most: wait for the raft thread to drain them.
                sleepQuietly();
            } catch (RuntimeException notLeader) {
                epoch = -1;                               // NotLeaderException: wait for the next leader change
                pending.clear();
            }
            if (appended) client.schedulePreparedAppend();
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException ignored) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void handleCommit(BatchReader<byte[]> reader) {
        long now = System.nanoTime();
        try (reader) {
            while (reader.hasNext()) {
                Batch<byte[]> b = reader.next();
                events.add(new Event(b.epoch(), b.lastOffset(), now, null));
            }
        }
    }

    @Override
    public void handleLoadSnapshot(SnapshotReader<byte[]> reader) {
        reader.close();
    }

    @Override
    public void handleLoadBootstrap(SnapshotReader<byte[]> reader) {
        reader.close();
    }

    @Override
    public void handleLeaderChange(LeaderAndEpoch leader) {
        events.add(new Event(-1, -1, System.nanoTime(), leader));
    }
}
