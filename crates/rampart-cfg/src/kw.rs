//! Keyword tables: every keyword HAProxy 2.6 knows, per section, with what rampart does
//! with it (supported, partial, not yet), plus the did-you-mean suggestion.
//!
//! HAProxy counterparts: the `cfg_kws` / `srv_kws` / `bind_kws` / action keyword lists
//! registered by each C file, `common_kw_list` in src/cfgparse-listen.c and
//! src/cfgparse-global.c, and `make_word_fingerprint()` in src/tools.c for suggestions.
//! The names come from HAProxy 2.6's configuration manual (§3, §4.1, §5.1, §5.2) and from
//! `haproxy -dKall`; only names are kept here, the parsing lives in `parse/`.
//!
//! `docs/COMPATIBILITY.md` is generated from these tables ([`compat_markdown`]); a test
//! fails when the two drift apart.

mod actions;
mod args;
pub mod pending;
mod spoe;
mod tables;

pub use actions::{
    CONVERTERS, HTTP_AFTER_RESPONSE_ACTIONS, HTTP_AFTER_RESPONSE_V3_ACTIONS, HTTP_REQUEST_ACTIONS,
    HTTP_REQUEST_V3_ACTIONS, HTTP_RESPONSE_ACTIONS, HTTP_RESPONSE_V3_ACTIONS, TCP_REQUEST_BUILTIN_ACTIONS,
    TCP_REQUEST_CONNECTION_ACTIONS, TCP_REQUEST_CONNECTION_V3_ACTIONS, TCP_REQUEST_CONTENT_ACTIONS,
    TCP_REQUEST_CONTENT_V3_ACTIONS, TCP_RESPONSE_BUILTIN_ACTIONS, TCP_RESPONSE_CONTENT_ACTIONS,
    TCP_RESPONSE_CONTENT_V3_ACTIONS,
};
pub use args::{BIND_OPTIONS, SERVER_OPTIONS};
pub use pending::{Pending, PendingUses};
pub use spoe::{SPOE_AGENT, SPOE_EVENTS, SPOE_GROUP, SPOE_MESSAGE};
pub use tables::{
    BALANCE_ALGOS, FCGI_APP, GLOBAL, LOG_FORWARD, MAILERS, OPTIONS, PEERS, PROGRAM, PROXY, RESOLVERS, SECTIONS,
    STATS_GLOBAL, TIMEOUTS,
};

/// What rampart does with a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Parsed and honoured as HAProxy does.
    Yes,
    /// Parsed; the text says what is missing.
    Partial(&'static str),
    /// HAProxy has it, rampart rejects it with "'kw' is not supported yet".
    No,
    /// HAProxy 2.6 itself rejects it (removed keyword); rampart prints the same error.
    Rejected,
}

/// Section capabilities in the proxy keyword matrix (configuration.txt §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps(pub u8);

