//! The servers' state file, version 1: what `show servers state` prints and
//! `server-state-file` / `load-server-state-from-file` read back at startup. Pure: text
//! in, fields out, with HAProxy's checks and messages; the daemon matches the lines to
//! its servers and applies them (`build::server_state`). Fuzzed (`fuzz_targets/
//! server_state_file.rs`): the file may come from another program, and rampart's own
//! reload handover carries the same lines over a socket.
//! HAProxy counterpart: src/server_state.c (`srv_state_get_version()`,
//! `srv_state_parse_line()`, the checks of `srv_state_srv_update()`).

/// The only version HAProxy 2.6 writes and reads.
pub const VERSION: u32 = 1;
/// Fields of a version 1 line: 20, and up to 5 optional ones.
const MIN_FIELDS: usize = 20;
const MAX_FIELDS: usize = 25;
/// HAProxy reads lines with `fgets()` into a buffer of this size: a longer line is cut,
/// and its pieces make the file corrupted.
const LINE_MAX: usize = 2000;
/// `SRV_UWGHT_MAX`.
const WEIGHT_MAX: i64 = 256;
/// `HCHK_STATUS_SIZE`.
const CHECK_STATUS_COUNT: i64 = 21;
/// `CHK_ST_INPROGRESS | CONFIGURED | ENABLED | PAUSED | AGENT`.
const CHECK_STATE_MASK: i64 = 0x1f;
/// `SRV_ADMF_IMAINT | IDRAIN | RMAINT | HMAINT`: recomputed at startup, not read.
const ADMIN_DERIVED: i64 = 0x02 | 0x10 | 0x20 | 0x40;
/// `SRV_ADMF_HMAINT`: the FQDN was set on the runtime API.
pub const ADMIN_FQDN_FROM_CLI: u32 = 0x40;

/// Why a file is not read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// The first line is not a supported version number alone.
    Version,
    /// Line `n` (1-based, the version line being line 0 as HAProxy counts) has too few or
    /// too many fields, or is cut.
    Corrupted(usize),
}

/// One server's line, its fields as written (`params` in HAProxy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub fields: Vec<String>,
}

impl Line {
    pub fn be_id(&self) -> &str {
        &self.fields[0]
    }
    pub fn be_name(&self) -> &str {
        &self.fields[1]
    }
    pub fn srv_id(&self) -> &str {
        &self.fields[2]
    }
    pub fn srv_name(&self) -> &str {
        &self.fields[3]
    }
    /// `bk_f_forced_id` (HAProxy reads it with `atoi()`).
    pub fn backend_id_forced(&self) -> bool {
        atoi(&self.fields[15]) & 1 != 0
    }
    fn field(&self, i: usize) -> Option<&str> {
        self.fields.get(i).map(String::as_str)
    }
}

/// Reads a state file: its lines (comments and blank lines left out), or why the whole
/// file is unusable.
pub fn parse(text: &str) -> Result<Vec<Line>, FileError> {
    let (first, rest) = match text.split_once('\n') {
        Some(split) => split,
        None => return Err(FileError::Version),
    };
    match strtol(first) {
        Some((v, end)) if end == first.len() && v == i64::from(VERSION) => {}
        _ => return Err(FileError::Version),
    }
    let mut lines = Vec::new();
    let mut n = 0;
    let mut rest = rest;
    while !rest.is_empty() {
        n += 1;
        let (line, next, whole) = match rest.split_once('\n') {
            Some((l, r)) => (l, r, true),
            None => (rest, "", false),
        };
        rest = next;
        if line.len() + 1 >= LINE_MAX {
            return Err(FileError::Corrupted(n));
        }
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if !whole {
            return Err(FileError::Corrupted(n));
        }
        let fields: Vec<String> =
            trimmed.split([' ', '\t']).filter(|f| !f.is_empty()).take(MAX_FIELDS).map(str::to_owned).collect();
        if fields.len() < MIN_FIELDS {
            return Err(FileError::Corrupted(n));
        }
        lines.push(Line { fields });
    }
    Ok(lines)
}

