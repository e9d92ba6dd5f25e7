//! What Lua's Proxy, Server and Listener classes reach of the runtime model
//! ([`crate::lua::ProxyHost`]): the stats' fields and the code of the stats socket's
//! server commands (`set server`, `set weight`, `enable health` ...), so that a
//! script and the CLI change a server the same way.
//! HAProxy counterpart: the methods of src/hlua_fcn.c over server.c and proxy.c.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rampart_cfg::model::Mode;

use crate::lua::{CheckKind, Forced, LuaVal, Obj, ProxyHost, PxInfo, PxOp, SrvOp};
use crate::proxy::{ProxyRt, Runtime};
use crate::server::OperState;
use crate::stats::admin::{set_admin_state, AdminState};
use crate::stats::Object;

/// The host over the process's runtime.
struct Host {
    rt: Arc<Runtime>,
}

/// Installs the host for the Lua states the threads create (nothing without
/// `lua-load`).
pub fn install(rt: &Arc<Runtime>) {
    if crate::lua::settings().is_some() {
        crate::lua::set_proxy_host(Box::new(Host { rt: rt.clone() }));
    }
}

/// A message as HAProxy's `hlua_pushstrippedstring()` gives it: without the blanks
/// around it.
fn stripped(msg: &str) -> LuaVal {
    LuaVal::Str(msg.trim_matches([' ', '\t', '\r', '\n']).to_owned())
}

fn int(n: impl Into<i64>) -> LuaVal {
    LuaVal::Int(n.into())
}

impl ProxyHost for Host {
    fn proxies(&self) -> Vec<PxInfo> {
        let rt = &self.rt;
        rt.proxies
            .iter()
            .enumerate()
            .map(|(idx, px)| PxInfo {
                name: px.name.clone(),
                uuid: crate::stats::iid(rt, idx),
                frontend: px.cap.frontend,
                backend: px.cap.backend,
                servers: if px.cap.backend {
                    let shown = px.be.servers.iter().enumerate().filter(|(_, s)| s.is_shown());
                    shown.map(|(i, s)| (i, s.name.clone(), s.stats.sid)).collect()
                } else {
                    Vec::new()
                },
                listeners: if px.cap.frontend {
                    px.fe.listeners.iter().map(|l| l.name.as_deref().map(str::to_owned)).collect()
                } else {
                    Vec::new()
                },
            })
            .collect()
    }

    fn stats(&self, obj: Obj) -> Vec<(&'static str, LuaVal)> {
        let what = match obj {
            // as HAProxy: a proxy with a back side gives its backend row
            Obj::Proxy(p) if self.rt.proxies[p].cap.backend => Object::Backend(p),
            Obj::Proxy(p) => Object::Frontend(p),
            Obj::Server(p, s) => Object::Server(p, s),
            Obj::Listener(p, l) => Object::Listener(p, l),
        };
        crate::stats::object_fields(&self.rt, what)
            .into_iter()
            .map(|(name, v)| {
                let v = match v {
                    crate::stats::Val::Str(s) => LuaVal::Str(s),
                    crate::stats::Val::Sint(n) => LuaVal::Int(n),
                    crate::stats::Val::Uint(n) => LuaVal::Int(i64::try_from(n).unwrap_or(i64::MAX)),
                };
                (name, v)
            })
            .collect()
    }

    fn server(&self, p: usize, i: usize, op: SrvOp<'_>) -> LuaVal {
        let px = &self.rt.proxies[p];
        let srv = &px.be.servers[i];
        match op {
            SrvOp::IsDraining => int(i64::from(srv.state.eweight() == 0 || srv.state.is_drain())),
            SrvOp::GetMaxconn => int(srv.maxconn.load(Ordering::Relaxed)),
            SrvOp::SetMaxconn(v) => crate::stats::set_maxconn(px, i, v).map_or(LuaVal::Nil, stripped),
            SrvOp::GetWeight => int(srv.state.eweight()),
            SrvOp::SetWeight(v) => match crate::stats::apply_weight(px, i, Some(v)) {
                m if m.is_empty() => LuaVal::Nil,
                m => stripped(&m),
            },
            SrvOp::GetAddr => LuaVal::Str(match &srv.unix {
                Some(path) => path.display().to_string(),
                None => {
                    let a = srv.addr.get();
                    format!("{}:{}", a.ip(), a.port())
                }
            }),
            SrvOp::SetAddr(addr, port) => {
                stripped(&crate::stats::set_addr(px, i, Some(addr), port.map(|_| "port"), port, "Lua script"))
            }
            SrvOp::ShutSess => {
                crate::server::sessions::track_for_lua();
                if let Some(s) = &srv.sessions {
                    s.shutdown_all();
                }
                LuaVal::Nil
            }
            SrvOp::SetDrain => admin(px, i, AdminState::Drain),
            SrvOp::SetMaint => admin(px, i, AdminState::Maint),
            SrvOp::SetReady => admin(px, i, AdminState::Ready),
            SrvOp::Enable(kind, on) => {
                let agent = kind == CheckKind::Agent;
                let configured = if agent { srv.agent.is_some() } else { srv.check.is_some() };
                if configured {
                    srv.state.set_check_enabled(agent, on);
                }
                LuaVal::Nil
            }
            SrvOp::Force(kind, to) => {
                force(px, i, kind, to);
                LuaVal::Nil
            }
        }
    }

