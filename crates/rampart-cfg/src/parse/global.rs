//! The `global` section.
//!
//! HAProxy counterparts: `cfg_parse_global()` (src/cfgparse-global.c), plus the global
//! keywords registered elsewhere: `nbthread` (src/thread.c), `hard-stop-after`
//! (src/proxy.c), `stats` (src/cli.c).

use crate::diag::Diag;
use crate::kw::{self, Support};
use crate::model::StatsSocket;
use crate::span::Span;

use super::addr::parse_listen_addrs;
use super::value::{atol, is_integer, parse_time_ms, time_trailing_warning, TimeError};
use super::{arg, not_yet, too_many_args, Modifier, Parser};

/// HAProxy's `MAX_THREADS` on 64-bit builds.
const MAX_THREADS: i64 = 64;

pub(super) fn parse_global_line(p: &mut Parser, words: &[String], kwm: Modifier, span: &Span) {
    let word = words[0].as_str();
    match word {
        "daemon" | "quiet" => parse_flag(p, words, span),
        "insecure-fork-wanted" if !too_many(p, words, 0, span) => p.global.insecure_fork = kwm == Modifier::Std,
        "insecure-fork-wanted" => {}
        "external-check" if !too_many(p, words, 0, span) => p.global.external_check = true,
        "external-check" => {}
        "master-worker" => parse_master_worker(p, words, span),
        "default-path" => super::default_path::parse_default_path(p, words, span),
        "mworker-max-reloads" => parse_mworker_max_reloads(p, words, span),
        "nbthread" => parse_nbthread(p, words, span),
        "maxconn" | "ulimit-n" => parse_limit(p, words, span),
        "pidfile" | "chroot" => parse_path(p, words, span),
        "user" | "group" => parse_account(p, words, span),
        "uid" | "gid" => parse_id(p, words, span),
        "tune.bufsize" | "tune.maxrewrite" => parse_tune(p, words, span),
        "hard-stop-after" | "grace" => parse_hard_stop_after(p, words, span),
        "spread-checks" => parse_spread_checks(p, words, span),
        "server-state-base" | "server-state-file" => super::server_state::parse_global(p, words, span),
        "ssl-server-verify"
        | "ssl-default-server-ciphers"
        | "ssl-default-server-ciphersuites"
        | "ssl-default-server-options" => super::server_ssl::parse_global_ssl_server(p, words, span),
        "tune.idle-pool.shared" => parse_idle_pool_shared(p, words, span),
        "tune.comp.maxlevel" => parse_comp_maxlevel(p, words, span),
        "maxcomprate" | "maxcompcpuusage" | "maxzlibmem" => super::global_comp::parse_comp_limit(p, words, span),
        "tune.rcvbuf.client" | "tune.rcvbuf.server" | "tune.sndbuf.client" | "tune.sndbuf.server" => {
            super::global_sockets::parse_sockbuf(p, words, span)
        }
        "unix-bind" => super::global_sockets::parse_unix_bind(p, words, span),
        "cpu-map" => super::global_process::parse_cpu_map(p, words, span),
        "set-dumpable" | "strict-limits" => super::global_process::parse_process_flag(p, words, kwm, span),
        "httpclient.resolvers.id" => {
            if !too_many(p, words, 1, span) {
                p.global.lua.httpclient_resolvers = Some(arg(words, 1).to_owned());
            }
        }
        "httpclient.resolvers.prefer" => {
            if too_many(p, words, 1, span) {
                return;
            }
            match arg(words, 1) {
                "ipv4" => p.global.lua.httpclient_prefer_v6 = Some(false),
                "ipv6" => p.global.lua.httpclient_prefer_v6 = Some(true),
                _ => p.alert(span, format!("'{word}' expects 'ipv4' or 'ipv6' as argument.")),
            }
            // any setting makes a missing `default` section an error, as HAProxy
            p.global.lua.httpclient_resolvers.get_or_insert_with(|| "default".to_owned());
        }
        "httpclient.ssl.ca-file" => {
            if !too_many(p, words, 1, span) {
                p.global.lua.httpclient_ssl_ca_file = Some(arg(words, 1).to_owned());
            }
        }
        "httpclient.ssl.verify" => {
            if too_many(p, words, 1, span) {
                return;
            }
            match arg(words, 1) {
                "none" => p.global.lua.httpclient_ssl_verify = Some(false),
                "required" => p.global.lua.httpclient_ssl_verify = Some(true),
                _ => p.alert(span, format!("'{word}' expects 'none' or 'required' as argument.")),
            }
        }
        "h2-workaround-bogus-websocket-clients" => {
            if !too_many(p, words, 0, span) {
                p.global.h2.no_websocket = true;
            }
        }
        _ if super::global_misc::is_misc_kw(word) => super::global_misc::parse_misc_kw(p, words, span),
        _ if super::global_tune::is_tune_kw(word) => super::global_tune::parse_tune_kw(p, words, kwm, span),
        _ if word.starts_with("tune.h2.") && kw::global_kw(word).is_some() => parse_tune_h2(p, words, span),
        _ if word.starts_with("tune.vars.") && kw::global_kw(word).is_some() => parse_vars_max_size(p, words, span),
        _ if super::lua::is_lua_kw(word) && kw::global_kw(word).is_some() => super::lua::parse_lua_kw(p, words, span),
        // HAProxy 2.6 ignores any word after it.
        "expose-experimental-directives" => p.global.expose_experimental = true,
        "set-var" | "set-var-fmt" => parse_set_var(p, words, span),
        // Applied (or refused) by the lexer as it read the line (`envops`).
        "setenv" | "presetenv" | "unsetenv" | "resetenv" => {}
        "log" => super::log::parse_global_log(p, words, kwm, span),
        "log-tag" | "log-send-hostname" => super::log::parse_global_log_kw(p, words, span),
        "stats" => parse_stats(p, words, span),
        "localpeer" => super::peers::parse_localpeer(p, words, span),
        "tune.peers.max-updates-at-once" => super::peers::parse_max_updates(p, words, span),
        "nbproc" => {
            let msg = "nbproc is not supported any more since HAProxy 2.5. Threads will automatically be used \
                       on multi-processor machines if available.";
            let diag = super::legacy_hint(Diag::alert(Some(span.clone()), msg), super::Section::Global, words);
            p.diags.push(diag);
        }
        _ if super::ssl::parse_global_ssl(p, words, span) => {}
        _ => unknown_or_not_yet(p, word, span),
    }
}

