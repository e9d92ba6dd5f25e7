//! Variables: `proc.`, `sess.`, `txn.`, `req.`, `res.` and `check.` names, compiled at
//! startup to a [`VarRef`] (scope and name hash), stored per scope, and bounded by the
//! `tune.vars.*-max-size` budgets. HAProxy counterpart: src/vars.c.
//!
//! Stores, and who owns them:
//! - `proc`: [`ProcVars`], one per configuration generation (the runtime holds it),
//!   behind a read-write lock that only configurations naming a `proc.` variable
//!   ever take;
//! - `sess`: a [`VarStore`] per client connection; `txn` and `req`/`res` (one store
//!   whose scope switches from `req` to `res` when the response analysers start, as
//!   HAProxy's `vars_reqres`): per stream; `check`: per health check.
//!
//! The per-connection and per-stream stores are `RefCell`s: a stream lives on one
//! thread, and the [`Vars`] bundle of references in the sample context reaches them
//! without a lock. Sizes are counted as HAProxy does: a variable costs its bytes plus
//! [`VAR_OVERHEAD`], and counts against its scope and every enclosing one (`req` →
//! `txn` → `sess` → `proc`, then the global budget).

use std::cell::{Cell, RefCell};
use std::hash::Hasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use super::ctx::SampleCtx;
use super::expr::CompileCx;
use super::kw::{uses, Arg, ArgList, ArgSpec, ArgT, ConvKw, FetchKw};
use super::types::{Sample, SmpType};

/// What one variable costs besides its bytes.
/// COMPAT: HAProxy counts `sizeof(struct var)`, 80 bytes on 64-bit builds of 2.6.
pub const VAR_OVERHEAD: usize = 80;

/// The scope of a variable: where it lives and how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Proc,
    Sess,
    Txn,
    Req,
    Res,
    Check,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Proc => "proc",
            Scope::Sess => "sess",
            Scope::Txn => "txn",
            Scope::Req => "req",
            Scope::Res => "res",
            Scope::Check => "check",
        }
    }
}

/// A variable name compiled at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarRef {
    pub scope: Scope,
    /// Hash of the name without its scope (HAProxy keys variables by hash too).
    pub hash: u64,
    /// The full name as written (`txn.foo`), for messages and the CLI.
    pub name: Arc<str>,
}

/// Compiles a variable name: a scope prefix then letters, digits, `_` and `.`.
/// `Err` is HAProxy's message.
pub fn parse_name(text: &[u8]) -> Result<VarRef, String> {
    if text.is_empty() {
        return Err("Empty variable name cannot be accepted".into());
    }
    let scopes: [(&[u8], Scope); 6] = [
        (b"proc.", Scope::Proc),
        (b"sess.", Scope::Sess),
        (b"txn.", Scope::Txn),
        (b"req.", Scope::Req),
        (b"res.", Scope::Res),
        (b"check.", Scope::Check),
    ];
    let found = scopes.iter().find(|(p, _)| text.len() > p.len() && text.starts_with(p));
    let Some(&(prefix, scope)) = found else {
        return Err(format!(
            "invalid variable name '{}'. A variable name must be start by its scope. \
             The scope can be 'proc', 'sess', 'txn', 'req', 'res' or 'check'",
            String::from_utf8_lossy(text)
        ));
    };
    let name = &text[prefix.len()..];
    if let Some(bad) = name.iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'.')) {
        return Err(format!("invalid syntax at char '{}'", String::from_utf8_lossy(&name[bad..])));
    }
    let mut h = std::hash::DefaultHasher::new();
    h.write(name);
    Ok(VarRef { scope, hash: h.finish(), name: String::from_utf8_lossy(text).into() })
}

/// The `tune.vars.*-max-size` budgets in bytes; 0 means unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VarLimits {
    pub global: usize,
    pub proc: usize,
    pub sess: usize,
    pub txn: usize,
    pub reqres: usize,
    pub check: usize,
}

/// Conditions of `set-var(name,cond...)` (HAProxy's `VF_COND_*`): the variable is set
/// only when all hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetCond(pub u16);

