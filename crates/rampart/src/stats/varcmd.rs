//! `get var`, `set var` and `experimental-mode` on the runtime API: read and write the
//! `proc.` variables. HAProxy counterparts: `vars_parse_cli_get_var()`,
//! `vars_parse_cli_set_var()` (src/vars.c), `cli_parse_expert_experimental_mode()`
//! (src/cli.c).

use rampart_cfg::model::{ExprSrc, FmtSrc, GlobalVarValue};
use rampart_cfg::Span;

use super::cmd::{Level, Session};
use super::Cli;
use crate::sample::vars::{self, Scope};
use crate::sample::{cast, Sample, SmpType};

/// `get var <name>`: `<name>: type=<type> value=<<text>>`, unprintable bytes as dots.
pub fn get_var(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    let name = words.get(2).copied().unwrap_or("");
    if name.is_empty() {
        return "Missing process-wide variable identifier.\n".into();
    }
    // HAProxy looks the name up without a stream: only `proc.` variables exist here.
    let found = vars::parse_name(name.as_bytes())
        .ok()
        .filter(|v| v.scope == Scope::Proc)
        .and_then(|v| vars::Vars { proc: Some(&cli.rt.proc_vars), ..Default::default() }.get(&v));
    let Some(smp) = found else { return "Variable not found.\n".into() };
    let ty = smp.smp_type().name();
    let shown = match cast::cast(smp, SmpType::Str) {
        Some(Sample::Str(b)) => {
            format!(
                "<{}>",
                b.iter().map(|&c| if (0x20..0x7f).contains(&c) { c as char } else { '.' }).collect::<String>()
            )
        }
        _ => "(undisplayable)".into(),
    };
    // COMPAT: HAProxy's message has no line feed of its own, so the answer ends with a
    // single one where other commands end with an empty line.
    format!("{name}: type={ty} value={shown}")
}

/// `set var <name> [expr|fmt] <value>`, in experimental mode: evaluated without a
/// stream, as a global `set-var`/`set-var-fmt`. As in HAProxy, the messages of a
/// failed parse have no line feed of their own (one less than the others).
pub fn set_var(cli: &Cli, sess: &mut Session, words: &[&str]) -> String {
    if !sess.experimental {
        return "This command is restricted to experimental mode only.\n".into();
    }
    if sess.level < Level::Operator {
        return "Permission denied\n".into();
    }
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    let name = arg(2);
    if name.is_empty() {
        return "Missing process-wide variable identifier.\n".into();
    }
    if arg(3).is_empty() {
        return "Missing either 'expr', 'fmt' or expression.\n".into();
    }
    let (fmt, text) = match arg(4) {
        "" => (false, arg(3)),
        v if arg(3) == "fmt" => (true, v),
        v if arg(3) == "expr" => (false, v),
        _ => return format!("'set var': arg type must be either 'expr' or 'fmt' but got '{}'.", arg(3)),
    };
    let var = match vars::parse_name(name.as_bytes()) {
        Ok(v) if v.scope == Scope::Proc => v,
        Ok(_) => return format!("'set var': cannot set variable '{name}', only scope 'proc' is permitted here."),
        Err(e) => return e,
    };
    let span = Span::new("CLI".into(), 0);
    let value = if fmt {
        GlobalVarValue::Fmt(FmtSrc { text: text.to_owned(), span })
    } else {
        GlobalVarValue::Expr(ExprSrc { text: text.to_owned(), span })
    };
    match crate::proxy::proc_vars::set(&cli.cfg, &cli.rt, &var, &value) {
        Ok(()) => String::new(),
        Err(e) => e,
    }
}

/// `experimental-mode [on|off]` (admin): without argument, says whether it is on.
pub fn experimental_mode(_: &Cli, sess: &mut Session, words: &[&str]) -> String {
    match words.get(1).copied().unwrap_or("") {
        "" => format!("experimental-mode is {}\n", if sess.experimental { "ON" } else { "OFF" }),
        on => {
            sess.experimental = on == "on";
            String::new()
        }
    }
}
