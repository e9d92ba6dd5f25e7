//! `lua.<name>` fetches and converters: what the rules language knows of the functions
//! Lua scripts register (`core.register_fetches`, `core.register_converters`), and the
//! interface through which an evaluation calls them.
//!
//! The scripts are loaded before the rules are compiled: [`set_names`] publishes what
//! they registered, and the expression compiler resolves `lua.<name>` against it. The
//! Lua runtime (`crate::lua`) sits above the rules language and implements
//! [`LuaSample`]; it installs itself with [`install`], once, when a configuration loads
//! a script. HAProxy counterpart: the `sample_fetch_kw_list` and `sample_conv_kw_list`
//! entries `hlua_register_fetches()` and `hlua_register_converters()` add (src/hlua.c).
//!
//! PERF: a configuration without `lua-load` never reaches this module at run time.

use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwapOption;

use super::arg::ArgError;
use super::ctx::SampleCtx;
use super::expr::{CompileCx, ExprError};
use super::kw::{Arg, ArgSpec, ConvKw, FetchKw};
use super::types::{Sample, SmpType};

/// The names the loaded scripts registered, by kind; a function's number is its index.
#[derive(Debug, Default, Clone)]
pub struct LuaNames {
    pub fetches: Vec<String>,
    pub converters: Vec<String>,
    /// Actions: name, the rule lists they are registered for (`http-req`, ...), and how
    /// many arguments they take.
    pub actions: Vec<(String, Vec<String>, usize)>,
    /// Services: name and whether it is an `http` one (else `tcp`).
    pub services: Vec<(String, bool)>,
}

static NAMES: ArcSwapOption<LuaNames> = ArcSwapOption::const_empty();

/// Publishes what the scripts registered (before the rules are compiled).
pub fn set_names(names: LuaNames) {
    NAMES.store(Some(Arc::new(names)));
}

/// What the scripts registered (`None`: no script).
pub fn names() -> Option<Arc<LuaNames>> {
    NAMES.load_full()
}

/// How an evaluation calls a Lua fetch or converter (implemented by `crate::lua`).
pub trait LuaSample: Sync + Send {
    /// Runs fetch number `id` with its string arguments over `ctx`.
    fn fetch(&self, id: usize, args: &[Arg], ctx: &SampleCtx<'_>) -> Option<Sample<'static>>;
    /// Runs converter number `id` on `smp`.
    fn conv(&self, id: usize, args: &[Arg], smp: Sample<'_>, ctx: &SampleCtx<'_>) -> Option<Sample<'static>>;
}

static HOOK: OnceLock<&'static dyn LuaSample> = OnceLock::new();

/// Installs the Lua runtime's side of the interface (once per process).
pub fn install(hook: &'static dyn LuaSample) {
    let _ = HOOK.set(hook);
}

/// HAProxy declares Lua fetches with up to five optional string arguments.
const STR5: ArgSpec = ArgSpec::new(&[super::kw::ArgT::Str; 5], 0);

/// The keyword every `lua.<name>` fetch compiles to; its first argument is the
/// function's number.
pub static LUA_FETCH: FetchKw = FetchKw::new("lua.", STR5, SmpType::Str, fetch_lua);

/// Likewise for converters.
pub static LUA_CONV: ConvKw = ConvKw::new("lua.", STR5, SmpType::Any, SmpType::Str, conv_lua);

fn fetch_lua<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: &mut dyn FnMut(Sample<'a>) -> bool) {
    let (Some(hook), Some(Arg::Sint(id))) = (HOOK.get(), args.first()) else { return };
    if let Some(v) = hook.fetch(*id as usize, &args[1..], ctx) {
        emit(v);
    }
}

fn conv_lua<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    let (Some(hook), Some(Arg::Sint(id))) = (HOOK.get(), args.first()) else { return None };
    hook.conv(*id as usize, &args[1..], smp, ctx)
}

/// A `lua.<name>` keyword's arguments (the function's number first) and the bytes of
/// the text they took.
pub(super) type Resolved = Result<(Vec<Arg>, usize), ExprError>;

/// Resolves `lua.<name>` as a fetch (`conv`: as a converter) and parses its arguments
/// from `rest` (the text after the name); `None`: no script registered that name.
pub(super) fn resolve(full: &str, rest: &str, conv: bool, cx: &mut CompileCx<'_>) -> Option<Resolved> {
    let name = full.strip_prefix("lua.")?;
    let names = names()?;
    let list = if conv { &names.converters } else { &names.fetches };
    let id = list.iter().position(|n| n == name)?;
    let spec = if conv { &LUA_CONV.args } else { &LUA_FETCH.args };
    Some(match super::arg::parse(rest, spec, cx) {
        Ok((mut args, used)) => {
            args.insert(0, Arg::Sint(id as i64));
            Ok((args, used))
        }
        Err(ArgError::Syntax { msg, .. } | ArgError::Check(msg)) => {
            Err(ExprError::Parse(format!("fetch method '{full}' : {msg}")))
        }
        Err(ArgError::Resolve { detail, .. }) => Err(ExprError::Parse(detail)),
    })
}
