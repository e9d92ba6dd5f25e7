//! The Lua states: their libraries and package paths, their memory limit and count
//! hook, the `core` table and the prelude, the scripts loaded in them, and what they
//! registered. As HAProxy 2.6: the files of `lua-load` are loaded in one state
//! shared by every thread ([`with_state`]`(true)`), whose turns are serialized by a
//! lock (a script that yields releases it); those of `lua-load-per-thread` in a
//! state of each thread (`with_state(false)`), created on first use, lock-free.
//! A name registered in both kinds fails startup, as in HAProxy (`hlua_post_init()`).
//! HAProxy counterpart: `hlua_init_state()`, `hlua_load_state()`, `hlua_load()`,
//! `hlua_load_per_thread()`, `hlua_global_lock` (src/hlua.c).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ops::Deref;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Thread, Value, VmState};
use parking_lot::{Mutex, MutexGuard, ReentrantMutex, ReentrantMutexGuard};
use rampart_cfg::Diag;

use super::Settings;
use crate::sample::lua::LuaNames;

/// What the scripts of one state registered, in registration order (a function's
/// number in its state is its index, the same in every thread's state: each loads
/// the same files in the same order; [`Routes`] maps the rules' numbers to them).
#[derive(Default)]
pub(crate) struct Registry {
    pub fetches: Vec<(String, Function)>,
    pub converters: Vec<(String, Function)>,
    /// Name, rule lists, number of arguments, function.
    pub actions: Vec<(String, Vec<String>, usize, Function)>,
    /// Name, `http` (else `tcp`), function.
    pub services: Vec<(String, bool, Function)>,
    pub tasks: Vec<Function>,
    /// CLI commands (`core.register_cli`): their words, help line, function.
    pub clis: Vec<(Vec<String>, String, Function)>,
    pub inits: Vec<Function>,
}

/// A state's [`Registry`], which the `core.register_*` functions fill (behind a lock:
/// the shared state's functions may be called from any thread).
#[derive(Default)]
pub(crate) struct Reg(Mutex<Registry>);

impl Reg {
    pub fn borrow(&self) -> MutexGuard<'_, Registry> {
        self.0.lock()
    }

    pub fn borrow_mut(&self) -> MutexGuard<'_, Registry> {
        self.0.lock()
    }
}

impl Registry {
    pub fn names(&self) -> LuaNames {
        LuaNames {
            fetches: self.fetches.iter().map(|(n, _)| n.clone()).collect(),
            converters: self.converters.iter().map(|(n, _)| n.clone()).collect(),
            actions: self.actions.iter().map(|(n, l, a, _)| (n.clone(), l.clone(), *a)).collect(),
            services: self.services.iter().map(|(n, h, _)| (n.clone(), *h)).collect(),
        }
    }
}

/// Registers `f` under `name` in `list`, replacing a function of the same name (as a
/// script that registers twice expects).
pub(crate) fn register<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T) -> bool) {
    match list.iter().position(same) {
        Some(i) => list[i] = item,
        None => list.push(item),
    }
}

/// The deadline the count hook enforces for the code running now, and what the state
/// uses of `tune.lua.maxmem`.
#[derive(Default)]
pub(crate) struct Budget {
    pub deadline: Deadline,
    /// The memory the state used when it last counted it ([`sync_memory`]).
    pub mem: AtomicUsize,
}

/// The memory every Lua state of the process uses, as each last counted it.
/// `tune.lua.maxmem` bounds the sum, as HAProxy 2.6's one allocator for every state
/// (`hlua_global_allocator`): each state counts what it uses and gets as its own
/// limit what the others leave, when it is created, before and after each turn of a
/// script and at each count hook (every `tune.lua.forced-yield` instructions).
/// COMPAT: states running at the same moment on different threads (those of
/// `lua-load-per-thread`) see each other's use as of their last count, not each
/// allocation as HAProxy's atomic counter does.
static MEM_TOTAL: AtomicUsize = AtomicUsize::new(0);