impl Caps {
    pub const DEFAULTS: u8 = 1;
    pub const FRONTEND: u8 = 2;
    pub const LISTEN: u8 = 4;
    pub const BACKEND: u8 = 8;
    /// In a `defaults` section, only a named one (the "(!)" of the matrix).
    pub const NAMED_DEFAULTS_ONLY: u8 = 16;

    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// A keyword with its support level (global keywords, `timeout` and `stats` words, sections...).
#[derive(Debug, Clone, Copy)]
pub struct Kw {
    pub name: &'static str,
    pub support: Support,
}

/// A first word of a proxy-section line, with the sections that accept it.
#[derive(Debug, Clone, Copy)]
pub struct ProxyKw {
    pub name: &'static str,
    pub caps: Caps,
    pub support: Support,
}

/// An `option <name>` of a proxy section.
#[derive(Debug, Clone, Copy)]
pub struct OptionKw {
    pub name: &'static str,
    pub caps: Caps,
    /// Accepts the `no` / `default` prefixes (the "(*)" of the matrix).
    pub negatable: bool,
    pub support: Support,
}

/// A `bind` or `server` option; `args` is how many words follow it (HAProxy's `skip`).
#[derive(Debug, Clone, Copy)]
pub struct ArgKw {
    pub name: &'static str,
    pub args: usize,
    pub support: Support,
}

/// A rule action. `prefix` actions take their argument glued to the name, as
/// `set-var(txn.x)` or `track-sc0`.
#[derive(Debug, Clone, Copy)]
pub struct ActionKw {
    pub name: &'static str,
    pub prefix: bool,
    pub support: Support,
}

/// Every keyword of every table, named as a line spells it: sections (`listen`),
/// `global <kw>`, `global stats <kw>`, proxy keywords (`maxconn`), `timeout <kw>`,
/// `option <kw>`, `balance <kw>`, `bind <option>`, `server <option>` (also the
/// `default-server` options) and rule actions (`http-request <action>`,
/// `tcp-request content <action>`...), with what rampart does.
pub fn every_keyword() -> Vec<(String, Support)> {
    let mut out = Vec::new();
    let mut add = |prefix: &str, name: &str, support: Support| out.push((format!("{prefix}{name}"), support));
    SECTIONS.iter().for_each(|k| add("", k.name, k.support));
    GLOBAL.iter().for_each(|k| add("global ", k.name, k.support));
    STATS_GLOBAL.iter().for_each(|k| add("global stats ", k.name, k.support));
    PROXY.iter().for_each(|k| add("", k.name, k.support));
    TIMEOUTS.iter().for_each(|k| add("timeout ", k.name, k.support));
    OPTIONS.iter().for_each(|k| add("option ", k.name, k.support));
    BALANCE_ALGOS.iter().for_each(|k| add("balance ", k.name, k.support));
    BIND_OPTIONS.iter().for_each(|k| add("bind ", k.name, k.support));
    LOG_FORWARD.iter().for_each(|k| add("log-forward ", k.name, k.support));
    RESOLVERS.iter().for_each(|k| add("resolvers ", k.name, k.support));
    FCGI_APP.iter().for_each(|k| add("fcgi-app ", k.name, k.support));
    PEERS.iter().for_each(|k| add("peers ", k.name, k.support));
    MAILERS.iter().for_each(|k| add("mailers ", k.name, k.support));
    PROGRAM.iter().for_each(|k| add("program ", k.name, k.support));
    SERVER_OPTIONS.iter().for_each(|k| add("server ", k.name, k.support));
    for (rule, tables, v3) in ACTION_LISTS {
        let prefix = format!("{rule} ");
        tables.iter().copied().chain([v3]).flat_map(|t| t.iter()).for_each(|k| add(&prefix, k.name, k.support));
    }
    out
}

/// Each rule list: its name, HAProxy 2.6's tables (in its message order), and the
/// HAProxy 3.x actions rampart also accepts there.
type ActionList = (&'static str, &'static [&'static [ActionKw]], &'static [ActionKw]);

static ACTION_LISTS: [ActionList; 7] = [
    ("http-request", &[HTTP_REQUEST_ACTIONS], HTTP_REQUEST_V3_ACTIONS),
    ("http-response", &[HTTP_RESPONSE_ACTIONS], HTTP_RESPONSE_V3_ACTIONS),
    ("http-after-response", &[HTTP_AFTER_RESPONSE_ACTIONS], HTTP_AFTER_RESPONSE_V3_ACTIONS),
    (
        "tcp-request connection",
        &[TCP_REQUEST_BUILTIN_ACTIONS, TCP_REQUEST_CONNECTION_ACTIONS],
        TCP_REQUEST_CONNECTION_V3_ACTIONS,
    ),
    (
        "tcp-request session",
        &[TCP_REQUEST_BUILTIN_ACTIONS, TCP_REQUEST_CONNECTION_ACTIONS],
        TCP_REQUEST_CONNECTION_V3_ACTIONS,
    ),
    (
        "tcp-request content",
        &[TCP_REQUEST_BUILTIN_ACTIONS, TCP_REQUEST_CONTENT_ACTIONS],
        TCP_REQUEST_CONTENT_V3_ACTIONS,
    ),
    (
        "tcp-response content",
        &[TCP_RESPONSE_BUILTIN_ACTIONS, TCP_RESPONSE_CONTENT_ACTIONS],
        TCP_RESPONSE_CONTENT_V3_ACTIONS,
    ),
];

// === lookups ===

/// [`find_action`] in a 2.6 list, then in the HAProxy 3.x actions accepted beside it.
pub fn find_action_v3(list: &'static [ActionKw], v3: &'static [ActionKw], word: &str) -> Option<&'static ActionKw> {
    find_action(list, word).or_else(|| find_action(v3, word))
}

pub fn global_kw(name: &str) -> Option<&'static Kw> {
    GLOBAL.iter().find(|k| k.name == name)
}

