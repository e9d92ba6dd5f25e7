//! The cache's store filter: collects the body of a response `cache-store` accepted,
//! and stores the object once the body ended cleanly and within `max-object-size`.
//! HAProxy counterpart: `cache_store_http_payload()` and `cache_store_http_end()`
//! (src/cache.c).

use std::sync::Arc;

use crate::cache::{Cache, Pending};

/// Collects a response body for the cache.
pub struct StoreTap {
    cache: Arc<Cache>,
    pending: Option<Box<Pending>>,
    body: Vec<u8>,
    /// The most the body may take (`max-object-size` less the head).
    room: usize,
}

impl StoreTap {
    pub fn new(cache: Arc<Cache>, pending: Box<Pending>) -> StoreTap {
        let room = (cache.conf.object_limit() as usize).saturating_sub(pending.head.len());
        StoreTap { cache, pending: Some(pending), body: Vec::new(), room }
    }
}

impl super::Tap for StoreTap {
    fn data(&mut self, data: &[u8]) {
        if self.pending.is_none() {
            return;
        }
        if self.body.len() + data.len() > self.room {
            // too big: nothing is stored
            self.pending = None;
            self.body = Vec::new();
            return;
        }
        self.body.extend_from_slice(data);
    }

    fn end(&mut self) {
        if let Some(p) = self.pending.take() {
            let key = p.key;
            self.cache.insert(key, p.into_entry(&self.body));
        }
    }
}
