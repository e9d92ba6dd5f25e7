//! haproxy.cfg -> rampart's typed configuration model, with HAProxy-style diagnostics.
//! No sockets, no runtime: its tests take milliseconds and it fuzzes well.
//!
//! - `span`: file:line of every object
//! - `diag`: alerts and warnings, rendered as HAProxy renders them
//! - `lexer`: text -> lines of words (quotes, `${VAR}`, `.if` blocks, `.alert` ...)
//! - `cond`: the `.if` / `-cc` condition language, and [`LexCtx`], what it and the lexer read
//!   from outside
//! - `envops`: `setenv`/`presetenv`/`unsetenv`/`resetenv`, applied while reading
//! - `words`: one line -> words (quotes, escapes, `${VAR}`), for the lexer and `-cc`
//! - `parse`: sections and keywords -> [`model::Config`], cross-reference checks
//! - `kw`: keyword tables, HAProxy keywords not supported yet, did-you-mean
//! - `model`: the typed, resolved configuration the daemon runs
//! - `state_file`: the servers' state file (`server-state-file`, `show servers state`)
//! - `migrate`: HAProxy 1.x keywords rewritten for 2.6 (`--migrate`, `hint:` lines)

pub mod cond;
pub mod diag;
mod envops;
pub mod kw;
pub mod lexer;
pub mod migrate;
pub mod model;
pub mod parse;
pub mod span;
pub mod state_file;
pub mod version;
mod words;

pub use cond::LexCtx;
pub use diag::{Diag, Diags, Level};
pub use model::Config;
pub use span::Span;
pub use words::strtol_whole;

use std::path::{Path, PathBuf};

/// The result of loading a configuration: the model when there was no alert, and every
/// diagnostic (warnings are reported even on success).
#[derive(Debug)]
pub struct Loaded {
    pub config: Option<Config>,
    /// The model as far as it was parsed when there were alerts (refused lines are
    /// missing from it): for the checks that find more problems to report in the same
    /// run (`rampart -c` lists every refusal of a file), never to run. Empty when
    /// `config` holds the model (one copy: a large configuration's model takes
    /// kilobytes per server). `model()` is whichever holds it.
    pub partial: Config,
    pub diags: Diags,
}

impl Loaded {
    /// The model as far as it was parsed: the configuration, or the partial one.
    pub fn model(&self) -> &Config {
        self.config.as_ref().unwrap_or(&self.partial)
    }

    pub fn model_mut(&mut self) -> &mut Config {
        self.config.as_mut().unwrap_or(&mut self.partial)
    }

    pub fn into_model(self) -> Config {
        self.config.unwrap_or(self.partial)
    }
}

/// Loads configuration files in order; a directory contributes its `*.cfg` files in
/// lexical order (as `haproxy -f <dir>`).
pub fn load_files(paths: &[PathBuf], ctx: &LexCtx<'_>) -> Loaded {
    let mut diags = Diags::default();
    let mut texts = Vec::new();
    for path in paths {
        for file in expand_path(path, &mut diags) {
            match std::fs::read_to_string(&file) {
                Ok(text) => texts.push((file.display().to_string(), text)),
                Err(e) => diags
                    .push(Diag::alert(None, format!("Could not open configuration file {} : {}", file.display(), e))),
            }
        }
    }
    if diags.has_alerts() {
        return Loaded { config: None, partial: Config::default(), diags };
    }
    parse_texts(&texts, ctx, diags)
}

/// Parses one configuration given as text (`name` is used in diagnostics).
pub fn parse_str(name: &str, text: &str, ctx: &LexCtx<'_>) -> Loaded {
    parse_texts(&[(name.to_owned(), text.to_owned())], ctx, Diags::default())
}

fn expand_path(path: &Path, diags: &mut Diags) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    match std::fs::read_dir(path) {
        Ok(rd) => {
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "cfg") && p.is_file())
                .collect();
            files.sort();
            files
        }
        Err(e) => {
            diags.push(Diag::alert(None, format!("Could not open configuration directory {} : {}", path.display(), e)));
            Vec::new()
        }
    }
}

fn parse_texts(texts: &[(String, String)], ctx: &LexCtx<'_>, mut diags: Diags) -> Loaded {
    let mut files = Vec::with_capacity(texts.len());
    let mut lexer_diags = Vec::with_capacity(texts.len());
    for (name, text) in texts {
        let file: std::sync::Arc<str> = name.as_str().into();
        let mut file_diags = Diags::default();
        let lines = lexer::lex(&file, text, ctx, &mut file_diags);
        files.push(parse::FileLines { name: file, lines });
        lexer_diags.push(file_diags.list);
    }
    // main sets HAPROXY_LOCALPEER (from -L or the host name) before loading, as HAProxy
    let local = parse::LocalPeer {
        name: (ctx.env)("HAPROXY_LOCALPEER").unwrap_or_default(),
        cmdline: (ctx.env)("HAPROXY_LOCALPEER_CMDLINE").is_some(),
    };
    let mut partial = parse::parse_files(&files, lexer_diags, &mut diags, &local);
    parse::spoe::load_files(&mut partial, ctx, &mut diags);
    if diags.has_alerts() {
        Loaded { config: None, partial, diags }
    } else {
        Loaded { config: Some(partial), partial: Config::default(), diags }
    }
}