impl SetCond {
    pub const NONE: SetCond = SetCond(0);
    pub const IFEXISTS: u16 = 1;
    pub const IFNOTEXISTS: u16 = 2;
    pub const IFEMPTY: u16 = 4;
    pub const IFNOTEMPTY: u16 = 8;
    pub const IFSET: u16 = 16;
    pub const IFNOTSET: u16 = 32;
    pub const IFGT: u16 = 64;
    pub const IFLT: u16 = 128;
    /// Not a user condition: create the variable empty, keep it if it exists (the
    /// startup declaration of `proc.` variables).
    pub const CREATEONLY: u16 = 256;

    /// The condition a `set-var` argument names.
    pub fn parse(word: &[u8]) -> Result<u16, String> {
        Ok(match word {
            b"ifexists" => SetCond::IFEXISTS,
            b"ifnotexists" => SetCond::IFNOTEXISTS,
            b"ifempty" => SetCond::IFEMPTY,
            b"ifnotempty" => SetCond::IFNOTEMPTY,
            b"ifset" => SetCond::IFSET,
            b"ifnotset" => SetCond::IFNOTSET,
            b"ifgt" => SetCond::IFGT,
            b"iflt" => SetCond::IFLT,
            _ => return Err(format!("unknown condition \"{}\"", String::from_utf8_lossy(word))),
        })
    }

    fn has(self, bit: u16) -> bool {
        self.0 & bit != 0
    }
}

/// One variable: `None` once unset (a `proc.` variable declared at startup stays).
#[derive(Debug, Clone)]
struct Var {
    hash: u64,
    value: Option<Sample<'static>>,
    permanent: bool,
}

/// The bytes a value holds beyond the variable itself.
fn data_size(smp: &Sample<'_>) -> usize {
    match smp {
        Sample::Str(b) | Sample::Bin(b) => b.len(),
        Sample::Meth(crate::http::Method::Other, b) => b.len(),
        _ => 0,
    }
}

/// The content of a [`VarStore`], `Sync` ([`VarStore::into_snapshot`]).
#[derive(Debug, Clone)]
pub struct VarSnapshot {
    scope: Scope,
    vars: Vec<Var>,
    size: usize,
}

/// Variables of one connection, stream or check. Not `Sync`: it stays on its thread.
#[derive(Debug)]
pub struct VarStore {
    scope: Cell<Scope>,
    vars: RefCell<Vec<Var>>,
    /// Bytes counted against this scope (its own and, for `sess`/`txn`, inner ones).
    size: Cell<usize>,
}

impl VarStore {
    pub fn new(scope: Scope) -> VarStore {
        VarStore { scope: Cell::new(scope), vars: RefCell::new(Vec::new()), size: Cell::new(0) }
    }

    pub fn scope(&self) -> Scope {
        self.scope.get()
    }

    /// Bytes currently counted against this store's budget.
    pub fn size(&self) -> usize {
        self.size.get()
    }

    /// Whether the store holds no variable.
    pub fn is_empty(&self) -> bool {
        self.vars.borrow().is_empty()
    }

    /// The variables as a `Sync` value, for a place a store cannot be kept (what the
    /// streams of an HTTP/2 connection share).
    pub fn into_snapshot(self) -> VarSnapshot {
        VarSnapshot { scope: self.scope.get(), vars: self.vars.into_inner(), size: self.size.get() }
    }

    /// A store holding a copy of `snap`'s variables.
    pub fn from_snapshot(snap: &VarSnapshot) -> VarStore {
        VarStore { scope: Cell::new(snap.scope), vars: RefCell::new(snap.vars.clone()), size: Cell::new(snap.size) }
    }

    /// Gives an empty store a new scope (a `req.`/`res.` store reused by the next
    /// stream). A store still holding variables keeps its scope: prune it first.
    pub fn rescope(&self, scope: Scope) {
        if self.is_empty() {
            self.scope.set(scope);
        }
    }
}

