//! `default-path` (global) through the binary and against haproxy 2.6: a configuration
//! file in another directory than the one the proxy starts in names its error page, its
//! `return lf-file` body and its map by relative names; `default-path config` reads them
//! beside the file, `origin <dir>` from `<dir>`, and without the line they are looked
//! for in the starting directory (the proxy refuses to start). What the client receives
//! shows which files were read. HAProxy counterpart: `cfg_apply_default_path()`
//! (src/cfgparse.c).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rampart_testkit::{haproxy_or_skip, Proxy, Running};

const RAMPART: &str = env!("CARGO_BIN_EXE_rampart");

/// The test's own directory: `conf/site.cfg` with `conf/errors/503.http`,
/// `conf/bodies/hello.txt` and `conf/maps/paths.map`.
struct Files(PathBuf);

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn files(tag: &str, default_path: &str) -> Files {
    let dir = std::env::temp_dir().join(format!("rampart-default-path-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let conf = dir.join("conf");
    for sub in ["errors", "bodies", "maps"] {
        std::fs::create_dir_all(conf.join(sub)).unwrap();
    }
    std::fs::write(
        conf.join("errors/503.http"),
        "HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nfrom-file",
    )
    .unwrap();
    std::fs::write(conf.join("bodies/hello.txt"), "hello %[path]\n").unwrap();
    std::fs::write(conf.join("maps/paths.map"), "/m/a mapped-a\n").unwrap();
    let site = format!(
        "global\n  {default_path}\n\
         frontend fe1\n  bind \"fd@${{fe1}}\"\n\
         \x20 errorfile 503 errors/503.http\n\
         \x20 http-request return status 200 content-type text/plain lf-file bodies/hello.txt if {{ path /hello }}\n\
         \x20 http-request return status 200 content-type text/plain lf-string \"%[path,map(maps/paths.map,none)]\" \
         if {{ path_beg /m/ }}\n\
         \x20 default_backend nosrv\n\
         backend nosrv\n"
    );
    std::fs::write(conf.join("site.cfg"), site).unwrap();
    Files(dir)
}

const DEFAULTS: &str = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n";

fn start(binary: &Path, f: &Files) -> Result<Running, String> {
    Proxy::new(binary)
        .listener("fe1")
        .config(DEFAULTS)
        .arg("-f")
        .arg(f.0.join("conf/site.cfg"))
        .start()
        .map_err(|e| format!("{e:?}"))
}

fn get(proxy: &Running, path: &str) -> String {
    let mut c = TcpStream::connect(proxy.addr("fe1")).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = c.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split(' ').nth(1).unwrap_or_default().to_owned();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_owned();
    format!("{status} {body}")
}

fn scenario(binary: &Path, f: &Files) -> Vec<String> {
    let proxy = start(binary, f).unwrap_or_else(|e| panic!("{} starts: {e}", binary.display()));
    ["/hello", "/m/a", "/m/b", "/down"].iter().map(|p| get(&proxy, p)).collect()
}

const SERVED: [&str; 4] = ["200 hello /hello\n", "200 mapped-a", "200 none", "503 from-file"];

#[test]
fn default_path_config_reads_the_files_beside_the_configuration() {
    let f = files("config", "default-path config");
    assert_eq!(scenario(Path::new(RAMPART), &f), SERVED);
    if let Some(h) = haproxy_or_skip("default_path_config_reads_the_files_beside_the_configuration") {
        assert_eq!(scenario(&h, &f), SERVED, "haproxy 2.6");
    }
}

#[test]
fn default_path_origin_and_parent_name_other_directories() {
    let origin = files("origin", "");
    let line = format!("default-path origin {}", origin.0.join("conf").display());
    let f = files("origin2", &line);
    // the files of `origin`'s directory serve the second one's configuration
    std::fs::remove_dir_all(f.0.join("conf/errors")).unwrap();
    assert_eq!(scenario(Path::new(RAMPART), &f), SERVED);
    // `parent`: the directory above the configuration's, where no such files are
    let p = files("parent", "default-path parent");
    let err = start(Path::new(RAMPART), &p).err().expect("refused: the files are not in the parent directory");
    assert!(err.contains("errorfile : error opening file 'errors/503.http'."), "{err}");
}

#[test]
fn without_default_path_relative_names_start_where_the_proxy_runs() {
    let f = files("current", "default-path current");
    for binary in [
        Some(PathBuf::from(RAMPART)),
        haproxy_or_skip("without_default_path_relative_names_start_where_the_proxy_runs"),
    ]
    .into_iter()
    .flatten()
    {
        let err = start(&binary, &f).err().expect("refused: the files are not in the starting directory");
        assert!(err.contains("error opening file 'errors/503.http'"), "{}: {err}", binary.display());
    }
}
