//! The `proc.` variables set outside any stream: by a global `set-var` or
//! `set-var-fmt` at startup, and by the CLI's `set var`.

use super::Runtime;

/// Sets the `proc.` variable `var` from an expression or a log-format evaluated
/// without a stream (global `set-var`, CLI `set var`); `Err` is HAProxy's message.
pub fn set(
    cfg: &rampart_cfg::model::Config,
    rt: &Runtime,
    var: &crate::sample::vars::VarRef,
    value: &rampart_cfg::model::GlobalVarValue,
) -> Result<(), String> {
    use crate::log::format::{LfMode, LogFormat};
    use crate::sample::ctx::ConnInfo;
    use crate::sample::expr::{self, CompileCx, Place, Site};
    use rampart_cfg::model::GlobalVarValue;
    rt.proc_vars.declare(var);
    let conn = ConnInfo::new(None, -1);
    let mut cx = CompileCx::new(cfg, 0, Site::Cfg);
    let ctx = crate::sample::SampleCtx::new(rt, &conn, 0);
    match value {
        GlobalVarValue::Expr(src) => {
            // as HAProxy, the expression's own message, without a prefix
            let e = expr::compile(&src.text, &mut cx).map_err(|e| e.to_string())?;
            e.check_place(Place::CfgParser)?;
            if let Some(smp) = e.eval(&ctx) {
                ctx.vars.set(var, &smp, Default::default());
            }
        }
        GlobalVarValue::Fmt(src) => {
            let f =
                LogFormat::compile(&src.text, &mut cx, LfMode::Http, &[Place::CfgParser]).map_err(|e| e.to_string())?;
            let mut out = Vec::new();
            f.render(&ctx, &mut out);
            ctx.vars.set(var, &crate::sample::Sample::str(&out), Default::default());
        }
    }
    Ok(())
}
