//! SPOE configuration files: `filter spoe [engine <name>] config <file>` names one, and
//! once every section of haproxy.cfg is read each file is read and its engine's scope
//! parsed (`spoe-agent`, `spoe-message`, `spoe-group`), with errors pointing at the
//! SPOE file's lines.
//!
//! HAProxy counterparts: `parse_spoe_flt()`, `cfg_parse_spoe_agent()`,
//! `cfg_parse_spoe_message()`, `cfg_parse_spoe_group()` (src/flt_spoe.c).

use std::sync::Arc;
use std::time::Duration;

use crate::diag::{Diag, Diags};
use crate::lexer::{LexCtx, Lexer, Line};
use crate::model::{Config, FilterKind, SpoeAgent, SpoeArg, SpoeConf, SpoeEvent, SpoeFilter, SpoeGroup, SpoeMessage};
use crate::span::Span;

use super::arg;
use super::rule::parse_condition;

/// `filter spoe [engine <name>] config <file>`: the filter, its file still unread.
pub(super) fn parse_filter_line(words: &[String]) -> Result<SpoeFilter, String> {
    let (mut engine, mut file) = (None, None);
    let mut i = 2;
    while i < words.len() {
        let value = words.get(i + 1).filter(|v| !v.is_empty());
        match words[i].as_str() {
            "engine" => engine = Some(value.ok_or("'spoe' : 'engine' option without value")?.clone()),
            "config" => file = Some(value.ok_or("'spoe' : 'config' option without value")?.clone()),
            other => return Err(format!("'spoe' : unknown keyword '{other}'")),
        }
        i += 2;
    }
    let file = file.ok_or("'spoe' : missing config file")?;
    Ok(SpoeFilter { engine, file, conf: None })
}

/// Reads the SPOE file of every `filter spoe` line and fills in its engine.
pub fn load_files(cfg: &mut Config, ctx: &LexCtx<'_>, diags: &mut Diags) {
    let backends: Vec<(String, bool)> = cfg.proxies.iter().map(|p| (p.name.clone(), p.cap.backend)).collect();
    for px in &mut cfg.proxies {
        for f in &mut px.filters {
            let FilterKind::Spoe(spoe) = &mut f.kind else { continue };
            let at = Some(f.span.clone());
            let file = super::default_path::resolve(cfg.global.default_path.as_deref(), &spoe.file);
            let text = match std::fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) => {
                    diags.push(Diag::alert(
                        at,
                        format!("'filter' : Could not open configuration file {} : {e}", spoe.file),
                    ));
                    continue;
                }
            };
            let before = diags.list.len();
            let conf = parse_file(&spoe.file, &text, spoe.engine.as_deref(), ctx, diags);
            if diags.list[before..].iter().any(|d| d.level == crate::diag::Level::Alert) {
                diags.push(Diag::alert(at, format!("'filter' : Error(s) found in configuration file {}", spoe.file)));
                continue;
            }
            let Some(conf) = conf else {
                diags.push(Diag::alert(at, format!("'filter' : No SPOE agent found in file {}", spoe.file)));
                continue;
            };
            let agent = &conf.agent;
            if !backends.iter().any(|(n, be)| *be && *n == agent.use_backend) {
                diags.push(Diag::alert(
                    Some(agent.span.clone()),
                    format!(
                        "SPOE agent '{}' : unable to find the backend '{}' named by 'use-backend' (proxy '{}').",
                        agent.id, agent.use_backend, px.name
                    ),
                ));
                continue;
            }
            spoe.conf = Some(Box::new(conf));
        }
    }
}

/// What the parser is reading.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Agent,
    Message(usize),
    Group(usize),
}

/// The groups as written (message names resolved once the file is read).
struct RawGroup {
    name: String,
    messages: Vec<String>,
    span: Span,
}

