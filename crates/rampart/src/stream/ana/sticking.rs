//! `stick on|match|store-request|store-response` rules of the backend: a key found in
//! the table sends the request to the server stored with it (found by its
//! `server_key`, its name or address after the table's `srvkey`, else by its id, when
//! that server takes persistent requests: not down, not in maintenance); the keys to
//! store are kept until the server is known, then stored with its id (`server_id`) and
//! key (`server_key`). `store-response` rules take their keys from the response.
//! HAProxy counterpart: `process_sticking_rules()`, `sticking_rule_find_target()` and
//! `process_store_rules()` (src/stream.c).
//!
//! COMPAT: HAProxy stores the keys of the request rules once the response arrives;
//! rampart once the server connection is established, so a server that never answers
//! is still stored. The keys of `store-response` rules are stored with the response.

use std::sync::Arc;

use rampart_cfg::model::DataType;

use rampart_cfg::model::SrvKey;

use super::switching::Input;
use crate::action::state::Persist;
use crate::proxy::{ProxyRt, ServerRt};
use crate::sample::ctx::{Dir, SampleCtx};
use crate::stick::{Key, StickTable};
use crate::stream::Stream;

/// The entries to store the stream's server in: one per table at most (the first
/// storing rule of each table wins, as in HAProxy).
pub type Stores = Vec<(Arc<StickTable>, Key)>;

/// Runs backend `be`'s stick rules. Returns the server a matching entry names (only
/// when no server is `assigned` yet); fills `stores` with the keys to store.
pub fn request(s: &Stream<'_>, be: usize, i: Input<'_>, assigned: bool, stores: &mut Stores) -> Option<usize> {
    if s.rt.proxies[be].rules.stick.is_empty() {
        return None;
    }
    let ctx = s.ctx(Dir::Request, Some((i.req, i.buf)), None, i.sess, i.txn, i.reqres, i.st);
    request_in(s, be, &ctx, assigned, i.st.persist, stores)
}

/// [`request`] with the sample context built (a TCP stream's, say).
pub fn request_in(
    s: &Stream<'_>,
    be: usize,
    ctx: &SampleCtx<'_>,
    assigned: bool,
    persist: Persist,
    stores: &mut Stores,
) -> Option<usize> {
    let px = &s.rt.proxies[be];
    let rules = &px.rules.stick;
    let mut chosen = None;
    for rule in rules {
        let Some(table) = crate::sample::Host::stick_table(s.rt, rule.act.table) else { continue };
        let act = &rule.act;
        if act.stores() && !act.matches() && stores.iter().any(|(t, _)| Arc::ptr_eq(t, table)) {
            continue;
        }
        if !rule.applies(ctx) {
            continue;
        }
        let Some(smp) = act.expr.eval(ctx) else { continue };
        let Some(key) = crate::sample::conv::stick::sample_key(table, smp) else { continue };
        if act.matches() {
            if let Some(row) = table.lookup(&key) {
                if !assigned && chosen.is_none() {
                    chosen = server_of(px, table, &row, persist);
                }
                table.touch(&key);
            }
        }
        if act.stores() && !stores.iter().any(|(t, _)| Arc::ptr_eq(t, table)) {
            stores.push((table.clone(), key));
        }
    }
    chosen
}

/// The server an entry names (by its key, else by its id), if it may take the request
/// (up, or persistence forced).
fn server_of(px: &ProxyRt, table: &StickTable, row: &crate::stick::data::Row, persist: Persist) -> Option<usize> {
    let servers = &px.be.servers;
    let (layout, now) = (&table.layout, crate::stick::now_ms());
    let by_key = row
        .get(layout, DataType::ServerKey, now)
        .and_then(crate::stick::dict::value)
        .and_then(|k| servers.iter().position(|sv| sv.is_shown() && key_names(sv, table.srvkey, &k)));
    let srv = match by_key {
        Some(srv) => srv,
        None => {
            let id = row.get(layout, DataType::ServerId, now)? as u32 as i32;
            servers.iter().position(|sv| i64::from(sv.stats.sid) == i64::from(id) && sv.is_shown())?
        }
    };
    super::switching::persists(px, &servers[srv], persist).then_some(srv)
}

/// What a table whose `srvkey` is `by` stores as server `sv`'s key: its name, or its
/// address and port as HAProxy writes them (`192.0.2.1:80`, `2001:db8::1:80`).
fn server_key(sv: &ServerRt, by: SrvKey) -> Option<String> {
    match by {
        SrvKey::Name => Some(sv.name.clone()),
        SrvKey::Addr => {
            let a = sv.addr.get();
            (!a.ip().is_unspecified()).then(|| format!("{}:{}", a.ip(), a.port()))
        }
    }
}

/// Whether `key` (a stored `server_key`) names server `sv`, compared without building
/// the server's key.
fn key_names(sv: &ServerRt, by: SrvKey, key: &str) -> bool {
    match by {
        SrvKey::Name => sv.name == key,
        SrvKey::Addr => {
            let a = sv.addr.get();
            key.rsplit_once(':').is_some_and(|(ip, port)| {
                !a.ip().is_unspecified() && port.parse() == Ok(a.port()) && ip.parse::<std::net::IpAddr>() == Ok(a.ip())
            })
        }
    }
}

/// Stores server `srv` of backend `be` in the entries of `stores` (emptied), unless
/// the server is `non-stick`.
pub fn store(s: &Stream<'_>, be: usize, srv: usize, stores: &mut Stores) {
    let Some(sv) = s.rt.proxies[be].be.servers.get(srv) else { return };
    if sv.non_stick {
        stores.clear();
        return;
    }
    let now = crate::stick::now_ms();
    for (table, key) in stores.drain(..) {
        if let Some(row) = table.get_or_create(&key) {
            row.set(&table.layout, DataType::ServerId, u64::from(sv.stats.sid), now);
            if let Some(k) = server_key(sv, table.srvkey) {
                row.set(&table.layout, DataType::ServerKey, crate::stick::dict::intern(&k), now);
            }
            table.touch_local(&key);
        }
    }
}

/// Runs backend `be`'s `stick store-response` rules on the response `ctx` sees (the
/// first rule of each table whose key is found), then stores the stream's server in
/// their entries.
pub fn response(s: &Stream<'_>, be: usize, ctx: &SampleCtx<'_>) {
    let rules = &s.rt.proxies[be].rules.stick_res;
    let Some(srv) = s.srv else { return };
    let mut stores: Stores = Vec::new();
    for rule in rules {
        let Some(table) = crate::sample::Host::stick_table(s.rt, rule.act.table) else { continue };
        if stores.iter().any(|(t, _)| Arc::ptr_eq(t, table)) || !rule.applies(ctx) {
            continue;
        }
        let Some(smp) = rule.act.expr.eval(ctx) else { continue };
        if let Some(key) = crate::sample::conv::stick::sample_key(table, smp) {
            stores.push((table.clone(), key));
        }
    }
    store(s, be, srv, &mut stores);
}
