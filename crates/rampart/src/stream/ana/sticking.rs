//! `stick on|match|store-request` rules of the backend: a key found in the table
//! sends the request to the server stored with it (when that server takes persistent
//! requests: not down, not in maintenance); the keys to store are kept until the
//! server is known, then stored with its id (`server_id`).
//! HAProxy counterpart: `process_sticking_rules()` and `process_store_rules()`
//! (src/stream.c).
//!
//! COMPAT: HAProxy stores the server once the response arrives; rampart once the
//! server connection is established, so a server that never answers is still stored.

use std::sync::Arc;

use rampart_cfg::model::DataType;

use super::switching::Input;
use crate::proxy::ServerRt;
use crate::sample::ctx::Dir;
use crate::server::SrvList;
use crate::stick::{Key, StickTable};
use crate::stream::Stream;

/// The entries to store the stream's server in: one per table at most (the first
/// storing rule of each table wins, as in HAProxy).
pub type Stores = Vec<(Arc<StickTable>, Key)>;

/// Runs backend `be`'s stick rules. Returns the server a matching entry names (only
/// when no server is `assigned` yet); fills `stores` with the keys to store.
pub fn request(s: &Stream<'_>, be: usize, i: Input<'_>, assigned: bool, stores: &mut Stores) -> Option<usize> {
    let rules = &s.rt.proxies[be].rules.stick;
    if rules.is_empty() {
        return None;
    }
    let ctx = s.ctx(Dir::Request, Some((i.req, i.buf)), None, i.sess, i.txn, i.reqres, i.st);
    let servers = &s.rt.proxies[be].be.servers;
    let mut chosen = None;
    for rule in rules {
        let Some(table) = s.rt.proxies[rule.act.table].table.as_ref() else { continue };
        let act = &rule.act;
        if act.stores() && !act.matches() && stores.iter().any(|(t, _)| Arc::ptr_eq(t, table)) {
            continue;
        }
        if !rule.applies(&ctx) {
            continue;
        }
        let Some(smp) = act.expr.eval(&ctx) else { continue };
        let Some(key) = crate::sample::conv::stick::sample_key(table, smp) else { continue };
        if act.matches() {
            if let Some(row) = table.lookup(&key) {
                if !assigned && chosen.is_none() {
                    chosen = server_of(servers, &table.layout, &row);
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

/// The server an entry names, if it takes persistent requests.
fn server_of(
    servers: &SrvList<ServerRt>,
    layout: &crate::stick::data::Layout,
    row: &crate::stick::data::Row,
) -> Option<usize> {
    let id = row.get(layout, DataType::ServerId, crate::stick::now_ms())? as u32 as i32;
    let srv = servers.iter().position(|sv| i64::from(sv.stats.sid) == i64::from(id) && sv.is_shown())?;
    servers[srv].takes_persistent().then_some(srv)
}

/// Stores server `srv` of backend `be` in the entries of `stores` (emptied).
pub fn store(s: &Stream<'_>, be: usize, srv: usize, stores: &mut Stores) {
    let Some(sv) = s.rt.proxies[be].be.servers.get(srv) else { return };
    for (table, key) in stores.drain(..) {
        if let Some(row) = table.get_or_create(&key) {
            row.set(&table.layout, DataType::ServerId, u64::from(sv.stats.sid), crate::stick::now_ms());
            table.touch_local(&key);
        }
    }
}