/// `set-var <proc.name> <expr...>` and `set-var-fmt <proc.name> <fmt>`: checked here,
/// evaluated by the daemon at startup (HAProxy evaluates them while parsing).
fn parse_set_var(p: &mut Parser, words: &[String], span: &Span) {
    use crate::model::{ExprSrc, FmtSrc, GlobalSetVar, GlobalVarValue, VarScope};
    let kw = words[0].as_str();
    let (name, rest) = (arg(words, 1), &words[2.min(words.len())..]);
    if name.is_empty() || rest.is_empty() || rest[0].is_empty() {
        let what = if kw == "set-var" { "a sample expression" } else { "a format string" };
        p.alert(span, format!("'{kw}' requires a process-wide variable name ('proc.<name>') and {what}."));
        return;
    }
    let var = match super::rule::vars::parse_var_name(name) {
        Ok(v) if v.scope == VarScope::Proc => v,
        Ok(_) => {
            p.alert(
                span,
                format!("'{kw}': cannot set variable '{name}', only scope 'proc' is permitted in the global section."),
            );
            return;
        }
        Err(e) => {
            p.alert(span, format!("'{kw}': {e}."));
            return;
        }
    };
    let value = if kw == "set-var" {
        // HAProxy reads the rest of the line as one expression (converters may be
        // separate words).
        GlobalVarValue::Expr(ExprSrc { text: rest.join(","), span: span.clone() })
    } else {
        if too_many(p, words, 2, span) {
            return;
        }
        GlobalVarValue::Fmt(FmtSrc { text: rest[0].clone(), span: span.clone() })
    };
    p.global.set_vars.push(GlobalSetVar { var, value, span: span.clone() });
}

pub(super) fn unknown_or_not_yet(p: &mut Parser, word: &str, span: &Span) {
    match kw::global_kw(word) {
        Some(k) if k.support != Support::Rejected => p.alert(span, not_yet(word)),
        _ => {
            let msg = match kw::suggest_global(word) {
                Some(best) => format!("unknown keyword '{word}' in 'global' section; did you mean '{best}' maybe ?"),
                None => format!("unknown keyword '{word}' in 'global' section"),
            };
            p.alert(span, msg);
        }
    }
}

/// HAProxy's `alertif_too_many_args()`.
pub(super) fn too_many(p: &mut Parser, words: &[String], max: usize, span: &Span) -> bool {
    match words.get(max + 1) {
        Some(extra) => {
            p.alert(span, too_many_args(&words[0], extra));
            true
        }
        None => false,
    }
}

/// HAProxy reports a second `maxconn`, `pidfile`... with an alert that does not fail
/// the configuration ("Continuing."); rampart fails on every alert, so it is a warning
/// here, with the same text.
pub(super) fn already_specified(p: &mut Parser, span: &Span, msg: String) {
    p.warning(span, msg);
}

fn parse_flag(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 0, span) {
        return;
    }
    match words[0].as_str() {
        "daemon" => p.global.daemon = true,
        _ => p.global.quiet = true,
    }
}

