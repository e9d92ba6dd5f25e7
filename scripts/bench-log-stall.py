#!/usr/bin/env python3
"""Load test: a log receiver that stops reading must not slow the traffic down.

Starts rampart (or haproxy: anything reading an HAProxy-syntax config) with a frontend
that logs every request (`option httplog`) to a unix datagram socket, a UDP socket and
stdout (--targets), each read by this script, and answers `http-request return` itself
so that no backend adds noise. wrk (keep-alive, pinned with --client-cpu) sends
requests for three phases of --duration seconds each:

  reading   the receivers read every line
  stalled   the receivers stop reading (their socket buffers / the stdout pipe fill up)
  resumed   they read again

A control proxy (the same configuration without `log` lines, pinned to the same core)
is loaded by its own wrk at the same time: what changes for both between phases is the
machine (this VM is faster when busy, and other agents share it), not the logging.
Per phase it prints requests/s, latency p50/p99/max, the proxy's CPU per request
(utime+stime from /proc: less sensitive than latency to other load on the machine),
the control proxy's requests/s and p99,
the lines each receiver got, and
`DroppedLogs` from `show info` on the stats socket (its growth is what rampart could
not send: the unix socket and the stdout pipe refuse lines once full). A UDP receiver's
kernel drops datagrams without telling the sender, so its losses are read from
/proc/net/udp instead. Standard library only.

    scripts/bench-log-stall.py --proxy target/release/rampart --duration 5
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

CFG = """\
global
    nbthread 1
    stats socket {tmp}/stats.sock level admin

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 30s

frontend fe
    bind 127.0.0.1:{port}
{logs}    option httplog
    http-request return status 200 content-type text/plain string ok
"""

TARGETS = {
    "unix": "    log unix@{tmp}/log.sock len 4096 local0\n",
    "udp": "    log 127.0.0.1:{udp_port} len 4096 local0\n",
    "stdout": "    log stdout format raw local0\n",
}

REQUEST = b"GET /stall-test HTTP/1.1\r\nHost: bench\r\n\r\n"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Receiver(threading.Thread):
    """Reads datagrams (or a pipe) while `reading` is set, counting what it got."""

    def __init__(self, read_one, reading):
        super().__init__(daemon=True)
        self.read_one, self.reading, self.count = read_one, reading, 0

    def run(self):
        while True:
            self.reading.wait()
            try:
                n = self.read_one()
            except (BlockingIOError, socket.timeout, TimeoutError):
                continue
            except OSError:
                return
            if n is None:
                return
            self.count += n


def udp_drops(port):
    """Datagrams the kernel dropped at our UDP receiver (the last column of /proc/net/udp)."""
    hexport = f"{port:04X}"
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1].endswith(":" + hexport):
                return int(fields[-1])
    return 0


def show_info(path, field):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
    s.sendall(b"show info\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    for line in data.decode(errors="replace").splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    return None


# wrk's summary as one JSON line (latencies in microseconds)
WRK_LUA = """\
done = function(s, lat, req)
  io.write(string.format('STALL {"requests":%d,"duration_us":%d,"errors":%d,'
    .. '"p50_us":%d,"p99_us":%d,"max_us":%d}\\n',
    s.requests, s.duration, s.errors.connect + s.errors.read + s.errors.write + s.errors.status
    + s.errors.timeout, lat:percentile(50), lat:percentile(99), lat.max))