/// Counts what `lua` uses now (its share `mine` of [`MEM_TOTAL`]) and limits it to
/// what the other states leave of `limit` (`None`: no limit, nothing counted).
pub(crate) fn sync_memory(lua: &Lua, mine: &AtomicUsize, limit: Option<usize>) {
    let Some(limit) = limit else { return };
    let used = lua.used_memory();
    let old = mine.swap(used, Ordering::AcqRel);
    let total = if used >= old {
        MEM_TOTAL.fetch_add(used - old, Ordering::AcqRel) + (used - old)
    } else {
        MEM_TOTAL.fetch_sub(old - used, Ordering::AcqRel) - (old - used)
    };
    let others = total.saturating_sub(used);
    // (mlua reads 0 as "no limit": a state the others left nothing to gets 1 byte)
    let _ = lua.set_memory_limit(limit.saturating_sub(others).max(1));
}

/// A cell the count hook can reach from whichever thread runs the state.
#[derive(Default)]
pub(crate) struct Deadline(Mutex<Option<Instant>>);

impl Deadline {
    pub fn get(&self) -> Option<Instant> {
        *self.0.lock()
    }

    pub fn set(&self, d: Option<Instant>) {
        *self.0.lock() = d;
    }

    pub fn replace(&self, d: Option<Instant>) -> Option<Instant> {
        std::mem::replace(&mut *self.0.lock(), d)
    }
}

/// What a stream keeps in the state between two resumes (`txn:set_priv`, a script
/// that yielded).
pub(crate) struct StreamLua {
    pub private: Value,
    pub pending: Option<Pending>,
}

/// A coroutine waiting to be resumed.
pub(crate) struct Pending {
    /// The rule it runs for (the address of its compiled action or service number).
    pub rule: usize,
    pub co: Thread,
    /// Lua time spent so far (the timeouts count only that, not the sleeps).
    pub spent: Duration,
    /// The applet object of a service.
    pub applet: Option<Table>,
}

/// A Lua state: the shared one or a thread's.
pub(crate) struct LuaState {
    pub lua: Lua,
    pub reg: Arc<Reg>,
    pub budget: Arc<Budget>,
    /// The prelude's functions (`set_cur`, `txn`, `new_applet` ...).
    pub prelude: Table,
    /// What streams, tasks and commands keep in the state, by [`new_key`].
    pub streams: RefCell<HashMap<u64, StreamLua>>,
    /// Expressions `txn.f`/`txn.sf` compiled at run time, by their text.
    pub exprs: RefCell<HashMap<String, Arc<crate::sample::expr::Expr>>>,
    /// `tune.lua.forced-yield`.
    pub forced_yield: u32,
    /// `tune.lua.maxmem`, for the whole process ([`sync_memory`]).
    pub maxmem: Option<usize>,
    /// The `lua-load` state, shared by the threads.
    pub shared: bool,
    /// The `register_init` functions ran.
    inits_done: Cell<bool>,
}

thread_local! {
    static STATE: RefCell<Option<Rc<LuaState>>> = const { RefCell::new(None) };
}

/// The state of `lua-load`, created on first use (`None` inside: no such file, or
/// it failed to load, reported then). Reentrant: a shared action may call a shared
/// fetch (`txn.f`) or release a stream while it runs.
static SHARED: OnceLock<Option<ReentrantMutex<LuaState>>> = OnceLock::new();

