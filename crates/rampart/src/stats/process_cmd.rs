//! The CLI commands about the process and the CLI session itself: access levels,
//! `clear counters`, `set maxconn`, `set timeout cli`, `show env`, `show info`,
//! `show events`, `show peers`, `show startup-logs`. HAProxy counterpart: cli.c, stats.c, proxy.c,
//! errors.c.

use std::time::Duration;

use super::cmd::{Level, Session, PERMISSION_DENIED};
use super::{info, Cli};

/// `clear counters [all]`; `all` needs the admin level.
pub(super) fn clear_counters(cli: &Cli, sess: &mut Session, words: &[&str]) -> String {
    let all = words.get(2) == Some(&"all");
    if all && sess.level < Level::Admin {
        return PERMISSION_DENIED.to_owned();
    }
    super::counters::clear(&cli.rt, all);
    String::new()
}

pub(super) fn set_level(sess: &mut Session, to: Level) -> String {
    if to > sess.level {
        return PERMISSION_DENIED.to_owned();
    }
    sess.level = to;
    String::new()
}

/// C's `atoi`: leading digits (after an optional sign), 0 when there are none.
fn atoi(s: &str) -> i64 {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    let n = digits[..end].parse::<i64>().unwrap_or(if end > 0 { i64::MAX } else { 0 });
    if neg {
        -n
    } else {
        n
    }
}

/// `set maxconn global <value>`: 0 means the process's hard limit, above it is refused.
pub(super) fn set_maxconn_global(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    let Some(value) = words.get(3) else { return "Expects an integer value.\n".to_owned() };
    let g = &cli.rt.global;
    let v = atoi(value);
    if v > i64::from(g.hard_maxconn) {
        return "Value out of range.\n".to_owned();
    }
    let v = if v <= 0 { g.hard_maxconn } else { v as u32 };
    g.maxconn.store(v, std::sync::atomic::Ordering::Relaxed);
    // accept loops paused at the old limit look again
    g.conn_released.notify_waiters();
    String::new()
}

/// `set rate-limit <setting> global <value>`: `http-compression` (kB/s, 0: no limit);
/// the connection and session rates are limits rampart does not have yet.
pub(super) fn set_rate_limit(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    let what = (words.get(2).copied().unwrap_or(""), words.get(3).copied().unwrap_or(""));
    match what {
        ("http-compression", "global") => {}
        ("connections" | "sessions" | "ssl-sessions", "global") => {
            return format!("'set rate-limit {}' is not supported yet.\n", what.0);
        }
        _ => {
            return "'set rate-limit' only supports :\n   \
                    - 'connections global' to set the per-process maximum connection rate\n   \
                    - 'sessions global' to set the per-process maximum session rate\n   \
                    - 'ssl-sessions global' to set the per-process maximum SSL session rate\n   \
                    - 'http-compression global' to set the per-process maximum compression speed in kB/s\n"
                .to_owned()
        }
    }
    let Some(value) = words.get(4).filter(|v| !v.is_empty()) else {
        return "Expects an integer value.\n".to_owned();
    };
    let Ok(v) = u64::try_from(atoi(value)) else { return "Value out of range.\n".to_owned() };
    cli.rt.comp_limits.set_rate_lim(v.saturating_mul(1024));
    String::new()
}

/// `set maxconn frontend <frontend> <value>`.
pub(super) fn set_maxconn_frontend(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    let Some(name) = words.get(3) else { return "A frontend name is expected.\n".to_owned() };
    let Some(idx) = cli.find_proxy(name).filter(|&i| cli.rt.proxies[i].cap.frontend) else {
        return "No such frontend.\n".to_owned();
    };
    let Some(value) = words.get(4) else { return "Integer value expected.\n".to_owned() };
    let Ok(v) = u32::try_from(atoi(value)) else { return "Value out of range.\n".to_owned() };
    let fe = &cli.rt.proxies[idx].fe;
    fe.maxconn.store(v, std::sync::atomic::Ordering::Relaxed);
    fe.conn_released.notify_waiters();
    String::new()
}

