import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.function.Function;

/**
 * Streams the value tree built by {@link CanonicalImage} as JSON, following FORMAT.md. Objects
 * are {@link SortedMap}s (keys in {@code String.compareTo} order) or {@link LazyObject}s (a map
 * of the image, sorted and converted entry by entry while it is written, so that an image of a
 * million partitions never exists twice in memory); arrays are {@link List}s; the leaves are
 * strings, booleans, integral boxes, doubles, byte arrays (standard base64) or null.
 */
final class JsonWriter {
    private final Writer out;

    private JsonWriter(Writer out) {
        this.out = out;
    }

    static void write(Object value, Writer out) throws IOException {
        new JsonWriter(out).value(value);
    }

    /** A JSON object made from an image map: each key printed by {@code key}, each value converted by {@code value}. */
    static final class LazyObject<K, V> {
        private final Map<K, V> map;
        private final Function<K, String> key;
        private final Function<V, ?> value;

        LazyObject(Map<K, V> map, Function<K, String> key, Function<V, ?> value) {
            this.map = map;
            this.key = key;
            this.value = value;
        }

        private void writeTo(JsonWriter writer) throws IOException {
            List<Map.Entry<String, V>> entries = new ArrayList<>(map.size());
            for (Map.Entry<K, V> entry : map.entrySet()) {
                entries.add(Map.entry(key.apply(entry.getKey()), entry.getValue()));
            }
            entries.sort(Map.Entry.comparingByKey(Comparator.naturalOrder()));
            writer.out.write('{');
            for (int i = 0; i < entries.size(); i++) {
                String name = entries.get(i).getKey();
                if (i > 0) {
                    if (name.equals(entries.get(i - 1).getKey())) {
                        throw new IllegalStateException("two image entries print as the same JSON key " + name);
                    }
                    writer.out.write(',');
                }
                writer.string(name);
                writer.out.write(':');
                writer.value(value.apply(entries.get(i).getValue()));
            }
            writer.out.write('}');
        }
    }

    private void value(Object value) throws IOException {
        if (value == null) {
            out.write("null");
        } else if (value instanceof String s) {
            string(s);
        } else if (value instanceof Boolean b) {
            out.write(b.toString());
        } else if (value instanceof Byte || value instanceof Short || value instanceof Integer || value instanceof Long) {
            out.write(Long.toString(((Number) value).longValue()));
        } else if (value instanceof Double d) {
            number(d);
        } else if (value instanceof byte[] bytes) {
            string(Base64.getEncoder().encodeToString(bytes));
        } else if (value instanceof SortedMap<?, ?> map) {
            object(map);
        } else if (value instanceof LazyObject<?, ?> lazy) {
            lazy.writeTo(this);
        } else if (value instanceof List<?> list) {
            array(list);
        } else {
            throw new IllegalArgumentException("no canonical JSON form for a " + value.getClass().getName()
                + " (" + value + "); CanonicalImage must convert it first");
        }
    }

    private void object(SortedMap<?, ?> map) throws IOException {
        out.write('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                throw new IllegalArgumentException("JSON object key " + entry.getKey() + " is not a string");
            }
            if (!first) {
                out.write(',');
            }
            first = false;
            string(key);
            out.write(':');
            value(entry.getValue());
        }
        out.write('}');
    }

    private void array(List<?> list) throws IOException {
        out.write('[');
        for (int i = 0; i < list.size(); i++) {
            if (i > 0) {
                out.write(',');
            }
            value(list.get(i));
        }
        out.write(']');
    }

    /** Double.toString always has a '.' or an 'E', so a JSON parser reads it as floating point. */
    private void number(double d) throws IOException {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            string(Double.toString(d));
        } else {
            out.write(Double.toString(d));
        }
    }

    private void string(String s) throws IOException {
        out.write('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.write("\\\"");
                case '\\' -> out.write("\\\\");
                case '\n' -> out.write("\\n");
                case '\r' -> out.write("\\r");
                case '\t' -> out.write("\\t");
                case '\b' -> out.write("\\b");
                case '\f' -> out.write("\\f");
                default -> {
                    if (c < 0x20) {
                        out.write(String.format("\\u%04x", (int) c));
                    } else {
                        out.write(c);
                    }
                }
            }
        }
        out.write('"');
    }
}
