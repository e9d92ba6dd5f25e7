//! Servers' states loaded at startup: the lines of `server-state-file` (global) or of a
//! backend's own file (`load-server-state-from-file local`), applied to the servers of
//! the same backend and name, as HAProxy 2.6 applies them; the same lines carry the
//! servers across a master-worker reload (`master::handover`). HAProxy counterpart:
//! `apply_server_state()`, `srv_state_srv_update()` (src/server_state.c) and the
//! `init-addr last` method (`srv_iterate_initaddr()`, src/server.c).
//!
//! What a line changes: the operational state and the check's health, forced
//! maintenance and drain (a change of `disabled` in the configuration wins), the weight
//! set at run time (unless the configured weight changed), the time of the last change,
//! checks and agents disabled at run time, the port, the address of a server whose
//! address is a name when `init-addr` tries `last` first (the default), an FQDN set at
//! run time, and the record target a `server-template` slot held (`srv_fqdn`,
//! `srv_port`, `srvrecord`).
//! Not applied yet: the check's last status and result, the check and agent addresses
//! and ports (docs/COMPATIBILITY.md).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;

use rampart_cfg::model::server_state::LoadFrom;
use rampart_cfg::model::{Config, InitAddr, Proxy};
use rampart_cfg::state_file::{self, FileError, Line};

use crate::proxy::{ProxyRt, Runtime, ServerRt};
use crate::server::OperState;

/// Reads the state files the configuration names and applies them; returns the
/// warnings to print (HAProxy's wording).
pub fn apply(cfg: &Config, rt: &Runtime) -> Vec<String> {
    let mut warnings = Vec::new();
    let st = &cfg.global.server_state;
    let uses_global = cfg.proxies.iter().any(|p| p.cap.backend && p.server_state.load == LoadFrom::Global);
    let mut global: Option<HashMap<String, Line>> = None;
    if let Some(path) = st.global_path().filter(|_| uses_global) {
        global = read(&path, &mut warnings, |e| match e {
            Err(e) => format!("config: Can't open global server state file '{}': {e}", path.display()),
            Ok(FileError::Version) => {
                format!("config: Can't get version of the global server state file '{}'.", path.display())
            }
            Ok(FileError::Corrupted(n)) => {
                format!("config: corrupted global server state file '{}' at line {n}.", path.display())
            }
        })
        .map(|lines| keyed(lines, None, &mut warnings));
    }
    for (idx, (px, conf)) in rt.proxies.iter().zip(&cfg.proxies).enumerate() {
        if !px.cap.backend || px.be.servers.iter().all(|s| s.hidden) {
            continue;
        }
        match conf.server_state.load {
            LoadFrom::Unset | LoadFrom::None => {}
            LoadFrom::Global if st.file.is_none() => warnings.push(format!(
                "backend '{}' configured to load server state file from global section 'server-state-file' \
                 directive. Unfortunately, 'server-state-file' is not set!",
                px.name
            )),
            LoadFrom::Global => {
                if let Some(tree) = global.as_mut() {
                    apply_proxy(px, conf, tree, &mut warnings);
                }
            }
            LoadFrom::Local => {
                let name = conf.server_state.file_name.as_deref().unwrap_or(&px.name);
                let path = st.path_of(name);
                let lines = read(&path, &mut warnings, |e| match e {
                    Err(e) => format!("Proxy '{}': Can't open server state file '{}': {e}.", px.name, path.display()),
                    Ok(FileError::Version) => {
                        format!("Proxy '{}': Can't get version of the server state file '{}'.", px.name, path.display())
                    }
                    Ok(FileError::Corrupted(n)) => {
                        format!("Proxy '{}': corrupted server state file '{}' at line {n}.", px.name, path.display())
                    }
                });
                let Some(lines) = lines else { continue };
                let own = (px.name.as_str(), crate::stats::iid(rt, idx));
                let mut tree = keyed(lines, Some(own), &mut warnings);
                apply_proxy(px, conf, &mut tree, &mut warnings);
                let mut left: Vec<&Line> = tree.values().collect();
                left.sort_by(|a, b| a.srv_name().cmp(b.srv_name()));
                for l in left {
                    warnings.push(format!(
                        "Proxy '{}': can't find server '{}' in backend '{}'",
                        px.name,
                        l.srv_name(),
                        px.name
                    ));
                }
            }
        }
    }
    warnings
}

