//! The haproxy-compatible command line: argv -> [`Cli`]. Pure (no I/O, no exit), so
//! every flag is unit-tested. HAProxy counterpart: `init_args()` and `usage()` in
//! src/haproxy.c.
//!
//! HAProxy matches flags by their first letters (`-dfoo` is `-d`, `-cX` is `-c`,
//! `-vfoo` is `-v`) and any other flag takes one value (`-f <file>`, `-p <pidfile>` ...).
//! rampart keeps that grammar so existing scripts and unit files keep working. Flags
//! rampart does not have yet (`-dR`, `-dr`, `-dK` ...)
//! are recorded in [`Cli::unsupported`] so that startup refuses them with a clear
//! message instead of running in a different mode than asked.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// What the process was asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Mode {
    /// Load, bind and serve (the default).
    #[default]
    Run,
    /// `-c`: check the configuration and exit.
    Check,
    /// `-cc <expr>`: evaluate a condition and exit 0 (true), 1 (false) or 2 (error).
    CheckCondition(String),
}

/// Which signal `-sf`/`-st` sends to the old processes once this one is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OldPidsSignal {
    /// `-sf`: SIGUSR1, finish the current connections then exit.
    #[default]
    Finish,
    /// `-st`: SIGTERM, stop now.
    Terminate,
}

/// A flag HAProxy has and rampart does not support yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The flag as typed (`-W`, `-x` ...).
    pub flag: String,
    /// What it does in HAProxy, for the error message.
    pub what: &'static str,
}

/// The parsed command line of a run, check or condition check.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cli {
    /// `argv[0]` as typed; HAProxy prefixes some startup alerts with `[<argv0>.main()]`.
    pub argv0: String,
    pub mode: Mode,
    /// `-f` values and the words after `--`, in command-line order.
    pub cfgfiles: Vec<PathBuf>,
    /// `-d`: foreground with debug output.
    pub debug: bool,
    /// `-db`: foreground, ignoring `daemon` in the configuration.
    pub foreground: bool,
    /// `-D`: daemon (wins over `-d`/`-db`, as in HAProxy).
    pub daemon: bool,
    /// `-q`: no messages at startup.
    pub quiet: bool,
    /// `-V`: messages even when quiet.
    pub verbose: bool,
    /// `-dD`: also show diagnostic-level messages about the configuration.
    pub diag: bool,
    /// `-dW`: refuse to start if any warning was emitted.
    pub zero_warning: bool,
    /// `-dV`: servers with `ssl` and no `verify` are not verified (as
    /// `ssl-server-verify none`).
    pub no_server_verify: bool,
    /// `-p <pidfile>` (wins over `pidfile` in `global`).
    pub pidfile: Option<PathBuf>,
    /// `-n <maxconn>`: global maxconn (wins over `maxconn` in `global`).
    pub maxconn: Option<u32>,
    /// `-N <maxpconn>`: default maxconn of frontends that set none.
    pub maxpconn: Option<u32>,
    /// `-m <megs>`: memory limit of the process.
    pub memmax_mb: Option<u64>,
    /// `-C <dir>`: change to this directory before loading the files.
    pub chdir: Option<PathBuf>,
    /// `-L <name>`: local peer name (default: the host name).
    pub localpeer: Option<String>,
    /// `-W` (or `-Ws`): master-worker mode.
    pub master_worker: bool,
    /// `-Ws`: master-worker mode telling systemd about its state (`NOTIFY_SOCKET`).
    pub systemd: bool,
    /// `-S <addr>[,<options>]`: master CLI listeners, as typed.
    pub master_cli: Vec<String>,
    /// `-sf`/`-st` pids, in order.
    pub oldpids: Vec<i32>,
    pub oldpids_signal: OldPidsSignal,
    /// `-x <path>`: the stats socket of the old process to fetch listening sockets
    /// from (`_getsocks`) before binding.
    pub old_unixsocket: Option<PathBuf>,
    /// Warnings about the command line itself (a repeated `-x`), printed at startup.
    pub warnings: Vec<String>,
    /// Flags HAProxy accepts and rampart does not support yet; startup refuses them.
    pub unsupported: Vec<Unsupported>,
}

