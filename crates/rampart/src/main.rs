//! `rampart`, the haproxy-compatible entry point: command line, configuration load and
//! checks, sizing, the runtime built (every file the configuration names is read
//! then), bind, then chroot, privileges, daemon, old processes, and the worker.
//! HAProxy counterpart: `main()`, `init()` and `init_args()` in src/haproxy.c, whose
//! order of steps, messages and exit codes this follows:
//!
//! - 0: `-v`/`-vv`, valid configuration under `-c`, true condition under `-cc`,
//!   daemon started, or the worker's status;
//! - 1: usage error, configuration alert, startup failure, false condition;
//! - 2: `-c` on a configuration without listener, `-cc` on a condition that cannot be
//!   evaluated.
//!
//! Everything here runs before the worker starts any thread (daemon mode re-executes
//! the program, see `process::daemon`).

use std::ffi::OsString;
use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use rampart::build::AfterCheck;
use rampart::cli::{self, Cli, CliError, Mode, Parsed};
use rampart::listener::{self, Listeners};
use rampart::master::{self, Role};
use rampart::process::identity::{self, Identity};
use rampart::process::limits::{self, FdLimits, FixedNeeds, MaxconnSource, PlanInput, Raise};
use rampart::process::msg::{self, Reporter};
use rampart::process::{self, daemon, strerror};
use rampart::{version, worker};
use rampart_cfg::version::{FEATURES, HAPROXY_COMPAT_VERSION};
use rampart_cfg::{Config, Diag, Level, LexCtx};

/// Bind attempts while old processes release their ports (`-sf`/`-st`), 10 ms apart.
const MAX_START_RETRIES: u32 = 100;

fn main() {
    std::process::exit(run());
}

fn run() -> i32 {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let daemon_child = daemon::take_child_marker();
    let role = Role::take_from_env();
    let mut rep = Reporter::stderr(&version::version_string());
    let cli = match cli::parse(&argv) {
        Ok(Parsed::Run(cli)) => *cli,
        Ok(Parsed::Version { verbose }) => return print_version(verbose),
        Ok(Parsed::PoolDebugHelp) => return print_pool_debug_help(),
        Ok(Parsed::Migrate(file)) => return migrate(&file, &mut rep),
        Err(CliError::Usage { alert }) => {
            if let Some(alert) = alert {
                rep.alert(&alert);
            }
            return usage(&argv);
        }
        Err(CliError::Fatal(msg)) => {
            rep.alert(&msg);
            return 1;
        }
    };
    rep.set_quiet(cli.quiet);
    rep.set_verbose(cli.verbose);
    rep.set_diag(cli.diag);
    cli.warnings.iter().for_each(|w| rep.warning(w));
    if let Some(flag) = cli.unsupported.first() {
        rep.alert(&format!("'{}' ({}) is not supported yet.", flag.flag, flag.what));
        return 1;
    }
    let start_dir = std::env::current_dir().ok();
    if let Some(dir) = &cli.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            rep.alert(&format!("Could not change to directory {} : {}", dir.display(), strerror(&e)));
            return 1;
        }
    }
    set_localpeer_env(&cli);
    if let Mode::CheckCondition(expr) = &cli.mode {
        return check_condition(expr, &mut rep);
    }
    if cli.cfgfiles.is_empty() {
        return usage(&argv);
    }
    // a worker's master reported the warnings already
    let Some((cfg, mut kept)) = load_config(&cli, &mut rep, daemon_child || role.is_worker()) else {
        return reload_failed_or(role, &cli, &argv, 1, &mut rep);
    };
    let identity = match check_config(&cli, &cfg, &mut rep) {
        Ok(identity) => identity,
        Err(code) => return reload_failed_or(role, &cli, &argv, code, &mut rep),
    };
    if cli.mode == Mode::Check {
        return report_check(&cli, &cfg, &rep);
    }
    let mut modes = resolve_modes(&cli, &cfg, &mut rep);
    let master_mode = (cli.master_worker || cfg.global.master_worker) && !role.is_worker();
    if matches!(role, Role::Worker { .. } | Role::Reexec { .. }) {
        // the first master detached already, if asked
        modes.daemon = false;
    }
    if (modes.daemon && !daemon_child) || master_mode {
        // this process does not serve: the worker it starts builds its own
        kept = None;
    }
    if modes.daemon && !daemon_child {
        return match daemon::spawn_and_wait(&argv, start_dir.as_deref()) {
            Ok(code) => code,
            Err(msg) => {
                rep.alert(&msg);
                1
            }
        };
    }
    if master_mode {
        return start_master(&cli, &cfg, role, argv, (start_dir, modes, daemon_child), &mut rep);
    }
    start(&cli, (cfg, kept), identity, modes, (daemon_child, role), &mut rep)
}

