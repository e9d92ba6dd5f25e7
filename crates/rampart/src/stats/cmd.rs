//! The CLI commands: one table with each command's words, its help line and the level
//! it needs, and the dispatcher that runs the `;`-separated commands of a line.
//! Answers are HAProxy 2.6's texts. HAProxy counterpart: cli.c (cli_kws, cli_parse_request,
//! cli_gen_usage_msg) and the `cli_register_kw` tables of stats.c, proxy.c, server.c.
//!
//! Another module adds a command by adding a [`Cmd`] to [`COMMANDS`] (alphabetical
//! order, as `help` lists them) with a handler `fn(&Cli, &mut Session, &[&str]) -> String`
//! that receives every word of the command, its own included.

use std::time::Duration;

use super::process_cmd::{
    clear_counters, set_level, set_maxconn_frontend, set_maxconn_global, set_rate_limit, set_timeout, show_env,
    show_events, show_info, show_peers,
};
use super::stat::Request;
use super::{servers, srvcmd, stat, Cli};
use crate::tls::castore::Kind;

/// A CLI session's access level (`stats socket ... level`), lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    User,
    Operator,
    Admin,
}

impl Level {
    /// The `level` option's word.
    pub fn parse(word: &str) -> Option<Level> {
        match word {
            "user" => Some(Level::User),
            "operator" => Some(Level::Operator),
            "admin" => Some(Level::Admin),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Level::User => "user",
            Level::Operator => "operator",
            Level::Admin => "admin",
        }
    }
}

/// The state of one CLI connection.
#[derive(Debug, Clone)]
pub struct Session {
    pub level: Level,
    /// Interactive mode (`prompt`): the connection stays open and a `> ` prompt follows
    /// every answer.
    pub prompt: bool,
    /// Idle limit of this session (`stats timeout`, changed by `set timeout cli`).
    pub timeout: Duration,
    /// `quit` was asked: close once the answers are sent.
    pub quit: bool,
    /// `experimental-mode on`: commands such as `set var` are allowed.
    pub experimental: bool,
    /// The payload of the line (the lines after a line ending with `<<`, up to an
    /// empty line), for the command that takes one (`set ssl cert`).
    pub payload: Option<String>,
}

/// A command: the words that name it, its help line, the level it needs.
pub struct Cmd {
    pub words: &'static [&'static str],
    pub usage: &'static str,
    pub help: &'static str,
    pub level: Level,
    pub run: fn(&Cli, &mut Session, &[&str]) -> String,
}

pub(super) const PERMISSION_DENIED: &str = "Permission denied\n";