/// Applies lines of `show servers state` to every backend by name (the reload
/// handover); returns the warnings.
pub fn apply_lines(cfg: &Config, rt: &Runtime, lines: Vec<Line>) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut tree = keyed(lines, None, &mut warnings);
    for (px, conf) in rt.proxies.iter().zip(&cfg.proxies).filter(|(p, _)| p.cap.backend) {
        apply_proxy(px, conf, &mut tree, &mut warnings);
    }
    warnings
}

/// Reads and parses a state file; `None` (with a warning) when it cannot be used.
fn read(
    path: &std::path::Path,
    warnings: &mut Vec<String>,
    say: impl Fn(Result<FileError, std::io::Error>) -> String,
) -> Option<Vec<Line>> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            let e = std::io::Error::from(e.kind());
            warnings.push(say(Err(e)));
            return None;
        }
    };
    match state_file::parse(&text) {
        Ok(lines) => Some(lines),
        Err(e) => {
            warnings.push(say(Ok(e)));
            None
        }
    }
}

/// The lines by "backend server" name. With `own` (a local file: its backend's name and
/// number), lines of other backends are dropped, as HAProxy does: a line matching by
/// number only is kept with a warning, one matching by name only is dropped unless its
/// backend's number was forced.
fn keyed(lines: Vec<Line>, own: Option<(&str, u32)>, warnings: &mut Vec<String>) -> HashMap<String, Line> {
    let mut out = HashMap::new();
    for l in lines {
        let be = match own {
            None => l.be_name().to_owned(),
            Some((name, id)) => {
                let same_id = state_file_atoi(l.be_id()) == i64::from(id);
                let same_name = l.be_name() == name;
                if !same_id && !same_name {
                    continue;
                }
                if !same_id {
                    warnings.push(format!(
                        "Proxy '{name}': backend ID mismatch: from server state file: '{}', from running config '{id}'",
                        l.be_id()
                    ));
                } else if !same_name {
                    warnings.push(format!(
                        "Proxy '{name}': backend name mismatch: from server state file: '{}', from running config '{name}'",
                        l.be_name()
                    ));
                    if !l.backend_id_forced() {
                        continue;
                    }
                }
                name.to_owned()
            }
        };
        // a duplicate (a hand-made file): the first line stays
        out.entry(format!("{be} {}", l.srv_name())).or_insert(l);
    }
    out
}