fn parse_master_worker(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    match arg(words, 1) {
        "" => p.global.master_worker = true,
        "no-exit-on-failure" => p.global.mworker_no_exit_on_failure = true,
        _ => p.alert(span, "'master-worker' only supports 'no-exit-on-failure' option."),
    }
}

/// `mworker-max-reloads <n>`: a worker that lived through more than `n` reloads is
/// stopped (SIGTERM) by the master (HAProxy's src/mworker.c).
fn parse_mworker_max_reloads(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let text = arg(words, 1);
    if text.is_empty() {
        p.alert(span, "'mworker-max-reloads' expects an integer argument.");
        return;
    }
    // COMPAT: HAProxy reads it with atol(): leading digits, garbage after them ignored.
    let n = atol(text);
    match u32::try_from(n) {
        Ok(n) => p.global.mworker_max_reloads = Some(n),
        Err(_) => p.alert(span, format!("'mworker-max-reloads' : invalid value {n}, must be >= 0")),
    }
}

fn parse_nbthread(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let text = arg(words, 1);
    if !is_integer(text) {
        p.alert(span, format!("'nbthread' passed a missing or unparsable integer value in '{text}'"));
        return;
    }
    let n = atol(text);
    if !(1..=MAX_THREADS).contains(&n) {
        p.alert(span, format!("'nbthread' value must be between 1 and {MAX_THREADS} (was {n})"));
        return;
    }
    p.global.nbthread = Some(n as usize);
}

fn parse_limit(p: &mut Parser, words: &[String], span: &Span) {
    let word = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    let already = if word == "maxconn" { p.global.maxconn.is_some() } else { p.global.ulimit_n.is_some() };
    if already {
        already_specified(p, span, format!("'{word}' already specified. Continuing."));
        return;
    }
    let text = arg(words, 1);
    if text.is_empty() {
        p.alert(span, format!("'{word}' expects an integer argument."));
        return;
    }
    let v = atol(text);
    if !is_integer(text) {
        p.warning(span, format!("'{word}' : '{text}' is not a plain integer; read as {v}, as HAProxy does."));
    }
    // 0 (or less) leaves the automatic value, as in HAProxy.
    if word == "maxconn" {
        p.global.maxconn = u32::try_from(v).ok().filter(|&v| v > 0);
    } else {
        p.global.ulimit_n = u64::try_from(v).ok().filter(|&v| v > 0);
    }
}

fn parse_path(p: &mut Parser, words: &[String], span: &Span) {
    let word = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    let already = if word == "pidfile" { p.global.pidfile.is_some() } else { p.global.chroot.is_some() };
    if already {
        already_specified(p, span, format!("'{word}' already specified. Continuing."));
        return;
    }
    let path = arg(words, 1);
    if path.is_empty() {
        let what = if word == "pidfile" { "a file name" } else { "a directory" };
        p.alert(span, format!("'{word}' expects {what} as an argument."));
        return;
    }
    if word == "pidfile" {
        p.global.pidfile = Some(path.into());
    } else {
        p.global.chroot = Some(path.into());
    }
}

/// `user <name>` / `group <name>`: the name must exist in the system databases, as
/// HAProxy resolves it at parse time.
fn parse_account(p: &mut Parser, words: &[String], span: &Span) {
    let user = words[0] == "user";
    if too_many(p, words, 1, span) {
        return;
    }
    let g = &p.global;
    if user && (g.user.is_some() || g.uid.is_some()) {
        return already_specified(p, span, "user/uid already specified. Continuing.".into());
    }
    if !user && (g.group.is_some() || g.gid.is_some()) {
        return already_specified(p, span, "gid/group was already specified. Continuing.".into());
    }
    let name = arg(words, 1);
    let db = if user { "/etc/passwd" } else { "/etc/group" };
    if lookup_id(db, name).is_none() {
        let what = if user { "user" } else { "group" };
        p.alert(span, format!("cannot find {what} id for '{name}' (0:Success)"));
        return;
    }
    if user {
        p.global.user = Some(name.to_owned());
    } else {
        p.global.group = Some(name.to_owned());
    }
}

/// Looks `name` up in a passwd/group style file (`name:x:id:...`).
// COMPAT: HAProxy asks libc (NSS); we read the local files, which covers system
// accounts but not directory services (LDAP, sssd).
pub(super) fn lookup_id(db: &str, name: &str) -> Option<u32> {
    let text = std::fs::read_to_string(db).ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == name).then(|| f.nth(1)?.parse().ok()).flatten()
    })
}