/// A state in use: a thread's own (no lock), or the shared one, locked until this is
/// dropped (a turn: a script that yields gives the lock back with the event loop).
pub(crate) enum StateRef {
    Own(Rc<LuaState>),
    Shared(ReentrantMutexGuard<'static, LuaState>),
}

impl Deref for StateRef {
    type Target = LuaState;
    fn deref(&self) -> &LuaState {
        match self {
            StateRef::Own(st) => st,
            StateRef::Shared(g) => g,
        }
    }
}

/// A new key for [`LuaState::streams`], unique in the process (a stream may keep
/// something in its thread's state and in the shared one under the same key).
pub(crate) fn new_key() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The shared state (`shared`, locked) or the calling thread's (created and loaded on
/// first use); `None` when no script of that kind is configured or it failed to load
/// (reported then).
pub(crate) fn with_state(shared: bool) -> Option<StateRef> {
    let settings = super::settings()?;
    if shared {
        return with_shared(settings);
    }
    STATE.with(|s| {
        if let Some(st) = s.borrow().as_ref() {
            return Some(StateRef::Own(st.clone()));
        }
        if !settings.lua.loads.iter().any(|l| l.per_thread) {
            return None;
        }
        match new_state(settings, false) {
            Ok(st) => {
                let st = Rc::new(st);
                *s.borrow_mut() = Some(st.clone());
                run_inits(&st);
                Some(StateRef::Own(st))
            }
            Err(msg) => {
                super::send_err(&msg);
                None
            }
        }
    })
}

fn with_shared(settings: &'static Settings) -> Option<StateRef> {
    if !settings.lua.loads.iter().any(|l| !l.per_thread) {
        return None;
    }
    let m = SHARED.get_or_init(|| match new_state(settings, true) {
        Ok(st) => Some(ReentrantMutex::new(st)),
        Err(msg) => {
            super::send_err(&msg);
            None
        }
    });
    let g = m.as_ref()?.lock();
    run_inits(&g);
    Some(StateRef::Shared(g))
}

/// The thread's state if it has one (never creates it): for releasing what a stream
/// kept, also while the thread ends.
pub(crate) fn existing_state() -> Option<Rc<LuaState>> {
    STATE.try_with(|s| s.try_borrow().ok().and_then(|b| b.clone())).ok().flatten()
}

/// The shared state, locked, if it exists (never creates it).
pub(crate) fn existing_shared() -> Option<ReentrantMutexGuard<'static, LuaState>> {
    SHARED.get()?.as_ref().map(ReentrantMutex::lock)
}

/// Where the rules' function number `id` (an index in the [`LuaNames`] lists) lives:
/// in the shared state or the thread's, and its index in that state's [`Registry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Route {
    pub shared: bool,
    pub local: usize,
}

/// The routes of every registered name, by kind (in the order of [`LuaNames`]).
#[derive(Debug, Default)]
pub(crate) struct Routes {
    pub fetches: Vec<Route>,
    pub converters: Vec<Route>,
    pub actions: Vec<Route>,
    pub services: Vec<Route>,
    pub clis: Vec<Route>,
}

static ROUTES: OnceLock<Routes> = OnceLock::new();

/// The route of number `id` in the list `pick` chooses.
pub(crate) fn route(pick: impl Fn(&Routes) -> &Vec<Route>, id: usize) -> Option<Route> {
    pick(ROUTES.get()?).get(id).copied()
}

/// Merges the names of the shared state (`shared`) and of a thread's (`own`): the
/// shared state's first, then the per-thread ones (a name in both fails startup:
/// [`clashes`]).
fn merge<T: Clone, K: PartialEq>(shared: &[T], own: &[T], key: impl Fn(&T) -> K) -> (Vec<T>, Vec<Route>) {
    let mut names: Vec<T> = shared.to_vec();
    let mut routes: Vec<Route> = (0..shared.len()).map(|local| Route { shared: true, local }).collect();
    for (local, item) in own.iter().enumerate() {
        if !shared.iter().any(|s| key(s) == key(item)) {
            names.push(item.clone());
            routes.push(Route { shared: false, local });
        }
    }
    (names, routes)
}

/// The names registered in both kinds of state, which HAProxy 2.6 refuses at startup
/// (`hlua_post_init()`: "these two context exclusive", its words).
fn clashes<T>(shared: &[T], own: &[T], name: impl Fn(&T) -> String) -> Vec<String> {
    own.iter().map(&name).filter(|n| shared.iter().any(|s| name(s) == *n)).collect()
}

/// What the check reads of a loaded state: its names and CLI commands.
#[derive(Default)]
struct Loaded {
    names: LuaNames,
    clis: Vec<(Vec<String>, String)>,
}

fn loaded(st: &LuaState) -> Loaded {
    let reg = st.reg.borrow();
    Loaded { names: reg.names(), clis: reg.clis.iter().map(|(w, u, _)| (w.clone(), u.clone())).collect() }
}

