//! `server-state-base`, `server-state-file` (global), `load-server-state-from-file` and
//! `server-state-file-name` (defaults, backends). HAProxy counterparts:
//! `cfg_parse_global()` (src/cfgparse-global.c), `cfg_parse_listen()`
//! (src/cfgparse-listen.c).

use crate::model::server_state::LoadFrom;
use crate::span::Span;

use super::ctx::Ctx;
use super::{arg, Parser};

/// `server-state-base <dir>` and `server-state-file <file>`: set once.
pub(super) fn parse_global(p: &mut Parser, words: &[String], span: &Span) {
    let kw = words[0].as_str();
    let base = kw == "server-state-base";
    let slot = if base { &p.global.server_state.base } else { &p.global.server_state.file };
    if slot.is_some() {
        return p.alert(span, format!("'{kw}' already specified. Continuing."));
    }
    let value = arg(words, 1);
    if value.is_empty() {
        let what = if base { "expects one argument: a directory path" } else { "expect one argument: a file path" };
        return p.alert(span, format!("'{kw}' {what}."));
    }
    let st = &mut p.global.server_state;
    let slot = if base { &mut st.base } else { &mut st.file };
    *slot = Some(value.to_owned());
}

/// `load-server-state-from-file global|local|none`.
pub(super) fn parse_load_from(cx: &mut Ctx<'_>, words: &[String]) {
    cx.ignored_without(false, "load-server-state-from-file", "");
    let load = match arg(words, 1) {
        "global" => LoadFrom::Global,
        "local" => LoadFrom::Local,
        "none" => LoadFrom::None,
        other => {
            return cx
                .alert(format!("'load-server-state-from-file' expects 'global', 'local' or 'none'. Got '{other}'"))
        }
    };
    cx.pb.px.server_state.load = load;
}

/// `server-state-file-name [<file>|use-backend-name]`.
pub(super) fn parse_file_name(cx: &mut Ctx<'_>, words: &[String]) {
    cx.ignored_without(false, "server-state-file-name", "");
    if cx.too_many(words, 1, 0) {
        return;
    }
    let name = match arg(words, 1) {
        // COMPAT: HAProxy takes the name of the section the line is in (a `defaults`
        // section's own name when written there).
        "" | "use-backend-name" => cx.pb.px.name.clone(),
        file => file.to_owned(),
    };
    cx.pb.px.server_state.file_name = Some(name);
}

#[cfg(test)]
mod tests {
    use crate::model::server_state::LoadFrom;
    use crate::parse::tests::{alerts, parse_ok};

    #[test]
    fn global_settings_and_paths() {
        let c = parse_ok("global\n server-state-base /var/lib/h\n server-state-file st\n");
        let st = &c.global.server_state;
        assert_eq!(st.global_path().unwrap().to_str(), Some("/var/lib/h/st"));
        assert_eq!(st.path_of("/abs").to_str(), Some("/abs"));
        let c = parse_ok("global\n server-state-file st\n");
        assert_eq!(c.global.server_state.global_path().unwrap().to_str(), Some("st"));
    }

    #[test]
    fn backend_settings_inherit_from_defaults() {
        let c = parse_ok(
            "defaults\n load-server-state-from-file global\nbackend b\n server s 127.0.0.1:1\n\
             backend c\n load-server-state-from-file local\n server-state-file-name\n server s 127.0.0.1:1\n\
             backend d\n load-server-state-from-file local\n server-state-file-name x.st\n",
        );
        let st = |n: &str| c.proxies.iter().find(|p| p.name == n).unwrap().server_state.clone();
        assert_eq!(st("b").load, LoadFrom::Global);
        assert_eq!((st("c").load, st("c").file_name.as_deref()), (LoadFrom::Local, Some("c")));
        assert_eq!(st("d").file_name.as_deref(), Some("x.st"));
    }

    #[test]
    fn bad_values_as_haproxy_words_them() {
        assert_eq!(
            alerts("backend b\n load-server-state-from-file all\n"),
            ["'load-server-state-from-file' expects 'global', 'local' or 'none'. Got 'all'"]
        );
        assert_eq!(alerts("global\n server-state-file\n"), ["'server-state-file' expect one argument: a file path."]);
        assert_eq!(
            alerts("global\n server-state-base /a\n server-state-base /b\n"),
            ["'server-state-base' already specified. Continuing."]
        );
    }
}