/// Parses the scope of `text` for `engine` (no engine: the lines outside any scope).
/// `None` when it declares no agent (or an error was reported).
fn parse_file(name: &str, text: &str, engine: Option<&str>, ctx: &LexCtx<'_>, diags: &mut Diags) -> Option<SpoeConf> {
    let file: Arc<str> = name.into();
    let mut lexer = Lexer::new(&file, text, ctx);
    let mut agent: Option<SpoeAgent> = None;
    let mut messages: Vec<SpoeMessage> = Vec::new();
    let mut groups: Vec<RawGroup> = Vec::new();
    let mut section = Section::None;
    while let Some(line) = lexer.next_line(diags) {
        if lexer.current_scope() != engine {
            continue;
        }
        let w = &line.words;
        let err = match w[0].as_str() {
            "spoe-agent" => start_agent(&line, &mut agent).map(|()| section = Section::Agent),
            "spoe-message" => start_message(&line, &messages).map(|m| {
                messages.push(m);
                section = Section::Message(messages.len() - 1);
            }),
            "spoe-group" => start_group(&line, &groups).map(|g| {
                groups.push(g);
                section = Section::Group(groups.len() - 1);
            }),
            _ => match section {
                Section::None => Err(format!("unknown keyword '{}' out of section.", w[0])),
                Section::Agent => agent.as_mut().map_or(Ok(()), |a| agent_keyword(&line, a)),
                Section::Message(i) => message_keyword(&line, &mut messages[i]),
                Section::Group(i) => group_keyword(&line, &mut groups[i]),
            },
        };
        if let Err(msg) = err {
            diags.alert(&line.span, msg);
            lexer.count_fatal();
        }
    }
    let agent = agent?;
    finish(engine, agent, messages, groups, diags)
}

/// Checks the agent and resolves what it names: its messages, its groups and their
/// messages.
fn finish(
    engine: Option<&str>,
    mut agent: SpoeAgent,
    all: Vec<SpoeMessage>,
    groups: Vec<RawGroup>,
    diags: &mut Diags,
) -> Option<SpoeConf> {
    let at = Some(agent.span.clone());
    if agent.use_backend.is_empty() {
        let where_ = format!("{}:{}", agent.span.file, agent.span.line);
        diags.push(Diag::alert(at, format!("No backend declared for SPOE agent '{}' declared at {where_}", agent.id)));
        return None;
    }
    if agent.timeout_hello.is_none() || agent.timeout_idle.is_none() || agent.timeout_processing.is_none() {
        diags.push(Diag::warning(
            at.clone(),
            format!("missing timeouts for SPOE agent '{}': it may wait for its agent forever.", agent.id),
        ));
    }
    if agent.var_prefix.is_empty() {
        agent.var_prefix = agent.id.clone();
    }
    let mut messages: Vec<SpoeMessage> = Vec::new();
    let index_of = |name: &str, messages: &mut Vec<SpoeMessage>| -> Option<usize> {
        if let Some(i) = messages.iter().position(|m| m.name == name) {
            return Some(i);
        }
        let m = all.iter().find(|m| m.name == name)?;
        messages.push(m.clone());
        Some(messages.len() - 1)
    };
    for name in &agent.messages {
        if index_of(name, &mut messages).is_none() {
            diags.push(Diag::alert(
                at.clone(),
                format!("SPOE agent '{}' try to use undefined SPOE message '{name}'", agent.id),
            ));
            return None;
        }
    }
    let mut resolved = Vec::new();
    for gname in &agent.groups {
        let Some(g) = groups.iter().find(|g| g.name == *gname) else {
            diags.push(Diag::alert(
                at.clone(),
                format!("SPOE agent '{}' try to use undefined SPOE group '{gname}'", agent.id),
            ));
            return None;
        };
        let mut ids = Vec::new();
        for m in &g.messages {
            let Some(i) = index_of(m, &mut messages) else {
                diags.push(Diag::alert(
                    Some(g.span.clone()),
                    format!("SPOE group '{}' try to use undefined SPOE message '{m}'", g.name),
                ));
                return None;
            };
            ids.push(i);
        }
        resolved.push(SpoeGroup { name: g.name.clone(), messages: ids, span: g.span.clone() });
    }
    for name in &agent.messages {
        if let Some(m) = messages.iter().find(|m| m.name == *name && m.event.is_none()) {
            diags.push(Diag::warning(
                Some(m.span.clone()),
                format!("Ignore SPOE message '{}' without event (SPOE agent '{}').", m.name, agent.id),
            ));
        }
    }
    if agent.messages.is_empty() && agent.groups.is_empty() {
        diags.push(Diag::warning(at.clone(), format!("No message/group used by SPOE agent '{}'.", agent.id)));
    }
    // parsed and checked, not enforced yet (docs/COMPATIBILITY.md, SPOE): said at startup
    let unenforced = [
        ("maxconnrate", agent.maxconnrate != 0),
        ("maxerrrate", agent.maxerrrate != 0),
        ("max-waiting-frames", agent.max_waiting_frames != 20),
        ("register-var-names", !agent.register_var_names.is_empty()),
    ];
    for (kw, set) in unenforced {
        if set {
            diags.push(Diag::warning(
                at.clone(),
                format!("SPOE agent '{}': '{kw}' is not enforced yet, it has no effect.", agent.id),
            ));
        }
    }
    let id = engine.map_or_else(|| agent.id.clone(), str::to_owned);
    Some(SpoeConf { id, agent, messages, groups: resolved })
}

