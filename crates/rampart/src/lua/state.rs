//! One Lua state: its libraries and package paths, its memory limit and count hook,
//! the `core` table and the prelude, the scripts loaded in it, and what they
//! registered. Each worker thread has its own ([`with_state`]), created on first use.
//! HAProxy counterpart: `hlua_init_state()`, `hlua_load_state()` (src/hlua.c).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Thread, Value, VmState};
use rampart_cfg::Diag;

use super::Settings;
use crate::sample::lua::LuaNames;

/// What the scripts registered, in registration order (a function's number is its
/// index, the same in every thread: each loads the same files in the same order).
#[derive(Default)]
pub(crate) struct Registry {
    pub fetches: Vec<(String, Function)>,
    pub converters: Vec<(String, Function)>,
    /// Name, rule lists, number of arguments, function.
    pub actions: Vec<(String, Vec<String>, usize, Function)>,
    /// Name, `http` (else `tcp`), function.
    pub services: Vec<(String, bool, Function)>,
    /// The function and whether its file was loaded per thread.
    pub tasks: Vec<(Function, bool)>,
    /// CLI commands (`core.register_cli`): their words, help line, function.
    pub clis: Vec<(Vec<String>, String, Function)>,
    pub inits: Vec<Function>,
    /// The file being loaded is a `lua-load-per-thread` one.
    pub loading_per_thread: bool,
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

/// The deadline the count hook enforces for the code running now.
#[derive(Default)]
pub(crate) struct Budget {
    pub deadline: Cell<Option<Instant>>,
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

/// A thread's Lua state.
pub(crate) struct LuaState {
    pub lua: Lua,
    pub reg: Rc<RefCell<Registry>>,
    pub budget: Rc<Budget>,
    /// The prelude's functions (`set_cur`, `txn`, `new_applet` ...).
    pub prelude: Table,
    pub streams: RefCell<HashMap<u64, StreamLua>>,
    pub next_key: Cell<u64>,
    /// Expressions `txn.f`/`txn.sf` compiled at run time, by their text.
    pub exprs: RefCell<HashMap<String, Rc<crate::sample::expr::Expr>>>,
    /// `tune.lua.forced-yield`.
    pub forced_yield: u32,
}

thread_local! {
    static STATE: RefCell<Option<Rc<LuaState>>> = const { RefCell::new(None) };
}

/// The calling thread's Lua state (created and loaded on first use), `None` when no
/// script is configured or it failed to load in this thread (reported then).
pub(crate) fn with_state() -> Option<Rc<LuaState>> {
    let settings = super::settings()?;
    STATE.with(|s| {
        if let Some(st) = s.borrow().as_ref() {
            return Some(st.clone());
        }
        match new_state(settings) {
            Ok(st) => {
                let st = Rc::new(st);
                *s.borrow_mut() = Some(st.clone());
                run_inits(&st);
                Some(st)
            }
            Err(msg) => {
                super::send_err(&msg);
                None
            }
        }
    })
}

/// The state if the thread has one (never creates it): for releasing what a stream
/// kept, also while the thread ends.
pub(crate) fn existing_state() -> Option<Rc<LuaState>> {
    STATE.try_with(|s| s.try_borrow().ok().and_then(|b| b.clone())).ok().flatten()
}

/// Loads the scripts in a state of its own, once at startup: the alerts of the files
/// that do not load, or what they registered.
pub(crate) fn check_load(settings: &Settings) -> (LuaNames, Vec<Diag>) {
    match build(settings) {
        Ok(st) => {
            let names = st.reg.borrow().names();
            let clis = st.reg.borrow().clis.iter().map(|(w, u, _)| (w.clone(), u.clone())).collect();
            super::cli::publish(clis);
            (names, Vec::new())
        }
        Err((msg, span)) => (LuaNames::default(), vec![Diag::alert(span, msg)]),
    }
}

fn new_state(settings: &Settings) -> Result<LuaState, String> {
    build(settings).map_err(|(msg, _)| format!("Lua: {msg}"))
}

/// Creates a state and loads every script in it; `Err`: HAProxy's message and the
/// line of the file that failed.
fn build(settings: &Settings) -> Result<LuaState, (String, Option<rampart_cfg::Span>)> {
    let err = |e: mlua::Error| (format!("Lua: {e}"), None);
    let lua = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::new()).map_err(err)?;
    if let Some(max) = settings.lua.maxmem {
        lua.set_memory_limit(max).map_err(err)?;
    }
    let package: Table = lua.globals().get("package").map_err(err)?;
    for (path, kind) in &settings.lua.prepend_paths {
        let old: String = package.get(kind.as_str()).unwrap_or_default();
        package.set(kind.as_str(), format!("{path};{old}")).map_err(err)?;
    }
    let reg = Rc::new(RefCell::new(Registry::default()));
    let budget = Rc::new(Budget::default());
    super::core::install(&lua, &reg).map_err(err)?;
    super::map::install(&lua).map_err(err)?;
    let prelude: Table = lua.load(include_str!("prelude.lua")).set_name("@rampart-prelude.lua").eval().map_err(err)?;
    for load in &settings.lua.loads {
        reg.borrow_mut().loading_per_thread = load.per_thread;
        let span = Some(load.span.clone());
        let code = std::fs::read(&load.path).map_err(|e| {
            (format!("error in Lua file '{}': cannot open {}: {}", load.path, load.path, io_text(&e)), span.clone())
        })?;
        let chunk = lua.load(code).set_name(format!("@{}", load.path));
        let f = chunk
            .into_function()
            .map_err(|e| (format!("error in Lua file '{}': {}", load.path, message(&e)), span.clone()))?;
        let args: Vec<String> = load.args.clone();
        f.call::<()>(mlua::Variadic::from_iter(args))
            .map_err(|e| (format!("Lua runtime error: {}", message(&e)), span.clone()))?;
    }
    Ok(LuaState {
        lua,
        reg,
        budget,
        prelude,
        streams: RefCell::new(HashMap::new()),
        next_key: Cell::new(1),
        exprs: RefCell::new(HashMap::new()),
        forced_yield: settings.forced_yield,
    })
}

impl LuaState {
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
        co.set_hook(HookTriggers::new().every_nth_instruction(every), move |_, _| {
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

/// `register_init` functions, once the state is loaded (in each thread: every thread
/// has its own globals to set up).
fn run_inits(st: &LuaState) {
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
