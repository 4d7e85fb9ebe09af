"""A program driven over its console with pexpect (the sim's firmware, the QEMU guest's shell): how a
session ends, shared by the targets."""

import pexpect


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
