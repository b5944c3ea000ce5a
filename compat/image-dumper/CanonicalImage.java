import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;

import org.apache.kafka.common.Endpoint;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.TokenInformation;
import org.apache.kafka.image.ClientQuotaImage;
import org.apache.kafka.image.ConfigurationImage;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.ControllerRegistration;
import org.apache.kafka.metadata.DelegationTokenData;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.ScramCredentialData;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.server.common.MetadataVersion;

/** A {@link MetadataImage} as the value tree of the canonical image JSON, version 1 (FORMAT.md). */
final class CanonicalImage {
    static final int FORMAT_VERSION = 1;

    private CanonicalImage() {
    }

    static SortedMap<String, Object> of(MetadataImage image) {
        SortedMap<String, Object> doc = new TreeMap<>();
        doc.put("version", FORMAT_VERSION);
        doc.put("offset", image.provenance().lastContainedOffset());
        doc.put("features", features(image));
        SortedMap<String, Object> cluster = new TreeMap<>();
        cluster.put("brokers", byKey(image.cluster().brokers(), String::valueOf, CanonicalImage::broker));
        cluster.put("controllers", byKey(image.cluster().controllers(), String::valueOf, CanonicalImage::controller));
        doc.put("cluster", cluster);
        doc.put("topics", byKey(image.topics().topicsById(), Uuid::toString, CanonicalImage::topic));
        doc.put("configs", byKey(image.configs().resourceData(), CanonicalImage::configKey, CanonicalImage::config));
        doc.put("clientQuotas", byKey(image.clientQuotas().entities(), CanonicalImage::quotaEntityKey, CanonicalImage::quotas));
        doc.put("producerIds", object("nextProducerId", image.producerIds().nextProducerId()));
        doc.put("acls", byKey(image.acls().acls(), Uuid::toString, CanonicalImage::acl));
        doc.put("scram", byKey(image.scram().mechanisms(), m -> String.valueOf(m.type()),
            users -> byKey(users, Function.identity(), CanonicalImage::scramCredential)));
        doc.put("delegationTokens", byKey(image.delegationTokens().tokens(), Function.identity(), CanonicalImage::token));
        return doc;
    }

    private static SortedMap<String, Object> features(MetadataImage image) {
        SortedMap<String, Object> features = new TreeMap<>();
        image.features().finalizedVersions().forEach((name, level) -> {
            if (level > 0) {
                features.put(name, level);
            }
        });
        Optional<MetadataVersion> metadataVersion = image.features().metadataVersion();
        metadataVersion.ifPresent(v -> features.put(MetadataVersion.FEATURE_NAME, v.featureLevel()));
        return features;
    }

