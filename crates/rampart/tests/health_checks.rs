//! Health checks end to end: servers that go down and come back (listener closed,
//! accept-and-never-answer, wrong status, wrong body), the exact rise/fall sequence of
//! messages, traffic avoiding a DOWN server, 503 when none is left, and the same
//! messages as haproxy for the same events.

mod check_backend;

use std::time::{Duration, Instant};

use check_backend::{FlappyBackend, Mode};
use rampart_testkit::{haproxy_or_skip, http_get, patience, socat, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

const DEFAULTS: &str = "defaults\n mode http\n timeout client 5s\n timeout server 5s\n timeout connect 1s\n";

fn start(binary: &str, backends: &[(&str, std::net::SocketAddr)], body: &str) -> Running {
    let mut p = Proxy::new(binary).listener("fe1").config(&format!("{DEFAULTS}{body}"));
    for (name, addr) in backends {
        p = p.backend(name, *addr);
    }
    p.start().expect("proxy starts")
}

/// The check and state lines of the output, without the pid and durations.
fn check_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.contains("check for") || l.contains("Server ") || l.contains("has no server available"))
        .map(normalize)
        .collect()
}

fn normalize(line: &str) -> String {
    let line = match (line.find('('), line.find(") : ")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &line[..a], &line[b + 4..]),
        _ => line.to_owned(),
    };
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some(i) = rest.find("duration: ") {
        out.push_str(&rest[..i + 10]);
        rest = &rest[i + 10..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        out.push('N');
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// An address that refuses connections for the whole test: port 1, which no test
/// binds (a released ephemeral port may be taken by a parallel test meanwhile).
fn refused() -> std::net::SocketAddr {
    "127.0.0.1:1".parse().expect("address")
}

/// Waits until the output holds `needle`; the time it took.
fn wait_for(proxy: &Running, needle: &str) -> Duration {
    let t = Instant::now();
    assert!(proxy.wait_output(needle, patience() * 2), "no {needle:?} in:\n{}", proxy.output());
    t.elapsed()
}

fn bodies(proxy: &Running, n: usize) -> Vec<String> {
    (0..n).map(|_| String::from_utf8_lossy(&http_get(proxy.addr("fe1"), "/").body).into_owned()).collect()
}

#[test]
fn tcp_check_goes_down_after_fall_failures_and_up_after_rise_successes() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let s2 = FlappyBackend::start("s2", Mode::Up);
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("s2", s2.addr())],
        "listen fe1\n bind fd@${fe1}\n option log-health-checks\n\
         server s1 ${s1_addr}:${s1_port} check inter 100ms rise 2 fall 3\n\
         server s2 ${s2_addr}:${s2_port} check inter 100ms rise 2 fall 3\n",
    );
    wait_for(&proxy, "Health check for server fe1/s1 succeeded, reason: Layer4 check passed, check duration: ");
    let before = proxy.output().lines().count();
    s1.set(Mode::Refuse);
    let took = wait_for(&proxy, "Server fe1/s1 is DOWN.");
    // three failures at `inter` (fully UP: no fastinter) take at least two intervals
    assert!(took >= Duration::from_millis(150), "DOWN after only {took:?}");
    assert!(took < Duration::from_millis(2000), "DOWN after {took:?}");
    let after: Vec<String> = proxy.output().lines().skip(before).map(normalize).filter(|l| l.contains("s1")).collect();
    let refused = "reason: Layer4 connection problem, info: \"Connection refused\", check duration: Nms";
    assert_eq!(
        after[..4],
        [
            format!("[WARNING]  Health check for server fe1/s1 failed, {refused}, status: 2/3 UP."),
            format!("[WARNING]  Health check for server fe1/s1 failed, {refused}, status: 1/3 UP."),
            format!("[WARNING]  Health check for server fe1/s1 failed, {refused}, status: 0/2 DOWN."),
            "[WARNING]  Server fe1/s1 is DOWN. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.".to_owned(),
        ]
    );
    assert_eq!(bodies(&proxy, 6), ["s2"; 6], "a DOWN server takes no traffic");
    let before = proxy.output().lines().count();
    s1.set(Mode::Up);
    wait_for(&proxy, "Server fe1/s1 is UP.");
    let after: Vec<String> = proxy.output().lines().skip(before).map(normalize).filter(|l| l.contains("s1")).collect();
    let passed = "reason: Layer4 check passed, check duration: Nms";
    assert_eq!(
        after[..3],
        [
            format!("[WARNING]  Health check for server fe1/s1 succeeded, {passed}, status: 1/2 DOWN."),
            format!("[WARNING]  Health check for server fe1/s1 succeeded, {passed}, status: 3/3 UP."),
            "[WARNING]  Server fe1/s1 is UP. 2 active and 0 backup servers online. 0 sessions requeued, 0 total in queue.".to_owned(),
        ]
    );
    let got = bodies(&proxy, 4);
    assert!(got.contains(&"s1".to_owned()) && got.contains(&"s2".to_owned()), "{got:?}");
}

