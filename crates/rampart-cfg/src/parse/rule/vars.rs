//! `set-var(<var>[,<cond>...]) <expr>`, `set-var-fmt(<var>[,<cond>...]) <fmt>`,
//! `unset-var(<var>)` (in every rule list), and `set-log-level <level>`.
//!
//! HAProxy counterparts: `parse_store()`, `vars_hash_name()` and
//! `vars_parse_cond_param()` (src/vars.c); `stream_parse_set_log_level()` (src/stream.c).

use crate::model::{LogLevel, VarAction, VarCond, VarName, VarScope};

use super::{invalid, ActResult, Args};

/// Parses a variable action; `word` is the action word (`set-var(txn.x)`), the cursor
/// is on the word after it.
pub(crate) fn parse_var_action(word: &str, a: &mut Args<'_>) -> ActResult<VarAction> {
    let (kind, rest) = if let Some(r) = word.strip_prefix("set-var-fmt") {
        (Kind::SetFmt, r)
    } else if let Some(r) = word.strip_prefix("set-var") {
        (Kind::Set, r)
    } else {
        (Kind::Unset, word.strip_prefix("unset-var").unwrap_or(word))
    };
    let expects = "Expects 'set-var(<var-name>)', 'set-var-fmt(<var-name>)' or 'unset-var(<var-name>)'";
    let Some(inner) = rest.strip_prefix('(') else {
        return invalid(format!("invalid or incomplete action '{word}'. {expects}"));
    };
    let Some(inner) = inner.strip_suffix(')') else {
        return invalid(format!("incomplete argument after action '{word}'. {expects}"));
    };
    let mut parts = inner.split(',');
    let name = parts.next().unwrap_or("");
    // What follows the name in the word, which HAProxy prints after a bad character.
    let tail = &rest[1 + name.len()..];
    let conds: Vec<&str> = parts.take_while(|c| !c.is_empty()).collect();
    if !conds.is_empty() && kind == Kind::Unset {
        return invalid(
            "unset-var does not expect parameters after the variable name. Only \"set-var\" and \"set-var-fmt\" manage conditions",
        );
    }
    let conds = conds.into_iter().map(var_cond).collect::<ActResult<Vec<_>>>()?;
    let var = var_name(name, tail).map_err(super::ActErr::Invalid)?;
    Ok(match kind {
        Kind::Unset => VarAction::Unset(var),
        Kind::SetFmt => {
            let text = a.next();
            VarAction::SetFmt { var, conds, fmt: a.fmt(text) }
        }
        Kind::Set => VarAction::Set { var, conds, expr: a.expr()? },
    })
}

/// `do-resolve(<var>,<resolvers>[,ipv4|ipv6]) <expr>`; the cursor is on the word after
/// the action. HAProxy counterpart: `resolv_parse_do_resolve()` (src/resolvers.c).
pub(crate) fn parse_do_resolve(word: &str, a: &mut Args<'_>) -> ActResult<crate::model::DoResolve> {
    let bad = || {
        invalid(format!(
            "Can't parse '{word}'. Expects 'do-resolve(<varname>,<resolvers>[,<options>]) <expr>'. \
             Available options are 'ipv4' and 'ipv6'"
        ))
    };
    let Some(inner) = word.strip_prefix("do-resolve(").and_then(|r| r.split(')').next()) else { return bad() };
    if !word.contains(')') {
        return bad();
    }
    let mut parts = inner.split(',');
    let (Some(var), Some(resolvers)) = (parts.next(), parts.next()) else { return bad() };
    let mut prefer_v6 = true;
    for opt in parts {
        match opt {
            "ipv4" => prefer_v6 = false,
            "ipv6" => prefer_v6 = true,
            _ => return bad(),
        }
    }
    let var = var_name(var, "").map_err(super::ActErr::Invalid)?;
    Ok(crate::model::DoResolve { var, resolvers: resolvers.to_owned(), prefer_v6, expr: a.expr()? })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Set,
    SetFmt,
    Unset,
}

fn var_cond(text: &str) -> ActResult<VarCond> {
    Ok(match text {
        "ifexists" => VarCond::IfExists,
        "ifnotexists" => VarCond::IfNotExists,
        "ifempty" => VarCond::IfEmpty,
        "ifnotempty" => VarCond::IfNotEmpty,
        "ifset" => VarCond::IfSet,
        "ifnotset" => VarCond::IfNotSet,
        "ifgt" => VarCond::IfGt,
        "iflt" => VarCond::IfLt,
        _ => return invalid(format!("unknown condition \"{text}\"")),
    })
}

/// A variable name with its scope, checked as HAProxy's `vars_hash_name()` does (also
/// used for the `var()` fetch by the daemon). `Err` is HAProxy's message.
pub fn parse_var_name(name: &str) -> Result<VarName, String> {
    var_name(name, "")
}

