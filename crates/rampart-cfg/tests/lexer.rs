//! The haproxy.cfg lexer: words, quotes, escapes, `"${VAR}"`, `.if` blocks, directives.
//!
//! Cases marked "verified" were run through `haproxy -c` 2.6.12 (Debian) and gave the
//! result asserted here; `tests/haproxy_diff.rs` re-checks most of them automatically when
//! haproxy is installed.

use std::sync::Arc;

use rampart_cfg::lexer::{self, Lexer, Line};
use rampart_cfg::{Diags, Level, LexCtx};

const ENV: &[(&str, &str)] = &[("NAME", "web"), ("EMPTY", ""), ("LIST", "a  b c"), ("SP", " q"), ("PORT", "8080")];

struct Lexed {
    lines: Vec<Line>,
    diags: Diags,
    aborted: bool,
}

impl Lexed {
    fn words(&self) -> Vec<Vec<&str>> {
        self.lines.iter().map(|l| l.words.iter().map(String::as_str).collect()).collect()
    }
    fn line_numbers(&self) -> Vec<u32> {
        self.lines.iter().map(|l| l.span.line).collect()
    }
    /// Every diagnostic rendered (pid 1), hints included.
    fn rendered(&self) -> String {
        self.diags.list.iter().map(|d| d.render(1)).collect()
    }
    fn alerts(&self) -> Vec<String> {
        let alerts = self.diags.list.iter().filter(|d| d.level == Level::Alert);
        alerts.map(|d| format!("{}: {}", d.span.as_ref().map_or(0, |s| s.line), d.message)).collect()
    }
}

fn lex(text: &str) -> Lexed {
    let env = |name: &str| ENV.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned());
    let ctx = LexCtx { env: &env, version: "2.6.12", features: &["EPOLL", "POLL"] };
    let file: Arc<str> = "t.cfg".into();
    let mut diags = Diags::default();
    let mut lexer = Lexer::new(&file, text, &ctx);
    let mut lines = Vec::new();
    while let Some(line) = lexer.next_line(&mut diags) {
        lines.push(line);
    }
    Lexed { lines, diags, aborted: lexer.aborted() }
}

fn words_of(text: &str) -> Vec<Vec<String>> {
    let lexed = lex(text);
    assert!(lexed.diags.list.is_empty(), "{text:?}: unexpected diagnostics {:?}", lexed.alerts());
    lexed.lines.into_iter().map(|l| l.words).collect()
}

fn one_line(text: &str) -> Vec<String> {
    let mut lines = words_of(&format!("{text}\n"));
    assert_eq!(lines.len(), 1, "{text:?}");
    lines.remove(0)
}

// === words ===

#[test]
fn blank_and_comment_lines_yield_nothing_but_count() {
    let lexed = lex("# comment\n\n   \t \nglobal\n  # indented comment\n  maxconn 10 # trailing\n");
    assert_eq!(lexed.words(), [vec!["global"], vec!["maxconn", "10"]]);
    assert_eq!(lexed.line_numbers(), [4, 6]);
}

#[test]
fn lex_collects_what_the_lexer_yields() {
    let env = |_: &str| None;
    let ctx = LexCtx { env: &env, version: "2.6.12", features: &[] };
    let file: Arc<str> = "f.cfg".into();
    let mut diags = Diags::default();
    let lines = lexer::lex(&file, "a b\n.if 0\nc\n.endif\nd\n", &ctx, &mut diags);
    let got: Vec<(String, u32, Vec<String>)> =
        lines.into_iter().map(|l| (l.span.file.to_string(), l.span.line, l.words)).collect();
    assert_eq!(got, [("f.cfg".into(), 1, vec!["a".into(), "b".into()]), ("f.cfg".into(), 5, vec!["d".into()])]);
    assert!(diags.list.is_empty());
}

#[test]
fn blanks_separate_words() {
    assert_eq!(one_line("  bind\t:80   ssl \x0b crt x"), ["bind", ":80", "ssl", "crt", "x"]);
}

