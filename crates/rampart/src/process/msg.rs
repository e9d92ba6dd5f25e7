//! Startup messages on stderr, in HAProxy's layout (`[ALERT]    (pid) : ...`).
//! HAProxy counterpart: `ha_alert()`, `ha_warning()`, `ha_notice()` and
//! `print_message()` in src/errors.c, and the per-file error summary of `init()`.
//!
//! Each message is written with one `write` of whole lines, so that stdout and stderr
//! may share a pipe (VTest does that) without lines being cut into each other.
//! As in HAProxy, quiet mode (`-q`, `quiet`) silences every startup message, alerts
//! included, unless `-V` is given; the exit status still tells what happened.

use std::io::{self, Write};
use std::sync::Arc;

use rampart_cfg::{Diag, Level};

/// Prints startup messages. Generic over the sink so that tests can read what it wrote.
pub struct Reporter<W: Write = io::Stderr> {
    out: W,
    pid: u32,
    quiet: bool,
    verbose: bool,
    diag: bool,
    /// The two notice lines shown before the first alert or warning: this version and
    /// the executable's path; `None` once shown.
    banner: Option<[String; 2]>,
    warned: bool,
    /// What is written is kept for `show startup-logs` (the process's own reporter).
    record: bool,
}

impl Reporter<io::Stderr> {
    /// A reporter on stderr for this process.
    pub fn stderr(version: &str) -> Self {
        let exe = std::env::current_exe().ok().map(|p| p.display().to_string());
        let mut rep = Reporter::new(io::stderr(), std::process::id(), version, exe.as_deref());
        rep.record = true;
        rep
    }
}

impl<W: Write> Reporter<W> {
    pub fn new(out: W, pid: u32, version: &str, exe: Option<&str>) -> Self {
        let mut banner = [format!("rampart version is {version}"), String::new()];
        if let Some(exe) = exe {
            banner[1] = format!("path to executable is {exe}");
        }
        Reporter {
            out,
            pid,
            quiet: false,
            verbose: false,
            diag: false,
            banner: Some(banner),
            warned: false,
            record: false,
        }
    }

    /// Quiet mode: nothing is printed unless verbose.
    pub fn set_quiet(&mut self, quiet: bool) {
        self.quiet = quiet;
    }

    /// Verbose mode (`-V`): messages are printed even when quiet.
    pub fn set_verbose(&mut self, verbose: bool) {
        self.verbose = verbose;
    }

    /// Diagnostic mode (`-dD`): diagnostic-level configuration messages are shown.
    pub fn set_diag(&mut self, diag: bool) {
        self.diag = diag;
    }

    /// Whether any warning was reported (printed or not), for `-dW` and `-c`.
    pub fn warned(&self) -> bool {
        self.warned
    }

    /// `[ALERT]    (pid) : <msg>`.
    pub fn alert(&mut self, msg: &str) {
        self.message(Level::Alert, "", msg);
    }

    /// `[ALERT]    (pid) : config : <msg>`: an alert about the configuration.
    pub fn config_alert(&mut self, msg: &str) {
        self.message(Level::Alert, "config : ", msg);
    }

    /// `[WARNING]  (pid) : <msg>`.
    pub fn warning(&mut self, msg: &str) {
        self.message(Level::Warning, "", msg);
    }

    /// `[WARNING]  (pid) : config : <msg>`.
    pub fn config_warning(&mut self, msg: &str) {
        self.message(Level::Warning, "config : ", msg);
    }

    /// `[NOTICE]   (pid) : <msg>`.
    pub fn notice(&mut self, msg: &str) {
        self.message(Level::Notice, "", msg);
    }

    /// A free-form line (`Note: ...`), subject to quiet mode like the others.
    pub fn note(&mut self, line: &str) {
        if self.enabled() {
            self.write(format!("{line}\n"));
        }
    }