/// Every command rampart implements, in `help` order (help, prompt and quit are
/// listed last, as HAProxy does).
pub static COMMANDS: &[Cmd] = &[
    Cmd {
        words: &["clear", "acl"],
        usage: "clear acl [@<ver>] <acl>",
        help: "clear the contents of this acl",
        level: Level::User,
        run: super::mapcmd::clear,
    },
    Cmd {
        words: &["clear", "counters"],
        usage: "clear counters [all]",
        help: "clear max statistics counters (or all counters)",
        level: Level::Operator,
        run: clear_counters,
    },
    Cmd {
        words: &["clear", "map"],
        usage: "clear map [@<ver>] <map>",
        help: "clear the contents of this map",
        level: Level::User,
        run: super::mapcmd::clear,
    },
    Cmd {
        words: &["clear", "table"],
        usage: "clear table <table> [<filter>]*",
        help: "remove an entry from a table (filter: data/key)",
        level: Level::Operator,
        run: super::table_cmd::clear_table,
    },
    Cmd {
        words: &["abort", "ssl", "ca-file"],
        usage: "abort ssl ca-file <cafile>",
        help: "abort a transaction for a CA file",
        level: Level::Admin,
        run: |c, _, w| c.cafiles.abort(Kind::Ca, w.get(3).copied()),
    },
    Cmd {
        words: &["abort", "ssl", "cert"],
        usage: "abort ssl cert <certfile>",
        help: "abort a transaction for a certificate file",
        level: Level::Admin,
        run: |c, _, w| c.certs.abort(w.get(3).copied()),
    },
    Cmd {
        words: &["abort", "ssl", "crl-file"],
        usage: "abort ssl crl-file <crlfile>",
        help: "abort a transaction for a CRL file",
        level: Level::Admin,
        run: |c, _, w| c.cafiles.abort(Kind::Crl, w.get(3).copied()),
    },
    Cmd {
        words: &["commit", "ssl", "ca-file"],
        usage: "commit ssl ca-file <cafile>",
        help: "commit a CA file",
        level: Level::Admin,
        run: |c, _, w| c.certs.with_lines(|l| c.cafiles.commit(Kind::Ca, w.get(3).copied(), l)),
    },
    Cmd {
        words: &["add", "acl"],
        usage: "add acl [@<ver>] <acl> <pattern>",
        help: "add an acl entry",
        level: Level::User,
        run: super::mapcmd::add,
    },
    Cmd {
        words: &["add", "map"],
        usage: "add map [@<ver>] <map> <key> <val>",
        help: "add a map entry (payload supported instead of key/val)",
        level: Level::User,
        run: super::mapcmd::add,
    },
    Cmd {
        words: &["add", "server"],
        usage: "add server <bk>/<srv>",
        help: "create a new server",
        level: Level::Admin,
        run: super::srvadd::add_server,
    },
    Cmd {
        words: &["add", "ssl", "crt-list"],
        usage: "add ssl crt-list <list> <cert> [opts]*",
        help: "add to crt-list file <list> a line <cert> or a payload",
        level: Level::Admin,
        run: |c, s, w| c.certs.add_crtlist(&w[3..], s.payload.take().as_deref(), &|p| c.cafiles.contents(p)),
    },
    Cmd {
        words: &["commit", "acl"],
        usage: "commit acl @<ver> <acl>",
        help: "commit the ACL at this version",
        level: Level::User,
        run: super::mapcmd::commit,
    },
    Cmd {
        words: &["commit", "map"],
        usage: "commit map @<ver> <map>",
        help: "commit the map at this version",
        level: Level::User,
        run: super::mapcmd::commit,
    },
    Cmd {
        words: &["commit", "ssl", "cert"],
        usage: "commit ssl cert <certfile>",
        help: "commit a certificate file",
        level: Level::Admin,
        run: |c, _, w| c.certs.commit(w.get(3).copied()),
    },
    Cmd {
        words: &["commit", "ssl", "crl-file"],
        usage: "commit ssl crl-file <crlfile>",
        help: "commit a CRL file",
        level: Level::Admin,
        run: |c, _, w| c.certs.with_lines(|l| c.cafiles.commit(Kind::Crl, w.get(3).copied(), l)),
    },
    Cmd {
        words: &["del", "acl"],
        usage: "del acl <acl> [<key>|#<ref>]",
        help: "delete acl entries matching <key>",
        level: Level::User,
        run: super::mapcmd::del,
    },
    Cmd {
        words: &["del", "map"],
        usage: "del map <map> [<key>|#<ref>]",
        help: "delete map entries matching <key>",
        level: Level::User,
        run: super::mapcmd::del,
    },
    Cmd {
        words: &["del", "server"],
        usage: "del server <bk>/<srv>",
        help: "remove a dynamically added server",
        level: Level::Admin,
        run: super::srvadd::del_server,
    },
    Cmd {
        words: &["del", "ssl", "ca-file"],
        usage: "del ssl ca-file <cafile>",
        help: "delete an unused CA file",
        level: Level::Admin,
        run: |c, _, w| c.certs.with_lines(|l| c.cafiles.del_file(Kind::Ca, w.get(3).copied(), l)),
    },
    Cmd {
        words: &["del", "ssl", "cert"],
        usage: "del ssl cert <certfile>",
        help: "delete an unused certificate file",
        level: Level::Admin,
        run: |c, _, w| c.certs.del_cert(w.get(3).copied()),
    },
    Cmd {
        words: &["del", "ssl", "crl-file"],
        usage: "del ssl crl-file <crlfile>",
        help: "delete an unused CRL file",
        level: Level::Admin,
        run: |c, _, w| c.certs.with_lines(|l| c.cafiles.del_file(Kind::Crl, w.get(3).copied(), l)),
    },
    Cmd {
        words: &["del", "ssl", "crt-list"],
        usage: "del ssl crt-list <list> <cert[:line]>",
        help: "delete a line <cert> from crt-list file <list>",
        level: Level::Admin,
        run: |c, _, w| c.certs.del_crtlist(&w[3..]),
    },
    Cmd {
        words: &["disable", "agent"],
        usage: "disable agent",
        help: "disable agent checks",
        level: Level::Admin,
        run: srvcmd::enable_check,
    },
    Cmd {
        words: &["disable", "health"],
        usage: "disable health",
        help: "disable health checks",
        level: Level::Admin,
        run: srvcmd::enable_check,
    },
    Cmd {
        words: &["disable", "server"],
        usage: "disable server (DEPRECATED)",
        help: "disable a server for maintenance (use 'set server' instead)",
        level: Level::Admin,
        run: srvcmd::enable_server,
    },
    Cmd {
        words: &["enable", "agent"],
        usage: "enable agent",
        help: "enable agent checks",
        level: Level::Admin,
        run: srvcmd::enable_check,
    },
    Cmd {
        words: &["enable", "health"],
        usage: "enable health",
        help: "enable health checks",
        level: Level::Admin,
        run: srvcmd::enable_check,
    },
    Cmd {
        words: &["enable", "server"],
        usage: "enable server  (DEPRECATED)",
        help: "enable a disabled server (use 'set server' instead)",
        level: Level::Admin,
        run: srvcmd::enable_server,
    },
    Cmd {
        words: &["get", "acl"],
        usage: "get acl <acl> <value>",
        help: "report the patterns matching a sample for an ACL",
        level: Level::User,
        run: super::mapcmd::get,
    },
    Cmd {
        words: &["get", "map"],
        usage: "get map <acl> <value>",
        help: "report the keys and values matching a sample for a map",
        level: Level::User,
        run: super::mapcmd::get,
    },
    Cmd {
        words: &["get", "var"],
        usage: "get var <name>",
        help: "retrieve contents of a process-wide variable",
        level: Level::Operator,
        run: super::varcmd::get_var,
    },
    Cmd {
        words: &["get", "weight"],
        usage: "get weight <bk>/<srv>",
        help: "report a server's current weight",
        level: Level::User,
        run: srvcmd::get_weight,
    },
    Cmd {
        words: &["new", "ssl", "ca-file"],
        usage: "new ssl ca-file <cafile>",
        help: "create a new CA file to be used in a crt-list",
        level: Level::Admin,
        run: |c, _, w| c.cafiles.new_file(Kind::Ca, w.get(3).copied()),
    },
    Cmd {
        words: &["new", "ssl", "cert"],
        usage: "new ssl cert <certfile>",
        help: "create a new certificate file to be used in a crt-list or a directory",
        level: Level::Admin,
        run: |c, _, w| c.certs.new_cert(w.get(3).copied()),
    },
    Cmd {
        words: &["new", "ssl", "crl-file"],
        usage: "new ssl crl-file <crlfile>",
        help: "",
        level: Level::Admin,
        run: |c, _, w| c.cafiles.new_file(Kind::Crl, w.get(3).copied()),
    },
    Cmd {
        words: &["operator"],
        usage: "operator",
        help: "lower the level of the current CLI session to operator",
        level: Level::User,
        run: |_, s, _| set_level(s, Level::Operator),
    },
    Cmd {
        words: &["prepare", "acl"],
        usage: "prepare acl <acl>",
        help: "prepare a new version for atomic ACL replacement",
        level: Level::User,
        run: super::mapcmd::prepare,
    },
    Cmd {
        words: &["prepare", "map"],
        usage: "prepare map <acl>",
        help: "prepare a new version for atomic map replacement",
        level: Level::User,
        run: super::mapcmd::prepare,
    },
    Cmd {
        words: &["set", "map"],
        usage: "set map <map> [<key>|#<ref>] <value>",
        help: "modify a map entry",
        level: Level::User,
        run: super::mapcmd::set,
    },
    Cmd {
        words: &["set", "maxconn", "frontend"],
        usage: "set maxconn frontend <frontend> <value>",
        help: "change a frontend's maxconn setting",
        level: Level::Admin,
        run: set_maxconn_frontend,
    },
    Cmd {
        words: &["set", "maxconn", "global"],
        usage: "set maxconn global <value>",
        help: "change the per-process maxconn setting",
        level: Level::Admin,
        run: set_maxconn_global,
    },
    Cmd {
        words: &["set", "rate-limit"],
        usage: "set rate-limit <setting> <value>",
        help: "change a rate limiting value",
        level: Level::Admin,
        run: set_rate_limit,
    },
    Cmd {
        words: &["set", "server"],
        usage: "set server <bk>/<srv> [opts]",
        help: "change a server's state, weight, address or ssl",
        level: Level::Admin,
        run: srvcmd::set_server,
    },
    Cmd {
        words: &["set", "ssl", "ca-file"],
        usage: "set ssl ca-file <cafile> <payload>",
        help: "replace a CA file",
        level: Level::Admin,
        run: |c, s, w| c.cafiles.set(Kind::Ca, w.get(3).copied(), s.payload.take().as_deref()),
    },
    Cmd {
        words: &["set", "ssl", "cert"],
        usage: "set ssl cert <certfile> <payload>",
        help: "replace a certificate file",
        level: Level::Admin,
        run: |c, s, w| c.certs.set(w.get(3).copied(), s.payload.take().as_deref()),
    },
    Cmd {
        words: &["set", "ssl", "crl-file"],
        usage: "set ssl crl-file <crlfile> <payload>",
        help: "replace a CRL file",
        level: Level::Admin,
        run: |c, s, w| c.cafiles.set(Kind::Crl, w.get(3).copied(), s.payload.take().as_deref()),
    },
    Cmd {
        words: &["set", "ssl", "ocsp-response"],
        usage: "set ssl ocsp-response <resp|payload>",
        help: "update a certificate's OCSP Response from a base64-encode DER",
        level: Level::Admin,
        run: |c, s, w| c.certs.set_ocsp(s.payload.take().as_deref().or(w.get(3).copied())),
    },
    Cmd {
        words: &["set", "ssl", "tls-key"],
        usage: "set ssl tls-key [id|file] <key>",
        help: "set the next TLS key for the <id> or <file> listener to <key>",
        level: Level::User,
        run: |c, _, w| c.ticket_keys.set(w),
    },
    Cmd {
        words: &["set", "table"],
        usage: "set table <table> key <k> [data.* <v>]*",
        help: "update or create a table entry's data",
        level: Level::Operator,
        run: super::table_cmd::set_table,
    },
    Cmd {
        words: &["set", "timeout"],
        usage: "set timeout [cli] <delay>",
        help: "change a timeout setting",
        level: Level::User,
        run: set_timeout,
    },
    Cmd {
        words: &["set", "weight"],
        usage: "set weight <bk>/<srv>  (DEPRECATED)",
        help: "change a server's weight (use 'set server' instead)",
        level: Level::Admin,
        run: srvcmd::set_weight,
    },
    Cmd {
        words: &["show", "acl"],
        usage: "show acl [@<ver>] <acl>]",
        help: "report available acls or dump an acl's contents",
        level: Level::User,
        run: super::mapcmd::show,
    },
    Cmd {
        words: &["show", "activity"],
        usage: "show activity",
        help: "show per-thread activity stats (for support/developers)",
        level: Level::User,
        run: |_, _, _| crate::watchdog::show_activity(),
    },
    Cmd {
        words: &["show", "backend"],
        usage: "show backend",
        help: "list backends in the current running config",
        level: Level::User,
        run: |c, _, _| servers::backends(c),
    },
    Cmd {
        words: &["show", "cache"],
        usage: "show cache",
        help: "show cache status",
        level: Level::Admin,
        run: |c, _, _| {
            let mut out = String::new();
            let now = crate::cache::now();
            for cache in &c.rt.caches {
                cache.show(&mut out, now);
            }
            out
        },
    },
    Cmd {
        words: &["show", "cli", "level"],
        usage: "show cli level",
        help: "display the level of the current CLI session",
        level: Level::User,
        run: |_, s, _| format!("{}\n", s.level.name()),
    },
    Cmd {
        words: &["show", "env"],
        usage: "show env [var]",
        help: "dump environment variables known to the process",
        level: Level::Operator,
        run: show_env,
    },
    Cmd {
        words: &["show", "errors"],
        usage: "show errors [<px>] [request|response]",
        help: "report last request and/or response errors for each proxy",
        level: Level::Operator,
        run: |c, _, w| super::errors::show(&c.rt, &w[2..]),
    },
    Cmd {
        words: &["show", "events"],
        usage: "show events [<sink>] [-w] [-n]",
        help: "show event sink state",
        level: Level::User,
        run: |_, s, w| show_events(s, w),
    },
    Cmd {
        words: &["show", "info"],
        usage: "show info [desc|json|typed|float]*",
        help: "report information about the running process",
        level: Level::User,
        run: show_info,
    },
    Cmd {
        words: &["show", "map"],
        usage: "show map [@ver] [map]",
        help: "report available maps or dump a map's contents",
        level: Level::User,
        run: super::mapcmd::show,
    },
    Cmd {
        words: &["show", "peers"],
        usage: "show peers [dict|-] [section]",
        help: "dump some information about all the peers or this peers section",
        level: Level::User,
        run: show_peers,
    },
    Cmd {
        words: &["show", "resolvers"],
        usage: "show resolvers [id]",
        help: "dumps counters from all resolvers section and associated name servers",
        level: Level::User,
        run: |c, _, w| super::resolvers::show(c, w.get(2).copied()),
    },
    Cmd {
        words: &["show", "servers", "state"],
        usage: "show servers state [<backend>]",
        help: "dump volatile server information (all or for a single backend)",
        level: Level::User,
        run: |c, _, w| servers::state(c, w.get(3).copied()).unwrap_or_else(|e| e),
    },
    // rampart's reload handover (not in `help`): what the next worker takes over
    Cmd {
        words: &["_getstate"],
        usage: "_getstate",
        help: "",
        level: Level::Admin,
        run: |c, _, _| super::handover::dump(c),
    },
    Cmd {
        words: &["show", "ssl", "ca-file"],
        usage: "show ssl ca-file [<cafile>[:<index>]]",
        help: "display the SSL CA files used in memory, or the details of a <cafile>, or a single certificate of index <index> of a CA file <cafile>",
        level: Level::Operator,
        run: |c, _, w| c.certs.with_lines(|l| c.cafiles.show(Kind::Ca, w.get(3).copied(), l)),
    },
    Cmd {
        words: &["show", "ssl", "cert"],
        usage: "show ssl cert [<certfile>]",
        help: "display the SSL certificates used in memory, or the details of a file",
        level: Level::Operator,
        run: |c, _, w| c.certs.show(w.get(3).copied()),
    },
    Cmd {
        words: &["show", "ssl", "crl-file"],
        usage: "show ssl crl-file [<crlfile[:<index>>]]",
        help: "display the SSL CRL files used in memory, or the details of a <crlfile>, or a single CRL of index <index> of CRL file <crlfile>",
        level: Level::Operator,
        run: |c, _, w| c.certs.with_lines(|l| c.cafiles.show(Kind::Crl, w.get(3).copied(), l)),
    },
    Cmd {
        words: &["show", "ssl", "ocsp-response"],
        usage: "show ssl ocsp-response [id]",
        help: "display the IDs of the OCSP responses used in memory, or the details of a single OCSP response",
        level: Level::Operator,
        run: |c, _, w| c.certs.show_ocsp(w.get(3).copied()),
    },
    Cmd {
        words: &["show", "ssl", "crt-list"],
        usage: "show ssl crt-list [-n] [<list>]",
        help: "show the list of crt-lists or the content of a crt-list file <list>",
        level: Level::Admin,
        run: |c, _, w| c.certs.show_crtlist(&w[3..]),
    },
    Cmd {
        words: &["show", "startup-logs"],
        usage: "show startup-logs",
        help: "report logs emitted during HAProxy startup",
        level: Level::Operator,
        run: |_, _, _| super::process_cmd::show_startup_logs(),
    },
    Cmd {
        words: &["show", "stat"],
        usage: "show stat [desc|json|no-maint|typed|up]*",
        help: "report counters for each proxy and server",
        level: Level::User,
        run: |c, s, w| match (w.get(2).copied(), w.get(3).copied()) {
            (Some("domain"), Some("resolvers")) => super::resolvers::show_stat(c, &w[4..]),
            (Some("domain"), Some("proxy")) => show_stat_proxy(c, s, &w[4..]),
            (Some("domain"), _) => "Invalid statistics domain.\n".to_owned(),
            _ => show_stat_proxy(c, s, &w[2..]),
        },
    },
    Cmd {
        words: &["show", "table"],
        usage: "show table <table> [<filter>]*",
        help: "report table usage stats or dump this table's contents (filter: data/key)",
        level: Level::User,
        run: super::table_cmd::show_table,
    },
    Cmd {
        words: &["show", "threads"],
        usage: "show threads",
        help: "show some threads debugging information",
        level: Level::User,
        run: |_, _, _| crate::watchdog::show_threads(),
    },
    Cmd {
        words: &["show", "tls-keys"],
        usage: "show tls-keys [id|*]",
        help: "show tls keys references or dump tls ticket keys when id specified",
        level: Level::User,
        run: |c, _, w| c.ticket_keys.show(w.get(2).copied()),
    },
    // listed by HAProxy only in experimental mode
    Cmd {
        words: &["set", "var"],
        usage: "set var <name> [fmt|expr] {<fmt>|<expr>}",
        help: "",
        level: Level::User,
        run: super::varcmd::set_var,
    },
    Cmd {
        words: &["experimental-mode"],
        usage: "experimental-mode [on|off]",
        help: "",
        level: Level::Admin,
        run: super::varcmd::experimental_mode,
    },
    Cmd {
        words: &["show", "version"],
        usage: "show version",
        help: "show version of the current process",
        level: Level::User,
        run: |_, _, _| format!("{}\n", crate::version::version_string()),
    },
    Cmd {
        words: &["user"],
        usage: "user",
        help: "lower the level of the current CLI session to user",
        level: Level::User,
        run: |_, s, _| set_level(s, Level::User),
    },
    Cmd {
        words: &["help"],
        usage: "help [<command>]",
        help: "list matching or all commands",
        level: Level::User,
        run: |_, _, w| usage_text("The following commands are valid at this level:\n", &w[1..], true),
    },
    Cmd {
        words: &["prompt"],
        usage: "prompt",
        help: "toggle interactive mode with prompt",
        level: Level::User,
        run: |_, s, _| {
            s.prompt = !s.prompt;
            String::new()
        },
    },
    Cmd {
        words: &["quit"],
        usage: "quit",
        help: "disconnect",
        level: Level::User,
        run: |_, s, _| {
            s.quit = true;
            String::new()
        },
    },
];

