"""The `spark-pair` a test starts: `python -I -S client.py SOCKET SCRIPT ARGS...`.

It hands its argv, environment, folder and its own stdin, stdout and stderr (the descriptors
themselves) to the worker's fork server (server.py), which forks a child of a process that has
imported spark-pair once; that child runs `spark-pair ARGS` on those descriptors. This process
stays the one the test sees: a signal sent to it goes to the child, and it ends as the child
ended (its exit code, or killed by the same signal). Where a fork would not be the same as a
new process (a terminal, a process group of its own, an interpreter variable of its own, no
server), it becomes the real `spark-pair` (exec). Only the standard library: it starts in a
few milliseconds.
"""

import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)


def main() -> None:
    path, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if any(os.isatty(fd) for fd in (0, 1, 2)) or os.getpgid(0) == os.getpid():
        become(script, args)  # a terminal, or a group of its own (signalled as a whole)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        head = json.dumps({"argv": [script, *args], "env": dict(os.environ),
                           "cwd": os.getcwd()}).encode()
        socket.send_fds(sock, [struct.pack("!I", len(head)) + head], [0, 1, 2])
        answer = sock.makefile("rb")
        first = answer.readline().split()
    except OSError:
        become(script, args)
    if first[:1] != [b"pid"]:
        become(script, args)  # the server says a fork would not do here
    child = int(first[1])

    def forward(signum, frame) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    last = answer.readline().split()
    if last[:1] != [b"exit"]:
        os._exit(70)  # the server went away (the test session ends)
    status = int(last[1])
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status))


def become(script: str, args: list[str]) -> None:
    os.execv(script, [script, *args])


main()