/// `tail` is the text after the name in the configuration word.
fn var_name(name: &str, tail: &str) -> Result<VarName, String> {
    if name.is_empty() {
        return Err("Empty variable name cannot be accepted".into());
    }
    const SCOPES: [(&str, VarScope); 6] = [
        ("proc.", VarScope::Proc),
        ("sess.", VarScope::Sess),
        ("txn.", VarScope::Txn),
        ("req.", VarScope::Req),
        ("res.", VarScope::Res),
        ("check.", VarScope::Check),
    ];
    let found = SCOPES.iter().find(|(p, _)| name.len() > p.len() && name.starts_with(p));
    let Some((prefix, scope)) = found else {
        return Err(format!(
            "invalid variable name '{name}'. A variable name must be start by its scope. \
             The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'"
        ));
    };
    let short = &name[prefix.len()..];
    if let Some(bad) = short.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
        // HAProxy prints the rest of the word from the bad character.
        return Err(format!("invalid syntax at char '{}{tail}'", &short[bad..]));
    }
    Ok(VarName { scope: *scope, name: short.to_owned() })
}

/// `set-log-level <level>|silent`.
pub(super) fn parse_log_level(a: &mut Args<'_>) -> ActResult<LogLevel> {
    let level = match a.peek(0) {
        "silent" => LogLevel::Silent,
        "emerg" => LogLevel::Emerg,
        "alert" => LogLevel::Alert,
        "crit" => LogLevel::Crit,
        "err" => LogLevel::Err,
        "warning" => LogLevel::Warning,
        "notice" => LogLevel::Notice,
        "info" => LogLevel::Info,
        "debug" => LogLevel::Debug,
        _ => return invalid("expects exactly 1 argument (log level name or 'silent')"),
    };
    a.at += 1;
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;

    fn var(word: &str, rest: &[&str]) -> ActResult<VarAction> {
        let words: Vec<String> = std::iter::once(word).chain(rest.iter().copied()).map(String::from).collect();
        let span = Span::default();
        let mut a = Args::new(&words, 1, &span);
        parse_var_action(word, &mut a)
    }

    fn err(r: ActResult<VarAction>) -> String {
        match r {
            Err(super::super::ActErr::Invalid(m)) => m,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn variable_actions() {
        let VarAction::Set { var: v, conds, expr } =
            var("set-var(txn.a.b_1,ifnotset,ifgt)", &["req.hdr(x)", "lower", "if"]).expect("valid")
        else {
            panic!("set-var");
        };
        assert_eq!(v, VarName { scope: VarScope::Txn, name: "a.b_1".into() });
        assert_eq!(conds, [VarCond::IfNotSet, VarCond::IfGt]);
        assert_eq!(expr.text, "req.hdr(x),lower");
        let VarAction::SetFmt { var: v, fmt, .. } = var_fmt() else { panic!("set-var-fmt") };
        assert_eq!((v.scope, fmt.text.as_str()), (VarScope::Sess, "%[src]"));
        assert_eq!(
            var("unset-var(proc.x)", &[]),
            Ok(VarAction::Unset(VarName { scope: VarScope::Proc, name: "x".into() }))
        );
    }

    fn var_fmt() -> VarAction {
        var("set-var-fmt(sess.k)", &["%[src]"]).expect("valid")
    }

    #[test]
    fn variable_errors_as_haproxy() {
        assert_eq!(
            err(var("set-var", &["src"])),
            "invalid or incomplete action 'set-var'. Expects 'set-var(<var-name>)', 'set-var-fmt(<var-name>)' or 'unset-var(<var-name>)'"
        );
        assert!(err(var("set-var(txn.x", &["src"])).starts_with("incomplete argument after action 'set-var(txn.x'."));
        assert_eq!(err(var("set-var()", &["src"])), "Empty variable name cannot be accepted");
        assert_eq!(err(var("set-var(txn.a-b)", &["src"])), "invalid syntax at char '-b)'");
        assert_eq!(err(var("set-var(txn.a-b,ifset)", &["src"])), "invalid syntax at char '-b,ifset)'");
        assert_eq!(parse_var_name("txn.a/b"), Err("invalid syntax at char '/b'".into()));
        assert!(err(var("set-var(txn.)", &["src"])).starts_with("invalid variable name 'txn.'. A variable name"));
        assert_eq!(err(var("set-var(txn.x,foo)", &["src"])), "unknown condition \"foo\"");
        assert_eq!(err(var("set-var(txn.x)", &[])), "missing fetch method");
        assert!(err(var("unset-var(txn.x,ifset)", &[])).starts_with("unset-var does not expect parameters"));
    }
}
