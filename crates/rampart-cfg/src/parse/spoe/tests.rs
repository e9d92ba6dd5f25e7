use crate::diag::Level;
use crate::model::{FilterKind, SpoeConf, SpoeEvent};
use crate::LexCtx;

/// Parses a haproxy.cfg whose `filter spoe` names a file holding `spoe`.
fn load(engine: &str, spoe: &str) -> (Option<SpoeConf>, Vec<String>, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("rampart-spoe-cfg-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("spoe.conf");
    std::fs::write(&path, spoe).unwrap();
    let cfg = format!(
        "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\nfrontend f\n bind :80\n filter spoe {engine} config {}\n default_backend b\nbackend b\nbackend agents\n mode tcp\n",
        path.display()
    );
    let ctx = LexCtx { env: &|_| None, version: "2.6.12", features: &[] };
    let loaded = crate::parse_str("t.cfg", &cfg, &ctx);
    let _ = std::fs::remove_dir_all(&dir);
    let pick = |l: Level| loaded.diags.list.iter().filter(|d| d.level == l).map(|d| d.render(0)).collect::<Vec<_>>();
    let conf = loaded.config.and_then(|c| {
        c.proxies[0].filters.iter().find_map(|f| match &f.kind {
            FilterKind::Spoe(s) => s.conf.as_deref().cloned(),
            _ => None,
        })
    });
    (conf, pick(Level::Alert), pick(Level::Warning))
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

const FULL: &str = "\
[other]
spoe-agent nope
    use-backend missing
[iprep]
spoe-agent iprep-agent
    messages check-client-ip
    groups g1
    option var-prefix iprep
    option set-on-error err
    option set-process-time ptime
    option set-total-time ttime
    option continue-on-error
    no option pipelining
    maxconnrate 10
    maxerrrate 5
    max-frame-size 1024
    max-waiting-frames 4
    timeout hello 2s
    timeout idle 2m
    timeout processing 10ms
    use-backend agents
    register-var-names ip_score
    log global
spoe-message check-client-ip
    args ip=src hdr=req.hdr(host) src_port
    event on-frontend-http-request if { src 127.0.0.1 }
spoe-message in-group
    args path
spoe-group g1
    messages in-group
";

#[test]
fn an_engine_scope_is_read_with_every_keyword() {
    let (conf, alerts, warnings) = load("engine iprep", FULL);
    assert!(alerts.is_empty(), "{alerts:?}");
    // the limits rampart parses but does not enforce yet are each said at startup
    let unenforced: Vec<&str> = ["maxconnrate", "maxerrrate", "max-waiting-frames", "register-var-names"]
        .into_iter()
        .filter(|kw| warnings.iter().any(|w| w.contains(&format!("'{kw}' is not enforced yet"))))
        .collect();
    assert_eq!(unenforced.len(), 4, "{warnings:?}");
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    let c = conf.expect("engine loaded");
    assert_eq!(c.id, "iprep");
    let a = &c.agent;
    assert_eq!((a.id.as_str(), a.var_prefix.as_str(), a.use_backend.as_str()), ("iprep-agent", "iprep", "agents"));
    assert_eq!(a.set_on_error.as_deref(), Some("err"));
    assert_eq!((a.set_process_time.as_deref(), a.set_total_time.as_deref()), (Some("ptime"), Some("ttime")));
    assert!(a.continue_on_error && !a.pipelining && a.async_ && a.log_global);
    assert_eq!((a.maxconnrate, a.maxerrrate, a.max_frame_size, a.max_waiting_frames), (10, 5, 1024, 4));
    assert_eq!(a.timeout_processing, Some(std::time::Duration::from_millis(10)));
    assert_eq!(a.register_var_names, ["ip_score"]);
    assert_eq!(c.messages.len(), 2);
    let m = &c.messages[0];
    assert_eq!(m.event, Some(SpoeEvent::FrontendHttpRequest));
    assert_eq!(m.cond.as_ref().map(|c| c.words.join(" ")).as_deref(), Some("{ src 127.0.0.1 }"));
    let args: Vec<_> = m.args.iter().map(|a| (a.name.as_str(), a.expr.as_str())).collect();
    assert_eq!(args, [("ip", "src"), ("hdr", "req.hdr(host)"), ("", "src_port")]);
    assert_eq!((c.groups[0].name.as_str(), c.groups[0].messages.as_slice()), ("g1", &[1][..]));
}

#[test]
fn without_engine_only_the_lines_outside_scopes_count_and_prefix_defaults_to_the_agent() {
    let text = "spoe-agent a\n messages m\n use-backend agents\n timeout hello 1s\n timeout idle 1s\n timeout processing 1s\nspoe-message m\n args src\n event on-frontend-http-request\n[x]\nspoe-agent other\n";
    let (conf, alerts, _) = load("", text);
    assert!(alerts.is_empty(), "{alerts:?}");
    let c = conf.unwrap();
    assert_eq!((c.id.as_str(), c.agent.var_prefix.as_str()), ("a", "a"));
}

#[test]
fn errors_point_at_the_spoe_file_lines() {
    let text = "spoe-agent a\n use-backend agents\n option bogus\n timeout foo 1s\n max-frame-size 10\n option force-set-var\n log 127.0.0.1 local0\nspoe-message m\n event on-nothing\n args\n acl a src 1.2.3.4\nspoe-group g\n bar\n";
    let (conf, alerts, _) = load("", text);
    assert!(conf.is_none());
    let has = |line: u32, what: &str| {
        assert!(
            alerts.iter().any(|a| a.contains(&format!("spoe.conf:{line}] : ")) && a.contains(what)),
            "line {line} '{what}' not in {alerts:#?}"
        )
    };
    has(3, "option 'bogus' is not supported for spoe-agent section.");
    has(4, "'timeout' supports 'hello', 'idle' or 'processing'");
    has(5, "'max-frame-size' expects a value between 256 and 16380");
    has(6, "'option force-set-var' is not supported yet");
    has(7, "'log 127.0.0.1 local0' is not supported yet");
    has(9, "unknown event 'on-nothing'.");
    has(11, "is not supported yet");
    has(13, "unknown keyword 'bar' in spoe-group section.");
    assert!(alerts.iter().any(|a| a.contains("Error(s) found in configuration file")), "{alerts:#?}");
}

#[test]
fn missing_pieces_are_refused() {
    let (_, alerts, _) = load("", "spoe-agent a\n timeout hello 1s\n");
    assert!(alerts.iter().any(|a| a.contains("No backend declared for SPOE agent 'a'")), "{alerts:?}");
    let (_, alerts, _) = load("engine e", "spoe-agent a\n use-backend agents\n");
    assert!(alerts.iter().any(|a| a.contains("No SPOE agent found in file")), "{alerts:?}");
    let (_, alerts, warnings) = load("", "spoe-agent a\n use-backend b2\n messages x\n");
    assert!(alerts.iter().any(|a| a.contains("undefined SPOE message 'x'")), "{alerts:?} {warnings:?}");
    let (_, alerts, _) = load("", "spoe-agent a\n use-backend nope\n");
    assert!(alerts.iter().any(|a| a.contains("unable to find the backend 'nope'")), "{alerts:?}");
    let (_, _, warnings) = load("", "spoe-agent a\n use-backend agents\n");
    assert!(warnings.iter().any(|w| w.contains("missing timeouts")), "{warnings:?}");
}

#[test]
fn filter_line_is_checked() {
    assert_eq!(super::parse_filter_line(&words("filter spoe")).unwrap_err(), "'spoe' : missing config file");
    assert_eq!(
        super::parse_filter_line(&words("filter spoe engine")).unwrap_err(),
        "'spoe' : 'engine' option without value"
    );
    assert_eq!(super::parse_filter_line(&words("filter spoe foo x")).unwrap_err(), "'spoe' : unknown keyword 'foo'");
    let f = super::parse_filter_line(&words("filter spoe engine e config /x")).unwrap();
    assert_eq!((f.engine.as_deref(), f.file.as_str()), (Some("e"), "/x"));
}

fn words(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_owned).collect()
}

#[test]
fn keywords_the_tables_mark_not_yet_are_refused() {
    use crate::kw::{Support, SPOE_AGENT, SPOE_MESSAGE};
    for k in SPOE_AGENT.iter().filter(|k| k.support == Support::No) {
        let line = k.name.replace("<target> ...", "127.0.0.1 local0");
        let text = format!("spoe-agent a\n use-backend agents\n {line} x\n");
        let (conf, alerts, _) = load("", &text);
        assert!(conf.is_none(), "{line}");
        assert!(alerts.iter().any(|a| a.contains("is not supported yet")), "{line}: {alerts:?}");
    }
    for k in SPOE_MESSAGE.iter().filter(|k| k.support == Support::No) {
        let text = format!("spoe-agent a\n use-backend agents\nspoe-message m\n {} x src\n", k.name);
        let (_, alerts, _) = load("", &text);
        assert!(alerts.iter().any(|a| a.contains("is not supported yet")), "{}: {alerts:?}", k.name);
    }
}
