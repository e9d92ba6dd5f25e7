//! Agent checks (`agent-check`): every `agent-inter`, connect to the agent, send
//! `agent-send`, read one line and apply its words: a weight (`75%`), a health state
//! (`up`, `down`, `stopped`, `fail`, with a description after `#`), an administrative
//! state (`ready`, `drain`, `maint`). The agent's failures to answer never mark the
//! server down; only its `down`/`stopped`/`fail` do.
//! HAProxy counterpart: `tcpcheck_agent_expect_reply()` (src/tcpcheck.c),
//! `server_parse_weight_change_request()` (src/server.c).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::status::CheckStatus;
use super::status::Outcome;

/// The agent settings of one server.
#[derive(Debug)]
pub struct AgentRt {
    pub addr: SocketAddr,
    pub inter: Duration,
    pub send: Option<Vec<u8>>,
    /// `option log-health-checks` of the backend.
    pub log_health_checks: bool,
    /// `agent-addr` as configured, for `show servers state`.
    pub conf_addr: Option<std::net::IpAddr>,
}

/// An administrative state an agent asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admin {
    Ready,
    Drain,
    Maint,
}

/// What one agent line says (the last word of each kind wins).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentReply {
    /// `up` (true) or `down`/`stopped`/`fail` (false), with the word.
    pub health: Option<(bool, String)>,
    pub admin: Option<Admin>,
    /// `<N>%` of the configured weight.
    pub weight_pct: Option<u32>,
    /// `maxconn:<n>`: the server's new `maxconn`.
    pub maxconn: Option<u32>,
    /// The first word not understood.
    pub error: Option<String>,
    /// The text after `#`.
    pub desc: String,
}

/// Parses the first line of `buf`; `None` when no line end came yet.
pub fn parse_reply(buf: &[u8]) -> Option<AgentReply> {
    let end = buf.iter().position(|&b| b == b'\n' || b == b'\r')?;
    let line = String::from_utf8_lossy(&buf[..end]);
    let mut r = AgentReply::default();
    let mut rest = line.as_ref();
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            break;
        }
        if let Some(desc) = rest.strip_prefix('#') {
            r.desc = desc.trim_start_matches([' ', '\t']).to_owned();
            break;
        }
        let len = rest.find([' ', '\t', ',']).unwrap_or(rest.len());
        let (word, tail) = rest.split_at(len);
        rest = tail;
        let lower = word.to_ascii_lowercase();
        match lower.as_str() {
            "up" => r.health = Some((true, word.to_owned())),
            "down" | "stopped" | "fail" => r.health = Some((false, word.to_owned())),
            "ready" => r.admin = Some(Admin::Ready),
            "drain" => r.admin = Some(Admin::Drain),
            "maint" => r.admin = Some(Admin::Maint),
            _ if word.starts_with(|c: char| c.is_ascii_digit()) && word.contains('%') => {
                let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
                r.weight_pct = digits.parse().ok();
            }
            _ if lower.starts_with("maxconn:") => r.maxconn = lower["maxconn:".len()..].parse().ok(),
            _ => {
                r.error.get_or_insert_with(|| word.to_owned());
            }
        }
    }
    Some(r)
}

impl AgentReply {
    /// The check result the reply amounts to: `None` when it announces no health
    /// state (no change to the server's health).
    pub fn outcome(&self) -> Option<Outcome> {
        let (up, word) = self.health.as_ref()?;
        let status = if *up { CheckStatus::L7Ok } else { CheckStatus::L7Sts };
        let mut msg = self.desc.as_str();
        if msg.is_empty() || *up {
            if let Some(e) = &self.error {
                msg = e;
            }
        }
        let desc = if msg.is_empty() { format!("via agent : {word}") } else { format!("via agent : {word} ({msg})") };
        Some(Outcome::new(status, desc))
    }