/// HAProxy commands rampart does not have yet: they get a clear answer instead of
/// the unknown-command help. (First words, matched as a prefix of the command.)
const NOT_YET: &[&[&str]] = &[
    &["enable"],
    &["disable"],
    &["set", "maxconn", "server"],
    &["show", "sess"],
    &["show", "pools"],
    &["shutdown"],
    &["add"],
    &["del"],
    &["commit"],
    &["new"],
    &["abort"],
];

/// Runs one line of the session: its `;`-separated commands in order, each answer
/// followed by an empty line, as HAProxy ends them. A command a Lua script registered
/// may wait (and read what the client sends next from `input`).
pub async fn run_line(
    cli: &Cli,
    sess: &mut Session,
    line: &str,
    out: &mut String,
    input: &mut dyn crate::lua::cli::CliInput,
) {
    for command in split_commands(line) {
        let words = split_words(&command);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        if words.is_empty() {
            continue;
        }
        let answer = match lua_command(&words) {
            Some(id) => crate::lua::cli::run(id, &words, input).await,
            None => run_command(cli, sess, &words),
        };
        out.push_str(&answer);
        if sess.quit {
            return;
        }
        out.push('\n');
    }
}

/// The commands of a line: split at `;` not escaped by a backslash.
/// `show stat` of the proxy domain (the default one).
fn show_stat_proxy(c: &Cli, s: &Session, words: &[&str]) -> String {
    match Request::parse(&c.rt, words) {
        Ok(req) => stat::render(&c.rt, &req, s.level),
        Err(e) => e,
    }
}

