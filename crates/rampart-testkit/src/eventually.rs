//! Waiting without fixed sleeps: [`patience`] (one knob, `RAMPART_TEST_PATIENCE_MS`) and
//! the [`eventually!`](crate::eventually) macro, after linkerd's integration helpers.

use std::time::Duration;

/// Environment variable holding the patience in milliseconds.
pub const PATIENCE_ENV: &str = "RAMPART_TEST_PATIENCE_MS";

const DEFAULT_PATIENCE: Duration = Duration::from_millis(5000);

/// How long the testkit waits for something that should happen: read timeouts,
/// `wait_*` helpers, [`eventually!`](crate::eventually). `RAMPART_TEST_PATIENCE_MS`
/// overrides the 5 s default (raise it on slow machines, lower it to fail fast).
pub fn patience() -> Duration {
    std::env::var(PATIENCE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_PATIENCE, Duration::from_millis)
}

/// Retries `cond` with a short backoff until it is true, and panics if it is still false
/// after [`patience`]. An optional format string and arguments explain the failure.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// let n = AtomicU32::new(0);
/// rampart_testkit::eventually!(n.fetch_add(1, Ordering::SeqCst) >= 3);
/// rampart_testkit::eventually!(n.load(Ordering::SeqCst) > 3, "counter stuck at {}", n.load(Ordering::SeqCst));
/// ```
#[macro_export]
macro_rules! eventually {
    ($cond:expr) => {
        $crate::eventually!($cond, "condition `{}` not true", stringify!($cond))
    };
    ($cond:expr, $($arg:tt)+) => {{
        let patience = $crate::patience();
        let start = ::std::time::Instant::now();
        let mut backoff = ::std::time::Duration::from_millis(1);
        loop {
            if $cond {
                break;
            }
            if start.elapsed() >= patience {
                panic!("eventually! gave up after {:?}: {}", patience, format!($($arg)+));
            }
            ::std::thread::sleep(backoff);
            backoff = ::std::cmp::min(backoff * 2, ::std::time::Duration::from_millis(50));
        }
    }};
}
