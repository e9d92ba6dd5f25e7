//! Test helpers: run a converter by name as the evaluator would (arguments through the
//! keyword's check first), in a sample context without a stream.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::proxy::Runtime;
use crate::sample::ctx::{ConnInfo, Dir, SampleCtx};
use crate::sample::expr::CompileCx;
use crate::sample::kw::Arg;
use crate::sample::types::Sample;

fn config() -> &'static rampart_cfg::Config {
    static CFG: OnceLock<rampart_cfg::Config> = OnceLock::new();
    CFG.get_or_init(|| {
        let env = |_: &str| None;
        let ctx = rampart_cfg::LexCtx { env: &env, version: "2.6", features: &[] };
        let text = "frontend f\n  mode http\n  bind 127.0.0.1:1\n";
        let loaded = rampart_cfg::parse_str("test.cfg", text, &ctx);
        loaded.config.unwrap_or_else(|| panic!("test config: {:?}", loaded.diags))
    })
}

fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| crate::proxy::build(config(), 100, 1).expect("test runtime"))
}

/// A string argument.
pub fn s(v: &str) -> Arg {
    Arg::Str(v.as_bytes().into())
}

/// An integer argument.
pub fn i(v: i64) -> Arg {
    Arg::Sint(v)
}

/// A string sample borrowing `v`.
pub fn st(v: &str) -> Sample<'_> {
    Sample::Str(Cow::Borrowed(v.as_bytes()))
}

/// A binary sample borrowing `v`.
pub fn bin(v: &[u8]) -> Sample<'_> {
    Sample::Bin(Cow::Borrowed(v))
}

/// The arguments after the keyword's check, or the check's message.
pub fn check(name: &str, mut args: Vec<Arg>) -> Result<Vec<Arg>, String> {
    let kw = super::find(name).expect("converter exists");
    if let Some(check) = kw.check {
        let mut cx = CompileCx { cfg: config(), px: 0 };
        check(&mut args, &mut cx)?;
    }
    Ok(args)
}

/// Runs converter `name` on `smp` with already checked `args`.
pub fn run_checked<'a>(name: &str, args: &'a [Arg], smp: Sample<'a>) -> Option<Sample<'a>> {
    let kw = super::find(name).expect("converter exists");
    static CONN: OnceLock<ConnInfo> = OnceLock::new();
    let conn = CONN.get_or_init(|| ConnInfo::new(None, -1));
    let ctx = SampleCtx {
        rt: runtime(),
        conn,
        fe: 0,
        be: None,
        srv: None,
        dir: Dir::Request,
        req: None,
        res: None,
        req_body: None,
        payload: None,
    };
    (kw.f)(args, smp, &ctx)
}

/// Checks `args` then runs converter `name` on `smp` and returns an owned result.
pub fn run(name: &str, args: Vec<Arg>, smp: Sample<'_>) -> Option<Sample<'static>> {
    let args = check(name, args).unwrap_or_else(|e| panic!("{name}: check failed: {e}"));
    run_checked(name, &args, smp).map(Sample::into_owned)
}

/// The string or binary bytes of a result.
pub fn bytes(smp: Option<Sample<'_>>) -> Option<Vec<u8>> {
    match smp? {
        Sample::Str(b) | Sample::Bin(b) => Some(b.into_owned()),
        other => panic!("not a string: {other:?}"),
    }
}

/// Runs a string converter and returns its output as text (lossy), `None` when absent.
pub fn text(name: &str, args: Vec<Arg>, smp: Sample<'_>) -> Option<String> {
    bytes(run(name, args, smp)).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Runs an integer-output converter.
pub fn int(name: &str, args: Vec<Arg>, smp: Sample<'_>) -> Option<i64> {
    match run(name, args, smp)? {
        Sample::Sint(v) => Some(v),
        other => panic!("not an integer: {other:?}"),
    }
}