// === master-worker ===

/// A re-executed master whose configuration did not load keeps its old workers
/// (HAProxy's wait mode); any other process exits with `code`.
fn reload_failed_or(role: Role, cli: &Cli, argv: &[OsString], code: i32, rep: &mut Reporter) -> i32 {
    if !matches!(role, Role::Reexec { .. }) {
        return code;
    }
    let launch = master::Launch {
        argv: argv.to_vec(),
        start_dir: None,
        role,
        master_cli: cli.master_cli.clone(),
        systemd: cli.systemd,
        nbthread: 1,
        on_ready: None,
        fetched: Vec::new(),
    };
    master::start(launch, None, rep)
}

/// `-W`: the master binds, writes the pidfile (its own pid, as HAProxy) and supervises
/// the workers; a daemon master detaches once its first worker serves.
fn start_master(
    cli: &Cli,
    cfg: &Config,
    role: Role,
    argv: Vec<OsString>,
    (start_dir, modes, daemon_child): (Option<PathBuf>, Modes, bool),
    rep: &mut Reporter,
) -> i32 {
    rep.set_quiet(modes.quiet);
    let fresh = matches!(role, Role::Fresh);
    let pidfile = match pidfile_path(cli, cfg).filter(|_| fresh) {
        Some(path) => match daemon::create_pidfile(&path) {
            Ok(file) => Some(file),
            Err(_) => {
                rep.alert(&format!("[{}.main()] Cannot create pidfile {}", cli.argv0, path.display()));
                return 1;
            }
        },
        None => None,
    };
    let mut on_ready: Option<master::supervisor::OnReady> = None;
    if daemon_child {
        let null = match daemon::open_dev_null() {
            Ok(null) => null,
            Err(msg) => {
                rep.alert(&msg);
                return 1;
            }
        };
        on_ready = Some(Box::new(move || become_daemon(Detach { pidfile, null })));
    } else if let Some(file) = pidfile {
        if let Err(e) = daemon::write_pid(file, std::process::id()) {
            rep.alert(&format!("Cannot write the pidfile: {}", strerror(&e)));
            return 1;
        }
    }
    if modes.quiet && !cli.verbose && !daemon_child && fresh {
        if let Err(msg) = daemon::redirect_stdio_to_null() {
            rep.alert(&msg);
            return 1;
        }
    }
    // HAProxy's master fetches them once, and its workers inherit them; a reload keeps
    // the master's own sockets
    let fetched = if fresh { fetch_old_sockets(cli, true, rep).unwrap_or_default() } else { Vec::new() };
    let launch = master::Launch {
        fetched,
        argv,
        start_dir,
        role,
        master_cli: cli.master_cli.clone(),
        systemd: cli.systemd,
        nbthread: cfg.global.nbthread.unwrap_or_else(limits::default_nbthread),
        on_ready,
    };
    master::start(launch, Some(cfg), rep)
}

/// `default-path`: enters the directory the configuration's relative file names start
/// from (as HAProxy, which changes its working directory while it reads the files);
/// `true` when it changed. The parser checked the directory; a failure now is reported.
fn enter_default_path(cfg: &Config, rep: &mut Reporter) -> bool {
    let Some(dir) = &cfg.global.default_path else { return false };
    match std::env::set_current_dir(dir) {
        Ok(()) => true,
        Err(e) => {
            rep.alert(&format!(
                "failed to apply default-path: Impossible to change to directory '{}': {}.",
                dir.display(),
                strerror(&e)
            ));
            false
        }
    }
}

