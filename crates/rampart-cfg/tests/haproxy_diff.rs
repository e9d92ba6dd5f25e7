//! Differential tests: the lexer and the condition evaluator against the real HAProxy 2.6
//! (`/usr/sbin/haproxy`, Debian's 2.6.12). Skipped when it is not installed.
//!
//! - `-cc <expr>`: exit status 0 (true), 1 (false) or 2 (error, with the same message).
//! - `-c -f <file>` on files made of directives and lexer errors: the same diagnostics.
//!   Every line the lexer hands over is out of any section, so HAProxy reports it as an
//!   unknown keyword, which shows its first word.
//!
//! Feature and OpenSSL predicates are left out: the two builds differ there on purpose.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use rampart_cfg::lexer::Lexer;
use rampart_cfg::{cond, Diags, Level, LexCtx};

/// Environment of both sides. Values stay shorter than the references to them because
/// `haproxy -cc` expands variables in place and corrupts its input otherwise.
fn env_vars() -> HashMap<&'static str, &'static str> {
    HashMap::from([
        ("RAMPART_T_NAME", "web"),
        ("RAMPART_T_EMPTY", ""),
        ("RAMPART_T_LIST", "a  b"),
        ("RAMPART_T_SP", " q"),
        ("RAMPART_T_ZERO", "0"),
    ])
}

/// A command running haproxy (`RAMPART_TEST_HAPROXY` or the installed one); a visible
/// skip without it, a failure under `RAMPART_REQUIRE_HAPROXY`.
fn haproxy() -> Option<Command> {
    let path = rampart_testkit::haproxy_or_skip("haproxy_diff")?;
    let mut cmd = Command::new(path);
    cmd.env_clear().env("PATH", "/usr/bin:/bin");
    cmd.envs(env_vars());
    Some(cmd)
}

