//! What a master knows about itself and its workers, and how it hands that to the
//! program it re-executes on a reload (environment variables, as HAProxy's
//! `HAPROXY_PROCESSES` in src/mworker.c). Pure: no system call, unit-tested.

use std::fmt::Write as _;

/// The environment variable carrying [`State`] to the re-executed master.
pub const STATE_ENV: &str = "RAMPART_MWORKER_STATE";
/// The sockets the master holds (`<fd>=<key>;...`), for its workers and its re-exec.
pub const FDS_ENV: &str = "RAMPART_MWORKER_FDS";
/// In a worker: the descriptor of its channel to the master.
pub const IPC_ENV: &str = "RAMPART_MWORKER_IPC";
/// The program the master runs for its workers and re-executes on a reload.
pub const EXE_ENV: &str = "RAMPART_MWORKER_EXE";
/// Prefix of the keys of master CLI sockets in [`FDS_ENV`].
pub const MCLI_KEY: &str = "mcli:";

/// Where a worker is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Spawned, not ready yet: the workers before it keep serving.
    Starting,
    /// Serving (the newest ready worker; older ones may still be current until it is).
    Current,
    /// Told to stop (a newer worker is ready): finishing its connections.
    Leaving,
}

/// One worker process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worker {
    pub pid: i32,
    /// The master's end of its channel.
    pub ipc: i32,
    /// Reloads of the master since it started.
    pub reloads: u32,
    /// Start time, seconds since the epoch.
    pub started: u64,
    pub phase: Phase,
}

/// One process of a `program` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prog {
    pub pid: i32,
    /// The section's name.
    pub name: String,
    /// Reloads of the master since it started.
    pub reloads: u32,
    /// Start time, seconds since the epoch.
    pub started: u64,
    /// A reload started a new one (or dropped the section): this one is stopped once
    /// the new worker serves, as the old workers.
    pub leaving: bool,
}

/// The master's records, kept across its re-executions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct State {
    /// When the first master started, seconds since the epoch.
    pub started: u64,
    pub reloads: u32,
    /// Reloads that failed since the last one that worked.
    pub failed_reloads: u32,
    pub workers: Vec<Worker>,
    /// The processes of `program` sections.
    pub programs: Vec<Prog>,
}

impl State {
    /// `m;<started>;<reloads>;<failed>|w;<pid>;<ipc>;<reloads>;<started>;<phase>|...`
    pub fn encode(&self) -> String {
        let mut out = format!("m;{};{};{}", self.started, self.reloads, self.failed_reloads);
        for w in &self.workers {
            let phase = match w.phase {
                Phase::Starting => 's',
                Phase::Current => 'c',
                Phase::Leaving => 'l',
            };
            let _ = write!(out, "|w;{};{};{};{};{phase}", w.pid, w.ipc, w.reloads, w.started);
        }
        for p in &self.programs {
            let phase = if p.leaving { 'l' } else { 'c' };
            let _ = write!(out, "|p;{};{};{};{phase};{}", p.pid, p.reloads, p.started, escape(&p.name));
        }
        out
    }

    /// Reads [`State::encode`]'s text; `None` if it is not that.
    pub fn decode(text: &str) -> Option<State> {
        let mut parts = text.split('|');
        let m: Vec<&str> = parts.next()?.split(';').collect();
        let ["m", started, reloads, failed] = m.as_slice() else { return None };
        let mut state = State {
            started: started.parse().ok()?,
            reloads: reloads.parse().ok()?,
            failed_reloads: failed.parse().ok()?,
            workers: Vec::new(),
            programs: Vec::new(),
        };
        for part in parts {
            if let Some(rest) = part.strip_prefix("p;") {
                let [pid, reloads, started, phase, name] = rest.splitn(5, ';').collect::<Vec<_>>()[..] else {
                    return None;
                };
                state.programs.push(Prog {
                    pid: pid.parse().ok()?,
                    name: unescape(name)?,
                    reloads: reloads.parse().ok()?,
                    started: started.parse().ok()?,
                    leaving: phase == "l",
                });
                continue;
            }
            let w: Vec<&str> = part.split(';').collect();
            let ["w", pid, ipc, reloads, started, phase] = w.as_slice() else { return None };
            let phase = match *phase {
                "s" => Phase::Starting,
                "c" => Phase::Current,
                "l" => Phase::Leaving,
                _ => return None,
            };
            state.workers.push(Worker {
                pid: pid.parse().ok()?,
                ipc: ipc.parse().ok()?,
                reloads: reloads.parse().ok()?,
                started: started.parse().ok()?,
                phase,
            });
        }
        Some(state)
    }
}

