//! Prefix (`-m beg`) and suffix (`-m end`) patterns in a path-compressed trie stored
//! in flat arrays: a lookup walks the sample once, comparing each byte at most once,
//! whatever the number of patterns; children are found by binary search on their
//! first byte. Suffixes are prefixes of the reversed strings.
//!
//! HAProxy counterpart: `pat_idx_tree_pfx()` / `pat_match_beg()` (an ebtree with
//! longest-prefix lookup) and `pat_match_end()` (a list) in src/pattern.c. Which
//! pattern a map returns follows HAProxy: the longest prefix for a case-sensitive
//! `beg` (its tree), the first in file order for `beg -i` and for `end` (its lists).

use super::NONE;

/// Which of several matching patterns a lookup returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Longest,
    First,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    /// The edge label leading to this node, in `labels`.
    label: (u32, u32),
    /// This node's children, in `kid_bytes` / `kid_ids`, sorted by first byte.
    kids: (u32, u32),
    /// The first pattern ending exactly here, or [`NONE`].
    term: u32,
}

#[derive(Debug)]
pub struct Trie {
    icase: bool,
    rev: bool,
    pick: Pick,
    nodes: Vec<Node>,
    labels: Vec<u8>,
    kid_bytes: Vec<u8>,
    kid_ids: Vec<u32>,
}

impl Trie {
    /// Builds the trie of `keys` (pattern bytes and number). `rev`: match suffixes.
    pub fn build(keys: &[(&[u8], u32)], icase: bool, rev: bool, pick: Pick) -> Trie {
        let mut sorted: Vec<(Vec<u8>, u32)> = keys
            .iter()
            .map(|&(k, idx)| {
                let mut k = if icase { k.to_ascii_lowercase() } else { k.to_vec() };
                if rev {
                    k.reverse();
                }
                (k, idx)
            })
            .collect();
        sorted.sort();
        // Equal keys: keep the first pattern.
        sorted.dedup_by(|b, a| a.0 == b.0);
        let mut t = Trie {
            icase,
            rev,
            pick,
            nodes: vec![Node { label: (0, 0), kids: (0, 0), term: NONE }],
            labels: Vec::new(),
            kid_bytes: Vec::new(),
            kid_ids: Vec::new(),
        };
        // Work items: a node and the sorted keys below it, which share `depth` bytes.
        let mut work = vec![(0usize, 0usize, sorted.len(), 0usize)];
        while let Some((node, mut lo, hi, depth)) = work.pop() {
            if lo < hi && sorted[lo].0.len() == depth {
                t.nodes[node].term = sorted[lo].1;
                lo += 1;
            }
            let first_kid = t.kid_ids.len() as u32;
            let mut i = lo;
            while i < hi {
                let b = sorted[i].0[depth];
                let j = i + sorted[i..hi].partition_point(|(k, _)| k[depth] == b);
                let (a, z) = (&sorted[i].0, &sorted[j - 1].0);
                let common = a[depth..].iter().zip(&z[depth..]).take_while(|(x, y)| x == y).count();
                let start = t.labels.len() as u32;
                t.labels.extend_from_slice(&a[depth..depth + common]);
                let id = t.nodes.len();
                t.nodes.push(Node { label: (start, common as u32), kids: (0, 0), term: NONE });
                t.kid_bytes.push(b);
                t.kid_ids.push(id as u32);
                work.push((id, i, j, depth + common));
                i = j;
            }
            t.nodes[node].kids = (first_kid, t.kid_ids.len() as u32 - first_kid);
        }
        t
    }

