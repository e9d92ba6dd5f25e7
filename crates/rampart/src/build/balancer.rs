//! Builds a backend's balancer from its `balance`, `hash-type`,
//! `hash-balance-factor` and server weights, and compiles the expression of
//! `balance hash <expr>`.
//! HAProxy counterpart: the `lbprm` set-up of `check_config_validity()`
//! (src/cfgparse.c) and the expression check of `balance hash` (src/backend.c).

use rampart_cfg::model::{Balance, HashFunc};
use rampart_cfg::{Config, Diag};

use crate::lb::{Algo, HashFn, Hasher, KeySource, Lb, LbConfig, UriOpts};
use crate::sample::expr::{self, CompileCx, Expr, Place, Site};

/// The balancer of proxy `idx`, its compiled `balance hash` expression, and with
/// `option allbackups` the balancer of its backup servers; problems become alerts.
pub fn build(cfg: &Config, idx: usize, alerts: &mut Vec<Diag>) -> (Lb, Option<Expr>, Option<Lb>) {
    let px = &cfg.proxies[idx];
    let algo = match &px.balance {
        Balance::RoundRobin => Algo::RoundRobin,
        Balance::StaticRr => Algo::StaticRr,
        Balance::LeastConn => Algo::LeastConn,
        Balance::First => Algo::First,
        Balance::Random { draws } => Algo::Random(*draws),
        Balance::Source => Algo::Hash(KeySource::Source),
        Balance::Uri { whole, path_only, len, depth } => {
            Algo::Hash(KeySource::Uri(UriOpts { whole: *whole, path_only: *path_only, len: *len, depth: *depth }))
        }
        Balance::UrlParam { name, .. } => Algo::Hash(KeySource::UrlParam(name.as_str().into())),
        Balance::Hdr { name, use_domain_only } => {
            Algo::Hash(KeySource::Hdr { name: name.as_str().into(), domain_only: *use_domain_only })
        }
        Balance::RdpCookie { name } => Algo::Hash(KeySource::RdpCookie(name.as_str().into())),
        Balance::Hash { .. } => Algo::Hash(KeySource::Expr),
        Balance::PeakEwma { decay } => Algo::PeakEwma(*decay),
        Balance::PrefixAffinity { len, .. } => Algo::PrefixAffinity(*len),
    };
    let lb_expr = match &px.balance {
        Balance::Hash { expr } if px.cap.backend => compile(cfg, idx, "hash", expr, alerts),
        Balance::PrefixAffinity { expr, .. } if px.cap.backend => compile(cfg, idx, "prefix-affinity", expr, alerts),
        _ => None,
    };
    let t = px.hash_type;
    let func = match t.func {
        HashFunc::Sdbm => HashFn::Sdbm,
        HashFunc::Djb2 => HashFn::Djb2,
        HashFunc::Wt6 => HashFn::Wt6,
        HashFunc::Crc32 => HashFn::Crc32,
    };
    // prefix-affinity remembers keys in a direct-mapped table: well-spread keys
    let spread = matches!(algo, Algo::PrefixAffinity(_));
    let lb_cfg = LbConfig {
        algo,
        consistent: t.consistent,
        hasher: Hasher { func, avalanche: t.avalanche || spread },
        balance_factor: px.hash_balance_factor,
    };
    let weights: Vec<u32> = px.effective_servers().iter().map(|s| s.weight).collect();
    // Backup servers are picked apart (see `backend::pick_server`), disabled ones are
    // in maintenance, as are those whose name did not resolve (`init-addr none`):
    // neither is in the active servers' tables.
    let maint = |s: &rampart_cfg::model::Server| s.disabled || s.fqdn.as_ref().is_some_and(|f| f.unresolved);
    let active: Vec<bool> = px.effective_servers().iter().map(|s| !s.backup && !maint(s)).collect();
    let ids = rampart_cfg::model::haproxy_ids(px.effective_servers().iter().map(|s| s.id));
    let backup = px.options.allbackups.then(|| {
        let backups: Vec<bool> = px.effective_servers().iter().map(|s| s.backup && !maint(s)).collect();
        Lb::new(lb_cfg.clone(), &weights, &ids, &backups).counting_loads()
    });
    (Lb::new(lb_cfg, &weights, &ids, &active).counting_loads(), lb_expr, backup)
}

fn compile(cfg: &Config, idx: usize, algo: &str, text: &str, alerts: &mut Vec<Diag>) -> Option<Expr> {
    let px = &cfg.proxies[idx];
    let kind = if px.cap.frontend { "proxy" } else { "backend" };
    let head = format!("{kind} '{}' : ", px.name);
    let mut cx = CompileCx::new(cfg, idx, Site::UseServer);
    match expr::compile(text, &mut cx) {
        Ok(e) => match e.check_place(Place::BeSetSrv) {
            Ok(()) => Some(e),
            Err(needs) => {
                let msg = format!(
                    "{head}error detected while parsing 'balance {algo}' expression '{text}' which requires \
                     information from {needs}, which is not available here."
                );
                alerts.push(Diag::alert(Some(px.span.clone()), msg));
                None
            }
        },
        Err(e) => {
            let msg = format!("{head}failed to parse 'balance {algo}' expression '{text}' in : {e}.");
            alerts.push(Diag::alert(Some(px.span.clone()), msg));
            None
        }
    }
}
