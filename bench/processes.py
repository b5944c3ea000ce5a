"""Child processes of the benchmark drivers, each the leader of its own process group, so that
everything a benchmark starts is stopped when it ends, fails or is interrupted.

    import processes
    processes.install()                      # stop every child at exit, SIGTERM and SIGINT
    proc = processes.spawn(argv, cwd, "out.log")
    processes.stop(proc)
"""

import atexit
import os
import signal
import subprocess
import sys

_children = []  # Popen objects, each the leader of its own process group


def spawn(argv, cwd, out_path, err_path=None):
    """Starts argv in a new session; stdout to out_path, stderr to err_path (or with stdout)."""
    with open(out_path, "wb") as out:
        err = open(err_path, "wb") if err_path else None
        try:
            proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err or subprocess.STDOUT, start_new_session=True)
        finally:
            if err:
                err.close()
    _children.append(proc)
    return proc


def stop_group(proc, grace=10.0):
    """SIGTERM the process group led by proc, then SIGKILL it after `grace` seconds."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # stragglers in the group, if any
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def stop(proc, grace=10.0):
    """Stops one child and forgets it."""
    stop_group(proc, grace)
    if proc in _children:
        _children.remove(proc)


def stop_all():
    while _children:
        stop_group(_children.pop())


def _on_signal(signum, _frame):
    stop_all()
    sys.exit(128 + signum)


def tail(path, n=30):
    """The last `n` lines of a child's output file (each cut at 400 characters)."""
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return "(no output)"
    return "\n".join(line[:400] for line in lines[-n:])


def install():
    atexit.register(stop_all)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