/// A name of the SPOE file's sections and variables: letters, digits, `.`, `_`, `-`.
fn bad_char(name: &str, more: &[char]) -> Option<char> {
    name.chars().find(|&c| !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || more.contains(&c)))
}

fn start_agent(line: &Line, agent: &mut Option<SpoeAgent>) -> Result<(), String> {
    let name = arg(&line.words, 1);
    if name.is_empty() {
        return Err("missing name for spoe-agent section.".into());
    }
    if let Some(c) = bad_char(name, &['-', ':']) {
        return Err(format!("character '{c}' is not permitted in 'spoe-agent' name '{name}'."));
    }
    if agent.is_some() {
        return Err("another spoe-agent section previously defined (only one per scope).".into());
    }
    *agent = Some(SpoeAgent {
        id: name.to_owned(),
        messages: Vec::new(),
        groups: Vec::new(),
        var_prefix: String::new(),
        set_on_error: None,
        set_process_time: None,
        set_total_time: None,
        continue_on_error: false,
        // HAProxy 2.6 enables both by default
        async_: true,
        pipelining: true,
        send_frag_payload: true,
        maxconnrate: 0,
        maxerrrate: 0,
        max_frame_size: rampart_proto_max_frame(),
        max_waiting_frames: 20,
        timeout_hello: None,
        timeout_idle: None,
        timeout_processing: None,
        use_backend: String::new(),
        register_var_names: Vec::new(),
        log_global: false,
        span: line.span.clone(),
    });
    Ok(())
}

/// `tune.bufsize` minus the frame length (HAProxy's `MAX_FRAME_SIZE` default).
const fn rampart_proto_max_frame() -> u32 {
    16380
}

fn start_message(line: &Line, messages: &[SpoeMessage]) -> Result<SpoeMessage, String> {
    let name = arg(&line.words, 1);
    if name.is_empty() {
        return Err("missing name for spoe-message section.".into());
    }
    if let Some(c) = bad_char(name, &['-', ':']) {
        return Err(format!("character '{c}' is not permitted in 'spoe-message' name '{name}'."));
    }
    if messages.iter().any(|m| m.name == name) {
        return Err(format!("spoe-message section '{name}' has the same name as another one."));
    }
    Ok(SpoeMessage { name: name.to_owned(), args: Vec::new(), event: None, cond: None, span: line.span.clone() })
}

