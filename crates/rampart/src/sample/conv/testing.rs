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

/// Runs converter `name` (arguments checked first) and returns its result with the
/// `may_change` flag it left (set beforehand, as a payload fetch sets it).
pub fn run_may_change(name: &str, args: Vec<Arg>, smp: Sample<'_>) -> (Option<Sample<'static>>, bool) {
    let args = check(name, args).unwrap_or_else(|e| panic!("{name}: check failed: {e}"));
    let kw = super::find(name).expect("converter exists");
    let conn = ConnInfo::new(None, -1);
    let ctx = SampleCtx::new(runtime(), &conn, 0);
    ctx.may_change.set(true);
    let out = (kw.f)(&args, smp, &ctx).map(Sample::into_owned);
    (out, ctx.may_change.get())
}

/// A result as haproxy prints it in a log-format: booleans as 1/0, integers in
/// decimal, strings and binaries as their bytes.
fn printed(smp: Sample<'_>) -> Vec<u8> {
    match smp {
        Sample::Bool(b) => vec![if b { b'1' } else { b'0' }],
        Sample::Sint(i) => i.to_string().into_bytes(),
        Sample::Str(b) | Sample::Bin(b) => b.into_owned(),
        other => panic!("unexpected result {other:?}"),
    }
}

/// An input and, by index into a list of converters, the values haproxy printed for
/// it (every converter not listed gave nothing).
pub type Case = (&'static [u8], &'static [(usize, &'static [u8])]);

/// Checks converters against what haproxy gave: `exprs` are converters with their
/// arguments, `cases` what each gave on some inputs. `input` makes the sample.
pub fn agree(exprs: &[(&str, &[&str])], cases: &[Case], input: fn(&[u8]) -> Sample<'_>) {
    let mut wrong = Vec::new();
    for (body, want) in cases {
        for (i, (name, args)) in exprs.iter().enumerate() {
            let want = want.iter().find(|(j, _)| *j == i).map(|(_, v)| v.to_vec());
            let got = run(name, args.iter().map(|a| s(a)).collect(), input(body)).map(printed);
            if got != want {
                let show = |v: &Option<Vec<u8>>| v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
                wrong.push(format!(
                    "{name}({}) on {:?}: got {:?}, haproxy {:?}",
                    args.join(","),
                    String::from_utf8_lossy(body),
                    show(&got),
                    show(&want)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{} disagreements:\n{}", wrong.len(), wrong.join("\n"));
}

/// A small deterministic generator (xorshift64*) for the robustness tests.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Inputs for robustness tests, built from `seeds`: every prefix of each, `mutations`
/// copies of each with a few bytes changed (from `alphabet` half of the time), and
/// `junk` random inputs of up to 64 bytes.
pub fn fuzz_inputs(seeds: &[&[u8]], alphabet: &[u8], mutations: usize, junk: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::new();
    let byte = |rng: &mut Rng| {
        if rng.below(2) == 0 && !alphabet.is_empty() {
            alphabet[rng.below(alphabet.len())]
        } else {
            rng.next() as u8
        }
    };
    for seed in seeds {
        out.extend((0..=seed.len()).map(|n| seed[..n].to_vec()));
        for _ in 0..mutations {
            let mut m = seed.to_vec();
            for _ in 0..1 + rng.below(3) {
                if m.is_empty() {
                    break;
                }
                let at = rng.below(m.len());
                m[at] = byte(&mut rng);
            }
            out.push(m);
        }
    }
    for _ in 0..junk {
        let len = rng.below(65);
        out.push((0..len).map(|_| byte(&mut rng)).collect());
    }
    out
}