// === command line answers ===

fn print_version(verbose: bool) -> i32 {
    let mut text = version::display_version(version::running_on().as_deref());
    if verbose {
        text.push_str(&version::display_build_opts(limits::default_nbthread()));
    }
    stdout(&text);
    0
}

/// `--migrate <file>`: the rewritten file on stdout, what changed and what needs a hand
/// on stderr; exit 1 when the file cannot be read.
fn migrate(file: &std::path::Path, rep: &mut Reporter) -> i32 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            rep.alert(&format!("Could not open configuration file {} : {}", file.display(), strerror(&e)));
            return 1;
        }
    };
    let m = rampart_cfg::migrate::migrate(&text);
    stdout(&m.text);
    for (line, what) in &m.changes {
        rep.notice(&format!("migrate : [{}:{line}] : {what}", file.display()));
    }
    for (line, what) in &m.manual {
        rep.warning(&format!("migrate : [{}:{line}] : commented out, to rewrite by hand: {what}", file.display()));
    }
    0
}

fn print_pool_debug_help() -> i32 {
    stdout("rampart has no memory pools: -dM and its options are accepted for compatibility and have no effect.\n");
    0
}

/// HAProxy's `usage()`: the version on stdout, the usage on stderr, exit 1.
fn usage(argv: &[OsString]) -> i32 {
    let argv0 = argv.first().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    stdout(&version::display_version(version::running_on().as_deref()));
    let _ = std::io::stderr().write_all(cli::usage_text(cli::progname(&argv0)).as_bytes());
    1
}

/// Writes to stdout, ignoring a closed pipe (`rampart -vv | head -1`) instead of
/// panicking as `print!` would.
fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// HAProxy exports the local peer name (`-L`, or the host name) for `${HAPROXY_LOCALPEER}`.
/// Also tells the configuration parser whether `-L` gave the name (then `localpeer` is
/// ignored, with HAProxy's warning).
fn set_localpeer_env(cli: &Cli) {
    std::env::set_var("HAPROXY_LOCALPEER", localpeer(cli));
    if cli.localpeer.is_some() {
        std::env::set_var("HAPROXY_LOCALPEER_CMDLINE", "1");
    } else {
        std::env::remove_var("HAPROXY_LOCALPEER_CMDLINE");
    }
}

fn localpeer(cli: &Cli) -> String {
    cli.localpeer
        .clone()
        .unwrap_or_else(|| nix::unistd::gethostname().map(|h| h.to_string_lossy().into_owned()).unwrap_or_default())
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn lex_ctx() -> LexCtx<'static> {
    LexCtx { env: &env_lookup, version: HAPROXY_COMPAT_VERSION, features: FEATURES }
}

/// `-cc <expr>`: 0 when true, 1 when false, 2 when it cannot be evaluated.
fn check_condition(expr: &str, rep: &mut Reporter) -> i32 {
    // COMPAT: HAProxy takes an empty condition as false.
    if expr.split_whitespace().next().is_none() {
        return 1;
    }
    match rampart_cfg::cond::eval_str(expr, &lex_ctx()) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(msg) => {
            rep.config_alert(&msg);
            2
        }
    }
}

// === configuration ===

/// A configuration loaded, and the runtime its check built when the process may run it
/// (with the worker threads it was built for).
type Loaded = (Config, Option<(rampart::proxy::Runtime, usize)>);

