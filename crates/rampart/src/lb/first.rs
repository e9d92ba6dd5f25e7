//! `balance first`: the first server (by id) with room takes the stream, so the
//! others can be shut down while idle.
//! HAProxy counterpart: src/lb_fas.c (`fas_get_next_server`).

/// The first server of `order` (server indices by ascending id) that has a positive
/// weight and is usable (below its `maxconn`).
pub fn pick(order: &[u32], weight: impl Fn(usize) -> u32, usable: impl Fn(usize) -> bool) -> Option<usize> {
    order.iter().map(|&i| i as usize).find(|&i| weight(i) > 0 && usable(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_with_room_by_id() {
        let order = [2, 0, 1];
        assert_eq!(pick(&order, |_| 1, |_| true), Some(2));
        assert_eq!(pick(&order, |_| 1, |i| i != 2), Some(0));
        assert_eq!(pick(&order, |i| u32::from(i != 2), |_| true), Some(0));
        assert_eq!(pick(&order, |_| 1, |_| false), None);
    }
}
