//! Servers added and removed at run time: `add server <b>/<s> <addr>[:<port>]
//! [options]` and `del server <b>/<s>`, with HAProxy 2.6's rules and messages. An added
//! server is appended to its backend's [`crate::server::SrvList`] (indices never
//! move) and to its balancers, in forced maintenance with its checks disabled; a
//! deleted one is only marked so, which keeps every index a stream or a task holds
//! valid.
//! HAProxy counterpart: `cli_parse_add_server()`, `cli_parse_delete_server()`,
//! `srv_apply_track()` (server.c).

use rampart_cfg::model::{BindProto, Config, Mode, Server};

use super::cmd::Session;
use super::Cli;
use crate::proxy::{ProxyRt, Runtime, ServerRt};
use crate::tls::bind::FileLookup;

/// Builds the runtime server of an `add server` (`crate::build::dynamic_server`,
/// handed over by `main`): the configuration, the runtime, the backend, the parsed
/// server, its id, its idle-pool key and the CA store's files. `Err`: the messages.
pub type MakeServer =
    fn(&Config, &Runtime, usize, &Server, u32, usize, FileLookup<'_>) -> Result<ServerRt, Vec<String>>;

/// Splits `<backend>/<server>`, as HAProxy: `None` without a `/` or a server name.
fn split(arg: Option<&str>) -> Option<(&str, &str)> {
    arg.and_then(|a| a.split_once('/')).filter(|(_, s)| !s.is_empty())
}

/// The backend named `name`, or HAProxy's message.
fn backend<'a>(cli: &'a Cli, name: &str) -> Result<(usize, &'a ProxyRt), String> {
    cli.find_proxy(name)
        .map(|i| (i, &cli.rt.proxies[i]))
        .filter(|(_, p)| p.cap.backend)
        .ok_or_else(|| "No such backend.\n".to_owned())
}

/// The live (not deleted) server `name` of `px`.
pub(super) fn live_server(px: &ProxyRt, name: &str) -> Option<usize> {
    px.be.servers.iter().position(|s| s.name == name && !s.state.is_deleted())
}

/// `add server <backend>/<server> <addr>[:<port>] [options]`.
pub fn add_server(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    match add(cli, words) {
        Ok(()) => "New server registered.\n".to_owned(),
        Err(e) => e,
    }
}

fn add(cli: &Cli, words: &[&str]) -> Result<(), String> {
    let Some((be_name, name)) = split(words.get(2).copied()) else {
        return Err("Require 'backend/server'.\n".to_owned());
    };
    let (be, px) = backend(cli, be_name)?;
    if !px.be.lb.takes_added_servers() {
        return Err("Backend must use a dynamic load balancing to support dynamic servers.\n".to_owned());
    }
    let mut args: Vec<String> = vec![name.to_owned()];
    args.extend(words.iter().skip(3).map(|w| (*w).to_owned()));
    let srv = rampart_cfg::parse::parse_dynamic_server(&args).map_err(lines)?;
    // h1 and h2 are HTTP multiplexers: a TCP backend has no use of them
    if srv.proto.is_some_and(|p| matches!(p, BindProto::H1 | BindProto::H2)) && px.mode == Mode::Tcp {
        return Err("MUX protocol is not usable for server.\n".to_owned());
    }
    let track = match &srv.check.track {
        Some(t) => Some(resolve_track(cli, be, &srv, t)?),
        None => None,
    };
    let Some(make) = cli.make_server else {
        return Err("'add server' is not supported yet.\n".to_owned());
    };
    let pool_key = next_pool_key(&cli.rt);
    let servers = &px.be.servers;
    let index = servers.push_with(
        |list| {
            if list.iter().any(|s| s.name == srv.name && !s.state.is_deleted()) {
                return Err("Already exists a server with the same name in backend.\n".to_owned());
            }
            if let Some(id) = srv.id {
                if let Some((at, o)) = list.iter().enumerate().find(|(_, s)| s.stats.sid == id && !s.state.is_deleted())
                {
                    let place = match cli.cfg.proxies[be].effective_servers().get(at) {
                        Some(c) if at < list.configured() => c.span.to_string(),
                        _ => "CLI".to_owned(),
                    };
                    return Err(format!("'id' : custom id {id} already used at {place} ('server {}').\n", o.name));
                }
            }
            Ok(())
        },
        |_| {
            let sid = srv.id.unwrap_or_else(|| next_id(px));
            let files = |p: &str| cli.cafiles.contents(p);
            let mut s = make(&cli.cfg, &cli.rt, be, &srv, sid, pool_key, &files).map_err(lines)?;
            s.track = track;
            Ok(s)
        },
    )?;
    let server = &servers[index];
    if let Some(tls) = server.tls.as_deref() {
        if let Some(crt) = &tls.crt {
            cli.certs.server_added(crt);
        }
        if let Some(chain) = &tls.chain {
            cli.cafiles.server_added(chain);
        }
    }
    px.be.lb.add_server(index, srv.weight, server.stats.sid, false);
    if let Some(lb) = &px.be.lb_backup {
        lb.add_server(index, srv.weight, server.stats.sid, false);
    }
    crate::health::spawn_for_server(&cli.rt, be, index);
    Ok(())
}

/// The messages of a refusal, one per line.
fn lines(msgs: Vec<String>) -> String {
    msgs.iter().map(|m| format!("{m}\n")).collect()
}

/// HAProxy's `get_next_id()`: the smallest id no live server of `px` uses.
fn next_id(px: &ProxyRt) -> u32 {
    let used: Vec<u32> = px.be.servers.iter().filter(|s| !s.state.is_deleted()).map(|s| s.stats.sid).collect();
    (1..).find(|i| !used.contains(i)).unwrap_or(u32::MAX)
}

