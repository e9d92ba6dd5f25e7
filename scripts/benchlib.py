"""What the bench scripts share: a free loopback port, waiting for a listener, a
process's CPU time and resident memory read from /proc, and the configurations of the
benches that proxy keep-alive requests to an nginx answering a fixed body. Imported by
the scripts beside it (`python3 scripts/<bench>.py` puts this directory on the import
path)."""

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


# nginx answering `body` on `/` and the files of `{tmp}/www` (as text/plain) under
# `/www/`, keep-alive without limits; its temporary files in `tmp`
NGINX_FIXED = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path {tmp}/cb; proxy_temp_path {tmp}/px; fastcgi_temp_path {tmp}/fc;
    uwsgi_temp_path {tmp}/uw; scgi_temp_path {tmp}/sc;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location = / {{ return 200 "{body}"; }}
        location /www/ {{ root {tmp}; }}
    }}
}}
"""

# proxybench.py's http frontend on one thread; `defaults` and `frontend`: extra lines
PROXY_HTTP = """\
global
    nbthread 1
    maxconn 1000

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s
{defaults}
frontend fe_http
    bind 127.0.0.1:{port}{bind}
{frontend}    default_backend be_http

backend be_http
    http-reuse safe
    server nginx 127.0.0.1:{backend}
"""


def nginx_fixed_conf(tmp, port, body):
    """[NGINX_FIXED] for a backend on `port`."""
    return NGINX_FIXED.format(tmp=tmp, port=port, body=body)


def proxy_http_cfg(port, backend, defaults="", frontend="", bind=""):
    """[PROXY_HTTP]: the proxy on `port`, its server on `backend`; `bind`: more words
    for the bind line (` proto h2`, ` ssl crt ...`)."""
    return PROXY_HTTP.format(port=port, backend=backend, defaults=defaults, frontend=frontend, bind=bind)