fn start_group(line: &Line, groups: &[RawGroup]) -> Result<RawGroup, String> {
    let name = arg(&line.words, 1);
    if name.is_empty() {
        return Err("missing name for spoe-group section.".into());
    }
    if let Some(c) = bad_char(name, &['-', ':']) {
        return Err(format!("character '{c}' is not permitted in 'spoe-group' name '{name}'."));
    }
    if groups.iter().any(|g| g.name == name) {
        return Err(format!("spoe-group section '{name}' has the same name as another one."));
    }
    Ok(RawGroup { name: name.to_owned(), messages: Vec::new(), span: line.span.clone() })
}

/// A keyword of a `spoe-agent` section.
fn agent_keyword(line: &Line, a: &mut SpoeAgent) -> Result<(), String> {
    let w = &line.words;
    let kw = w[0].as_str();
    let one = |what: &str| -> Result<String, String> {
        match (arg(w, 1), w.get(2)) {
            ("", _) => Err(format!("'{kw}' expects {what}.")),
            (_, Some(extra)) => Err(format!("'{kw}' : unexpected argument '{extra}'.")),
            (v, None) => Ok(v.to_owned()),
        }
    };
    match kw {
        "use-backend" => a.use_backend = one("a backend name")?,
        "messages" | "groups" => {
            let list = if kw == "messages" { &mut a.messages } else { &mut a.groups };
            for name in &w[1..] {
                if list.contains(name) {
                    return Err(format!("{kw} '{name}' already used."));
                }
                list.push(name.clone());
            }
        }
        "timeout" => {
            let which = arg(w, 1);
            let slot = match which {
                "hello" => &mut a.timeout_hello,
                "idle" => &mut a.timeout_idle,
                "processing" => &mut a.timeout_processing,
                _ => {
                    return Err("'timeout' supports 'hello', 'idle' or 'processing' (got '".to_owned() + which + "').")
                }
            };
            let v = arg(w, 2);
            if v.is_empty() {
                return Err(format!("'timeout {which}' expects an integer value (in milliseconds)."));
            }
            let ms = super::value::parse_time_ms(v)
                .map_err(|_| format!("'timeout {which}' : unexpected character in '{v}'."))?;
            *slot = Some(Duration::from_millis(u64::from(ms.ms)));
        }
        "maxconnrate" | "maxerrrate" | "max-frame-size" | "max-waiting-frames" => {
            let v = one("an integer argument")?;
            let n: u32 = v.parse().map_err(|_| format!("'{kw}' expects an integer argument (got '{v}')."))?;
            match kw {
                "maxconnrate" => a.maxconnrate = n,
                "maxerrrate" => a.maxerrrate = n,
                "max-waiting-frames" if n == 0 => return Err(format!("'{kw}' expects a positive integer.")),
                "max-waiting-frames" => a.max_waiting_frames = n,
                _ if !(256..=16380).contains(&n) => {
                    return Err(format!("'{kw}' expects a value between 256 and 16380 (got '{v}')."))
                }
                _ => a.max_frame_size = n,
            }
        }
        "register-var-names" => {
            if w.len() < 2 {
                return Err(format!("'{kw}' expects one or more variable names."));
            }
            for name in &w[1..] {
                if let Some(c) = bad_char(name, &[]) {
                    return Err(format!("character '{c}' is not permitted in variable name '{name}'."));
                }
                a.register_var_names.push(name.clone());
            }
        }
        "log" if arg(w, 1) == "global" && w.len() == 2 => a.log_global = true,
        "log" => return Err(format!("'{}' is not supported yet", w.join(" "))),
        "no" if arg(w, 1) == "log" => return Err("'no log' is not supported yet".into()),
        "option" | "no" => return agent_option(w, a),
        "engine-name" => return Err("'engine-name' is not supported yet".into()),
        _ => return Err(format!("unknown keyword '{kw}' in spoe-agent section.")),
    }
    Ok(())
}

