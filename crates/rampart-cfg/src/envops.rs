//! `setenv`, `presetenv`, `unsetenv` and `resetenv` of the `global` section: they change
//! the process environment while the configuration is read, so that the lines and files
//! after them expand the new values (`"${NAME}"`, addresses) and the running process
//! (`env()`, external programs) sees them, as in HAProxy.
//! HAProxy counterpart: the same keywords in `cfg_parse_global()` (src/cfgparse-global.c).
//!
//! COMPAT: this is the one place where reading a configuration has an effect outside
//! rampart-cfg; HAProxy applies them while parsing too.

/// The keywords handled here.
pub const KEYWORDS: [&str; 4] = ["setenv", "presetenv", "unsetenv", "resetenv"];

/// Applies one `global` line if it is one of [`KEYWORDS`]; `Err` is the alert.
pub fn apply(words: &[String]) -> Result<(), String> {
    let arg = |i: usize| words.get(i).map_or("", String::as_str);
    let kw = arg(0);
    match kw {
        "setenv" | "presetenv" => {
            if let Some(extra) = words.get(4) {
                return Err(crate::diag::too_many_args(kw, extra));
            }
            let (name, value) = (arg(1), arg(2));
            if value.is_empty() {
                return Err(format!("'{kw}' expects a name and a value."));
            }
            check_name(kw, name)?;
            if kw == "setenv" || std::env::var_os(name).is_none() {
                std::env::set_var(name, value);
            }
        }
        "unsetenv" => {
            if arg(1).is_empty() {
                return Err(format!("'{kw}' expects at least one variable name."));
            }
            for name in words[1..].iter().take_while(|w| !w.is_empty()) {
                check_name(kw, name)?;
                std::env::remove_var(name);
            }
        }
        "resetenv" => {
            let keep: Vec<&str> = words[1..].iter().map(String::as_str).take_while(|w| !w.is_empty()).collect();
            let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(n, _)| n).collect();
            for name in names {
                // COMPAT: HAProxy keeps a variable when a kept name is a prefix of it
                // followed by '=', that is the exact name; so does this.
                if !keep.iter().any(|k| name.as_os_str() == *k) {
                    std::env::remove_var(&name);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// `setenv()`/`unsetenv()` refuse an empty name or one holding `=` (EINVAL); Rust's
/// would panic, so the alert is HAProxy's for a failed call.
fn check_name(kw: &str, name: &str) -> Result<(), String> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err(format!("'{kw}' failed on variable '{name}' : Invalid argument."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::apply;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn set_preset_unset() {
        apply(&words("setenv RAMPART_ENVOPS_A one")).unwrap();
        assert_eq!(std::env::var("RAMPART_ENVOPS_A").as_deref(), Ok("one"));
        apply(&words("presetenv RAMPART_ENVOPS_A two")).unwrap();
        assert_eq!(std::env::var("RAMPART_ENVOPS_A").as_deref(), Ok("one"), "presetenv keeps a set value");
        apply(&words("presetenv RAMPART_ENVOPS_B two")).unwrap();
        assert_eq!(std::env::var("RAMPART_ENVOPS_B").as_deref(), Ok("two"));
        apply(&words("setenv RAMPART_ENVOPS_A three")).unwrap();
        assert_eq!(std::env::var("RAMPART_ENVOPS_A").as_deref(), Ok("three"));
        apply(&words("unsetenv RAMPART_ENVOPS_A RAMPART_ENVOPS_B")).unwrap();
        assert!(std::env::var_os("RAMPART_ENVOPS_A").is_none() && std::env::var_os("RAMPART_ENVOPS_B").is_none());
    }

    #[test]
    fn haproxy_messages() {
        assert_eq!(apply(&words("presetenv")).unwrap_err(), "'presetenv' expects a name and a value.");
        assert_eq!(apply(&words("setenv A")).unwrap_err(), "'setenv' expects a name and a value.");
        assert_eq!(apply(&words("unsetenv")).unwrap_err(), "'unsetenv' expects at least one variable name.");
        assert_eq!(apply(&words("setenv A 1 2 3")).unwrap_err(), "'setenv' cannot handle unexpected argument '3'.");
        assert_eq!(apply(&words("setenv A=B 1")).unwrap_err(), "'setenv' failed on variable 'A=B' : Invalid argument.");
    }
}