/// Loads the files and reports their diagnostics. `None` when the load failed (the
/// alerts are printed).
fn load_config(cli: &Cli, rep: &mut Reporter, daemon_child: bool) -> Option<Loaded> {
    // Like HAProxy, a missing file or directory stops everything before any is read.
    for path in &cli.cfgfiles {
        if let Err(e) = std::fs::metadata(path) {
            rep.config_alert(&format!(
                "Cannot open configuration file/directory {} : {}",
                path.display(),
                strerror(&e)
            ));
            return None;
        }
    }
    let mut loaded = rampart_cfg::load_files(&cli.cfgfiles, &lex_ctx());
    if cli.no_server_verify {
        // COMPAT: HAProxy reads `-dV` before the files, so an `ssl-server-verify
        // required` line there wins; rampart's `-dV` wins over it.
        loaded.model_mut().global.ssl_server.verify_none = true;
    }
    if loaded.config.as_ref().is_some_and(|c| c.global.quiet) {
        rep.set_quiet(true);
    }
    // The daemon child reads the files its parent already reported on: only alerts
    // can be new (a file changed in between).
    let mut diags = std::mem::take(&mut loaded.diags.list);
    // What the model holds but the runtime cannot run yet (e.g. conditions), also when
    // parsing refused lines already, so that one run reports every refusal.
    // The per-file summaries of the parser are dropped: `report_load` writes them after
    // each file's messages, the runtime's included.
    diags.retain(|d| !(d.span.is_none() && d.message.starts_with("Error(s) found in configuration file")));
    // After a refusal, the runtime's warnings are mostly echoes of it: only its alerts.
    let parse_failed = diags.iter().any(|d| d.level == Level::Alert);
    // the files are read from the `default-path` directory; the master goes back (its
    // workers and re-executions resolve the command line's names from where it started)
    let back = std::env::current_dir().ok();
    let entered = enter_default_path(loaded.model(), rep);
    let threads = loaded.model().global.nbthread.unwrap_or_else(limits::default_nbthread);
    let after = if cli.mode == Mode::Check { AfterCheck::Exit } else { AfterCheck::Keep { threads } };
    let (runtime, kept) = rampart::build::check_then(loaded.model(), after);
    if entered {
        if let Some(dir) = back {
            let _ = std::env::set_current_dir(dir);
        }
    }
    diags.extend(runtime.into_iter().filter(|d| !parse_failed || d.level == Level::Alert));
    let (diags, printed_before): (Vec<Diag>, Vec<Diag>) =
        diags.into_iter().partition(|d| !daemon_child || d.level == Level::Alert);
    printed_before.iter().for_each(|d| rep.record_only(d));
    let has_alerts = msg::report_load(rep, &diags);
    let files: Vec<String> = cli.cfgfiles.iter().map(|p| p.display().to_string()).collect();
    std::env::set_var("HAPROXY_CFGFILES", files.join(";"));
    match loaded.config {
        Some(cfg) if !has_alerts => Some((cfg, kept.map(|rt| (rt, threads)))),
        _ => {
            rep.config_alert("Fatal errors found in configuration.");
            None
        }
    }
}

/// Checks that need the system or the command line: user and group names, modes
/// rampart does not have yet, `-dW`. `Err` is the exit status (alerts printed).
fn check_config(cli: &Cli, cfg: &Config, rep: &mut Reporter) -> Result<Identity, i32> {
    let mut fatal = false;
    let identity = identity::resolve(&cfg.global).unwrap_or_else(|errors| {
        errors.iter().for_each(|e| rep.config_alert(e));
        fatal = true;
        Identity::default()
    });
    // as HAProxy's `cfg_program_postparser()`: programs need a master
    if !(cfg.programs.is_empty() || cli.master_worker || cfg.global.master_worker) {
        rep.config_alert("Can't use a 'program' section without master worker mode.");
        fatal = true;
    }
    if fatal {
        rep.config_alert("Fatal errors found in configuration.");
        return Err(1);
    }
    if (cli.zero_warning || cfg.global.zero_warning) && rep.warned() {
        rep.config_alert("Some warnings were found and 'zero-warning' is set. Aborting.");
        return Err(1);
    }
    Ok(identity)
}