/// `[no] option <name> [value]` of a `spoe-agent` section.
fn agent_option(w: &[String], a: &mut SpoeAgent) -> Result<(), String> {
    let neg = w[0] == "no";
    let w = if neg { &w[1..] } else { w };
    if w.first().map(String::as_str) != Some("option") {
        return Err(format!("unknown keyword '{}' in spoe-agent section.", w.first().map_or("", |s| s.as_str())));
    }
    let opt = arg(w, 1);
    let flag = |slot: &mut bool| -> Result<(), String> {
        if let Some(extra) = w.get(2) {
            return Err(format!("'option {opt}' : unexpected argument '{extra}'."));
        }
        *slot = !neg;
        Ok(())
    };
    match opt {
        "pipelining" => flag(&mut a.pipelining),
        "send-frag-payload" => flag(&mut a.send_frag_payload),
        "async" => flag(&mut a.async_),
        "continue-on-error" => flag(&mut a.continue_on_error),
        "var-prefix" | "set-on-error" | "set-process-time" | "set-total-time" if neg => {
            Err(format!("'no option {opt}' is not permitted."))
        }
        "var-prefix" | "set-on-error" | "set-process-time" | "set-total-time" => {
            let v = arg(w, 2);
            if v.is_empty() {
                return Err(format!("'option {opt}' expects a value."));
            }
            if let Some(c) = bad_char(v, &[]) {
                return Err(format!(
                    "invalid variable name '{v}' for 'option {opt}' (character '{c}' is not permitted)."
                ));
            }
            if opt == "var-prefix" {
                a.var_prefix = v.to_owned();
                return Ok(());
            }
            let v = Some(v.to_owned());
            match opt {
                "set-on-error" => a.set_on_error = v,
                "set-process-time" => a.set_process_time = v,
                _ => a.set_total_time = v,
            }
            Ok(())
        }
        "dontlog-normal" | "force-set-var" => Err(format!("'option {opt}' is not supported yet")),
        _ => Err(format!("option '{opt}' is not supported for spoe-agent section.")),
    }
}

/// A keyword of a `spoe-message` section.
fn message_keyword(line: &Line, m: &mut SpoeMessage) -> Result<(), String> {
    let w = &line.words;
    match w[0].as_str() {
        "args" => {
            for a in &w[1..] {
                let (name, expr) = match a.split_once('=') {
                    // `name=expr`, but not an expression with `=` inside parentheses
                    Some((n, e)) if !n.contains('(') => (n.to_owned(), e.to_owned()),
                    _ => (String::new(), a.clone()),
                };
                if expr.is_empty() {
                    return Err(format!("'args' : missing sample expression for argument '{a}'."));
                }
                m.args.push(SpoeArg { name, expr });
            }
            Ok(())
        }
        "event" => {
            let name = arg(w, 1);
            if name.is_empty() {
                return Err("missing event name.".into());
            }
            if m.event.is_some() {
                return Err(format!("spoe-message '{}' already has an event.", m.name));
            }
            let ev = SpoeEvent::from_name(name).ok_or_else(|| format!("unknown event '{name}'."))?;
            m.cond = parse_condition(w, 2, &line.span).map_err(|got| {
                format!("'event {name}' expects either 'if' or 'unless' followed by a condition but found '{got}'.")
            })?;
            m.event = Some(ev);
            Ok(())
        }
        "acl" => Err("'acl' in a spoe-message section is not supported yet".into()),
        other => Err(format!("unknown keyword '{other}' in spoe-message section.")),
    }
}

/// A keyword of a `spoe-group` section.
fn group_keyword(line: &Line, g: &mut RawGroup) -> Result<(), String> {
    let w = &line.words;
    match w[0].as_str() {
        "messages" => {
            for name in &w[1..] {
                if g.messages.contains(name) {
                    return Err(format!("spoe-message '{name}' already used."));
                }
                g.messages.push(name.clone());
            }
            Ok(())
        }
        other => Err(format!("unknown keyword '{other}' in spoe-group section.")),
    }
}

#[cfg(test)]
mod tests;