pub fn proxy_kw(name: &str) -> Option<&'static ProxyKw> {
    PROXY.iter().find(|k| k.name == name)
}

pub fn option_kw(name: &str) -> Option<&'static OptionKw> {
    OPTIONS.iter().find(|k| k.name == name)
}

pub fn bind_option(name: &str) -> Option<&'static ArgKw> {
    BIND_OPTIONS.iter().find(|k| k.name == name)
}

pub fn server_option(name: &str) -> Option<&'static ArgKw> {
    SERVER_OPTIONS.iter().find(|k| k.name == name)
}

pub fn section_kw(name: &str) -> Option<&'static Kw> {
    SECTIONS.iter().find(|k| k.name == name)
}

/// Finds an action of `list` by exact name, or by prefix for the `(*)` ones, in HAProxy's
/// order (the first match wins).
/// The action `word` names: the exact name, else the longest prefix keyword it starts
/// with (`sc-inc-gpc0(0)` is `sc-inc-gpc0`, not `sc-inc-gpc`).
pub fn find_action(list: &'static [ActionKw], word: &str) -> Option<&'static ActionKw> {
    list.iter()
        .filter(|a| if a.prefix { word.starts_with(a.name) } else { word == a.name })
        .max_by_key(|a| (!a.prefix, a.name.len()))
}

pub fn http_request_action(word: &str) -> Option<&'static ActionKw> {
    find_action(HTTP_REQUEST_ACTIONS, word)
}

/// An action list as HAProxy prints it in its "expects ..." messages.
pub fn action_list_text(list: &[ActionKw]) -> String {
    let names: Vec<String> =
        list.iter().map(|a| format!("'{}{}'", a.name, if a.prefix { "(*)" } else { "" })).collect();
    names.join(", ")
}

pub fn http_request_action_list() -> String {
    action_list_text(HTTP_REQUEST_ACTIONS)
}

/// `true` when `word` starts with a converter name followed by nothing, `(` or `,`: the
/// word continues a sample expression (HAProxy's `sample_parse_expr()`).
pub fn starts_with_converter(word: &str) -> bool {
    let end = word.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | ':')));
    let name = &word[..end.unwrap_or(word.len())];
    !name.is_empty() && CONVERTERS.contains(&name)
}

// === did-you-mean ===

/// Number of character classes: 1..=26 letters, 27 digits, 28 anything else and the
/// word boundaries; 0 is unused so that the arrays index directly.
const CLASSES: usize = 29;

/// A word's spelling fingerprint: which classes appear, and how many times each class
/// follows each other one (word start and end count as "other"). Two spellings of the
/// same word share most transitions, whatever the order of the letters' mistakes.
struct Fingerprint {
    present: [u8; CLASSES],
    pairs: [[u8; CLASSES]; CLASSES],
}

fn char_class(c: char) -> usize {
    match c.to_ascii_lowercase() {
        l @ 'a'..='z' => (l as usize) - ('a' as usize) + 1,
        '0'..='9' => 27,
        _ => 28,
    }
}