/// `proc.` variables and the process-wide accounting.
#[derive(Debug, Default)]
pub struct ProcVars {
    pub limits: VarLimits,
    vars: RwLock<Vec<Var>>,
    /// Bytes of every variable of every scope (kept only when a proc or global budget
    /// is set, as HAProxy).
    size: AtomicUsize,
}

impl ProcVars {
    pub fn new(limits: VarLimits) -> ProcVars {
        ProcVars { limits, vars: RwLock::new(Vec::new()), size: AtomicUsize::new(0) }
    }

    /// Bytes counted process-wide.
    pub fn size(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    fn counts(&self) -> bool {
        self.limits.proc != 0 || self.limits.global != 0
    }

    /// Whether a `proc.` variable of this name (its hash, without the scope) was
    /// declared or set: the names HAProxy 2.6 knows, which Lua's `set_var(..., true)`
    /// requires (`vars_set_by_name_ifexist`).
    pub fn knows(&self, hash: u64) -> bool {
        self.vars.read().unwrap_or_else(|e| e.into_inner()).iter().any(|v| v.hash == hash)
    }

    /// Declares a `proc.` variable named in the configuration: it exists (unset) from
    /// startup, as HAProxy creates it while parsing.
    pub fn declare(&self, v: &VarRef) {
        if v.scope == Scope::Proc {
            let vars = Vars { proc: Some(self), ..Vars::default() };
            vars.set_inner(v, None, SetCond(SetCond::CREATEONLY));
        }
    }
}

/// The stores one evaluation reaches; `None` where the scope does not exist here (no
/// stream yet in `tcp-request connection`, no check outside checks).
#[derive(Debug, Clone, Copy, Default)]
pub struct Vars<'a> {
    pub proc: Option<&'a ProcVars>,
    pub sess: Option<&'a VarStore>,
    pub txn: Option<&'a VarStore>,
    /// The `req.` store, whose scope becomes `res` with the response.
    pub reqres: Option<&'a VarStore>,
    pub check: Option<&'a VarStore>,
}

