//! Arbitrary text through the haproxy.cfg lexer (as a file) and the condition evaluator
//! (as a `-cc` argument). Neither may panic, and the lines handed to the parser keep the
//! lexer's promises.

#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rampart_cfg::cond::eval_str;
use rampart_cfg::lexer::lex;
use rampart_cfg::{Diags, LexCtx};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let env = |name: &str| match name {
        "A" => Some("a  b".to_owned()),
        "E" => Some(String::new()),
        _ => None,
    };
    let ctx = LexCtx { env: &env, version: "2.6.12", features: &["EPOLL", "POLL"] };
    let file: Arc<str> = "fuzz.cfg".into();
    let mut diags = Diags::default();
    for line in lex(&file, &text, &ctx, &mut diags) {
        assert!(line.words.len() <= 64, "at most 64 words");
        assert!(line.words.first().is_some_and(|w| !w.is_empty()), "the first word is never empty");
        assert!(line.words.last().is_some_and(|w| !w.is_empty()), "no trailing empty word");
        assert!(line.span.line >= 1);
    }
    for diag in &diags.list {
        let _ = diag.render(1);
    }
    let _ = eval_str(&text, &ctx);
});
