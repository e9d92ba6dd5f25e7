//! Compiles the engines of a proxy's `filter spoe` lines: message arguments and
//! conditions (against the proxy, as HAProxy does), the group and event lists, the
//! variables of `set-on-error`, `set-process-time` and `set-total-time`.

use std::sync::atomic::{AtomicUsize, Ordering};

use rampart_cfg::model::{Config, FilterKind, SpoeConf, SpoeEvent};
use rampart_cfg::Diag;

use super::{event_index, Engine, Group, Message};
use crate::acl::{compile_condition, AclSet};
use crate::sample::expr::{self, CompileCx};
use crate::sample::vars::{parse_name, VarRef};

/// Gives each engine of the process its number (the key of its idle connections).
static NEXT_KEY: AtomicUsize = AtomicUsize::new(0);

/// The events rampart sends messages on; the others are refused at startup.
const SUPPORTED: [SpoeEvent; 2] = [SpoeEvent::FrontendHttpRequest, SpoeEvent::BackendHttpRequest];

/// The engines of proxy `px`, in the order of its `filter spoe` lines.
pub fn engines(cfg: &Config, px: usize, cx: &mut CompileCx<'_>) -> Result<Vec<Engine>, Vec<Diag>> {
    let mut out = Vec::new();
    let mut errs = Vec::new();
    for f in &cfg.proxies[px].filters {
        let FilterKind::Spoe(spoe) = &f.kind else { continue };
        let Some(conf) = spoe.conf.as_deref() else { continue };
        match engine(cfg, px, conf, cx) {
            Ok(e) => out.push(e),
            Err(d) => errs.extend(d),
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(errs)
    }
}

fn engine(cfg: &Config, px: usize, conf: &SpoeConf, cx: &mut CompileCx<'_>) -> Result<Engine, Vec<Diag>> {
    let a = &conf.agent;
    let mut errs = Vec::new();
    let Some(be) = cfg.proxies.iter().position(|p| p.cap.backend && p.name == a.use_backend) else {
        let msg = format!("SPOE agent '{}': backend '{}' not found", a.id, a.use_backend);
        return Err(vec![Diag::alert(Some(a.span.clone()), msg)]);
    };
    let mut messages = Vec::with_capacity(conf.messages.len());
    let mut events: [Vec<usize>; 7] = Default::default();
    let is_listen = cfg.proxies[px].cap.frontend && cfg.proxies[px].cap.backend;
    for (i, m) in conf.messages.iter().enumerate() {
        let mut args = Vec::with_capacity(m.args.len());
        for arg in &m.args {
            match expr::compile(&arg.expr, cx) {
                Ok(e) => args.push((arg.name.as_str().into(), e)),
                Err(e) => errs.push(Diag::alert(
                    Some(m.span.clone()),
                    format!(
                        "'args' of spoe-message '{}' : failed to parse sample expression '{}' : {e}.",
                        m.name, arg.expr
                    ),
                )),
            }
        }
        let cond = match &m.cond {
            None => None,
            Some(c) => match compile_condition(c, &[], &AclSet::default(), cx) {
                Ok(c) => Some(c),
                Err(e) => {
                    errs.push(Diag::alert(
                        Some(c.span.clone()),
                        format!("error detected while parsing 'event' condition : {e}."),
                    ));
                    None
                }
            },
        };
        if let Some(mut ev) = m.event.filter(|_| a.messages.contains(&m.name)) {
            // a `listen` section runs backend request events as frontend ones (HAProxy)
            if is_listen && ev == SpoeEvent::BackendHttpRequest {
                ev = SpoeEvent::FrontendHttpRequest;
            }
            if !SUPPORTED.contains(&ev) {
                errs.push(Diag::alert(Some(m.span.clone()), format!("'event {}' is not supported yet", ev.name())));
            }
            events[event_index(ev)].push(i);
        }
        messages.push(Message { name: m.name.as_str().into(), args: args.into(), cond });
    }
    let var = |name: &Option<String>| -> Result<Option<VarRef>, Diag> {
        let Some(n) = name else { return Ok(None) };
        parse_name(format!("txn.{}.{n}", a.var_prefix).as_bytes())
            .map(Some)
            .map_err(|e| Diag::alert(Some(a.span.clone()), format!("SPOE agent '{}': {e}", a.id)))
    };
    let (on_error, process_time, total_time) =
        match (var(&a.set_on_error), var(&a.set_process_time), var(&a.set_total_time)) {
            (Ok(x), Ok(y), Ok(z)) => (x, y, z),
            (x, y, z) => {
                errs.extend([x.err(), y.err(), z.err()].into_iter().flatten());
                (None, None, None)
            }
        };
    if !errs.is_empty() {
        return Err(errs);
    }
    let groups =
        conf.groups.iter().map(|g| Group { name: g.name.as_str().into(), messages: g.messages.clone().into() });
    Ok(Engine {
        id: conf.id.as_str().into(),
        agent: a.id.as_str().into(),
        be,
        messages: messages.into(),
        groups: groups.collect(),
        events: events.map(Vec::into_boxed_slice),
        var_prefix: a.var_prefix.as_str().into(),
        on_error,
        process_time,
        total_time,
        continue_on_error: a.continue_on_error,
        async_mode: a.async_,
        pipelining: a.pipelining,
        send_frag_payload: a.send_frag_payload,
        max_waiting_frames: a.max_waiting_frames.max(1),
        maxconnrate: a.maxconnrate,
        maxerrrate: a.maxerrrate,
        max_frame_size: a.max_frame_size,
        timeout_hello: a.timeout_hello,
        timeout_idle: a.timeout_idle,
        timeout_processing: a.timeout_processing,
        key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
    })
}