/// Loads the scripts once at startup, the `lua-load` ones in a state and the
/// `lua-load-per-thread` ones in another: the alert of the first file (in the
/// configuration's order) that does not load, or what they registered.
pub(crate) fn check_load(settings: &Settings) -> (LuaNames, Vec<Diag>) {
    let mut shared = Loaded::default();
    let mut own = Loaded::default();
    let mut errors = Vec::new();
    for (kind, out) in [(true, &mut shared), (false, &mut own)] {
        if !settings.lua.loads.iter().any(|l| l.per_thread != kind) {
            continue;
        }
        match build(settings, kind) {
            Ok(st) => *out = loaded(&st),
            Err(e) => errors.push(e),
        }
    }
    if let Some((msg, span, _)) = errors.into_iter().min_by_key(|e| e.2) {
        return (LuaNames::default(), vec![Diag::alert(span, msg)]);
    }
    let (s, o) = (&shared.names, &own.names);
    let mut both = clashes(&s.fetches, &o.fetches, Clone::clone);
    both.extend(clashes(&s.converters, &o.converters, Clone::clone));
    both.extend(clashes(&s.actions, &o.actions, |a| a.0.clone()));
    both.extend(clashes(&s.services, &o.services, |a| a.0.clone()));
    both.extend(clashes(&shared.clis, &own.clis, |c| {
        format!("<lua.cli{}>", c.0.iter().map(|w| format!(".{w}")).collect::<String>())
    }));
    if !both.is_empty() {
        let alert = |name: String| {
            let msg = format!(
                "Lua function '{name}' is referenced both ins shared Lua context (through lua-load) and per-thread \
                 Lua context (through lua-load-per-thread). these two context exclusive."
            );
            Diag::alert(None, msg)
        };
        return (LuaNames::default(), both.into_iter().map(alert).collect());
    }
    let (fetches, fetch_routes) = merge(&s.fetches, &o.fetches, Clone::clone);
    let (converters, conv_routes) = merge(&s.converters, &o.converters, Clone::clone);
    let (actions, action_routes) = merge(&s.actions, &o.actions, |a| a.0.clone());
    let (services, service_routes) = merge(&s.services, &o.services, |a| a.0.clone());
    let (clis, cli_routes) = merge(&shared.clis, &own.clis, |c| c.0.clone());
    super::cli::publish(clis);
    // (a second check in the process, `-c` then the run, finds the same routes)
    let _ = ROUTES.set(Routes {
        fetches: fetch_routes,
        converters: conv_routes,
        actions: action_routes,
        services: service_routes,
        clis: cli_routes,
    });
    (LuaNames { fetches, converters, actions, services }, Vec::new())
}

fn new_state(settings: &Settings, shared: bool) -> Result<LuaState, String> {
    build(settings, shared).map_err(|(msg, _, _)| format!("Lua: {msg}"))
}

/// A file that did not load: HAProxy's message, its line in the configuration, and
/// its rank among the `lua-load*` lines.
type LoadError = (String, Option<rampart_cfg::Span>, usize);

/// Creates a state and loads in it the scripts of `lua-load` (`shared`) or of
/// `lua-load-per-thread`.
fn build(settings: &Settings, shared: bool) -> Result<LuaState, LoadError> {
    let err = |e: mlua::Error| (format!("Lua: {e}"), None, 0);
    let lua = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::new()).map_err(err)?;
    let budget = Arc::new(Budget::default());
    sync_memory(&lua, &budget.mem, settings.lua.maxmem);
    let package: Table = lua.globals().get("package").map_err(err)?;
    for (path, kind) in &settings.lua.prepend_paths {
        let old: String = package.get(kind.as_str()).unwrap_or_default();
        package.set(kind.as_str(), format!("{path};{old}")).map_err(err)?;
    }
    let reg = Arc::new(Reg::default());
    super::core::install(&lua, &reg, shared).map_err(err)?;
    super::map::install(&lua).map_err(err)?;
    let prelude: Table = lua.load(include_str!("prelude.lua")).set_name("@rampart-prelude.lua").eval().map_err(err)?;
    for (rank, load) in settings.lua.loads.iter().enumerate().filter(|(_, l)| l.per_thread != shared) {
        let span = Some(load.span.clone());
        let code = std::fs::read(&load.path).map_err(|e| {
            let msg = format!("error in Lua file '{}': cannot open {}: {}", load.path, load.path, io_text(&e));
            (msg, span.clone(), rank)
        })?;
        let chunk = lua.load(code).set_name(format!("@{}", load.path));
        let f = chunk
            .into_function()
            .map_err(|e| (format!("error in Lua file '{}': {}", load.path, message(&e)), span.clone(), rank))?;
        let args: Vec<String> = load.args.clone();
        f.call::<()>(mlua::Variadic::from_iter(args))
            .map_err(|e| (format!("Lua runtime error: {}", message(&e)), span.clone(), rank))?;
    }
    super::proxy::post_init(&lua).map_err(err)?;
    sync_memory(&lua, &budget.mem, settings.lua.maxmem);
    Ok(LuaState {
        lua,
        reg,
        budget,
        prelude,
        streams: RefCell::new(HashMap::new()),
        exprs: RefCell::new(HashMap::new()),
        forced_yield: settings.forced_yield,
        maxmem: settings.lua.maxmem,
        shared,
        inits_done: Cell::new(false),
    })
}