impl<'a> Vars<'a> {
    fn store(&self, scope: Scope) -> Option<&'a VarStore> {
        let s = match scope {
            Scope::Proc => return None,
            Scope::Sess => self.sess,
            Scope::Txn => self.txn,
            Scope::Req | Scope::Res => self.reqres,
            Scope::Check => self.check,
        }?;
        (s.scope() == scope).then_some(s)
    }

    fn limits(&self) -> VarLimits {
        self.proc.map(|p| p.limits).unwrap_or_default()
    }

    /// The value of a variable (a copy: the store may change meanwhile).
    pub fn get(&self, v: &VarRef) -> Option<Sample<'static>> {
        let find = |vars: &[Var]| vars.iter().find(|x| x.hash == v.hash).and_then(|x| x.value.clone());
        if v.scope == Scope::Proc {
            let proc = self.proc?;
            let vars = proc.vars.read().unwrap_or_else(|e| e.into_inner());
            return find(&vars);
        }
        let store = self.store(v.scope)?;
        let vars = store.vars.borrow();
        find(&vars)
    }

    /// Sets a variable (`set-var`); `false` when the scope is not available here, a
    /// condition does not hold, or the budget is exhausted (then nothing changes but
    /// a new variable may be left empty, as in HAProxy).
    pub fn set(&self, v: &VarRef, smp: &Sample<'_>, cond: SetCond) -> bool {
        self.set_inner(v, Some(smp), cond)
    }

    /// Unsets a variable (`unset-var`); `false` when its scope is not available here.
    pub fn unset(&self, v: &VarRef) -> bool {
        let freed = if v.scope == Scope::Proc {
            let Some(proc) = self.proc else { return false };
            let mut vars = proc.vars.write().unwrap_or_else(|e| e.into_inner());
            clear_var(&mut vars, v.hash)
        } else {
            let Some(store) = self.store(v.scope) else { return false };
            let mut vars = store.vars.borrow_mut();
            clear_var(&mut vars, v.hash)
        };
        self.release(v.scope, freed);
        true
    }

    /// Drops every variable of a scope (end of a stream, of a connection, or the
    /// switch from `req` to `res`, which the caller then marks with
    /// [`Vars::start_response`]).
    pub fn prune(&self, scope: Scope) {
        let Some(store) = self.store(scope) else { return };
        let mut vars = store.vars.borrow_mut();
        if vars.is_empty() {
            return; // the common case (no variables): no drain, no accounting
        }
        let freed: usize = vars.drain(..).map(|x| VAR_OVERHEAD + x.value.as_ref().map_or(0, data_size)).sum();
        drop(vars);
        self.release(scope, freed);
    }

    /// Prunes the `req.` variables and makes the store the `res.` one.
    pub fn start_response(&self) {
        self.prune(Scope::Req);
        if let Some(s) = self.reqres {
            s.scope.set(Scope::Res);
        }
    }

    fn set_inner(&self, v: &VarRef, smp: Option<&Sample<'_>>, cond: SetCond) -> bool {
        if v.scope == Scope::Proc {
            let Some(proc) = self.proc else { return false };
            let mut vars = proc.vars.write().unwrap_or_else(|e| e.into_inner());
            self.set_in(&mut vars, v, smp, cond)
        } else {
            let Some(store) = self.store(v.scope) else { return false };
            let mut vars = store.vars.borrow_mut();
            self.set_in(&mut vars, v, smp, cond)
        }
    }

    /// The body of `set`: conditions, then the budget, then the copy.
    fn set_in(&self, vars: &mut Vec<Var>, v: &VarRef, smp: Option<&Sample<'_>>, cond: SetCond) -> bool {
        let idx = match vars.iter().position(|x| x.hash == v.hash) {
            Some(i) => {
                if cond.has(SetCond::CREATEONLY) {
                    return true;
                }
                if cond.has(SetCond::IFNOTEXISTS) {
                    return false;
                }
                i
            }
            None => {
                if cond.has(SetCond::IFEXISTS) || !self.reserve(v.scope, VAR_OVERHEAD) {
                    return false;
                }
                let permanent = cond.has(SetCond::CREATEONLY);
                vars.push(Var { hash: v.hash, value: None, permanent });
                vars.len() - 1
            }
        };
        let Some(smp) = smp else { return true };
        let var = &mut vars[idx];
        if (cond.has(SetCond::IFSET) && var.value.is_none()) || (cond.has(SetCond::IFNOTSET) && var.value.is_some()) {
            return false;
        }
        let empty = match smp {
            Sample::Str(b) | Sample::Bin(b) => Some(b.is_empty()),
            _ => None,
        };
        if (cond.has(SetCond::IFEMPTY) && empty != Some(true)) || (cond.has(SetCond::IFNOTEMPTY) && empty == Some(true))
        {
            return false;
        }
        if let (Some(Sample::Sint(old)), Sample::Sint(new)) = (&var.value, smp) {
            if (cond.has(SetCond::IFGT) && old <= new) || (cond.has(SetCond::IFLT) && old >= new) {
                return false;
            }
        }
        let old = var.value.take().as_ref().map_or(0, data_size);
        self.release(v.scope, old);
        let need = data_size(smp);
        if need > 0 && !self.reserve(v.scope, need) {
            // COMPAT: HAProxy leaves the variable typed bool with an undefined value;
            // rampart leaves `false`.
            var.value = Some(Sample::Bool(false));
            return false;
        }
        var.value = Some(smp.clone().into_owned());
        true
    }

    /// Reserves `size` bytes in `scope` and every enclosing scope, or nothing.
    fn reserve(&self, scope: Scope, size: usize) -> bool {
        let lim = self.limits();
        let over =
            |store: Option<&VarStore>, limit: usize| limit != 0 && store.is_some_and(|s| s.size.get() + size > limit);
        let proc_size = self.proc.map_or(0, |p| p.size());
        let inner_fail = match scope {
            Scope::Req | Scope::Res => over(self.reqres, lim.reqres) || over(self.txn, lim.txn),
            Scope::Txn => over(self.txn, lim.txn),
            Scope::Check => over(self.check, lim.check),
            Scope::Sess | Scope::Proc => false,
        };
        if inner_fail
            || (scope != Scope::Proc && over(self.sess, lim.sess))
            || (lim.proc != 0 && proc_size + size > lim.proc)
            || (lim.global != 0 && proc_size + size > lim.global)
        {
            return false;
        }
        self.account(scope, size, true);
        true
    }

    fn release(&self, scope: Scope, size: usize) {
        if size > 0 {
            self.account(scope, size, false);
        }
    }

    /// Adds or removes `size` along the chain of scopes, where a budget is set.
    fn account(&self, scope: Scope, size: usize, add: bool) {
        let lim = self.limits();
        let apply = |store: Option<&VarStore>, limit: usize| {
            if let (Some(s), true) = (store, limit != 0) {
                let n = if add { s.size.get() + size } else { s.size.get().saturating_sub(size) };
                s.size.set(n);
            }
        };
        match scope {
            Scope::Req | Scope::Res => {
                apply(self.reqres, lim.reqres);
                apply(self.txn, lim.txn);
            }
            Scope::Txn => apply(self.txn, lim.txn),
            Scope::Check => apply(self.check, lim.check),
            Scope::Sess | Scope::Proc => {}
        }
        if scope != Scope::Proc {
            apply(self.sess, lim.sess);
        }
        if let Some(p) = self.proc.filter(|p| p.counts()) {
            if add {
                p.size.fetch_add(size, Ordering::Relaxed);
            } else {
                let _ = p.size.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| Some(s.saturating_sub(size)));
            }
        }
    }
}

