import java.nio.file.Paths;
import java.util.Optional;

import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.TopicImage;

/**
 * Kafka's own load of a metadata image, without printing it: the image dumper's replayer
 * (compat/image-dumper, compiled alongside) on a snapshot or a log directory, for bench-image.
 *
 * <pre>
 * LoadImage --snapshot FILE.checkpoint
 * LoadImage __cluster_metadata-0-DIR
 * </pre>
 */
public final class LoadImage {
    private LoadImage() {
    }

    public static void main(String[] args) throws Exception {
        ImageReplayer replayer = new ImageReplayer();
        if (args[0].equals("--snapshot")) {
            replayer.loadSnapshot(Paths.get(args[1]));
        } else {
            replayer.loadSegments(MetadataLogDir.scan(Paths.get(args[0])), Optional.empty());
        }
        MetadataImage image = replayer.image();
        long partitions = 0;
        for (TopicImage topic : image.topics().topicsById().values()) {
            partitions += topic.partitions().size();
        }
        System.out.println("offset " + image.offset() + ", " + image.topics().topicsById().size() + " topics, " + partitions + " partitions");
    }
}