impl Drop for LuaState {
    /// What the state used no longer counts against `tune.lua.maxmem`.
    fn drop(&mut self) {
        MEM_TOTAL.fetch_sub(self.budget.mem.swap(0, Ordering::AcqRel), Ordering::AcqRel);
    }
}

/// The number HAProxy gives a Lua state (its `state-id`, its `core.thread`): 0 for
/// the one `lua-load` shares, the thread's number from 1 for `lua-load-per-thread`
/// ones (the startup check's state counts as the first).
pub(crate) fn state_id(shared: bool) -> usize {
    if shared {
        0
    } else {
        crate::counters::thread_slot().max(1)
    }
}

impl LuaState {
    /// This state's number ([`state_id`]).
    pub fn id(&self) -> usize {
        state_id(self.shared)
    }

    /// Counts the state's memory against `tune.lua.maxmem` ([`sync_memory`]).
    pub fn sync_memory(&self) {
        sync_memory(&self.lua, &self.budget.mem, self.maxmem);
    }

    /// A coroutine running `f`, under the count hook: every `tune.lua.forced-yield`
    /// instructions it yields (where it can: not in fetches and converters) and fails
    /// once past the deadline of its turn. (A hook set on the state would not reach
    /// the coroutines, which mlua creates from a thread of its own.)
    pub fn coroutine(&self, f: Function) -> mlua::Result<Thread> {
        let co = self.lua.create_thread(f)?;
        let b = self.budget.clone();
        // with forced yields off, the hook still bounds the time now and then
        let every = if self.forced_yield > 0 { self.forced_yield } else { 100_000 };
        let may_yield = self.forced_yield > 0;
        let maxmem = self.maxmem;
        co.set_hook(HookTriggers::new().every_nth_instruction(every), move |lua, _| {
            sync_memory(lua, &b.mem, maxmem);
            if b.deadline.get().is_some_and(|d| Instant::now() >= d) {
                return Err(mlua::Error::runtime(TIMEOUT));
            }
            Ok(if may_yield { VmState::Yield } else { VmState::Continue })
        });
        Ok(co)
    }
}

/// The error the count hook raises past a timeout.
pub(crate) const TIMEOUT: &str = "\0rampart:timeout";

/// `register_init` functions, once the state is loaded (once for the shared state,
/// in each thread for the per-thread ones: each has its own globals to set up).
fn run_inits(st: &LuaState) {
    if st.inits_done.replace(true) {
        return;
    }
    let inits: Vec<Function> = st.reg.borrow().inits.clone();
    for f in inits {
        if let Err(e) = f.call::<()>(()) {
            super::send_err(&format!("Lua init: {}.", message(&e)));
        }
    }
}

/// An I/O error as C's `strerror()` words it.
fn io_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// The message of a Lua error, without mlua's wrapping nor the traceback.
pub(crate) fn message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        mlua::Error::CallbackError { cause, .. } => return message(cause),
        mlua::Error::MemoryError(_) => return "Lua out of memory error".to_owned(),
        other => other.to_string(),
    };
    let text = match text.find("\nstack traceback:") {
        Some(i) => text[..i].to_owned(),
        None => text,
    };
    text.strip_prefix("runtime error: ").unwrap_or(&text).to_owned()
}
