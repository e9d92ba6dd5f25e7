//! Stick tables and what uses them: `stick-table` lines, `stick on|match|store-request`
//! rules, and the tracking actions (`track-sc0..2`, `sc-inc-gpc0/1`, `sc-set-gpt0`).
//!
//! HAProxy counterparts: `struct stktable` (include/haproxy/stick_table-t.h),
//! `struct sticking_rule` (include/haproxy/proxy-t.h), the track-sc actions of
//! src/stick_table.c.

use std::time::Duration;

use super::source::{Condition, ExprSrc};
use crate::span::Span;

/// The key type of a table (`type ...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StickKeyType {
    /// IPv4 addresses (`ip`).
    Ip,
    Ipv6,
    /// 32-bit unsigned integers (`integer`).
    Integer,
    /// `string [len <n>]`: strings cut to `len` bytes (default 32).
    String(u32),
    /// `binary [len <n>]`: byte strings padded with zeros or cut to `len` (default 32).
    Binary(u32),
}

impl StickKeyType {
    /// The name `show table` prints (HAProxy's `stktable_types[].kw`).
    pub fn name(self) -> &'static str {
        match self {
            StickKeyType::Ip => "ip",
            StickKeyType::Ipv6 => "ipv6",
            StickKeyType::Integer => "integer",
            StickKeyType::String(_) => "string",
            StickKeyType::Binary(_) => "binary",
        }
    }
}

/// The data types a table may store, in HAProxy 2.6's order (`STKTABLE_DT_*`), which is
/// also the order `show table` prints them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DataType {
    ServerId,
    Gpt0,
    Gpc0,
    Gpc0Rate,
    ConnCnt,
    ConnRate,
    ConnCur,
    SessCnt,
    SessRate,
    HttpReqCnt,
    HttpReqRate,
    HttpErrCnt,
    HttpErrRate,
    BytesInCnt,
    BytesInRate,
    BytesOutCnt,
    BytesOutRate,
    Gpc1,
    Gpc1Rate,
    /// The key of the server an entry sticks to (its name or `addr:port`, after the
    /// table's `srvkey`), a string kept in a dictionary shared by the process.
    ServerKey,
    HttpFailCnt,
    HttpFailRate,
    /// `gpt(<nb>)`: an array of tags (overrides `gpt0`).
    Gpt,
    /// `gpc(<nb>)`: an array of counters (overrides `gpc0`, `gpc1`).
    Gpc,
    /// `gpc_rate(<nb>,<period>)`: an array of rates (overrides `gpc0_rate`, `gpc1_rate`).
    GpcRate,
}

impl DataType {
    /// Every supported type, in HAProxy's order.
    pub const ALL: [DataType; 25] = [
        DataType::ServerId,
        DataType::Gpt0,
        DataType::Gpc0,
        DataType::Gpc0Rate,
        DataType::ConnCnt,
        DataType::ConnRate,
        DataType::ConnCur,
        DataType::SessCnt,
        DataType::SessRate,
        DataType::HttpReqCnt,
        DataType::HttpReqRate,
        DataType::HttpErrCnt,
        DataType::HttpErrRate,
        DataType::BytesInCnt,
        DataType::BytesInRate,
        DataType::BytesOutCnt,
        DataType::BytesOutRate,
        DataType::Gpc1,
        DataType::Gpc1Rate,
        DataType::ServerKey,
        DataType::HttpFailCnt,
        DataType::HttpFailRate,
        DataType::Gpt,
        DataType::Gpc,
        DataType::GpcRate,
    ];

    /// The most elements of an array type (HAProxy's `STKTABLE_MAX_DT_ARRAY_SIZE`).
    pub const MAX_ARRAY: u8 = 100;

    /// The configuration spelling (`store http_req_rate(10s)`, `data.http_req_rate`).
    pub fn name(self) -> &'static str {
        use DataType as D;
        match self {
            D::ServerId => "server_id",
            D::Gpt0 => "gpt0",
            D::Gpc0 => "gpc0",
            D::Gpc0Rate => "gpc0_rate",
            D::ConnCnt => "conn_cnt",
            D::ConnRate => "conn_rate",
            D::ConnCur => "conn_cur",
            D::SessCnt => "sess_cnt",
            D::SessRate => "sess_rate",
            D::HttpReqCnt => "http_req_cnt",
            D::HttpReqRate => "http_req_rate",
            D::HttpErrCnt => "http_err_cnt",
            D::HttpErrRate => "http_err_rate",
            D::BytesInCnt => "bytes_in_cnt",
            D::BytesInRate => "bytes_in_rate",
            D::BytesOutCnt => "bytes_out_cnt",
            D::BytesOutRate => "bytes_out_rate",
            D::Gpc1 => "gpc1",
            D::Gpc1Rate => "gpc1_rate",
            D::ServerKey => "server_key",
            D::HttpFailCnt => "http_fail_cnt",
            D::HttpFailRate => "http_fail_rate",
            D::Gpt => "gpt",
            D::Gpc => "gpc",
            D::GpcRate => "gpc_rate",
        }
    }

    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// A frequency counter over a period given in parentheses (`..._rate(<period>)`).
    pub fn is_rate(self) -> bool {
        self.name().ends_with("_rate")
    }

    /// An array whose element count comes first in parentheses (`gpc(<nb>)`).
    pub fn is_array(self) -> bool {
        matches!(self, DataType::Gpt | DataType::Gpc | DataType::GpcRate)
    }

    /// The rate that counts the increments of general purpose counter `self` (`gpc0`,
    /// `gpc1`, `gpc`).
    pub fn gpc_rate(self) -> Option<DataType> {
        use DataType as D;
        Some(match self {
            D::Gpc0 => D::Gpc0Rate,
            D::Gpc1 => D::Gpc1Rate,
            D::Gpc => D::GpcRate,
            _ => return None,
        })
    }

    /// The element of an array type that stands for the legacy type `self` when the
    /// table stores the array instead (`gpc1` reads `gpc` element 1), as HAProxy's
    /// fetches and actions fall back.
    pub fn array_fallback(self) -> Option<(DataType, usize)> {
        use DataType as D;
        Some(match self {
            D::Gpt0 => (D::Gpt, 0),
            D::Gpc0 => (D::Gpc, 0),
            D::Gpc1 => (D::Gpc, 1),
            D::Gpc0Rate => (D::GpcRate, 0),
            D::Gpc1Rate => (D::GpcRate, 1),
            _ => return None,
        })
    }
}