#[test]
fn checks_run_at_inter_downinter_and_fastinter() {
    let s1 = FlappyBackend::start("s1", Mode::Status500);
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr())],
        "listen fe1\n bind fd@${fe1}\n option httpchk GET /\n\
         server s1 ${s1_addr}:${s1_port} check inter 300ms fastinter 40ms downinter 150ms rise 3\n",
    );
    wait_for(&proxy, "Server fe1/s1 is DOWN");
    rampart_testkit::eventually!(s1.accepts().len() >= 4, "{} checks", s1.accepts().len());
    let gaps = |t: &[Instant]| t.windows(2).map(|w| w[1] - w[0]).collect::<Vec<Duration>>();
    // fully DOWN: every `downinter`
    let down = gaps(&s1.accepts()[..4]);
    for g in &down[1..] {
        assert!(*g >= Duration::from_millis(140) && *g < Duration::from_millis(450), "{down:?}");
    }
    s1.set(Mode::Up);
    wait_for(&proxy, "Server fe1/s1 is UP");
    let n = s1.accepts().len();
    rampart_testkit::eventually!(s1.accepts().len() >= n + 3, "{} checks", s1.accepts().len());
    let t = s1.accepts();
    // the three successes that brought it UP came at `fastinter`
    let rising = gaps(&t[n - 3..n]);
    for g in &rising {
        assert!(*g >= Duration::from_millis(35) && *g < Duration::from_millis(140), "{rising:?}");
    }
    // then fully UP: every `inter`
    let up = gaps(&t[n..n + 3]);
    for g in &up {
        assert!(*g >= Duration::from_millis(290) && *g < Duration::from_millis(800), "{up:?}");
    }
}

#[test]
fn http_check_wrong_status_body_and_timeout() {
    let s1 = FlappyBackend::start("s1", Mode::Status500);
    let s2 = FlappyBackend::start("s2", Mode::WrongBody);
    let s3 = FlappyBackend::start("s3", Mode::Hang);
    let s4 = FlappyBackend::start("s4", Mode::Up);
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("s2", s2.addr()), ("s3", s3.addr()), ("s4", s4.addr())],
        "frontend fe1\n bind fd@${fe1}\n default_backend b1\n\
         backend b1\n option httpchk GET /health\n server s1 ${s1_addr}:${s1_port} check inter 100ms\n\
         backend b2\n option httpchk GET /health\n http-check expect string s2\n server s2 ${s2_addr}:${s2_port} check inter 100ms\n\
         backend b3\n timeout check 200ms\n option httpchk GET /health\n server s3 ${s3_addr}:${s3_port} check inter 100ms\n\
         backend b4\n option httpchk GET /health\n http-check expect status 200\n server s4 ${s4_addr}:${s4_port} check inter 100ms\n",
    );
    wait_for(&proxy, "Server b1/s1 is DOWN, reason: Layer7 wrong status, code: 500, info: \"Internal Server Error\"");
    wait_for(
        &proxy,
        "Server b2/s2 is DOWN, reason: Layer7 invalid response, info: \"HTTP content check did not match\"",
    );
    let took = wait_for(&proxy, "Server b3/s3 is DOWN, reason: Layer7 timeout, check duration: ");
    assert!(took < Duration::from_secs(3), "{took:?}");
    wait_for(&proxy, "backend 'b1' has no server available!");
    // b1 has no server left: 503
    let r = http_get(proxy.addr("fe1"), "/");
    assert_eq!(r.status, 503);
    // the timed-out check gave up after `timeout check`, not `inter`
    let line = proxy.output().lines().find(|l| l.contains("b3/s3 is DOWN")).unwrap_or_default().to_owned();
    let ms: u64 =
        line.split("duration: ").nth(1).and_then(|r| r.split("ms").next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!((150..1500).contains(&ms), "{line}");
    assert!(!proxy.output().contains("b4/s4 is DOWN"), "{}", proxy.output());
    // the request HAProxy sends
    s2.set(Mode::Up);
    wait_for(&proxy, "Server b2/s2 is UP, reason: Layer7 check passed, code: 200, check duration: ");
}

