//! Stick-table updates per second on one core, as `track-sc0 src` plus a rate read
//! make them per request: find or create the key's entry, start tracking it (conn_cur,
//! conn_cnt, http_req_cnt, http_req_rate), read the rate, stop tracking. One hot key
//! (a limited client), then 100 000 keys in a table of 100 000 (many clients), then a
//! flood of new keys into a full table of 10 000 (every update purges one).
//!
//! Run: `cargo bench -p rampart --bench stick` (figures in docs/COMPATIBILITY.md,
//! "Stick tables").

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rampart::stick::{Key, StickTable, Trackers};
use rampart_cfg::model::{DataType, StickKeyType, StickTableDef, StoreSpec};

fn table(size: u64) -> Arc<StickTable> {
    let store = [
        (DataType::ConnCnt, None),
        (DataType::ConnCur, None),
        (DataType::HttpReqCnt, None),
        (DataType::HttpReqRate, Some(Duration::from_secs(10))),
    ];
    let def = StickTableDef {
        key: StickKeyType::Ip,
        size,
        expire: Some(Duration::from_secs(30)),
        nopurge: false,
        store: store.iter().map(|&(data, period)| StoreSpec { data, period, nb: 1 }).collect(),
        peers: None,
        srvkey: Default::default(),
        write_to: None,
        span: Default::default(),
    };
    Arc::new(StickTable::new("t", &def))
}

/// One request's work on the table for `key`.
fn request(t: &Arc<StickTable>, key: &Key, sc: &mut Trackers) -> u64 {
    let row = t.get_or_create(key).expect("room");
    sc.track(0, t, key.clone(), row, true);
    let rate = sc.get(0).and_then(|x| x.get(DataType::HttpReqRate)).unwrap_or(0);
    sc.release();
    rate
}

fn measure(name: &str, keys: &[Key], t: &Arc<StickTable>, budget: Duration) {
    let mut sc = Trackers::default();
    let (mut n, mut sum) = (0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < budget {
        for k in keys {
            sum = sum.wrapping_add(request(t, black_box(k), &mut sc));
        }
        n += keys.len() as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    black_box(sum);
    println!("| {name} | {:.2} M/s | {:.0} ns | {} entries |", n as f64 / secs / 1e6, secs * 1e9 / n as f64, t.used());
}

fn ip(i: u32) -> Key {
    Key::Ip4((0x0a00_0000 + i).to_be_bytes())
}

fn main() {
    let budget = Duration::from_secs(2);
    println!("| case | updates per second | per update | table |\n|---|---|---|---|");
    measure("one key", &[ip(1)], &table(100_000), budget);
    let many: Vec<Key> = (0..100_000).map(ip).collect();
    measure("100 000 keys, size 100k", &many, &table(100_000), budget);
    let flood: Vec<Key> = (0..1_000_000).map(ip).collect();
    measure("new keys into a full table (size 10k)", &flood, &table(10_000), budget);
}
