//! The Lua keywords of the `global` section: `lua-load`, `lua-load-per-thread`,
//! `lua-prepend-path` and `tune.lua.*`. The scripts are read and run by the daemon
//! (`rampart::lua`), which reports their errors at this line.
//!
//! HAProxy counterpart: `hlua_load()`, `hlua_load_per_thread()`,
//! `hlua_config_prepend_path()`, `hlua_read_timeout()`, `hlua_forced_yield()`,
//! `hlua_parse_maxmem()` (src/hlua.c, 2.6).

use crate::model::LuaLoad;
use crate::span::Span;

use super::value::{parse_time_ms, TimeError};
use super::{arg, too_many_args, Parser};

/// Whether `word` is one of the Lua keywords of `global` (then handled here).
pub(super) fn is_lua_kw(word: &str) -> bool {
    matches!(word, "lua-load" | "lua-load-per-thread" | "lua-prepend-path") || word.starts_with("tune.lua.")
}

pub(super) fn parse_lua_kw(p: &mut Parser, words: &[String], span: &Span) {
    let word = words[0].as_str();
    let value = arg(words, 1);
    match word {
        "lua-load" | "lua-load-per-thread" => {
            let per_thread = word == "lua-load-per-thread";
            if value.is_empty() {
                let what = if per_thread { "a file" } else { "a file name" };
                p.alert(span, format!("'{word}' expects {what} as parameter."));
                return;
            }
            let load = LuaLoad {
                path: value.to_owned(),
                args: words[2.min(words.len())..].to_vec(),
                per_thread,
                span: span.clone(),
            };
            p.global.lua.loads.push(load);
        }
        "lua-prepend-path" => {
            if let Some(extra) = words.get(3) {
                p.alert(span, too_many_args(word, extra));
                return;
            }
            if value.is_empty() {
                p.alert(span, format!("'{word}' expects to receive a <path> as argument"));
                return;
            }
            let kind = match arg(words, 2) {
                "" => "path",
                k @ ("path" | "cpath") => k,
                _ => {
                    p.alert(span, format!("'{word}' expects <type> to either be 'path' or 'cpath'"));
                    return;
                }
            };
            p.global.lua.prepend_paths.push((value.to_owned(), kind.to_owned()));
        }
        "tune.lua.session-timeout" | "tune.lua.task-timeout" | "tune.lua.service-timeout" => {
            let t = match parse_time_ms(value) {
                Ok(ms) => (ms.ms != 0).then(|| ms.duration()).flatten(),
                Err(TimeError::Overflow) => {
                    p.alert(span, format!("timer overflow in argument <{value}> to <{word}> (maximum value is 2147483647 ms or ~24.8 days)"));
                    return;
                }
                Err(TimeError::Underflow) => {
                    p.alert(
                        span,
                        format!("timer underflow in argument <{value}> to <{word}> (minimum non-null value is 1 ms)"),
                    );
                    return;
                }
                Err(TimeError::BadChar(_)) => {
                    p.alert(span, format!("{word}: invalid timeout"));
                    return;
                }
            };
            let l = &mut p.global.lua;
            match word {
                "tune.lua.session-timeout" => l.session_timeout = Some(t),
                "tune.lua.task-timeout" => l.task_timeout = Some(t),
                _ => l.service_timeout = Some(t),
            }
        }
        "tune.lua.forced-yield" => match value.parse::<i64>() {
            // COMPAT: HAProxy takes any strtoll() value; 0 or less means "never".
            Ok(n) => p.global.lua.forced_yield = Some(u32::try_from(n.max(0)).unwrap_or(u32::MAX)),
            Err(_) => p.alert(span, format!("{word}: invalid number")),
        },
        "tune.lua.maxmem" => {
            if value.is_empty() {
                p.alert(span, format!("'{word}' expects an integer argument (Lua memory size in MB)."));
                return;
            }
            match value.parse::<u64>() {
                Ok(mb) => p.global.lua.maxmem = (mb > 0).then(|| (mb as usize).saturating_mul(1024 * 1024)),
                Err(_) => {
                    let bad = value.chars().find(|c| !c.is_ascii_digit()).unwrap_or(' ');
                    p.alert(span, format!("{word}: invalid number {value} (error at '{bad}')"));
                }
            }
        }
        _ => super::global::unknown_or_not_yet(p, word, span),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{alerts, parse_ok};
    use std::time::Duration;

    #[test]
    fn lua_keywords_fill_the_settings() {
        let cfg = parse_ok(
            "global\n lua-prepend-path /usr/share/lua/?.lua\n lua-prepend-path /lib/?.so cpath\n lua-load /a.lua x y\n\
             lua-load-per-thread /b.lua\n tune.lua.maxmem 8\n tune.lua.forced-yield 500\n\
             tune.lua.session-timeout 2s\n tune.lua.task-timeout 0\n tune.lua.service-timeout 100ms\n",
        );
        let l = &cfg.global.lua;
        assert_eq!(l.loads.len(), 2);
        assert_eq!((l.loads[0].path.as_str(), l.loads[0].args.len(), l.loads[1].per_thread), ("/a.lua", 2, true));
        assert_eq!(l.prepend_paths[1], ("/lib/?.so".to_owned(), "cpath".to_owned()));
        assert_eq!(l.maxmem, Some(8 << 20));
        assert_eq!(l.forced_yield, Some(500));
        assert_eq!(l.session_timeout, Some(Some(Duration::from_secs(2))));
        assert_eq!(l.task_timeout, Some(None));
        assert_eq!(l.service_timeout, Some(Some(Duration::from_millis(100))));
    }

    #[test]
    fn lua_keywords_refuse_bad_values_with_haproxy_messages() {
        assert_eq!(alerts("global\n lua-load\n"), ["'lua-load' expects a file name as parameter."]);
        assert_eq!(alerts("global\n lua-load-per-thread\n"), ["'lua-load-per-thread' expects a file as parameter."]);
        assert_eq!(alerts("global\n tune.lua.maxmem 1x\n"), ["tune.lua.maxmem: invalid number 1x (error at 'x')"]);
        assert_eq!(alerts("global\n tune.lua.forced-yield z\n"), ["tune.lua.forced-yield: invalid number"]);
        assert_eq!(
            alerts("global\n lua-prepend-path /x bad\n"),
            ["'lua-prepend-path' expects <type> to either be 'path' or 'cpath'"]
        );
        assert_eq!(alerts("global\n tune.lua.task-timeout 1q\n"), ["tune.lua.task-timeout: invalid timeout"]);
    }
}
