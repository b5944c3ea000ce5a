import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.metadata.placement.ClusterDescriber;
import org.apache.kafka.metadata.placement.PartitionAssignment;
import org.apache.kafka.metadata.placement.PlacementSpec;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.metadata.placement.UsableBroker;

/**
 * Kafka 4.4's StripedReplicaPlacer on given brokers, for the compat tests. Each stdin line is
 * "seed|partitions rf brokers|partitions rf brokers|...", brokers being "id:rack:fenced" joined
 * by ',' (an empty rack is none). One placer (one java.util.Random(seed)) serves the line's
 * placements in turn. Prints one line per placement: partitions joined by ';', replicas by
 * ','; or "error: " and the message.
 */
public class PlacementProbe {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] calls = line.split("\\|");
            StripedReplicaPlacer placer = new StripedReplicaPlacer(new Random(Long.parseLong(calls[0])));
            List<String> out = new ArrayList<>();
            for (int c = 1; c < calls.length; c++) {
                String[] f = calls[c].split(" ");
                int partitions = Integer.parseInt(f[0]);
                short rf = Short.parseShort(f[1]);
                List<UsableBroker> brokers = new ArrayList<>();
                for (String b : f[2].split(",")) {
                    String[] p = b.split(":", -1);
                    brokers.add(new UsableBroker(Integer.parseInt(p[0]),
                        p[1].isEmpty() ? Optional.empty() : Optional.of(p[1]),
                        Boolean.parseBoolean(p[2])));
                }
                ClusterDescriber cluster = new ClusterDescriber() {
                    @Override
                    public Iterator<UsableBroker> usableBrokers() {
                        return brokers.iterator();
                    }

                    @Override
                    public Uuid defaultDir(int brokerId) {
                        return Uuid.ZERO_UUID;
                    }
                };
                try {
                    List<String> parts = new ArrayList<>();
                    for (PartitionAssignment a : placer.place(new PlacementSpec(0, partitions, rf), cluster).assignments()) {
                        List<String> r = new ArrayList<>();
                        for (Integer id : a.replicas()) r.add(id.toString());
                        parts.add(String.join(",", r));
                    }
                    out.add(String.join(";", parts));
                } catch (Exception e) {
                    out.add("error: " + e.getMessage());
                }
            }
            System.out.println(String.join("|", out));
        }
    }
}