/// `set timeout cli <delay>`: the delay in seconds unless it has a unit.
pub(super) fn set_timeout(_: &Cli, sess: &mut Session, words: &[&str]) -> String {
    if words.get(2) != Some(&"cli") {
        return "'set timeout' only supports 'cli'.\n".to_owned();
    }
    let Some(value) = words.get(3) else { return "Expects an integer value.\n".to_owned() };
    match parse_delay(value) {
        Some(d) if !d.is_zero() => {
            sess.timeout = d;
            String::new()
        }
        _ => "Invalid timeout value.\n".to_owned(),
    }
}

/// A delay with HAProxy's units (`us`, `ms`, `s`, `m`, `h`, `d`), seconds by default.
fn parse_delay(s: &str) -> Option<Duration> {
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let us = match &s[digits..] {
        "" | "s" => 1_000_000,
        "us" => 1,
        "ms" => 1_000,
        "m" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => return None,
    };
    Some(Duration::from_micros(n.checked_mul(us)?))
}

/// `show events [<sink>] [-w] [-n]`: the list of sinks for anyone, a ring's lines for
/// operators and admins (HAProxy's levels).
pub(super) fn show_events(sess: &Session, words: &[&str]) -> String {
    if words.len() > 2 && sess.level < Level::Operator {
        return PERMISSION_DENIED.to_owned();
    }
    crate::log::ring::show_events(&words[2..])
}

pub(super) fn show_env(_: &Cli, _: &mut Session, words: &[&str]) -> String {
    let mut out = String::new();
    match words.get(2) {
        Some(name) => match std::env::var_os(name) {
            Some(v) => out.push_str(&format!("{name}={}\n", v.to_string_lossy())),
            None => out.push_str("Variable not found\n"),
        },
        None => {
            for (k, v) in std::env::vars_os() {
                out.push_str(&format!("{}={}\n", k.to_string_lossy(), v.to_string_lossy()));
            }
        }
    }
    out
}

pub(super) fn show_info(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    if words[2..].contains(&"json") {
        info::json(cli)
    } else if words[2..].contains(&"typed") {
        info::typed(cli)
    } else {
        info::plain(cli)
    }
}

/// `show peers [dict|-] [<section>]`.
pub(super) fn show_peers(c: &Cli, _: &mut Session, w: &[&str]) -> String {
    let mut target = w.get(2).copied();
    let dict = target == Some("dict");
    if matches!(target, Some("dict" | "-")) {
        target = w.get(3).copied();
    }
    match crate::peers::show::show(&c.rt.peers, target.filter(|t| !t.is_empty()), dict) {
        Some(out) => out,
        None => "No such peers\n".into(),
    }
}

/// `show startup-logs`: this process's startup messages (HAProxy prints an empty line
/// when there were none).
pub(super) fn show_startup_logs() -> String {
    match crate::process::startup_log::text() {
        t if t.is_empty() => "\n".to_owned(),
        t => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_default_to_seconds() {
        assert_eq!(parse_delay("5"), Some(Duration::from_secs(5)));
        assert_eq!(parse_delay("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_delay("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_delay("x"), None);
        assert_eq!(parse_delay("5q"), None);
    }

    #[test]
    fn atoi_reads_leading_digits_as_c_does() {
        assert_eq!((atoi("12ab"), atoi("abc"), atoi("-3"), atoi("")), (12, 0, -3, 0));
    }

    #[test]
    fn levels_only_go_down() {
        let mut s = Session {
            level: Level::Operator,
            prompt: false,
            timeout: Duration::ZERO,
            quit: false,
            payload: None,
            experimental: false,
        };
        assert_eq!(set_level(&mut s, Level::Admin), PERMISSION_DENIED);
        assert_eq!(set_level(&mut s, Level::User), "");
        assert_eq!(s.level, Level::User);
    }

    #[test]
    fn show_events_lists_for_anyone_and_dumps_for_operators() {
        let mut s = Session {
            level: Level::User,
            prompt: false,
            timeout: Duration::ZERO,
            quit: false,
            payload: None,
            experimental: false,
        };
        assert!(show_events(&s, &["show", "events"]).starts_with("Supported events sinks are listed below."));
        assert_eq!(show_events(&s, &["show", "events", "buf0"]), PERMISSION_DENIED);
        s.level = Level::Operator;
        assert_eq!(show_events(&s, &["show", "events", "nosuchring"]), "No such event sink\n");
    }
}