fn state_file_atoi(s: &str) -> i64 {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

/// Applies to each server of `px` its line, taken out of `tree`.
fn apply_proxy(px: &ProxyRt, conf: &Proxy, tree: &mut HashMap<String, Line>, warnings: &mut Vec<String>) {
    for (i, srv) in px.be.servers.iter().enumerate().filter(|(_, s)| !s.hidden) {
        let Some(line) = tree.remove(&format!("{} {}", px.name, srv.name)) else { continue };
        let methods = conf.servers.iter().find(|s| s.name == srv.name).map_or(&[][..], |s| &s.resolve.init_addr[..]);
        let msg = match state_file::check(&line) {
            Ok(st) => apply_server(srv, methods, &st),
            Err(msg) => Some(msg),
        };
        if let Some(msg) = msg {
            warnings.push(format!("server-state application failed for server '{}/{}'{msg}", px.name, srv.name))
        }
        // the balancer learns a server the line brought up (a slot that started without
        // an address)
        crate::health::sync_lb(px, i);
    }
}

/// HAProxy's `srv_state_srv_update()` on rampart's server state; what could not be
/// applied, for the warning.
fn apply_server(srv: &ServerRt, init_addr: &[InitAddr], st: &state_file::State) -> Option<String> {
    let s = &srv.state;
    let (rise, fall) = srv.check.as_deref().map_or(srv.rise_fall, |c| (c.rise, c.fall));
    // the operational state (rampart has no STARTING: without `slowstart` it is UP)
    match st.op_state {
        0 => stop(srv),
        3 if fall == 1 => stop(srv),
        3 => {
            let h = u32::try_from(st.check_health).unwrap_or(0);
            s.store_health(if h < rise || h > rise + fall - 2 { rise } else { h });
            s.set_oper(OperState::Stopping);
        }
        _ => {
            s.store_health(rise + fall - 1);
            s.set_oper(OperState::Running);
        }
    }
    // maintenance: a change of `disabled` in the configuration wins over the state
    let (fmaint, cmaint, fdrain) = (st.admin & 1 != 0, st.admin & 4 != 0, st.admin & 8 != 0);
    if cmaint == srv.disabled {
        if fmaint && !srv.disabled {
            s.set_maint(true);
            // COMPAT: HAProxy zeroes the health of a server it puts in maintenance
            s.store_health(0);
        } else if !fmaint && srv.disabled {
            s.set_maint(false);
        }
    }
    // drain: kept unless it came from a configured weight of 0 that is no longer 0
    if !s.is_forced_maint() && fdrain && (st.iweight > 0 || s.uweight() == 0) {
        s.set_drain(true);
    }
    // checks and agents disabled on the runtime API stay so
    let (configured, enabled) = (0x2, 0x4);
    if srv.check.is_some() && st.check_state & configured != 0 && st.check_state & enabled == 0 {
        s.set_check_enabled(false, false);
    }
    if srv.agent.is_some() && st.agent_state & configured != 0 && st.agent_state & enabled == 0 {
        s.set_check_enabled(true, false);
    }
    // a weight set at run time stays, unless the configured weight changed
    if st.iweight == s.uweight() {
        s.set_eweight(st.uweight);
    }
    apply_last_addr(srv, init_addr, st.addr.as_deref());
    // after the address: taking it is no change of state (HAProxy's `init-addr last`
    // runs after the state is applied and keeps its age)
    s.restore_last_change(st.since_change);
    if let Some(msg) = apply_fqdn(srv, st) {
        // as HAProxy, the port is not applied then (the address was)
        return Some(msg);
    }
    if let Some(port) = st.port.filter(|_| srv.unix.is_none()) {
        let a = srv.addr.get();
        srv.addr.set(SocketAddr::new(a.ip(), port));
    }
    None
}

/// The `srv_fqdn` and `srvrecord` columns. A server whose name is configured takes the
/// name set on the runtime API again (`set server fqdn`); a `server-template` slot
/// filled from SRV records takes the record target it held, when the line names the
/// same SRV request (the resolver then keeps the slot for that target, see
/// `dns::follow`). `Some`: why the line was not applied (HAProxy's words).
fn apply_fqdn(srv: &ServerRt, st: &state_file::State) -> Option<String> {
    let fqdn = st.fqdn.as_deref()?;
    let dns = srv.dns.as_deref();
    match dns.and_then(|d| d.hostname()) {
        Some(current) => {
            let dns = dns?;
            if *current == fqdn {
                dns.fqdn_set.store(false, Ordering::Relaxed);
            } else if st.fqdn_from_cli {
                dns.set_hostname(Some(fqdn.to_owned()));
                dns.fqdn_set.store(true, Ordering::Relaxed);
            }
            None
        }
        None => {
            let record = st.srvrecord.as_deref()?;
            let Some(dns) = dns.filter(|d| d.is_srv()) else {
                return Some(format!(", no SRV resolution for server '{}'. Previous state not applied", srv.name));
            };
            if dns.conf_name != record {
                return Some(format!(
                    ", SRV record mismatch between configuration ('{}') and state file ('{record}) for server '{}'. \
                     Previous state not applied",
                    dns.conf_name, srv.name
                ));
            }
            dns.set_hostname(Some(fqdn.to_owned()));
            None
        }
    }
}

fn stop(srv: &ServerRt) {
    srv.state.store_health(0);
    srv.state.set_oper(OperState::Stopped);
}

/// `init-addr last`: a server whose address is a name takes the address the state
/// kept, when `last` comes first in its methods or when the methods before it left the
/// server without address.
fn apply_last_addr(srv: &ServerRt, methods: &[InitAddr], addr: Option<&str>) {
    let Some(ip) = addr.and_then(|a| a.parse::<IpAddr>().ok()) else { return };
    let Some(dns) = srv.dns.as_deref() else { return };
    if dns.conf_name.is_empty() {
        return;
    }
    let first_last = methods.is_empty() || methods.first() == Some(&InitAddr::Last);
    let unresolved = srv.state.is_resolution_maint();
    let last_before_none = methods
        .iter()
        .position(|m| *m == InitAddr::Last)
        .is_some_and(|i| methods.iter().position(|m| *m == InitAddr::None).is_none_or(|n| i < n));
    if first_last || (unresolved && last_before_none) {
        let a = srv.addr.get();
        srv.addr.set(SocketAddr::new(ip, a.port()));
        srv.state.set_resolution_maint(false);
    }
}