fn parse_id(p: &mut Parser, words: &[String], span: &Span) {
    let uid = words[0] == "uid";
    if too_many(p, words, 1, span) {
        return;
    }
    let g = &p.global;
    if uid && (g.user.is_some() || g.uid.is_some()) {
        return already_specified(p, span, "user/uid already specified. Continuing.".into());
    }
    if !uid && (g.group.is_some() || g.gid.is_some()) {
        return already_specified(p, span, "group/gid already specified. Continuing.".into());
    }
    let text = arg(words, 1);
    if text.is_empty() {
        p.alert(span, format!("'{}' expects an integer argument.", words[0]));
        return;
    }
    let Ok(id) = text.parse::<i32>().map(|v| v as u32) else {
        let (kw, param, what) = if uid { ("uid", "user", "user") } else { ("gid", "group", "group") };
        p.warning(
            span,
            format!(
                " {kw}: string '{text}' is not a number.\n   | You might want to use the '{param}' parameter to use a system {what} name."
            ),
        );
        return;
    };
    if uid {
        p.global.uid = Some(id);
    } else {
        p.global.gid = Some(id);
    }
}

fn parse_tune(p: &mut Parser, words: &[String], span: &Span) {
    let word = words[0].as_str();
    if too_many(p, words, 1, span) {
        return;
    }
    let text = arg(words, 1);
    if text.is_empty() {
        p.alert(span, format!("'{word}' expects an integer argument."));
        return;
    }
    let v = atol(text);
    if word == "tune.bufsize" {
        // Rounded up to a multiple of two pointers, as HAProxy does.
        let rounded = v.saturating_add(15) & !15;
        if rounded <= 0 {
            p.alert(span, format!("'{word}' expects a positive integer argument."));
            return;
        }
        p.global.bufsize = rounded as usize;
    } else {
        if v < 0 {
            p.alert(span, format!("'{word}' expects a positive integer argument."));
            return;
        }
        p.global.maxrewrite = v as usize;
    }
}

/// `tune.comp.maxlevel <1..9>`, read as C's `atoi()`.
fn parse_comp_maxlevel(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    match atol(arg(words, 1)) {
        v @ 1..=9 => p.global.comp_maxlevel = v as u32,
        _ => p.alert(span, "'tune.comp.maxlevel' expects a numeric value between 1 and 9"),
    }
}

/// `tune.h2.header-table-size`, `initial-window-size`, `max-concurrent-streams`,
/// `max-frame-size`, `fe.glitches-threshold` (HAProxy 3.x): integers read as C's `atoi()`, with HAProxy's bounds.
fn parse_tune_h2(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let word = words[0].as_str();
    let v = atol(arg(words, 1));
    let h2 = &mut p.global.h2;
    let bad = match word {
        "tune.h2.header-table-size" if (4096..=65536).contains(&v) => {
            h2.header_table_size = v as u32;
            None
        }
        "tune.h2.header-table-size" => Some("a numeric value between 4096 and 65536"),
        "tune.h2.max-frame-size" if (16384..=16_777_215).contains(&v) => {
            h2.max_frame_size = Some(v as u32);
            None
        }
        "tune.h2.max-frame-size" => Some("a numeric value between 16384 and 16777215"),
        _ if !(0..=i64::from(i32::MAX)).contains(&v) => Some("a positive numeric value"),
        "tune.h2.initial-window-size" => {
            h2.initial_window_size = Some(v as u32);
            None
        }
        "tune.h2.fe.glitches-threshold" => {
            h2.fe_glitches_threshold = Some(v as u32);
            None
        }
        _ => {
            h2.max_concurrent_streams = v as u32;
            None
        }
    };
    if let Some(what) = bad {
        p.alert(span, format!("'{word}' expects {what}."));
    }
}

/// `tune.vars.<scope>-max-size <bytes>`: read as C's `strtol()` over the whole word (an
/// empty word is 0, unlimited; a negative value wraps as HAProxy's unsigned int does).
fn parse_vars_max_size(p: &mut Parser, words: &[String], span: &Span) {
    let (word, text) = (words[0].as_str(), arg(words, 1));
    let t = text.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.bytes().all(|b| b.is_ascii_digit()) || (digits.is_empty() && !t.is_empty()) {
        p.alert(span, format!("{word}: '{text}' is an invalid size"));
        return;
    }
    let value = (atol(t) as u32 != 0).then_some(u64::from(atol(t) as u32));
    let v = &mut p.global.vars;
    match &word["tune.vars.".len()..] {
        "global-max-size" => v.global = value,
        "proc-max-size" => v.proc = value,
        "sess-max-size" => v.sess = value,
        "txn-max-size" => v.txn = value,
        "reqres-max-size" => v.reqres = value,
        _ => v.check = value,
    }
}

