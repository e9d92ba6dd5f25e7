//! `cookie <name> [rewrite|insert|prefix] [indirect] [nocache] [postonly] [preserve]
//! [httponly] [secure] [domain <d>]* [maxidle <t>] [maxlife <t>] [attr <v>]*` in
//! `defaults`, `listen` and `backend`
//! sections (configuration.txt §4.2). The server side (`server ... cookie <value>`) is
//! parsed with the other server options (`server.rs`).
//!
//! HAProxy counterpart: the `cookie` branch of `cfg_parse_listen()`
//! (src/cfgparse-listen.c).
//!
//! Not yet: `dynamic` (cookies derived from `dynamic-cookie-key`), refused with "not
//! supported yet".

use crate::model::{CookieMode, CookiePersist};

use super::ctx::Ctx;
use super::value::{invalid_char, parse_time_in, TimeError};
use super::{arg, not_yet};

/// The options HAProxy lists when it meets an unknown one.
const UNKNOWN_OPTION: &str = "'cookie' supports 'rewrite', 'insert', 'prefix', 'indirect', 'nocache', 'postonly', \
                              'domain', 'maxidle', 'dynamic', 'maxlife' and 'attr' options.";

pub(super) fn parse_cookie(cx: &mut Ctx<'_>, words: &[String]) {
    cx.ignored_without(false, "cookie", "");
    let name = arg(words, 1);
    if name.is_empty() {
        cx.alert("'cookie' expects <cookie_name> as argument.");
        return;
    }
    match parse_options(cx, name, &words[2..]) {
        Some(ck) => cx.pb.px.cookie = Some(ck),
        // as HAProxy, a refused line leaves the proxy without a cookie (it reset them)
        None => cx.pb.px.cookie = None,
    }
}

/// The options after the name; `None` once one was refused (reported).
fn parse_options(cx: &mut Ctx<'_>, name: &str, opts: &[String]) -> Option<CookiePersist> {
    let mut ck = CookiePersist {
        name: name.to_owned(),
        mode: CookieMode::Passive,
        indirect: false,
        nocache: false,
        postonly: false,
        preserve: false,
        httponly: false,
        secure: false,
        domain: None,
        attrs: None,
        maxidle: 0,
        maxlife: 0,
        span: cx.span.clone(),
    };
    // the modes given, to report incompatible ones as HAProxy does (after the loop)
    let (mut rewrite, mut insert, mut prefix) = (false, false, false);
    let mut i = 0;
    while let Some(word) = opts.get(i) {
        let value = opts.get(i + 1).map_or("", String::as_str);
        match word.as_str() {
            "rewrite" => rewrite = true,
            "insert" => insert = true,
            "prefix" => prefix = true,
            "indirect" => ck.indirect = true,
            "nocache" => ck.nocache = true,
            "postonly" => ck.postonly = true,
            "preserve" => ck.preserve = true,
            "httponly" => ck.httponly = true,
            "secure" => ck.secure = true,
            "domain" => {
                add_domain(cx, &mut ck, value)?;
                i += 1;
            }
            "attr" => {
                add_attr(cx, &mut ck, value)?;
                i += 1;
            }
            "maxidle" | "maxlife" => {
                let secs = parse_lifetime(cx, word, value)?;
                if word == "maxidle" {
                    ck.maxidle = secs;
                } else {
                    ck.maxlife = secs;
                }
                i += 1;
            }
            "dynamic" => {
                cx.alert(not_yet("cookie dynamic"));
                return None;
            }
            _ => {
                cx.alert(UNKNOWN_OPTION);
                return None;
            }
        }
        i += 1;
    }
    let mut ok = true;
    if rewrite && ck.indirect {
        cx.alert("cookie 'rewrite' and 'indirect' modes are incompatible.");
        ok = false;
    }
    if [rewrite, insert, prefix].iter().filter(|&&m| m).count() > 1 {
        cx.alert("cookie 'rewrite', 'insert' and 'prefix' modes are incompatible.");
        ok = false;
    }
    if ck.preserve && !insert && !ck.indirect {
        cx.alert("cookie 'preserve' requires at least 'insert' or 'indirect'.");
        ok = false;
    }
    ck.mode = if insert {
        CookieMode::Insert
    } else if rewrite {
        CookieMode::Rewrite
    } else if prefix {
        CookieMode::Prefix
    } else {
        CookieMode::Passive
    };
    ok.then_some(ck)
}

