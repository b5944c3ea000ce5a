import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * Writes the value tree built by {@link CanonicalImage} as JSON, following FORMAT.md: objects are
 * {@link SortedMap}s (keys in {@code String.compareTo} order), arrays are {@link List}s, and the
 * leaves are strings, booleans, integral boxes, doubles, byte arrays (standard base64) or null.
 */
final class JsonWriter {
    private final StringBuilder out = new StringBuilder();

    static String write(Object value) {
        JsonWriter writer = new JsonWriter();
        writer.value(value);
        return writer.out.toString();
    }

    private void value(Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(s);
        } else if (value instanceof Boolean b) {
            out.append(b.booleanValue());
        } else if (value instanceof Byte || value instanceof Short || value instanceof Integer || value instanceof Long) {
            out.append(((Number) value).longValue());
        } else if (value instanceof Double d) {
            number(d);
        } else if (value instanceof byte[] bytes) {
            string(Base64.getEncoder().encodeToString(bytes));
        } else if (value instanceof SortedMap<?, ?> map) {
            object(map);
        } else if (value instanceof List<?> list) {
            array(list);
        } else {
            throw new IllegalArgumentException("no canonical JSON form for a " + value.getClass().getName()
                + " (" + value + "); CanonicalImage must convert it first");
        }
    }

    private void object(SortedMap<?, ?> map) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                throw new IllegalArgumentException("JSON object key " + entry.getKey() + " is not a string");
            }
            if (!first) {
                out.append(',');
            }
            first = false;
            string(key);
            out.append(':');
            value(entry.getValue());
        }
        out.append('}');
    }

    private void array(List<?> list) {
        out.append('[');
        for (int i = 0; i < list.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            value(list.get(i));
        }
        out.append(']');
    }

    /** Double.toString always has a '.' or an 'E', so a JSON parser reads it as floating point. */
    private void number(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            string(Double.toString(d));
        } else {
            out.append(Double.toString(d));
        }
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