/// `-c` once the configuration loaded: what HAProxy prints on stdout, and its status.
fn report_check(cli: &Cli, cfg: &Config, rep: &Reporter) -> i32 {
    let quiet = cli.quiet || cfg.global.quiet;
    let say = |line: &str| {
        if !quiet {
            stdout(&format!("{line}\n"));
        }
    };
    if rep.warned() {
        say("Warnings were found.");
    }
    if limits::listener_count(cfg) > 0 {
        say("Configuration file is valid");
        0
    } else {
        say("Configuration file has no error but will not start (no listener) => exit(2).");
        2
    }
}

// === startup ===

/// How the process runs, from the command line and `global`.
#[derive(Debug, Clone, Copy)]
struct Modes {
    daemon: bool,
    quiet: bool,
    debug: bool,
}

/// HAProxy's rules: `-d`/`-db` cancel `daemon` and `quiet` of the configuration, `-D`
/// cancels `-d`/`-db`, and debug cannot be combined with quiet or daemon.
fn resolve_modes(cli: &Cli, cfg: &Config, rep: &mut Reporter) -> Modes {
    let from_cfg = !(cli.debug || cli.foreground);
    let mut modes = Modes {
        daemon: cli.daemon || (from_cfg && cfg.global.daemon),
        quiet: cli.quiet || (from_cfg && cfg.global.quiet),
        debug: cli.debug && !cli.daemon,
    };
    if modes.debug && (modes.daemon || modes.quiet) {
        rep.warning("<debug> mode incompatible with <quiet> and <daemon>. Keeping <debug> only.");
        modes.daemon = false;
        modes.quiet = false;
    }
    modes
}

