//! `bind <addr>[,<addr>...] [options]` lines.
//!
//! HAProxy counterparts: the `bind` branch of `cfg_parse_listen()`, `str2listener()`
//! (src/cfgparse.c) and `bind_parse_args_list()` (src/listener.c).

use crate::kw::{self, Support};
use crate::model::Bind;

use super::addr::parse_listen_addrs;
use super::proxy::Ctx;
use super::{arg, not_yet};

pub(super) fn parse_bind(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'bind' not allowed in 'defaults' section.");
        return;
    }
    // COMPAT: HAProxy warns and still builds the listeners of a backend, which are then
    // never used; we only warn.
    if cx.ignored_without(true, "bind", "") {
        return;
    }
    let spec = arg(words, 1);
    if spec.is_empty() {
        cx.alert("'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... as arguments.");
        return;
    }
    let addrs = match parse_listen_addrs(spec) {
        Ok(a) => a,
        Err(e) => {
            cx.alert(format!("'bind' : {e}"));
            return;
        }
    };
    let ctx = format!("'bind {spec}' in section '{}'", cx.pb.kind.section_word());
    let Some(name) = parse_bind_options(cx, &words[2..], &ctx) else { return };
    cx.pb.px.binds.push(Bind { addrs, name, span: cx.span.clone() });
}

/// Parses the options after the address; `None` on error (already reported), else the
/// `name` option's value if any.
fn parse_bind_options(cx: &mut Ctx<'_>, opts: &[String], ctx: &str) -> Option<Option<String>> {
    let mut name = None;
    let mut i = 0;
    while let Some(word) = opts.get(i) {
        let Some(k) = kw::bind_option(word) else {
            let msg = match kw::suggest_bind_option(word) {
                Some(best) => format!("{ctx}: unknown keyword '{word}'; did you mean '{best}' maybe ?"),
                None => format!("{ctx}: unknown keyword '{word}'."),
            };
            cx.alert(msg);
            return None;
        };
        if k.support == Support::No {
            cx.alert(format!("{ctx} : {}", not_yet(word)));
            return None;
        }
        // Only `name` is supported so far.
        match opts.get(i + 1).filter(|n| !n.is_empty()) {
            Some(n) => name = Some(n.clone()),
            None => {
                cx.alert(format!("{ctx} : 'name' : missing name"));
                return None;
            }
        }
        i += 1 + k.args;
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    use crate::model::ListenAddr;
    use crate::parse::tests::{alerts, parse_ok, warnings};

    #[test]
    fn bind_lines() {
        let cfg = parse_ok("frontend f\n bind :80,127.0.0.1:81-82 name web\n bind unix@/tmp/x.sock\n bind fd@4\n");
        let binds = &cfg.proxies[0].binds;
        assert_eq!(binds.len(), 3);
        assert_eq!(binds[0].addrs.len(), 3);
        assert_eq!(binds[0].name.as_deref(), Some("web"));
        assert_eq!(binds[0].span.line, 2);
        assert_eq!(binds[1].addrs, [ListenAddr::Unix("/tmp/x.sock".into())]);
        assert_eq!(binds[2].addrs, [ListenAddr::Fd(4)]);
    }

    #[test]
    fn bind_errors() {
        assert_eq!(
            alerts("frontend f\n bind :80 ssl crt /x.pem\n"),
            ["'bind :80' in section 'frontend' : 'ssl' is not supported yet"]
        );
        assert_eq!(
            alerts("listen f\n bind :80 nme x\n"),
            ["'bind :80' in section 'listen': unknown keyword 'nme'; did you mean 'name' maybe ?"]
        );
        assert_eq!(
            alerts("frontend f\n bind :80 name\n"),
            ["'bind :80' in section 'frontend' : 'name' : missing name"]
        );
        assert_eq!(alerts("frontend f\n bind 127.0.0.1\n"), ["'bind' : missing port specification in '127.0.0.1'"]);
        assert_eq!(
            alerts("frontend f\n bind\n"),
            ["'bind' expects {<path>|[addr1]:port1[-end1]}{,[addr]:port[-end]}... as arguments."]
        );
        assert_eq!(alerts("defaults\n bind :80\n"), ["'bind' not allowed in 'defaults' section."]);
        assert_eq!(
            warnings("backend b\n bind :80\n"),
            ["'bind' ignored because backend 'b' has no frontend capability."]
        );
    }
}
