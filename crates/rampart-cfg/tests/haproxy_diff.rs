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