fn split_commands(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(';') => out.last_mut().map_or((), |s| s.push(';')),
                Some(n) => out.last_mut().map_or((), |s| {
                    s.push('\\');
                    s.push(n)
                }),
                None => {}
            },
            ';' => out.push(String::new()),
            c => out.last_mut().map_or((), |s| s.push(c)),
        }
    }
    out
}

/// The words of a command: split at blanks not escaped by a backslash; a backslash
/// is dropped and the character after it kept (`\\` is one backslash), as HAProxy's
/// CLI does (`show ssl crl-file \*<file>`).
fn split_words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    word.get_or_insert_with(String::new).push(n);
                }
            }
            c if c.is_whitespace() => out.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    out.extend(word);
    out
}

/// The Lua command `words` name, unless a command of rampart has them (PERF: an
/// empty list without scripts).
fn lua_command(words: &[&str]) -> Option<usize> {
    let builtin = COMMANDS.iter().any(|c| words.len() >= c.words.len() && words[..c.words.len()] == *c.words);
    if builtin {
        return None;
    }
    crate::lua::cli::find(words)
}

/// One command's answer.
pub fn run_command(cli: &Cli, sess: &mut Session, words: &[&str]) -> String {
    // test-only, and absent unless the process started with watchdog::DEBUG_DEV_ENV
    if sess.level >= Level::Admin && words.starts_with(&["debug", "dev", "loop"]) {
        if let Some(out) = crate::watchdog::debug_dev_loop(&words[3..]) {
            return out;
        }
    }
    let found = COMMANDS.iter().find(|c| words.len() >= c.words.len() && words[..c.words.len()] == *c.words);
    match found {
        Some(cmd) if sess.level < cmd.level => PERMISSION_DENIED.to_owned(),
        Some(cmd) => {
            let _doing = crate::watchdog::doing(crate::watchdog::Doing::Cli);
            (cmd.run)(cli, sess, words)
        }
        None if NOT_YET.iter().any(|p| words.len() >= p.len() && words[..p.len()] == **p) => {
            format!("'{}' is not supported yet.\n", words.iter().take(3).copied().collect::<Vec<_>>().join(" "))
        }
        None => usage_text("Unknown command, but maybe one of the following ones is a better match:\n", words, false),
    }
}

