//! Debian's `dnsmasq` as the resolver tests' DNS server (a real one, beside the scripted
//! [`DnsServer`](crate::DnsServer) that only the tests of deliberately broken answers
//! need): started by the test, unprivileged options only, on a loopback port of its own
//! (UDP and TCP), with no upstream and no `/etc/hosts`. It answers for the `test`
//! domain from the records the test sets: A and AAAA in a hosts file that a SIGHUP makes
//! it read again (each change waited for until it answers so), SRV and CNAME records in
//! its configuration file (a change restarts it on the same port). A name under `test`
//! without records answers NXDOMAIN (`local=/test/`), one outside it REFUSED (no
//! upstream); an SRV answer carries its targets' addresses as additional records (none
//! for a target that is a CNAME). Queries are counted from its log.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::proxy::TempDir;
use crate::sync::lock;
use crate::Srv;

/// Where Debian's `dnsmasq-base` installs it.
const DNSMASQ: &str = "/usr/sbin/dnsmasq";

/// A running dnsmasq, stopped on drop.
pub struct Dnsmasq {
    dir: TempDir,
    port: u16,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// `None` before the first start.
    child: Option<Child>,
    /// Name (lower case) -> its addresses, both families.
    hosts: BTreeMap<String, Vec<IpAddr>>,
    /// SRV name -> records.
    srv: BTreeMap<String, Vec<Srv>>,
    /// Alias -> target.
    cnames: BTreeMap<String, String>,
}

impl Dnsmasq {
    /// Starts dnsmasq, or returns `None` after a `SKIPPED <test>` line when it is not
    /// installed (`apt-get install dnsmasq-base`); a failure instead under
    /// `RAMPART_REQUIRE_HAPROXY` (the switch that makes every reference tool required).
    pub fn start_or_skip(test: &str) -> Option<Dnsmasq> {
        if !std::path::Path::new(DNSMASQ).is_file() {
            assert!(
                !crate::haproxy_required(),
                "{test}: dnsmasq is missing (apt-get install dnsmasq-base), and RAMPART_REQUIRE_HAPROXY makes that a failure"
            );
            let line = format!("SKIPPED {test}: dnsmasq is not installed (apt-get install dnsmasq-base)\n");
            let _ = io::stderr().write_all(line.as_bytes());
            return None;
        }
        Some(Dnsmasq::start().expect("dnsmasq starts"))
    }

