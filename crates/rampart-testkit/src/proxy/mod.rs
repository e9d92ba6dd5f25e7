//! Starting the binary under test (rampart or haproxy, same interface): [`Proxy`] binds
//! listeners in the test process and passes them as `fd@N`, fills in `${NAME}`
//! placeholders, writes the configuration to a scratch directory and runs
//! `<binary> -db -f test.cfg`; [`Running`] is the live process, killed on drop.
//! [`check`] runs `-c`. VTest's `haproxy` blocks (`vtc_haproxy.c`) work the same way.

mod binary;
mod output;
mod spawn;
mod template;

pub use binary::{
    binary_under_test, haproxy_or_skip, haproxy_path, haproxy_required, testing_another_binary, BINARY_ENV,
    HAPROXY_ENV, REQUIRE_HAPROXY_ENV,
};
pub use output::Output;
pub use spawn::spawn_guarded;

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use spawn::spawn_inheriting;
pub(crate) use spawn::TempDir;
use template::{substitute, Vars};

/// Default time a started process must survive to count as started.
const DEFAULT_STARTUP_WINDOW: Duration = Duration::from_millis(150);

/// Name of the configuration file inside the scratch directory.
const CONFIG_FILE: &str = "test.cfg";

/// A proxy process to start: binary, listeners, backends, configuration, arguments.
///
/// Placeholders in the configuration (replaced by the testkit; any other `${...}` is left
/// for the binary's own environment-variable expansion):
///
/// | placeholder | value |
/// |---|---|
/// | `${fe1}` | fd number of listener `fe1` (write `bind fd@${fe1}`) |
/// | `${fe1_addr}`, `${fe1_port}` | its IP (`127.0.0.1`) and port |
/// | `${s1_addr}`, `${s1_port}` | IP and port of backend `s1` |
/// | `${testdir}` | the scratch directory (for sockets, maps, pid files) |
///
/// The same names are also set as environment variables of the child.
///
/// ```no_run
/// use rampart_testkit::{HttpBackend, Proxy, http_get};
/// let s1 = HttpBackend::start("s1");
/// let proxy = Proxy::new("/usr/sbin/haproxy")
///     .listener("fe1")
///     .backend("s1", s1.addr())
///     .config(
///         "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
///          frontend fe1\n  bind fd@${fe1}\n  default_backend be1\n\
///          backend be1\n  server s1 ${s1_addr}:${s1_port}\n",
///     )
///     .start()
///     .expect("proxy starts");
/// assert_eq!(http_get(proxy.addr("fe1"), "/").body, b"s1");
/// ```
pub struct Proxy {
    binary: PathBuf,
    listeners: Vec<(String, TcpListener)>,
    backends: Vec<(String, SocketAddr)>,
    config: String,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    startup_window: Duration,
}

impl Proxy {
    /// A proxy running `binary` (rampart or haproxy).
    pub fn new(binary: impl Into<PathBuf>) -> Proxy {
        Proxy {
            binary: binary.into(),
            listeners: Vec::new(),
            backends: Vec::new(),
            config: String::new(),
            args: Vec::new(),
            envs: Vec::new(),
            startup_window: DEFAULT_STARTUP_WINDOW,
        }
    }

    /// Binds a listener on `127.0.0.1:0` now, in the test process, and names it `name` in
    /// the configuration (`bind fd@${name}`). Connections made before the proxy accepts
    /// wait in the backlog, so tests never race the proxy's startup.
    ///
    /// The test process closes its own copy right after the spawn: the socket then lives
    /// exactly as long as the proxy keeps it, so once the proxy closes it (soft stop,
    /// exit, crash) new connections are refused instead of hanging in a backlog.
    ///
    /// # Panics
    /// If the loopback listener cannot be bound.
    pub fn listener(mut self, name: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("testkit: bind a loopback listener");
        self.listeners.push((name.to_string(), listener));
        self
    }

    /// Names a server address for the configuration: `${name_addr}`, `${name_port}`.
    pub fn backend(mut self, name: &str, addr: SocketAddr) -> Proxy {
        self.backends.push((name.to_string(), addr));
        self
    }

    /// Sets the configuration text (with placeholders).
    pub fn config(mut self, text: &str) -> Proxy {
        self.config = text.to_string();
        self
    }

