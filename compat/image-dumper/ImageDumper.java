import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;

import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.snapshot.Snapshots;

/**
 * Prints Kafka 4.4's own metadata image of a KRaft metadata log as the canonical image JSON
 * (compat/image-dumper/FORMAT.md): the differential oracle for kraftd's controller state.
 *
 * <pre>
 * ImageDumper &lt;__cluster_metadata-0 dir&gt; [--at OFFSET] [--snapshot FILE.checkpoint]
 * ImageDumper --snapshot FILE.checkpoint
 * </pre>
 *
 * The JSON goes to stdout; errors go to stderr with exit status 1 (2 for a usage error).
 */
public final class ImageDumper {
    private static final String USAGE = "usage: ImageDumper <__cluster_metadata-0 dir> [--at OFFSET] [--snapshot FILE.checkpoint]\n"
        + "       ImageDumper --snapshot FILE.checkpoint\n"
        + "Prints Kafka's metadata image after every batch whose last offset is <= OFFSET (default: the whole log),\n"
        + "starting from the newest snapshot that ends at or before OFFSET+1 (or from FILE), as canonical JSON.";

    private ImageDumper() {
    }

    /**
     * Exits through Kafka's Exit class (its package moved in 4.x), so that the harness's
     * long-lived tool JVM (compat/java/ToolServer.java) can run the dumper again and again; a
     * JVM of its own exits as with System.exit.
     */
    private static void exit(int status) {
        for (String name : new String[] {
            "org.apache.kafka.common.utils.internals.Exit", "org.apache.kafka.common.utils.Exit"}) {
            try {
                Class.forName(name).getMethod("exit", int.class).invoke(null, status);
                return;
            } catch (java.lang.reflect.InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw new IllegalStateException(cause);
            } catch (ReflectiveOperationException absent) {
                // the other one
            }
        }
        System.exit(status);
    }

    public static void main(String[] args) {
        Arguments arguments;
        try {
            arguments = Arguments.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ImageDumper: " + e.getMessage());
            System.err.println(USAGE);
            exit(2);
            return;
        }
        if (arguments == null) {
            System.out.println(USAGE);
            return;
        }
        try {
            Object document = CanonicalImage.of(dump(arguments).image());
            Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
            JsonWriter.write(document, out);
            out.write('\n');
            out.flush();
        } catch (DumpException e) {
            System.err.println("ImageDumper: " + e.getMessage());
            exit(1);
        } catch (IOException e) {
            System.err.println("ImageDumper: cannot write the image to stdout: " + e);
            exit(1);
        }
    }

    private static ImageReplayer dump(Arguments arguments) throws DumpException {
        ImageReplayer replayer = new ImageReplayer();
        if (arguments.dir.isEmpty()) {
            replayer.loadSnapshot(arguments.snapshot.get());
            return replayer;
        }
        MetadataLogDir log = MetadataLogDir.scan(arguments.dir.get());
        Optional<Path> snapshot = arguments.snapshot;
        if (snapshot.isPresent()) {
            OffsetAndEpoch id = ImageReplayer.snapshotId(snapshot.get());
            if (arguments.at.isPresent() && id.offset() > arguments.at.get() + 1) {
                throw new DumpException("snapshot " + snapshot.get() + " holds offsets up to " + (id.offset() - 1)
                    + ", after --at " + arguments.at.get() + "; give a snapshot that ends at or before offset " + (arguments.at.get() + 1));
            }
        } else {
            snapshot = log.newestSnapshotUpTo(arguments.at).map(id -> log.dir.resolve(snapshotFileName(id)));
        }
        if (snapshot.isPresent()) {
            replayer.loadSnapshot(snapshot.get());
        }
        replayer.loadSegments(log, arguments.at);
        return replayer;
    }

    private static String snapshotFileName(OffsetAndEpoch id) {
        return Snapshots.filenameFromSnapshotId(id) + Snapshots.SUFFIX;
    }

    /** The parsed command line; {@code parse} returns null for {@code --help}. */
    private static final class Arguments {
        Optional<Path> dir = Optional.empty();
        Optional<Long> at = Optional.empty();
        Optional<Path> snapshot = Optional.empty();

        static Arguments parse(String[] args) {
            Arguments parsed = new Arguments();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                switch (arg) {
                    case "--help", "-h" -> {
                        return null;
                    }
                    case "--at" -> parsed.at = Optional.of(offset(value(args, ++i, arg)));
                    case "--snapshot" -> {
                        Path file = Paths.get(value(args, ++i, arg));
                        if (!Files.isRegularFile(file)) {
                            throw new IllegalArgumentException("--snapshot " + file + " is not a file");
                        }
                        parsed.snapshot = Optional.of(file);
                    }
                    default -> {
                        if (arg.startsWith("-") || parsed.dir.isPresent()) {
                            throw new IllegalArgumentException("unexpected argument " + arg);
                        }
                        parsed.dir = Optional.of(Paths.get(arg));
                    }
                }
            }
            if (parsed.dir.isEmpty() && parsed.snapshot.isEmpty()) {
                throw new IllegalArgumentException("give a __cluster_metadata-0 directory, or --snapshot FILE");
            }
            if (parsed.dir.isEmpty() && parsed.at.isPresent()) {
                throw new IllegalArgumentException("--at needs the log directory; a snapshot alone is its image at its end offset - 1");
            }
            return parsed;
        }

        private static String value(String[] args, int i, String flag) {
            if (i >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[i];
        }

        private static long offset(String text) {
            try {
                long offset = Long.parseLong(text);
                if (offset < -1) {
                    throw new IllegalArgumentException("--at " + text + " is below -1 (the offset before the log's first record)");
                }
                return offset;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--at " + text + " is not an offset (a decimal integer)");
            }
        }
    }
}
