import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.loader.MetadataBatchLoader;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.metadata.SupportedConfigChecker;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.internals.RecordsIterator;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.config.DefaultSupportedConfigChecker;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.kafka.snapshot.FileRawSnapshotReader;
import org.apache.kafka.snapshot.RecordsSnapshotReader;
import org.apache.kafka.snapshot.SnapshotPath;

/**
 * Replays a snapshot and then log batches the way a Kafka 4.4 broker or controller does: the
 * snapshot into a {@link MetadataDelta} over the empty image (as MetadataLoader.loadSnapshot),
 * the batches through Kafka's own {@link MetadataBatchLoader}, which owns the metadata
 * transaction rules; the image is the last one the batch loader published.
 */
final class ImageReplayer {
    /** KafkaRaftClient.MAX_BATCH_SIZE_BYTES: the read buffer size KRaft uses for its log. */
    private static final int MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024;

    private final LogContext logContext = new LogContext("[ImageDumper] ");
    /** What SharedServer gives every broker's and controller's MetadataLoader. */
    private final SupportedConfigChecker configChecker = new DefaultSupportedConfigChecker();
    private final BufferSupplier buffers = BufferSupplier.create();
    private final MetadataBatchLoader batchLoader;
    private MetadataImage published = MetadataImage.EMPTY;
    /** The offset of the next batch to load. */
    private long nextOffset = 0;

    ImageReplayer() {
        FaultHandler refuse = (message, cause) -> {
            throw new ReplayRefused(message, cause);
        };
        batchLoader = new MetadataBatchLoader(logContext, Time.SYSTEM, refuse,
            (delta, image, manifest) -> published = image, configChecker);
    }

    MetadataImage image() {
        return published;
    }

    /** Loads a {@code <end offset>-<epoch>.checkpoint} file as the image to continue from. */
    void loadSnapshot(Path file) throws DumpException {
        OffsetAndEpoch id = snapshotId(file);
        Path dir = file.toAbsolutePath().getParent();
        MetadataDelta delta = new MetadataDelta.Builder()
            .setImage(MetadataImage.EMPTY)
            .setSupportedConfigChecker(configChecker)
            .build();
        MetadataProvenance provenance;
        try (FileRawSnapshotReader raw = FileRawSnapshotReader.open(dir, id);
             RecordsSnapshotReader<ApiMessageAndVersion> reader = RecordsSnapshotReader.of(
                 raw, MetadataRecordSerde.INSTANCE, buffers, MAX_BATCH_SIZE_BYTES, true, logContext)) {
            while (reader.hasNext()) {
                Batch<ApiMessageAndVersion> batch = reader.next();
                int index = 0;
                for (ApiMessageAndVersion record : batch.records()) {
                    try {
                        delta.replay(record.message());
                    } catch (RuntimeException e) {
                        throw new DumpException("Kafka's MetadataDelta refused record " + index + " of the snapshot batch at offset "
                            + batch.baseOffset() + " in " + file + ": " + e, e);
                    }
                    index++;
                }
            }
            delta.finishSnapshot();
            provenance = new MetadataProvenance(reader.lastContainedLogOffset(), reader.lastContainedLogEpoch(),
                reader.lastContainedLogTimestamp(), true);
        } catch (RuntimeException e) {
            throw new DumpException("cannot read snapshot " + file + " (" + e + "); is it a complete KRaft checkpoint?", e);
        }
        MetadataImage image;
        try {
            image = delta.apply(provenance);
        } catch (RuntimeException e) {
            throw new DumpException("Kafka's MetadataDelta cannot build an image from snapshot " + file + ": " + e, e);
        }
        batchLoader.resetToImage(image);
        published = image;
        nextOffset = id.offset();
    }

    /**
     * Gives the batch loader every batch of the segments from {@link #nextOffset} on whose last
     * offset is at most {@code at} (all of them when empty), each followed by a flush: one
     * committed batch per MetadataLoader.handleCommit, as KafkaRaftClient feeds the active
     * controller's loader. So the image at X is always a prefix of the image at a later X
     * (a follower, given many batches per commit, can publish less often; see FORMAT.md).
     */
    void loadSegments(MetadataLogDir log, Optional<Long> at) throws DumpException {
        long limit = at.orElse(Long.MAX_VALUE);
        for (File segment : log.segments) {
            if (!loadSegment(segment, limit)) {
                break;
            }
        }
    }

