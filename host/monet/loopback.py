"""Servers this project starts on the loopback interface only (memcached, litex_server): a free port, waiting
for one to listen, ending one."""

import socket
import subprocess
import time


class ServerError(RuntimeError):
    """A server ended or did not listen in time."""


def free_port():
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port):
    """Whether 127.0.0.1:`port` can be listened on (a probe that connects would find another server there)."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_for_port(port, timeout, alive=lambda: True, what="server"):
    """Returns once something accepts connections on 127.0.0.1:`port`; ServerError when `alive()` turns False
    first or `timeout` seconds pass."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not alive():
            raise ServerError(f"{what} exited before it listened on 127.0.0.1:{port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise ServerError(f"{what} did not listen on 127.0.0.1:{port} within {timeout} s")


def stop(proc, timeout=10):
    """Ends a server process: terminated, killed after `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Server:
    """A server process started from `command` (Popen's `options`, text mode) that listens on
    127.0.0.1:`port`, waited for: ServerError, the process ended, when it exits first or does not listen
    within `timeout` s (`what` names it). A context manager; close() ends it, killed after `stop_grace` s."""

    stop_grace = 10

    def __init__(self, command, port, what, timeout, **options):
        self.port = port
        self.proc = subprocess.Popen(command, text=True, **options)
        try:
            wait_for_port(port, timeout, lambda: self.proc.poll() is None, what)
        except ServerError:
            self.close()
            raise

    def close(self):
        stop(self.proc, self.stop_grace)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
