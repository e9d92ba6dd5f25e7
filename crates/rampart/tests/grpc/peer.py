"""gRPC peers for crates/rampart/tests/grpc.rs: a grpcio server and a grpcio client.

No protoc: generic handlers with identity (raw bytes) serializers, service `test.T`.

  peer.py server [CERT KEY]   serve on 127.0.0.1:0 (TLS when CERT and KEY are given);
                              prints `port N`, then one `call|...` line per call
  peer.py client ADDR [--ca CA] [CASE...]
                              runs the cases (default: all) against ADDR (plaintext
                              HTTP/2, or TLS trusting CA), one `case|...` line each

Lines are `kind|name=value|...`; values never hold `|` or a newline.
"""

import hashlib
import sys
import threading
import time

import grpc

SERVICE = "test.T"


def clean(v):
    if isinstance(v, bytes):  # printable text as is, other bytes in hex
        v = v.decode() if all(32 <= b < 127 for b in v) and v else v.hex()
    return str(v).replace("|", "/").replace("\n", " ")


def emit(kind, **fields):
    line = kind + "".join("|%s=%s" % (k, clean(v)) for k, v in fields.items())
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def meta(md):
    return ",".join("%s:%s" % (k, clean(v)) for k, v in (md or ()))


# === server ===


def record(ctx, **extra):
    event = getattr(ctx, "_rpc_event", None)  # grpcio keeps :authority there only
    host = event.call_details.host.decode() if event is not None else "?"
    remaining = ctx.time_remaining()
    emit(
        "call",
        method=event.call_details.method.decode() if event is not None else "?",
        host=host,
        md=meta(ctx.invocation_metadata()),
        deadline="none" if remaining is None or remaining > 1e6 else "%.1f" % remaining,
        **extra,
    )


def echo(req, ctx):
    record(ctx, size=len(req))
    ctx.send_initial_metadata((("x-init", "i1"),))
    ctx.set_trailing_metadata((("x-trail", "t1"), ("x-trail-bin", b"\x00\xff")))
    return req


def fail(req, ctx):
    record(ctx)
    ctx.set_trailing_metadata((("x-why", "missing"),))
    ctx.abort(grpc.StatusCode.NOT_FOUND, "no such thing: " + req.decode())


def many(req, ctx):
    record(ctx)
    for i in range(int(req)):
        yield b"msg-%d" % i


def total(reqs, ctx):
    n, size, h = 0, 0, hashlib.sha256()
    for r in reqs:
        n, size = n + 1, size + len(r)
        h.update(r)
    record(ctx, count=n, size=size)
    return ("%d %d %s" % (n, size, h.hexdigest())).encode()


def chat(reqs, ctx):
    record(ctx)
    for r in reqs:
        yield b"re:" + r


def slow(req, ctx):
    """Waits (up to 3 s) for the call to end: its deadline, or the client cancelling."""
    t0, remaining = time.time(), ctx.time_remaining()
    while ctx.is_active() and time.time() - t0 < 3:
        time.sleep(0.02)
    waited = "%.1f" % (time.time() - t0)
    emit("slow", deadline="none" if remaining is None or remaining > 1e6 else "%.1f" % remaining, waited=waited)
    return b"late"


def serve(cert, key):
    raw = dict(request_deserializer=None, response_serializer=None)
    handlers = {
        "Echo": grpc.unary_unary_rpc_method_handler(echo, **raw),
        "Fail": grpc.unary_unary_rpc_method_handler(fail, **raw),
        "Many": grpc.unary_stream_rpc_method_handler(many, **raw),
        "Total": grpc.stream_unary_rpc_method_handler(total, **raw),
        "Chat": grpc.stream_stream_rpc_method_handler(chat, **raw),
        "Slow": grpc.unary_unary_rpc_method_handler(slow, **raw),
    }
    from concurrent import futures

    opts = [("grpc.max_receive_message_length", 16 << 20), ("grpc.max_send_message_length", 16 << 20)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=opts)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    if cert:
        creds = grpc.ssl_server_credentials(((open(key, "rb").read(), open(cert, "rb").read()),))
        port = server.add_secure_port("127.0.0.1:0", creds)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    emit("port", port=port)
    server.wait_for_termination()


# === client ===


