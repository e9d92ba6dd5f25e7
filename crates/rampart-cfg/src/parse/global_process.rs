//! Global keywords about the process on the machine: `cpu-map`, `set-dumpable`,
//! `strict-limits`. HAProxy counterparts: `cfg_parse_global()` (src/cfgparse-global.c),
//! `parse_process_number()` and `parse_cpu_set()` (src/cfgparse.c).

use crate::model::{CpuSet, MAX_CPUS, MAX_CPU_MAP_IDS};
use crate::span::Span;

use super::global::too_many;
use super::{arg, Modifier, Parser};

/// `set-dumpable` / `strict-limits`, and their `no` forms.
pub(super) fn parse_process_flag(p: &mut Parser, words: &[String], kwm: Modifier, span: &Span) {
    if too_many(p, words, 0, span) {
        return;
    }
    let on = kwm != Modifier::No;
    if words[0] == "set-dumpable" {
        p.global.set_dumpable = on;
    } else {
        p.global.strict_limits = on;
    }
}

/// `cpu-map [auto:]<process-set>[/<thread-set>] <cpu-set>...`
///
/// Without a thread set the line maps the whole process; with one, each thread of the
/// set (threads past `nbthread` are ignored when the process starts). `auto:` hands the
/// CPUs out one by one, lowest first, to the threads of the set in order. As in HAProxy
/// 2.6, the process set is checked but its value does not matter (nbproc is gone).
///
/// COMPAT: HAProxy 2.6 takes a thread set of exactly thread 1 (`cpu-map 1/1 0`) as a map
/// of the whole process, so that `cpu-map 1/1 0` plus `cpu-map 1/2 1` leaves both threads
/// on CPU 0 in master-worker mode; rampart binds thread 1 only, as the documentation of
/// the keyword says ("1" alone designates all threads).
pub(super) fn parse_cpu_map(p: &mut Parser, words: &[String], span: &Span) {
    let (first, cpus_first) = (arg(words, 1), arg(words, 2));
    if first.is_empty() || cpus_first.is_empty() {
        let msg = format!(
            "cpu-map expects a process number  ('all', 'odd', 'even', a number from 1 to {MAX_CPU_MAP_IDS} or a \
             range),  followed by a list of CPU ranges with numbers from 0 to {}.",
            MAX_CPU_MAP_IDS - 1
        );
        return p.alert(span, msg);
    }
    let (procs, threads) = match first.split_once('/') {
        Some((procs, threads)) => (procs, Some(threads)),
        None => (first, None),
    };
    let parsed = parse_ids(procs, true).and_then(|(procs, auto)| {
        let threads = match threads {
            Some(text) => parse_ids(text, false)?.0,
            None => 0,
        };
        let cpus = parse_cpu_list(&words[2..])?;
        Ok((procs, threads, auto, cpus))
    });
    let (procs, threads, auto, cpus) = match parsed {
        Ok(v) => v,
        Err(msg) => return p.alert(span, format!("cpu-map : {msg}")),
    };
    let n = cpus.len();
    if auto && procs.count_ones() as usize != n && threads.count_ones() as usize != n {
        let msg = "cpu-map : PROC/THREAD range and CPU sets must have the same size to be automatically bound";
        return p.alert(span, msg);
    }
    let map = &mut p.global.cpu_map;
    if threads == 0 {
        map.process = Some(if auto { cpus.first().into_iter().collect() } else { cpus });
        return;
    }
    let mut left = cpus;
    for (t, slot) in map.threads.iter_mut().enumerate() {
        if threads & (1 << t) == 0 {
            continue;
        }
        *slot = if auto {
            // past the last CPU a thread is left unbound, as HAProxy does
            left.first().map(|cpu| {
                left.remove(cpu);
                [cpu].into_iter().collect()
            })
        } else {
            Some(cpus)
        };
    }
}

