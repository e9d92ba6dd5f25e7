//! Minimal entry point until the haproxy-compatible command line lands: `-f <cfg>`.
use std::path::PathBuf;
use std::sync::Arc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files: Vec<PathBuf> = args.windows(2).filter(|w| w[0] == "-f").map(|w| PathBuf::from(&w[1])).collect();
    let env = |k: &str| std::env::var(k).ok();
    let ctx = rampart_cfg::LexCtx {
        env: &env,
        version: rampart_cfg::version::HAPROXY_COMPAT_VERSION,
        features: rampart_cfg::version::FEATURES,
    };
    let loaded = rampart_cfg::load_files(&files, &ctx);
    let pid = std::process::id();
    for d in &loaded.diags.list {
        eprint!("{}", d.render(pid));
    }
    let Some(cfg) = loaded.config else { std::process::exit(1) };
    let maxconn = cfg.global.maxconn.unwrap_or(4096);
    let nbthread = cfg.global.nbthread.unwrap_or(1);
    let rt = match rampart::proxy::build(&cfg, maxconn) {
        Ok(rt) => Arc::new(rt),
        Err(diags) => {
            for d in diags {
                eprint!("{}", d.render(pid));
            }
            std::process::exit(1)
        }
    };
    let listeners = match rampart::listener::bind_all(&cfg, nbthread) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("[ALERT]    ({pid}) : {}", e.0);
            std::process::exit(1)
        }
    };
    let settings = rampart::worker::Settings { nbthread, maxconn, hard_stop_after: cfg.global.hard_stop_after };
    std::process::exit(rampart::worker::run(rt, listeners, settings));
}
