import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.controller.PartitionChangeBuilder;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Kafka 4.4's PartitionChangeBuilder on given partitions, for the compat tests. Each stdin line
 * is fields joined by '|':
 *   mvLevel|elrEnabled|minIsr|election|replicas|isr|elr|lastKnownElr|leader|leaderEpoch|
 *   partitionEpoch|recoveryState|removing|adding|acceptable|targetIsr|targetReplicas|
 *   targetRemoving|targetAdding|targetRecovery|uncleanShutdown
 * where lists are ids joined by ',' (empty: none), an empty target means "not set", and
 * election is PREFERRED, ONLINE or UNCLEAN. Replica r's directory is Uuid(r, r); a replica
 * without one gets UNASSIGNED. Prints one line per input: "none", or the record's fields.
 */
public class PartitionChangeProbe {
    static int[] ints(String s) {
        if (s.isEmpty()) return new int[0];
        String[] p = s.split(",");
        int[] out = new int[p.length];
        for (int i = 0; i < p.length; i++) out[i] = Integer.parseInt(p[i]);
        return out;
    }

    static List<Integer> list(String s) {
        List<Integer> out = new ArrayList<>();
        for (int i : ints(s)) out.add(i);
        return out;
    }

    static String show(List<?> l) {
        if (l == null) return "-";
        List<String> out = new ArrayList<>();
        for (Object o : l) out.add(o.toString());
        return "[" + String.join(",", out) + "]";
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\\|", -1);
            MetadataVersion mv = MetadataVersion.fromFeatureLevel(Short.parseShort(f[0]));
            boolean elr = Boolean.parseBoolean(f[1]);
            int minIsr = Integer.parseInt(f[2]);
            PartitionChangeBuilder.Election election = PartitionChangeBuilder.Election.valueOf(f[3]);
            int[] replicas = ints(f[4]);
            Uuid[] dirs = new Uuid[replicas.length];
            for (int i = 0; i < replicas.length; i++) dirs[i] = new Uuid(replicas[i], replicas[i]);
            PartitionRegistration partition = new PartitionRegistration.Builder()
                .setReplicas(replicas)
                .setDirectories(dirs)
                .setIsr(ints(f[5]))
                .setElr(ints(f[6]))
                .setLastKnownElr(ints(f[7]))
                .setLeader(Integer.parseInt(f[8]))
                .setLeaderEpoch(Integer.parseInt(f[9]))
                .setPartitionEpoch(Integer.parseInt(f[10]))
                .setLeaderRecoveryState(LeaderRecoveryState.of(Byte.parseByte(f[11])))
                .setRemovingReplicas(ints(f[12]))
                .setAddingReplicas(ints(f[13]))
                .build();
            Set<Integer> acceptable = new HashSet<>(list(f[14]));
            PartitionChangeBuilder builder = new PartitionChangeBuilder(partition, new Uuid(7, 7), 0,
                acceptable::contains, mv, minIsr, elr)
                .setElection(election)
                .setDefaultDirProvider(b -> DirectoryId.UNASSIGNED);
            if (!f[15].equals("-")) builder.setTargetIsr(list(f[15]));
            if (!f[16].equals("-")) builder.setTargetReplicas(list(f[16]));
            if (!f[17].equals("-")) builder.setTargetRemoving(list(f[17]));
            if (!f[18].equals("-")) builder.setTargetAdding(list(f[18]));
            if (!f[19].equals("-")) builder.setTargetLeaderRecoveryState(LeaderRecoveryState.of(Byte.parseByte(f[19])));
            if (!f[20].equals("-")) builder.setUncleanShutdownReplicas(list(f[20]));
            String out;
            try {
                Optional<ApiMessageAndVersion> built = builder.build();
                if (built.isEmpty()) {
                    out = "none";
                } else {
                    PartitionChangeRecord r = (PartitionChangeRecord) built.get().message();
                    out = "v" + built.get().version() + " leader=" + r.leader() + " isr=" + show(r.isr())
                        + " elr=" + show(r.eligibleLeaderReplicas()) + " lke=" + show(r.lastKnownElr())
                        + " replicas=" + show(r.replicas()) + " removing=" + show(r.removingReplicas())
                        + " adding=" + show(r.addingReplicas()) + " lrs=" + r.leaderRecoveryState()
                        + " dirs=" + show(r.directories());
                }
            } catch (RuntimeException e) {
                out = "error: " + e.getClass().getSimpleName();
            }
            System.out.println(out);
        }
    }
}