    fn start() -> io::Result<Dnsmasq> {
        let mut last = io::Error::other("no attempt");
        // another process may take the port before dnsmasq does: another one then
        for _ in 0..20 {
            let dnsmasq = Dnsmasq { dir: TempDir::new()?, port: free_port()?, state: Mutex::default() };
            match dnsmasq.restart() {
                Ok(()) => return Ok(dnsmasq),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Where it listens, UDP and TCP.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// `name`'s IPv4 addresses become `ips` (none: no A record); answered so on return.
    pub fn set_a(&self, name: &str, ips: &[Ipv4Addr]) {
        self.set_addrs(name, ips.iter().map(|&ip| IpAddr::V4(ip)).collect(), false);
    }

    /// `name`'s IPv6 addresses become `ips`; answered so on return.
    pub fn set_aaaa(&self, name: &str, ips: &[Ipv6Addr]) {
        self.set_addrs(name, ips.iter().map(|&ip| IpAddr::V6(ip)).collect(), true);
    }

    fn set_addrs(&self, name: &str, ips: Vec<IpAddr>, v6: bool) {
        let name = name.to_ascii_lowercase();
        let mut st = lock(&self.state);
        let all = st.hosts.entry(name.clone()).or_default();
        all.retain(|ip| ip.is_ipv6() != v6);
        all.extend(ips.iter().copied());
        if all.is_empty() {
            st.hosts.remove(&name);
        }
        self.write_hosts(&st).expect("hosts file");
        st.signal(Signal::SIGHUP);
        drop(st);
        // dnsmasq reads the file again when it gets to the signal: wait until it did
        let qtype = if v6 { 28 } else { 1 };
        let want: Vec<Vec<u8>> = ips
            .iter()
            .map(|ip| match ip {
                IpAddr::V4(a) => a.octets().to_vec(),
                IpAddr::V6(a) => a.octets().to_vec(),
            })
            .collect();
        let start = Instant::now();
        while !self.ask(&name, qtype).is_some_and(|(_, mut got)| {
            got.sort();
            let mut w = want.clone();
            w.sort();
            got == w
        }) {
            assert!(start.elapsed() < crate::patience(), "dnsmasq never served the new records of {name}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// `name` has no address any longer: it answers NXDOMAIN (unless other records of
    /// it remain).
    pub fn remove(&self, name: &str) {
        self.set_a(name, &[]);
        self.set_aaaa(name, &[]);
    }

    /// The SRV records of `name` (dnsmasq restarted on the same port to read them).
    pub fn set_srv(&self, name: &str, records: &[Srv]) {
        lock(&self.state).srv.insert(name.to_ascii_lowercase(), records.to_vec());
        self.restart().expect("dnsmasq restarts");
    }

    /// `alias` is a CNAME of `target` (which must have addresses: dnsmasq answers a
    /// CNAME only for a target it knows); dnsmasq restarted to read it.
    pub fn set_cname(&self, alias: &str, target: &str) {
        lock(&self.state).cnames.insert(alias.to_ascii_lowercase(), target.to_ascii_lowercase());
        self.restart().expect("dnsmasq restarts");
    }

    /// Queries received so far for `name` (any type), as dnsmasq logged them.
    pub fn queries_for(&self, name: &str) -> usize {
        let log = std::fs::read_to_string(self.dir.path().join("dnsmasq.log")).unwrap_or_default();
        let asked = format!(" {} from ", name.to_ascii_lowercase());
        log.lines().filter(|l| l.contains(": query[") && l.contains(&asked)).count()
    }

    /// Stops answering anything (SIGSTOP), until [`Dnsmasq::resume`].
    pub fn pause(&self) {
        lock(&self.state).signal(Signal::SIGSTOP);
    }

    /// Answers again after [`Dnsmasq::pause`].
    pub fn resume(&self) {
        lock(&self.state).signal(Signal::SIGCONT);
    }

    /// Writes the files and (re)starts dnsmasq on its port, waiting until it answers.
    fn restart(&self) -> io::Result<()> {
        let mut st = lock(&self.state);
        st.stop();
        self.write_hosts(&st)?;
        let conf = self.dir.path().join("dnsmasq.conf");
        std::fs::write(&conf, self.conf(&st))?;
        // appended to: the queries counted across restarts
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.path().join("dnsmasq.log"))?;
        let mut cmd = Command::new(DNSMASQ);
        cmd.arg("--keep-in-foreground").arg(format!("--conf-file={}", conf.display()));
        cmd.stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log);
        let child = st.child.insert(crate::spawn_guarded(&mut cmd)?);
        let start = Instant::now();
        while self.ask("ready.probe", 1).is_none() {
            if let Ok(Some(status)) = child.try_wait() {
                let log = std::fs::read_to_string(self.dir.path().join("dnsmasq.log")).unwrap_or_default();
                return Err(io::Error::other(format!("dnsmasq exited ({status}): {log}")));
            }
            if start.elapsed() > crate::patience() {
                return Err(io::Error::other("dnsmasq never answered"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    fn conf(&self, st: &State) -> String {
        let mut c = format!(
            "port={}\nlisten-address=127.0.0.1\nbind-interfaces\nno-resolv\nno-hosts\nno-poll\n\
             addn-hosts={}\nlocal=/test/\nlog-facility=-\nlog-queries\npid-file=\n",
            self.port,
            self.dir.path().join("hosts").display()
        );
        for (name, records) in &st.srv {
            for (prio, weight, port, target) in records {
                c.push_str(&format!("srv-host={name},{target},{port},{prio},{weight}\n"));
            }
        }
        for (alias, target) in &st.cnames {
            c.push_str(&format!("cname={alias},{target}\n"));
        }
        c
    }

    fn write_hosts(&self, st: &State) -> io::Result<()> {
        let mut text = String::new();
        for (name, ips) in &st.hosts {
            for ip in ips {
                text.push_str(&format!("{ip} {name}\n"));
            }
        }
        let path: PathBuf = self.dir.path().join("hosts");
        let tmp = self.dir.path().join("hosts.new");
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, path)
    }

    /// Asks `name`/`qtype` over UDP: the response code and the data of the answer
    /// records of that type; `None` when nothing came back within 100 ms.
    fn ask(&self, name: &str, qtype: u16) -> Option<(u8, Vec<Vec<u8>>)> {
        let sock = UdpSocket::bind("127.0.0.1:0").ok()?;
        sock.set_read_timeout(Some(Duration::from_millis(100))).ok()?;
        let mut q = vec![0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.extend_from_slice(&[0, (qtype >> 8) as u8, qtype as u8, 0, 1]);
        sock.send_to(&q, self.addr()).ok()?;
        let mut buf = [0u8; 4096];
        let n = sock.recv(&mut buf).ok()?;
        parse_answers(&buf[..n], qtype)
    }
}

impl State {
    fn signal(&self, sig: Signal) {
        let child = self.child.as_ref().expect("dnsmasq started");
        kill(Pid::from_raw(child.id() as i32), sig).expect("dnsmasq signalled");
    }

    /// Stops dnsmasq (a paused one too).
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGCONT);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        lock(&self.state).stop();
    }
}

/// A port free on 127.0.0.1 for both UDP and TCP (released for dnsmasq to take).
fn free_port() -> io::Result<u16> {
    loop {
        let udp = UdpSocket::bind("127.0.0.1:0")?;
        let port = udp.local_addr()?.port();
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
}

/// The response code and the data of the answer records of type `qtype` of `msg`.
fn parse_answers(msg: &[u8], qtype: u16) -> Option<(u8, Vec<Vec<u8>>)> {
    let rcode = msg.get(3)? & 0x0f;
    let count = u16::from_be_bytes([*msg.get(6)?, *msg.get(7)?]);
    let mut at = skip_name(msg, 12)? + 4;
    let mut out = Vec::new();
    for _ in 0..count {
        at = skip_name(msg, at)?;
        let rtype = u16::from_be_bytes([*msg.get(at)?, *msg.get(at + 1)?]);
        let len = usize::from(u16::from_be_bytes([*msg.get(at + 8)?, *msg.get(at + 9)?]));
        let data = msg.get(at + 10..at + 10 + len)?;
        if rtype == qtype {
            out.push(data.to_vec());
        }
        at += 10 + len;
    }
    Some((rcode, out))
}

/// Where the name at `at` ends (a compression pointer ends it).
fn skip_name(msg: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *msg.get(at)?;
        if len & 0xc0 == 0xc0 {
            return Some(at + 2);
        }
        at += 1 + usize::from(len);
        if len == 0 {
            return Some(at);
        }
    }
}
