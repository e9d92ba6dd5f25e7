//! `show peers [<section>]`: each section, then each of its nodes with its connection
//! state, counters and per-table cursors, shaped as HAProxy 2.6 prints them
//! (`peers_dump_head()`, `peers_dump_peer()` in src/peers.c). Sections and nodes are
//! listed last declared first, as HAProxy's lists hold them. With `dict`, each shared
//! table shows the node's `server_key` caches (what we sent in each slot, what the node
//! sent in each of its 128), empty when no session runs (HAProxy flushes them then).
//! COMPAT: the addresses (`0x...`) identify objects but are not HAProxy's; `st0`
//! follows HAProxy's session states for an established or connecting session only.

use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;

use super::types::{DictCache, Lock, PeerRt, PeersRt};
use crate::stick::now_ms;

/// The whole answer; `None` when `target` names no section. `dict`: `show peers dict`.
pub fn show(sections: &[std::sync::Arc<PeersRt>], target: Option<&str>, dict: bool) -> Option<String> {
    let mut out = String::new();
    let mut first = true;
    let list: Vec<_> = sections.iter().rev().filter(|s| target.is_none_or(|t| t == s.name)).collect();
    if target.is_some() && list.is_empty() {
        return None;
    }
    for s in list {
        if !first {
            out.push('\n');
        }
        first = false;
        head(s, &mut out);
        for p in s.peers.iter().rev() {
            peer(s, p, dict, &mut out);
        }
    }
    Some(out)
}

fn addr_of<T>(x: &T) -> usize {
    x as *const T as usize
}

/// HAProxy's `human_time()`: two units at most, `0s` for zero.
fn human(ms: u32) -> String {
    let t = ms / 1000;
    let (day, hour, min) = (86_400, 3_600, 60);
    let mut out = String::new();
    let mut cnt = 2;
    if t >= day {
        let _ = write!(out, "{}d", t / day);
        cnt -= 1;
    }
    if cnt > 0 && t % day / hour != 0 {
        let _ = write!(out, "{}h", t % day / hour);
        cnt -= 1;
    }
    if cnt > 0 && t % hour / min != 0 {
        let _ = write!(out, "{}m", t % hour / min);
        cnt -= 1;
    }
    if (cnt > 0 && !t.is_multiple_of(min)) || t == 0 {
        let _ = write!(out, "{}s", t % min);
    }
    out
}

/// A deadline as `show peers` prints it.
fn until(tick: u32, now: u32) -> String {
    match tick {
        0 => "<NEVER>".into(),
        t if (t.wrapping_sub(now) as i32) <= 0 => "<PAST>".into(),
        t => human(t.wrapping_sub(now)),
    }
}

fn head(s: &PeersRt, out: &mut String) {
    let mut d = Vec::new();
    crate::log::date::clf(&mut d, crate::log::date::split(s.last_change).0, true, None, false);
    let date = String::from_utf8_lossy(&d);
    let now = now_ms();
    let resync = until(s.resync_timeout.load(Relaxed), now);
    let _ = writeln!(
        out,
        "{:#x}: [{date}] id={} disabled={} flags={:#x} resync_timeout={resync} task_calls={}",
        addr_of(s),
        s.name,
        u8::from(s.disabled),
        s.flags.load(Relaxed),
        s.task_calls.load(Relaxed),
    );
}

fn status_str(code: u32) -> &'static str {
    match code {
        100 => "CONN",
        110 => "HSHK",
        200 => "ESTA",
        300 => "RETR",
        501 => "PROT",
        502 => "VERS",
        503 => "NAME",
        504 => "UNKN",
        _ => "NONE",
    }
}

