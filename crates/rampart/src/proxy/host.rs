//! The runtime model as the rules language reads it: [`Host`] over [`Runtime`]. Plain
//! reads of the proxies, servers and process facts, plus the two upcalls rules make
//! (the frontend's unique id, the denied counters).

use std::sync::atomic::Ordering;

use crate::sample::ctx::{Dir, SampleCtx};
use crate::sample::host::{BeFacts, FeRates, Host, SrvFacts};
use crate::sample::vars::ProcVars;
use crate::timer::Timeouts;

use super::Runtime;

impl Host for Runtime {
    fn bufsize(&self) -> usize {
        self.bufsize
    }

    fn max_head(&self) -> usize {
        self.max_head
    }

    fn stopping(&self) -> bool {
        self.global.stop_announced()
    }

    fn act_conns(&self) -> u32 {
        self.global.cur_conns.load(Ordering::Relaxed)
    }

    fn proc_vars(&self) -> &ProcVars {
        &self.proc_vars
    }

    fn cache(&self, cache: u32) -> Option<&crate::cache::Cache> {
        self.caches.get(cache as usize).map(|c| &**c)
    }

    fn count_cache(&self, fe: usize, be: Option<usize>, hit: bool) {
        let st = match be {
            Some(b) => self.proxies.get(b).map(|p| (&p.stats.be_cache_lookups, &p.stats.be_cache_hits)),
            None => self.proxies.get(fe).map(|p| (&p.stats.fe_cache_lookups, &p.stats.fe_cache_hits)),
        };
        if let Some((lookups, hits)) = st {
            lookups.inc();
            if hit {
                hits.inc();
            }
        }
    }

    fn rule_file(&self, file: u32) -> Option<&str> {
        self.rule_files.get(file as usize).map(|f| &**f)
    }

    fn proxy_name(&self, px: usize) -> Option<&str> {
        self.proxies.get(px).map(|p| p.name.as_str())
    }

    fn proxy_id(&self, px: usize) -> Option<u32> {
        self.stats.iids.get(px).copied()
    }

    fn default_backend(&self, fe: usize) -> Option<usize> {
        self.proxies.get(fe)?.fe.backend
    }

    fn fe_conns(&self, fe: usize) -> u32 {
        self.proxies.get(fe).map_or(0, |p| p.fe.cur_conns.load(Ordering::Relaxed))
    }

    fn timeouts(&self, px: usize) -> Option<&Timeouts> {
        self.proxies.get(px).map(|p| &p.timeouts)
    }

    fn logasap(&self, fe: usize) -> bool {
        self.proxies.get(fe).and_then(|p| p.log.as_ref()).is_some_and(|l| l.logasap)
    }

    fn log_count(&self, fe: usize) -> u64 {
        self.proxies.get(fe).and_then(|p| p.log.as_ref()).map_or(0, |l| l.count.load(Ordering::Relaxed))
    }

    fn cookie(&self, be: usize) -> Option<&rampart_cfg::model::CookiePersist> {
        self.proxies.get(be)?.be.cookie.as_deref()
    }

    fn listener_count(&self, fe: usize) -> usize {
        self.proxies.get(fe).map_or(0, |p| p.fe.listeners.len())
    }

    fn listener_name(&self, fe: usize, li: u32) -> Option<&str> {
        self.proxies.get(fe)?.fe.listeners.get(li as usize)?.name.as_deref()
    }

    fn use_proxy_header(&self, fe: usize) -> bool {
        self.proxies.get(fe).is_some_and(|p| p.use_proxy_header)
    }

    fn listener_id(&self, fe: usize, li: u32) -> Option<u32> {
        Some(self.proxies.get(fe)?.fe.listeners.get(li as usize)?.id)
    }

    fn listener_conns(&self, fe: usize, li: u32) -> Option<u32> {
        Some(self.proxies.get(fe)?.fe.listeners.get(li as usize)?.conns.load(Ordering::Relaxed))
    }

    fn server_count(&self, be: usize) -> usize {
        self.proxies.get(be).map_or(0, |p| p.be.servers.len())
    }

    fn server(&self, be: usize, srv: usize) -> Option<SrvFacts<'_>> {
        let b = &self.proxies.get(be)?.be;
        let s = b.servers.get(srv)?;
        let stopped = s.state.is_maint() || s.state.oper() == crate::server::OperState::Stopped;
        Some(SrvFacts {
            name: &s.name,
            addr: s.addr.get(),
            backup: s.backup,
            up: !stopped,
            usable: s.state.is_usable(),
            cur_conns: s.cur_conns.load(Ordering::Relaxed),
            id: s.stats.sid,
            stopped,
            queued: s.queue.len(),
            maxconn: b.current_maxconn(s),
            maxqueue: s.maxqueue,
            sess_rate: s.stats.sess_rate.current().unwrap_or(0),
            weight: s.state.eweight(),
            initial_weight: s.state.uweight(),
        })
    }

    fn backend(&self, be: usize) -> Option<BeFacts> {
        let px = self.proxies.get(be).filter(|p| p.cap.backend)?;
        Some(BeFacts {
            queued: px.be.queued(),
            sess_rate: px.stats.be_sess_rate.current().unwrap_or(0),
            all_backups: px.be.lb_backup.is_some(),
        })
    }

    fn fe_rates(&self, fe: usize) -> Option<FeRates> {
        let px = self.proxies.get(fe).filter(|p| p.cap.frontend)?;
        Some(FeRates {
            sess: px.stats.fe_sess_rate.current().unwrap_or(0),
            req: px.stats.fe_req_rate.current().unwrap_or(0),
        })
    }

    fn render_unique_id(&self, fe: usize, ctx: &SampleCtx<'_>, out: &mut Vec<u8>) -> bool {
        let Some(fmt) = self.proxies.get(fe).and_then(|p| p.rules.unique_id.as_ref()) else { return false };
        fmt.render(ctx, out);
        true
    }

    fn count_denied(&self, dir: Dir, fe: usize, be: Option<usize>, srv: Option<usize>) {
        if dir == Dir::Request {
            self.proxies[fe].fe.denied_req.inc();
            return;
        }
        self.proxies[fe].stats.fe_dresp.inc();
        let Some(b) = be.map(|b| &self.proxies[b]) else { return };
        b.stats.be_dresp.inc();
        if let Some(s) = srv.and_then(|s| b.be.servers.get(s)) {
            s.stats.dresp().inc();
        }
    }

    fn do_log(&self, fe: usize, ctx: &crate::sample::SampleCtx<'_>) {
        if let Some(pl) = self.proxies.get(fe).and_then(|p| p.log.as_deref()) {
            crate::log::emit(pl, ctx, false);
        }
    }

    fn stick_table(&self, px: usize) -> Option<&std::sync::Arc<crate::stick::StickTable>> {
        match self.proxies.get(px) {
            Some(p) => p.table.as_ref(),
            None => self.peer_tables.get(px - self.proxies.len()),
        }
    }
}
