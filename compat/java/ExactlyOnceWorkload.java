import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A verifying client workload for compat tests: every acknowledged message must be consumed
 * exactly once.
 *
 * <p>Usage: {@code ExactlyOnceWorkload <bootstrap> <idempotent-count> <transactions>
 * <per-transaction> <messages-per-second>}.
 *
 * <ol>
 *   <li>An idempotent producer (acks=all) sends {@code idempotent-count} values "0".."n-1" to
 *       topic {@code eos-idempotent}, paced, while a transactional producer sends
 *       {@code transactions} transactions of {@code per-transaction} values to
 *       {@code eos-transactional}, aborting every fifth. Progress lines ("acked N") go to
 *       stdout so that a test can act mid-way.
 *   <li>A consumer group ({@code eos-verify}, read_committed) reads both topics to their end
 *       and commits its offsets; the group's committed offsets must equal the end offsets.
 * </ol>
 *
 * <p>The last line is a JSON summary; the exit status is 0 only if nothing was lost,
 * duplicated, read from an aborted transaction or failed on the client.
 */
public class ExactlyOnceWorkload {
    static final String IDEMPOTENT = "eos-idempotent";
    static final String TRANSACTIONAL = "eos-transactional";
    static final String GROUP = "eos-verify";

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int idempotentCount = Integer.parseInt(args[1]);
        int transactions = Integer.parseInt(args[2]);
        int perTransaction = Integer.parseInt(args[3]);
        int rate = Integer.parseInt(args[4]);

        AtomicLong acked = new AtomicLong();
        AtomicLong sendErrors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        Set<Integer> ackedValues = java.util.Collections.synchronizedSet(new HashSet<>());
        Set<Integer> committedTx = java.util.Collections.synchronizedSet(new HashSet<>());
        Set<Integer> abortedTx = java.util.Collections.synchronizedSet(new HashSet<>());