/// `tune.idle-pool.shared on|off`.
fn parse_idle_pool_shared(p: &mut Parser, words: &[String], span: &Span) {
    match arg(words, 1) {
        "on" => p.global.idle_pool_shared = true,
        "off" => p.global.idle_pool_shared = false,
        other => p.alert(span, format!("'tune.idle-pool.shared' expects either 'on' or 'off' but got '{other}'.")),
    }
}

/// `spread-checks <0..50>`: HAProxy's `cfg_parse_global()` messages.
fn parse_spread_checks(p: &mut Parser, words: &[String], span: &Span) {
    if too_many(p, words, 1, span) {
        return;
    }
    let text = arg(words, 1);
    if text.is_empty() {
        p.alert(span, "'spread-checks' expects an integer argument (0..50).");
        return;
    }
    let v = atol(text);
    if !(0..=50).contains(&v) {
        p.alert(span, "'spread-checks' needs a positive value in range 0..50.");
        return;
    }
    p.global.spread_checks = v as u32;
}

fn parse_hard_stop_after(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    let text = arg(words, 1);
    if text.is_empty() {
        p.alert(span, format!("'{kw}' expects <time> as argument."));
        return;
    }
    match parse_time_ms(text) {
        Ok(ms) => {
            if let Some(c) = ms.trailing {
                p.warning(span, time_trailing_warning(c, text));
            }
            if kw == "grace" {
                p.global.grace = ms.duration();
            } else {
                p.global.hard_stop_after = ms.duration();
            }
        }
        Err(e) => time_error(p, span, kw, text, e),
    }
}

/// `stats socket|timeout|maxconn|bind-process ...` in `global`.
fn parse_stats(p: &mut Parser, words: &[String], span: &Span) {
    let (sub, value) = (arg(words, 1), arg(words, 2));
    match sub {
        "socket" => parse_stats_socket(p, words, span),
        "timeout" => match parse_time_ms(value) {
            Ok(ms) if ms.ms == 0 => p.alert(span, "'stats timeout' expects a positive value"),
            Ok(ms) => {
                if let Some(c) = ms.trailing {
                    p.warning(span, time_trailing_warning(c, value));
                }
                p.global.stats_timeout = ms.duration();
                p.pending.note("global stats timeout", span);
            }
            Err(TimeError::Overflow) => p.alert(
                span,
                format!("timer overflow in argument '{value}' to 'stats timeout' (maximum value is 2147483647 ms or ~24.8 days)"),
            ),
            Err(TimeError::Underflow) => p.alert(
                span,
                format!("timer underflow in argument '{value}' to 'stats timeout' (minimum non-null value is 1 ms)"),
            ),
            Err(TimeError::BadChar(c)) => p.alert(span, format!("'stats timeout' : unexpected character '{c}'")),
        },
        "maxconn" => match u32::try_from(atol(value)) {
            Ok(n) if n > 0 => {
                p.global.stats_maxconn = Some(n);
                p.pending.note("global stats maxconn", span);
            }
            _ => p.alert(span, "'stats maxconn' expects a positive value"),
        },
        // HAProxy 2.6 accepts it without a word; with one process it has no effect
        "bind-process" => p.warning(span, "'stats bind-process' has no effect (one process); remove it"),
        _ => p.alert(
            span,
            format!("'stats' only supports 'socket', 'maxconn', 'bind-process' and 'timeout' (got '{sub}')"),
        ),
    }
}

fn parse_stats_socket(p: &mut Parser, words: &[String], span: &Span) {
    let spec = arg(words, 2);
    if spec.is_empty() {
        p.alert(span, "'stats socket' in global section expects an address or a path to a UNIX socket");
        return;
    }
    let mut addrs = match parse_listen_addrs(spec) {
        Ok(a) => a,
        Err(e) => {
            p.alert(span, format!("'stats socket' : {e}"));
            return;
        }
    };
    if addrs.len() != 1 {
        p.alert(span, not_yet("stats socket with several addresses"));
        return;
    }
    let options = words[3..].to_vec();
    let problems = check_socket_options(&options);
    if !problems.is_empty() {
        for msg in problems {
            p.alert(span, msg);
        }
        return;
    }
    let addr = addrs.remove(0);
    p.global.stats_sockets.push(StatsSocket { addr, options, span: span.clone() });
    p.pending.note("global stats socket", span);
}

