"""What the bench scripts share: a free loopback port, waiting for a listener, and a
process's CPU time and resident memory read from /proc. Imported by the scripts beside
it (`python3 scripts/<bench>.py` puts this directory on the import path)."""

import re
import socket
import sys
import time


def free_port():
    """A TCP port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    """The process's user + system CPU time, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def rss_kib(pid):
    """The process's resident memory, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def wait_port(port, tries=100):
    """Waits until something accepts on 127.0.0.1:port (tries x 50 ms), else exits."""
    for _ in range(tries):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")