    /// A configuration diagnostic, rendered by [`Diag::render`].
    pub fn config_diag(&mut self, diag: &Diag) {
        if diag.level == Level::Warning {
            self.warned = true;
        }
        if !self.enabled() || (diag.level == Level::Diag && !self.diag) {
            return;
        }
        let mut text = self.banner_if_first(diag.level);
        text.push_str(&diag.render(self.pid));
        self.write(text);
    }

    fn message(&mut self, level: Level, context: &str, msg: &str) {
        if level == Level::Warning {
            self.warned = true;
        }
        if !self.enabled() {
            return;
        }
        let mut text = self.banner_if_first(level);
        text.push_str(&self.line(level, &format!("{context}{msg}")));
        self.write(text);
    }

    fn enabled(&self) -> bool {
        !self.quiet || self.verbose
    }

    fn line(&self, level: Level, msg: &str) -> String {
        format!("{}({}) : {}\n", level.tag(), self.pid, msg.trim_end_matches('\n'))
    }

    /// The notice lines HAProxy prints before the first alert or warning.
    fn banner_if_first(&mut self, level: Level) -> String {
        if level < Level::Warning {
            return String::new();
        }
        let Some(lines) = self.banner.take() else {
            return String::new();
        };
        lines.iter().filter(|l| !l.is_empty()).map(|l| self.line(Level::Notice, l)).collect()
    }

    /// Records `diag` for `show startup-logs` without printing it: a message the
    /// parent process printed already (a worker's master, a daemon's first process).
    pub fn record_only(&self, diag: &Diag) {
        if self.record && (diag.level != Level::Diag || self.diag) {
            super::startup_log::record(&diag.render(self.pid));
        }
    }

    fn write(&mut self, text: String) {
        if self.record {
            super::startup_log::record(&text);
        }
        // Nothing sensible to do if stderr is gone; the exit status still tells.
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }

    /// The sink, for tests.
    pub fn sink(&self) -> &W {
        &self.out
    }
}

/// Reports the diagnostics of a configuration load, adding after the messages of each
/// file that had an alert HAProxy's `Error(s) found in configuration file : <file>`.
/// Returns `true` when there was an alert.
pub fn report_load<W: Write>(rep: &mut Reporter<W>, diags: &[Diag]) -> bool {
    let summary_done = diags.iter().any(|d| d.message.starts_with(ERRORS_IN_FILE));
    let mut current: Option<(Arc<str>, bool)> = None;
    for diag in diags {
        let file = diag.span.as_ref().map(|s| s.file.clone());
        if current.as_ref().map(|(f, _)| Some(f)) != Some(file.as_ref()) {
            close_file(rep, current.take(), summary_done);
            current = file.map(|f| (f, false));
        }
        if let Some((_, had_alert)) = current.as_mut() {
            *had_alert |= diag.level == Level::Alert;
        }
        rep.config_diag(diag);
    }
    close_file(rep, current, summary_done);
    diags.iter().any(|d| d.level == Level::Alert)
}

const ERRORS_IN_FILE: &str = "Error(s) found in configuration file : ";

