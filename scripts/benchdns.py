"""A scripted DNS server for the scale-out benches (scripts/bench-scale-out.py): UDP on
127.0.0.1, A and SRV records (an SRV answer carries its targets' A records as additional
records, as Consul's does), the zone changed at run time by the bench, queries counted.
Standard library only; its wire code is its own (no name compression in answers).
"""

import socket
import struct
import threading

TYPE_A = 1
TYPE_SRV = 33


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def read_name(msg, pos):
    """The name at `pos` (no compression in questions) and where it ends."""
    labels = []
    while msg[pos]:
        n = msg[pos]
        labels.append(msg[pos + 1 : pos + 1 + n].decode().lower())
        pos += 1 + n
    return ".".join(labels), pos + 1


def rr(name, rtype, data, ttl=1):
    return encode_name(name) + struct.pack(">HHIH", rtype, 1, ttl, len(data)) + data


class DnsServer:
    """Answers from `a` (name -> [ip]) and `srv` (name -> [(prio, weight, port,
    target)]); an unknown name gets NOERROR without records."""

    def __init__(self):
        self.a = {}
        self.srv = {}
        self.queries = 0
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # room for a burst of queries (a thousand servers asking at once)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def set_a(self, name, ips):
        with self.lock:
            self.a[name.lower()] = list(ips)

    def set_srv(self, name, records):
        with self.lock:
            self.srv[name.lower()] = list(records)

    def _serve(self):
        while True:
            try:
                q, peer = self.sock.recvfrom(4096)
                ans = self._answer(q)
            except (OSError, IndexError, UnicodeDecodeError):
                continue
            if ans:
                self.sock.sendto(ans, peer)

    def _answer(self, q):
        qid, _flags, qdcount = struct.unpack(">HHH", q[:6])
        if qdcount != 1:
            return None
        name, end = read_name(q, 12)
        qtype = struct.unpack(">H", q[end : end + 2])[0]
        question = q[12 : end + 4]
        answers, extra = [], []
        with self.lock:
            self.queries += 1
            if qtype == TYPE_A:
                answers = [rr(name, TYPE_A, socket.inet_aton(ip)) for ip in self.a.get(name, [])]
            elif qtype == TYPE_SRV:
                for prio, weight, port, target in self.srv.get(name, []):
                    data = struct.pack(">HHH", prio, weight, port) + encode_name(target)
                    answers.append(rr(name, TYPE_SRV, data))
                    extra += [rr(target, TYPE_A, socket.inet_aton(ip)) for ip in self.a.get(target.lower(), [])]
        head = struct.pack(">HHHHHH", qid, 0x8180, 1, len(answers), 0, len(extra))
        return head + question + b"".join(answers) + b"".join(extra)
