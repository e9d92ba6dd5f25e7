//! Arbitrary text as a whole haproxy.cfg: lexer, sections, every keyword parser and the
//! cross-reference checks. Nothing may panic, and the result keeps the loader's promise:
//! a model exactly when no alert was reported, and every diagnostic renders.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rampart_cfg::{parse_str, LexCtx};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // `errorfile` and `http-request return file` read the file they name, as haproxy
    // does at parse time: keep the fuzzer away from endless device files.
    if ["/dev", "/proc", "/sys"].iter().any(|p| text.contains(p)) {
        return;
    }
    let env = |name: &str| match name {
        "A" => Some("a  b".to_owned()),
        "P" => Some("8080".to_owned()),
        _ => None,
    };
    let ctx = LexCtx { env: &env, version: "2.6.12", features: &["EPOLL", "POLL"] };
    let loaded = parse_str("fuzz.cfg", &text, &ctx);
    assert_eq!(loaded.config.is_some(), !loaded.diags.has_alerts());
    for diag in &loaded.diags.list {
        let _ = diag.render(1);
    }
});