    fn table(&self, p: usize) -> Option<Arc<crate::stick::StickTable>> {
        self.rt.proxies.get(p)?.table.clone()
    }

    fn proxy(&self, p: usize, op: PxOp) -> LuaVal {
        let px = &self.rt.proxies[p];
        let count = |backup: bool| {
            let n = px.be.servers.iter().filter(|s| s.backup == backup && s.state.counts_as_available()).count();
            int(i64::try_from(n).unwrap_or(i64::MAX))
        };
        match op {
            // HAProxy's `proxy_cap_str()`, `proxy_mode_str()`
            PxOp::GetCap => LuaVal::Str(
                match (px.cap.frontend, px.cap.backend) {
                    (true, true) => "proxy",
                    (true, false) => "frontend",
                    (false, _) => "backend",
                }
                .to_owned(),
            ),
            PxOp::GetMode => LuaVal::Str(if px.mode == Mode::Http { "http" } else { "tcp" }.to_owned()),
            PxOp::ShutBcksess => {
                crate::server::sessions::track_for_lua();
                for s in px.be.servers.iter().filter(|s| s.backup) {
                    if let Some(sess) = &s.sessions {
                        sess.shutdown_all();
                    }
                }
                LuaVal::Nil
            }
            PxOp::Pause | PxOp::Resume | PxOp::Stop => {
                listen(px, op);
                LuaVal::Nil
            }
            PxOp::SrvAct => count(false),
            PxOp::SrvBck => count(true),
        }
    }
}

/// `Proxy:pause()`, `resume()`, `stop()`, as HAProxy 2.6's `pause_proxy()`,
/// `resume_proxy()`, `stop_proxy()`: a frontend's listeners stop accepting (paused:
/// the sockets stay, bound here they refuse connections; stopped: closed for good)
/// or accept again; nothing for a backend, a stopped frontend, or a resume of one
/// not paused.
fn listen(px: &ProxyRt, op: PxOp) {
    use crate::proxy::ListenState;
    if !px.cap.frontend {
        return;
    }
    let changed = px.fe.listen.send_if_modified(|st| {
        let to = match (op, *st) {
            (PxOp::Pause, ListenState::Running) => ListenState::Paused,
            (PxOp::Resume, ListenState::Paused) => ListenState::Running,
            (PxOp::Stop, ListenState::Running | ListenState::Paused) => ListenState::Stopped,
            _ => return false,
        };
        *st = to;
        true
    });
    // HAProxy's `pause_listener()`/`resume_listener()` warnings, on stderr and to the
    // proxy's logs
    let what = match op {
        PxOp::Pause => "Paused",
        PxOp::Resume => "Resumed",
        _ => return,
    };
    if changed {
        let cap = if px.cap.backend { "proxy" } else { "frontend" };
        let msg = format!("{what} {cap} {}.", px.name);
        let line = format!("{}({}) : {msg}\n", rampart_cfg::Level::Warning.tag(), std::process::id());
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        px.send_log(crate::log::level::WARNING, &msg);
    }
}

fn admin(px: &ProxyRt, i: usize, st: AdminState) -> LuaVal {
    set_admin_state(px, i, st);
    LuaVal::Nil
}

/// `check_force_*` (not on a tracking server) and `agent_force_*` (only while the
/// agent runs), as HAProxy 2.6's methods.
fn force(px: &ProxyRt, i: usize, kind: CheckKind, to: Forced) {
    let srv = &px.be.servers[i];
    let agent = kind == CheckKind::Agent;
    if agent && !(srv.agent.is_some() && srv.state.check_enabled(true)) {
        return;
    }
    if !agent && srv.track.is_some() {
        return;
    }
    let next = match to {
        Forced::Up => OperState::Running,
        Forced::Nolb => OperState::Stopping,
        Forced::Down => OperState::Stopped,
    };
    crate::health::force_state_by(px, i, agent, next, "Lua script");
}