    /** False once a batch beyond {@code limit} was seen: the later segments are not needed. */
    private boolean loadSegment(File segment, long limit) throws DumpException {
        try (FileRecords records = FileRecords.open(segment, false)) {
            int end = 0;
            for (FileChannelRecordBatch header : records.batches()) {
                end = header.position() + header.sizeInBytes();
                if (header.lastOffset() < nextOffset) {
                    continue;
                }
                if (header.lastOffset() > limit) {
                    return false;
                }
                if (header.baseOffset() != nextOffset) {
                    throw new DumpException(gap(segment, header));
                }
                loadBatch(segment, records.slice(header.position(), header.sizeInBytes()), header);
                nextOffset = header.lastOffset() + 1;
            }
            if (end < records.sizeInBytes()) {
                System.err.println("ImageDumper: ignoring " + (records.sizeInBytes() - end) + " bytes after the last complete batch of "
                    + segment + " (a torn write; Kafka truncates it when the log is recovered)");
            }
            return true;
        } catch (IOException e) {
            throw new DumpException("cannot read segment " + segment + ": " + e, e);
        }
    }

    private void loadBatch(File segment, FileRecords slice, FileChannelRecordBatch header) throws DumpException {
        String where = "the batch at offsets " + header.baseOffset() + "-" + header.lastOffset() + " of " + segment;
        Batch<ApiMessageAndVersion> batch;
        try (RecordsIterator<ApiMessageAndVersion> iterator = new RecordsIterator<>(
                 slice, MetadataRecordSerde.INSTANCE, buffers, MAX_BATCH_SIZE_BYTES, true, logContext)) {
            if (!iterator.hasNext()) {
                throw new DumpException("Kafka's RecordsIterator read no batch from " + where);
            }
            batch = iterator.next();
        } catch (RuntimeException e) {
            throw new DumpException("cannot decode " + where + " (" + e + "); the log is corrupt or not a KRaft metadata log", e);
        }
        try {
            batchLoader.loadBatch(batch, LeaderAndEpoch.UNKNOWN);
            batchLoader.maybeFlushBatches(LeaderAndEpoch.UNKNOWN, true);
        } catch (ReplayRefused e) {
            throw e.toDumpException(where);
        }
    }

    private String gap(File segment, FileChannelRecordBatch header) {
        if (header.baseOffset() < nextOffset) {
            return "the batch at offsets " + header.baseOffset() + "-" + header.lastOffset() + " of " + segment
                + " straddles offset " + nextOffset + ", where the snapshot ends; give a snapshot that ends on a batch boundary";
        }
        String start = nextOffset == 0 ? "the log has no snapshot to start from" : "the image so far ends at offset " + (nextOffset - 1);
        return "offsets " + nextOffset + "-" + (header.baseOffset() - 1) + " are missing: " + start
            + ", but the next batch (" + segment + ") starts at offset " + header.baseOffset()
            + "; the log was truncated at its start, so give --at at or after a snapshot's end offset - 1";
    }

    static OffsetAndEpoch snapshotId(Path file) throws DumpException {
        Optional<SnapshotPath> parsed = MetadataLogDir.parseSnapshotName(file);
        if (parsed.isEmpty() || parsed.get().partial() || parsed.get().deleted()) {
            throw new DumpException(file + " is not named <20-digit end offset>-<10-digit epoch>.checkpoint as Kafka names complete snapshots");
        }
        return parsed.get().snapshotId();
    }

    /** Thrown by the fault handler: Kafka's loader refused a record (Java would halt or skip it). */
    static final class ReplayRefused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ReplayRefused(String message, Throwable cause) {
            super(message, cause);
        }

        DumpException toDumpException(String where) {
            String cause = getCause() == null ? "" : ": " + getCause();
            return new DumpException("Kafka's MetadataBatchLoader refused " + where + ": " + getMessage() + cause
                + " (a Java controller halts on this record; the log is not one Kafka would load)", this);
        }
    }
}