/// The help text: the commands whose words start with `filter` (every command when
/// none does), then help, prompt and quit. `all`: a `help` request, which lists
/// every command when no filter is given.
fn usage_text(title: &str, filter: &[&str], all: bool) -> String {
    let (listed, last) = COMMANDS.split_at(COMMANDS.len() - 3);
    // a command without a help line is not listed (HAProxy 2.6's `new ssl crl-file`)
    let listed: Vec<&Cmd> = listed.iter().filter(|c| !c.help.is_empty()).collect();
    let matching: Vec<&Cmd> = listed
        .iter()
        .copied()
        .filter(|c| filter.first().is_some_and(|f| c.words.first() == Some(f)) || (all && filter.is_empty()))
        .collect();
    // the commands scripts registered: their usage line as it is, where it sorts
    let lua_all: Vec<&str> = crate::lua::cli::commands().iter().map(|(_, u)| u.as_str()).collect();
    let lua_matching: Vec<&str> = crate::lua::cli::commands()
        .iter()
        .filter(|(w, _)| {
            filter.first().is_some_and(|f| w.first().map(String::as_str) == Some(*f)) || (all && filter.is_empty())
        })
        .map(|(_, u)| u.as_str())
        .collect();
    let (shown, lua) =
        if matching.is_empty() && lua_matching.is_empty() { (listed, lua_all) } else { (matching, lua_matching) };
    let mut lua = lua;
    lua.sort_unstable();
    let mut out = String::from(title);
    let mut lua = lua.into_iter().peekable();
    for c in shown {
        while let Some(u) = lua.next_if(|u| *u < c.usage) {
            out.push_str(&format!("  {u}\n"));
        }
        out.push_str(&format!("  {:<40}: {}\n", c.usage, c.help));
    }
    for u in lua {
        out.push_str(&format!("  {u}\n"));
    }
    for c in last {
        out.push_str(&format!("  {:<40}: {}\n", c.usage, c.help));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_at_unescaped_semicolons() {
        assert_eq!(split_commands("show info;show stat"), ["show info", "show stat"]);
        assert_eq!(split_commands("a\\;b;c"), ["a;b", "c"]);
    }

    #[test]
    fn words_are_unescaped_as_haproxy_does() {
        assert_eq!(split_words("show ssl crl-file \\*/a/b.pem"), ["show", "ssl", "crl-file", "*/a/b.pem"]);
        assert_eq!(split_words("  a\\ b   c\\\\d "), ["a b", "c\\d"]);
        assert_eq!(split_words(""), Vec::<String>::new());
    }

    #[test]
    fn help_lines_pad_the_usage_to_forty_columns() {
        let text = usage_text("T\n", &[], true);
        assert!(
            text.contains("\n  show stat [desc|json|no-maint|typed|up]*: report counters for each proxy and server\n")
        );
        assert!(text.contains("\n  show backend                            : list backends"));
        assert!(text.ends_with("  quit                                    : disconnect\n"), "{text}");
    }
}
