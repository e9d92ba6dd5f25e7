//! How the process sits on the machine: `cpu-map` (which CPUs each thread may run on),
//! `set-dumpable` and `strict-limits`, how a soft stop ends connections
//! (`close-spread-time`). HAProxy counterparts: `struct cpu_map`
//! (include/haproxy/cpuset-t.h), `GTUNE_SET_DUMPABLE` and `GTUNE_STRICT_LIMITS`
//! (include/haproxy/global-t.h).

/// CPU numbers a set may hold: 0 to 1023 (Linux's `CPU_SETSIZE`, HAProxy's
/// `ha_cpuset_size()`).
pub const MAX_CPUS: usize = 1024;

/// Process and thread numbers of `cpu-map`: 1 to 64 (HAProxy's `LONGBITS`).
pub const MAX_CPU_MAP_IDS: usize = 64;

const WORDS: usize = MAX_CPUS / 64;

/// A set of CPU numbers below [`MAX_CPUS`].
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuSet {
    bits: [u64; WORDS],
}

impl CpuSet {
    /// Adds `cpu`; numbers from [`MAX_CPUS`] on are ignored (the parser refuses them).
    pub fn insert(&mut self, cpu: usize) {
        if cpu < MAX_CPUS {
            self.bits[cpu / 64] |= 1 << (cpu % 64);
        }
    }

    pub fn remove(&mut self, cpu: usize) {
        if cpu < MAX_CPUS {
            self.bits[cpu / 64] &= !(1 << (cpu % 64));
        }
    }

    pub fn contains(&self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// The lowest CPU of the set.
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// The CPUs of both sets.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        let mut out = *self;
        out.bits.iter_mut().zip(other.bits).for_each(|(a, b)| *a &= b);
        out
    }

    /// The CPUs, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..MAX_CPUS).filter(|&cpu| self.contains(cpu))
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut set = CpuSet::default();
        iter.into_iter().for_each(|cpu| set.insert(cpu));
        set
    }
}

/// Lists the set as the kernel does in `/proc/<pid>/status` (`0-3,8`).
impl std::fmt::Display for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        let mut cpus = self.iter().peekable();
        while let Some(low) = cpus.next() {
            let mut high = low;
            while cpus.peek() == Some(&(high + 1)) {
                high += 1;
                cpus.next();
            }
            let sep = if first { "" } else { "," };
            first = false;
            if high == low {
                write!(f, "{sep}{low}")?;
            } else {
                write!(f, "{sep}{low}-{high}")?;
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CpuSet({self})")
    }
}

/// What the `cpu-map` lines decided, later lines replacing earlier ones where they
/// overlap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuMap {
    /// The map of the whole process (`cpu-map 1 <cpus>`, no thread set).
    pub process: Option<CpuSet>,
    /// The map of each thread, by thread number - 1 (`cpu-map 1/<threads> <cpus>`);
    /// always [`MAX_CPU_MAP_IDS`] long.
    pub threads: Vec<Option<CpuSet>>,
}

impl Default for CpuMap {
    fn default() -> Self {
        CpuMap { process: None, threads: vec![None; MAX_CPU_MAP_IDS] }
    }
}

impl CpuMap {
    pub fn is_empty(&self) -> bool {
        self.process.is_none() && self.threads.iter().all(Option::is_none)
    }

    /// The CPUs thread `index` (0 for thread 1) is bound to, if any: its own map within
    /// the process map; the process map alone when it has none or when the two do not
    /// meet (a thread starts with the process's binding, as in HAProxy where "no
    /// specific binding will be set for the thread" then).
    pub fn for_thread(&self, index: usize) -> Option<CpuSet> {
        let own = self.threads.get(index).copied().flatten();
        match (own, self.process) {
            (Some(t), Some(p)) => Some(Some(t.intersection(&p)).filter(|s| !s.is_empty()).unwrap_or(p)),
            (own, process) => own.or(process),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(cpus: &[usize]) -> CpuSet {
        cpus.iter().copied().collect()
    }

    #[test]
    fn cpu_sets_list_like_the_kernel() {
        assert_eq!(set(&[0, 1, 2, 3, 8, 10, 11, 1023]).to_string(), "0-3,8,10-11,1023");
        assert_eq!(set(&[]).to_string(), "");
        let s = set(&[5, 7, 64, 2000]);
        assert_eq!((s.len(), s.first(), s.contains(64), s.contains(2000)), (3, Some(5), true, false));
        assert_eq!(s.intersection(&set(&[7, 64, 65])), set(&[7, 64]));
    }

    #[test]
    fn a_thread_map_is_narrowed_by_the_process_map() {
        let mut m = CpuMap::default();
        assert!(m.is_empty() && m.for_thread(0).is_none());
        m.threads[1] = Some(set(&[1, 2]));
        assert_eq!((m.for_thread(0), m.for_thread(1)), (None, Some(set(&[1, 2]))));
        m.process = Some(set(&[2, 3]));
        assert_eq!((m.for_thread(0), m.for_thread(1)), (Some(set(&[2, 3])), Some(set(&[2]))));
        // disjoint: the thread keeps the process's binding
        m.threads[1] = Some(set(&[0]));
        assert_eq!(m.for_thread(1), Some(set(&[2, 3])));
    }
}

/// `close-spread-time`: how a soft stop ends the keep-alive client connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CloseSpread {
    /// Not set (or 0): idle connections close at once, the next response of a busy one
    /// announces the close.
    #[default]
    AtOnce,
    /// Those closes are spread over this window, which starts with the soft stop.
    Window(std::time::Duration),
    /// `infinite`: no connection is closed for the stop; idle ones close at their
    /// timeout, busy ones keep alive.
    Never,
}