    /// The effective weight a `<N>%` asks for, from the configured weight (at most 256).
    pub fn weight(&self, configured: u32) -> Option<u32> {
        self.weight_pct.map(|p| (u64::from(p) * u64::from(configured) / 100).min(256) as u32)
    }
}

/// Result of one agent exchange: a connection-level failure, or a reply line.
pub enum AgentResult {
    Failed(Outcome),
    Reply(AgentReply),
    /// The agent closed without a complete line: ignored, as HAProxy does.
    Incomplete,
}

/// Connects to the agent, sends `agent-send`, reads one line, within `limit`. The
/// connection comes back with the result so that the caller closes it once the reply
/// is applied, as HAProxy does (an agent that sees the close sees the new state).
pub async fn probe(
    agent: &AgentRt,
    connect: Duration,
    limit: Duration,
    bufsize: usize,
) -> (AgentResult, Option<TcpStream>) {
    let start = Instant::now();
    let mut stream = match tokio::time::timeout(connect.min(limit), super::conn::connect(agent.addr, None)).await {
        Err(_) => return (AgentResult::Failed(Outcome::new(CheckStatus::L4Tout, "")), None),
        Ok(Err(e)) => return (AgentResult::Failed(Outcome::new(CheckStatus::L4Con, super::conn::strerror(&e))), None),
        Ok(Ok(s)) => s,
    };
    let exchange = async {
        let stream = &mut stream;
        if let Some(data) = &agent.send {
            if let Err(e) = stream.write_all(data).await {
                return AgentResult::Failed(Outcome::new(CheckStatus::SockErr, super::conn::strerror(&e)));
            }
        }
        let mut buf = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            if let Some(r) = parse_reply(&buf) {
                return AgentResult::Reply(r);
            }
            if buf.len() >= bufsize {
                return AgentResult::Incomplete;
            }
            match stream.read(&mut chunk).await {
                Ok(0) => return AgentResult::Incomplete,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(_) if !buf.is_empty() => return AgentResult::Incomplete,
                Err(e) => return AgentResult::Failed(Outcome::new(CheckStatus::SockErr, super::conn::strerror(&e))),
            }
        }
    };
    let result = match tokio::time::timeout_at(start + limit, exchange).await {
        Ok(r) => r,
        Err(_) => AgentResult::Failed(Outcome::new(CheckStatus::L7Tout, "")),
    };
    (result, Some(stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_in_any_order_the_last_of_a_kind_wins() {
        let r = parse_reply(b"75%, drain up 50%\tmaxconn:30 # all good\r\nignored").unwrap();
        assert_eq!(r.health, Some((true, "up".into())));
        assert_eq!(r.admin, Some(Admin::Drain));
        assert_eq!(r.weight_pct, Some(50));
        assert_eq!(r.maxconn, Some(30));
        assert_eq!(r.desc, "all good");
        assert_eq!(r.weight(10), Some(5));
        assert_eq!(parse_reply(b"200%\n").unwrap().weight(200), Some(256));
        assert_eq!(parse_reply(b"up"), None, "no line end yet");
    }

    #[test]
    fn outcomes_as_haproxy_words_them() {
        let o = |s: &[u8]| parse_reply(s).unwrap().outcome();
        assert_eq!(o(b"down # disk full\n"), Some(Outcome::new(CheckStatus::L7Sts, "via agent : down (disk full)")));
        assert_eq!(o(b"STOPPED\n"), Some(Outcome::new(CheckStatus::L7Sts, "via agent : STOPPED")));
        assert_eq!(o(b"up bogus # fine\n"), Some(Outcome::new(CheckStatus::L7Ok, "via agent : up (bogus)")));
        assert_eq!(o(b"fail what\n"), Some(Outcome::new(CheckStatus::L7Sts, "via agent : fail (what)")));
        assert_eq!(o(b"50% ready\n"), None);
        let r = parse_reply(b"hello 10%\n").unwrap();
        assert_eq!((r.error.as_deref(), r.weight_pct), (Some("hello"), Some(10)));
    }
}