/// `<fd>=<key>;...`, with `%`, `;` and `=` in keys (unix paths) escaped as `%XX`.
pub fn encode_fds(fds: &[(i32, String)]) -> String {
    let mut out = String::new();
    for (i, (fd, key)) in fds.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        let _ = write!(out, "{fd}=");
        out.push_str(&escape(key));
    }
    out
}

/// `%`, `;`, `=` and `|` as `%XX`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' | ';' | '=' | '|' => {
                let _ = write!(out, "%{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// Reads [`encode_fds`]'s text; entries that do not parse are skipped.
pub fn decode_fds(text: &str) -> Vec<(i32, String)> {
    text.split(';')
        .filter_map(|entry| {
            let (fd, key) = entry.split_once('=')?;
            Some((fd.parse().ok()?, unescape(key)?))
        })
        .collect()
}

fn unescape(text: &str) -> Option<String> {
    let mut out = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// HAProxy's uptime format in `show proc`: `0d00h00m05s`.
pub fn uptime(secs: u64) -> String {
    format!("{}d{:02}h{:02}m{:02}s", secs / 86400, (secs % 86400) / 3600, (secs % 3600) / 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips() {
        let state = State {
            started: 1_700_000_000,
            reloads: 3,
            failed_reloads: 1,
            workers: vec![
                Worker { pid: 10, ipc: 7, reloads: 2, started: 1_700_000_001, phase: Phase::Leaving },
                Worker { pid: 11, ipc: 8, reloads: 0, started: 1_700_000_009, phase: Phase::Current },
                Worker { pid: 12, ipc: 9, reloads: 0, started: 1_700_000_010, phase: Phase::Starting },
            ],
            programs: vec![
                Prog { pid: 20, name: "odd;name|x".into(), reloads: 1, started: 1_700_000_002, leaving: true },
                Prog { pid: 21, name: "p".into(), reloads: 0, started: 1_700_000_011, leaving: false },
            ],
        };
        assert_eq!(State::decode(&state.encode()), Some(state.clone()));
        let empty = State { workers: Vec::new(), ..state };
        assert_eq!(State::decode(&empty.encode()), Some(empty));
        assert_eq!(State::decode("garbage"), None);
        assert_eq!(State::decode("m;1;2;3|w;1;2;3;4;x"), None);
    }

    #[test]
    fn fds_round_trip_with_odd_paths() {
        let fds = vec![(5, "ipv4@127.0.0.1:80".to_owned()), (6, "unix@/run/a;b=c%d.sock".to_owned())];
        let text = encode_fds(&fds);
        assert_eq!(text, "5=ipv4@127.0.0.1:80;6=unix@/run/a%3Bb%3Dc%25d.sock");
        assert_eq!(decode_fds(&text), fds);
        assert_eq!(decode_fds(""), []);
        assert_eq!(decode_fds("x=1;7=ok"), [(7, "ok".to_owned())]);
    }

    #[test]
    fn uptime_as_haproxy_prints_it() {
        assert_eq!(uptime(5), "0d00h00m05s");
        assert_eq!(uptime(86400 + 3600 * 2 + 60 * 3 + 4), "1d02h03m04s");
    }
}