fn close_file<W: Write>(rep: &mut Reporter<W>, file: Option<(Arc<str>, bool)>, summary_done: bool) {
    if let Some((file, true)) = file {
        if !summary_done {
            rep.config_alert(&format!("{ERRORS_IN_FILE}{file}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use rampart_cfg::Span;

    use super::*;

    fn reporter() -> Reporter<Vec<u8>> {
        Reporter::new(Vec::new(), 42, "2.6.12-rampart0.1.0", Some("/usr/sbin/rampart"))
    }

    fn text(rep: &Reporter<Vec<u8>>) -> String {
        String::from_utf8(rep.sink().clone()).unwrap()
    }

    fn at(file: &str, line: u32) -> Option<Span> {
        Some(Span::new(file.into(), line))
    }

    #[test]
    fn first_alert_is_preceded_by_the_version_and_path_notices() {
        let mut rep = reporter();
        rep.alert("[rampart.main()] Cannot chroot(/nonexistent).");
        rep.config_alert("Fatal errors found in configuration.");
        assert_eq!(
            text(&rep),
            "[NOTICE]   (42) : rampart version is 2.6.12-rampart0.1.0\n\
             [NOTICE]   (42) : path to executable is /usr/sbin/rampart\n\
             [ALERT]    (42) : [rampart.main()] Cannot chroot(/nonexistent).\n\
             [ALERT]    (42) : config : Fatal errors found in configuration.\n"
        );
    }

    #[test]
    fn notices_do_not_trigger_the_banner() {
        let mut rep = reporter();
        rep.notice("hello");
        rep.warning("careful\n");
        assert_eq!(
            text(&rep),
            "[NOTICE]   (42) : hello\n\
             [NOTICE]   (42) : rampart version is 2.6.12-rampart0.1.0\n\
             [NOTICE]   (42) : path to executable is /usr/sbin/rampart\n\
             [WARNING]  (42) : careful\n"
        );
        assert!(rep.warned());
    }

    #[test]
    fn quiet_silences_everything_but_still_counts_warnings() {
        let mut rep = reporter();
        rep.set_quiet(true);
        rep.warning("w");
        rep.alert("a");
        rep.note("Note: x");
        assert_eq!(text(&rep), "");
        assert!(rep.warned());
        rep.set_verbose(true);
        rep.alert("a");
        assert!(text(&rep).ends_with("[ALERT]    (42) : a\n"));
    }

    #[test]
    fn diag_level_needs_diag_mode() {
        let mut rep = reporter();
        let mut d = Diag::warning(at("a.cfg", 3), "suspicious");
        d.level = Level::Diag;
        rep.config_diag(&d);
        assert_eq!(text(&rep), "");
        rep.set_diag(true);
        rep.config_diag(&d);
        assert_eq!(text(&rep), "[DIAG]     (42) : config : parsing [a.cfg:3] : suspicious\n");
        assert!(!rep.warned());
    }

    #[test]
    fn load_report_summarises_each_file_with_alerts() {
        let mut rep = reporter();
        let diags = [
            Diag::alert(at("a.cfg", 2), "unknown keyword 'foo' in 'global' section"),
            Diag::warning(at("a.cfg", 5), "w"),
            Diag::warning(at("b.cfg", 1), "only a warning here"),
            Diag::alert(at("c.cfg", 6), "bad"),
            Diag::alert(None, "Proxy 'fe': unable to find required default_backend: 'nope'."),
        ];
        assert!(report_load(&mut rep, &diags));
        let out = text(&rep);
        let lines: Vec<&str> = out.lines().skip(2).collect();
        assert_eq!(
            lines,
            [
                "[ALERT]    (42) : config : parsing [a.cfg:2] : unknown keyword 'foo' in 'global' section",
                "[WARNING]  (42) : config : parsing [a.cfg:5] : w",
                "[ALERT]    (42) : config : Error(s) found in configuration file : a.cfg",
                "[WARNING]  (42) : config : parsing [b.cfg:1] : only a warning here",
                "[ALERT]    (42) : config : parsing [c.cfg:6] : bad",
                "[ALERT]    (42) : config : Error(s) found in configuration file : c.cfg",
                "[ALERT]    (42) : config : Proxy 'fe': unable to find required default_backend: 'nope'.",
            ]
        );
    }

    #[test]
    fn load_report_does_not_repeat_a_summary_the_loader_wrote() {
        let mut rep = reporter();
        let diags =
            [Diag::alert(at("a.cfg", 2), "bad"), Diag::alert(None, "Error(s) found in configuration file : a.cfg")];
        assert!(report_load(&mut rep, &diags));
        assert_eq!(text(&rep).matches("Error(s) found").count(), 1);
    }

    #[test]
    fn load_report_without_alerts() {
        let mut rep = reporter();
        assert!(!report_load(&mut rep, &[Diag::warning(at("a.cfg", 1), "w")]));
        assert!(!text(&rep).contains("Error(s)"));
        assert!(rep.warned());
    }
}