fn peer(s: &PeersRt, p: &PeerRt, dict: bool, out: &mut String) {
    let now = now_ms();
    let active = p.active();
    let bound = if p.local { *s.bound.lock().unwrap_or_else(std::sync::PoisonError::into_inner) } else { None };
    let addr = bound.or(p.addr).map_or_else(|| "0.0.0.0:0".to_owned(), |a| format!("{}:{}", a.ip(), a.port()));
    let hdshk = match p.last_hdshk.load(Relaxed) {
        0 => "<NEVER>".to_owned(),
        t => human(now.wrapping_sub(t)),
    };
    let c = &p.counters;
    let _ = write!(
        out,
        "  {:#x}: id={}({},{}) addr={addr} last_status={} last_hdshk={hdshk}\n        reconnect={} heartbeat={} \
         confirm={} tx_hbt={} rx_hbt={} no_hbt={} new_conn={} proto_err={} coll={}\n        flags=0x0",
        addr_of(p),
        p.name,
        if p.local { "local" } else { "remote" },
        if active.is_some() { "active" } else { "inactive" },
        status_str(p.status.load(Relaxed)),
        until(if active.is_some() { p.reconnect.load(Relaxed) } else { 0 }, now),
        until(if active.as_ref().is_some_and(|a| a.established) { p.heartbeat.load(Relaxed) } else { 0 }, now),
        c.confirm.load(Relaxed),
        c.tx_hbt.load(Relaxed),
        c.rx_hbt.load(Relaxed),
        c.no_hbt.load(Relaxed),
        c.new_conn.load(Relaxed),
        c.proto_err.load(Relaxed),
        c.coll.load(Relaxed),
    );
    if let Some(a) = &active {
        let (st0, state) = if a.established { (7, "EST") } else { (6, "TAR") };
        let _ =
            write!(out, " appctx:{:#x} st0={st0} st1=0 task_calls={} state={state}", a.id, s.task_calls.load(Relaxed));
        if let (true, Some(src), Some(dst)) = (a.src.is_some() && a.established && !is_outgoing(p, a), a.src, a.dst) {
            let _ = write!(out, "\n        xprt=RAW src={}:{} addr={}:{}", src.ip(), src.port(), dst.ip(), dst.port());
        }
        for (what, t) in [("remote_table", a.remote_table), ("last_local_table", a.last_local_table)] {
            let Some(i) = t else { continue };
            let (st, pt) = (&s.tables[i], &p.tables[i]);
            let _ = write!(
                out,
                "\n        {what}:{:#x} id={} local_id={} remote_id={}",
                addr_of(pt),
                st.table.name,
                i + 1,
                pt.remote_id.load(Relaxed)
            );
        }
    }
    if !s.tables.is_empty() {
        out.push_str("\n        shared tables:");
    }
    for (i, (st, pt)) in s.tables.iter().zip(&p.tables).enumerate() {
        let localupdate = st.table.sync.as_ref().map_or(0, |y| y.localupdate()) as u32;
        let _ = write!(
            out,
            "\n          {:#x} local_id={} remote_id={} flags=0x0 remote_data={:#x}\n              last_acked={} \
             last_pushed={} last_get={} teaching_origin={} update={}\n              table:{:#x} id={} update={localupdate} \
             localupdate={localupdate} commitupdate={localupdate} refcnt=1",
            addr_of(pt),
            i + 1,
            pt.remote_id.load(Relaxed),
            pt.remote_data.load(Relaxed),
            pt.last_acked.load(Relaxed),
            pt.last_pushed.load(Relaxed) as u32,
            pt.last_get.load(Relaxed),
            pt.teaching_origin.load(Relaxed) as u32,
            pt.update.load(Relaxed) as u32,
            addr_of(&*st.table),
            st.table.name,
        );
        match dict {
            true => dict_caches(active.as_ref().and_then(|a| a.dict.as_deref()), out),
            false => out.push_str("\n        Dictionary cache not dumped (use \"show peers dict\")"),
        }
    }
    out.push('\n');
}

/// A node's `server_key` caches as `show peers dict` lists them, four slots a line: the
/// slots we filled (up to the first empty one), then every slot of the node's, `-` when
/// empty. `None`: no session, the caches are empty.
fn dict_caches(dict: Option<&Lock<DictCache>>, out: &mut String) {
    let empty = DictCache::default();
    let guard = dict.map(|d| d.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    let d = guard.as_deref().unwrap_or(&empty);
    let name = |id: u64| crate::stick::dict::value(id).map_or_else(|| "-".to_owned(), |v| v.to_string());
    out.push_str("\n        TX dictionary cache:");
    for (i, id) in d.sent_slots().enumerate() {
        slot(out, i, &name(id));
    }
    out.push_str("\n        RX dictionary cache:");
    for (i, &id) in d.received_slots().iter().enumerate() {
        slot(out, i, &name(id));
    }
}

/// One slot of a dictionary cache: `  <slot> -> <string>`, a new line every four.
fn slot(out: &mut String, i: usize, value: &str) {
    if i.is_multiple_of(4) {
        out.push_str("\n        ");
    }
    let _ = write!(out, "  {i:3} -> {value}");
}

/// Whether session `a` was opened by us (its destination is the node's address).
fn is_outgoing(p: &PeerRt, a: &super::types::ActiveSession) -> bool {
    a.dst.is_some() && a.dst == p.addr
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_time_as_haproxy() {
        assert_eq!(super::human(0), "0s");
        assert_eq!(super::human(3_400), "3s");
        assert_eq!(super::human(61_000), "1m1s");
        assert_eq!(super::human(3_600_000 + 120_000 + 5_000), "1h2m");
        assert_eq!(super::human(90_000_000), "1d1h");
    }
}