fn with_ctx<T>(f: impl FnOnce(&LexCtx<'_>) -> T) -> T {
    let vars = env_vars();
    let env = move |name: &str| vars.get(name).map(|v| (*v).to_owned());
    let ctx = LexCtx { env: &env, version: "2.6.12", features: &["EPOLL", "POLL"] };
    f(&ctx)
}

/// The message of an `[ALERT]` line of HAProxy's stderr, after `config : `.
fn alert_text(stderr: &str) -> Option<String> {
    stderr.lines().find(|l| l.starts_with("[ALERT]")).and_then(|l| l.split_once(" : config : ")).map(|(_, m)| m.into())
}

#[test]
fn conditions_evaluate_as_haproxy_cc() {
    let Some(_) = haproxy() else { return };
    let long_and = vec!["1"; 1100].join("&&");
    let long_or = vec!["0"; 1022].join("||");
    let long_and_max = vec!["1"; 1022].join("&&");
    let long_and_over = vec!["1"; 1023].join("&&");
    let longer_or = vec!["0"; 1023].join("||");
    let deep = format!("{}1{}", "(".repeat(340), ")".repeat(340));
    let deeper = format!("{}1{}", "(".repeat(341), ")".repeat(341));
    let exprs: Vec<&str> = vec![
        "1",
        "0",
        "",
        " 1 ",
        "08",
        "0x10",
        "0x",
        "-1",
        "+0",
        "true",
        "!0",
        "! ! 1",
        "!!1",
        "!",
        "1 && ",
        "1 && 1 && ",
        "1 || ",
        "(1",
        "(",
        "()",
        "(0||1",
        "(1)(1)",
        "1 2",
        "1 & 1",
        "1 #x",
        "0 || 1 && 0",
        "(0 || 1) && 0",
        "1 ||0",
        "1&&0||1",
        "!(0||0)",
        "\" \"",
        "- 1",
        "+",
        "defined",
        "defined()",
        "defined(RAMPART_T_NAME)",
        "defined(RAMPART_T_EMPTY)",
        "defined(RAMPART_T_NOPE)",
        "defined (RAMPART_T_NAME)",
        "defined&&1",
        "defined(RAMPART_T_NAME)x",
        "defined(A,B)",
        "!defined(RAMPART_T_NOPE) && strneq(a,b)",
        "streq",
        "streq(a)",
        "streq(a,b,c)",
        "streq(a b,a b)",
        "streq(\"a,b\",\"a,b\")",
        "streq('a',\"a\")",
        "streq(a\\",
        "streq(a,\"b",
        "streq(a,'b)",
        "streq(a\\\\,,a,)",
        "streq(\\\"a,\"a)",
        "streq(\"${RAMPART_T_NAME}\",web)",
        "streq(${RAMPART_T_NAME},web)",
        "streq(\"${RAMPART_T_NOPE-dflt}\",dflt)",
        "streq(\"${RAMPART_T_LIST[*]}\",a b)",
        "\"${RAMPART_T_ZERO}\"",
        "\"${.LINE}\"",
        "streq(\"${.FILE-x}\",x)",
        "\"${RAMPART_T_NAME\"",
        "\"${RAMPART_T_NAME[x]}\"",
        "\"$1\"",
        "\\x4",
        "\\x31",
        "\\#",
        "version_atleast(2.6)",
        "version_atleast(2.6.13)",
        "version_before(2.6.13)",
        "version_atleast(abc)",
        "version_before(abc)",
        "version_atleast(2.6-dev)",
        "version_atleast(2.6.12-1)",
        "version_atleast(2.6.12-dev3)",
        "version_before(2.6.12-dev3)",
        "version_atleast(2.6.12.1)",
        "version_atleast(2.6.11-rc9)",
        "version_atleast(2.6.12-)",
        "version_atleast()",
        "version_before()",
        "version_atleast( 2.6)",
        "version_atleast(2..6)",
        "version_before(3)",
        "version_before(2.6.12-x-1)",
        "enabled(FOO)",
        "foo",
        "definedx(A)",
        "streq(\"a)",
        "streq(a,b))",
        "streq(a,b) &&",
        "(1 &&) || 1",
        "1 && 1 && ",
        "007",
        "00",
        "-0",
        "0x0",
        "+0",
        "42",
        "1 || 0 && 0",
        "0 || (1 && 1)",
        "\t1\t&&\t1",
        "1&&1||0",
        "defined(A=B)",
        "defined(RAMPART_T_NAME)&&",
        "streq(,)",
        "streq('\"a,b\"',\"'a,b'\")",
        r#"streq(\\"a,"a)"#,
        r#"streq(\\"a,"\a)"#,
        "streq(\u{e9},\u{e9})",
        "version_atleast(2.6.12-pre1)",
        "version_atleast(1.8)",
        "version_atleast(2.6.12)",
        "version_before(2.6.12)",
        "version_before(2.7-dev0)",
        "version_atleast(2.7-dev0)",
        "version_before(2.6.12.0.1)",
        "!!!!!!!!",
        "((((((",
        "))))",
        "&&||&&",
        "\\",
        "'",
        "0 && streq(a)",
        "1 || foo",
        "(1) && (0 || (1))",
        "! (0)",
        "!defined(RAMPART_T_EMPTY)",
        &long_and,
        &long_and_max,
        &long_and_over,
        &long_or,
        &longer_or,
        &deep,
        &deeper,
    ];
    let mut failures = Vec::new();
    for expr in exprs {
        let Some(mut cmd) = haproxy() else { return };
        let out = cmd.arg("-cc").arg(expr).output().expect("haproxy runs");
        let expected = match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(alert_text(&String::from_utf8_lossy(&out.stderr)).unwrap_or_default()),
        };
        let got = with_ctx(|ctx| cond::eval_str(expr, ctx));
        // rampart names the problem where HAProxy says "Unhandled error in condition".
        let unhandled = matches!(&expected, Err(m) if m.starts_with("Unhandled error"));
        if got != expected && !(unhandled && got.is_err()) {
            failures.push(format!("-cc {expr:.80}\n  haproxy: {expected:.200?}\n  rampart: {got:.200?}"));
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

/// Lexes `text` as rampart does, rendering what `haproxy -c` would print (see module doc).
fn rampart_diagnostics(name: &str, text: &str) -> Vec<String> {
    with_ctx(|ctx| {
        let file: Arc<str> = name.into();
        let mut diags = Diags::default();
        let mut lexer = Lexer::new(&file, text, ctx);
        while let Some(line) = lexer.next_line(&mut diags) {
            let msg = format!("unknown keyword '{}' out of section.", line.words[0]);
            diags.alert(&line.span, msg);
            lexer.count_fatal();
        }
        // HAProxy shows `.diag` only with -dD.
        let shown = diags.list.iter().filter(|d| d.level != Level::Diag);
        let rendered: String = shown.map(|d| d.render(0)).collect();
        rendered.lines().filter(|l| !l.starts_with("  hint: ")).map(normalize).collect()
    })
}

fn haproxy_diagnostics(cmd: &mut Command, path: &Path) -> Vec<String> {
    let out = cmd.arg("-c").arg("-f").arg(path).output().expect("haproxy runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let noise = ["haproxy version is", "path to executable", "Error(s) found", "Fatal errors found"];
    stderr.lines().filter(|l| !noise.iter().any(|n| l.contains(n))).map(normalize).collect()
}

/// Drops the pid and the space HAProxy omits before the colon in lexer messages.
fn normalize(line: &str) -> String {
    let line = match (line.find('('), line.find(") : ")) {
        (Some(a), Some(b)) if line.starts_with('[') && a < b => format!("{}{}", &line[..a], &line[b + 1..]),
        _ => line.to_owned(),
    };
    match line.find("]: ") {
        Some(i) if !(line[i..].starts_with("]: '") && line.ends_with("'.")) => {
            format!("{} : {}", &line[..i + 1], &line[i + 3..])
        }
        _ => line,
    }
}

#[test]
fn files_lex_as_haproxy_reads_them() {
    let Some(_) = haproxy() else { return };
    let many_words = (0..70).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let deep_ifs = format!("{}.notice \"deep\"\n{}", ".if 1\n".repeat(99), ".endif\n".repeat(99));
    let too_deep = format!("{}{}", ".if 1\n".repeat(100), ".endif\n".repeat(100));
    let many_errors = "x \"\n".repeat(60);
    let long_line = format!(".notice \"{}\n", "y".repeat(300));
    let long_if = format!(".if streq({}) && foo\n.endif\n", "z".repeat(200));
    let cases: Vec<(&str, String)> = vec![
        ("words", ".notice a\"b c\"d\n.notice \"x\" \"\" y\n.notice '' z\n.notice a\\ b\n.notice a\\1\n".into()),
        ("comments", "# c\n   \n.notice a#b\n.notice \"a#b\"\n.notice a\\#b\n\t.notice x # y\n".into()),
        (
            "escapes",
            ".notice \"\\x41\\x42\"\n.notice \\x43\n.notice 'a\\x41'\n.notice \"\\$x\"\n.notice \\$x\n.notice \"\\'\"\n"
                .into(),
        ),
        (
            "env",
            ".notice \"${RAMPART_T_NAME}\"\n.notice ${RAMPART_T_NAME}\n.notice '${RAMPART_T_NAME}'\n\
             .notice \"$RAMPART_T_NAME.x\"\n.notice \"x${RAMPART_T_NOPE}y\"\n.notice \"${RAMPART_T_NOPE-d e}\"\n\
             .notice \"${RAMPART_T_EMPTY-d}\"\n.notice \"${.LINE}:${.FILE}:${.SECTION-none}\"\n"
                .into(),
        ),
        (
            "word_expansion",
            ".notice \"${RAMPART_T_LIST[*]}\"\n.notice x\"${RAMPART_T_LIST[*]}\"\n.notice \"${RAMPART_T_SP[*]}\" y\n\
             .notice \"${RAMPART_T_NOPE[*]-p q}\"\n"
                .into(),
        ),
        ("empty_first_word", "\"\" foo bar\n\"\\x00\" foo\n.notice \"a\\x00b\"\n".into()),
        (
            "lexer_errors",
            "  foo \"bar\n  foo \"${ABC\"\n  foo \"${1A}\"\n  foo \"${.FOO}\"\n foo \"\\x4\"\n foo \"${A[x]}\"\n\
             \t\tfoo   bar\\x4g\n foo 'a\n"
                .into(),
        ),
        ("cut_display", ".notice a\nfoo \"${RAMPART_T_NOPE-d}\" \"x\n".into()),
        ("long_error_line", long_line),
        ("cr", ".notice a\rb c\n \r .notice \"cr\"\n.notice \"x\r\n".into()),
        ("blocks", ".if 0\n  foo \"bar\n.alert \"no\"\n.elif 1\n.notice \"elif\"\n.else\n.notice \"else\"\n.endif\n".into()),
        (
            "blocks_nested",
            ".if 1\n.if 0\n.notice a\n.elif 0\n.notice b\n.else\n.notice c\n.endif\n.elif 1\n.notice d\n.endif\n\
             .if 0\n.if 1\n.notice e\n.endif\n.elif 1\n.if 1\n.notice f\n.elif 1\n.notice g\n.endif\n.else\n.endif\n"
                .into(),
        ),
        ("if_joins_words", ".if defined(RAMPART_T_NAME) && streq(a b,a b)\n.notice \"and\"\n.endif\n".into()),
        ("if_empty", ".if\n.notice \"empty if\"\n.else\n.notice \"empty else\"\n.endif\n".into()),
        ("if_error", ".if foo(\n.notice \"after\"\n".into()),
        ("if_error_pos", ".if 1 &&  streq(a)\n.endif\n".into()),
        ("elif_error", ".if 0\n.elif 1 2\n.endif\n".into()),
        ("elif_skipped_error", ".if 1\n.elif foo\n.endif\n.notice \"ok\"\n".into()),
        ("long_if_error", long_if),
        ("if_openssl", ".if 0 && openssl_version_atleast(1.0)\n.endif\n".into()),
        ("lone_elif", ".elif 1\n".into()),
        ("lone_else", ".else\n.notice a\n".into()),
        ("lone_endif", ".endif\n.notice a\n".into()),
        ("else_arg", ".if 1\n.else x\n.notice a\n".into()),
        ("endif_arg", ".if 1\n.endif x\n".into()),
        ("else_else", ".if 1\n.else\n.else\n".into()),
        ("elif_after_else", ".if 1\n.else\n.elif 1\n".into()),
        ("unterminated", ".if 1\n.if 0\n.notice x\n".into()),
        ("deep", deep_ifs),
        ("too_deep", too_deep),
        ("unknown_directive", ".foo x\n.notice a\n".into()),
        ("unknown_directive_skipped", ".if 0\n.foo x\n.endif\n.notice a\n".into()),
        ("directives", ".warning \"w\"\n.diag \"d\"\n.notice\n.notice a b\n.alert \"a\"\n.notice \"after\"\n".into()),
        ("too_many_words", format!(".notice {many_words}\n")),
        ("scope", "[scope1]\n[bad scope]\n[]\n[ok] x\n[ok2] # c\n[ok3\n".into()),
        ("missing_lf", ".notice a\n.notice b".into()),
        ("stray_nul", ".notice a\0 x\n.notice b\n".into()),
        ("stray_nul_last", ".notice a\0 x\n".into()),
        ("too_many_errors", many_errors),
    ];
    let dir = std::env::temp_dir().join(format!("rampart-lexer-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut failures = Vec::new();
    let mut compared = 0;
    for (name, text) in &cases {
        let Some(mut cmd) = haproxy() else { return };
        let path = dir.join(format!("{name}.cfg"));
        std::fs::write(&path, text).expect("write cfg");
        let path_name = path.to_string_lossy().into_owned();
        let expected = haproxy_diagnostics(&mut cmd, &path);
        let got = rampart_diagnostics(&path_name, text);
        compared += expected.len();
        if std::env::var_os("RAMPART_DIFF_SHOW").is_some() {
            eprintln!("== {name}\n{}", expected.join("\n"));
        }
        if got != expected {
            failures.push(format!("{name}:\n  haproxy: {expected:#?}\n  rampart: {got:#?}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(compared > 100, "HAProxy printed only {compared} lines: is it working?");
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

// === rule configurations ===

/// The diagnostics of one level (`[ALERT]` or `[WARNING]`), each with its continuation
/// lines, without pid, location prefix or rampart's `hint:` lines: what must match.
fn records(stderr: &str, tag: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in stderr.lines() {
        if line.starts_with('[') {
            out.extend(current.take());
            if line.starts_with(tag) {
                let text = line.split_once(" : config : ").map_or(line, |(_, m)| m);
                current = Some(strip_location(text).to_owned());
            }
        } else if line.starts_with("  hint: ")
            || line.starts_with("Warnings were found")
            || line.starts_with("Configuration file")
        {
            out.extend(current.take());
        } else if let Some(c) = &mut current {
            c.push('\n');
            c.push_str(line);
        }
    }
    out.extend(current);
    let noise = ["Error(s) found", "Fatal errors found", "haproxy version is", "path to executable"];
    out.retain(|r| !noise.iter().any(|n| r.contains(n)));
    out
}

/// Drops `parsing [file:line] : ` / `parsing [file:line]: ` (rampart locates messages
/// that HAProxy prints without a location).
fn strip_location(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("parsing [").or_else(|| text.strip_prefix("Parsing [")) else { return text };
    match rest.find("] : ").map(|i| i + 4).or_else(|| rest.find("]: ").map(|i| i + 3)) {
        Some(i) => &rest[i..],
        None => text,
    }
}

/// Configurations using the rules keywords rampart parses: HAProxy and rampart must agree
/// on validity, on the first alert, and (for valid ones) on every warning.
fn rule_cases() -> Vec<(&'static str, String)> {
    const D: &str = "defaults\n mode http\n timeout client 1s\n timeout server 1s\n timeout connect 1s\n";
    let fe = |lines: &str| format!("{D}frontend f\n bind :8080\n{lines}");
    let be = |lines: &str| format!("{D}backend b\n{lines}");
    let e503 = std::fs::canonicalize("tests/cfg/files/503.http").map(|p| p.display().to_string()).unwrap_or_default();
    let pong = std::fs::canonicalize("tests/cfg/files/pong.txt").map(|p| p.display().to_string()).unwrap_or_default();
    let mut cases: Vec<(&str, String)> = vec![
        ("req_valid", fe(" acl local src 127.0.0.1\n http-request allow if local\n http-request set-header X-A %[src]\n\
            http-request add-header X-B b\n http-request del-header X-C -m beg\n http-request replace-header H (.*) \\1\n\
            http-request replace-value H a b\n http-request set-path /p\n http-request set-pathq /p?q\n http-request set-query q\n\
            http-request set-uri /u\n http-request set-method GET\n http-request replace-path (.*) \\1\n http-request replace-pathq a b\n\
            http-request replace-uri a b\n http-request set-var(txn.a,ifnotset) req.hdr(host) lower\n http-request set-var-fmt(req.b) %[src]\n\
            http-request unset-var(txn.a)\n http-request set-log-level info\n http-request capture req.hdr(host) len 10\n\
            http-request capture src id 0\n http-request set-priority-class int(1)\n http-request set-priority-offset int(2)\n\
            http-request set-src src\n http-request set-dst dst\n http-request set-src-port src_port\n http-request set-dst-port dst_port\n\
            http-request wait-for-body time 1s at-least 1k\n http-request early-hint Link </a>\n http-request strict-mode off\n\
            http-request disable-l7-retry\n http-request auth realm R if !local\n http-request deny deny_status 429 if !local\n\
            http-request tarpit if FALSE\n http-request silent-drop if FALSE\n http-request reject if FALSE\n\
            http-request redirect scheme https code 301 if FALSE\n http-request return status 404 if FALSE\n\
            default_backend b\nbackend b\n")),
        ("req_final", fe(" http-request deny\n http-request allow\n")),
        ("req_order", fe(" use_backend b\n http-request deny if FALSE\n redirect location / if FALSE\nbackend b\n")),
        ("req_unknown", fe(" http-request retrun\n")),
        ("req_missing", fe(" http-request\n")),
        ("req_anon_defaults", format!("{D} http-request allow\n")),
        ("req_cond_extra", fe(" http-request set-header X y z\n")),
        ("req_set_header", fe(" http-request set-header X\n")),
        ("req_del_header_m", fe(" http-request del-header x -m\n")),
        ("req_del_header_found", fe(" http-request del-header x -m found\n")),
        ("req_replace_header", fe(" http-request replace-header a b\n")),
        ("req_set_path", fe(" http-request set-path a b\n")),
        ("req_replace_path", fe(" http-request replace-path a\n")),
        ("req_set_var_missing", fe(" http-request set-var(txn.x)\n")),
        ("req_set_var_cond", fe(" http-request set-var(txn.x,foo) src\n")),
        ("req_unset_var_cond", fe(" http-request unset-var(txn.x,ifset)\n")),
        ("req_set_var_bare", fe(" http-request set-var src\n")),
        ("req_set_var_open", fe(" http-request set-var(txn.x src\n")),
        ("req_set_var_empty", fe(" http-request set-var() src\n")),
        ("req_set_var_syntax", fe(" http-request set-var(txn.a-b,ifset) src\n")),
        ("req_set_var_scope", fe(" http-request set-var(foo.x) src\n")),
        ("req_log_level", fe(" http-request set-log-level loud\n")),
        ("req_capture_short", fe(" http-request capture src\n")),
        ("req_capture_len0", fe(" http-request capture src len 0\n")),
        ("req_capture_id", fe(" http-request capture src id x\n")),
        ("req_capture_kw", fe(" http-request capture src foo 1\n")),
        ("req_capture_noslot", fe(" http-request capture src id 3\n")),
        ("req_normalize_exp", fe(" http-request normalize-uri path-merge-slashes\n")),
        ("req_wait_body", fe(" http-request wait-for-body at-least 10k\n")),
        ("req_wait_body_char", fe(" http-request wait-for-body time 1s at-least 10x\n")),
        ("req_strict", fe(" http-request strict-mode maybe\n")),
        ("req_timeout_fe", fe(" http-request set-timeout server 1s\n")),
        ("req_timeout_name", be(" http-request set-timeout client 1s\n")),
        ("req_timeout_null", be(" http-request set-timeout server 0\n")),
        ("req_auth_realm", fe(" http-request auth realm\n")),
        ("req_early_hint", fe(" http-request early-hint link\n")),
        ("req_deny_status", fe(" http-request deny deny_status 999\n")),
        ("req_deny_status_201", fe(" http-request deny deny_status 201\n")),
        ("req_tarpit_extra", fe(" http-request tarpit deny_status 503 foo\n")),
        ("req_reject_extra", fe(" http-request reject foo\n")),
        ("req_set_src_conv", fe(" http-request set-src src lower\n")),
        ("req_priority_missing", fe(" http-request set-priority-class\n")),
        ("ret_status", fe(" http-request return status 999\n")),
        ("ret_ctype", fe(" http-request return string hi\n")),
        ("ret_204", fe(" http-request return status 204 content-type t string hi\n")),
        ("ret_lf_ctype", fe(" http-request return lf-string x\n")),
        ("ret_twice", fe(" http-request return string a string b\n")),
        ("ret_hdr", fe(" http-request return hdr a\n")),
        ("ret_errorfile_missing", fe(" http-request return errorfile /nonexistent\n")),
        ("ret_file_missing", fe(" http-request return file /nonexistent\n")),
        ("ret_default_201", fe(" http-request return status 201 default-errorfiles\n")),
        ("ret_warnings", fe(" http-request return content-type a if FALSE\n http-request return hdr content-length 3 if FALSE\n\
            http-request deny content-type t hdr a b default-errorfiles if FALSE\n")),
        ("ret_valid", fe(&format!(" http-request return status 503 errorfile {e503} if FALSE\n\
            http-request return content-type text/plain lf-file {pong} if FALSE\n\
            http-request return status 200 content-type text/plain file {pong} hdr X-A %[src]\n"))),
        ("res_valid", fe(" declare capture response len 8\n http-response set-status 503 reason Busy if FALSE\n\
            http-response deny if FALSE\n http-response capture res.hdr(server) id 0\n http-response set-var-fmt(res.x) %[status]\n\
            http-response wait-for-body time 1s\n http-response del-header Server\n http-response redirect location /x if FALSE\n\
            http-after-response set-header X-Id %[src]\n http-after-response set-status 404 if FALSE\n\
            http-after-response unset-var(txn.x)\n http-after-response strict-mode on\n http-after-response capture src id 0\n")),
        ("res_status", fe(" http-response set-status 99\n")),
        ("res_status_missing", fe(" http-response set-status\n")),
        ("res_capture", fe(" http-response capture src len 1\n")),
        ("res_capture_short", fe(" http-response capture src\n")),
        ("res_redirect_prefix", fe(" http-response redirect prefix /\n")),
        ("res_unknown", fe(" http-response auth\n")),
        ("res_final", fe(" http-response allow\n http-response deny\n")),
        ("after_unknown", fe(" http-after-response deny\n")),
        ("after_final", fe(" http-after-response allow\n http-after-response allow\n")),
        ("after_capture_noslot", fe(" http-after-response capture src id 2\n")),
        ("redirect_valid", fe(" redirect prefix https://x code 301 drop-query append-slash set-cookie A=1 if FALSE\n\
            redirect location /y clear-cookie B code 308 ignore-empty\n")),
        ("redirect_type", fe(" redirect\n")),
        ("redirect_missing", fe(" redirect location\n")),
        ("redirect_code", fe(" redirect location / code 305\n")),
        ("redirect_kw", fe(" redirect location / foo\n")),
        ("redirect_defaults", "defaults d\n redirect location /\n".into()),
        ("redirect_order", fe(" use_backend b\n redirect location /\nbackend b\n")),
        ("tcp_valid", format!("{D}frontend f\n mode tcp\n bind :8080\n tcp-request inspect-delay 5s\n\
            tcp-request connection reject if {{ src 10.0.0.0/8 }}\n tcp-request connection set-var(sess.a) src\n\
            tcp-request session accept\n tcp-request session set-dst ipv4(1.2.3.4)\n\
            tcp-request content capture req.payload(0,10) len 10\n tcp-request content set-log-level err\n\
            tcp-request content switch-mode http proto h2 if FALSE\n tcp-request content silent-drop if FALSE\n\
            tcp-request content set-priority-class int(1)\n default_backend b\nbackend b\n mode http\n\
            tcp-response inspect-delay 1s\n tcp-response content close if FALSE\n tcp-response content unset-var(txn.a)\n")),
        ("tcp_missing", fe(" tcp-request\n")),
        ("tcp_missing_defaults", "defaults d\n tcp-request\n".into()),
        ("tcp_kind", fe(" tcp-request foo\n")),
        ("tcp_conn_backend", be(" tcp-request connection accept\n")),
        ("tcp_anon_defaults", format!("{D} tcp-request content accept\n")),
        ("tcp_delay_char", fe(" tcp-request inspect-delay 10x\n")),
        ("tcp_delay_overflow", fe(" tcp-request inspect-delay 99999d\n")),
        ("tcp_delay_empty", fe(" tcp-request inspect-delay\n")),
        ("tcp_delay_twice", fe(" tcp-request inspect-delay 1s\n tcp-request inspect-delay 2s\n")),
        ("tcp_capture_expr", fe(" tcp-request content capture\n")),
        ("tcp_capture_len", fe(" tcp-request content capture src\n")),
        ("tcp_capture_len0", fe(" tcp-request content capture src len\n")),
        ("tcp_capture_be", be(" tcp-request content capture src len 1\n")),
        ("tcp_capture_session", fe(" tcp-request session capture src len 3\n")),
        ("tcp_expect_proxy", fe(" tcp-request connection expect-proxy\n")),
        ("tcp_expect_content", fe(" tcp-request content expect-proxy layer4\n")),
        ("tcp_cond", fe(" tcp-request content accept foo\n")),
        ("tcp_var_scope", be(" tcp-request content set-var(foo) src\n")),
        ("tcp_set_src", be(" tcp-request content set-src\n")),
        ("tcp_log_level", be(" tcp-request content set-log-level foo\n")),
        ("tcp_switch_missing", be(" tcp-request content switch-mode\n")),
        ("tcp_switch_be", be(" tcp-request content switch-mode http\n")),
        ("tcp_switch_mode", fe(" tcp-request content switch-mode tcp\n")),
        ("tcp_switch_proto", fe(" tcp-request content switch-mode http proto\n")),
        ("tcp_switch_proto_bad", fe(" tcp-request content switch-mode http proto h3\n")),
        ("tcp_unknown", fe(" tcp-request content acept\n")),
        ("tcp_empty_cond", fe(" tcp-request content reject unless\n")),
        ("tcp_order", fe(" http-request deny if FALSE\n tcp-request content accept\n tcp-request session accept\n\
            tcp-request connection accept\n")),
        ("tcpres_fe", fe(" tcp-response content accept\n")),
        ("tcpres_anon", format!("{D} tcp-response inspect-delay 1s\n")),
        ("tcpres_kind", fe(" tcp-response foo\n")),
        ("tcpres_missing", be(" tcp-response\n")),
        ("tcpres_unknown", be(" tcp-response content foo\n")),
        ("tcpres_var", be(" tcp-response content set-var(txn.x)\n")),
        ("tcpres_cond", be(" tcp-response content accept x\n")),
        ("switching_valid", fe(" acl api path_beg /api\n use_backend b if api\n use_backend be_%[req.hdr(host),lower] if FALSE\n\
            default_backend b\nbackend b\n server s1 127.0.0.1:80\n use-server s1 if TRUE\n use-server %[str(s1)] if FALSE\n")),
        ("use_backend_extra", fe(" use_backend b foo\nbackend b\n")),
        ("use_server_cond", be(" server s 127.0.0.1:80\n use-server s\n")),
        ("use_server_missing", be(" use-server\n")),
        ("use_server_unknown", be(" server s 127.0.0.1:80\n use-server t if TRUE\n")),
        ("use_server_fe", fe(" use-server s if TRUE\n")),
        ("acl_or", fe(" acl OR path /\n")),
        ("acl_char", fe(" acl a/b path /\n")),
        ("acl_empty", fe(" acl foo\n")),
        ("acl_anon", format!("{D} acl a path /\n")),
        ("monitor_valid", fe(" monitor-uri /health\n monitor fail if FALSE\n")),
        ("monitor_cond", fe(" monitor fail\n")),
        ("monitor_kw", fe(" monitor foo\n")),
        ("monitor_uri", fe(" monitor-uri\n")),
        ("monitor_uri_extra", fe(" monitor-uri /a /b\n")),
        ("monitor_order", fe(" http-request deny if FALSE\n monitor fail if TRUE\n")),
        ("uid_valid", fe(" unique-id-format %{+X}o\\ %ci\n unique-id-header X-Id\n")),
        ("uid_missing", fe(" unique-id-format\n")),
        ("uid_two", fe(" unique-id-format a b\n")),
        ("uid_header", fe(" unique-id-header\n")),
        ("capture_valid", fe(" capture request header Host len 32\n declare capture request len 8\n\
            capture response header Server len 16\n capture cookie SID= len 100\n")),
        ("capture_kw", fe(" capture foo\n")),
        ("capture_req", fe(" capture request header Host len\n")),
        ("capture_extra", fe(" capture request header Host len 10 x\n")),
        ("capture_cookie", fe(" capture cookie X len\n")),
        ("declare_len0", fe(" declare capture request len 0\n")),
        ("declare_len_x", fe(" declare capture request len x\n")),
        ("declare_type", fe(" declare foo\n")),
        ("declare_dir", fe(" declare capture\n")),
        ("declare_len", fe(" declare capture request\n")),
        ("declare_be", be(" declare capture request len 1\n")),
        ("errors_valid", format!("http-errors site\n errorfile 503 {e503}\n errorfile 404 {e503}\n{D} errorfile 400 {e503}\n\
            frontend f\n bind :8080\n errorfiles site\n http-error status 404 content-type text/plain string gone\n\
            http-error status 400 default-errorfiles\n http-request deny deny_status 503 errorfiles site\n")),
        ("errorfiles_missing", fe(" errorfiles\n")),
        ("errorfiles_code", fe(" errorfiles x 999\n")),
        ("errorfiles_unknown", fe(" errorfiles nope\n")),
        ("errorfiles_undeclared", format!("http-errors e\n errorfile 503 {e503}\n{D}frontend f\n bind :8080\n errorfiles e 404\n")),
        ("http_error_status", fe(" http-error\n")),
        ("http_error_201", fe(" http-error status 201\n")),
        ("http_error_999", fe(" http-error status 999\n")),
        ("http_error_extra", fe(" http-error status 503 foo\n")),
        ("reply_errorfiles_unknown", fe(" http-request deny errorfiles nope\n")),
        ("http_errors_name", "http-errors\n".into()),
        ("http_errors_kw", "http-errors e\n foo\n".into()),
        ("http_errors_args", "http-errors e\n errorfile 503\n".into()),
        ("http_errors_code", "http-errors e\n errorfile 201 x\n".into()),
        ("http_errors_dup", "http-errors e\nhttp-errors e\n".into()),
        ("userlist_valid", format!("userlist admins\n group ops users alice,,bob\n group dev\n\
            user alice password $6$salt$hash groups dev\n user bob insecure-password s3cret\n{}", fe(""))),
        ("userlist_name", "userlist\n".into()),
        ("userlist_extra", "userlist a b\n".into()),
        ("userlist_char", "userlist a/b\n".into()),
        ("userlist_group_opt", "userlist u\n group g foo x\n".into()),
        ("userlist_user_opt", "userlist u\n user a pass x\n".into()),
        ("userlist_kw", "userlist u\n foo\n".into()),
        ("userlist_dups", format!("userlist u\n group g\n group g\n user a\n user a\nuserlist u\n{}", fe(""))),
        ("userlist_no_group", "userlist u\n user a groups x\n".into()),
        ("userlist_no_user", "userlist u\n group g users z\n".into()),
        ("options_valid", fe(" option http-buffer-request\n option originalto except 127.0.0.0/8 header X-Dst\n\
            option http-restrict-req-hdr-names delete\n timeout tarpit 5s\n")),
        ("originalto_except", fe(" option originalto except x/99\n")),
        ("originalto_kw", fe(" option originalto foo\n")),
        ("restrict_missing", fe(" option http-restrict-req-hdr-names\n")),
        ("restrict_bad", fe(" option http-restrict-req-hdr-names x\n")),
        ("vars_valid", format!("global\n tune.vars.txn-max-size 256\n tune.vars.sess-max-size\n tune.vars.global-max-size -1\n\
            tune.vars.proc-max-size 1\n tune.vars.reqres-max-size 2\n tune.vars.check-max-size 3\n{}", fe(""))),
        ("vars_size", "global\n tune.vars.txn-max-size 10k\n".into()),
        ("defaults_rules_listen", "defaults d\n mode http\n http-request deny\nlisten l from d\n bind :8080\n".into()),
        ("defaults_rules_mixed", "defaults d\n mode http\n http-request deny\nfrontend f from d\n bind :8080\nbackend b from d\n".into()),
        ("defaults_rules_defaults", "defaults d\n http-request deny\ndefaults e from d\n".into()),
        ("defaults_rules_l4", "defaults d\n tcp-request connection reject\nbackend b from d\n".into()),
        ("defaults_rules_tcpres", "defaults d\n tcp-response content accept\nfrontend f from d\n bind :8080\n".into()),
        ("defaults_captures", "defaults d\n mode http\n http-request capture src len 4\nbackend b from d\n".into()),
        ("expr_words", fe(" http-request set-var(txn.a) req.hdr(host) lower,upper\n http-request set-var(txn.b) \"str(a b)\"\n\
            http-request capture req.hdr(host) lower len 10\n tcp-request content capture src lower len 5\n")),
        ("expr_extra_word", fe(" http-request set-var(txn.x) src foo\n")),
        ("capture_conv_extra", fe(" http-request capture src lower foo 1\n")),
        ("use_backend_defaults", "defaults d\n use_backend b\n".into()),
        ("monitor_defaults", "defaults d\n monitor fail if TRUE\n".into()),
        ("capture_defaults", "defaults d\n capture request header Host len 1\n".into()),
        ("declare_defaults", "defaults d\n declare capture request len 1\n".into()),
        ("backend_misc", be(" capture cookie A len 10\n unique-id-format %ci\n timeout tarpit 1s\n\
            http-response redirect location /x code 301 if FALSE\n option originalto\n redirect location / if FALSE\n\
            http-request deny if FALSE\n server s 127.0.0.1:80\n use-server s if TRUE\n http-request allow\n")),
        ("listen_tcp_rules", format!("{D}listen l\n bind :8080\n tcp-request connection accept\n tcp-request session reject if FALSE\n\
            tcp-response content accept\n server s 127.0.0.1:80\n")),
        ("named_defaults_tcp", "defaults d\n mode tcp\n timeout client 1s\n tcp-request session accept\n tcp-request inspect-delay 1s\n\
            frontend f from d\n bind :8080\n tcp-request inspect-delay 2s\n".into()),
        ("no_option_buffer", fe(" no option http-buffer-request\n option http-buffer-request\n")),
        ("auth_quoted", fe(" http-request auth realm \"My Realm\" if FALSE\n http-request wait-for-body time 0\n")),
        ("http_errors_override", format!("http-errors e\n errorfile 503 {e503}\n errorfile 503 {e503}\n{}", fe(" errorfiles e 503\n"))),
        ("userlist_group_users", format!("userlist u\n user a\n user b\n group g users a,b\n group h users b\n{}", fe(""))),
        ("res_deny_reply", fe(" http-response deny deny_status 503 content-type text/plain string busy if FALSE\n\
            http-response return status 200 hdr X-A a if FALSE\n")),
        ("req_redirect_cookie", fe(" http-request redirect location /l set-cookie A=1 clear-cookie B if FALSE\n")),
        ("req_del_header_reg", fe(" http-request del-header ^x- -m reg\n http-request del-header y -m end\n")),
        ("req_replace_value_extra", fe(" http-request replace-value a b c d\n")),
        ("req_set_status_in_req", fe(" http-request set-status 200\n")),
        ("after_set_status_reason", fe(" http-after-response set-status 503 reason \"Slow Down\" if FALSE\n")),
        ("tcp_mode_ignores", format!("{D}frontend f\n mode tcp\n bind :8080\n http-request deny\n http-response deny\n\
            http-after-response allow\n redirect location /\n option originalto\n option http-buffer-request\n\
            capture cookie A len 10\n default_backend b\nbackend b\n mode tcp\n")),
    ];
    cases.retain(|(_, text)| !text.is_empty());
    cases
}

#[test]
fn rules_parse_as_haproxy_checks_them() {
    let Some(_) = haproxy() else { return };
    let dir = std::env::temp_dir().join(format!("rampart-rules-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut failures = Vec::new();
    let (mut with_alerts, mut with_warnings) = (0, 0);
    let cases = rule_cases();
    for (name, text) in &cases {
        let Some(mut cmd) = haproxy() else { return };
        let path = dir.join(format!("{name}.cfg"));
        std::fs::write(&path, text).expect("write cfg");
        let out = cmd.arg("-c").arg("-f").arg(&path).output().expect("haproxy runs");
        let hap_stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let hap_valid = matches!(out.status.code(), Some(0 | 2));
        let path_name = path.to_string_lossy().into_owned();
        let loaded = with_ctx(|ctx| rampart_cfg::parse_str(&path_name, text, ctx));
        let ours: String = loaded.diags.list.iter().map(|d| d.render(0)).collect();
        let ours_valid = loaded.config.is_some();
        let (hap_alerts, our_alerts) = (records(&hap_stderr, "[ALERT]"), records(&ours, "[ALERT]"));
        let (hap_warnings, our_warnings) = (records(&hap_stderr, "[WARNING]"), records(&ours, "[WARNING]"));
        if std::env::var_os("RAMPART_DIFF_SHOW").is_some() {
            eprintln!("== {name}\n{hap_stderr}");
        }
        with_alerts += usize::from(!hap_alerts.is_empty());
        with_warnings += usize::from(!hap_warnings.is_empty());
        let problem = if hap_valid != ours_valid {
            Some(format!("valid: haproxy {hap_valid}, rampart {ours_valid}"))
        } else if hap_alerts.first() != our_alerts.first() {
            Some("first alert differs".to_owned())
        } else if hap_valid && hap_warnings != our_warnings {
            Some("warnings differ".to_owned())
        } else {
            None
        };
        if let Some(p) = problem {
            failures.push(format!(
                "{name}: {p}\n  haproxy alerts: {hap_alerts:#?}\n  rampart alerts: {our_alerts:#?}\n  haproxy warnings: {hap_warnings:#?}\n  rampart warnings: {our_warnings:#?}"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(cases.len() >= 150, "the corpus shrank to {}", cases.len());
    assert!(with_alerts > 100 && with_warnings > 10, "HAProxy said too little: is it working?");
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