/// A key no other server uses in the idle connection pools.
fn next_pool_key(rt: &Runtime) -> usize {
    rt.proxies.iter().flat_map(|p| p.be.servers.iter()).map(|s| s.pool_key + 1).max().unwrap_or(0)
}

/// `track [<backend>/]<server>` of an added server, with HAProxy's refusals: the
/// tracked server must be a configured one, with a check, an agent or a track.
fn resolve_track(cli: &Cli, be: usize, srv: &Server, target: &str) -> Result<(usize, usize), String> {
    if srv.check.enabled {
        return Err("unable to enable checks and tracking at the same time!\n".to_owned());
    }
    let (tb, sname) = match target.rsplit_once('/') {
        Some((p, s)) => match cli.find_proxy(p).filter(|&i| cli.rt.proxies[i].cap.backend) {
            Some(i) => (i, s),
            None => return Err(format!("unable to find required proxy '{p}' for tracking.\n")),
        },
        None => (be, target),
    };
    let tpx = &cli.rt.proxies[tb];
    let Some(ts) = live_server(tpx, sname) else {
        return Err(format!("unable to find required server '{sname}' for tracking.\n"));
    };
    if ts >= tpx.be.servers.configured() {
        return Err(format!("unable to use {}/{sname} for tracking as it is a dynamic server.\n", tpx.name));
    }
    let t = &tpx.be.servers[ts];
    if t.check.is_none() && t.agent.is_none() && t.track.is_none() {
        return Err(format!(
            "unable to use {}/{sname} for tracking as it does not have any check nor agent enabled.\n",
            tpx.name
        ));
    }
    Ok((tb, ts))
}

/// `del server <backend>/<server>`.
pub fn del_server(cli: &Cli, _: &mut Session, words: &[&str]) -> String {
    let Some((be_name, name)) = split(words.get(2).copied()) else {
        return "Require 'backend/server'.\n".to_owned();
    };
    let (be, px) = match backend(cli, be_name) {
        Ok(b) => b,
        Err(e) => return e,
    };
    let Some(i) = live_server(px, name) else { return "No such server.\n".to_owned() };
    if referenced(cli, be, i) {
        return "This server cannot be removed at runtime due to other configuration elements pointing to it.\n"
            .to_owned();
    }
    let srv = &px.be.servers[i];
    if !srv.state.is_maint() {
        return "Only servers in maintenance mode can be deleted.\n".to_owned();
    }
    if srv.cur_conns.load(std::sync::atomic::Ordering::Relaxed) > 0 || !srv.queue.is_empty() {
        return "Server still has connections attached to it, cannot remove it.\n".to_owned();
    }
    srv.state.mark_deleted();
    // its certificate and CA files lose a user (`show ssl cert`: `Unused` once none is left)
    if let Some(tls) = srv.tls.as_deref() {
        if let Some(crt) = &tls.crt {
            cli.certs.server_removed(crt);
        }
        if let Some(chain) = &tls.chain {
            cli.cafiles.server_removed(chain);
        }
    }
    px.be.lb.set_active(i, false);
    if let Some(lb) = &px.be.lb_backup {
        lb.set_active(i, false);
    }
    // a tracker's task waits on the tracked server: wake it to see it is gone
    if let Some((tb, ts)) = srv.track {
        cli.rt.proxies[tb].be.servers[ts].state.notify_trackers();
    }
    // as HAProxy 2.6: no newline of its own, the CLI ends the answer with one
    "Server deleted.".to_owned()
}

/// Whether something of the configuration names server `i` of backend `be`: a live
/// server tracks it, a `use-server` rule or an expression's argument names it
/// (`srv_sess_rate(be/s1)` in an ACL), or it is a configured server of a process that
/// loads Lua scripts (HAProxy's `SRV_F_NON_PURGEABLE`).
// COMPAT: HAProxy protects only the servers a script reached through `core.backends`;
// rampart does not follow what scripts reach and protects every configured server.
fn referenced(cli: &Cli, be: usize, i: usize) -> bool {
    if !cli.cfg.global.lua.loads.is_empty() && i < cli.rt.proxies[be].be.servers.configured() {
        return true;
    }
    let tracked = cli
        .rt
        .proxies
        .iter()
        .flat_map(|p| p.be.servers.iter())
        .any(|s| s.track == Some((be, i)) && !s.state.is_deleted());
    let used = cli.rt.proxies[be]
        .rules
        .use_server
        .iter()
        .any(|r| matches!(r.act, crate::action::ServerTarget::Static(s) if s == i));
    tracked || used || cli.rt.named_servers.contains(&(be, i))
}

/// `set server <b>/<s> ssl on|off`, with HAProxy's refusals.
// COMPAT: switching TLS on or off for a configured server is refused as not supported
// yet (HAProxy keeps a TLS context for a `no-ssl` server under `default-server ssl`).
pub(super) fn set_ssl(px: &ProxyRt, i: usize, value: Option<&str>) -> String {
    let srv = &px.be.servers[i];
    if i >= px.be.servers.configured() {
        return "'set server <srv> ssl' not supported on dynamic servers\n".to_owned();
    }
    let cannot = || "'set server <srv> ssl' cannot be set.  default-server should define ssl settings\n".to_owned();
    let Some(tls) = srv.tls.as_deref() else { return cannot() };
    let on = match value {
        Some("on") => true,
        Some("off") => false,
        _ => return "'set server <srv> ssl' expects 'on' or 'off'.\n".to_owned(),
    };
    if !tls.set_use_ssl(on) {
        return cannot();
    }
    // as HAProxy (`srv_cleanup_connections()`): the idle connections made before the
    // change are closed now (the change is also part of their key: none is reused)
    crate::conn_pool::close_server(srv.pool_key);
    "server ssl setting updated.\n".to_owned()
}