/// The `<time>` of `maxidle`/`maxlife`: seconds unless a unit says otherwise (HAProxy's
/// `parse_time_err(.., TIME_UNIT_S)`), rounded up, below 2^31.
fn parse_lifetime(cx: &mut Ctx<'_>, word: &str, value: &str) -> Option<u32> {
    if value.is_empty() {
        let what = if word == "maxidle" { "idletime" } else { "lifetime" };
        cx.alert(format!("'{word}' expects <{what}> in seconds as argument."));
        return None;
    }
    match parse_time_in(value, 1_000_000) {
        Ok((secs, trailing)) => {
            if let Some(c) = trailing {
                cx.warning(super::value::time_trailing_warning(c, value));
            }
            Some(secs)
        }
        Err(TimeError::Overflow) => {
            cx.alert(format!(
                "timer overflow in argument <{value}> to <{word}>, maximum value is 2147483647 s (~68 years)."
            ));
            None
        }
        Err(TimeError::Underflow) => {
            cx.alert(format!("timer underflow in argument <{value}> to <{word}>, minimum non-null value is 1 s."));
            None
        }
        Err(TimeError::BadChar(c)) => {
            cx.alert(format!("unexpected character '{c}' in argument to <{word}>."));
            None
        }
    }
}

// COMPAT: HAProxy writes the messages of `domain` and `attr` as `parsing [file:line]:`
// (no space before the colon); rampart keeps the usual ` : `.
fn add_domain(cx: &mut Ctx<'_>, ck: &mut CookiePersist, d: &str) -> Option<()> {
    if d.is_empty() {
        cx.alert("'domain' expects <domain> as argument.");
        return None;
    }
    if !d.contains('.') {
        cx.warning(format!(
            "domain '{d}' contains no embedded dot, this configuration may not work properly (see RFC6265#5.2.3)."
        ));
    }
    if let Some(c) = invalid_char(d) {
        cx.alert(format!("character '{c}' is not permitted in domain name '{d}'."));
        return None;
    }
    match &mut ck.domain {
        Some(all) => {
            all.push_str("; domain=");
            all.push_str(d);
        }
        None => ck.domain = Some(d.to_owned()),
    }
    Some(())
}

