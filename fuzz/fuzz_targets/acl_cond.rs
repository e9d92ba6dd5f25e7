//! Arbitrary text as a proxy's `acl` lines followed by conditions: ACL expressions
//! (criteria, options, operators, patterns, `-f` files) and conditions (terms, `!`,
//! `or`/`||`, braces) must compile or fail with a message, never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::rc::Rc;

use rampart::acl::{compile_acl_lines, cond::compile_cond_at, PatRefs};
use rampart::sample::expr::{CompileCx, Site};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // `-f` reads the file it names: keep the fuzzer away from endless device files.
    if ["/dev", "/proc", "/sys"].iter().any(|p| text.contains(p)) {
        return;
    }
    let cfg = rampart_cfg::Config::default();
    let mut cx = CompileCx::new(&cfg, 0, Site::Acl);
    // No DNS: an address pattern that is a host name must not leave the machine.
    cx.pats = Rc::new(PatRefs::without_dns());
    let mut acls: Vec<(String, Vec<String>)> = Vec::new();
    let mut conds: Vec<(bool, Vec<String>, usize)> = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace().map(str::to_owned);
        match words.next().as_deref() {
            Some("acl") => {
                let name = words.next().unwrap_or_default();
                acls.push((name, words.collect()));
            }
            Some(kw @ ("if" | "unless")) => conds.push((kw == "unless", words.collect(), acls.len())),
            _ => {}
        }
    }
    let lines: Vec<(&str, &[String])> = acls.iter().map(|(n, w)| (n.as_str(), w.as_slice())).collect();
    let (set, errs) = compile_acl_lines(&lines, &mut cx);
    for (i, e) in &errs {
        assert!(*i < lines.len() && !e.is_empty());
    }
    for (negate, words, upto) in &conds {
        if let Err(e) = compile_cond_at(words, *negate, &set, *upto, &mut cx) {
            assert!(!e.is_empty());
        }
    }
    let _ = set.take_warnings();
});