/// The outcome of a successful parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Run, check the configuration or check a condition.
    Run(Box<Cli>),
    /// `-v` (`verbose: false`) or `-vv` (`verbose: true`): print and exit 0. Like
    /// HAProxy, the first `-v` wins over whatever follows it.
    Version { verbose: bool },
    /// `-dMhelp`: explain the memory debugging flag and exit 0.
    PoolDebugHelp,
    /// `--migrate <file>`: print the file with its HAProxy 1.x keywords rewritten (not
    /// an HAProxy flag).
    Migrate(PathBuf),
}

/// Why the command line was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// Print the usage (after `alert`, if any) and exit 1.
    Usage { alert: Option<String> },
    /// Print this alert and exit 1, without the usage.
    Fatal(String),
}

impl CliError {
    fn usage() -> Self {
        CliError::Usage { alert: None }
    }
}

/// Parses `argv` (including `argv[0]`).
pub fn parse(argv: &[OsString]) -> Result<Parsed, CliError> {
    let mut cli =
        Cli { argv0: argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default(), ..Cli::default() };
    let mut args = argv.iter().skip(1).peekable();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        let Some(flag) = text.strip_prefix('-') else {
            return Err(CliError::usage());
        };
        if flag == "-migrate" {
            let file = args.next().ok_or_else(|| CliError::Usage { alert: Some("--migrate expects a file".into()) })?;
            return Ok(Parsed::Migrate(PathBuf::from(file)));
        }
        let flag = flag.to_owned();
        match parse_simple_flag(&flag, &mut cli) {
            Some(Step::Done) => continue,
            Some(Step::Exit(parsed)) => return Ok(parsed),
            None => {}
        }
        if flag == "-" {
            cli.cfgfiles.extend(args.by_ref().map(PathBuf::from));
            break;
        }
        if flag.starts_with("cc") {
            let expr = args.next().ok_or_else(CliError::usage)?;
            cli.mode = Mode::CheckCondition(expr.to_string_lossy().into_owned());
        } else if flag.starts_with('x') {
            let path = args
                .next()
                .ok_or_else(|| CliError::Usage { alert: Some("Unix socket path expected with the -x flag".into()) })?;
            if cli.old_unixsocket.is_some() {
                cli.warnings.push("-x option already set, overwriting the value".into());
            }
            cli.old_unixsocket = Some(PathBuf::from(path));
        } else if flag.starts_with('S') {
            let bind = args.next().ok_or_else(|| CliError::Usage {
                alert: Some("Socket and optional bind parameters expected with the -S flag".into()),
            })?;
            cli.master_cli.push(bind.to_string_lossy().into_owned());
        } else if flag.starts_with("sf") || flag.starts_with("st") {
            cli.oldpids_signal = if flag.starts_with("sf") { OldPidsSignal::Finish } else { OldPidsSignal::Terminate };
            while let Some(next) = args.next_if(|a| !a.to_string_lossy().starts_with('-')) {
                cli.oldpids.push(parse_oldpid(&flag, next)?);
            }
        } else {
            let value = args.next().ok_or_else(CliError::usage)?;
            parse_valued_flag(&flag, value, &mut cli)?;
        }
    }
    Ok(Parsed::Run(Box::new(cli)))
}

/// What a flag without a value did.
enum Step {
    Done,
    /// `-v`, `-vv`, `-dMhelp`: answer at once, ignoring the rest.
    Exit(Parsed),
}

/// Flags that take no value, in HAProxy's matching order. `None`: not one of them.
fn parse_simple_flag(flag: &str, cli: &mut Cli) -> Option<Step> {
    let mut chars = flag.chars();
    let first = chars.next()?;
    let second = chars.next();
    match (first, second) {
        ('v', next) => return Some(Step::Exit(Parsed::Version { verbose: next == Some('v') })),
        // COMPAT: `-de`/`-dp`/`-dk`/`-dv` pick a poller, `-dS` disables splicing, `-dG`
        // getaddrinfo(), `-dL` lists loaded libraries: debugging aids that do not change
        // what rampart serves.
        ('d', Some('e' | 'p' | 'k' | 'v' | 'S' | 'G' | 'L')) => {}
        ('d', Some('V')) => cli.no_server_verify = true,
        ('d', Some('M')) if &flag[2..] == "help" => return Some(Step::Exit(Parsed::PoolDebugHelp)),
        // COMPAT: `-dM[...]` tunes HAProxy's memory pools; rampart has none. Accepted because
        // HAProxy's regression-test runner passes `-dM` by default.
        ('d', Some('M')) => {}
        ('d', Some('R')) => unsupported(cli, flag, "running without SO_REUSEPORT"),
        ('d', Some('r')) => unsupported(cli, flag, "ignoring server address resolution failures"),
        ('d', Some('K')) => unsupported(cli, flag, "dumping registered keywords"),
        ('V', _) => cli.verbose = true,
        ('d', Some('b')) => cli.foreground = true,
        ('d', Some('D')) => cli.diag = true,
        ('d', Some('W')) => cli.zero_warning = true,
        ('d', _) => cli.debug = true,
        ('c', Some('c')) => return None,
        ('c', _) => cli.mode = Mode::Check,
        ('D', _) => cli.daemon = true,
        ('W', Some('s')) => {
            cli.master_worker = true;
            cli.systemd = true;
        }
        ('W', _) => cli.master_worker = true,
        ('q', _) => cli.quiet = true,
        _ => return None,
    }
    Some(Step::Done)
}

