//! Health-check settings of a proxy: `option httpchk` and its `http-check` rules (the
//! server side, `check`, `inter`, `rise`..., is [`super::CheckOptions`]).
//! HAProxy counterpart: `struct tcpcheck_rules` / `struct tcpcheck_rule`
//! (include/haproxy/tcpcheck-t.h) as built for HTTP checks.

/// The checks a backend runs on its servers with `check`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthCheck {
    /// `option httpchk` is in effect (else a TCP connect check, or `proto`).
    pub httpchk: bool,
    /// The HTTP request and expect rules (`option httpchk` arguments, `http-check
    /// send|expect`), `None` when neither was written.
    pub http: Option<HttpCheck>,
    /// The line of the section that wrote `http` (a proxy that writes its own rules
    /// starts over instead of adding to those of its `defaults`).
    pub http_owner: Option<(std::sync::Arc<str>, u32)>,
    /// `http-check disable-on-404`: a 404 reply puts an UP server in NOLB (stopping).
    pub disable_on_404: bool,
    /// `http-check send-state`: add `X-Haproxy-Server-State` to the check request.
    pub send_state: bool,
    /// `option tcp-check`, `option redis-check`, `option smtpchk` (exclusive with
    /// `httpchk`: the last option wins).
    pub proto: Option<ProtoCheck>,
    /// `tcp-check` rules, run with `option tcp-check`.
    pub tcp_rules: Vec<TcpCheckRule>,
}

/// A check built on the tcp-check rule engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtoCheck {
    /// `option tcp-check`: the `tcp-check` rules.
    TcpCheck,
    /// `option redis-check`: PING, expect `+PONG`.
    Redis,
    /// `option smtpchk [EHLO|HELO <domain>]`: banner, the greeting, QUIT.
    Smtp { hello: String },
    /// `option mysql-check [user <name> [post-41|pre-41]]`: the server greeting, and
    /// with a user an authentication packet answered by an OK packet.
    Mysql { user: Option<MysqlUser> },
    /// `option pgsql-check user <name>`: a startup message, expect an authentication
    /// request.
    Pgsql { user: String },
    /// `option ldap-check`: an anonymous bind, expect a successful bind response.
    Ldap,
    /// `option spop-check`: an SPOP HAPROXY-HELLO frame, expect an AGENT-HELLO.
    Spop,
}

/// The user of `option mysql-check user <name> [post-41|pre-41]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlUser {
    pub name: String,
    /// `post-41` (the default) rather than `pre-41`: the MySQL 4.1 packet format.
    pub post41: bool,
}

/// One `tcp-check` rule with its `comment` (for `Comment`, the text itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpCheckRule {
    pub action: TcpCheckAction,
    pub comment: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpCheckAction {
    /// `comment <text>`: names the rule after it (and counts as a step).
    Comment,
    /// `connect [port <n>] [addr <ip>]`.
    Connect { port: Option<u16>, addr: Option<String> },
    /// `send <string>` / `send-binary <hex>`.
    Send(Vec<u8>),
    /// `expect [min-recv <n>] [!] <match> <pattern>`.
    Expect { inverse: bool, matcher: TcpExpectMatch, min_recv: Option<usize> },
}

/// What a `tcp-check expect` rule looks for in the bytes received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpExpectMatch {
    String(Vec<u8>),
    Rstring(String),
    Binary(Vec<u8>),
    /// On the received bytes written as upper-case hex.
    Rbinary(String),
}

/// `option httpchk [<method> <uri> [<version>]]` with its `http-check send` and
/// `http-check expect` rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpCheck {
    pub meth: String,
    pub uri: String,
    pub ver: String,
    /// Headers, in order (from `http-check send hdr`, or the deprecated `\r\n` tail of
    /// the version of `option httpchk`).
    pub hdrs: Vec<(String, String)>,
    pub body: String,
    /// `http-check expect` rules, all evaluated on the response; none: status 2xx/3xx.
    pub expects: Vec<HttpExpect>,
}

impl Default for HttpCheck {
    fn default() -> HttpCheck {
        HttpCheck {
            meth: "OPTIONS".into(),
            uri: "/".into(),
            ver: "HTTP/1.0".into(),
            hdrs: Vec::new(),
            body: String::new(),
            expects: Vec::new(),
        }
    }
}

/// One `http-check expect [!] <match> <pattern>` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpExpect {
    /// `!`: the rule passes when the pattern does not match.
    pub inverse: bool,
    pub matcher: HttpExpectMatch,
    /// `comment <msg>`, appended to the failure reason.
    pub comment: Option<String>,
}

/// What an `http-check expect` rule looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpExpectMatch {
    /// `status <codes>`: inclusive ranges (`200`, `200-299`, comma lists).
    Status(Vec<(u16, u16)>),
    /// `rstatus <regex>`, on the status code text.
    Rstatus(String),
    /// `string <text>`, in the body.
    String(String),
    /// `rstring <regex>`, on the body.
    Rstring(String),
}