/// The options of `stats socket` are `bind` options; they are kept as words for the
/// runtime API, and the values of those that matter to it are checked now, as HAProxy
/// does (`bind_parse_level`, `bind_parse_mode`, `bind_parse_expose_fd`... in
/// src/cli.c and src/sock_unix.c). Every problem is returned, up to an unknown word.
fn check_socket_options(options: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut i = 0;
    while let Some(word) = options.get(i) {
        let Some(k) = kw::bind_option(word) else {
            problems.push(match kw::suggest_bind_option(word) {
                Some(best) => format!("'stats socket' : unknown keyword '{word}'. Did you mean '{best}' maybe ?"),
                None => format!("'stats socket' : unknown keyword '{word}'."),
            });
            break;
        };
        if let Err(e) = check_socket_option(word, arg(options, i + 1)) {
            // HAProxy quotes the option's own message
            problems.push(format!("'stats socket' : '{e}'"));
        }
        i += 1 + k.args;
    }
    problems
}

/// The value of one `stats socket` option, with HAProxy's message when it is invalid.
fn check_socket_option(word: &str, value: &str) -> Result<(), String> {
    let one_of = |allowed: &[&str], list: &str| {
        if value.is_empty() {
            Err(format!("'{word}' : missing {}", word.trim_end_matches("-output")))
        } else if allowed.contains(&value) {
            Ok(())
        } else {
            Err(format!("'{word}' only supports {list} (got '{value}')"))
        }
    };
    match word {
        "level" => one_of(&["user", "operator", "admin"], "'user', 'operator', and 'admin'"),
        "severity-output" => one_of(&["none", "number", "string"], "'none', 'number', and 'string'"),
        "expose-fd" if value == "listeners" => Ok(()),
        "expose-fd" => Err(format!("'{word}' only supports 'listeners' (got '{value}')")),
        "mode" if !value.is_empty() && value.bytes().all(|b| (b'0'..=b'7').contains(&b)) => Ok(()),
        "mode" => Err(format!("'{word}' : missing or invalid mode '{value}' (octal integer expected)")),
        "user" if lookup_id("/etc/passwd", value).is_none() => Err(format!("'{word}' : unknown user name '{value}'")),
        "group" if lookup_id("/etc/group", value).is_none() => Err(format!("'{word}' : unknown group name '{value}'")),
        "name" if value.is_empty() => Err(format!("'{word}' : missing name")),
        _ => Ok(()),
    }
}