fn unsupported(cli: &mut Cli, flag: &str, what: &'static str) {
    cli.unsupported.push(Unsupported { flag: format!("-{flag}"), what });
}

/// Flags followed by one value: `-C -n -m -N -L -f -p`. Anything else is a usage error.
fn parse_valued_flag(flag: &str, value: &OsStr, cli: &mut Cli) -> Result<(), CliError> {
    match flag.chars().next() {
        Some('C') => cli.chdir = Some(PathBuf::from(value)),
        Some('n') => cli.maxconn = parse_count(flag, value)?,
        Some('m') => cli.memmax_mb = parse_count(flag, value)?,
        Some('N') => cli.maxpconn = parse_count(flag, value)?,
        Some('L') => cli.localpeer = Some(value.to_string_lossy().into_owned()),
        Some('f') => cli.cfgfiles.push(PathBuf::from(value)),
        Some('p') => cli.pidfile = Some(PathBuf::from(value)),
        _ => return Err(CliError::usage()),
    }
    Ok(())
}

/// A non-negative number for `-n`, `-N`, `-m`; 0 means "not set", as in HAProxy.
fn parse_count<T: std::str::FromStr + Default + PartialEq>(flag: &str, value: &OsStr) -> Result<Option<T>, CliError> {
    let text = value.to_string_lossy();
    // COMPAT: HAProxy reads these with atol() and silently takes 0 for garbage; rampart
    // refuses a value it cannot read rather than start with a limit nobody asked for.
    match text.trim().parse::<T>() {
        Ok(n) if n == T::default() => Ok(None),
        Ok(n) => Ok(Some(n)),
        Err(_) => Err(CliError::Fatal(format!("-{flag} option: '{text}' is not a valid number"))),
    }
}

/// One pid after `-sf`/`-st`: digits, optionally followed by blanks.
fn parse_oldpid(flag: &str, value: &OsStr) -> Result<i32, CliError> {
    let text = value.to_string_lossy();
    let digits_end = text
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '+')))
        .map_or(text.len(), |(i, _)| i);
    let (digits, rest) = text.split_at(digits_end);
    if !rest.trim().is_empty() {
        return Err(CliError::Fatal(format!("-{flag} option: some bytes unconsumed in PID list {{{}}}", rest)));
    }
    if digits.is_empty() || digits == "+" {
        return Err(CliError::usage());
    }
    match digits.parse::<i32>() {
        Ok(pid) if pid > 0 => Ok(pid),
        Ok(_) => Err(CliError::usage()),
        Err(_) => {
            Err(CliError::Fatal(format!("-{flag} option: failed to parse {{{text}}}: Numerical result out of range")))
        }
    }
}

