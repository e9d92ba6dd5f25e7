//! The runtime commands on TLS ticket key files: `show tls-keys [id|*]` lists the
//! files or prints their keys, `set ssl tls-key <id|file> <key>` rotates a file's
//! keys (HAProxy 2.6 runs both at any CLI level). HAProxy counterpart: ssl_sock.c
//! (`cli_parse_show_tlskeys()`, `cli_io_handler_tlskeys_files()`,
//! `cli_parse_set_tlskeys()`).

use std::sync::Arc;

use super::bind::BindTls;
use super::ticket_keys::{TicketKey, TicketKeys};

/// The key files the TLS binds use, by id.
#[derive(Debug, Default)]
pub struct KeyFilesCli {
    files: Vec<Arc<TicketKeys>>,
}

impl KeyFilesCli {
    /// The key files of `binds`, once each, by id.
    pub fn new(binds: &[Arc<BindTls>]) -> KeyFilesCli {
        let mut files: Vec<Arc<TicketKeys>> = Vec::new();
        for k in binds.iter().filter_map(|b| b.ticket_keys.as_ref()) {
            if !files.iter().any(|f| Arc::ptr_eq(f, k)) {
                files.push(k.clone());
            }
        }
        KeyFilesCli::from_files(files)
    }

    /// The CLI over `files`, by id.
    pub fn from_files(mut files: Vec<Arc<TicketKeys>>) -> KeyFilesCli {
        files.sort_by_key(|f| f.id);
        KeyFilesCli { files }
    }

    /// The file a command names: `#<id>` or its name as the configuration writes it.
    fn find(&self, reference: &str) -> Option<&Arc<TicketKeys>> {
        match reference.strip_prefix('#') {
            Some(id) => {
                let id = rampart_cfg::strtol_whole(id)?;
                self.files.iter().find(|f| i64::try_from(f.id).is_ok_and(|i| i == id))
            }
            None => self.files.iter().find(|f| f.file == reference),
        }
    }

    /// `show tls-keys [id|*]`: without an argument the files, with `*` (any word
    /// starting with it) every file's keys, else the keys of one file.
    pub fn show(&self, arg: Option<&str>) -> String {
        let shown: Vec<&Arc<TicketKeys>> = match arg {
            None => {
                let rows = self.files.iter().map(|f| format!("{} ({})\n", f.id, f.file));
                return std::iter::once("# id (file)\n".to_owned()).chain(rows).collect();
            }
            Some(a) if a.starts_with('*') => self.files.iter().collect(),
            Some(a) => match self.find(a) {
                Some(f) => vec![f],
                None => return "'show tls-keys' unable to locate referenced filename\n".into(),
            },
        };
        let mut out = String::from("# id secret\n");
        for f in shown {
            out.push_str(&format!("# {} ({})\n", f.id, f.file));
            for (i, k) in f.ring().keys().iter().enumerate() {
                out.push_str(&format!("{}.{i} {}\n", f.id, k.base64()));
            }
        }
        out
    }

    /// `set ssl tls-key <id|file> <key>`: `words` is the whole command.
    pub fn set(&self, words: &[&str]) -> String {
        let (Some(reference), Some(key)) =
            (words.get(3).filter(|w| !w.is_empty()), words.get(4).filter(|w| !w.is_empty()))
        else {
            return "'set ssl tls-key' expects a filename and the new TLS key in base64 encoding.\n".into();
        };
        let Some(file) = self.find(reference) else {
            return "'set ssl tls-key' unable to locate referenced filename\n".into();
        };
        let Some(raw) = TicketKey::decode(key.as_bytes()) else {
            return "'set ssl tls-key' received invalid base64 encoded TLS key.\n".into();
        };
        match TicketKey::new(&raw) {
            Some(k) if file.push(&k) => "TLS ticket key updated!\n".into(),
            _ => "'set ssl tls-key' received a key of wrong size.\n".into(),
        }
    }
}
