//! A backend's FastCGI application (`use-fcgi-app`, `fcgi-app` section) as the
//! FastCGI server side (`back::fcgi`) reads it, compiled once per configuration.
//! HAProxy counterpart: `struct fcgi_app` (include/haproxy/fcgi-app-t.h).

use regex::bytes::Regex;

/// One `fcgi-app` section, compiled.
#[derive(Debug)]
pub struct FcgiAppRt {
    pub name: String,
    /// `DOCUMENT_ROOT`, and the prefix of `SCRIPT_FILENAME` and `PATH_TRANSLATED`.
    pub docroot: String,
    /// Appended to a script name ending in `/`.
    pub index: String,
    /// `path-info`: capture 1 is the script name, capture 2 the path info.
    pub path_info: Option<Regex>,
    /// The `fcgi-app` section's rules on request headers.
    pub app: rampart_cfg::model::FcgiApp,
    /// BEGIN_REQUEST asks the application to keep the connection (`option keep-conn`).
    pub keep_conn: bool,
    /// `SERVER_SOFTWARE`.
    pub software: String,
    /// `log-stderr`: where the application's STDERR records go (`None`: dropped).
    pub stderr: Option<crate::log::sink::Loggers>,
}

impl FcgiAppRt {
    /// Compiles `app`; `Err`: the message of a `path-info` regex that does not compile.
    pub fn build(app: &rampart_cfg::model::FcgiApp) -> Result<FcgiAppRt, String> {
        let path_info = match &app.path_info {
            Some(src) => Some(
                crate::pattern::reg::compile(&src.text, false)
                    .map_err(|e| format!("fcgi-app '{}' : path-info '{}' : {e}", app.name, src.text))?,
            ),
            None => None,
        };
        Ok(FcgiAppRt {
            name: app.name.clone(),
            docroot: app.docroot.clone(),
            index: app.index.clone(),
            path_info,
            app: app.clone(),
            keep_conn: app.keep_conn,
            software: format!("rampart {}", crate::version::version_string()),
            stderr: None,
        })
    }

    /// Whether request header `name` is kept from the application.
    pub fn hides(&self, name: &[u8]) -> bool {
        self.app.hides(name)
    }
}