#[test]
fn backup_server_takes_over_when_the_active_one_is_down() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let s2 = FlappyBackend::start("s2", Mode::Up);
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("s2", s2.addr())],
        "listen fe1\n bind fd@${fe1}\n server s1 ${s1_addr}:${s1_port} check inter 100ms fall 1\n\
         server s2 ${s2_addr}:${s2_port} backup\n",
    );
    assert_eq!(bodies(&proxy, 3), ["s1"; 3]);
    s1.set(Mode::Refuse);
    wait_for(
        &proxy,
        "Server fe1/s1 is DOWN, reason: Layer4 connection problem, info: \"Connection refused\", check duration: ",
    );
    assert!(
        proxy.output().contains("0 active and 1 backup servers left. Running on backup. 0 sessions active"),
        "{}",
        proxy.output()
    );
    assert_eq!(bodies(&proxy, 3), ["s2"; 3]);
}

#[test]
fn disabled_servers_and_no_check_are_left_alone() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("s2", refused())],
        "listen fe1\n bind fd@${fe1}\n default-server check inter 100ms\n\
         server s1 ${s1_addr}:${s1_port} no-check\n server s2 ${s2_addr}:${s2_port} disabled\n",
    );
    assert_eq!(bodies(&proxy, 3), ["s1"; 3]);
    let conns = s1.accepts().len();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(s1.accepts().len(), conns, "no check on a no-check server");
    assert!(!proxy.output().contains("is DOWN"), "a server in maintenance reports nothing: {}", proxy.output());
}

/// The same events through haproxy and rampart print the same lines (durations aside).
/// The 1s interval of b1 spreads the first checks 200ms apart (its active server is
/// reported DOWN before its backup, whatever the load).
#[test]
fn messages_match_haproxy() {
    let Some(haproxy) = haproxy_or_skip("messages_match_haproxy") else { return };
    let cfg = "global\n spread-checks 0\n\
               frontend fe1\n bind fd@${fe1}\n default_backend b1\n\
               backend b1\n server s1 ${s1_addr}:${s1_port} check inter 1s\n server s2 ${s2_addr}:${s2_port} check inter 1s backup\n\
               backend b2\n option httpchk GET /\n server s3 ${s3_addr}:${s3_port} check inter 100ms\n\
               backend b3\n option httpchk GET /\n http-check expect ! string nope\n http-check expect comment mine status 200\n server s4 ${s4_addr}:${s4_port} check inter 100ms\n\
               backend l4\n option log-health-checks\n server s5 ${s5_addr}:${s5_port} check inter 100ms rise 1 fall 2\n";
    let run = |binary: &str| {
        let s3 = FlappyBackend::start("s3", Mode::Status500);
        let s4 = FlappyBackend::start("s4", Mode::WrongBody);
        let s5 = FlappyBackend::start("s5", Mode::Up);
        let proxy = start(
            binary,
            &[("s1", refused()), ("s2", refused()), ("s3", s3.addr()), ("s4", s4.addr()), ("s5", s5.addr())],
            cfg,
        );
        wait_for(&proxy, "Health check for server l4/s5 succeeded");
        std::thread::sleep(Duration::from_millis(300));
        s5.set(Mode::Refuse);
        wait_for(&proxy, "Server l4/s5 is DOWN");
        s5.set(Mode::Up);
        wait_for(&proxy, "Server l4/s5 is UP");
        wait_for(&proxy, "Server b2/s3 is DOWN");
        wait_for(&proxy, "Server b3/s4 is DOWN");
        for be in ["b2", "b3"] {
            wait_for(&proxy, &format!("backend '{be}' has no server available!"));
        }
        let mut lines = check_lines(&proxy.output());
        lines.sort();
        lines
    };
    let ours = run(RAMPART);
    let theirs = run(haproxy.to_str().expect("utf-8 path"));
    assert_eq!(ours, theirs);
    assert!(ours.len() >= 8, "{ours:#?}");
    assert!(ours.iter().any(|l| l == "[ALERT]    backend 'b2' has no server available!"), "{ours:#?}");
}