/// Unsets the variable `hash`; a permanent one stays, empty. Returns the bytes freed.
fn clear_var(vars: &mut Vec<Var>, hash: u64) -> usize {
    let Some(i) = vars.iter().position(|x| x.hash == hash) else { return 0 };
    let data = vars[i].value.take().as_ref().map_or(0, data_size);
    if vars[i].permanent {
        data
    } else {
        vars.swap_remove(i);
        data + VAR_OVERHEAD
    }
}

// === keywords ===

/// `var(name[,default])`: the variable's value, else the default as a string.
fn fetch_var<'a>(args: &'a [Arg], ctx: &SampleCtx<'a>, emit: &mut dyn FnMut(Sample<'a>) -> bool) {
    let Some(Arg::Var(v)) = args.first() else { return };
    match ctx.vars.get(v) {
        Some(smp) => {
            emit(smp);
        }
        None => {
            if let Some(def) = args.get(1).and_then(Arg::as_bytes) {
                emit(Sample::str(def));
            }
        }
    }
}

/// The conditions of `set-var`, compiled.
#[derive(Debug, Clone, Copy)]
struct CondArg(SetCond);

/// `set-var(name[,cond...])`: conditions become one [`Arg::Private`] after the name.
fn check_set_var(args: &mut ArgList, _: &mut CompileCx<'_>) -> Result<(), String> {
    let mut cond = 0;
    for a in args.iter().skip(1) {
        cond |= SetCond::parse(a.as_bytes().unwrap_or_default())?;
    }
    args.truncate(1);
    args.push(Arg::Private(Arc::new(CondArg(SetCond(cond)))));
    Ok(())
}

/// Stores the value in the variable and passes it on unchanged.
fn conv_set_var<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    if let Some(Arg::Var(v)) = args.first() {
        let cond = args.get(1).and_then(Arg::private::<CondArg>).map_or(SetCond::NONE, |c| c.0);
        ctx.vars.set(v, &smp, cond);
    }
    Some(smp)
}

/// Unsets the variable and passes the value on unchanged.
fn conv_unset_var<'a>(args: &'a [Arg], smp: Sample<'a>, ctx: &SampleCtx<'a>) -> Option<Sample<'a>> {
    if let Some(Arg::Var(v)) = args.first() {
        ctx.vars.unset(v);
    }
    Some(smp)
}