/// A process or thread set: `all`, `odd`, `even`, `<n>`, `<n>-<m>` or `<n>-` (to 64),
/// as a mask (bit 0: number 1), and whether it had the `auto:` prefix (only looked for
/// when `auto_allowed`).
fn parse_ids(text: &str, auto_allowed: bool) -> Result<(u64, bool), String> {
    let (text, auto) = match text.strip_prefix("auto:") {
        Some(rest) if auto_allowed => (rest, true),
        _ => (text, false),
    };
    let odd = u64::MAX / 3;
    let mask = match text {
        "all" => u64::MAX,
        "odd" => odd,
        "even" => odd << 1,
        _ => {
            let dash = text.find('-');
            let stray = text.char_indices().any(|(i, c)| !c.is_ascii_digit() && Some(i) != dash);
            if stray {
                return Err(format!("'{text}' is not a valid number/range."));
            }
            let max = MAX_CPU_MAP_IDS as u32;
            let low = leading_uint(text);
            let high = match dash {
                Some(i) if text.len() == i + 1 => max,
                Some(i) => leading_uint(&text[i + 1..]),
                None => low,
            };
            let (low, high) = (low.min(high), low.max(high));
            if low < 1 || high > max {
                return Err(format!("'{text}' is not a valid number/range. It supports numbers from 1 to {max}."));
            }
            (low..=high).fold(0u64, |m, n| m | 1 << (n - 1))
        }
    };
    Ok((mask, auto))
}

/// The CPU sets after the process/thread set: each word a CPU number or a range (`<n>-<m>`,
/// `<n>-` up to the last CPU). As HAProxy, only the first character must be a digit and
/// each number is read up to its first non-digit; an empty word ends the list.
fn parse_cpu_list(words: &[String]) -> Result<CpuSet, String> {
    let mut cpus = CpuSet::default();
    for word in words.iter().take_while(|w| !w.is_empty()) {
        if !word.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!("'{word}' is not a CPU range."));
        }
        let low = leading_uint(word) as usize;
        let high = match word.split_once('-') {
            Some((_, "")) => MAX_CPUS - 1,
            Some((_, rest)) => leading_uint(rest) as usize,
            None => low,
        };
        let (low, high) = (low.min(high), low.max(high));
        if high >= MAX_CPUS {
            return Err(format!("supports CPU numbers from 0 to {}.", MAX_CPUS - 1));
        }
        (low..=high).for_each(|cpu| cpus.insert(cpu));
    }
    Ok(cpus)
}