    private static SortedMap<String, Object> broker(BrokerRegistration b) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("id", b.id());
        o.put("epoch", b.epoch());
        o.put("incarnationId", b.incarnationId().toString());
        o.put("listeners", byKey(b.listeners(), Function.identity(), CanonicalImage::endpoint));
        o.put("supportedFeatures", byKey(b.supportedFeatures(), Function.identity(), CanonicalImage::versionRange));
        o.put("rack", b.rack().orElse(null));
        o.put("fenced", b.fenced());
        o.put("inControlledShutdown", b.inControlledShutdown());
        o.put("isMigratingZkBroker", isMigratingZkBroker(b));
        o.put("directories", uuids(b.directories()));
        o.put("cordonedDirectories", b.cordonedDirectories() == null ? null : uuids(b.cordonedDirectories()));
        return o;
    }

    /** Kafka 4.4's BrokerRegistration holds this flag but has no accessor for it. */
    private static boolean isMigratingZkBroker(BrokerRegistration b) {
        try {
            Field field = BrokerRegistration.class.getDeclaredField("isMigratingZkBroker");
            field.setAccessible(true);
            return field.getBoolean(b);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read BrokerRegistration.isMigratingZkBroker (" + e
                + "); this Kafka release holds it differently, update CanonicalImage", e);
        }
    }

    private static SortedMap<String, Object> controller(ControllerRegistration c) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("id", c.id());
        o.put("incarnationId", c.incarnationId().toString());
        o.put("zkMigrationReady", c.zkMigrationReady());
        o.put("listeners", byKey(c.listeners(), Function.identity(), CanonicalImage::endpoint));
        o.put("supportedFeatures", byKey(c.supportedFeatures(), Function.identity(), CanonicalImage::versionRange));
        return o;
    }

    private static SortedMap<String, Object> endpoint(Endpoint e) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("host", e.host());
        o.put("port", e.port());
        o.put("securityProtocol", e.securityProtocol().id);
        return o;
    }

    private static SortedMap<String, Object> versionRange(VersionRange range) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("min", range.min());
        o.put("max", range.max());
        return o;
    }

    private static SortedMap<String, Object> topic(TopicImage t) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("name", t.name());
        o.put("partitions", byKey(t.partitions(), String::valueOf, CanonicalImage::partition));
        return o;
    }

    private static SortedMap<String, Object> partition(PartitionRegistration p) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("replicas", ints(p.replicas));
        o.put("directories", uuids(Arrays.asList(p.directories)));
        o.put("isr", ints(p.isr));
        o.put("removingReplicas", ints(p.removingReplicas));
        o.put("addingReplicas", ints(p.addingReplicas));
        o.put("elr", ints(p.elr));
        o.put("lastKnownElr", ints(p.lastKnownElr));
        o.put("leader", p.leader);
        o.put("leaderRecoveryState", p.leaderRecoveryState.value());
        o.put("leaderEpoch", p.leaderEpoch);
        o.put("partitionEpoch", p.partitionEpoch);
        return o;
    }

    private static String configKey(ConfigResource resource) {
        return resource.type().id() + ":" + resource.name();
    }

    private static Object config(ConfigurationImage config) {
        return byKey(config.data(), Function.identity(), Function.identity());
    }

    /** Entries sorted by entity type, each "type=name", or "type" for the default entity. */
    private static String quotaEntityKey(ClientQuotaEntity entity) {
        List<String> parts = new ArrayList<>();
        new TreeMap<>(entity.entries()).forEach((type, name) -> parts.add(name == null ? type : type + "=" + name));
        return String.join(",", parts);
    }

    private static Object quotas(ClientQuotaImage quotas) {
        return byKey(quotas.quotas(), Function.identity(), Function.identity());
    }

    private static SortedMap<String, Object> acl(StandardAcl acl) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("resourceType", acl.resourceType().code());
        o.put("resourceName", acl.resourceName());
        o.put("patternType", acl.patternType().code());
        o.put("principal", acl.principal());
        o.put("host", acl.host());
        o.put("operation", acl.operation().code());
        o.put("permissionType", acl.permissionType().code());
        return o;
    }

    private static SortedMap<String, Object> scramCredential(ScramCredentialData credential) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("salt", credential.salt());
        o.put("storedKey", credential.storedKey());
        o.put("serverKey", credential.serverKey());
        o.put("iterations", credential.iterations());
        return o;
    }

    private static SortedMap<String, Object> token(DelegationTokenData data) {
        TokenInformation info = data.tokenInformation();
        SortedMap<String, Object> o = new TreeMap<>();
        o.put("owner", principal(info.owner()));
        o.put("requester", principal(info.tokenRequester()));
        List<Object> renewers = new ArrayList<>();
        for (KafkaPrincipal renewer : info.renewers()) {
            renewers.add(principal(renewer));
        }
        o.put("renewers", renewers);
        o.put("issueTimestamp", info.issueTimestamp());
        o.put("maxTimestamp", info.maxTimestamp());
        o.put("expiryTimestamp", info.expiryTimestamp());
        return o;
    }

    private static String principal(KafkaPrincipal principal) {
        return principal == null ? null : principal.toString();
    }

    private static SortedMap<String, Object> object(String key, Object value) {
        SortedMap<String, Object> o = new TreeMap<>();
        o.put(key, value);
        return o;
    }

    /** A JSON object from an image map, with each key written as a string; two keys may not collide. */
    private static <K, V> JsonWriter.LazyObject<K, V> byKey(Map<K, V> map, Function<K, String> key, Function<V, ?> value) {
        return new JsonWriter.LazyObject<>(map, key, value);
    }

    private static List<Object> ints(int[] values) {
        List<Object> list = new ArrayList<>(values.length);
        for (int v : values) {
            list.add(v);
        }
        return list;
    }

    private static List<Object> uuids(Collection<Uuid> ids) {
        List<Object> list = new ArrayList<>(ids.size());
        for (Uuid id : ids) {
            list.add(id.toString());
        }
        return list;
    }
}
