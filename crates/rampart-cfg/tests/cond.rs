//! The condition language of `.if` and `-cc`.
//!
//! Results marked "verified" were checked with `haproxy -cc '<expr>'` 2.6.12 (exit status
//! 0 true, 1 false, 2 error); `tests/haproxy_diff.rs` re-runs them when haproxy exists.

use rampart_cfg::cond::{eval_str, eval_words};
use rampart_cfg::LexCtx;

const ENV: &[(&str, &str)] = &[("NAME", "web"), ("EMPTY", ""), ("LIST", "a  b"), ("ZERO", "0")];

fn eval_in(expr: &str, version: &str) -> Result<bool, String> {
    let env = |name: &str| ENV.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned());
    let ctx = LexCtx { env: &env, version, features: &["EPOLL", "POLL", "THREAD"] };
    eval_str(expr, &ctx)
}

fn eval(expr: &str) -> Result<bool, String> {
    eval_in(expr, "2.6.12")
}

fn is_true(expr: &str) -> bool {
    match eval(expr) {
        Ok(v) => v,
        Err(e) => panic!("{expr:?}: {e}"),
    }
}

fn error(expr: &str) -> String {
    match eval(expr) {
        Ok(v) => panic!("{expr:?} evaluated to {v}"),
        Err(e) => e,
    }
}

#[test]
fn numbers_are_the_only_constants() {
    // verified: 1, -1, 0x10 and " 1 " are true; 0, "" are false; true is unparsable
    for expr in ["1", "-1", "0x10", " 1 ", "42", "007"] {
        assert!(is_true(expr), "{expr}");
    }
    for expr in ["0", "", "00", "-0", "0x0", "+0"] {
        assert!(!is_true(expr), "{expr}");
    }
    assert_eq!(error("true"), "Failed to evaluate condition: unparsable conditional expression 'true'");
    // verified: strtol reads "08" as octal 0 followed by '8'
    assert_eq!(
        error("08"),
        "Failed to evaluate condition: unexpected character '8' at the end of conditional expression '08'"
    );
    assert_eq!(
        error("0x"),
        "Failed to evaluate condition: unexpected character 'x' at the end of conditional expression '0x'"
    );
}

#[test]
fn operators() {
    // verified: `0 || 1 && 0` is false (&& binds tighter), as is `(0 || 1) && 0`
    assert!(!is_true("0 || 1 && 0"));
    assert!(!is_true("(0 || 1) && 0"));
    assert!(is_true("1 || 0 && 0"));
    assert!(is_true("0 || (1 && 1)"));
    assert!(is_true("!0"));
    assert!(is_true("! ! 1"));
    assert!(is_true("!!1"));
    assert!(is_true("!(0||0)"));
    assert!(is_true("1&&1||0"));
    assert!(is_true("\t1\t&&\t1"));
}

#[test]
fn evaluation_stops_early() {
    // The second operand would be an error if evaluated.
    assert!(!is_true("0 && openssl_version_atleast(1.0)"));
    assert!(is_true("1 || openssl_version_before(1.0)"));
    assert!(eval("1 && openssl_version_atleast(1.0)").is_err());
}

#[test]
fn defined_looks_at_the_environment() {
    assert!(is_true("defined(NAME)"));
    assert!(is_true("defined(EMPTY)"), "defined even when empty");
    assert!(!is_true("defined(NOPE)"));
    // verified: without parentheses (or with nothing in them) the name is empty
    assert!(!is_true("defined"));
    assert!(!is_true("defined()"));
    assert!(!is_true("defined(A=B)"));
}

