//! The crt-lists as the runtime API sees them: `show ssl crt-list [-n] [<list>]`,
//! `add ssl crt-list <list> <crt|payload>`, `del ssl crt-list <list> <crt[:line]>`,
//! with HAProxy 2.6's replies. Adding or deleting a line builds a new [`SniStore`] for
//! every bind reading the list and swaps it in: the next handshake sees it, those under
//! way keep what they had. The `ca-file`, `ca-verify-file` and `crl-file` of an added
//! line name files of the CA store ([`super::castore`]), and a commit there rebuilds
//! the configurations of the lines naming the file ([`ListLines`]).
//! HAProxy counterpart: ssl_crtlist.c (the `ssl crt-list` CLI commands).

use std::path::Path;
use std::sync::Arc;

use rustls::sign::CertifiedKey;

use super::bind::{based, BindTls, FileLookup};
use super::castore::{LineSwap, LineUsers};
use super::crtlist::{self, CrtLine, Ctx};
use super::sni::{cert_names, Entry, Origin};

/// One crt-list: its lines and the binds that read it.
#[derive(Debug)]
pub struct RtList {
    /// The file as the configuration named it (`crt-base` applied).
    pub name: String,
    pub lines: Vec<CrtLine>,
    /// The number of the last line (an added line gets the next one).
    pub line_count: usize,
    /// Indexes of the binds reading it.
    pub binds: Vec<usize>,
    /// A `crt <directory>`: one line per file, no options nor filters.
    pub directory: bool,
}

