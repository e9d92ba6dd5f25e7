//! HAProxy's numbering of proxies (`uuid`, the stats' `iid`) and of the servers of a
//! backend (`puid`, `sid`): an explicit `id`, else the first number nothing else uses
//! from a counter that starts at 1 and moves past each item, numbered or not
//! (`check_config_validity()` with `get_next_id()`; checked against haproxy 2.6's
//! `show stat`).

/// The number of each item, from its explicit `id` (in order).
pub fn haproxy_ids(ids: impl Iterator<Item = Option<u32>> + Clone) -> Vec<u32> {
    let used: std::collections::BTreeSet<u32> = ids.clone().flatten().collect();
    let mut next = 1u32;
    ids.map(|id| {
        let n = id.unwrap_or_else(|| {
            while used.contains(&next) {
                next += 1;
            }
            next
        });
        next += 1;
        n
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::haproxy_ids;

    #[test]
    fn automatic_ids_skip_custom_ones() {
        assert_eq!(haproxy_ids([None, None, None].into_iter()), [1, 2, 3]);
        assert_eq!(haproxy_ids([None, Some(1), None, Some(3), None].into_iter()), [2, 1, 4, 3, 6]);
        // the counter moves on after a custom id too
        assert_eq!(haproxy_ids([Some(10), None].into_iter()), [10, 2]);
        assert_eq!(haproxy_ids([Some(7), None, Some(2), Some(12)].into_iter()), [7, 3, 2, 12]);
        // haproxy 2.6, `show stat` with a stats socket (GLOBAL first), then proxies
        // a (id 3), b, c (id 2), d, e
        assert_eq!(haproxy_ids([None, Some(3), None, Some(2), None, None].into_iter()), [1, 3, 4, 2, 6, 7]);
    }
}
