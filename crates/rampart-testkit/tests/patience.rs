//! `RAMPART_TEST_PATIENCE_MS` and `eventually!`. One test only: it sets the variable
//! for its whole process, which must not race with other tests reading it.

use std::time::{Duration, Instant};

use rampart_testkit::{eventually, patience, RawClient, PATIENCE_ENV};

#[test]
fn patience_comes_from_the_environment() {
    if std::env::var_os(PATIENCE_ENV).is_none() {
        assert_eq!(patience(), Duration::from_millis(5000), "default");
    }
    std::env::set_var(PATIENCE_ENV, "300");
    assert_eq!(patience(), Duration::from_millis(300));

    // A condition that becomes true is waited for.
    let start = Instant::now();
    eventually!(start.elapsed() > Duration::from_millis(30));

    // One that never does fails after the patience, with the message given.
    let start = Instant::now();
    let failed = std::panic::catch_unwind(|| eventually!(1 + 1 == 3, "arithmetic is {}", "stable"));
    let elapsed = start.elapsed();
    let message = failed.expect_err("must give up").downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("arithmetic is stable"), "{message}");
    assert!(elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(3), "{elapsed:?}");

    // Client reads time out after the patience too.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client = RawClient::connect(listener.local_addr().unwrap()).unwrap();
    let start = Instant::now();
    let err = client.read_response().unwrap_err();
    assert!(matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "{err}");
    assert!(start.elapsed() >= Duration::from_millis(250), "{:?}", start.elapsed());
}
