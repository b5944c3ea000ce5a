import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

import kafka.server.ConfigHelper;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsResponseDataJsonConverter;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.metadata.KRaftMetadataCache;
import org.apache.kafka.server.common.KRaftVersion;

import scala.jdk.javaapi.CollectionConverters;

/**
 * What a Java 4.4 controller answers to a DescribeConfigs request (`ConfigHelper`, as
 * `ControllerApis` calls it with no authorizer), given a controller's properties file and the
 * metadata log it has replayed: the image's topics and configs, and the dynamic broker configs
 * of the cluster default and of the controller's own node applied to its `KafkaConfig` as its
 * `DynamicConfigPublisher` applies them.
 *
 * Usage: ConfigsDescriber LOG_DIR PROPERTIES [--synonyms] [--documentation] [--version N] [--at OFFSET]
 * (--at: the image after every batch whose last offset is at most OFFSET).
 * Each stdin line is one resource: "type-id TAB name [TAB key,key...]". Prints the response as
 * Kafka's JSON converter writes it, on one line.
 */
public final class ConfigsDescriber {
    private ConfigsDescriber() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: ConfigsDescriber LOG_DIR PROPERTIES [--synonyms] [--documentation] [--version N] [--at OFFSET]");
            System.exit(2);
        }
        List<String> flags = Arrays.asList(args).subList(2, args.length);
        boolean synonyms = flags.contains("--synonyms");
        boolean documentation = flags.contains("--documentation");
        int v = flags.indexOf("--version");
        short version = v < 0 ? 4 : Short.parseShort(flags.get(v + 1));
        int a = flags.indexOf("--at");
        Optional<Long> at = a < 0 ? Optional.empty() : Optional.of(Long.parseLong(flags.get(a + 1)));

        ImageReplayer replayer = new ImageReplayer();
        MetadataLogDir log = MetadataLogDir.scan(Paths.get(args[0]));
        Optional<org.apache.kafka.server.common.OffsetAndEpoch> snapshot = log.newestSnapshotUpTo(at);
        if (snapshot.isPresent()) {
            replayer.loadSnapshot(log.dir.resolve(
                org.apache.kafka.snapshot.Snapshots.filenameFromSnapshotId(snapshot.get())
                    + org.apache.kafka.snapshot.Snapshots.SUFFIX));
        }
        replayer.loadSegments(log, at);
        MetadataImage image = replayer.image();

        Properties props = new Properties();
        try (Reader r = Files.newBufferedReader(Paths.get(args[1]), StandardCharsets.UTF_8)) {
            props.load(r);
        }
        KafkaConfig config = KafkaConfig.fromProps(props, false);
        config.dynamicConfig().initialize(scala.Option.empty());
        String own = Integer.toString(config.brokerId());
        image.configs().resourceData().forEach((resource, data) -> {
            if (resource.type() != ConfigResource.Type.BROKER) return;
            Properties dynamic = new Properties();
            data.data().forEach(dynamic::put);
            if (resource.name().isEmpty()) {
                config.dynamicConfig().updateDefaultConfig(dynamic, false);
            } else if (resource.name().trim().equals(own)) {
                config.dynamicConfig().updateBrokerConfig(config.brokerId(), dynamic, false);
            }
        });
        KRaftMetadataCache cache = new KRaftMetadataCache(config.nodeId(), () -> KRaftVersion.KRAFT_VERSION_0);
        cache.setImage(image);
        ConfigHelper helper = new ConfigHelper(cache, config, cache);

        DescribeConfigsRequestData request = new DescribeConfigsRequestData()
            .setIncludeSynonyms(synonyms).setIncludeDocumentation(documentation);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            DescribeConfigsResource resource = new DescribeConfigsResource()
                .setResourceType(Byte.parseByte(f[0])).setResourceName(f[1]);
            List<String> keys = f.length < 3 ? null
                : f[2].isEmpty() ? new ArrayList<>() : new ArrayList<>(Arrays.asList(f[2].split(",")));
            resource.setConfigurationKeys(keys);
            request.resources().add(resource);
        }
        DescribeConfigsResponseData response;
        try {
            // ConfigHelper.handleDescribeConfigsRequest refuses the whole request for an unknown type.
            for (DescribeConfigsResource r : request.resources()) {
                ConfigResource.Type type = ConfigResource.Type.forId(r.resourceType());
                if (type == ConfigResource.Type.UNKNOWN) {
                    throw new InvalidRequestException("Unexpected resource type " + type + " for resource " + r.resourceName());
                }
            }
            response = new DescribeConfigsResponseData().setResults(CollectionConverters.asJava(
                helper.describeConfigs(CollectionConverters.asScala(request.resources()).toList(), synonyms, documentation)));
        } catch (InvalidRequestException e) {
            response = new DescribeConfigsRequest.Builder(request).build(version).getErrorResponse(0, e).data();
        }
        System.out.println(DescribeConfigsResponseDataJsonConverter.write(response, version));
    }
}