/// The usage text printed on stderr (after the version on stdout) for a bad command line.
/// `progname` is the base name of `argv[0]`.
pub fn usage_text(progname: &str) -> String {
    format!(
        "\
Usage : {progname} [-f <cfgfile|cfgdir>]* [ -vdVD ] [ -n <maxconn> ] [ -N <maxpconn> ]
        [ -p <pidfile> ] [ -m <max megs> ] [ -C <dir> ] [-- <cfgfile>*]
        -v prints the version ; -vv adds build options and features.
        -d runs in the foreground with debug output ; -db only stays in the foreground.
        -dM[...] memory pool debugging : accepted and ignored (no memory pools)
        -V verbose : show messages even in quiet mode
        -D runs as a daemon ; -C changes to <dir> before reading the files.
        -q quiet : no messages at startup
        -c checks the configuration and exits
        -cc <cond> evaluates a condition and exits (0 true, 1 false, 2 error)
        -n sets the global maximum number of connections (default from ulimit -n)
        -m limits the memory the process may use (in MB)
        -N sets the default maximum number of connections per frontend
        -L sets the local peer name (default: the host name)
        -p writes the pid of the daemon to <pidfile>
        -de, -dp, -dS, -dG, -dL : accepted for compatibility, no effect
        -dV disables SSL verify on servers without a 'verify' keyword
        -dD diagnostic mode : also report suspicious configuration statements
        -dW refuses to start if any warning is emitted
        -sf/-st [pid ]* once ready, tells old pids to finish (SIGUSR1) or to stop (SIGTERM)
        -W master-worker mode ; -Ws adds systemd notifications (NOTIFY_SOCKET)
        -S <addr>[,<opts>] binds the master CLI (with -W)
        -x <unix_socket> get listening sockets from a unix socket
        --migrate <file> prints <file> with its HAProxy 1.x keywords rewritten
        not supported yet : -dR, -dr, -dK

"
    )
}