/// `option tcp-check` and `option redis-check` against an echo server, through both
/// binaries (rampart alone when haproxy is missing).
#[test]
fn tcp_check_rules_and_redis_check() {
    let cfg = "frontend fe1\n bind fd@${fe1}\n default_backend b1\n\
               backend b1\n option log-health-checks\n option tcp-check\n tcp-check send PONG\\r\\n\n\
               tcp-check expect string PONG\n server s1 ${s1_addr}:${s1_port} check inter 100ms\n\
               backend b2\n timeout check 2s\n option tcp-check\n tcp-check comment greeting\n tcp-check send xyzw\\r\\n\n\
               tcp-check expect min-recv 3 string nope comment bad\n server s2 ${s2_addr}:${s2_port} check inter 100ms\n\
               backend b3\n timeout check 200ms\n option redis-check\n server s3 ${s3_addr}:${s3_port} check inter 100ms\n\
               backend b4\n option tcp-check\n tcp-check connect port 1\n server s4 ${s4_addr}:${s4_port} check inter 100ms\n";
    let run = |binary: &str| {
        let echo = [(); 3].map(|()| rampart_testkit::TcpEchoBackend::start());
        let (a, b, c) = (echo[0].addr(), echo[1].addr(), echo[2].addr());
        let proxy = start(binary, &[("s1", a), ("s2", b), ("s3", c), ("s4", refused())], cfg);
        wait_for(&proxy, "Health check for server b1/s1 succeeded");
        wait_for(&proxy, "Server b2/s2 is DOWN");
        wait_for(&proxy, "Server b3/s3 is DOWN");
        wait_for(&proxy, "Server b4/s4 is DOWN");
        for be in ["b2", "b3", "b4"] {
            wait_for(&proxy, &format!("backend '{be}' has no server available!"));
        }
        let mut lines: Vec<String> =
            check_lines(&proxy.output()).into_iter().filter(|l| !l.contains("b1/s1 succeeded")).collect();
        lines.sort();
        lines
    };
    let ours = run(RAMPART);
    let expected = [
        "[ALERT]    backend 'b2' has no server available!",
        "[ALERT]    backend 'b3' has no server available!",
        "[ALERT]    backend 'b4' has no server available!",
        "[WARNING]  Server b2/s2 is DOWN, reason: Layer7 invalid response, info: \"TCPCHK did not match content 'nope' at step 3 comment: bad\", check duration: Nms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
        "[WARNING]  Server b3/s3 is DOWN, reason: Layer7 timeout, check duration: Nms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
        "[WARNING]  Server b4/s4 is DOWN, reason: Layer4 connection problem, info: \"Connection refused at step 1 of tcp-check (connect port 1)\", check duration: Nms. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
    ];
    assert_eq!(ours, expected);
    let Some(haproxy) = haproxy_or_skip("tcp_check_rules_and_redis_check") else { return };
    assert_eq!(run(haproxy.to_str().expect("utf-8 path")), ours);
}

/// An agent takes a server down and brings it back; its weight words change the
/// effective weight (a weight of 0 leaves the backend without server).
#[test]
fn agent_check_changes_state_and_weight() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let s2 = FlappyBackend::start("s2", Mode::Up);
    let agent = check_backend::AgentBackend::start("up\n");
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("s2", s2.addr()), ("a1", agent.addr())],
        "listen fe1\n bind fd@${fe1}\n\
         server s1 ${s1_addr}:${s1_port} agent-check agent-addr ${a1_addr} agent-port ${a1_port} agent-inter 100ms\n\
         server s2 ${s2_addr}:${s2_port}\n",
    );
    agent.say("down # disk full\n");
    wait_for(
        &proxy,
        "Server fe1/s1 is DOWN, reason: Layer7 wrong status, code: 0, info: \"via agent : down (disk full)\", check duration: ",
    );
    assert_eq!(bodies(&proxy, 4), ["s2"; 4]);
    agent.say("UP 100%\n");
    wait_for(
        &proxy,
        "Server fe1/s1 is UP, reason: Layer7 check passed, code: 0, info: \"via agent : UP\", check duration: ",
    );
    let got = bodies(&proxy, 4);
    assert!(got.contains(&"s1".to_owned()), "{got:?}");
    // an agent that stops answering does not take the server down
    drop(agent);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(proxy.output().matches("fe1/s1 is DOWN").count(), 1, "{}", proxy.output());
}

#[test]
fn agent_weight_zero_leaves_no_server() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let agent = check_backend::AgentBackend::start("50%\n");
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("a1", agent.addr())],
        "listen fe1\n bind fd@${fe1}\n option log-health-checks\n\
         server s1 ${s1_addr}:${s1_port} agent-check agent-port ${a1_port} agent-addr ${a1_addr} agent-inter 100ms\n",
    );
    // 50% of weight 1 is 0: the backend has no server with a weight left
    wait_for(&proxy, "proxy 'fe1' has no server available!");
    assert!(!proxy.output().contains("is DOWN"), "{}", proxy.output());
    assert_eq!(http_get(proxy.addr("fe1"), "/").status, 503, "no weight left: no server to pick");
    agent.say("100%\n");
    rampart_testkit::eventually!(http_get(proxy.addr("fe1"), "/").status == 200);
}

