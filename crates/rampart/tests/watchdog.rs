//! The watchdog through the binary: `show threads` and `show activity` on the stats
//! socket, a worker loop kept busy by the test-only `debug dev loop` (enabled by
//! `RAMPART_TEST_DEBUG_DEV` in the environment, absent otherwise) is reported after
//! 100 ms of CPU, and one stuck for more than a second aborts the process, as HAProxy's
//! watchdog kills it.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use rampart_testkit::{Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");
const DEBUG_DEV_ENV: &str = "RAMPART_TEST_DEBUG_DEV";

const CFG: &str = "global\n  nbthread 2\n  stats socket ${testdir}/admin.sock level admin\n\
                   defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
                   frontend fe1\n  bind fd@${fe1}\n  http-request return status 200\n";

fn start(debug_dev: bool) -> Running {
    let mut proxy = Proxy::new(RAMPART).listener("fe1").config(CFG);
    if debug_dev {
        proxy = proxy.env(DEBUG_DEV_ENV, "1");
    }
    proxy.start().expect("rampart starts")
}

/// The answer of the admin socket to one command.
fn cli(proxy: &Running, cmd: &str) -> String {
    let path = proxy.dir().join("admin.sock");
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut s = loop {
        match UnixStream::connect(&path) {
            Ok(s) => break s,
            Err(e) if Instant::now() > deadline => panic!("admin socket: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[test]
fn show_threads_and_show_activity() {
    let proxy = start(false);
    let threads = cli(&proxy, "show threads");
    assert!(threads.contains("  Thread 1 : id=") && threads.contains("  Thread 2 : id="), "{threads}");
    assert!(threads.contains("stuck=0") && threads.contains("cpu_ns: now="), "{threads}");
    // an idle thread runs nothing labelled
    assert!(threads.contains("running: no labelled code ("), "{threads}");
    let activity = cli(&proxy, "show activity");
    assert!(activity.starts_with("thread_id: 0 (1..2)\ndate_now: "), "{activity}");
    assert!(activity.contains("\nloops: ") && activity.contains("\ncpu_ns: "), "{activity}");
    // the test-only trigger does not exist without its environment variable
    assert!(cli(&proxy, "debug dev loop 50").starts_with("Unknown command"));
}

#[test]
fn a_stuck_loop_is_reported_then_kills_the_process() {
    let mut proxy = start(true);
    assert_eq!(cli(&proxy, "debug dev loop 400 2"), "\n");
    assert!(proxy.wait_output("ms of CPU (turn ", Duration::from_secs(5)), "no report: {}", proxy.output());
    let out = proxy.output();
    assert!(
        out.contains("watchdog: thread 2 (tid ") && out.contains("has not come back to its event loop for "),
        "{out}"
    );
    // the report says what the thread was running
    assert!(out.contains("), running the test trigger 'debug dev loop'."), "{out}");
    // a loop that came back: the process goes on
    std::thread::sleep(Duration::from_millis(600));
    assert!(proxy.wait_exit(Duration::from_millis(10)).is_none(), "{}", proxy.output());
    assert!(cli(&proxy, "show threads").contains("  Thread 2 : id="));
    assert!(!proxy.output().contains("aborting"), "{}", proxy.output());
    // stuck for longer than a second: aborted
    assert_eq!(cli(&proxy, "debug dev loop 5000 1"), "\n");
    let status = proxy.wait_exit(Duration::from_secs(5)).expect("the watchdog aborts the process");
    assert_eq!(status.signal(), Some(libc::SIGABRT), "{status:?}");
    assert!(proxy.output().contains("watchdog: thread 1 (tid "), "{}", proxy.output());
    assert!(proxy.output().contains("aborting the process"), "{}", proxy.output());
    assert!(
        proxy.output().contains("running the test trigger 'debug dev loop': aborting the process."),
        "{}",
        proxy.output()
    );
}
