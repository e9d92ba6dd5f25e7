//! `stats ...` in a proxy or `defaults` section: the HTML statistics page and its CSV
//! export. Any of these keywords enables the page (as in HAProxy); a proxy inherits the
//! page of its `defaults` section. HAProxy counterpart: the `stats` block of
//! cfg_parse_listen() (src/cfgparse-listen.c) and uri_auth.c.

use std::time::Duration;

use crate::model::{StatsAuth, StatsPage};

use super::arg;
use super::ctx::Ctx;
use super::not_yet;
use super::rule::parse_condition;
use super::value::{parse_time_ms, TimeError};

/// HAProxy's default `stats uri`.
pub const DEFAULT_URI: &str = "/haproxy?stats";

const UNKNOWN: &str = "expects 'admin', 'uri', 'realm', 'auth', 'scope', 'enable', 'hide-version', 'show-node', \
                       'show-desc' or 'show-legends'.";

/// The proxy's page, enabled by this line if it was not yet.
fn page<'c>(cx: &'c mut Ctx<'_>) -> &'c mut StatsPage {
    let span = cx.span.clone();
    cx.pb.px.stats.get_or_insert_with(|| StatsPage::new(DEFAULT_URI, span))
}

/// `stats <what> [args]`.
pub(super) fn parse_stats(cx: &mut Ctx<'_>, words: &[String]) {
    let (sub, value) = (arg(words, 1), arg(words, 2));
    match sub {
        "enable" => {
            page(cx);
        }
        "uri" if value.is_empty() => cx.alert("'uri' needs an URI prefix."),
        "uri" => page(cx).uri = value.to_owned(),
        "realm" if value.is_empty() => cx.alert("'realm' needs an realm name."),
        // HAProxy reads the realm up to the end of the line, spaces as they are
        "realm" => page(cx).realm = Some(words[2..].join(" ")),
        "auth" if value.is_empty() => cx.alert("'auth' needs a user:password account."),
        "auth" => {
            let (user, pass) = value.split_once(':').unwrap_or((value, ""));
            page(cx).auth.push(StatsAuth { user: user.to_owned(), password: pass.to_owned() });
        }
        "scope" if value.is_empty() => cx.alert("'scope' needs a proxy name."),
        "scope" => page(cx).scope.push(value.to_owned()),
        "refresh" => match parse_time_ms(value) {
            Ok(ms) => page(cx).refresh = Some(Duration::from_secs(u64::from(ms.ms).div_ceil(1000).max(1))),
            Err(TimeError::BadChar('\0')) => cx.alert("'refresh' needs a positive interval."),
            Err(TimeError::BadChar(c)) => {
                cx.alert(format!("unexpected character '{c}' in argument to stats refresh interval."))
            }
            Err(_) => cx.alert("'refresh' needs a positive interval."),
        },
        "hide-version" => page(cx).hide_version = true,
        "show-legends" => page(cx).show_legends = true,
        "show-modules" => page(cx).show_modules = true,
        "show-node" => page(cx).show_node = Some(value.to_owned()).filter(|v| !v.is_empty()).or(Some(String::new())),
        "show-desc" => page(cx).show_desc = Some(words[2..].join(" ")),
        "admin" => parse_admin(cx, words),
        "http-request" | "bind-process" => cx.alert(not_yet(&format!("stats {sub}"))),
        _ => cx.alert(format!("unknown stats parameter '{sub}', {UNKNOWN}")),
    }
}

/// `stats admin if|unless <cond>`: not in `defaults` (HAProxy's rule).
fn parse_admin(cx: &mut Ctx<'_>, words: &[String]) {
    if cx.is_defaults() {
        cx.alert("'stats admin' not allowed in 'defaults' section.");
        return;
    }
    let Ok(Some(cond)) = parse_condition(words, 2, cx.span) else {
        cx.alert("'stats admin' requires either 'if' or 'unless' followed by a condition.");
        return;
    };
    page(cx).admin.push(cond);
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{alerts, parse};

    const T: &str = "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";

    #[test]
    fn any_stats_keyword_enables_the_page_with_haproxys_defaults() {
        let (cfg, _) = parse(&format!("{T}listen l\n bind :80\n stats refresh 2500ms\n server s 127.0.0.1:1\n"));
        let page = cfg.proxies[0].stats.clone().expect("enabled");
        assert_eq!(page.uri, "/haproxy?stats");
        assert_eq!(page.refresh, Some(std::time::Duration::from_secs(3)));
        assert!(page.auth.is_empty() && page.realm.is_none());
    }

    #[test]
    fn settings_are_kept_and_inherited_from_defaults() {
        let text = format!(
            "{T} stats uri /st\n stats auth a:b\n stats auth c\nlisten l\n bind :80\n stats realm My Realm\n\
             stats hide-version\n stats scope l\n server s 127.0.0.1:1\n"
        );
        let (cfg, _) = parse(&text);
        let page = cfg.proxies[0].stats.clone().expect("enabled");
        assert_eq!(page.uri, "/st");
        assert_eq!(page.realm.as_deref(), Some("My Realm"));
        assert_eq!(
            page.auth.iter().map(|a| (a.user.as_str(), a.password.as_str())).collect::<Vec<_>>(),
            [("a", "b"), ("c", "")]
        );
        assert!(page.hide_version);
        assert_eq!(page.scope, ["l"]);
    }

    #[test]
    fn admin_conditions_are_kept_and_refused_in_defaults() {
        let text =
            format!("{T}listen l\n bind :80\n stats admin if TRUE\n stats admin unless FALSE\n server s 127.0.0.1:1\n");
        let (cfg, _) = parse(&text);
        let page = cfg.proxies[0].stats.clone().expect("enabled");
        assert_eq!(page.uri, "/haproxy?stats");
        let conds: Vec<(bool, Vec<String>)> = page.admin.iter().map(|c| (c.negate, c.words.clone())).collect();
        assert_eq!(conds, [(false, vec!["TRUE".to_owned()]), (true, vec!["FALSE".to_owned()])]);
        let got = alerts(&format!("{T} stats admin if TRUE\nlisten l\n bind :80\n server s 127.0.0.1:1\n"));
        assert!(got.iter().any(|m| m == "'stats admin' not allowed in 'defaults' section."), "{got:?}");
    }

    #[test]
    fn bad_and_missing_stats_settings_are_refused_as_haproxy_words_it() {
        for (line, msg) in [
            ("stats uri", "'uri' needs an URI prefix."),
            ("stats scope", "'scope' needs a proxy name."),
            ("stats refresh x", "unexpected character 'x' in argument to stats refresh interval."),
            ("stats admin", "'stats admin' requires either 'if' or 'unless' followed by a condition."),
            ("stats admin foo", "'stats admin' requires either 'if' or 'unless' followed by a condition."),
            ("stats http-request deny", "'stats http-request' is not supported yet"),
            (
                "stats bogus",
                "unknown stats parameter 'bogus', expects 'admin', 'uri', 'realm', 'auth', 'scope', 'enable', \
                 'hide-version', 'show-node', 'show-desc' or 'show-legends'.",
            ),
        ] {
            let got = alerts(&format!("{T}listen l\n bind :80\n {line}\n server s 127.0.0.1:1\n"));
            assert!(got.iter().any(|m| m.starts_with(msg)), "{line}: {got:?}");
        }
    }
}