/// `observe layer7`: a server answering 500s goes DOWN after `error-limit` of them,
/// with the same message as haproxy's (the stream that saw the last 500 still counts as
/// a session on the server, there too).
#[test]
fn observe_layer7_marks_a_failing_server_down() {
    let cfg = "listen fe1\n bind fd@${fe1}\n balance roundrobin\n\
               server s1 ${s1_addr}:${s1_port} check inter 10s observe layer7 error-limit 3 on-error mark-down\n\
               server s2 ${s2_addr}:${s2_port} check inter 10s observe layer7 error-limit 3 on-error mark-down\n";
    let run = |binary: &str| {
        let s1 = FlappyBackend::start("s1", Mode::Status500);
        let s2 = FlappyBackend::start("s2", Mode::Up);
        let proxy = start(binary, &[("s1", s1.addr()), ("s2", s2.addr())], cfg);
        // round robin: s1 answers every other request, until it is DOWN
        let statuses: Vec<u16> = (0..10).map(|_| http_get(proxy.addr("fe1"), "/").status).collect();
        wait_for(&proxy, "Server fe1/s1 is DOWN");
        let lines = check_lines(&proxy.output());
        (statuses, lines)
    };
    let (statuses, ours) = run(RAMPART);
    assert_eq!(statuses.iter().filter(|&&s| s == 500).count(), 3, "{statuses:?}");
    assert_eq!(
        ours,
        ["[WARNING]  Server fe1/s1 is DOWN, reason: Health analyze, info: \"Detected 3 consecutive errors, last one was: \
          Wrong http response\". 1 active and 0 backup servers left. 1 sessions active, 0 requeued, 0 remaining in queue."]
    );
    let Some(haproxy) = haproxy_or_skip("observe_layer7_marks_a_failing_server_down") else { return };
    let (theirs_statuses, theirs) = run(haproxy.to_str().expect("utf-8 path"));
    assert_eq!((statuses, ours), (theirs_statuses, theirs));
}

/// `track`: servers follow the state of the server they track, across backends and
/// along a chain, with HAProxy's ` via be/srv` messages; traffic avoids them too.
#[test]
fn tracking_servers_follow_the_tracked_one() {
    let cfg = "frontend fe1\n bind fd@${fe1}\n default_backend c\n\
               backend b\n server s1 ${s1_addr}:${s1_port} check inter 100ms fall 1\n\
               server s3 ${s1_addr}:${s1_port} track s1\n\
               backend c\n server s4 ${s1_addr}:${s1_port} track b/s3\n server s5 ${s5_addr}:${s5_port}\n";
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let s5 = FlappyBackend::start("s5", Mode::Up);
    let proxy = start(RAMPART, &[("s1", s1.addr()), ("s5", s5.addr())], cfg);
    rampart_testkit::eventually!(s1.accepts().len() >= 2);
    s1.set(Mode::Refuse);
    wait_for(&proxy, "Server c/s4 is DOWN via b/s3. 1 active and 0 backup servers left.");
    assert_eq!(
        check_lines(&proxy.output()),
        [
            "[WARNING]  Server b/s1 is DOWN, reason: Layer4 connection problem, info: \"Connection refused\", check duration: Nms. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
            "[WARNING]  Server b/s3 is DOWN via b/s1. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
            "[ALERT]    backend 'b' has no server available!",
            "[WARNING]  Server c/s4 is DOWN via b/s3. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
        ]
    );
    assert_eq!(bodies(&proxy, 4), ["s5"; 4]);
    s1.set(Mode::Up);
    wait_for(&proxy, "Server c/s4 is UP via b/s3. 2 active and 0 backup servers online.");
}