def client(addr, ca, only):
    opts = [
        ("grpc.default_authority", "grpc.test"),
        ("grpc.max_receive_message_length", 16 << 20),
        ("grpc.max_send_message_length", 16 << 20),
        ("grpc.enable_retries", 0),
    ]
    if ca:  # TLS to ADDR, whose certificate names `localhost`
        creds = grpc.ssl_channel_credentials(root_certificates=open(ca, "rb").read())
        ch = grpc.secure_channel(addr, creds, options=opts + [("grpc.ssl_target_name_override", "localhost")])
    else:
        ch = grpc.insecure_channel(addr, options=opts)
    unary = lambda m: ch.unary_unary("/%s/%s" % (SERVICE, m))
    md = (("x-client", "c1"), ("x-client-bin", b"\x01\x02"))

    def run(name, fn):
        if only and name not in only:
            return
        try:
            payload, initial, trailing, code, details = fn()
        except grpc.FutureCancelledError:
            payload, initial, trailing, code, details = b"", (), (), grpc.StatusCode.CANCELLED, ""
        except grpc.RpcError as e:
            payload, initial, trailing = b"", e.initial_metadata(), e.trailing_metadata()
            code, details = e.code(), e.details()
        emit(
            "case",
            name=name,
            code=code.name,
            details=details or "",
            payload=payload,
            initial=meta(initial),
            trailing=meta(trailing),
        )

    def call(m, req, **kw):
        resp, c = unary(m).with_call(req, metadata=md, **kw)
        return resp, c.initial_metadata(), c.trailing_metadata(), c.code(), c.details()

    run("echo", lambda: call("Echo", b"hello", timeout=30))
    run("gzip", lambda: call("Echo", b"z" * 5000, compression=grpc.Compression.Gzip))
    run("fail", lambda: call("Fail", b"x"))
    run("unknown", lambda: call("Nope", b"x"))

    def many():
        it = ch.unary_stream("/%s/Many" % SERVICE)(b"500", metadata=md)
        got = list(it)
        ok = all(g == b"msg-%d" % i for i, g in enumerate(got))
        return ("%d %s" % (len(got), ok)).encode(), it.initial_metadata(), it.trailing_metadata(), it.code(), ""

    run("many", many)

    def concurrent():
        # 50 calls at once: 50 streams on the client's connection and on rampart's
        fs = [unary("Echo").future(b"c%d" % i, metadata=md) for i in range(50)]
        got = [f.result(timeout=10) for f in fs]
        ok = all(g == b"c%d" % i for i, g in enumerate(got))
        return ("%d %s" % (len(got), ok)).encode(), (), (), grpc.StatusCode.OK, ""

    run("concurrent", concurrent)

    chunks = [bytes([i % 251]) * (64 << 10) for i in range(48)]  # 3 MiB in 48 messages

    def total():
        resp, c = ch.stream_unary("/%s/Total" % SERVICE).with_call(iter(chunks), metadata=md)
        return resp, c.initial_metadata(), c.trailing_metadata(), c.code(), ""

    run("total", total)
    expect = hashlib.sha256(b"".join(chunks)).hexdigest()
    emit("expect", name="total", value="%d %d %s" % (len(chunks), 48 * (64 << 10), expect))

    big = bytes(range(256)) * (3 << 12)  # 3 MiB in one message, both ways
    run("big", lambda: (lambda r: (hashlib.sha256(r[0]).hexdigest().encode(),) + r[1:])(call("Echo", big)))
    emit("expect", name="big", value=hashlib.sha256(big).hexdigest())

    def chat():
        # ping-pong: each reply must come back before the next message is sent
        q, out = [], []
        cv = threading.Condition()

        def gen():
            for i in range(20):
                yield b"m%d" % i
                with cv:
                    if not cv.wait_for(lambda: len(out) > i, timeout=5):
                        return

        it = ch.stream_stream("/%s/Chat" % SERVICE)(gen(), metadata=md)
        for r in it:
            with cv:
                out.append(r)
                cv.notify_all()
        return b",".join(out), it.initial_metadata(), it.trailing_metadata(), it.code(), ""

    run("chat", chat)

    t0 = time.time()
    run("deadline", lambda: call("Slow", b"", timeout=0.5))
    emit("timing", name="deadline", value="%.1f" % (time.time() - t0))

    def cancel():
        f = unary("Slow").future(b"", metadata=md)
        time.sleep(0.3)
        f.cancel()
        return f.result()  # raises: CANCELLED

    run("cancel", cancel)
    # the server must see the cancel by itself, not because the channel closes: wait
    # longer than the test allows for it (1 s after the call started)
    if not only or "cancel" in only:
        time.sleep(1.0)
    ch.close()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve(*(sys.argv[2:4] if len(sys.argv) > 3 else (None, None)))
    else:
        ca = sys.argv[4] if sys.argv[3:4] == ["--ca"] else None
        client(sys.argv[2], ca, sys.argv[5:] if ca else sys.argv[3:])