#[test]
fn quoted_parts_glue_to_their_neighbours() {
    // verified: `.notice a"b c"d` prints 'ab cd'
    assert_eq!(one_line(r#"a"b c"d"#), ["ab cd"]);
    assert_eq!(one_line(r#"x 'a b'"c d"e"#), ["x", "a bc de"]);
    assert_eq!(one_line(r#"say "it's" 'a "b"'"#), ["say", "it's", "a \"b\""]);
}

#[test]
fn empty_words_are_kept_inside_a_line_but_not_at_its_end() {
    assert_eq!(one_line(r#"a "" b"#), ["a", "", "b"]);
    assert_eq!(one_line(r#"a '' """#), ["a"]);
    assert_eq!(one_line("a   "), ["a"]);
}

#[test]
fn a_line_whose_first_word_is_empty_is_ignored() {
    // verified: `"" foo bar` and `"\x00" foo` produce nothing at all
    assert!(words_of("\"\" foo bar\n\"\\x00\" foo\n").is_empty());
}

#[test]
fn single_quotes_are_literal() {
    // verified: `.notice 'a\x41'` prints 'a\x41'; '${HOME}' stays as is
    assert_eq!(one_line(r#"'a\x41 \" $x ${NAME} # no comment'"#), [r#"a\x41 \" $x ${NAME} # no comment"#]);
}

#[test]
fn backslash_escapes() {
    // verified: `\ ` joins, `\#` is '#', `\1` stays `\1`, `\x41\x42` is AB
    assert_eq!(one_line(r"a\ b c\#d e\\f \x41\x42 a\1 \q"), ["a b", "c#d", r"e\f", "AB", r"a\1", r"\q"]);
    assert_eq!(one_line(r#"\"q\" \'s\'"#), [r#""q""#, "'s'"]);
    // verified: "\t|\n|\r|\\|\ |\"|x" prints tab, LF, CR, backslash, space and quote
    assert_eq!(one_line(r#""\t|\n|\r|\\|\ |\"|x""#), ["\t|\n|\r|\\| |\"|x"]);
}

#[test]
fn dollar_escapes_only_inside_double_quotes() {
    // verified: "\$HOME" prints '$HOME', \$HOME prints '\$HOME'
    assert_eq!(one_line(r#""\$NAME" \$NAME"#), ["$NAME", r"\$NAME"]);
}

#[test]
fn hash_starts_a_comment_outside_quotes_only() {
    // verified: `.notice a#b` prints 'a'
    assert_eq!(one_line(r#"a#b "c#d" 'e#f' g\#h"#), ["a"]);
    assert_eq!(one_line(r#""c#d" 'e#f' g\#h # x"#), ["c#d", "e#f", "g#h"]);
}

#[test]
fn a_nul_from_an_escape_ends_the_word() {
    // verified: `.notice "a\x00b"` prints 'a'
    assert_eq!(one_line(r#"x "a\x00b" y"#), ["x", "a", "y"]);
}

#[test]
fn bytes_that_are_not_utf8_are_kept_as_private_use_characters() {
    // U+10FF00 + byte: the daemon turns them back into the byte (`lexer::raw_bytes`)
    assert_eq!(one_line(r"\xc3\xa9 \xff"), ["é", "\u{10ffff}"]);
    assert_eq!(&rampart_cfg::lexer::raw_bytes("\u{10ffff}".as_bytes())[..], b"\xff");
}

#[test]
fn crlf_and_lone_cr_end_lines() {
    assert_eq!(words_of("a b\r\nc\r\n"), [vec!["a", "b"], vec!["c"]]);
    // verified: `.notice a\rb c` prints 'a' (the CR ends the line)
    assert_eq!(one_line("a\rb c"), ["a"]);
    // verified: leading blanks, CR included, are skipped
    assert_eq!(one_line(" \r x"), ["x"]);
}

#[test]
fn very_long_lines_are_fine() {
    let long = "x".repeat(200_000);
    assert_eq!(one_line(&format!("a {long}")), ["a".to_owned(), long]);
}

// === environment variables ===

#[test]
fn variables_expand_inside_double_quotes_only() {
    // verified: "${HOME}" expands, ${HOME} and '${HOME}' stay literal in 2.6
    assert_eq!(
        one_line(r#""${NAME}" ${NAME} '${NAME}' "$NAME.x" "${NAME}_1""#),
        ["web", "${NAME}", "${NAME}", "web.x", "web_1"]
    );
    assert_eq!(one_line(r#"bind ":${PORT}""#), ["bind", ":8080"]);
}

#[test]
fn undefined_variables_are_empty_unless_defaulted() {
    // verified: "x${UNDEF}y" prints 'xy', "${UNDEF-def val}" prints 'def val'
    assert_eq!(one_line(r#""x${UNDEF}y" "${UNDEF-def val}" "${NAME-d}" "${EMPTY-d}""#), ["xy", "def val", "web"]);
    assert_eq!(one_line(r#"a "${EMPTY-d}" b"#), ["a", "", "b"], "a defined empty variable takes no default");
    assert_eq!(one_line(r#""${UNDEF-a\x41"b}""#), [r#"a\x41"b"#], "the default is raw text");
}

#[test]
fn star_suffix_splits_a_value_into_words() {
    // verified: LIST="a  b c": "${LIST[*]}" gives 3 words; x"${LIST[*]}"y glues the ends
    assert_eq!(one_line(r#""${LIST[*]}""#), ["a", "b", "c"]);
    assert_eq!(one_line(r#"x"${LIST[*]}"y"#), ["xa", "b", "cy"]);
    assert_eq!(one_line(r#""${UNDEF[*]-p  q}""#), ["p", "q"]);
    // verified: SP=" q": "${SP[*]}" yy gives an empty word first
    assert_eq!(one_line(r#"k "${SP[*]}" yy"#), ["k", "", "q", "yy"]);
}

#[test]
fn built_in_variables() {
    let lexed = lex("\"${.LINE}\" \"${.FILE}\" \"${.SECTION-none}\"\nglobal\n  x \"${.SECTION}\"\nbackend be1\n\
         y \"${.SECTION}\"\nfrontend\nz \"${.SECTION}\"\n");
    let words = lexed.words();
    assert_eq!(words[0], ["1", "t.cfg", "none"]);
    // verified: 'global' after `global`, 'fe1' after `frontend fe1`
    assert_eq!(words[2], ["x", "global"]);
    assert_eq!(words[4], ["y", "be1"]);
    assert_eq!(words[6], ["z", "frontend"]);
}

// === errors ===

#[test]
fn unmatched_quote() {
    // verified, output identical but for the space before the colon (see diag.rs)
    let lexed = lex("global\n   maxconn \"10\n");
    assert!(lexed.lines.iter().all(|l| l.span.line != 2), "the bad line is dropped");
    let expected =
        "[ALERT]    (1) : config : parsing [t.cfg:2] : unmatched quote at position 12:\n  maxconn \"10\n          ^\n";
    assert!(lexed.rendered().starts_with(expected), "{}", lexed.rendered());
    assert!(lexed.rendered().contains("  hint: close the quote"));
    assert_eq!(lex("a 'b\n").alerts(), ["1: unmatched quote at position 3:\n  a 'b\n    ^"]);
}

#[test]
fn variable_errors() {
    // verified: all four messages and positions
    let lexed = lex("  foo \"${ABC\"\n  foo \"${1ABC}\"\n  foo \"${.FOO}\"\n foo \"${HOME[x]}\"\n foo \"$\"\n");
    assert_eq!(
        lexed.alerts(),
        [
            "1: unmatched brace in environment variable name at position 9:\n  foo \"${ABC\"\n        ^",
            "2: forbidden first char in environment variable name at position 10:\n  foo \"${1ABC}\"\n         ^",
            // HAProxy prints the line cut after the unknown name.
            "3: forbidden first char in environment variable name at position 10:\n  foo \"${.FOO\n         ^",
            "4: truncated or invalid word expansion sequence at position 13:\n  foo \"${HOME[x]}\"\n             ^",
            "5: forbidden first char in environment variable name at position 8:\n  foo \"$\"\n        ^",
        ]
    );
    assert!(lexed.lines.is_empty());
}

#[test]
fn hexadecimal_errors() {
    // verified: tabs count in the position but the caret is under the trimmed line
    let lexed = lex(" foo \"\\x4\"\n\t\tfoo   bar\\x4g\n");
    assert_eq!(
        lexed.alerts(),
        [
            "1: truncated or invalid hexadecimal sequence at position 7:\n  foo \"\\x4\"\n       ^",
            "2: truncated or invalid hexadecimal sequence at position 12:\n  foo   bar\\x4g\n           ^",
        ]
    );
}

#[test]
fn error_lines_are_shortened_around_the_error() {
    let text = format!("x {} \"{}\n", "a".repeat(100), "b".repeat(100));
    let alerts = lex(&text).alerts();
    let shown: Vec<&str> = alerts[0].lines().collect();
    assert_eq!(shown[0], "1: unmatched quote at position 104:");
    assert_eq!(shown[1].len(), 82);
    assert!(shown[1].starts_with("  ...a") && shown[1].ends_with("b..."));
    assert_eq!(shown[2].find('^'), shown[1].find('"'));
}

#[test]
fn errors_are_reported_in_false_branches_too() {
    // verified: a quote error inside `.if 0` is still an alert
    let lexed = lex(".if 0\n  foo \"bar\n.endif\n");
    assert_eq!(lexed.alerts().len(), 1);
    assert!(lexed.alerts()[0].starts_with("2: unmatched quote"));
}

#[test]
fn at_most_64_words() {
    let words = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    assert_eq!(one_line(&words(64)).len(), 64);
    // verified: 65 words, and 64 words followed by a blank, are refused
    assert_eq!(
        lex(&format!("{}\n", words(65))).alerts(),
        ["1: too many words, truncating after word 64, position 243: <w63>."]
    );
    assert_eq!(lex(&format!("{} \n", words(64))).alerts().len(), 1);
    assert_eq!(one_line(&format!("{} ", words(63))).len(), 63);
}

#[test]
fn last_line_without_line_feed() {
    // verified: HAProxy 2.6 refuses it
    let lexed = lex("global\n  maxconn 10");
    assert_eq!(lexed.words(), [vec!["global"], vec!["maxconn", "10"]]);
    assert_eq!(lexed.alerts(), ["2: Missing LF on last line, file might have been truncated at position 13."]);
}

#[test]
fn nul_byte_stops_the_file() {
    // verified: the line is read up to the NUL, then reading stops with an alert
    let lexed = lex("global\n  maxconn 10\0 xx\n  maxconn 20\n");
    assert_eq!(lexed.words(), [vec!["global"], vec!["maxconn", "10"]]);
    assert_eq!(lexed.alerts(), ["2: Stray NUL character at position 13."]);
    // verified: on the last line it is reported as a missing line feed
    assert_eq!(lex("a\0b\n").alerts(), ["1: Missing LF on last line, file might have been truncated at position 2."]);
}

#[test]
fn fifty_fatal_errors_stop_the_file() {
    let lexed = lex(&"x \"\n".repeat(60));
    let alerts = lexed.alerts();
    assert_eq!(alerts.len(), 51);
    assert_eq!(alerts[50], "51: too many fatal errors (50), stopping now.");
}

#[test]
fn the_parser_can_add_its_own_fatal_errors() {
    let env = |_: &str| None;
    let ctx = LexCtx { env: &env, version: "2.6.12", features: &[] };
    let file: Arc<str> = "t.cfg".into();
    let mut diags = Diags::default();
    let text = "bad\n".repeat(60);
    let mut lexer = Lexer::new(&file, &text, &ctx);
    let mut seen = 0;
    while lexer.next_line(&mut diags).is_some() {
        seen += 1;
        lexer.count_fatal();
    }
    assert_eq!(seen, 50);
    assert_eq!(diags.list[0].message, "too many fatal errors (50), stopping now.");
}

// === conditional blocks ===

#[test]
fn if_elif_else_pick_one_branch() {
    let text = ".if 0\na\n.elif 1\nb\n.elif 1\nc\n.else\nd\n.endif\n.if 1\ne\n.else\nf\n.endif\n\
                .if 0\ng\n.else\nh\n.endif\n";
    assert_eq!(words_of(text), [["b"], ["e"], ["h"]]);
}

#[test]
fn nested_blocks() {
    // verified (same file through haproxy): c, f
    let text = ".if 1\n.if 0\na\n.elif 0\nb\n.else\nc\n.endif\n.elif 1\nd\n.endif\n\
                .if 0\n.if 1\ne\n.endif\n.elif 1\n.if 1\nf\n.elif 1\ng\n.endif\n.else\n.endif\n";
    assert_eq!(words_of(text), [["c"], ["f"]]);
}

#[test]
fn conditions_in_skipped_branches_are_not_evaluated() {
    assert_eq!(words_of(".if 0\n.if foo(\n.elif bar\n.endif\n.endif\nok\n"), [["ok"]]);
    // verified: a bad `.elif` after a taken branch is not an error
    assert_eq!(words_of(".if 1\n.elif foo\n.endif\nok\n"), [["ok"]]);
}

#[test]
fn the_condition_is_the_rest_of_the_line() {
    // verified: `.if defined(HOME) && streq(a b,a b)` is true
    assert_eq!(words_of(".if defined(NAME) && streq(a b,a b)\nyes\n.endif\n"), [["yes"]]);
    assert_eq!(words_of(".if streq(\"${NAME}\",web) # comment\nyes\n.endif\n"), [["yes"]]);
    assert_eq!(words_of(".if streq(\"${LIST[*]}\",a b c)\nyes\n.endif\n"), [["yes"]]);
    // verified: `.if` alone is false
    assert_eq!(words_of(".if\nno\n.else\nyes\n.endif\n"), [["yes"]]);
}

#[test]
fn a_bad_condition_aborts() {
    // verified
    let lexed = lex(".if foo(\n.notice \"after\"\n");
    assert_eq!(
        lexed.alerts(),
        ["1: unparsable conditional expression 'foo(' in '.if' at position 1:\n  .if foo(\n      ^"]
    );
    assert!(lexed.aborted);
    assert_eq!(lexed.diags.list.len(), 1, "nothing is read after it");
    let lexed = lex(".if 0\n.elif 1 2\n.endif\n");
    assert_eq!(lexed.alerts(), [
        "2: unexpected character '2' at the end of conditional expression '1 2' in '.elif' at position 3:\n  .elif 1 2\n          ^"
    ]);
}

#[test]
fn openssl_predicates_cannot_be_evaluated() {
    let lexed = lex(".if openssl_version_atleast(1.1.1)\n.endif\n");
    assert!(lexed.aborted);
    assert!(lexed.alerts()[0].contains("rustls"), "{:?}", lexed.alerts());
    assert!(words_of(".if ssllib_name_startswith(OpenSSL)\nx\n.endif\n").is_empty());
}

#[test]
fn misplaced_block_keywords() {
    // verified: messages, and which ones stop the file
    let cases: &[(&str, &[&str])] = &[
        (".elif 1\nx\n", &["1: lone '.elif' with no matching '.if'."]),
        (".else\nx\n", &["1: lone '.else' with no matching '.if'."]),
        (".endif\nx\n", &["1: lone '.endif' with no matching '.if'."]),
        (".if 1\n.else\n.else\nx\n", &["3: '.else' after '.else' is not permitted."]),
        (".if 1\n.else\n.elif 1\nx\n", &["3: '.elif' after '.else' is not permitted."]),
        (".if 1\n.else x\nx\n", &["2: Unexpected argument 'x' for '.else'.", "2: non-terminated '.if' block."]),
        (".if 1\n.endif x\nx\n", &["2: Unexpected argument 'x' for '.endif'.", "2: non-terminated '.if' block."]),
    ];
    for (text, expected) in cases {
        let lexed = lex(text);
        assert_eq!(lexed.alerts(), *expected, "{text:?}");
        assert!(lexed.lines.is_empty(), "{text:?}: reading stopped");
        assert!(lexed.aborted, "{text:?}");
    }
}

#[test]
fn unterminated_block() {
    // verified: reported on the last line
    let lexed = lex(".if 1\n.if 0\n.notice \"x\"\n");
    assert_eq!(lexed.alerts(), ["3: non-terminated '.if' block."]);
    assert!(lexed.rendered().contains("  hint: the '.if' of line 2 has no matching '.endif'"));
    assert!(lexed.aborted);
}

#[test]
fn nesting_depth() {
    // verified: 99 levels are fine, the 100th is refused
    let ok = format!("{}x\n{}", ".if 1\n".repeat(99), ".endif\n".repeat(99));
    assert_eq!(words_of(&ok), [["x"]]);
    let lexed = lex(&format!("{}{}", ".if 1\n".repeat(100), ".endif\n".repeat(100)));
    assert_eq!(lexed.alerts(), ["100: too many nested '.if', max is 100."]);
    assert!(lexed.aborted);
}

// === directives ===

#[test]
fn directives_produce_diagnostics() {
    let lexed = lex(".diag \"d\"\n.notice \"n\"\n.warning \"w w\"\n.notice\n");
    let got: Vec<(Level, &str, bool)> =
        lexed.diags.list.iter().map(|d| (d.level, d.message.as_str(), d.directive)).collect();
    assert_eq!(
        got,
        [
            (Level::Diag, "d", true),
            (Level::Notice, "n", true),
            (Level::Warning, "w w", true),
            (Level::Notice, "", true)
        ]
    );
    assert!(lexed.lines.is_empty() && !lexed.aborted);
    assert!(lexed.rendered().contains("[WARNING]  (1) : config : parsing [t.cfg:3]: 'w w'.\n"));
}

#[test]
fn alert_directive_stops_loading() {
    // verified: nothing after `.alert` is read
    let lexed = lex("a\n.alert \"stop here\"\nb\n.notice \"after\"\n");
    assert_eq!(lexed.words(), [["a"]]);
    assert_eq!(lexed.alerts(), ["2: stop here"]);
    assert!(lexed.aborted);
    assert!(lexed.rendered().contains("parsing [t.cfg:2]: 'stop here'."));
}

#[test]
fn directives_in_false_branches_are_ignored() {
    let lexed = lex(".if 0\n.alert \"no\"\n.foo\n.endif\n.if 1\n.else\n.alert \"no\"\n.endif\n");
    assert!(lexed.diags.list.is_empty(), "{:?}", lexed.alerts());
}

#[test]
fn directive_arguments() {
    // verified: a third word is refused, but an empty one is not noticed
    let lexed = lex(".notice a b\n.notice x \"\" y\n.notice \"\" z\n");
    assert_eq!(
        lexed.alerts(),
        [
            "1: Unexpected argument 'b' for '.notice'. Use quotes if the message should contain spaces.",
            "3: Unexpected argument 'z' for '.notice'. Use quotes if the message should contain spaces.",
        ]
    );
    assert_eq!(lexed.diags.list.iter().filter(|d| d.directive).map(|d| d.message.as_str()).collect::<Vec<_>>(), ["x"]);
}

#[test]
fn unknown_directive_stops_the_file() {
    // verified
    let lexed = lex(".foo x\nglobal\n");
    assert_eq!(lexed.alerts(), ["1: unknown directive '.foo'."]);
    assert!(lexed.lines.is_empty());
    assert!(!lexed.aborted, "other files are still read");
}

// === scopes ===

#[test]
fn scope_lines() {
    // verified: `[name]` is accepted silently; these three are refused
    assert_eq!(words_of("[scope1]\n[a.b:c_d-e] # c\nglobal\n"), [["global"]]);
    let lexed = lex("[bad scope]\n[]\n[ok] x\n[open\nglobal\n");
    assert_eq!(
        lexed.alerts(),
        [
            "1: character ' ' is not permitted in a scope name.",
            "2: empty scope name is forbidden.",
            "3: character 'x' is not permitted after scope declaration.",
            "4: empty scope name is forbidden.",
        ]
    );
    assert_eq!(lexed.words(), [["global"]]);
    assert!(lexed.aborted);
}
