//! Capture of a child's stdout and stderr by two reader threads into one shared buffer,
//! interleaved in arrival order, with each stream also kept apart.

use std::io::Read;
use std::process::Child;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::sync::lock;

#[derive(Default)]
struct Buffers {
    all: Vec<u8>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// Pipes still open (2 while both reader threads run).
    open: u8,
}

/// What a proxy process printed so far; cheap to clone, shared with its reader threads.
#[derive(Clone, Default)]
pub struct Output {
    inner: Arc<(Mutex<Buffers>, Condvar)>,
}

#[derive(Clone, Copy)]
enum Which {
    Stdout,
    Stderr,
}

impl Output {
    /// Takes the child's piped stdout and stderr and starts a reader thread for each.
    pub(crate) fn capture(child: &mut Child) -> Output {
        let output = Output::default();
        if let Some(out) = child.stdout.take() {
            output.spawn_reader(out, Which::Stdout);
        }
        if let Some(err) = child.stderr.take() {
            output.spawn_reader(err, Which::Stderr);
        }
        output
    }

    fn spawn_reader(&self, mut pipe: impl Read + Send + 'static, which: Which) {
        lock(&self.inner.0).open += 1;
        let output = self.clone();
        let spawned = thread::Builder::new().name("proxy-output".to_string()).spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                output.append(which, &buf[..n]);
            }
            output.close_pipe();
        });
        if spawned.is_err() {
            self.close_pipe();
        }
    }

    fn append(&self, which: Which, data: &[u8]) {
        let mut b = lock(&self.inner.0);
        b.all.extend_from_slice(data);
        match which {
            Which::Stdout => b.stdout.extend_from_slice(data),
            Which::Stderr => b.stderr.extend_from_slice(data),
        }
        self.inner.1.notify_all();
    }

    fn close_pipe(&self) {
        let mut b = lock(&self.inner.0);
        b.open = b.open.saturating_sub(1);
        self.inner.1.notify_all();
    }

    /// Everything printed so far, stdout and stderr interleaved (lossy UTF-8).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.inner.0).all).into_owned()
    }

    /// What went to stdout so far.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&lock(&self.inner.0).stdout).into_owned()
    }

    /// What went to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&lock(&self.inner.0).stderr).into_owned()
    }

    /// Waits until the output contains `needle`; false if it does not within `timeout`.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> bool {
        self.wait(timeout, |b| String::from_utf8_lossy(&b.all).contains(needle))
    }

    /// Waits until both pipes are closed (the process and its children are gone).
    pub(crate) fn wait_closed(&self, timeout: Duration) -> bool {
        self.wait(timeout, |b| b.open == 0)
    }

    fn wait(&self, timeout: Duration, done: impl Fn(&Buffers) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let mut b = lock(&self.inner.0);
        loop {
            if done(&b) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            b = match self.inner.1.wait_timeout(b, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}