    /// Appends a command-line argument after `-db -f test.cfg` (relative paths are
    /// relative to the scratch directory, the child's working directory).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Proxy {
        self.args.push(arg.into());
        self
    }

    /// Sets an environment variable of the child.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Proxy {
        self.envs.push((name.into(), value.into()));
        self
    }

    /// How long the process must stay alive for [`Proxy::start`] to succeed (default
    /// 150 ms). A configuration error makes the binary exit well within it.
    pub fn startup_window(mut self, window: Duration) -> Proxy {
        self.startup_window = window;
        self
    }

    /// The address of listener `name`, known before the start.
    pub fn listener_addr(&self, name: &str) -> Option<SocketAddr> {
        self.listeners.iter().find(|(n, _)| n == name).and_then(|(_, l)| l.local_addr().ok())
    }

    /// The configuration as it will be written, placeholders for `testdir` left as is.
    pub fn rendered_config(&self) -> String {
        substitute(&self.config, &self.vars(None))
    }

    fn vars(&self, dir: Option<&Path>) -> Vars {
        let mut vars = Vars::default();
        for (name, listener) in &self.listeners {
            vars.set(name.clone(), listener.as_raw_fd().to_string());
            if let Ok(addr) = listener.local_addr() {
                set_addr_vars(&mut vars, name, addr);
            }
        }
        for (name, addr) in &self.backends {
            set_addr_vars(&mut vars, name, *addr);
        }
        if let Some(dir) = dir {
            vars.set("testdir", dir.display().to_string());
        }
        vars
    }

    /// Writes the configuration into a fresh scratch directory and prepares the command
    /// (`args` first, then the user's extra arguments). The child runs in that directory
    /// and gets the file as `-f test.cfg`, so diagnostics read `parsing [test.cfg:N]`
    /// whatever the directory (stable expected outputs, comparable across binaries).
    fn prepare(&self, args: &[&str]) -> io::Result<(TempDir, String, Command)> {
        let dir = TempDir::new()?;
        let vars = self.vars(Some(dir.path()));
        let config = substitute(&self.config, &vars);
        std::fs::write(dir.path().join(CONFIG_FILE), &config)?;
        let mut cmd = Command::new(&self.binary);
        cmd.args(args).arg("-f").arg(CONFIG_FILE).args(&self.args);
        cmd.current_dir(dir.path()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for (name, value) in vars.iter() {
            cmd.env(name, value);
        }
        for (name, value) in &self.envs {
            cmd.env(name, value);
        }
        Ok((dir, config, cmd))
    }

    /// Starts `<binary> -db -f test.cfg <args>` with the listeners inherited, then waits the
    /// startup window. Fails with the captured output if the process exits meanwhile.
    pub fn start(self) -> Result<Running, StartError> {
        let (dir, config, mut cmd) = self.prepare(&["-db"])?;
        // Its own process group, so dropping a master (-W) also kills its workers.
        cmd.process_group(0);
        let fds: Vec<_> = self.listeners.iter().map(|(_, l)| l.as_raw_fd()).collect();
        let mut child = spawn_inheriting(&mut cmd, &fds)?;
        let output = Output::capture(&mut child);
        let addrs = self.listeners.iter().filter_map(|(n, l)| Some((n.clone(), l.local_addr().ok()?))).collect();
        // The child has its copies now (spawn returns after exec); ours would only keep
        // the ports open after the proxy closed them.
        drop(self.listeners);
        let mut running = Running { child, exited: None, addrs, output, config, dir };
        if let Some(status) = running.wait_exit(self.startup_window) {
            running.output.wait_closed(Duration::from_secs(1));
            return Err(StartError::Exited {
                status,
                output: running.output.text(),
                config: std::mem::take(&mut running.config),
            });
        }
        Ok(running)
    }

    /// Runs `<binary> -c -f test.cfg <args>` (configuration check) to completion.
    /// The process is killed if it runs longer than twice the [`patience`](crate::patience).
    pub fn check(self) -> io::Result<CheckOutput> {
        let (_dir, _config, mut cmd) = self.prepare(&["-c"])?;
        let fds: Vec<_> = self.listeners.iter().map(|(_, l)| l.as_raw_fd()).collect();
        let mut child = spawn_inheriting(&mut cmd, &fds)?;
        let output = Output::capture(&mut child);
        let status = wait_timeout(&mut child, crate::patience() * 2)?;
        let status = match status {
            Some(status) => status,
            None => {
                let _ = child.kill();
                child.wait()?
            }
        };
        output.wait_closed(Duration::from_secs(1));
        Ok(CheckOutput { code: exit_code(status), stdout: output.stdout(), stderr: output.stderr() })
    }
}

fn set_addr_vars(vars: &mut Vars, name: &str, addr: SocketAddr) {
    vars.set(format!("{name}_addr"), addr.ip().to_string());
    vars.set(format!("{name}_port"), addr.port().to_string());
}