/// An agent's `drain`, `maint` and `ready` print haproxy's messages (compared with
/// haproxy 2.6.12's for the same replies), and its `maxconn:` sets the server's limit.
#[test]
fn agent_admin_words_print_haproxys_messages() {
    let Some(haproxy) = haproxy_or_skip("agent_admin_words_print_haproxys_messages") else { return };
    let cfg = "global\n stats socket ${testdir}/admin.sock level admin\n\
               listen fe1\n bind fd@${fe1}\n\
               server s1 ${s1_addr}:${s1_port} agent-check agent-addr ${a1_addr} agent-port ${a1_port} agent-inter 100ms\n\
               server s2 ${s2_addr}:${s2_port}\n";
    let run = |binary: &str| {
        let s1 = FlappyBackend::start("s1", Mode::Up);
        let s2 = FlappyBackend::start("s2", Mode::Up);
        let agent = check_backend::AgentBackend::start("ready maxconn:7\n");
        let proxy = start(binary, &[("s1", s1.addr()), ("s2", s2.addr()), ("a1", agent.addr())], cfg);
        let admin = proxy.dir().join("admin.sock");
        rampart_testkit::eventually!(stat_row(&admin, "fe1/s1")["slim"] == "7");
        agent.say("drain\n");
        wait_for(&proxy, "Server fe1/s1 enters drain state");
        agent.say("maint\n");
        wait_for(&proxy, "Server fe1/s1 is going DOWN for maintenance");
        agent.say("ready\n");
        wait_for(&proxy, "Server fe1/s1 is UP/READY (leaving forced maintenance)");
        check_lines(&proxy.output())
    };
    let ours = run(RAMPART);
    let theirs = run(haproxy.to_str().expect("utf-8 path"));
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), 3, "{ours:#?}");
}

/// A tracked server's maintenance passes down the tracking chain, with haproxy's
/// messages (the same events through haproxy 2.6.12 printed these lines).
#[test]
fn tracking_servers_inherit_maintenance() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr())],
        "global\n stats socket ${testdir}/admin.sock level admin\n\
         listen fe1\n bind fd@${fe1}\n server s1 ${s1_addr}:${s1_port} check inter 100ms\n\
         server s3 ${s1_addr}:${s1_port} track s1\n\
         backend c\n server s4 ${s1_addr}:${s1_port} track fe1/s3\n",
    );
    let admin = proxy.dir().join("admin.sock");
    rampart_testkit::eventually!(s1.accepts().len() >= 2);
    assert_eq!(socat(&admin, "disable server fe1/s1\n"), "\n");
    wait_for(&proxy, "Server c/s4 is going DOWN for maintenance via fe1/s3.");
    // admin state IMAINT (2) on the trackers
    assert!(state_line(&admin, "s3").starts_with("0 2 "), "{}", state_line(&admin, "s3"));
    assert_eq!(socat(&admin, "enable server fe1/s1\n"), "\n");
    wait_for(&proxy, "Server c/s4 is UP/READY (leaving maintenance).");
    assert_eq!(
        check_lines(&proxy.output()),
        [
            "[WARNING]  Server fe1/s1 is going DOWN for maintenance. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
            "[WARNING]  Server fe1/s3 is going DOWN for maintenance via fe1/s1. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
            "[ALERT]    proxy 'fe1' has no server available!",
            "[WARNING]  Server c/s4 is going DOWN for maintenance via fe1/s3. 0 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
            "[ALERT]    backend 'c' has no server available!",
            "[WARNING]  Server fe1/s1 is UP/READY (leaving forced maintenance).",
            "[WARNING]  Server fe1/s3 is UP/READY (leaving maintenance).",
            "[WARNING]  Server c/s4 is UP/READY (leaving maintenance).",
        ]
    );
    assert!(state_line(&admin, "s3").starts_with("2 0 "), "{}", state_line(&admin, "s3"));
}

/// `slowstart`: a server back UP gets a small share of the traffic first, its full
/// share once the slow start is over.
#[test]
fn slowstart_ramps_the_weight_up() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let s2 = FlappyBackend::start("s2", Mode::Up);
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("s2", s2.addr())],
        "listen fe1\n bind fd@${fe1}\n http-reuse never\n option httpclose\n\
         server s1 ${s1_addr}:${s1_port} weight 10 check inter 100ms rise 1 fall 1 slowstart 3s\n\
         server s2 ${s2_addr}:${s2_port} weight 10\n",
    );
    s1.set(Mode::Refuse);
    wait_for(&proxy, "Server fe1/s1 is DOWN");
    s1.set(Mode::Up);
    wait_for(&proxy, "Server fe1/s1 is UP");
    let early = bodies(&proxy, 20).iter().filter(|b| *b == "s1").count();
    assert!(early <= 6, "s1 got {early} of 20 requests right after coming back");
    std::thread::sleep(Duration::from_millis(3300));
    let later = bodies(&proxy, 20).iter().filter(|b| *b == "s1").count();
    assert!((8..=12).contains(&later), "s1 got {later} of 20 requests at full weight");
}

/// A TCP session through `fe1` that got one reply from server `name`; reading it
/// again blocks until the session ends.
fn open_session(proxy: &Running, name: &str) -> std::net::TcpStream {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(proxy.addr("fe1")).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(8))).expect("timeout");
    c.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").expect("send");
    let mut got = Vec::new();
    let mut chunk = [0u8; 512];
    while !got.ends_with(name.as_bytes()) {
        let n = c.read(&mut chunk).expect("reply");
        assert!(n > 0, "session closed before the reply");
        got.extend_from_slice(&chunk[..n]);
    }
    c
}

