import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Runs Kafka's command-line tools, one after another, in one JVM: the compat harness's way of
 * paying a JVM's start once for many tool runs (compat/harness/tool_server.rs). Each run calls
 * the tool's own main class with its arguments, unchanged, its stdout and stderr captured. The
 * tool's exit (Kafka's Exit class, which every tool the harness sends here ends through) is
 * what a JVM's exit is: the first one gives the status, and nothing printed after it counts.
 * It unwinds the tool with an Error, which tools that catch Throwable may catch and exit again.
 *
 * Requests on stdin: an int count, then that many strings (the main class, then the arguments),
 * each an int length and UTF-8 bytes. Answers on stdout: the status, stdout's bytes, stderr's
 * bytes (each an int length first), and whether this JVM retires after the answer (it does after
 * many runs, or once tools left threads running).
 */
public class ToolServer {
    /** Runs before retiring: tools that exit early can leave clients behind. */
    private static final int MAX_RUNS = 60;
    /** Threads left running by earlier runs, beyond those at start, before retiring. */
    private static final int MAX_LEFT_THREADS = 6;

    /** A tool's exit, unwinding its main. An Error: tools catch Exception on their way out. */
    private static final class ToolExit extends Error {
        final int status;

        ToolExit(int status) {
            super("exit " + status, null, false, false);
            this.status = status;
        }
    }

    /** The status of the current run's first exit, if it exited. */
    private static volatile Integer exited;
    private static final Switch OUT = new Switch();
    private static final Switch ERR = new Switch();

    /** stdout or stderr, pointed at the current run's buffer. */
    private static final class Switch extends OutputStream {
        volatile OutputStream target = OutputStream.nullOutputStream();

        @Override
        public void write(int b) throws IOException {
            target.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            target.write(b, off, len);
        }
    }

    public static void main(String[] ignored) throws Exception {
        DataInputStream requests =
            new DataInputStream(new BufferedInputStream(new FileInputStream(FileDescriptor.in)));
        DataOutputStream answers =
            new DataOutputStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out)));
        Switch out = OUT;
        Switch err = ERR;
        // Installed before any tool class (or log4j's console appender) looks at them.
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        System.setIn(new ByteArrayInputStream(new byte[0]));
        interceptExit();
        int threadsAtStart = Thread.activeCount();
        for (int runs = 1; ; runs++) {
            String[] words;
            try {
                words = new String[requests.readInt()];
            } catch (EOFException closed) {
                Runtime.getRuntime().halt(0);
                return;
            }
            for (int i = 0; i < words.length; i++) {
                byte[] word = new byte[requests.readInt()];
                requests.readFully(word);
                words[i] = new String(word, StandardCharsets.UTF_8);
            }
            ByteArrayOutputStream stdout = new ByteArrayOutputStream();
            ByteArrayOutputStream stderr = new ByteArrayOutputStream();
            exited = null;
            out.target = stdout;
            err.target = stderr;
            int status = run(words[0], Arrays.copyOfRange(words, 1, words.length));
            if (exited != null) {
                status = exited;
            }
            System.out.flush();
            System.err.flush();
            out.target = OutputStream.nullOutputStream();
            err.target = OutputStream.nullOutputStream();
            boolean retire = runs >= MAX_RUNS || Thread.activeCount() > threadsAtStart + MAX_LEFT_THREADS;
            answers.writeInt(status);
            answers.writeInt(stdout.size());
            stdout.writeTo(answers);
            answers.writeInt(stderr.size());
            stderr.writeTo(answers);
            answers.writeBoolean(retire);
            answers.flush();
            if (retire) {
                Runtime.getRuntime().halt(0);
            }
        }
    }

    private static int run(String mainClass, String[] args) {
        try {
            Method main = Class.forName(mainClass).getMethod("main", String[].class);
            main.invoke(null, (Object) args);
            return 0;
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ToolExit) {
                return ((ToolExit) cause).status;
            }
            // What the JVM would print for an uncaught exception, and its status.
            System.err.print("Exception in thread \"main\" ");
            cause.printStackTrace();
            return 1;
        } catch (ToolExit e) {
            return e.status;
        } catch (ReflectiveOperationException e) {
            e.printStackTrace();
            return 1;
        }
    }

    /** Kafka's Exit (its package moved in 4.x): exit and halt unwind, shutdown hooks are kept off. */
    private static void interceptExit() throws Exception {
        Class<?> exit = null;
        for (String name : new String[] {
            "org.apache.kafka.common.utils.internals.Exit", "org.apache.kafka.common.utils.Exit"}) {
            try {
                exit = Class.forName(name);
                break;
            } catch (ClassNotFoundException absent) {
                // the other one
            }
        }
        if (exit == null) {
            throw new IllegalStateException("no Kafka Exit class on the classpath");
        }
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        Object unwind = Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure},
            (proxy, method, args) -> {
                if (method.getDeclaringClass() == Object.class) {
                    return method.invoke(ToolServer.class, args);
                }
                int status = (Integer) args[0];
                if (exited == null) {
                    exited = status;
                    OUT.target = OutputStream.nullOutputStream();
                    ERR.target = OutputStream.nullOutputStream();
                }
                throw new ToolExit(status);
            });
        exit.getMethod("setExitProcedure", procedure).invoke(null, unwind);
        exit.getMethod("setHaltProcedure", procedure).invoke(null, unwind);
        Class<?> hookAdder = Class.forName(exit.getName() + "$ShutdownHookAdder");
        Object noHooks = Proxy.newProxyInstance(hookAdder.getClassLoader(), new Class<?>[] {hookAdder},
            (proxy, method, args) -> method.getDeclaringClass() == Object.class
                ? method.invoke(ToolServer.class, args) : null);
        exit.getMethod("setShutdownHookAdder", hookAdder).invoke(null, noHooks);
    }
}