/// The base name of `argv[0]`, as HAProxy uses it in the usage line.
pub fn progname(argv0: &str) -> &str {
    argv0.rsplit('/').next().unwrap_or(argv0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("rampart").chain(words.iter().copied()).map(OsString::from).collect()
    }

    fn run(words: &[&str]) -> Cli {
        match parse(&argv(words)) {
            Ok(Parsed::Run(cli)) => *cli,
            other => panic!("{words:?}: expected a run, got {other:?}"),
        }
    }

    fn err(words: &[&str]) -> CliError {
        match parse(&argv(words)) {
            Err(e) => e,
            Ok(other) => panic!("{words:?}: expected an error, got {other:?}"),
        }
    }

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn files_from_f_and_after_double_dash_keep_order() {
        let cli = run(&["-f", "a", "-f", "b", "--", "c", "-d", "d"]);
        assert_eq!(cli.cfgfiles, paths(&["a", "b", "c", "-d", "d"]));
        assert!(!cli.debug, "words after -- are files, not flags");
        assert_eq!(cli.mode, Mode::Run);
    }

    #[test]
    fn argv0_is_kept_as_typed() {
        let cli = parse(&[OsString::from("/usr/sbin/rampart"), "-c".into()]).unwrap();
        let Parsed::Run(cli) = cli else { panic!("not a run") };
        assert_eq!(cli.argv0, "/usr/sbin/rampart");
        assert_eq!(progname(&cli.argv0), "rampart");
        assert_eq!(progname("rampart"), "rampart");
    }

    #[test]
    fn f_with_a_suffix_still_takes_a_file() {
        assert_eq!(run(&["-fxyz", "a.cfg"]).cfgfiles, paths(&["a.cfg"]));
    }

    #[test]
    fn version_flags() {
        assert_eq!(parse(&argv(&["-v"])), Ok(Parsed::Version { verbose: false }));
        assert_eq!(parse(&argv(&["-vv"])), Ok(Parsed::Version { verbose: true }));
        assert_eq!(parse(&argv(&["-vfoo"])), Ok(Parsed::Version { verbose: false }));
        // The first -v wins over anything after it, even garbage.
        assert_eq!(parse(&argv(&["-f", "x", "-vv", "bogus", "-Z"])), Ok(Parsed::Version { verbose: true }));
        // ... but not over an error before it.
        assert_eq!(err(&["bogus", "-v"]), CliError::usage());
    }

    #[test]
    fn check_modes() {
        assert_eq!(run(&["-c", "-f", "x"]).mode, Mode::Check);
        assert_eq!(run(&["-cX", "-f", "x"]).mode, Mode::Check);
        assert_eq!(run(&["-cc", "defined(HOME)"]).mode, Mode::CheckCondition("defined(HOME)".into()));
        assert_eq!(run(&["-cc", ""]).mode, Mode::CheckCondition(String::new()));
        assert_eq!(err(&["-cc"]), CliError::usage());
    }

    #[test]
    fn foreground_daemon_quiet_verbose() {
        let cli = run(&["-d"]);
        assert!(cli.debug && !cli.foreground && !cli.daemon);
        let cli = run(&["-db"]);
        assert!(cli.foreground && !cli.debug);
        let cli = run(&["-dfoo"]);
        assert!(cli.debug, "-d followed by an unknown letter is -d, as in HAProxy");
        let cli = run(&["-D", "-q", "-V"]);
        assert!(cli.daemon && cli.quiet && cli.verbose);
        let cli = run(&["-dD", "-dW"]);
        assert!(cli.diag && cli.zero_warning && !cli.debug);
        let cli = run(&["-dV"]);
        assert!(cli.no_server_verify && !cli.debug, "-dV: no server certificate verification");
    }

    #[test]
    fn harmless_debug_flags_are_accepted_and_change_nothing() {
        let cli = run(&["-de", "-dp", "-dk", "-dv", "-dS", "-dG", "-dL", "-dM", "-dM0x41,no-fail"]);
        assert_eq!(cli, Cli { argv0: "rampart".into(), ..Cli::default() });
        assert_eq!(parse(&argv(&["-dMhelp"])), Ok(Parsed::PoolDebugHelp));
    }

    #[test]
    fn master_worker_flags() {
        let cli = run(&["-W", "-S", "/run/m.sock,level admin", "-S", "ipv4@127.0.0.1:9999"]);
        assert!(cli.master_worker && !cli.systemd);
        assert_eq!(cli.master_cli, ["/run/m.sock,level admin", "ipv4@127.0.0.1:9999"]);
        let cli = run(&["-Ws"]);
        assert!(cli.master_worker && cli.systemd);
        assert!(cli.unsupported.is_empty());
        assert!(matches!(err(&["-S"]), CliError::Usage { alert: Some(a) } if a.contains("-S flag")));
    }

    #[test]
    fn flags_rampart_lacks_are_recorded_as_unsupported() {
        let cli = run(&["-dR", "-dr", "-dKcfg"]);
        let flags: Vec<&str> = cli.unsupported.iter().map(|u| u.flag.as_str()).collect();
        assert_eq!(flags, ["-dR", "-dr", "-dKcfg"]);
    }

    #[test]
    fn dash_x_names_the_old_process_socket_and_the_last_one_wins() {
        let cli = run(&["-x", "/run/old.sock"]);
        assert_eq!(cli.old_unixsocket, Some(PathBuf::from("/run/old.sock")));
        assert!(cli.warnings.is_empty() && cli.unsupported.is_empty());
        let cli = run(&["-x", "/run/a.sock", "-x", "/run/b.sock"]);
        assert_eq!(cli.old_unixsocket, Some(PathBuf::from("/run/b.sock")));
        assert_eq!(cli.warnings, ["-x option already set, overwriting the value"]);
        assert_eq!(err(&["-x"]), CliError::Usage { alert: Some("Unix socket path expected with the -x flag".into()) });
    }

    #[test]
    fn valued_flags() {
        let cli = run(&[
            "-C",
            "/etc/rampart",
            "-n",
            "5000",
            "-N",
            "300",
            "-m",
            "512",
            "-L",
            "node1",
            "-p",
            "/run/r.pid",
            "-f",
            "r.cfg",
        ]);
        assert_eq!(cli.chdir, Some(PathBuf::from("/etc/rampart")));
        assert_eq!(cli.maxconn, Some(5000));
        assert_eq!(cli.maxpconn, Some(300));
        assert_eq!(cli.memmax_mb, Some(512));
        assert_eq!(cli.localpeer.as_deref(), Some("node1"));
        assert_eq!(cli.pidfile, Some(PathBuf::from("/run/r.pid")));
        assert_eq!(cli.cfgfiles, paths(&["r.cfg"]));
        // The last one wins.
        assert_eq!(run(&["-p", "a", "-p", "b"]).pidfile, Some(PathBuf::from("b")));
        // 0 means unset, like HAProxy.
        assert_eq!(run(&["-n", "0"]).maxconn, None);
    }

    #[test]
    fn bad_numbers_are_refused() {
        assert_eq!(err(&["-n", "lots"]), CliError::Fatal("-n option: 'lots' is not a valid number".into()));
        assert!(matches!(err(&["-N", "-3"]), CliError::Fatal(_)));
        assert!(matches!(err(&["-m", "99999999999999999999999"]), CliError::Fatal(_)));
    }

    #[test]
    fn valued_flag_without_value_or_unknown_letter_is_usage() {
        for words in
            [&["-f"][..], &["-p"], &["-n"], &["-C"], &["-L"], &["-Z", "x"], &["-Z"], &["-s", "1"], &["-"], &["--x"]]
        {
            assert_eq!(err(words), CliError::usage(), "{words:?}");
        }
    }

    #[test]
    fn a_word_that_is_not_a_flag_is_usage() {
        assert_eq!(err(&["haproxy.cfg"]), CliError::usage());
        assert_eq!(err(&["-f", "a", "b"]), CliError::usage());
    }

    #[test]
    fn oldpids_take_every_following_non_flag_word() {
        let cli = run(&["-sf", "1", "2", "3", "-f", "x"]);
        assert_eq!(cli.oldpids, [1, 2, 3]);
        assert_eq!(cli.oldpids_signal, OldPidsSignal::Finish);
        assert_eq!(cli.cfgfiles, paths(&["x"]));

        let cli = run(&["-f", "x", "-st", "42"]);
        assert_eq!(cli.oldpids, [42]);
        assert_eq!(cli.oldpids_signal, OldPidsSignal::Terminate);

        // No pid at all is fine; the last flag picks the signal, pids accumulate.
        let cli = run(&["-sf", "-st", "7", "-sf", "8"]);
        assert_eq!(cli.oldpids, [7, 8]);
        assert_eq!(cli.oldpids_signal, OldPidsSignal::Finish);

        // Trailing blanks are accepted (strtol-like).
        assert_eq!(run(&["-sf", "12 "]).oldpids, [12]);
    }

    #[test]
    fn bad_oldpids() {
        assert_eq!(err(&["-sf", "abc"]), CliError::Fatal("-sf option: some bytes unconsumed in PID list {abc}".into()));
        assert_eq!(
            err(&["-st", "12abc", "-f", "x"]),
            CliError::Fatal("-st option: some bytes unconsumed in PID list {abc}".into())
        );
        assert_eq!(err(&["-sf", "0"]), CliError::usage());
        assert!(matches!(err(&["-sf", "99999999999"]), CliError::Fatal(m) if m.contains("out of range")));
        // A config file after -sf without -f is read as a pid, as in HAProxy.
        assert!(matches!(err(&["-sf", "12", "haproxy.cfg"]), CliError::Fatal(_)));
    }

    #[test]
    fn combined_command_line_of_a_reload() {
        let cli = run(&["-D", "-p", "/run/rampart.pid", "-f", "/etc/rampart", "-sf", "100", "101", "-q"]);
        assert!(cli.daemon && cli.quiet);
        assert_eq!(cli.cfgfiles, paths(&["/etc/rampart"]));
        assert_eq!(cli.oldpids, [100, 101]);
        assert!(cli.unsupported.is_empty());
    }

    #[test]
    fn migrate_takes_a_file() {
        let args = |a: &[&str]| {
            parse(&std::iter::once("rampart").chain(a.iter().copied()).map(OsString::from).collect::<Vec<_>>())
        };
        assert_eq!(args(&["--migrate", "old.cfg"]), Ok(Parsed::Migrate(PathBuf::from("old.cfg"))));
        assert!(matches!(args(&["--migrate"]), Err(CliError::Usage { alert: Some(_) })));
        // after `--`, every word is a configuration file
        assert!(
            matches!(args(&["--", "--migrate"]), Ok(Parsed::Run(cli)) if cli.cfgfiles == [PathBuf::from("--migrate")])
        );
    }

    #[test]
    fn usage_names_the_program_and_every_supported_flag() {
        let text = usage_text("rampart");
        assert!(text.starts_with("Usage : rampart [-f <cfgfile|cfgdir>]*"));
        for flag in [
            "-v ",
            "-vv",
            "-d ",
            "-db",
            "-D ",
            "-q ",
            "-c ",
            "-cc",
            "-n ",
            "-N ",
            "-m ",
            "-L ",
            "-p ",
            "-sf/-st",
            "-C ",
            "-W ",
            "-Ws",
            "-S ",
            "--migrate",
        ] {
            assert!(text.contains(flag), "usage does not mention {flag}");
        }
        assert!(text.ends_with("\n\n"));
    }
}
