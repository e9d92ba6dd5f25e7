//! The version rampart reports and the feature set it has, used by `-v`, `-vv`,
//! `.if version_atleast()/feature()` and `-cc`.

/// The HAProxy release whose behaviour rampart follows. `version_atleast()` and
/// `version_before()` compare against it, since configurations use them to gate
/// HAProxy features.
pub const HAPROXY_COMPAT_VERSION: &str = "2.6.12";

/// rampart's own version.
pub const RAMPART_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Features rampart has, in HAProxy's `Feature list` vocabulary (shown as `+NAME`).
/// `OPENSSL` stands for TLS (rampart's is rustls): HAProxy's reg-tests and
/// configurations gate TLS on `feature(OPENSSL)`, while `ssllib_name_startswith(OpenSSL)`
/// stays false (see `cond`).
pub const FEATURES: &[&str] =
    &["ACCEPT4", "EPOLL", "GETADDRINFO", "LINUX_SPLICE", "LUA", "OPENSSL", "POLL", "PRCTL", "RT", "THREAD", "ZLIB"];

/// HAProxy features rampart does not have yet (shown as `-NAME` by `-vv`).
pub const MISSING_FEATURES: &[&str] = &[
    "51DEGREES",
    "DEVICEATLAS",
    "OT",
    "PCRE",
    "PCRE2",
    "PCRE2_JIT",
    "PROMEX",
    "QUIC",
    "SLZ",
    "SYSTEMD",
    "TFO",
    "TPROXY",
    "WURFL",
];