/// How long until the session ends (the client reads EOF or a reset).
fn time_to_close(mut c: std::net::TcpStream) -> Duration {
    use std::io::Read;
    let t = Instant::now();
    let mut chunk = [0u8; 64];
    while let Ok(n) = c.read(&mut chunk) {
        if n == 0 {
            break;
        }
    }
    t.elapsed()
}

/// `on-marked-down shutdown-sessions`: the sessions of a server that goes DOWN end at
/// once; `on-marked-up shutdown-backup-sessions`: those of the backup servers end when
/// an active server comes back. Without them a session lives on (the test server keeps
/// an idle connection 5 s).
#[test]
fn on_marked_down_and_up_cut_sessions() {
    let s1 = FlappyBackend::start("s1", Mode::Up);
    let s2 = FlappyBackend::start("s2", Mode::Up);
    let b1 = FlappyBackend::start("b1", Mode::Up);
    let proxy = Proxy::new(RAMPART)
        .listener("fe1")
        .listener("fe2")
        .backend("s1", s1.addr())
        .backend("s2", s2.addr())
        .backend("b1", b1.addr())
        .config(&format!(
            "{DEFAULTS}listen fe1\n mode tcp\n bind fd@${{fe1}}\n\
             server s1 ${{s1_addr}}:${{s1_port}} check inter 100ms rise 1 fall 1 \
             on-marked-down shutdown-sessions on-marked-up shutdown-backup-sessions\n\
             server b1 ${{b1_addr}}:${{b1_port}} backup\n\
             listen fe2\n mode tcp\n bind fd@${{fe2}}\n\
             server s2 ${{s2_addr}}:${{s2_port}} check inter 100ms rise 1 fall 1\n",
        ))
        .start()
        .expect("proxy starts");
    let cut = open_session(&proxy, "s1");
    s1.set(Mode::Refuse);
    wait_for(&proxy, "Server fe1/s1 is DOWN");
    let took = time_to_close(cut);
    assert!(took < Duration::from_secs(2), "the session to the DOWN server lasted {took:?} more");
    // traffic now on the backup; s1 coming back cuts that session
    let on_backup = open_session(&proxy, "b1");
    s1.set(Mode::Up);
    wait_for(&proxy, "Server fe1/s1 is UP");
    let took = time_to_close(on_backup);
    assert!(took < Duration::from_secs(2), "the backup session lasted {took:?} after s1 came back");
    // without the option, a session outlives its server's DOWN
    let mut c = std::net::TcpStream::connect(proxy.addr("fe2")).expect("connect");
    {
        use std::io::{Read, Write};
        c.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").expect("send");
        let mut chunk = [0u8; 512];
        assert!(c.read(&mut chunk).expect("reply") > 0);
    }
    s2.set(Mode::Refuse);
    wait_for(&proxy, "Server fe2/s2 is DOWN");
    let took = time_to_close(c);
    assert!(took > Duration::from_secs(3), "the session without on-marked-down ended after {took:?}");
}

// === the runtime API on the servers' state ===

/// The `show stat` row of `be/srv` as a column -> value map.
fn stat_row(sock: &std::path::Path, row: &str) -> std::collections::HashMap<String, String> {
    let out = socat(sock, "show stat\n");
    let mut lines = out.lines();
    let header: Vec<String> =
        lines.next().expect("header").trim_start_matches("# ").split(',').map(str::to_owned).collect();
    let line = lines.find(|l| l.starts_with(&format!("{},", row.replace('/', ",")))).expect("the row");
    header.into_iter().zip(line.split(',').map(str::to_owned)).collect()
}

/// The `show servers state` line of server `srv`, from its `srv_op_state` column on.
fn state_line(sock: &std::path::Path, srv: &str) -> String {
    let out = socat(sock, "show servers state fe1\n");
    let line = out.lines().find(|l| l.split(' ').nth(3) == Some(srv)).expect("the server's line").to_owned();
    line.split(' ').skip(5).collect::<Vec<_>>().join(" ")
}

/// Replaces `srv_time_since_last_change` (the 5th column of [`state_line`]) by `T`.
fn untimed(line: &str) -> String {
    line.split(' ').enumerate().map(|(i, w)| if i == 4 { "T" } else { w }).collect::<Vec<_>>().join(" ")
}