/// The fields of a line as checked values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// `-`: none.
    pub addr: Option<String>,
    /// HAProxy's `enum srv_state`: 0 stopped, 1 starting, 2 running, 3 stopping.
    pub op_state: u8,
    /// `SRV_ADMF_*` flags, the derived ones cleared (FMAINT 0x1, CMAINT 0x4, FDRAIN 0x8).
    pub admin: u32,
    /// The FQDN had been set on the runtime API (`SRV_ADMF_HMAINT`).
    pub fqdn_from_cli: bool,
    pub uweight: u32,
    pub iweight: u32,
    pub since_change: i64,
    pub check_status: u32,
    pub check_result: u32,
    pub check_health: i64,
    pub check_state: u32,
    pub agent_state: u32,
    pub fqdn: Option<String>,
    pub port: Option<u16>,
    pub srvrecord: Option<String>,
    pub check_port: Option<u16>,
    pub check_addr: Option<String>,
    pub agent_addr: Option<String>,
    pub agent_port: Option<u16>,
}

/// Checks a line as HAProxy does before applying anything; `Err` holds its message
/// (`, invalid srv_op_state value 'x', ...`), and nothing is applied then.
pub fn check(line: &Line) -> Result<State, String> {
    let mut msg = String::new();
    let mut num = |i: usize, name: &str, ok: &dyn Fn(i64) -> bool| -> i64 {
        let raw = line.field(i + 4).unwrap_or("");
        match strtol(raw) {
            Some((v, _)) if ok(v) => v,
            _ => {
                msg.push_str(&format!(", invalid {name} value '{raw}'"));
                0
            }
        }
    };
    let op_state = num(1, "srv_op_state", &|v| (0..=3).contains(&v));
    let admin_raw = num(2, "srv_admin_state", &|v| [0, 1, 4, 5, 12, 8].contains(&(v & !ADMIN_DERIVED)));
    let uweight = num(3, "srv_uweight", &|v| (0..=WEIGHT_MAX).contains(&v));
    let iweight = num(4, "srv_iweight", &|v| (0..=WEIGHT_MAX).contains(&v));
    let since_change = num(5, "srv_last_time_change", &|_| true);
    let check_status = num(6, "srv_check_status", &|v| v < CHECK_STATUS_COUNT);
    let check_result = num(7, "srv_check_result", &|v| (0..=4).contains(&v));
    let check_health = num(8, "srv_check_health", &|_| true);
    let check_state = num(9, "srv_check_state", &|v| v & !CHECK_STATE_MASK == 0);
    let agent_state = num(10, "srv_agent_state", &|v| v & !CHECK_STATE_MASK == 0);
    num(11, "bk_f_forced_id", &|v| v == 0 || v == 1);
    num(12, "srv_f_forced_id", &|v| v == 0 || v == 1);
    let fqdn = match line.field(17) {
        Some(f) if f.starts_with('-') => None,
        Some(f)
            if f.len() > 255
                || !f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_') =>
        {
            msg.push_str(&format!(", invalid srv_fqdn value '{f}'"));
            None
        }
        f => f.map(str::to_owned),
    };
    let port = match line.field(18) {
        Some(p) => match u16::try_from(strl2uic(p)) {
            Ok(v) => Some(v),
            Err(_) => {
                msg.push_str(&format!(", invalid srv_port value '{p}'"));
                None
            }
        },
        None => None,
    };
    if !msg.is_empty() {
        return Err(msg);
    }
    let dash = |i: usize| line.field(i).filter(|f| *f != "-").map(str::to_owned);
    let port_at = |i: usize| line.field(i).filter(|f| *f != "0").and_then(|f| u16::try_from(strl2uic(f)).ok());
    Ok(State {
        addr: dash(4),
        op_state: op_state as u8,
        admin: (admin_raw & !ADMIN_DERIVED) as u32,
        fqdn_from_cli: admin_raw as u32 & ADMIN_FQDN_FROM_CLI != 0,
        uweight: uweight as u32,
        iweight: iweight as u32,
        since_change,
        check_status: check_status as u32,
        check_result: check_result as u32,
        check_health,
        check_state: check_state as u32,
        agent_state: agent_state as u32,
        fqdn,
        port,
        srvrecord: line.field(19).filter(|f| f.starts_with('_')).map(str::to_owned),
        check_port: port_at(21),
        check_addr: dash(22),
        agent_addr: dash(23),
        agent_port: port_at(24),
    })
}