#[test]
fn string_predicates() {
    assert!(is_true("streq(a,a)") && !is_true("streq(a,b)"));
    assert!(is_true("strneq(a,b)") && !is_true("strneq(a,a)"));
    // verified: spaces are part of the arguments, quotes are removed before
    assert!(is_true("streq(a b,a b)"));
    assert!(is_true("streq('a',\"a\")"));
    assert!(is_true("streq(,)"));
    // verified: -cc removes one level of quotes, so commas inside come back
    assert_eq!(
        error("streq(\"a,b\",\"a,b\")"),
        "Failed to evaluate condition: expected ')' before ',a,b)' in argument 1 of predicate 'streq' used in conditional expression"
    );
    assert!(is_true("streq('\"a,b\"',\"'a,b'\")"));
    // verified: `\\` gives `\`, which the argument list keeps before `a`: `\a` is not `a`
    assert!(!is_true(r#"streq(\\"a,"a)"#));
    assert!(is_true(r#"streq(\\"a,"\a)"#));
}

#[test]
fn variables_expand_in_double_quotes() {
    // verified: streq("${HOME}",/root) is true, streq(${HOME},/root) false
    assert!(is_true(r#"streq("${NAME}",web)"#));
    assert!(!is_true("streq(${NAME},web)"));
    assert!(is_true(r#"streq("${NOPE-dflt}",dflt)"#));
    assert!(is_true(r#"streq("${LIST[*]}",a b)"#));
    assert!(!is_true(r#""${ZERO}""#));
    // verified: ${.LINE} is 0 for -cc and ${.FILE} is undefined
    assert!(!is_true(r#""${.LINE}""#));
    assert!(is_true(r#"streq("${.FILE-x}",x)"#));
}

#[test]
fn feature_predicate() {
    assert!(is_true("feature(POLL)"));
    assert!(is_true("feature(EPOLL)"));
    assert!(!is_true("feature(OPENSSL)"));
    assert!(!is_true("feature(POL)"));
    assert!(!is_true("feature()"));
}

#[test]
fn version_predicates() {
    // verified against 2.6.12 (Debian's "2.6.12-1+deb12u3" compares as 2.6.12)
    let at_least =
        ["2.6", "2.6.12", "2.6.12.0", "2.6-dev", "2.6.12-dev3", "2.6.11-rc9", "2.6.12-pre1", "1.8", "abc", ""];
    for v in at_least {
        assert!(is_true(&format!("version_atleast({v})")), "{v}");
    }
    for v in ["2.6.13", "2.6.12.1", "2.6.12-1", "2.7-dev0", "3"] {
        assert!(!is_true(&format!("version_atleast({v})")), "{v}");
        assert!(is_true(&format!("version_before({v})")), "{v}");
    }
    for v in ["2.6.12", "2.6.12-dev3", "abc", ""] {
        assert!(!is_true(&format!("version_before({v})")), "{v}");
    }
    assert_eq!(eval_in("version_atleast(2.7)", "2.7.0"), Ok(true));
    assert_eq!(eval_in("version_before(2.6.12)", "2.6-dev12"), Ok(true));
}

#[test]
fn openssl_predicates() {
    assert!(!is_true("ssllib_name_startswith(OpenSSL)"));
    let e = error("openssl_version_atleast(1.1.1)");
    assert!(e.starts_with("Failed to evaluate condition: ") && e.contains("rustls"), "{e}");
}

#[test]
fn syntax_errors_are_worded_as_haproxy() {
    // verified, every one
    let cases = [
        ("!", "unparsable conditional expression '!'"),
        ("(", "unparsable conditional expression '('"),
        ("()", "unparsable conditional expression ')'"),
        ("(1", "expected ')' after conditional expression '(1'"),
        ("(0||1", "expected ')' after conditional expression '(0||1'"),
        ("1 && ", "unparsable conditional expression '&& '"),
        ("1 && 1 && ", "unparsable conditional expression '&& 1 && '"),
        ("1 || ", "unparsable conditional expression '1 || '"),
        ("\" \"", "unparsable conditional sub-expression ' '"),
        ("1 2", "unexpected character '2' at the end of conditional expression '1 2'"),
        ("1 & 1", "unexpected character '&' at the end of conditional expression '1 & 1'"),
        ("(1)(1)", "unexpected character '(' at the end of conditional expression '(1)(1)'"),
        ("defined (NAME)", "unexpected character '(' at the end of conditional expression 'defined (NAME)'"),
        ("defined(NAME)x", "unexpected character 'x' at the end of conditional expression 'defined(NAME)x'"),
        ("defined&&1", "unparsable conditional expression 'defined&&1'"),
        ("enabled(FOO)", "unparsable conditional expression 'enabled(FOO)'"),
        (
            "streq",
            "missing arguments (got 1/2), type 'string' expected in argument 1 of predicate 'streq' used in conditional expression",
        ),
        (
            "streq(a,b,c)",
            "expected ')' before ',c)' in argument 1 of predicate 'streq' used in conditional expression",
        ),
        (
            "defined(A,B)",
            "expected ')' before ',B)' in argument 1 of predicate 'defined' used in conditional expression",
        ),
        (
            r"streq(a\",
            r"failed to parse '\' after 'a' as type 'string' at position 1 in argument 0 of predicate 'streq' used in conditional expression",
        ),
    ];
    for (expr, message) in cases {
        assert_eq!(error(expr), format!("Failed to evaluate condition: {message}"), "{expr}");
    }
}

#[test]
fn line_errors_of_cc() {
    // verified
    assert_eq!(error("\"1"), "Syntax Error in condition: Unmatched quote.");
    assert_eq!(error("streq(a,'b)"), "Syntax Error in condition: Unmatched quote.");
    assert_eq!(error(r"\x4"), "Syntax Error in condition: Truncated or invalid hexadecimal sequence.");
    assert_eq!(error(&vec!["1"; 65].join(" ")), "Error in condition: Too many words.");
    // HAProxy only says "Unhandled error in condition" for these.
    assert!(error("\"${NAME\"").contains("unmatched brace"));
    assert!(error("\"$1\"").contains("forbidden first char"));
    assert!(error("\"${NAME[x]}\"").contains("word expansion"));
}

#[test]
fn cc_has_no_comments() {
    // verified: '#' is an ordinary character for -cc, and `\#` stays two characters
    assert!(error("1 # c").contains("unexpected character '#'"));
    assert!(error(r"\#").contains(r"unparsable conditional expression '\#'"));
}

#[test]
fn nesting_budget() {
    // verified: 340 parentheses parse, 341 do not; 1022 `||` or `&&` operands parse, 1023 do not
    let parens = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
    assert!(is_true(&parens(340)));
    assert!(error(&parens(341)).contains("unparsable conditional sub-expression '1)))"));
    assert!(!is_true(&vec!["0"; 1022].join("||")));
    assert_eq!(
        error(&vec!["0"; 1023].join("||")),
        "Failed to evaluate condition: unparsable conditional expression '0'"
    );
    assert!(is_true(&vec!["1"; 1022].join("&&")));
    assert_eq!(
        error(&vec!["1"; 1023].join("&&")),
        "Failed to evaluate condition: unparsable conditional expression '1'"
    );
}

#[test]
fn eval_words_joins_the_words_of_a_line() {
    let env = |name: &str| (name == "NAME").then(|| "web".to_owned());
    let ctx = LexCtx { env: &env, version: "2.6.12", features: &[] };
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(eval_words(&words(&["defined(NAME)", "&&", "streq(a", "b,a", "b)"]), &ctx), Ok(true));
    assert_eq!(eval_words(&words(&["!", "defined(NAME)"]), &ctx), Ok(false));
    assert_eq!(eval_words(&[], &ctx), Ok(false));
    // The words are already unquoted: no variable expansion happens here.
    assert_eq!(eval_words(&words(&["streq(\"${NAME}\",web)"]), &ctx), Ok(false));
    assert_eq!(eval_words(&words(&["foo"]), &ctx), Err("unparsable conditional expression 'foo'".to_owned()));
}

#[test]
fn odd_input_does_not_panic() {
    for expr in ["\0", "(\0)", "streq(\u{e9},\u{e9})", "!!!!!!!!", "((((((", "))))", "&&||&&", "0x", "\\", "'"] {
        let _ = eval(expr);
    }
    assert!(is_true("streq(\u{e9},\u{e9})"));
}