impl Fingerprint {
    fn of(word: &str) -> Self {
        let mut fp = Fingerprint { present: [0; CLASSES], pairs: [[0; CLASSES]; CLASSES] };
        let mut prev = 28;
        for c in word.chars() {
            let cur = char_class(c);
            fp.present[cur] = 1;
            fp.pairs[prev][cur] = fp.pairs[prev][cur].saturating_add(1);
            prev = cur;
        }
        fp.pairs[prev][28] = fp.pairs[prev][28].saturating_add(1);
        fp
    }

    fn distance(&self, other: &Fingerprint) -> usize {
        let present = self.present.iter().zip(&other.present).map(|(a, b)| a.abs_diff(*b) as usize);
        let pairs = self
            .pairs
            .iter()
            .zip(&other.pairs)
            .flat_map(|(ra, rb)| ra.iter().zip(rb).map(|(a, b)| a.abs_diff(*b) as usize));
        present.sum::<usize>() + pairs.sum::<usize>()
    }
}

/// The candidate closest in spelling to `word`, or `None` when nothing is close enough
/// (as in HAProxy: the distance must not exceed twice the length of either word). On a
/// tie the first candidate wins, so tables list the likelier words first.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let fp = Fingerprint::of(word);
    let mut best: Option<(&str, usize)> = None;
    for cand in candidates {
        let dist = fp.distance(&Fingerprint::of(cand));
        let better = match best {
            Some((_, d)) => dist < d,
            None => true,
        };
        if better {
            best = Some((cand, dist));
        }
    }
    let (cand, dist) = best?;
    (dist <= 2 * word.len() && dist <= 2 * cand.len()).then_some(cand)
}

/// Suggestion for an unknown first word in a `global` section.
pub fn suggest_global(word: &str) -> Option<&'static str> {
    let registered = GLOBAL.iter().map(|k| k.name).filter(|n| !tables::GLOBAL_SUGGEST_ORDER.contains(n));
    suggest(word, registered.chain(tables::GLOBAL_SUGGEST_ORDER.iter().copied()))
}

/// Suggestion for an unknown first word in a proxy or `defaults` section.
pub fn suggest_proxy(word: &str) -> Option<&'static str> {
    // Registered keywords first, then HAProxy's own list in its order (ties go to the first).
    let registered = PROXY
        .iter()
        .filter(|k| k.support != Support::Rejected && !tables::PROXY_SUGGEST_ORDER.contains(&k.name))
        .map(|k| k.name);
    suggest(word, registered.chain(tables::PROXY_SUGGEST_ORDER.iter().copied()))
}

/// Suggestion for an unknown `option` name.
pub fn suggest_option(word: &str) -> Option<&'static str> {
    suggest(word, OPTIONS.iter().filter(|k| k.support != Support::Rejected).map(|k| k.name))
}

pub fn suggest_bind_option(word: &str) -> Option<&'static str> {
    suggest(word, BIND_OPTIONS.iter().map(|k| k.name))
}

pub fn suggest_server_option(word: &str) -> Option<&'static str> {
    suggest(word, SERVER_OPTIONS.iter().map(|k| k.name))
}

pub fn suggest_http_request_action(word: &str) -> Option<&'static str> {
    suggest_action(word, HTTP_REQUEST_ACTIONS, &[])
}

/// HAProxy's `action_suggest()`: the closest action of `list`, then of `extra`; a prefix
/// action (`set-var(*)`...) is allowed a larger distance, since the word carries its
/// argument.
pub fn suggest_action(word: &str, list: &'static [ActionKw], extra: &[&'static str]) -> Option<&'static str> {
    if word.is_empty() {
        return None;
    }
    let fp = Fingerprint::of(word);
    let mut best: Option<(&'static str, usize, bool)> = None;
    let candidates = list.iter().map(|a| (a.name, a.prefix)).chain(extra.iter().map(|e| (*e, false)));
    for (name, prefix) in candidates {
        let dist = fp.distance(&Fingerprint::of(name));
        if best.is_none_or(|(_, d, _)| dist < d) {
            best = Some((name, dist, prefix));
        }
    }
    let (name, dist, prefix) = best?;
    let factor = if prefix { 3 } else { 2 };
    (dist <= factor * word.len() && dist <= factor * name.len()).then_some(name)
}