        Thread idempotent = new Thread(() -> {
            try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(bootstrap, null))) {
                long start = System.nanoTime();
                for (int i = 0; i < idempotentCount; i++) {
                    final int v = i;
                    p.send(new ProducerRecord<>(IDEMPOTENT, Integer.toString(v), Integer.toString(v)),
                        (md, e) -> {
                            if (e != null) {
                                sendErrors.incrementAndGet();
                                firstError.compareAndSet(null, e.toString());
                            } else {
                                ackedValues.add(v);
                                long n = acked.incrementAndGet();
                                if (n % 5000 == 0) {
                                    System.out.println("acked " + n);
                                    System.out.flush();
                                }
                            }
                        });
                    pace(start, i + 1, rate);
                }
                p.flush();
            }
        }, "idempotent-producer");

        Thread transactional = new Thread(() -> {
            try (KafkaProducer<String, String> p =
                     new KafkaProducer<>(producerProps(bootstrap, "eos-transactional-1"))) {
                p.initTransactions();
                long start = System.nanoTime();
                int value = 0;
                for (int t = 0; t < transactions; t++) {
                    boolean abort = t % 5 == 4;
                    List<Integer> values = new ArrayList<>();
                    p.beginTransaction();
                    for (int i = 0; i < perTransaction; i++, value++) {
                        p.send(new ProducerRecord<>(TRANSACTIONAL, Integer.toString(value), Integer.toString(value)));
                        values.add(value);
                    }
                    if (abort) {
                        p.abortTransaction();
                        abortedTx.addAll(values);
                    } else {
                        p.commitTransaction();
                        committedTx.addAll(values);
                    }
                    pace(start, value, Math.max(1, rate / 10));
                }
                System.out.println("transactions done " + transactions);
                System.out.flush();
            } catch (Exception e) {
                sendErrors.incrementAndGet();
                firstError.compareAndSet(null, "transactional: " + e);
            }
        }, "transactional-producer");

        idempotent.start();
        transactional.start();
        idempotent.join();
        transactional.join();
        System.out.println("produced: acked " + acked.get() + ", errors " + sendErrors.get());
        System.out.flush();

        // Read both topics to their end as one group, read_committed.
        Map<TopicPartition, Long> ends;
        try (Admin admin = Admin.create(adminProps(bootstrap))) {
            ends = endOffsets(admin);
        }
        Map<Integer, Integer> seenIdempotent = new HashMap<>();
        Map<Integer, Integer> seenTransactional = new HashMap<>();
        Properties c = new Properties();
        c.put("bootstrap.servers", bootstrap);
        c.put("group.id", GROUP);
        c.put("isolation.level", "read_committed");
        c.put("auto.offset.reset", "earliest");
        c.put("enable.auto.commit", "false");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        boolean reachedEnd = false;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(IDEMPOTENT, TRANSACTIONAL));
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    Map<Integer, Integer> seen = r.topic().equals(IDEMPOTENT) ? seenIdempotent : seenTransactional;
                    seen.merge(Integer.parseInt(r.value()), 1, Integer::sum);
                }
                consumer.commitSync();
                if (atEnd(consumer, ends)) {
                    reachedEnd = true;
                    break;
                }
            }
        }
        boolean groupCommitted;
        try (Admin admin = Admin.create(adminProps(bootstrap))) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get();
            groupCommitted = true;
            for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
                OffsetAndMetadata o = committed.get(e.getKey());
                if (o == null || o.offset() < e.getValue()) {
                    groupCommitted = false;
                }
            }
        }

        long missing = ackedValues.stream().filter(v -> !seenIdempotent.containsKey(v)).count();
        long duplicates = seenIdempotent.values().stream().filter(n -> n > 1).count()
            + seenTransactional.values().stream().filter(n -> n > 1).count();
        long unacked = seenIdempotent.keySet().stream().filter(v -> !ackedValues.contains(v)).count();
        long txMissing = committedTx.stream().filter(v -> !seenTransactional.containsKey(v)).count();
        long txAbortedSeen = abortedTx.stream().filter(seenTransactional::containsKey).count();
        boolean ok = sendErrors.get() == 0 && acked.get() == idempotentCount && missing == 0
            && duplicates == 0 && txMissing == 0 && txAbortedSeen == 0 && reachedEnd && groupCommitted
            && committedTx.size() + abortedTx.size() == transactions * perTransaction;
        String error = firstError.get() == null ? "null"
            : "\"" + firstError.get().replace("\\", "\\\\").replace("\"", "'") + "\"";
        System.out.println("{\"idempotent_acked\":" + acked.get()
            + ",\"send_errors\":" + sendErrors.get()
            + ",\"first_error\":" + error
            + ",\"idempotent_consumed\":" + seenIdempotent.size()
            + ",\"missing\":" + missing
            + ",\"duplicates\":" + duplicates
            + ",\"consumed_unacked\":" + unacked
            + ",\"transactional_committed\":" + committedTx.size()
            + ",\"transactional_aborted\":" + abortedTx.size()
            + ",\"transactional_consumed\":" + seenTransactional.size()
            + ",\"transactional_missing\":" + txMissing
            + ",\"aborted_consumed\":" + txAbortedSeen
            + ",\"reached_end\":" + reachedEnd
            + ",\"group_offsets_committed\":" + groupCommitted
            + ",\"ok\":" + ok + "}");
        System.out.flush();
        System.exit(ok ? 0 : 1);
    }

    static Properties producerProps(String bootstrap, String transactionalId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "5");
        p.put("delivery.timeout.ms", "120000");
        p.put("max.block.ms", "120000");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        if (transactionalId != null) {
            p.put("transactional.id", transactionalId);
            p.put("transaction.timeout.ms", "60000");
        }
        return p;
    }

    static Properties adminProps(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        return p;
    }

    /** The latest offsets of both topics (the transactional one's include its markers). */
    static Map<TopicPartition, Long> endOffsets(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        for (String topic : List.of(IDEMPOTENT, TRANSACTIONAL)) {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get()
                .get(topic).partitions().size();
            for (int i = 0; i < partitions; i++) {
                specs.put(new TopicPartition(topic, i), OffsetSpec.latest());
            }
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(specs).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        return ends;
    }

    static boolean atEnd(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            if (!consumer.assignment().contains(e.getKey()) || consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** Sleeps until {@code sent} messages fit {@code rate} per second since {@code start}. */
    static void pace(long start, int sent, int rate) {
        long due = start + (long) sent * 1_000_000_000L / rate;
        long wait = due - System.nanoTime();
        if (wait > 1_000_000) {
            try {
                Thread.sleep(wait / 1_000_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