/// HAProxy's message for a bad `<time>` argument `text` of global keyword `kw`.
pub(super) fn time_error(p: &mut Parser, span: &Span, kw: &str, text: &str, e: TimeError) {
    let msg = match e {
        TimeError::Overflow => {
            format!("timer overflow in argument '{text}' to '{kw}' (maximum value is 2147483647 ms or ~24.8 days)")
        }
        TimeError::Underflow => {
            format!("timer underflow in argument '{text}' to '{kw}' (minimum non-null value is 1 ms)")
        }
        TimeError::BadChar(c) => format!("unexpected character '{c}' in argument to <{kw}>."),
    };
    p.alert(span, msg);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::model::ListenAddr;
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn tune_h2() {
        let cfg = parse_ok(
            "global\n tune.h2.header-table-size 8192\n tune.h2.initial-window-size 1048576\n \
             tune.h2.max-concurrent-streams 10\n tune.h2.max-frame-size 32768\n",
        );
        let h2 = cfg.global.h2;
        assert_eq!(h2.header_table_size, 8192);
        assert_eq!(h2.initial_window_size, Some(1_048_576));
        assert_eq!((h2.max_concurrent_streams, h2.max_frame_size), (10, Some(32768)));
        assert_eq!(parse_ok("global\n").global.h2, crate::model::H2Tune::default());
        // HAProxy 2.6's words and bounds
        assert_eq!(
            alerts(
                "global\n tune.h2.header-table-size 100\n tune.h2.max-frame-size x\n tune.h2.initial-window-size -1\n"
            ),
            [
                "'tune.h2.header-table-size' expects a numeric value between 4096 and 65536.",
                "'tune.h2.max-frame-size' expects a numeric value between 16384 and 16777215.",
                "'tune.h2.initial-window-size' expects a positive numeric value."
            ]
        );
        assert_eq!(
            alerts("global\n tune.h2.max-concurrent-streams 5 6\n"),
            ["'tune.h2.max-concurrent-streams' cannot handle unexpected argument '6'."]
        );
        // HAProxy 3.x's threshold: 0 is no limit, a negative value is refused
        let t = |cfg: &str| parse_ok(cfg).global.h2.fe_glitches_threshold;
        assert_eq!(t("global\n tune.h2.fe.glitches-threshold 200\n"), Some(200));
        assert_eq!(t("global\n tune.h2.fe.glitches-threshold 0\n"), Some(0));
        assert_eq!(
            alerts("global\n tune.h2.fe.glitches-threshold -5\n"),
            ["'tune.h2.fe.glitches-threshold' expects a positive numeric value."]
        );
    }

    #[test]
    fn stats_socket_options_are_checked() {
        // messages as haproxy 2.6.12 prints them; every problem of the line is listed
        assert_eq!(
            alerts("global\n stats socket /tmp/x.sock level bogus mode 999 expose-fd x severity-output y user nosuchuserzz\n"),
            [
                "'stats socket' : ''level' only supports 'user', 'operator', and 'admin' (got 'bogus')'",
                "'stats socket' : ''mode' : missing or invalid mode '999' (octal integer expected)'",
                "'stats socket' : ''expose-fd' only supports 'listeners' (got 'x')'",
                "'stats socket' : ''severity-output' only supports 'none', 'number', and 'string' (got 'y')'",
                "'stats socket' : ''user' : unknown user name 'nosuchuserzz''",
            ]
        );
        assert_eq!(alerts("global\n stats socket /tmp/x.sock level\n"), ["'stats socket' : ''level' : missing level'"]);
        assert_eq!(alerts("global\n stats socket /tmp/x.sock name\n"), ["'stats socket' : ''name' : missing name'"]);
        assert!(alerts(
            "global\n stats socket /tmp/x.sock mode 0660 level admin expose-fd listeners user root name a\n"
        )
        .is_empty());
    }

    #[test]
    fn insecure_fork_wanted_is_a_flag_without_argument() {
        assert!(alerts("global\n insecure-fork-wanted\n no insecure-fork-wanted\n").is_empty());
        assert_eq!(
            alerts("global\n insecure-fork-wanted x\n"),
            ["'insecure-fork-wanted' cannot handle unexpected argument 'x'."]
        );
    }

    #[test]
    fn global_keywords() {
        let cfg = parse_ok(
            "global\n daemon\n quiet\n nbthread 4\n maxconn 1000\n pidfile /run/r.pid\n\
             ulimit-n 4096\n uid 99\n gid 98\n chroot /var/empty\n tune.bufsize 1000\n tune.maxrewrite 100\n\
             hard-stop-after 30s\n log stdout format raw local0\n stats socket /run/r.sock mode 600 level admin\n\
             stats timeout 2m\n stats maxconn 5\n tune.vars.txn-max-size 256\n tune.vars.sess-max-size\n\
             tune.vars.global-max-size -1\n expose-experimental-directives\n",
        );
        let g = &cfg.global;
        assert_eq!((g.vars.txn, g.vars.sess, g.vars.global), (Some(256), None, Some(u64::from(u32::MAX))));
        assert!(g.expose_experimental);
        assert!(g.daemon && g.quiet && !g.master_worker);
        assert_eq!(
            (g.nbthread, g.maxconn, g.ulimit_n, g.uid, g.gid),
            (Some(4), Some(1000), Some(4096), Some(99), Some(98))
        );
        assert_eq!(g.pidfile.as_deref(), Some(std::path::Path::new("/run/r.pid")));
        assert_eq!(g.chroot.as_deref(), Some(std::path::Path::new("/var/empty")));
        assert_eq!((g.bufsize, g.maxrewrite), (1008, 100), "bufsize rounded up to 16");
        assert_eq!(g.hard_stop_after, Some(Duration::from_secs(30)));
        assert_eq!(g.logs[0].args, ["stdout", "format", "raw", "local0"]);
        assert_eq!(g.stats_sockets[0].addr, ListenAddr::Unix("/run/r.sock".into()));
        assert_eq!(g.stats_sockets[0].options, ["mode", "600", "level", "admin"]);
        assert_eq!((g.stats_timeout, g.stats_maxconn), (Some(Duration::from_secs(120)), Some(5)));
        assert_eq!(g.span.line, 1);
    }

    #[test]
    fn global_set_var_takes_proc_variables_only() {
        let cfg = parse_ok("global\n set-var proc.a str(x) lower\n set-var-fmt proc.b \"%[var(proc.a)]-y\"\n");
        let v = &cfg.global.set_vars;
        assert_eq!(v.len(), 2);
        assert!(matches!(&v[0].value, crate::model::GlobalVarValue::Expr(e) if e.text == "str(x),lower"));
        assert!(matches!(&v[1].value, crate::model::GlobalVarValue::Fmt(f) if f.text == "%[var(proc.a)]-y"));
        // messages checked against haproxy 2.6.12
        assert_eq!(
            alerts("global\n set-var txn.x int(1)\n"),
            ["'set-var': cannot set variable 'txn.x', only scope 'proc' is permitted in the global section."]
        );
        assert_eq!(
            alerts("global\n set-var proc.y\n"),
            ["'set-var' requires a process-wide variable name ('proc.<name>') and a sample expression."]
        );
    }

    #[test]
    fn variable_budgets_read_like_strtol() {
        let cfg = parse_ok(
            "global\n tune.vars.global-max-size 1000\n tune.vars.proc-max-size 900\n tune.vars.sess-max-size 800\n\
             tune.vars.txn-max-size 700\n tune.vars.reqres-max-size 600 ignored\n tune.vars.check-max-size\n",
        );
        let m = cfg.global.vars;
        assert_eq!(
            (m.global, m.proc, m.sess, m.txn, m.reqres, m.check),
            (Some(1000), Some(900), Some(800), Some(700), Some(600), None)
        );
        assert_eq!(parse_ok("global\n tune.vars.txn-max-size -1\n").global.vars.txn, Some(u64::from(u32::MAX)));
        assert_eq!(
            alerts("global\n tune.vars.txn-max-size abc\n"),
            ["tune.vars.txn-max-size: 'abc' is an invalid size"]
        );
        assert_eq!(
            alerts("global\n tune.vars.check-max-size 12k\n"),
            ["tune.vars.check-max-size: '12k' is an invalid size"]
        );
        assert_eq!(alerts("global\n tune.vars.sess-max-size -\n"), ["tune.vars.sess-max-size: '-' is an invalid size"]);
    }

    #[test]
    fn user_and_group_are_looked_up() {
        let cfg = parse_ok("global\n user root\n group root\n");
        assert_eq!((cfg.global.user.as_deref(), cfg.global.group.as_deref()), (Some("root"), Some("root")));
        assert_eq!(
            alerts("global\n user nosuchuser-rampart\n"),
            ["cannot find user id for 'nosuchuser-rampart' (0:Success)"]
        );
    }

    #[test]
    fn global_errors() {
        assert_eq!(
            alerts("global\n nbthred 4\n"),
            ["unknown keyword 'nbthred' in 'global' section; did you mean 'nbthread' maybe ?"]
        );
        assert_eq!(alerts("global\n nbthread 0\n"), ["'nbthread' value must be between 1 and 64 (was 0)"]);
        assert_eq!(alerts("global\n nbthread x\n"), ["'nbthread' passed a missing or unparsable integer value in 'x'"]);
        assert_eq!(alerts("global\n daemon 1\n"), ["'daemon' cannot handle unexpected argument '1'."]);
        assert_eq!(
            alerts("global\n master-worker x\n"),
            ["'master-worker' only supports 'no-exit-on-failure' option."]
        );
        assert_eq!(alerts("global\n mworker-max-reloads\n"), ["'mworker-max-reloads' expects an integer argument."]);
        assert_eq!(
            alerts("global\n mworker-max-reloads -2\n"),
            ["'mworker-max-reloads' : invalid value -2, must be >= 0"]
        );
        assert_eq!(alerts("global\n tune.bufsize 0\n"), ["'tune.bufsize' expects a positive integer argument."]);
        assert_eq!(
            alerts("global\n tune.vars.txn-max-size 10k\n"),
            ["tune.vars.txn-max-size: '10k' is an invalid size"]
        );
        assert_eq!(alerts("global\n pidfile\n"), ["'pidfile' expects a file name as an argument."]);
        assert_eq!(
            alerts("global\n hard-stop-after 1x\n"),
            ["unexpected character 'x' in argument to <hard-stop-after>."]
        );
        assert!(alerts("global\n maxsslconn 8\n").is_empty(), "maxsslconn is implemented");
        assert_eq!(alerts("global\n nbproc 2\n")[0], "nbproc is not supported any more since HAProxy 2.5. Threads will automatically be used on multi-processor machines if available.");
        assert_eq!(
            alerts("global\n stats foo\n"),
            ["'stats' only supports 'socket', 'maxconn', 'bind-process' and 'timeout' (got 'foo')"]
        );
        assert_eq!(
            alerts("global\n stats socket 127.0.0.1\n"),
            ["'stats socket' : missing port specification in '127.0.0.1'"]
        );
        assert_eq!(
            alerts("global\n stats socket /x levl admin\n"),
            ["'stats socket' : unknown keyword 'levl'. Did you mean 'level' maybe ?"]
        );
        assert_eq!(alerts("global\n stats timeout 10x\n"), ["'stats timeout' : unexpected character 'x'"]);
        assert_eq!(alerts("global\n stats maxconn\n"), ["'stats maxconn' expects a positive value"]);
        assert_eq!(alerts("global x\n"), ["'global' cannot handle unexpected argument 'x'."]);
    }

    #[test]
    fn global_continuing_alerts_are_warnings() {
        assert_eq!(warnings("global\n maxconn 10\n maxconn 20\n"), ["'maxconn' already specified. Continuing."]);
        assert_eq!(warnings("global\n uid 1\n uid 2\n"), ["user/uid already specified. Continuing."]);
        let cfg = parse_ok("global\n maxconn 10\n maxconn 20\n");
        assert_eq!(cfg.global.maxconn, Some(10));
    }
}
