"""A pytest worker's fork server: `python server.py SOCKET` imports what a `spark-pair` command
imports, once, then forks a child per client (client.py) that runs the command on the client's
own stdin, stdout and stderr, in its folder, with its environment and argv.

About three quarters of a short run's CPU is importing Python modules; the hundreds of runs the
end-to-end tests start each paid it. A child is still a process of its own that runs
`spark_pair.entry.main` from the start (its clock, signal handlers, collector policy, exit
code; `random` reseeds itself in a fork), so what the tests see is what a new process does;
only the imports are shared. What a fork cannot be is refused and the client runs the real
command: an interpreter variable (PYTHON*) not the server's, or a thread in the server.
The start-up itself is measured by the tests and benchmarks that start cold processes.
"""

import json
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import traceback

PRELOAD = (  # what `run`, `undo`, `stats`, `doctor` and friends import on their way
    "spark_pair.entry", "spark_pair.cli.main", "spark_pair.cli.commands.run",
    "spark_pair.cli.commands.undo", "spark_pair.cli.commands.redo",
    "spark_pair.cli.commands.stats", "spark_pair.cli.commands.sessions",
    "spark_pair.headless.runner", "spark_pair.headless.jsonl", "spark_pair.headless.options",
    "spark_pair.session.runtime", "spark_pair.session.session", "spark_pair.protocol.client",
    "spark_pair.protocol.responses_ws", "spark_pair.protocol.responses_sse",
    "spark_pair.protocol.chat", "spark_pair.workspace.autocontext",
    "spark_pair.workspace.context", "spark_pair.edits.apply", "spark_pair.store.sqlite",
    "spark_pair.store.sessions", "websockets.asyncio.client", "httpx",
)
IGNORED = ("PYTHONUNBUFFERED",)  # output reaches the pipe at once either way by exit


def main() -> None:
    path = sys.argv[1]
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - the child imports it, and says what failed
            pass
    mine = interpreter_env(os.environ)
    parent = os.getppid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(128)
    wake_r, wake_w = socket.socketpair()  # a child's end wakes the loop (SIGCHLD)
    for s in (wake_r, wake_w):
        s.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}  # pid -> its client's connection
    own = [server, wake_r, wake_w]
    while os.getppid() == parent:  # the worker that started it is there
        for key, _ in sel.select(timeout=0.5):
            if key.fileobj is server:
                conn, _ = server.accept()
                pid = start(conn, mine, [*own, *children.values()], sel)
                if pid:
                    children[pid] = conn
                    sel.register(conn, selectors.EVENT_READ)
                else:
                    conn.close()
            elif key.fileobj is wake_r:
                try:
                    while wake_r.recv(512):
                        pass
                except BlockingIOError:
                    pass
            else:  # the client ended before its child: the child goes too (SIGKILL)
                conn = key.fileobj
                if not conn.recv(1):
                    sel.unregister(conn)
                    for pid, c in list(children.items()):
                        if c is conn:
                            kill(pid)
        reap(children, sel)
    for pid in children:
        kill(pid)


def start(conn: socket.socket, mine: dict, sockets: list, sel: selectors.BaseSelector) -> int:
    """Fork the child of one client; its pid (said to the client), or 0 (refused)."""
    try:
        first, fds, _, _ = socket.recv_fds(conn, 4, 3)
        if len(first) < 4:
            first += recv_exactly(conn, 4 - len(first))
        head = json.loads(recv_exactly(conn, struct.unpack("!I", first)[0]))
    except (OSError, ValueError, struct.error) as exc:
        print(f"forkrun: a bad request: {exc}", file=sys.stderr)
        return 0
    if len(fds) != 3 or interpreter_env(head["env"]) != mine or threading.active_count() > 1:
        conn.sendall(b"no\n")
        for fd in fds:
            os.close(fd)
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child(head, fds, [*sockets, conn], sel)
    for fd in fds:
        os.close(fd)
    conn.sendall(b"pid %d\n" % pid)
    return pid


def child(head: dict, fds: list[int], sockets: list[socket.socket],
          sel: selectors.BaseSelector) -> None:
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sel.close()
        for s in sockets:
            s.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(head["cwd"])
        os.environ.clear()
        os.environ.update(head["env"])
        sys.argv = head["argv"]
        from spark_pair.entry import main as spark_pair

        spark_pair()
        code = 0
    except SystemExit as exc:  # as the interpreter ends on it
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - printed as the interpreter prints it
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed pipe
                pass
        os._exit(code)


def reap(children: dict, sel: selectors.BaseSelector) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        try:
            conn.sendall(b"exit %d\n" % status)
        except OSError:
            pass
        try:
            sel.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        part = conn.recv(size - len(data))
        if not part:
            raise OSError("the client went away")
        data += part
    return data


def interpreter_env(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith("PYTHON") and k not in IGNORED}


if __name__ == "__main__":
    main()