/// Sizes the process, binds, then drops what it no longer needs and runs the worker.
fn start(
    cli: &Cli,
    (mut cfg, kept): Loaded,
    identity: Identity,
    modes: Modes,
    (daemon_child, role): (bool, Role),
    rep: &mut Reporter,
) -> i32 {
    rep.set_quiet(modes.quiet);
    if modes.debug && (!modes.quiet || cli.verbose) {
        rampart::debug::enable();
    }
    let argv0 = cli.argv0.as_str();
    let nbthread = cfg.global.nbthread.unwrap_or_else(limits::default_nbthread);
    if limits::listener_count(&cfg) == 0 {
        rep.alert(&format!("[{argv0}.main()] No enabled listener found (check for 'bind' directives) ! Exiting."));
        return 1;
    }
    let Some(maxconn) = size_process(cli, &cfg, nbthread, modes, rep) else {
        return 1;
    };
    let needs = FixedNeeds { listener_fds: limits::listener_fds(&cfg, nbthread), nbthread: nbthread as u64 };
    let (low, high) = cfg.global.pool_fd_ratios;
    rampart::conn_pool::set_fd_budget(needs.maxsock(maxconn), low, high);
    if modes.debug || cli.verbose {
        // tokio's event loop is epoll. (A closed stdout is not worth failing for.)
        let _ = std::io::Write::write_all(&mut std::io::stdout(), b"Using epoll() as the polling mechanism.\n");
    }
    if let Some(maxpconn) = cli.maxpconn {
        process::apply_default_maxpconn(&mut cfg, maxpconn);
    }
    // Everything read from disk is read here, as root and outside the chroot, as HAProxy
    // reads it while parsing: certificates, CA and CRL files, crt-lists, ticket keys,
    // maps and pattern files (the configuration and its errorfiles were read already),
    // from the `default-path` directory, where HAProxy is left after its parsing.
    enter_default_path(&cfg, rep);
    // the check's runtime, built for these threads, else a new one
    let built = match kept.filter(|(_, threads)| *threads == nbthread) {
        Some((mut rt, _)) => {
            rampart::build::set_maxconn(&mut rt, &cfg, maxconn);
            Ok(rt)
        }
        None => rampart::build::build(&cfg, maxconn, nbthread),
    };
    let rt = match built {
        Ok(rt) => Arc::new(rt),
        Err(diags) => {
            diags.iter().for_each(|d| rep.config_diag(d));
            return 1;
        }
    };
    // Lua's core.proxies and its Proxy/Server classes, before a thread makes a state
    rampart::build::lua_host::install(&rt);
    // (it reads the CA and CRL files again, for `show ssl ca-file`)
    // one copy of the model, shared with the CLI (which compiles what `set var` asks)
    let cfg = Arc::new(cfg);
    let mut stats_cli = rampart::stats::Cli::new(cfg.clone(), rt.clone());
    stats_cli.make_server = Some(rampart::build::dynamic_server);
    let stats_cli = Arc::new(stats_cli);
    load_time_zone();
    let mut old = OldPids { pids: &cli.oldpids, paused: false };
    let (ipc, mut pool) = match role {
        Role::Worker { ipc, pool } => (Some(ipc), listener::adopt_pool(&pool)),
        _ => (None, Vec::new()),
    };
    if ipc.is_none() {
        match fetch_old_sockets(cli, false, rep) {
            Ok(fetched) => pool.extend(fetched),
            Err(()) => return 1,
        }
    }
    for w in rampart::build::server_state::apply(&cfg, &rt) {
        rep.warning(&w);
    }
    // beyond HAProxy: the state of the worker this one replaces (bounded in time)
    let early_cli = ipc.as_ref().map(|ch| master::handover::take_over(ch, &cfg, &rt).cli).unwrap_or_default();
    let Some(listeners) = bind_listeners(&cfg, nbthread, (&mut old, pool), argv0, rep) else {
        return 1;
    };
    if rampart::stats::socket::exposes_fds(&cfg) {
        stats_cli.exported.set(listeners.sockets.iter().flat_map(|s| &s.fds).filter_map(|fd| fd.try_clone().ok()));
    }
    let cli_listeners = match rampart::stats::socket::bind_all(&cfg) {
        Ok(bound) => bound,
        Err(alerts) => {
            alerts.iter().for_each(|a| rep.alert(a));
            rep.alert(&format!("[{argv0}.main()] Some protocols failed to start their listeners! Exiting."));
            old.resume();
            return 1;
        }
    };
    let detach = match leave_startup_state(cli, &cfg, identity, modes, daemon_child, &mut old, rep) {
        Ok(detach) => detach,
        Err(msg) => {
            rep.alert(&msg);
            old.resume();
            return 1;
        }
    };
    if let Some(detach) = detach {
        if let Err(msg) = become_daemon(detach) {
            rep.alert(&msg);
            return 1;
        }
    }
    let settings = worker::Settings {
        nbthread,
        maxconn,
        hard_stop_after: cfg.global.hard_stop_after,
        localpeer: cfg.localpeer.clone(),
        cpu_map: cfg.global.cpu_map.clone(),
    };
    let mut main_tasks: Vec<worker::MainTask> =
        cli_listeners.into_iter().map(|l| Box::pin(rampart::stats::socket::serve(l, stats_cli.clone())) as _).collect();
    main_tasks.push(Box::pin(rampart::stats::rates::run(rt.clone())));
    // off the listening path: the traffic threads accept meanwhile
    main_tasks.push(Box::pin(async { process::trim_startup_heap() }));
    if let Some(ipc) = ipc {
        main_tasks.push(Box::pin(master::child::serve_master(ipc, stats_cli.clone(), early_cli)));
    }
    worker::run(rt, listeners, settings, main_tasks)
}

