import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.snapshot.SnapshotPath;
import org.apache.kafka.snapshot.Snapshots;

/** The segments and snapshots of a {@code __cluster_metadata-0} directory, found by file name as Kafka names them. */
final class MetadataLogDir {
    private static final String SEGMENT_SUFFIX = ".log";

    final Path dir;
    /** Segment files in base-offset order. */
    final List<File> segments = new ArrayList<>();
    /** Complete snapshots ({@code .checkpoint}, not {@code .part} or {@code .deleted}) in end-offset order. */
    final List<OffsetAndEpoch> snapshots = new ArrayList<>();

    private MetadataLogDir(Path dir) {
        this.dir = dir;
    }

    static MetadataLogDir scan(Path dir) throws DumpException {
        if (!Files.isDirectory(dir)) {
            throw new DumpException(dir + " is not a directory; give the __cluster_metadata-0 directory of a KRaft node");
        }
        MetadataLogDir log = new MetadataLogDir(dir);
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String name = file.getFileName().toString();
                if (name.endsWith(SEGMENT_SUFFIX)) {
                    segmentBaseOffset(file.toFile());
                    log.segments.add(file.toFile());
                    continue;
                }
                Optional<SnapshotPath> snapshot = parseSnapshotName(file);
                if (snapshot.isPresent() && !snapshot.get().partial() && !snapshot.get().deleted()) {
                    log.snapshots.add(snapshot.get().snapshotId());
                }
            }
        } catch (IOException e) {
            throw new DumpException("cannot list " + dir + ": " + e, e);
        }
        log.segments.sort(Comparator.comparingLong(MetadataLogDir::baseOffsetOfScanned));
        log.snapshots.sort(Comparator.comparingLong(OffsetAndEpoch::offset).thenComparingInt(OffsetAndEpoch::epoch));
        return log;
    }

    /**
     * The newest snapshot whose end offset is at most {@code at + 1} (all of them when {@code at} is
     * empty). The bootstrap snapshot 0-0 that {@code kafka-storage format} writes is never a
     * candidate: Kafka's MetadataLoader does not load it (handleLoadBootstrap only closes it).
     */
    Optional<OffsetAndEpoch> newestSnapshotUpTo(Optional<Long> at) {
        OffsetAndEpoch chosen = null;
        for (OffsetAndEpoch id : snapshots) {
            if (id.equals(Snapshots.BOOTSTRAP_SNAPSHOT_ID)) {
                continue;
            }
            if (at.isEmpty() || id.offset() <= at.get() + 1) {
                chosen = id;
            }
        }
        return Optional.ofNullable(chosen);
    }

    /**
     * Kafka's own parse of a snapshot file name (empty for other files); Kafka's parse throws on
     * some names that end like a snapshot's, which becomes an error naming the file.
     */
    static Optional<SnapshotPath> parseSnapshotName(Path file) throws DumpException {
        try {
            return Snapshots.parse(file);
        } catch (RuntimeException e) {
            throw new DumpException(file + " is not named <20-digit end offset>-<10-digit epoch>.checkpoint as Kafka names"
                + " snapshots (" + e + "); rename it, or move it out of the directory");
        }
    }

    /** The base offset in a segment's name, {@code 00000000000000000042.log}. */
    static long segmentBaseOffset(File segment) throws DumpException {
        String name = segment.getName();
        String digits = name.substring(0, name.length() - SEGMENT_SUFFIX.length());
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new DumpException("segment " + segment + " is not named <base offset>.log as Kafka names them;"
                + " move it out of the directory");
        }
    }

    private static long baseOffsetOfScanned(File segment) {
        try {
            return segmentBaseOffset(segment);
        } catch (DumpException e) {
            throw new IllegalStateException("checked in scan", e);
        }
    }
}