    /// The pattern matching `s` (see [`Pick`]), or with `any`, the first one met.
    pub fn find(&self, s: &[u8], any: bool) -> Option<u32> {
        let n = s.len();
        let at = |i: usize| {
            let c = if self.rev { s[n - 1 - i] } else { s[i] };
            if self.icase {
                c.to_ascii_lowercase()
            } else {
                c
            }
        };
        let mut best = NONE;
        let mut node = &self.nodes[0];
        let mut pos = 0usize;
        loop {
            if node.term != NONE {
                if any {
                    return Some(node.term);
                }
                best = match self.pick {
                    Pick::Longest => node.term,
                    Pick::First => best.min(node.term),
                };
            }
            if pos == n {
                break;
            }
            let (k0, kn) = (node.kids.0 as usize, node.kids.1 as usize);
            let bytes = &self.kid_bytes[k0..k0 + kn];
            let Ok(k) = bytes.binary_search(&at(pos)) else { break };
            let child = &self.nodes[self.kid_ids[k0 + k] as usize];
            let (l0, ln) = (child.label.0 as usize, child.label.1 as usize);
            if n - pos < ln || (0..ln).any(|i| self.labels[l0 + i] != at(pos + i)) {
                break;
            }
            pos += ln;
            node = child;
        }
        (best != NONE).then_some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trie(keys: &[&str], icase: bool, rev: bool, pick: Pick) -> Trie {
        let k: Vec<(&[u8], u32)> = keys.iter().enumerate().map(|(i, k)| (k.as_bytes(), i as u32)).collect();
        Trie::build(&k, icase, rev, pick)
    }

    #[test]
    fn longest_prefix() {
        let t = trie(&["/api", "/api/v1", "/", "/static", "/api/v1/users"], false, false, Pick::Longest);
        assert_eq!(t.find(b"/api/v1/users/42", false), Some(4));
        assert_eq!(t.find(b"/api/v1/x", false), Some(1));
        assert_eq!(t.find(b"/api/v2", false), Some(0));
        assert_eq!(t.find(b"/apx", false), Some(2));
        assert_eq!(t.find(b"/API", false), Some(2));
        assert_eq!(t.find(b"x", false), None);
        assert_eq!(t.find(b"", false), None);
        assert!(t.find(b"/api/v1/users/42", true).is_some());
    }

    #[test]
    fn first_prefix_in_order_and_case() {
        let t = trie(&["/api/v1", "/api", "/API/V1/USERS"], true, false, Pick::First);
        assert_eq!(t.find(b"/Api/V1/users", false), Some(0));
        assert_eq!(t.find(b"/api/v", false), Some(1));
        assert_eq!(t.find(b"/ap", false), None);
    }

    #[test]
    fn suffixes() {
        let t = trie(&[".jpg", ".png", "g", ".tar.gz"], false, true, Pick::First);
        assert_eq!(t.find(b"/img/a.jpg", false), Some(0));
        assert_eq!(t.find(b"/a.png", false), Some(1));
        assert_eq!(t.find(b"/a.svg", false), Some(2));
        assert_eq!(t.find(b"x.tar.gz", false), Some(3));
        assert_eq!(t.find(b"x.tar.bz", false), None);
        assert_eq!(t.find(b"/a.JPG", false), None);
        let t = trie(&[".JPG"], true, true, Pick::First);
        assert_eq!(t.find(b"/a.jpg", false), Some(0));
    }

    #[test]
    fn empty_and_duplicate_keys() {
        let t = trie(&["ab", "", "ab"], false, false, Pick::First);
        assert_eq!(t.find(b"abc", false), Some(0));
        assert_eq!(t.find(b"x", false), Some(1));
        let none = trie(&[], false, false, Pick::First);
        assert_eq!(none.find(b"abc", false), None);
    }

    #[test]
    fn many_prefixes() {
        let keys: Vec<String> = (0..10_000).map(|i| format!("/p{i}/")).collect();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let t = trie(&refs, false, false, Pick::Longest);
        assert_eq!(t.find(b"/p9999/x", false), Some(9999));
        assert_eq!(t.find(b"/p10000/x", false), None);
        assert_eq!(t.find(b"/p1/", false), Some(1));
    }
}