// === docs/COMPATIBILITY.md ===

fn support_cell(s: Support) -> String {
    match s {
        Support::Yes => "supported".to_owned(),
        Support::Partial(what) => format!("partial: {what}"),
        Support::No => "not yet".to_owned(),
        Support::Rejected => "rejected, as by HAProxy 2.6 (removed keyword)".to_owned(),
    }
}

fn caps_cell(caps: Caps) -> String {
    let mark = |bit| if caps.has(bit) { "X" } else { "-" };
    let def =
        if caps.has(Caps::DEFAULTS) && caps.has(Caps::NAMED_DEFAULTS_ONLY) { "X (!)" } else { mark(Caps::DEFAULTS) };
    format!("{def} | {} | {} | {}", mark(Caps::FRONTEND), mark(Caps::LISTEN), mark(Caps::BACKEND))
}

fn kw_table(out: &mut String, title: &str, prefix: &str, kws: &[Kw]) {
    out.push_str(&format!("### {title}\n\n| keyword | status |\n| --- | --- |\n"));
    for k in kws {
        out.push_str(&format!("| `{prefix}{}` | {} |\n", k.name, support_cell(k.support)));
    }
    out.push('\n');
}

fn arg_table(out: &mut String, title: &str, kws: &[ArgKw]) {
    out.push_str(&format!("### {title}\n\n| option | status |\n| --- | --- |\n"));
    for k in kws {
        out.push_str(&format!("| `{}` | {} |\n", k.name, support_cell(k.support)));
    }
    out.push('\n');
}

