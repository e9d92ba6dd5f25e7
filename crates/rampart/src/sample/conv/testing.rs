//! Test helpers: run a converter by name as the evaluator would (arguments through the
//! keyword's check first), in a sample context without a stream but with the
//! transaction variables the haproxy probes set: `txn.v` = `abz`, `txn.e` = empty
//! string, `txn.i` = 42, `txn.k` = `a2V5` (base64 of `key`).

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::proxy::Runtime;
use crate::sample::ctx::{ConnInfo, SampleCtx};
use crate::sample::expr::{CompileCx, Site};
use crate::sample::kw::{Arg, ArgList};
use crate::sample::testutil;
use crate::sample::types::Sample;
use crate::sample::vars::{self, Scope, SetCond, VarStore, Vars};

fn config() -> &'static rampart_cfg::Config {
    static CFG: OnceLock<rampart_cfg::Config> = OnceLock::new();
    CFG.get_or_init(|| testutil::config(testutil::CFG))
}

fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| testutil::runtime(config()))
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
pub fn check(name: &str, args: Vec<Arg>) -> Result<Vec<Arg>, String> {
    let kw = super::find(name).expect("converter exists");
    let mut list = ArgList(args);
    if let Some(check) = kw.check {
        let mut cx = CompileCx::new(config(), 0, Site::HttpReq);
        check(&mut list, &mut cx)?;
    }
    Ok(list.0)
}

/// The transaction store with the probe variables.
fn txn_store() -> VarStore {
    let store = VarStore::new(Scope::Txn);
    let vars = Vars { txn: Some(&store), ..Vars::default() };
    let set = |name: &str, smp: Sample<'_>| {
        let v = vars::parse_name(name.as_bytes()).expect("variable name");
        assert!(vars.set(&v, &smp, SetCond::NONE));
    };
    set("txn.v", st("abz"));
    set("txn.e", st(""));
    set("txn.i", Sample::Sint(42));
    set("txn.k", st("a2V5"));
    store
}

/// Runs converter `name` on `smp` with already checked `args`.
pub fn run_checked<'a>(name: &str, args: &'a [Arg], smp: Sample<'a>) -> Option<Sample<'static>> {
    let kw = super::find(name).expect("converter exists");
    let conn = ConnInfo::new(None, -1);
    let store = txn_store();
    let ctx = SampleCtx { vars: Vars { txn: Some(&store), ..Vars::default() }, ..SampleCtx::new(runtime(), &conn, 0) };
    (kw.f)(args, smp, &ctx).map(Sample::into_owned)
}

/// Whether converter `name` returns a borrowed string or binary (no allocation).
pub fn borrows(name: &str, args: Vec<Arg>, smp: Sample<'_>) -> bool {
    let args = check(name, args).unwrap_or_else(|e| panic!("{name}: check failed: {e}"));
    let kw = super::find(name).expect("converter exists");
    let conn = ConnInfo::new(None, -1);
    let ctx = SampleCtx::new(runtime(), &conn, 0);
    matches!((kw.f)(&args, smp, &ctx), Some(Sample::Str(Cow::Borrowed(_)) | Sample::Bin(Cow::Borrowed(_))))
}

/// Checks `args` then runs converter `name` on `smp` and returns an owned result.
pub fn run(name: &str, args: Vec<Arg>, smp: Sample<'_>) -> Option<Sample<'static>> {
    let args = check(name, args).unwrap_or_else(|e| panic!("{name}: check failed: {e}"));
    run_checked(name, &args, smp)
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
