//! Proxies started concurrently from several test threads inherit only their own
//! listeners (the spawn lock around the FD_CLOEXEC toggling).

use std::collections::HashSet;
use std::thread;

use rampart_testkit::{haproxy_path, http_get, Proxy};

const CFG: &str = "\
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
frontend fe1
  bind fd@${fe1}
  bind fd@${fe2}
  http-request return status 200 content-type text/plain string ok
";

/// The `socket:[inode]` entries among the open fds of process `pid`.
fn sockets_of(pid: u32) -> HashSet<String> {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return HashSet::new() };
    entries
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|target| target.display().to_string())
        .filter(|target| target.starts_with("socket:"))
        .collect()
}

#[test]
fn concurrent_starts_do_not_leak_listeners() {
    let Some(haproxy) = haproxy_path() else { return eprintln!("note: haproxy not installed, skipped") };
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let haproxy = haproxy.clone();
            thread::spawn(move || {
                let proxy = Proxy::new(&haproxy).listener("fe1").listener("fe2").config(CFG).start().unwrap();
                // Before any client connects, the only sockets are inherited listeners.
                let sockets = sockets_of(proxy.pid());
                assert_eq!(http_get(proxy.addr("fe1"), "/").body, b"ok");
                assert_eq!(http_get(proxy.addr("fe2"), "/").body, b"ok");
                // Keep the process alive until every thread has looked.
                (sockets, proxy)
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let mut all = HashSet::new();
    for (sockets, _proxy) in &results {
        assert_eq!(sockets.len(), 2, "each child holds exactly its two listeners: {sockets:?}");
        for s in sockets {
            assert!(all.insert(s.clone()), "listener {s} is held by two children");
        }
    }
}