/// Decides maxconn and sets the descriptor and memory limits. `None`: cannot run.
fn size_process(cli: &Cli, cfg: &Config, nbthread: usize, modes: Modes, rep: &mut Reporter) -> Option<u32> {
    let argv0 = cli.argv0.as_str();
    let boot = FdLimits::current();
    let needs = FixedNeeds { listener_fds: limits::listener_fds(cfg, nbthread), nbthread: nbthread as u64 };
    let input = PlanInput {
        cli_maxconn: cli.maxconn,
        cfg_maxconn: cfg.global.maxconn,
        ulimit_n: cfg.global.ulimit_n,
        memmax_mb: cli.memmax_mb,
        bufsize: cfg.global.bufsize,
    };
    let plan = limits::plan(input, boot, needs);
    if plan.source == MaxconnSource::Computed && (modes.debug || cli.verbose) {
        rep.note(&format!("Note: setting global.maxconn to {}.", plan.maxconn));
    }
    let strict = cfg.global.strict_limits;
    if let Raise::Refused { limit } = limits::apply_nofile(&plan, boot) {
        let msg = format!("[{argv0}.main()] Cannot raise FD limit to {}, limit is {limit}.", plan.nofile);
        if strict {
            rep.alert(&msg);
            return None;
        }
        rep.warning(&msg);
    }
    if let Some(megs) = cli.memmax_mb {
        if limits::apply_memmax(megs).is_err() {
            let msg = format!("[{argv0}.main()] Cannot fix MEM limit to {megs} megs.");
            if strict {
                rep.alert(&msg);
                return None;
            }
            rep.warning(&msg);
        }
    }
    fit_maxconn_to_fd_limit(plan.maxconn, needs, (argv0, strict), rep)
}

/// Lowers maxconn to what the descriptor limit allows, warning about it; `None` (with an
/// alert) when not even one connection fits, or with `strict-limits` when it does not.
fn fit_maxconn_to_fd_limit(
    maxconn: u32,
    needs: FixedNeeds,
    (argv0, strict): (&str, bool),
    rep: &mut Reporter,
) -> Option<u32> {
    let limit = FdLimits::current().soft;
    let maxsock = needs.maxsock(maxconn);
    if maxsock <= limit {
        return Some(maxconn);
    }
    let fitting = needs.maxconn_fitting(limit);
    if fitting == 0 || strict {
        rep.alert(&format!(
            "[{argv0}.main()] FD limit ({limit}) too low for maxconn={maxconn}/maxsock={maxsock}. \
             Please raise 'ulimit-n' to {maxsock} or more to avoid any trouble."
        ));
        return None;
    }
    rep.warning(&format!(
        "[{argv0}.main()] FD limit ({limit}) too low for maxconn={maxconn}/maxsock={maxsock}; \
         lowering maxconn to {fitting}. Raise 'ulimit-n' to {maxsock} or more to keep it."
    ));
    Some(fitting)
}

/// The processes named by `-sf`/`-st`, and whether they were asked to pause listening.
struct OldPids<'a> {
    pids: &'a [i32],
    paused: bool,
}

impl OldPids<'_> {
    /// Asks them to stop listening so that their ports can be bound; `false` if none
    /// could be reached.
    fn pause(&mut self) -> bool {
        let reached = process::tell_old_pids(self.pids, Signal::SIGTTOU) > 0;
        self.paused |= reached;
        reached
    }

    /// Startup failed: let them listen again if they were paused.
    fn resume(&self) {
        if self.paused {
            process::tell_old_pids(self.pids, Signal::SIGTTIN);
        }
    }
}

