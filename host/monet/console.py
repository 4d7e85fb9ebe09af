"""A program driven over its console with pexpect (the sim's firmware, the QEMU guest's shell): how a
session ends, shared by the targets."""

import ctypes
import os
import signal

import pexpect

PR_SET_PDEATHSIG = 1   # linux/prctl.h


def spawn(command, args=(), **options):
    """pexpect.spawn(command, args, **options) of a program that is killed when the thread that started it
    ends. A killed campaign or Dask worker left its sim running at full speed, with no one to end it (seen in
    full `make test` runs: the pty's hangup did not always reach Vsim). Start it from a thread that outlives
    the session (the main thread, a Dask worker's executor thread)."""
    parent = os.getpid()

    def die_with_parent():
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:   # the parent died before the request took effect
            os._exit(1)

    return pexpect.spawn(command, list(args), preexec_fn=die_with_parent, **options)


class ConsoleSession:
    """Subclasses set `child` (a pexpect spawn), `farewell` (the line that ends the program cleanly) and
    `farewell_timeout`; `responsive` turns False when an answer did not come, and then close() does not
    ask, it ends the program."""

    child = None
    responsive = True
    farewell = "exit"
    farewell_timeout = 30

    def close(self):
        if self.child is None:
            return
        try:
            if self.child.isalive() and self.responsive:
                self.child.sendline(self.farewell)
                self.child.expect(pexpect.EOF, timeout=self.farewell_timeout)
        except (pexpect.TIMEOUT, OSError):
            pass
        finally:
            if self.child.isalive():
                self.child.terminate(force=True)
            self.child = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
