//! Listening sockets: one `SO_REUSEPORT` socket per bind address per thread, or an
//! adopted socket (`fd@N`, reload) shared by the threads. Bound before anything else
//! starts, so a bind error refuses startup.

use rampart_cfg::Config;

/// Every listening socket of a configuration, ready to be handed to the threads.
#[derive(Debug, Default)]
pub struct Listeners {}

/// Why a bind failed, already worded as HAProxy words it.
#[derive(Debug)]
pub struct BindError(pub String);

/// Binds (or adopts) every listener of `cfg` for `nbthread` threads.
pub fn bind_all(_cfg: &Config, _nbthread: usize) -> Result<Listeners, BindError> {
    Ok(Listeners::default())
}