/// The crt-lists of `binds`, sorted by name as HAProxy lists them.
pub fn from_binds(binds: &[Arc<BindTls>]) -> Vec<RtList> {
    let mut out: Vec<RtList> = Vec::new();
    for (i, b) in binds.iter().enumerate() {
        for l in &b.lists {
            match out.iter_mut().find(|r| r.name == l.name) {
                Some(r) if !r.binds.contains(&i) => r.binds.push(i),
                Some(_) => {}
                None => out.push(RtList {
                    name: l.name.clone(),
                    lines: l.lines.clone(),
                    line_count: l.line_count,
                    binds: vec![i],
                    directory: l.directory,
                }),
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `name` without its trailing slashes, as HAProxy looks lists up.
fn trimmed(name: &str) -> &str {
    name.trim_end_matches('/')
}

/// `show ssl crt-list [-n] [<list>]` (`args`: the words after `crt-list`).
pub fn show(lists: &[RtList], args: &[&str]) -> String {
    let (numbered, name) = match args.first() {
        Some(&"-n") => (true, args.get(1).copied()),
        first => (false, first.copied()),
    };
    if numbered && name.is_none_or(str::is_empty) {
        return "'show ssl crt-list -n' expects a filename or a directory\n".to_owned();
    }
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return lists.iter().map(|l| format!("{}\n", l.name)).collect();
    };
    let Some(list) = lists.iter().find(|l| l.name == trimmed(name)) else {
        return "didn't find the specified filename\n".to_owned();
    };
    let mut out = format!("# {}\n", list.name);
    for l in &list.lines {
        out.push_str(&l.crt.display().to_string());
        if numbered {
            out.push_str(&format!(":{}", l.line));
        }
        out.push_str(&l.echo());
        out.push('\n');
    }
    out
}

/// A certificate store's certificate (`Ok(None)`: an empty store; `Err`: no store).
pub type CertLookup = Result<Option<Arc<CertifiedKey>>, ()>;

/// What `add` and `del` need of the certificate stores.
pub struct Stores<'a> {
    pub binds: &'a [Arc<BindTls>],
    /// The certificate of a file: `Ok(None)` when its store is empty (`new ssl cert`
    /// without a commit), `Err` when there is no such store.
    pub cert: &'a dyn Fn(&str) -> CertLookup,
    /// The CA and CRL files of the runtime store, by name: the only ones a line
    /// added at run time may name.
    pub files: FileLookup<'a>,
}

/// `add ssl crt-list <list> <crt>`, or with the line in `payload`.
pub fn add(lists: &mut [RtList], st: &Stores<'_>, args: &[&str], payload: Option<&str>) -> String {
    let list_arg = args.first().copied().unwrap_or("");
    if list_arg.is_empty() || (payload.is_none() && args.get(1).is_none_or(|a| a.is_empty())) {
        return "'add ssl crtlist' expects a filename and a certificate name\n".to_owned();
    }
    match prepare_add(lists, st, trimmed(list_arg), args.get(1).copied(), payload) {
        Ok((i, line)) => insert(&mut lists[i], st, line),
        Err(e) => format!("Can't edit the crt-list: {e}\n"),
    }
}

/// The list index and the line to add, or why not.
fn prepare_add(
    lists: &[RtList],
    st: &Stores<'_>,
    name: &str,
    crt_arg: Option<&str>,
    payload: Option<&str>,
) -> Result<(usize, CrtLine), String> {
    let i = lists.iter().position(|l| l.name == name).ok_or_else(|| format!("crt-list '{name}' does not exist!"))?;
    let g = st.binds.get(lists[i].binds[0]).map(|b| &b.global);
    let crt_base = g.and_then(|g| g.crt_base.as_deref());
    // as HAProxy, no file is read from disk for the CLI: the store has it (committed
    // once at least: a file `new` created and no commit filled is refused) or not
    let known = |p: &Path, _: bool| p.to_str().and_then(|p| (st.files)(p)).is_some_and(|c| !c.is_empty());
    let ctx = Ctx { crt_base, ca_base: g.and_then(|g| g.ca_base.as_deref()), usable: &known };
    let line = match payload {
        Some(p) => {
            let p = p.strip_suffix('\n').unwrap_or(p);
            if p.contains('\n') {
                return Err("only one line of payload is supported!".into());
            }
            crtlist::parse_line(p, "CLI", 1, &ctx)?
                .ok_or("'add ssl crtlist' should contain the certificate name in the payload")?
        }
        None => CrtLine {
            crt: based(crt_base.map(Path::to_path_buf).as_ref(), Path::new(crt_arg.unwrap_or(""))),
            line: 0,
            options: None,
            filters: Vec::new(),
        },
    };
    let path = line.crt.display().to_string();
    let list = &lists[i];
    if list.directory && path.rsplit_once('/').is_none_or(|(dir, _)| dir != list.name) {
        return Err(format!(
            "'{}' is a directory, certificate path '{path}' must contain the directory path",
            list.name
        ));
    }
    match (st.cert)(&path) {
        Err(()) => return Err(format!("certificate '{path}' does not exist!")),
        Ok(None) => return Err(format!("certificate '{path}' is empty!")),
        Ok(Some(_)) => {}
    }
    if list.directory && list.lines.iter().any(|l| l.crt == line.crt) {
        return Err("file already exists in this directory!".into());
    }
    if list.directory && (line.options.is_some() || !line.filters.is_empty()) {
        return Err("this is a directory, SSL configuration and filters are not allowed".into());
    }
    Ok((i, line))
}

/// Adds `line` to `list` and to the certificates of every bind reading it, or none
/// when one of them cannot use it.
fn insert(list: &mut RtList, st: &Stores<'_>, mut line: CrtLine) -> String {
    let path = line.crt.display().to_string();
    let mut out = format!("Inserting certificate '{path}' in crt-list '{}'", list.name);
    let Ok(Some(key)) = (st.cert)(&path) else { return format!("{out}\nFailed!\n") };
    line.line = list.line_count + 1;
    let origin = Origin { list: Arc::from(list.name.as_str()), line: line.line, crt: Arc::from(path.as_str()) };
    let mut warnings: Vec<String> = Vec::new();
    let mut staged = Vec::new();
    for &b in &list.binds {
        let Some(bind) = st.binds.get(b) else { continue };
        match bind.line_configs(line.options.as_ref(), st.files) {
            Ok((tls, w)) => {
                warnings.extend(w.into_iter().filter(|w| !warnings.contains(w)).collect::<Vec<_>>());
                staged.push((bind, tls));
                out.push('.');
            }
            Err(errs) => {
                let o = &bind.origin;
                out.push('\n');
                for e in errs {
                    out.push_str(&format!(
                        "Proxy '{}': {} for bind '{}' at [{}:{}].\n",
                        o.proxy,
                        e.trim_end_matches('.'),
                        o.addr,
                        o.file,
                        o.line
                    ));
                }
                out.push_str("Failed!\n");
                return out;
            }
        }
    }
    let names = cert_names(&key.cert[0]);
    let filters = line.names();
    for (bind, tls) in staged {
        let entry = Entry {
            excluded: line.excluded(),
            filtered: !filters.is_empty(),
            origin: Some(origin.clone()),
            tls,
            ..Entry::new(key.clone(), path.clone())
        };
        let new = bind.store.load().with(entry, if filters.is_empty() { &names } else { &filters });
        bind.store.store(Arc::new(new));
    }
    list.line_count += 1;
    list.lines.push(line);
    out.push('\n');
    if !warnings.is_empty() {
        out.push_str(&format!("Warning: accepted but not applied: {}.\n", warnings.join(", ")));
    }
    out.push_str("Success!\n");
    out
}

/// `del ssl crt-list <list> <crt[:line]>`. `Ok` carries the certificate file when no
/// bind serves it any more.
pub fn del(lists: &mut [RtList], st: &Stores<'_>, args: &[&str]) -> (String, Option<(String, Arc<CertifiedKey>)>) {
    let (Some(list_arg), Some(crt_arg)) =
        (args.first().filter(|a| !a.is_empty()), args.get(1).filter(|a| !a.is_empty()))
    else {
        return ("'del ssl crtlist' expects a filename and a certificate name\n".to_owned(), None);
    };
    match delete(lists, st, trimmed(list_arg), crt_arg) {
        Ok((msg, freed)) => (msg, freed),
        Err(e) => (format!("Can't delete the entry: {e}\n"), None),
    }
}

type Deleted = (String, Option<(String, Arc<CertifiedKey>)>);

fn delete(lists: &mut [RtList], st: &Stores<'_>, name: &str, crt_arg: &str) -> Result<Deleted, String> {
    let (path, linenum) = match crt_arg.split_once(':') {
        Some((p, n)) => match n.parse::<usize>() {
            Ok(n) => (p, n),
            Err(_) => return Err(format!("wrong line number after colons in '{crt_arg}'!")),
        },
        None => (crt_arg, 0),
    };
    let list = lists.iter_mut().find(|l| l.name == name).ok_or_else(|| format!("crt-list '{name}' does not exist!"))?;
    let key = match (st.cert)(path) {
        Err(()) => return Err(format!("certificate '{path}' does not exist!")),
        Ok(None) => return Err(format!("certificate '{path}' is empty!")),
        Ok(Some(k)) => k,
    };
    let mine: Vec<usize> = (0..list.lines.len()).filter(|&i| list.lines[i].crt.as_os_str() == path).collect();
    if mine.is_empty() {
        return Err(format!("certificate '{path}' can't be found in crt-list '{name}'!"));
    }
    let numbers = mine.iter().map(|&i| list.lines[i].line.to_string()).collect::<Vec<_>>().join(", ");
    let Some(&at) = mine.iter().find(|&&i| linenum == 0 || list.lines[i].line == linenum) else {
        return Err(format!(
            "found a certificate '{path}' but the line number is incorrect, please specify a correct line number \
             preceded by colons ({numbers})!"
        ));
    };
    if linenum == 0 && mine.len() > 1 {
        return Err(format!(
            "found the certificate '{path}' in several entries, please specify a line number preceded by colons \
             ({numbers})!"
        ));
    }
    let origin = Origin { list: Arc::from(list.name.as_str()), line: list.lines[at].line, crt: Arc::from(path) };
    let defaults: Vec<&Arc<BindTls>> = list
        .binds
        .iter()
        .filter_map(|&b| st.binds.get(b))
        .filter(|b| !b.strict_sni && b.store.load().default_origin() == Some(&origin))
        .collect();
    if !defaults.is_empty() {
        let mut e = format!(
            "certificate '{path}' cannot be deleted, it is used as default certificate by the following frontends:\n"
        );
        for b in defaults {
            e.push_str(&format!("\t- {}:{}\n", b.origin.file, b.origin.line));
        }
        return Err(e);
    }
    for &b in &list.binds {
        if let Some(bind) = st.binds.get(b) {
            if let Some(new) = bind.store.load().without(&origin) {
                bind.store.store(Arc::new(new));
            }
        }
    }
    list.lines.remove(at);
    let used = st.binds.iter().any(|b| b.store.load().get(path).is_some());
    let freed = (!used).then(|| (path.to_owned(), key));
    Ok((format!("Entry '{path}' deleted in crtlist '{name}'!\n"), freed))
}

/// The crt-lists' lines for the CA store's commands: which name a file, and their
/// configurations rebuilt with a file's new contents.
pub struct ListLines<'a> {
    pub lists: &'a [RtList],
    pub binds: &'a [Arc<BindTls>],
}

impl ListLines<'_> {
    /// The lines naming `path`, with their list.
    fn naming<'s>(&'s self, path: &'s str) -> impl Iterator<Item = (&'s RtList, &'s CrtLine)> + 's {
        self.lists.iter().flat_map(|l| l.lines.iter().map(move |line| (l, line))).filter(move |(_, line)| {
            line.options.as_ref().is_some_and(|o| o.files().any(|(p, _)| p.as_os_str() == path))
        })
    }
}

impl LineUsers for ListLines<'_> {
    fn uses(&self, path: &str) -> bool {
        self.naming(path).next().is_some()
    }

    /// Every line with a configuration of its own verifying with `path`, named by the
    /// line or inherited from the bind (HAProxy links both to the file).
    fn rebuild(&self, path: &str, files: FileLookup<'_>) -> Result<Vec<LineSwap>, String> {
        let mut out = Vec::new();
        for list in self.lists {
            for line in &list.lines {
                let Some(o) = line.options.as_ref() else { continue };
                let crt = line.crt.display().to_string();
                let origin =
                    Origin { list: Arc::from(list.name.as_str()), line: line.line, crt: Arc::from(crt.as_str()) };
                for bind in list.binds.iter().filter_map(|&b| self.binds.get(b)).filter(|b| b.line_uses(o, path)) {
                    let (tls, _) = bind.line_configs(Some(o), files).map_err(|e| e.join("\n"))?;
                    out.push(LineSwap { bind: bind.clone(), origin: origin.clone(), tls });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "crtlists_tests.rs"]
mod tests;