end
"""


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def phase(name, args, ports, receivers, stats_sock, udp_port, lua, pid):
    before = [r.count for r in receivers.values()]
    cpu0 = cpu_seconds(pid)
    dropped0 = show_info(stats_sock, "DroppedLogs")
    udp0 = udp_drops(udp_port)
    wrks = []
    for port in ports:  # the logging proxy, then the control one, loaded at the same time
        wrk = ["wrk", "-t1", f"-c{args.conns}", f"-d{args.duration:g}s", "-s", lua, f"http://127.0.0.1:{port}/stall-test"]
        if args.client_cpu:
            wrk = ["taskset", "-c", args.client_cpu] + wrk
        wrks.append(subprocess.Popen(wrk, stdout=subprocess.PIPE, text=True))
    outs = [w.communicate()[0] for w in wrks]
    res, ctl = (json.loads(out.split("STALL ", 1)[1].splitlines()[0]) for out in outs)
    cpu = cpu_seconds(pid) - cpu0
    got = {name: r.count - b for (name, r), b in zip(receivers.items(), before)}
    return {
        "phase": name,
        "requests": res["requests"],
        "rps": res["requests"] / (res["duration_us"] / 1e6),
        "p50_ms": res["p50_us"] / 1e3,
        "p99_ms": res["p99_us"] / 1e3,
        "max_ms": res["max_us"] / 1e3,
        "errors": res["errors"],
        "cpu_us_per_req": cpu / max(res["requests"], 1) * 1e6,
        "control_rps": ctl["requests"] / (ctl["duration_us"] / 1e6),
        "control_p99_ms": ctl["p99_us"] / 1e3,
        **{f"{name}_lines": n for name, n in got.items()},
        "DroppedLogs+": show_info(stats_sock, "DroppedLogs") - dropped0,
        **({"udp_kernel_drops+": udp_drops(udp_port) - udp0} if "udp" in got else {}),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proxy", default="target/release/rampart", help="binary taking -f <cfg>")
    p.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    p.add_argument("--conns", type=int, default=8, help="wrk's keep-alive connections")
    p.add_argument("--client-cpu", default="0", help="taskset list for wrk ('' = no pinning)")
    p.add_argument("--proxy-cpu", default="1", help="taskset list for the proxy ('' = no pinning)")
    p.add_argument("--rounds", type=int, default=1, help="reading/stalled/resumed cycles")
    p.add_argument("--targets", default="unix,udp,stdout", help="log targets, among unix,udp,stdout")
    args = p.parse_args()

    tmp = tempfile.mkdtemp(prefix="log-stall-")
    port, ctl_port, udp_port = free_port(), free_port(), free_port()
    reading = threading.Event()
    reading.set()

    ux = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ux.bind(f"{tmp}/log.sock")
    ux.settimeout(0.2)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", udp_port))
    udp.settimeout(0.2)

    lua = os.path.join(tmp, "report.lua")
    with open(lua, "w") as f:
        f.write(WRK_LUA)
    cfg = os.path.join(tmp, "stall.cfg")
    with open(cfg, "w") as f:
        names = [t for t in args.targets.split(",") if t in TARGETS]
        logs = "".join(TARGETS[t].format(tmp=tmp, udp_port=udp_port) for t in names)
        f.write(CFG.format(tmp=tmp, port=port, logs=logs))
    os.mkdir(f"{tmp}/control")
    ctl_cfg = os.path.join(tmp, "control", "control.cfg")
    with open(ctl_cfg, "w") as f:
        f.write(CFG.format(tmp=f"{tmp}/control", port=ctl_port, logs=""))
    pin = ["taskset", "-c", args.proxy_cpu] if args.proxy_cpu else []
    proc = subprocess.Popen(pin + [args.proxy, "-f", cfg], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    control = subprocess.Popen(pin + [args.proxy, "-f", ctl_cfg], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.set_blocking(proc.stdout.fileno(), False)

    def read_stdout():
        try:
            data = os.read(proc.stdout.fileno(), 65536)
        except BlockingIOError:
            time.sleep(0.01)
            return 0
        return None if not data else data.count(b"\n")

    readers = {
        "unix": lambda: (ux.recv(65536), 1)[1],
        "udp": lambda: (udp.recv(65536), 1)[1],
        "stdout": read_stdout,
    }
    receivers = {name: Receiver(readers[name], reading) for name in names}
    for r in receivers.values():
        r.start()
    stats_sock = f"{tmp}/stats.sock"
    for _ in range(100):
        if os.path.exists(stats_sock):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        sys.exit("the proxy did not start")
    time.sleep(0.3)

    rows = []
    try:
        for _ in range(args.rounds):
            reading.set()
            rows.append(phase("reading", args, (port, ctl_port), receivers, stats_sock, udp_port, lua, proc.pid))
            reading.clear()
            rows.append(phase("stalled", args, (port, ctl_port), receivers, stats_sock, udp_port, lua, proc.pid))
            reading.set()
            rows.append(phase("resumed", args, (port, ctl_port), receivers, stats_sock, udp_port, lua, proc.pid))
    finally:
        for p in (proc, control):
            p.terminate()
        for p in (proc, control):
            p.wait(10)

    cols = list(rows[0].keys())
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        cells = [f"{v:,.2f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else v for v in r.values()]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