/// Binds every listener. With old processes (`-sf`/`-st`), a failed bind pauses them and
/// retries for up to a second, as HAProxy does; alerts come only from the last attempt.
/// `pool`: the sockets a master passed to this worker, or fetched from an old process.
fn bind_listeners(
    cfg: &Config,
    nbthread: usize,
    (old, pool): (&mut OldPids<'_>, Vec<listener::Pooled>),
    argv0: &str,
    rep: &mut Reporter,
) -> Option<Listeners> {
    let mut retries = if old.pids.is_empty() { 0 } else { MAX_START_RETRIES };
    // adopted once: a retry must not adopt numbers a failed attempt closed
    let inherited = listener::adopt_inherited(cfg, pool, false);
    loop {
        match listener::bind_all(cfg, nbthread, &inherited) {
            Ok(listeners) => return Some(listeners),
            Err(_) if retries > 0 => {
                if old.pause() {
                    std::thread::sleep(Duration::from_millis(10));
                    retries -= 1;
                } else {
                    retries = 0;
                }
            }
            Err(err) => {
                err.0.iter().for_each(|msg| rep.alert(msg));
                rep.alert(&format!("[{argv0}.main()] Some protocols failed to start their listeners! Exiting."));
                old.resume();
                return None;
            }
        }
    }
}

/// `-x <path>`: the listening sockets of the old process, fetched before binding
/// (`/dev/null`: none, as HAProxy). A failure is HAProxy's warning and alert, fatal
/// (`Err`) except in master-worker mode (`in_master`), where the master binds anew.
fn fetch_old_sockets(cli: &Cli, in_master: bool, rep: &mut Reporter) -> Result<Vec<listener::Pooled>, ()> {
    let Some(path) = cli.old_unixsocket.as_deref().filter(|p| *p != std::path::Path::new("/dev/null")) else {
        return Ok(Vec::new());
    };
    match rampart::io::xfer::fetch(path) {
        Ok(fetched) => Ok(listener::xfer_pool(fetched)),
        Err(warning) => {
            rep.warning(&warning);
            rep.alert("Failed to get the sockets from the old process!");
            if in_master {
                Ok(Vec::new())
            } else {
                Err(())
            }
        }
    }
}

/// After bind: quiet detaching, pidfile, chroot, old processes, privileges. HAProxy's
/// order: the pidfile is created before the chroot, and old processes are told before
/// privileges are dropped (a failure after that point cannot give them their ports
/// back). In the daemon child, returns what it needs to detach once ready; `Err` is
/// an alert.
fn leave_startup_state(
    cli: &Cli,
    cfg: &Config,
    identity: Identity,
    modes: Modes,
    daemon_child: bool,
    old: &mut OldPids<'_>,
    rep: &mut Reporter,
) -> Result<Option<Detach>, String> {
    let argv0 = cli.argv0.as_str();
    if modes.quiet && !cli.verbose && !daemon_child {
        daemon::redirect_stdio_to_null()?;
    }
    let detach = if daemon_child {
        let pidfile = match pidfile_path(cli, cfg) {
            Some(path) => Some(
                daemon::create_pidfile(&path)
                    .map_err(|_| format!("[{argv0}.main()] Cannot create pidfile {}", path.display()))?,
            ),
            None => None,
        };
        Some(Detach { pidfile, null: daemon::open_dev_null()? })
    } else {
        None
    };
    if let Some(dir) = &cfg.global.chroot {
        identity::enter_chroot(dir).map_err(|_| format!("[{argv0}.main()] Cannot chroot({}).", dir.display()))?;
    }
    process::tell_old_pids(old.pids, process::oldpids_signal(cli.oldpids_signal));
    old.paused = false;
    let dropped = identity::drop_privileges(identity, argv0)?;
    dropped.warnings.iter().for_each(|w| rep.warning(w));
    if cfg.global.set_dumpable {
        let warnings = identity::make_dumpable(argv0, cfg.global.strict_limits)?;
        warnings.iter().for_each(|w| rep.warning(w));
    }
    Ok(detach)
}

/// Reads the time zone of log dates and of `ltime` (`TZ`, else /etc/localtime, and the
/// zoneinfo files) before a chroot hides them: HAProxy under `chroot` still dates in
/// local time.
fn load_time_zone() {
    rampart::log::date::load_time_zone();
    rampart::sample::conv::load_time_zone();
}

/// What the daemon child opens before the chroot and uses once ready.
struct Detach {
    pidfile: Option<File>,
    null: File,
}

/// The daemon child is ready: fill the pidfile, detach, and let the parent exit.
fn become_daemon(detach: Detach) -> Result<(), String> {
    if let Some(file) = detach.pidfile {
        daemon::write_pid(file, std::process::id())
            .map_err(|e| format!("Cannot write the pidfile: {}", strerror(&e)))?;
    }
    daemon::detach_and_notify(&detach.null)
}

/// `-p` wins over `pidfile` in `global`. Like HAProxy, only a daemon writes it.
fn pidfile_path(cli: &Cli, cfg: &Config) -> Option<PathBuf> {
    cli.pidfile.clone().or_else(|| cfg.global.pidfile.clone())
}
