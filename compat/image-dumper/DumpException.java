/** A failure to dump an image, with a message that says what failed, on what, and what to do. */
final class DumpException extends Exception {
    private static final long serialVersionUID = 1L;

    DumpException(String message) {
        super(message);
    }

    DumpException(String message, Throwable cause) {
        super(message, cause);
    }
}