/// The unsigned number the leading digits of `text` spell, 0 if none, wrapping like C's
/// unsigned arithmetic (HAProxy's `str2uic()`).
fn leading_uint(text: &str) -> u32 {
    text.bytes().take_while(u8::is_ascii_digit).fold(0u32, |n, d| n.wrapping_mul(10).wrapping_add(u32::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use crate::model::CpuSet;
    use crate::parse::tests::{alerts, parse_ok};

    fn cpus(list: &[usize]) -> Option<CpuSet> {
        Some(list.iter().copied().collect())
    }

    fn threads(text: &str) -> Vec<Option<CpuSet>> {
        let cfg = parse_ok(&format!("global\n{text}"));
        cfg.global.cpu_map.threads[..4].to_vec()
    }

    #[test]
    fn thread_sets_and_the_whole_process() {
        assert_eq!(threads(" cpu-map 1/1 1\n"), [cpus(&[1]), None, None, None]);
        assert_eq!(threads(" cpu-map 1/all 0-1\n"), [cpus(&[0, 1]), cpus(&[0, 1]), cpus(&[0, 1]), cpus(&[0, 1])]);
        assert_eq!(threads(" cpu-map 1/odd 3\n"), [cpus(&[3]), None, cpus(&[3]), None]);
        assert_eq!(threads(" cpu-map all/even 2 4-5\n"), [None, cpus(&[2, 4, 5]), None, cpus(&[2, 4, 5])]);
        assert_eq!(threads(" cpu-map 1/3-2 0\n"), [None, cpus(&[0]), cpus(&[0]), None]);
        assert_eq!(threads(" cpu-map 1/1 0\n cpu-map 1/1-2 1\n"), [cpus(&[1]), cpus(&[1]), None, None]);
        // the process number is not looked at (HAProxy 2.6 ignores it too)
        assert_eq!(threads(" cpu-map 2/2 1\n"), [None, cpus(&[1]), None, None]);
        let cfg = parse_ok("global\n cpu-map 1 0-1\n");
        assert_eq!((cfg.global.cpu_map.process, cfg.global.cpu_map.threads[0]), (cpus(&[0, 1]), None));
        let cfg = parse_ok("global\n cpu-map all 3-\n");
        assert_eq!(cfg.global.cpu_map.process.unwrap().len(), 1021);
        let cfg = parse_ok("global\n nbthread 2\n");
        assert!(cfg.global.cpu_map.is_empty());
    }

    #[test]
    fn auto_hands_out_one_cpu_per_thread() {
        assert_eq!(threads(" cpu-map auto:1/1-4 0-3\n"), [cpus(&[0]), cpus(&[1]), cpus(&[2]), cpus(&[3])]);
        assert_eq!(threads(" cpu-map auto:1/1-4 3 2 1 0\n"), [cpus(&[0]), cpus(&[1]), cpus(&[2]), cpus(&[3])]);
        assert_eq!(threads(" cpu-map auto:1/even 32-63\n"), [None, cpus(&[32]), None, cpus(&[33])]);
        // the process set has the CPUs' size: accepted, and threads past the CPUs stay unbound
        assert_eq!(threads(" cpu-map 1/2 5\n cpu-map auto:1/1-2 4\n"), [cpus(&[4]), None, None, None]);
        let cfg = parse_ok("global\n cpu-map auto:1-2 2-3\n");
        assert_eq!(cfg.global.cpu_map.process, cpus(&[2]));
    }

    #[test]
    fn cpu_numbers_are_read_like_haproxy() {
        // a comma is not a separator here: the number ends at it
        assert_eq!(threads(" cpu-map 1/1 0,1\n"), [cpus(&[0]), None, None, None]);
        assert_eq!(threads(" cpu-map 1/1 2-0\n"), [cpus(&[0, 1, 2]), None, None, None]);
        assert_eq!(threads(" cpu-map 1/1 1023\n"), [cpus(&[1023]), None, None, None]);
    }

    #[test]
    fn errors_are_worded_as_haproxy() {
        let usage = "cpu-map expects a process number  ('all', 'odd', 'even', a number from 1 to 64 or a range),  \
                     followed by a list of CPU ranges with numbers from 0 to 63.";
        assert_eq!(alerts("global\n cpu-map\n"), [usage]);
        assert_eq!(alerts("global\n cpu-map 1/1\n"), [usage]);
        assert_eq!(alerts("global\n cpu-map x 0\n"), ["cpu-map : 'x' is not a valid number/range."]);
        assert_eq!(alerts("global\n cpu-map 1/a-1 0\n"), ["cpu-map : 'a-1' is not a valid number/range."]);
        assert_eq!(alerts("global\n cpu-map 1/auto:1 0\n"), ["cpu-map : 'auto:1' is not a valid number/range."]);
        assert_eq!(
            alerts("global\n cpu-map 1/0 0\n"),
            ["cpu-map : '0' is not a valid number/range. It supports numbers from 1 to 64."]
        );
        assert_eq!(
            alerts("global\n cpu-map 65 0\n"),
            ["cpu-map : '65' is not a valid number/range. It supports numbers from 1 to 64."]
        );
        assert_eq!(alerts("global\n cpu-map 1/1 abc\n"), ["cpu-map : 'abc' is not a CPU range."]);
        assert_eq!(alerts("global\n cpu-map 1/1 5000\n"), ["cpu-map : supports CPU numbers from 0 to 1023."]);
        let auto = "cpu-map : PROC/THREAD range and CPU sets must have the same size to be automatically bound";
        assert_eq!(alerts("global\n cpu-map auto:1/1-4 0-1\n"), [auto]);
        assert_eq!(alerts("global\n cpu-map auto:1/all 0-1\n"), [auto]);
        assert_eq!(alerts("global\n cpu-map auto:all 0\n"), [auto]);
    }

    #[test]
    fn dumpable_and_strict_limits_are_flags() {
        let cfg = parse_ok("global\n set-dumpable\n strict-limits\n");
        assert!(cfg.global.set_dumpable && cfg.global.strict_limits);
        let cfg = parse_ok("global\n set-dumpable\n no set-dumpable\n strict-limits\n no strict-limits\n");
        assert!(!cfg.global.set_dumpable && !cfg.global.strict_limits);
        assert_eq!(alerts("global\n set-dumpable 1\n"), ["'set-dumpable' cannot handle unexpected argument '1'."]);
        assert_eq!(alerts("global\n strict-limits on\n"), ["'strict-limits' cannot handle unexpected argument 'on'."]);
    }
}