fn add_attr(cx: &mut Ctx<'_>, ck: &mut CookiePersist, v: &str) -> Option<()> {
    if v.is_empty() {
        cx.alert("'attr' expects <value> as argument.");
        return None;
    }
    if let Some(c) = v.bytes().find(|&c| c.is_ascii_control() || c == b';') {
        cx.alert(format!("character '%x{c:02X}' is not permitted in attribute value."));
        return None;
    }
    match &mut ck.attrs {
        Some(all) => {
            all.push_str("; ");
            all.push_str(v);
        }
        None => ck.attrs = Some(v.to_owned()),
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use crate::model::CookieMode;
    use crate::parse::tests::{alerts, parse, warnings};

    fn cookie_of(line: &str) -> crate::model::CookiePersist {
        let (cfg, _) = parse(&format!("backend b\n mode http\n {line}\n"));
        cfg.proxies[0].cookie.clone().expect("a cookie")
    }

    fn alerts_of(line: &str) -> Vec<String> {
        alerts(&format!("backend b\n mode http\n {line}\n"))
    }

    #[test]
    fn options_are_read() {
        let ck = cookie_of("cookie SRV insert indirect nocache postonly preserve httponly secure domain a.b domain c.d attr SameSite=Lax attr x=1");
        assert_eq!(ck.name, "SRV");
        assert_eq!(ck.mode, CookieMode::Insert);
        assert!(ck.indirect && ck.nocache && ck.postonly && ck.preserve && ck.httponly && ck.secure);
        assert_eq!(ck.domain.as_deref(), Some("a.b; domain=c.d"));
        assert_eq!(ck.attrs.as_deref(), Some("SameSite=Lax; x=1"));
        assert!(ck.any());
        let ck = cookie_of("cookie JSESSIONID prefix");
        assert_eq!((ck.mode, ck.indirect, ck.domain), (CookieMode::Prefix, false, None));
        assert_eq!(cookie_of("cookie S rewrite").mode, CookieMode::Rewrite);
        let passive = cookie_of("cookie S");
        assert_eq!(passive.mode, CookieMode::Passive);
        assert!(!passive.any(), "no mode: the log flags stay '--' as in HAProxy");
        assert!(cookie_of("cookie S indirect").any());
    }

    #[test]
    fn haproxy_errors() {
        assert_eq!(alerts_of("cookie"), ["'cookie' expects <cookie_name> as argument."]);
        assert_eq!(alerts_of("cookie S rewrite indirect"), ["cookie 'rewrite' and 'indirect' modes are incompatible."]);
        assert_eq!(
            alerts_of("cookie S rewrite insert"),
            ["cookie 'rewrite', 'insert' and 'prefix' modes are incompatible."]
        );
        assert_eq!(alerts_of("cookie S preserve"), ["cookie 'preserve' requires at least 'insert' or 'indirect'."]);
        assert!(alerts_of("cookie S indirect preserve").is_empty());
        assert_eq!(
            alerts_of("cookie S insert foo"),
            ["'cookie' supports 'rewrite', 'insert', 'prefix', 'indirect', 'nocache', 'postonly', 'domain', 'maxidle', 'dynamic', 'maxlife' and 'attr' options."]
        );
        assert_eq!(
            alerts_of("cookie S insert domain a.b/c"),
            ["character '/' is not permitted in domain name 'a.b/c'."]
        );
        assert_eq!(alerts_of("cookie S insert domain"), ["'domain' expects <domain> as argument."]);
        assert_eq!(alerts_of("cookie S insert attr"), ["'attr' expects <value> as argument."]);
        assert_eq!(alerts_of("cookie S insert attr a;b"), ["character '%x3B' is not permitted in attribute value."]);
        assert_eq!(
            warnings("backend b\n cookie S insert domain nodot\n"),
            ["domain 'nodot' contains no embedded dot, this configuration may not work properly (see RFC6265#5.2.3)."]
        );
    }

    #[test]
    fn dynamic_cookies_are_refused() {
        assert_eq!(alerts_of("cookie S insert dynamic"), ["'cookie dynamic' is not supported yet"]);
    }

    #[test]
    fn dated_cookies() {
        let ck = cookie_of("cookie S insert maxidle 30m maxlife 2");
        assert_eq!((ck.maxidle, ck.maxlife), (1800, 2));
        assert_eq!(cookie_of("cookie S insert maxlife 1500ms").maxlife, 2, "rounded up");
        assert_eq!(cookie_of("cookie S insert maxlife 30d").maxlife, 30 * 86_400);
        assert_eq!(alerts_of("cookie S insert maxidle"), ["'maxidle' expects <idletime> in seconds as argument."]);
        assert_eq!(alerts_of("cookie S insert maxlife"), ["'maxlife' expects <lifetime> in seconds as argument."]);
        assert_eq!(alerts_of("cookie S insert maxidle 10x"), ["unexpected character 'x' in argument to <maxidle>."]);
        assert_eq!(
            alerts_of("cookie S insert maxidle 3000000000"),
            ["timer overflow in argument <3000000000> to <maxidle>, maximum value is 2147483647 s (~68 years)."]
        );
        assert_eq!(alerts_of("cookie S insert maxlife 0"), [] as [&str; 0], "0 is off, not an underflow");
    }

    #[test]
    fn server_cookie_and_inheritance() {
        let (cfg, diags) = parse(
            "defaults\n mode http\n cookie SRV insert indirect\n\
             backend b\n default-server cookie d\n server s1 127.0.0.1:1 cookie a\n server s2 127.0.0.1:2\n\
             server s3 127.0.0.1:3 cookie c\n",
        );
        assert!(!diags.has_alerts(), "{diags:?}");
        let be = &cfg.proxies[0];
        assert_eq!(be.cookie.as_ref().map(|c| (c.name.as_str(), c.mode)), Some(("SRV", CookieMode::Insert)));
        let values: Vec<_> = be.servers.iter().map(|s| s.cookie.as_deref()).collect();
        assert_eq!(values, [Some("a"), Some("d"), Some("c")]);
        assert_eq!(
            alerts("backend b\n server s1 127.0.0.1:1 cookie\n"),
            ["'server b/s1' : 'cookie' expects <value> as argument.."]
        );
    }

    #[test]
    fn a_frontend_ignores_it() {
        assert_eq!(
            warnings("frontend f\n cookie S insert\n"),
            ["'cookie' ignored because frontend 'f' has no backend capability."]
        );
    }
}
