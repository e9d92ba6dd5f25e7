//! The DNS part of the runtime model: the `resolvers` sections and what each server
//! whose address is a name asks of them.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use rampart_cfg::model::{Config, Server};

use crate::dns::types::{ResolversRt, SrvDns};

/// The `resolvers` sections at run time.
pub fn resolvers(cfg: &Config) -> Vec<ResolversRt> {
    cfg.resolvers.iter().map(ResolversRt::new).collect()
}

/// How server `srv` follows DNS, when its address is a name or it names `resolvers`
/// (`set server fqdn` may give it one). A name resolved at startup is the one it keeps;
/// a template slot an SRV record must fill starts without one.
pub fn server_dns(cfg: &Config, srv: &Server) -> Option<Box<SrvDns>> {
    let r = &srv.resolve;
    let f = srv.fqdn.as_ref();
    if f.is_none() && r.resolvers.is_none() {
        return None;
    }
    let resolvers = r.resolvers.as_ref().and_then(|name| cfg.resolvers.iter().position(|x| &x.name == name));
    let hostname = f.filter(|f| !f.is_srv()).map(|f| Arc::new(f.name.clone()));
    Some(Box::new(SrvDns {
        resolvers,
        conf_name: f.map_or_else(String::new, |f| f.name.clone()),
        hostname: ArcSwapOption::new(hostname),
        fqdn_changed: tokio::sync::Notify::new(),
        fqdn_set: AtomicBool::new(false),
        prefer_v6: r.prefer_v6,
        nets: r.nets.clone(),
        allow_dup_ip: r.allow_dup_ip,
        ignore_weight: r.ignore_weight,
    }))
}

/// The server's state at startup: in maintenance when its name did not resolve.
pub fn initial_state(srv: &Server) -> crate::server::SrvState {
    let st = crate::server::SrvState::new(srv.weight, srv.disabled);
    if srv.fqdn.as_ref().is_some_and(|f| f.unresolved) {
        st.set_resolution_maint(true);
    }
    st
}