#[test]
fn disable_enable_and_forced_states_through_the_stats_socket() {
    let (s1, s2) = (FlappyBackend::start("s1", Mode::Up), FlappyBackend::start("s2", Mode::Up));
    let proxy = start(
        RAMPART,
        &[("s1", s1.addr()), ("s2", s2.addr())],
        "global\n stats socket ${testdir}/admin.sock level admin\n stats socket ${testdir}/user.sock level user\n\
         listen fe1\n bind fd@${fe1}\n balance roundrobin\n default-server check inter 100ms rise 1 fall 1\n\
         server s1 ${s1_addr}:${s1_port} rise 20\n server s2 ${s2_addr}:${s2_port} port ${s2_port}\n",
    );
    // s1's `rise 20`: once forced DOWN below, its checks need 2 s to bring it back, so the
    // state read right after cannot race them
    let (admin, user) = (proxy.dir().join("admin.sock"), proxy.dir().join("user.sock"));
    let deadline = Instant::now() + patience();
    while stat_row(&admin, "fe1/s2")["check_status"] != "L4OK" {
        assert!(Instant::now() < deadline, "no L4OK check on s2");
        std::thread::sleep(Duration::from_millis(50));
    }
    let port = s2.addr().port();
    assert_eq!(untimed(&state_line(&admin, "s2")), format!("2 0 1 1 T 6 3 1 6 0 0 0 - {port} - 0 {port} - - 0"));
    let row = stat_row(&admin, "fe1/s2");
    let cols = ["status", "check_status", "check_code", "chkfail", "chkdown", "check_health", "weight"];
    let values: Vec<&str> = cols.iter().map(|c| row[*c].as_str()).collect();
    assert_eq!(values, ["UP", "L4OK", "", "0", "0", "1", "1"]);

    // MAINT: level admin, HAProxy's message, the balancer leaves the server alone
    assert_eq!(socat(&user, "disable server fe1/s2\n"), "Permission denied\n\n");
    assert_eq!(socat(&admin, "disable server fe1\n"), "Require 'backend/server'.\n\n");
    assert_eq!(socat(&admin, "disable server fe1/nope\n"), "No such server.\n\n");
    assert_eq!(socat(&admin, "disable server fe1/s2\n"), "\n");
    wait_for(&proxy, "Server fe1/s2 is going DOWN for maintenance. 1 active and 0 backup servers left.");
    assert_eq!(untimed(&state_line(&admin, "s2")), format!("0 1 1 1 T 6 3 0 14 0 0 0 - {port} - 0 {port} - - 0"));
    assert_eq!(stat_row(&admin, "fe1/s2")["status"], "MAINT");
    assert_eq!(bodies(&proxy, 4), ["s1"; 4]);

    // back: UP/READY, and in rotation again
    assert_eq!(socat(&admin, "enable server fe1/s2\n"), "\n");
    wait_for(&proxy, "Server fe1/s2 is UP/READY (leaving forced maintenance).");
    assert!(bodies(&proxy, 4).contains(&"s2".to_owned()));

    // a forced health verdict, counted as HAProxy counts it
    assert_eq!(socat(&admin, "set server fe1/s1 health down\n"), "\n");
    wait_for(&proxy, "Server fe1/s1 is DOWN, changed from CLI. 1 active and 0 backup servers left.");
    let row = stat_row(&admin, "fe1/s1");
    // "DOWN", or "DOWN 1/20" once a check succeeded since
    assert!(row["status"].starts_with("DOWN"), "{}", row["status"]);
    assert_eq!(row["chkdown"], "1");
    assert_eq!(
        socat(&admin, "set server fe1/s1 health sideways\n"),
        "'set server <srv> health' expects 'up', 'stopping', or 'down'.\n\n"
    );
    assert_eq!(socat(&admin, "set server fe1/s1 agent up\n"), "agent checks are not enabled on this server.\n\n");

    // weights
    assert_eq!(socat(&user, "get weight fe1/s2\n"), "1 (initial 1)\n\n");
    assert_eq!(socat(&admin, "set weight fe1/s2 3\n"), "\n");
    assert_eq!(socat(&admin, "get weight fe1/s2\n"), "3 (initial 1)\n\n");
    assert_eq!(stat_row(&admin, "fe1/s2")["weight"], "3");
    assert_eq!(
        socat(&admin, "set server fe1/s2 weight 300\n"),
        "Absolute weight can only be between 0 and 256 inclusive.\n\n"
    );
    assert_eq!(socat(&admin, "set server fe1/s2 state drain\n"), "\n");
    assert_eq!(stat_row(&admin, "fe1/s2")["status"], "DRAIN");
}