/// The keyword part of docs/COMPATIBILITY.md, rendered from the tables above.
pub fn compat_markdown() -> String {
    let mut out = String::new();
    kw_table(&mut out, "Sections", "", SECTIONS);
    kw_table(&mut out, "Global keywords", "", GLOBAL);
    kw_table(&mut out, "`log-forward` keywords", "", LOG_FORWARD);
    kw_table(&mut out, "`resolvers` keywords", "", RESOLVERS);
    kw_table(&mut out, "`fcgi-app` keywords", "", FCGI_APP);
    kw_table(&mut out, "`peers` keywords", "", PEERS);
    kw_table(&mut out, "`mailers` keywords", "", MAILERS);
    kw_table(&mut out, "`program` keywords", "", PROGRAM);
    kw_table(&mut out, "Global `stats` keywords", "stats ", STATS_GLOBAL);
    out.push_str("### Proxy keywords\n\n(!) = only in a named `defaults` section.\n\n");
    out.push_str(
        "| keyword | defaults | frontend | listen | backend | status |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for k in PROXY {
        out.push_str(&format!("| `{}` | {} | {} |\n", k.name, caps_cell(k.caps), support_cell(k.support)));
    }
    out.push('\n');
    kw_table(&mut out, "Timeouts", "timeout ", TIMEOUTS);
    out.push_str("### Proxy options\n\n(*) = accepts `no option` / `default option`.\n\n");
    out.push_str(
        "| option | defaults | frontend | listen | backend | status |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for k in OPTIONS {
        let neg = if k.negatable { " (*)" } else { "" };
        out.push_str(&format!("| `option {}`{neg} | {} | {} |\n", k.name, caps_cell(k.caps), support_cell(k.support)));
    }
    out.push('\n');
    kw_table(&mut out, "Balance algorithms", "balance ", BALANCE_ALGOS);
    arg_table(&mut out, "Bind options", BIND_OPTIONS);
    arg_table(&mut out, "Server and default-server options", SERVER_OPTIONS);
    for (rule, parts, v3) in ACTION_LISTS {
        out.push_str(&format!("\n### {rule} actions\n\n| action | status |\n| --- | --- |\n"));
        for a in parts.iter().flat_map(|p| p.iter()) {
            let star = if a.prefix { "(*)" } else { "" };
            out.push_str(&format!("| `{rule} {}{star}` | {} |\n", a.name, support_cell(a.support)));
        }
        for a in v3.iter() {
            out.push_str(&format!("| `{rule} {}` (HAProxy 3.x) | {} |\n", a.name, support_cell(a.support)));
        }
    }
    out.push_str(
        "\n### SPOE configuration file\n\nThe keywords of the file `filter spoe [engine <name>] config <file>` names \
        (HAProxy's doc/SPOE.txt), per section; generated from crates/rampart-cfg/src/kw/spoe.rs.\n\n",
    );
    kw_table(&mut out, "`spoe-agent` keywords", "", SPOE_AGENT);
    kw_table(&mut out, "`spoe-message` keywords", "", SPOE_MESSAGE);
    kw_table(&mut out, "`spoe-group` keywords", "", SPOE_GROUP);
    kw_table(&mut out, "`spoe-message` events", "event ", SPOE_EVENTS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_match_haproxy_on_common_typos() {
        // Each pair was checked against `haproxy -c` (2.6.12).
        assert_eq!(suggest_proxy("balanse"), Some("balance"));
        assert_eq!(suggest_proxy("nolog"), Some("log"));
        assert_eq!(suggest_proxy("defualt_backend"), Some("default_backend"));
        assert_eq!(suggest_proxy("use-backend"), Some("use_backend"));
        assert_eq!(suggest_proxy("timout"), Some("timeout"));
        assert_eq!(suggest_proxy("sever"), Some("server"));
        assert_eq!(suggest_global("nbthred"), Some("nbthread"));
        assert_eq!(suggest_global("tune.bufsiz"), Some("tune.bufsize"));
        assert_eq!(suggest_global("deamon"), Some("daemon"));
        assert_eq!(suggest_global("maxcon"), Some("maxconn"));
        assert_eq!(suggest_option("dontlognul"), Some("dontlognull"));
        assert_eq!(suggest_option("forwardfr"), Some("forwardfor"));
        assert_eq!(suggest_server_option("wieght"), Some("weight"));
        assert_eq!(suggest_server_option("foo"), Some("tfo"));
        assert_eq!(suggest_http_request_action("retrun"), Some("return"));
    }

    #[test]
    fn no_suggestion_for_unrelated_words() {
        assert_eq!(suggest_proxy("foo"), None);
        assert_eq!(suggest_proxy("xyzzyqqq"), None);
    }

    #[test]
    fn suggestion_prefers_first_candidate_on_tie() {
        assert_eq!(suggest("ab", ["ab", "ab"]), Some("ab"));
        assert_eq!(suggest("abc", ["abd", "abe"]), Some("abd"));
    }

    #[test]
    fn prefix_actions_match_with_their_argument() {
        assert_eq!(http_request_action("set-var(txn.x)").map(|a| a.name), Some("set-var"));
        assert_eq!(http_request_action("set-var-fmt(txn.x)").map(|a| a.name), Some("set-var-fmt"));
        assert_eq!(http_request_action("track-sc0").map(|a| a.name), Some("track-sc"));
        assert_eq!(http_request_action("return").map(|a| a.support), Some(Support::Yes));
        assert!(http_request_action("retrun").is_none());
        assert_eq!(find_action(TCP_RESPONSE_CONTENT_ACTIONS, "unset-var(txn.a)").map(|a| a.name), Some("unset-var"));
        assert!(find_action(HTTP_AFTER_RESPONSE_ACTIONS, "deny").is_none());
    }

    #[test]
    fn converter_words_are_recognised() {
        assert!(starts_with_converter("lower"));
        assert!(starts_with_converter("map_str(/etc/x.map),lower"));
        assert!(starts_with_converter("set-var(txn.x)"));
        assert!(!starts_with_converter("if"));
        assert!(!starts_with_converter("len"));
        assert!(!starts_with_converter("lowercase"));
        assert!(!starts_with_converter(""));
    }

    #[test]
    fn action_suggestions() {
        assert_eq!(
            suggest_action("acept", TCP_RESPONSE_CONTENT_ACTIONS, &["accept", "reject", "close"]),
            Some("accept")
        );
        assert_eq!(suggest_action("set-header", HTTP_AFTER_RESPONSE_ACTIONS, &[]), Some("set-header"));
        assert_eq!(suggest_action("", HTTP_REQUEST_ACTIONS, &[]), None);
        assert_eq!(suggest_action("zzzzzzzzzzzzzzzzzzzz", HTTP_REQUEST_ACTIONS, &[]), None);
    }

    #[test]
    fn tables_have_no_duplicates() {
        fn check<'a>(what: &str, names: impl Iterator<Item = &'a str>) {
            let mut seen = std::collections::HashSet::new();
            for n in names {
                assert!(seen.insert(n), "{what}: duplicate '{n}'");
            }
        }
        check("global", GLOBAL.iter().map(|k| k.name));
        check("proxy", PROXY.iter().map(|k| k.name));
        check("option", OPTIONS.iter().map(|k| k.name));
        check("bind", BIND_OPTIONS.iter().map(|k| k.name));
        check("server", SERVER_OPTIONS.iter().map(|k| k.name));
        check("action", HTTP_REQUEST_ACTIONS.iter().map(|k| k.name));
        check("response action", HTTP_RESPONSE_ACTIONS.iter().map(|k| k.name));
        check("after-response action", HTTP_AFTER_RESPONSE_ACTIONS.iter().map(|k| k.name));
        check("tcp connection action", TCP_REQUEST_CONNECTION_ACTIONS.iter().map(|k| k.name));
        check("tcp content action", TCP_REQUEST_CONTENT_ACTIONS.iter().map(|k| k.name));
        check("tcp response action", TCP_RESPONSE_CONTENT_ACTIONS.iter().map(|k| k.name));
        check("converter", CONVERTERS.iter().copied());
        check("timeout", TIMEOUTS.iter().map(|k| k.name));
        check("section", SECTIONS.iter().map(|k| k.name));
    }

    /// docs/COMPATIBILITY.md must contain the tables exactly as rendered from this module.
    /// Run with `RAMPART_BLESS=1` to rewrite the generated part of the file.
    #[test]
    fn compatibility_doc_lists_every_keyword() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/COMPATIBILITY.md");
        let doc = std::fs::read_to_string(&path).unwrap_or_default();
        let generated = compat_markdown();
        const BEGIN: &str = "<!-- BEGIN GENERATED: rampart-cfg kw::compat_markdown -->\n";
        const END: &str = "<!-- END GENERATED -->\n";
        if std::env::var_os("RAMPART_BLESS").is_some() {
            let (head, tail) = match (doc.find(BEGIN), doc.find(END)) {
                (Some(b), Some(e)) => (doc[..b].to_owned(), doc[e + END.len()..].to_owned()),
                _ => (doc.clone(), String::new()),
            };
            let new = format!("{head}{BEGIN}{generated}{END}{tail}");
            std::fs::write(&path, new).expect("write COMPATIBILITY.md");
            return;
        }
        assert!(
            doc.contains(&format!("{BEGIN}{generated}{END}")),
            "docs/COMPATIBILITY.md is out of date with kw.rs; rerun this test with RAMPART_BLESS=1"
        );
        for name in GLOBAL.iter().map(|k| k.name).chain(PROXY.iter().map(|k| k.name)) {
            assert!(doc.contains(&format!("`{name}`")), "'{name}' missing from COMPATIBILITY.md");
        }
        for k in OPTIONS {
            assert!(doc.contains(&format!("`option {}`", k.name)), "option '{}' missing", k.name);
        }
        for k in BIND_OPTIONS.iter().chain(SERVER_OPTIONS) {
            assert!(doc.contains(&format!("`{}`", k.name)), "'{}' missing", k.name);
        }
        for a in HTTP_REQUEST_ACTIONS {
            assert!(doc.contains(&format!("`http-request {}", a.name)), "action '{}' missing", a.name);
        }
        for a in HTTP_RESPONSE_ACTIONS {
            assert!(doc.contains(&format!("`http-response {}", a.name)), "action '{}' missing", a.name);
        }
    }
}