/// One `store` item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreSpec {
    pub data: DataType,
    /// The period of a rate (`http_req_rate(10s)`); `None` for the other types.
    pub period: Option<Duration>,
    /// The element count of an array type (1..=100); 1 for the other types.
    pub nb: u8,
}

/// `stick-table type <type> size <n> [expire <t>] [nopurge] [store <data>,...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StickTableDef {
    pub key: StickKeyType,
    /// The most entries the table holds.
    pub size: u64,
    /// How long an entry lives after its last use; `None`: until purged for room.
    pub expire: Option<Duration>,
    /// When full, refuse new entries rather than purge the least recently used.
    pub nopurge: bool,
    /// What each entry stores, in HAProxy's data type order, each once.
    pub store: Vec<StoreSpec>,
    /// `peers <section>`: the `peers` section the table is replicated through.
    pub peers: Option<String>,
    /// `srvkey name|addr`: what `server_key` holds (the server's name by default).
    pub srvkey: SrvKey,
    /// `write-to <table>` (HAProxy 2.9+): what peers teach this table is also written
    /// to that table (its `server_id`, `server_key`, `gpt0` and `gpt` only).
    pub write_to: Option<String>,
    pub span: Span,
}

/// What a table's `server_key` names a server by (`srvkey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SrvKey {
    /// The server's name (the default).
    #[default]
    Name,
    /// The server's address and port (`addr:port`), so that servers of other
    /// backends or other nodes at the same address match.
    Addr,
}

impl StickTableDef {
    /// The period of the stored rate `d`, or `None` when the table does not store it.
    pub fn stores(&self, d: DataType) -> Option<&StoreSpec> {
        self.store.iter().find(|s| s.data == d)
    }
}

/// Which kind of `stick` rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StickKind {
    /// `stick on`: match on the request, store once the server is known.
    On,
    /// `stick match`: only look the key up.
    Match,
    /// `stick store-request`: only store the key with the server.
    StoreRequest,
    /// `stick store-response`: store a key taken from the response with the server
    /// that gave it.
    StoreResponse,
}

/// `stick on|match|store-request <pattern> [table <t>] [if|unless <cond>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StickRule {
    pub kind: StickKind,
    pub expr: ExprSrc,
    /// `table <name>`; `None`: the proxy's own table.
    pub table: Option<String>,
    pub cond: Option<Condition>,
    pub span: Span,
}

/// `track-sc<n> <key> [table <t>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackSc {
    /// The counter slot, 0..=2.
    pub slot: u8,
    pub key: ExprSrc,
    /// `table <name>`; `None`: the table of the proxy holding the rule.
    pub table: Option<String>,
}

/// `sc-inc-gpc0(<n>)`, `sc-inc-gpc1(<n>)`, `sc-set-gpt0(<n>) <int|expr>` (the slot
/// defaults to 0), and the array forms `sc-inc-gpc(<idx>,<n>)`,
/// `sc-set-gpt(<idx>,<n>) <int|expr>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScAction {
    IncGpc0(u8),
    IncGpc1(u8),
    SetGpt0(u8, GptValue),
    /// `sc-inc-gpc(<idx>,<n>)`: element `idx` of `gpc` and `gpc_rate`.
    IncGpc {
        idx: u32,
        slot: u8,
    },
    /// `sc-set-gpt(<idx>,<n>)`: element `idx` of `gpt`.
    SetGpt {
        idx: u32,
        slot: u8,
        value: GptValue,
    },
}

/// The value `sc-set-gpt0` stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GptValue {
    Int(i64),
    Expr(ExprSrc),
}

impl ScAction {
    pub fn name(&self) -> &'static str {
        match self {
            ScAction::IncGpc0(_) => "sc-inc-gpc0",
            ScAction::IncGpc1(_) => "sc-inc-gpc1",
            ScAction::SetGpt0(..) => "sc-set-gpt0",
            ScAction::IncGpc { .. } => "sc-inc-gpc",
            ScAction::SetGpt { .. } => "sc-set-gpt",
        }
    }

    /// The value a `sc-set-gpt*` action stores.
    pub fn gpt_value(&self) -> Option<&GptValue> {
        match self {
            ScAction::SetGpt0(_, v) | ScAction::SetGpt { value: v, .. } => Some(v),
            _ => None,
        }
    }
}