/// Exit code as a shell reports it: the code, or 128 + signal number.
fn exit_code(status: ExitStatus) -> i32 {
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Polls `child` until it exits or `timeout` passes.
fn wait_timeout(child: &mut Child, timeout: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Result of a configuration check (`-c`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOutput {
    /// Exit code (128 + signal if killed).
    pub code: i32,
    /// Everything printed on stdout.
    pub stdout: String,
    /// Everything printed on stderr.
    pub stderr: String,
}

impl CheckOutput {
    /// The `[ALERT]` and `[WARNING]` lines of stderr (with their indented continuation
    /// lines), the process id masked as `(PID)`: the part of a check's output that two
    /// binaries, or two runs, should agree on.
    pub fn diagnostics(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut keep = false;
        for line in self.stderr.lines() {
            if line.starts_with('[') {
                keep = line.starts_with("[ALERT]") || line.starts_with("[WARNING]");
                if keep {
                    out.push(mask_pid(line));
                }
            } else if keep && line.starts_with(' ') {
                out.push(line.to_string());
            }
        }
        out
    }
}

/// `[ALERT]    (4121) : ...` -> `[ALERT]    (PID) : ...`.
fn mask_pid(line: &str) -> String {
    let Some(open) = line.find('(') else { return line.to_string() };
    match line[open + 1..].find(')') {
        Some(len) if len > 0 && line[open + 1..open + 1 + len].bytes().all(|b| b.is_ascii_digit()) => {
            format!("{}(PID){}", &line[..open], &line[open + 1 + len + 1..])
        }
        _ => line.to_string(),
    }
}

/// Runs `<binary> -c -f test.cfg` on `config` (placeholders: `${testdir}` only).
///
/// # Panics
/// If the binary cannot be run at all.
pub fn check(binary: impl Into<PathBuf>, config: &str) -> CheckOutput {
    let binary = binary.into();
    match Proxy::new(&binary).config(config).check() {
        Ok(out) => out,
        Err(e) => panic!("cannot run {} -c: {e}", binary.display()),
    }
}

/// Why [`Proxy::start`] failed. Its `Debug` prints like `Display`, so
/// `.start().unwrap()` shows the process output and configuration readably.
pub enum StartError {
    /// Writing the configuration or spawning the binary failed.
    Io(io::Error),
    /// The process exited during the startup window.
    Exited {
        /// How it exited.
        status: ExitStatus,
        /// Its stdout and stderr.
        output: String,
        /// The configuration it was given, placeholders substituted.
        config: String,
    },
}

impl From<io::Error> for StartError {
    fn from(e: io::Error) -> Self {
        StartError::Io(e)
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::Io(e) => write!(f, "cannot start the proxy: {e}"),
            StartError::Exited { status, output, config } => write!(
                f,
                "the proxy exited during startup ({status})\n--- output ---\n{output}\n--- config ---\n{config}"
            ),
        }
    }
}

impl fmt::Debug for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for StartError {}

/// A started proxy process. Dropping it kills the process group (SIGKILL); if the test
/// is panicking, the process output and configuration are printed first.
pub struct Running {
    child: Child,
    /// Set once the child was reaped; from then on its pid may belong to someone else.
    exited: Option<ExitStatus>,
    addrs: Vec<(String, SocketAddr)>,
    output: Output,
    config: String,
    dir: TempDir,
}

impl Running {
    /// The address of listener `name` (connect here).
    ///
    /// # Panics
    /// If no listener has that name.
    pub fn addr(&self, name: &str) -> SocketAddr {
        match self.addrs.iter().find(|(n, _)| n == name) {
            Some((_, addr)) => *addr,
            None => panic!("no listener named {name:?} (declare it with Proxy::listener)"),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` to the process (not to its group). Fails once the process has been
    /// reaped, since its pid may have been reused.
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        if self.exited.is_some() {
            return Err(io::Error::new(io::ErrorKind::NotFound, "the process already exited"));
        }
        kill(self.nix_pid(), signal)?;
        Ok(())
    }

    /// Waits up to `timeout` for the process to exit; its status, or `None` if it is
    /// still running.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = wait_timeout(&mut self.child, timeout).ok().flatten();
        }
        self.exited
    }

    /// Everything the process printed so far (stdout and stderr interleaved).
    pub fn output(&self) -> String {
        self.output.text()
    }

    /// The live output capture (separate stdout/stderr, waiting for a line).
    pub fn captured(&self) -> &Output {
        &self.output
    }

    /// Waits until the output contains `needle`; false if not within `timeout`.
    pub fn wait_output(&self, needle: &str, timeout: Duration) -> bool {
        self.output.wait_for(needle, timeout)
    }

    /// The configuration the process was given, placeholders substituted.
    pub fn config(&self) -> &str {
        &self.config
    }

    /// The scratch directory (its working directory; `${testdir}` in the configuration).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn nix_pid(&self) -> Pid {
        Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(i32::MAX))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exited.is_none() {
            // The child is not reaped, so its pid (and group id) is still ours.
            let _ = killpg(self.nix_pid(), Signal::SIGKILL);
            let _ = self.child.kill();
            self.exited = self.child.wait().ok();
        }
        if thread::panicking() {
            self.output.wait_closed(Duration::from_millis(200));
            eprintln!(
                "--- proxy {} output ---\n{}\n--- proxy config ---\n{}",
                self.child.id(),
                self.output.text(),
                self.config
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_keep_alerts_and_warnings_with_pid_masked() {
        let out = CheckOutput {
            code: 1,
            stdout: String::new(),
            stderr: "[NOTICE]   (12) : haproxy version is 2.6\n[ALERT]    (12) : config : parsing [test.cfg:3] : bad\n  hint: fix it\n[WARNING]  (12) : w (x)\n".to_string(),
        };
        assert_eq!(
            out.diagnostics(),
            vec![
                "[ALERT]    (PID) : config : parsing [test.cfg:3] : bad",
                "  hint: fix it",
                "[WARNING]  (PID) : w (x)"
            ]
        );
    }
}