/// C's `strtol(s, &end, 10)`: the value and where it stopped; `None` when no digit was
/// read or the value does not fit.
fn strtol(s: &str) -> Option<(i64, usize)> {
    let b = s.as_bytes();
    let mut i = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: i64 = 0;
    while let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
        v = v.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
        i += 1;
    }
    if i == start {
        return None;
    }
    Some((if neg { -v } else { v }, i))
}

/// C's `atoi()`: 0 when nothing parses.
fn atoi(s: &str) -> i64 {
    strtol(s).map_or(0, |(v, _)| v)
}

/// HAProxy's `strl2uic()`: the leading digits, wrapping as an unsigned int.
fn strl2uic(s: &str) -> u64 {
    let mut v: u32 = 0;
    for d in s.bytes().take_while(u8::is_ascii_digit) {
        v = v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
    }
    u64::from(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "3 be 1 s1 10.0.0.1 2 0 1 1 12 15 3 4 6 0 0 0 web.local 8080 - 0 0 - - 0";

    #[test]
    fn reads_haproxy_output() {
        let text = format!("1\n# be_id be_name ...\n{LINE}\n\n   # comment\n");
        let lines = parse(&text).unwrap();
        assert_eq!(lines.len(), 1);
        let l = &lines[0];
        assert_eq!((l.be_id(), l.be_name(), l.srv_id(), l.srv_name()), ("3", "be", "1", "s1"));
        let st = check(l).unwrap();
        assert_eq!(st.addr.as_deref(), Some("10.0.0.1"));
        assert_eq!((st.op_state, st.admin, st.uweight, st.iweight, st.since_change), (2, 0, 1, 1, 12));
        assert_eq!((st.fqdn.as_deref(), st.port, st.srvrecord), (Some("web.local"), Some(8080), None));
        assert_eq!((st.check_port, st.check_addr, st.agent_port), (None, None, None));
    }

    #[test]
    fn whole_file_refusals() {
        assert_eq!(parse(""), Err(FileError::Version));
        assert_eq!(parse("2\n"), Err(FileError::Version));
        assert_eq!(parse("1 \n"), Err(FileError::Version));
        assert_eq!(parse("1\n"), Ok(Vec::new()));
        assert_eq!(parse("1\na b c\n"), Err(FileError::Corrupted(1)));
        // the last line must end with a newline
        assert_eq!(parse(&format!("1\n{LINE}")), Err(FileError::Corrupted(1)));
        assert_eq!(parse(&format!("1\n{}\n", "x ".repeat(1100))), Err(FileError::Corrupted(1)));
    }

    #[test]
    fn field_checks_as_haproxy_words_them() {
        let bad = LINE.replace(" 2 0 1 1 12", " 7 16 300 1 x");
        let err = check(&parse(&format!("1\n{bad}\n")).unwrap()[0]).unwrap_err();
        assert_eq!(
            err,
            ", invalid srv_op_state value '7', invalid srv_uweight value '300', invalid srv_last_time_change value 'x'"
        );
        // derived admin flags are dropped; HMAINT says the FQDN came from the CLI
        let l = LINE.replace(" 2 0 1 1 12", " 2 67 1 1 12");
        let st = check(&parse(&format!("1\n{l}\n")).unwrap()[0]).unwrap();
        assert_eq!((st.admin, st.fqdn_from_cli), (1, true));
        assert_eq!(strtol(" -12x"), Some((-12, 4)));
        assert_eq!(strl2uic("70000"), 70000);
    }
}