pub const FETCHES: &[FetchKw] =
    &[FetchKw::new("var", ArgSpec::new(&[ArgT::Var, ArgT::Str], 1), SmpType::Any, fetch_var).uses(uses::CONST)];

pub const CONVERTERS: &[ConvKw] = &[
    ConvKw::new(
        "set-var",
        ArgSpec::new(&[ArgT::Var, ArgT::Str, ArgT::Str, ArgT::Str, ArgT::Str], 1),
        SmpType::Any,
        SmpType::Any,
        conv_set_var,
    )
    .check(check_set_var),
    ConvKw::new("unset-var", ArgSpec::new(&[ArgT::Var], 1), SmpType::Any, SmpType::Any, conv_unset_var),
];

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::sample::testutil::*;

    fn v(name: &str) -> VarRef {
        parse_name(name.as_bytes()).unwrap()
    }

    /// A stream's stores: sess, txn, reqres.
    fn stores() -> (VarStore, VarStore, VarStore) {
        (VarStore::new(Scope::Sess), VarStore::new(Scope::Txn), VarStore::new(Scope::Req))
    }

    fn vars<'a>(proc: &'a ProcVars, s: &'a (VarStore, VarStore, VarStore)) -> Vars<'a> {
        Vars { proc: Some(proc), sess: Some(&s.0), txn: Some(&s.1), reqres: Some(&s.2), check: None }
    }

    fn text(t: &str) -> Sample<'_> {
        Sample::str(t.as_bytes())
    }

    #[test]
    fn names_need_a_scope_and_a_clean_name() {
        let r = v("txn.foo.bar_1");
        assert_eq!((r.scope, &*r.name), (Scope::Txn, "txn.foo.bar_1"));
        for (n, s) in [("proc.a", Scope::Proc), ("sess.a", Scope::Sess), ("req.a", Scope::Req), ("res.a", Scope::Res)] {
            assert_eq!(v(n).scope, s);
        }
        assert_eq!(v("check.a").scope, Scope::Check);
        assert_eq!(v("txn.a").hash, v("req.a").hash, "the hash is of the name without scope");
        assert_ne!(v("txn.a").hash, v("txn.b").hash);
        assert_eq!(parse_name(b""), Err("Empty variable name cannot be accepted".into()));
        assert!(parse_name(b"txn.").unwrap_err().starts_with("invalid variable name 'txn.'"));
        assert!(parse_name(b"foo").unwrap_err().starts_with("invalid variable name 'foo'. A variable name"));
        assert_eq!(parse_name(b"txn.a b"), Err("invalid syntax at char ' b'".into()));
    }

    #[test]
    fn set_get_unset_per_scope() {
        let proc = ProcVars::default();
        let s = stores();
        let vs = vars(&proc, &s);
        assert!(vs.set(&v("txn.a"), &text("1"), SetCond::NONE));
        assert!(vs.set(&v("sess.a"), &Sample::Sint(2), SetCond::NONE));
        assert!(vs.set(&v("req.a"), &Sample::Bool(true), SetCond::NONE));
        assert!(vs.set(&v("proc.a"), &Sample::Ipv4("1.2.3.4".parse().unwrap()), SetCond::NONE));
        assert_eq!(vs.get(&v("txn.a")), Some(Sample::Str(Cow::Owned(b"1".to_vec()))));
        assert_eq!(vs.get(&v("sess.a")), Some(Sample::Sint(2)));
        assert_eq!(vs.get(&v("req.a")), Some(Sample::Bool(true)));
        assert_eq!(vs.get(&v("res.a")), None);
        assert_eq!(vs.get(&v("proc.a")), Some(Sample::Ipv4("1.2.3.4".parse().unwrap())));
        // No check store here.
        assert!(!vs.set(&v("check.a"), &Sample::Sint(1), SetCond::NONE));
        assert!(vs.unset(&v("txn.a")));
        assert_eq!(vs.get(&v("txn.a")), None);
        // The response starts: `req.` variables go, `res.` ones can be set.
        vs.start_response();
        assert_eq!(vs.get(&v("req.a")), None);
        assert!(!vs.set(&v("req.b"), &Sample::Sint(1), SetCond::NONE));
        assert!(vs.set(&v("res.b"), &Sample::Sint(1), SetCond::NONE));
        assert_eq!(vs.get(&v("res.b")), Some(Sample::Sint(1)));
        // A connection-less context (tcp-request connection) has only proc.
        let bare = Vars { proc: Some(&proc), ..Vars::default() };
        assert!(!bare.set(&v("txn.a"), &Sample::Sint(1), SetCond::NONE));
        assert_eq!(bare.get(&v("proc.a")), Some(Sample::Ipv4("1.2.3.4".parse().unwrap())));
    }

    #[test]
    fn conditions() {
        let proc = ProcVars::default();
        let s = stores();
        let vs = vars(&proc, &s);
        let c = |bits| SetCond(bits);
        let a = v("txn.a");
        assert!(!vs.set(&a, &Sample::Sint(5), c(SetCond::IFEXISTS)));
        assert!(vs.set(&a, &Sample::Sint(5), c(SetCond::IFNOTEXISTS)));
        assert!(!vs.set(&a, &Sample::Sint(6), c(SetCond::IFNOTEXISTS)));
        // `ifgt`: set when the variable is greater than the new value.
        assert!(vs.set(&a, &Sample::Sint(4), c(SetCond::IFGT)));
        assert!(!vs.set(&a, &Sample::Sint(5), c(SetCond::IFGT)));
        assert!(vs.set(&a, &Sample::Sint(3), c(SetCond::IFGT)));
        assert_eq!(vs.get(&a), Some(Sample::Sint(3)));
        assert!(!vs.set(&a, &Sample::Sint(2), c(SetCond::IFLT)));
        assert!(vs.set(&a, &Sample::Sint(9), c(SetCond::IFLT)));
        assert!(!vs.set(&a, &text("x"), c(SetCond::IFEMPTY)));
        assert!(vs.set(&a, &text(""), c(SetCond::IFEMPTY)));
        assert!(!vs.set(&a, &text(""), c(SetCond::IFNOTEMPTY)));
        assert!(!vs.set(&a, &Sample::Sint(1), c(SetCond::IFEMPTY)), "a scalar is never empty");
        assert!(vs.set(&a, &Sample::Sint(1), c(SetCond::IFNOTEMPTY)));
        assert!(!vs.set(&a, &Sample::Sint(1), c(SetCond::IFNOTSET)));
        assert!(vs.set(&a, &Sample::Sint(2), c(SetCond::IFSET)));
        assert_eq!(SetCond::parse(b"ifgt"), Ok(SetCond::IFGT));
        assert_eq!(SetCond::parse(b"ifbig"), Err("unknown condition \"ifbig\"".into()));
    }

    #[test]
    fn budgets_count_every_enclosing_scope() {
        let limits = VarLimits { txn: 2 * VAR_OVERHEAD + 10, sess: 3 * VAR_OVERHEAD + 20, ..VarLimits::default() };
        let proc = ProcVars::new(limits);
        let s = stores();
        let vs = vars(&proc, &s);
        assert!(vs.set(&v("txn.a"), &text("0123456789"), SetCond::NONE));
        assert_eq!((s.1.size(), s.0.size()), (VAR_OVERHEAD + 10, VAR_OVERHEAD + 10));
        // A second variable fits, its bytes do not: HAProxy leaves it, empty of data.
        assert!(!vs.set(&v("txn.b"), &text("x"), SetCond::NONE));
        assert_eq!(vs.get(&v("txn.b")), Some(Sample::Bool(false)));
        assert_eq!(s.1.size(), 2 * VAR_OVERHEAD + 10);
        // A third variable does not fit at all.
        assert!(!vs.set(&v("txn.c"), &Sample::Sint(1), SetCond::NONE));
        assert_eq!(vs.get(&v("txn.c")), None);
        // Replacing a value releases the old bytes first.
        assert!(vs.set(&v("txn.a"), &text("abcdefghij"), SetCond::NONE));
        // The session budget counts the transaction's variables too.
        assert!(vs.set(&v("sess.s"), &text("0123456789"), SetCond::NONE));
        assert!(!vs.set(&v("sess.t"), &Sample::Sint(1), SetCond::NONE));
        vs.prune(Scope::Txn);
        assert_eq!((s.1.size(), s.0.size()), (0, VAR_OVERHEAD + 10));
        assert!(vs.set(&v("sess.t"), &Sample::Sint(1), SetCond::NONE));
    }

    #[test]
    fn the_global_budget_spans_all_streams() {
        let proc = ProcVars::new(VarLimits { global: VAR_OVERHEAD + 4, ..VarLimits::default() });
        let (s1, s2) = (stores(), stores());
        assert!(vars(&proc, &s1).set(&v("txn.a"), &text("abcd"), SetCond::NONE));
        assert!(!vars(&proc, &s2).set(&v("txn.a"), &Sample::Sint(1), SetCond::NONE));
        assert_eq!(proc.size(), VAR_OVERHEAD + 4);
        vars(&proc, &s1).unset(&v("txn.a"));
        assert_eq!(proc.size(), 0);
        assert!(vars(&proc, &s2).set(&v("txn.a"), &Sample::Sint(1), SetCond::NONE));
    }

    #[test]
    fn declared_proc_variables_exist_unset() {
        let proc = ProcVars::default();
        let p = v("proc.x");
        proc.declare(&p);
        let vs = Vars { proc: Some(&proc), ..Vars::default() };
        assert_eq!(vs.get(&p), None);
        assert!(vs.set(&p, &Sample::Sint(1), SetCond(SetCond::IFEXISTS)));
        assert!(vs.unset(&p));
        // Unset, it still exists.
        assert!(vs.set(&p, &Sample::Sint(2), SetCond(SetCond::IFEXISTS)));
        assert!(!vs.set(&v("proc.y"), &Sample::Sint(2), SetCond(SetCond::IFEXISTS)));
    }

    #[test]
    fn var_fetch_and_converters() {
        let cfg = config(CFG);
        let rt = runtime(&cfg);
        let c = conn();
        let s = stores();
        let ctx = crate::sample::SampleCtx {
            vars: Vars {
                proc: Some(&rt.proc_vars),
                sess: Some(&s.0),
                txn: Some(&s.1),
                reqres: Some(&s.2),
                check: None,
            },
            ..crate::sample::SampleCtx::new(&rt, &c, 0)
        };
        let e = |t: &str| compile_in(&cfg, 0, t).unwrap_or_else(|e| panic!("{t}: {e}"));
        let set = e("str(abc),set-var(txn.x)");
        assert_eq!(set.eval(&ctx).map(Sample::into_owned), Some(s_("abc")));
        assert_eq!(e("var(txn.x)").eval(&ctx).map(Sample::into_owned), Some(s_("abc")));
        assert_eq!(e("var(txn.nope,dflt)").eval(&ctx).map(Sample::into_owned), Some(s_("dflt")));
        assert_eq!(e("var(txn.nope)").eval(&ctx), None);
        e("int(1),set-var(txn.x,ifnotexists)").eval(&ctx);
        assert_eq!(e("var(txn.x)").eval(&ctx).map(Sample::into_owned), Some(s_("abc")));
        e("int(1),unset-var(txn.x)").eval(&ctx);
        assert_eq!(e("var(txn.x)").eval(&ctx), None);
        e("int(7),set-var(proc.p)").eval(&ctx);
        let other = crate::sample::SampleCtx::new(&rt, &c, 0);
        assert_eq!(e("var(proc.p)").eval(&other), Some(Sample::Sint(7)));
        assert_eq!(e("var(txn.x)").eval(&other), None, "no stream store there");
    }

    fn s_(t: &str) -> Sample<'static> {
        s(t)
    }
}
