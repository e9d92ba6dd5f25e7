//! The datagram socket of a nameserver: one per nameserver of a `resolvers` section,
//! connected to it, opened by the first question and shared by every later one, from
//! any thread (HAProxy 2.6 keeps one datagram socket per nameserver too). A question
//! takes an id no other waiting question of that nameserver has, sends its datagram and
//! waits for the datagram carrying its id. One task, started with the socket on the
//! thread that opened it, reads the socket and hands each datagram to the question
//! waiting for its id; what is no question's (an id nobody waits for: late or spoofed,
//! a runt, a datagram past the accepted size) is counted and dropped there.
//! (A socket per question cost five more system calls each: socket, bind, connect,
//! close and the event loop's registration; docs/SCALE-OUT.md, "Figures".)
//! HAProxy counterparts: `dns_dgram_init()`, `resolv_send_query()`,
//! `resolv_process_responses()`'s read loop (src/dns.c, src/resolvers.c).

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rampart_proto::dns::message_id;
use tokio::sync::oneshot;

use crate::dns::types::{bump, NsCounters};

/// A nameserver's socket, opened at the first question.
#[derive(Debug, Default)]
pub struct NsSocket {
    open: Mutex<Option<Arc<Shared>>>,
}

/// The open socket and the questions waiting on it.
#[derive(Debug)]
struct Shared {
    /// Non-blocking: questions send from any thread; the reader has its own handle.
    sock: UdpSocket,
    waiting: Mutex<Waiting>,
}

#[derive(Debug, Default)]
struct Waiting {
    /// By id: which registration waits (see `Question::drop`) and where its answer goes.
    by_id: HashMap<u16, (u64, oneshot::Sender<Vec<u8>>)>,
    registrations: u64,
}

/// One question waiting on a nameserver's socket; dropping it stops the wait.
#[derive(Debug)]
pub struct Question {
    shared: Arc<Shared>,
    id: u16,
    registration: u64,
    answer: Option<oneshot::Receiver<Vec<u8>>>,
}

impl NsSocket {
    /// Sends `query` (its id replaced by one no waiting question of this nameserver
    /// has, drawn by `draw_id`) to nameserver `to`, opening the socket and starting its
    /// reader on the current runtime the first time; `bufsize` is the largest datagram
    /// taken. Errors are the socket's (not opened, or the datagram not sent).
    pub fn ask(
        &self,
        to: SocketAddr,
        bufsize: usize,
        counters: &Arc<NsCounters>,
        query: &[u8],
        draw_id: impl Fn() -> u16,
    ) -> io::Result<Question> {
        let shared = self.shared(to, bufsize, counters)?;
        let (tx, rx) = oneshot::channel();
        let (id, registration) = {
            let mut w = shared.waiting.lock();
            let mut id = draw_id();
            while w.by_id.contains_key(&id) {
                id = draw_id();
            }
            w.registrations += 1;
            let registration = w.registrations;
            w.by_id.insert(id, (registration, tx));
            (id, registration)
        };
        // from here on, dropping the question unregisters it
        let question = Question { shared, id, registration, answer: Some(rx) };
        let mut datagram = query.to_vec();
        if let Some(head) = datagram.get_mut(..2) {
            head.copy_from_slice(&id.to_be_bytes());
        }
        question.shared.sock.send(&datagram)?;
        Ok(question)
    }

    /// The open socket, opened now when it is not.
    fn shared(&self, to: SocketAddr, bufsize: usize, counters: &Arc<NsCounters>) -> io::Result<Arc<Shared>> {
        let mut open = self.open.lock();
        if let Some(s) = open.as_ref() {
            return Ok(s.clone());
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
        let sock = open_socket(to)?;
        let reader = {
            let _entered = runtime.enter();
            tokio::net::UdpSocket::from_std(sock.try_clone()?)?
        };
        let shared = Arc::new(Shared { sock, waiting: Mutex::default() });
        runtime.spawn(read(shared.clone(), reader, bufsize, counters.clone()));
        *open = Some(shared.clone());
        Ok(shared)
    }
}

/// Room for the answers that come while the reader's thread is busy elsewhere (or
/// not scheduled): with the default buffer (208 KiB, about fifty small datagrams on
/// loopback) a thousand names asked each second lost one answer in twenty on a loaded
/// machine, each then waited for until `timeout retry`. The kernel caps it at
/// `net.core.rmem_max`.
const RECEIVE_BUFFER: usize = 4 << 20;

/// A non-blocking datagram socket connected to `to`, with a large receive buffer.
fn open_socket(to: SocketAddr) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let sock = Socket::new(Domain::for_address(to), Type::DGRAM, Some(Protocol::UDP))?;
    // best effort: a smaller buffer still works
    let _ = sock.set_recv_buffer_size(RECEIVE_BUFFER);
    let local: SocketAddr =
        if to.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { (std::net::Ipv6Addr::UNSPECIFIED, 0).into() };
    sock.bind(&local.into())?;
    sock.connect(&to.into())?;
    sock.set_nonblocking(true)?;
    Ok(sock.into())
}

impl Question {
    /// The id the question was sent with.
    pub fn id(&self) -> u16 {
        self.id
    }

    /// The datagram carrying the question's id (`None`: the reader is gone).
    pub async fn answer(&mut self) -> Option<Vec<u8>> {
        self.answer.take()?.await.ok()
    }
}

impl Drop for Question {
    fn drop(&mut self) {
        let mut w = self.shared.waiting.lock();
        // the id may be another question's by now, when this one's answer came
        if w.by_id.get(&self.id).is_some_and(|(r, _)| *r == self.registration) {
            w.by_id.remove(&self.id);
        }
    }
}

/// Reads the socket for as long as the process runs: each datagram to the question
/// waiting for its id.
async fn read(shared: Arc<Shared>, sock: tokio::net::UdpSocket, bufsize: usize, c: Arc<NsCounters>) {
    // one byte more than accepted tells an oversized datagram apart
    let mut buf = vec![0u8; bufsize + 1];
    loop {
        let n = match sock.recv(&mut buf).await {
            Ok(n) => n,
            Err(e) => {
                // an ICMP unreachable (nothing listens there): the questions wait for
                // `timeout retry`, as HAProxy's; anything else is not spun on
                bump(&c.snd_error);
                if e.kind() != io::ErrorKind::ConnectionRefused {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                continue;
            }
        };
        if n > bufsize {
            bump(&c.too_big);
            continue;
        }
        let Some(id) = message_id(&buf[..n]) else {
            bump(&c.invalid);
            continue;
        };
        let waiter = shared.waiting.lock().by_id.remove(&id);
        match waiter {
            Some((_, tx)) => {
                let _ = tx.send(buf[..n].to_vec());
            }
            None => bump(&c.outdated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU16, Ordering};

    /// A query of id 0 for `x` (type A), the id replaced when sent.
    fn query() -> Vec<u8> {
        vec![0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'x', 0, 0, 1, 0, 1]
    }

    #[test]
    fn answers_go_to_the_question_carrying_their_id() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let server = UdpSocket::bind("127.0.0.1:0").unwrap();
            let to = server.local_addr().unwrap();
            let (ns, c) = (NsSocket::default(), Arc::new(NsCounters::default()));
            // ids drawn in turn: 7 is taken by the first question, so the second one
            // draws again
            let next = AtomicU16::new(0);
            let ids = [7u16, 7, 9];
            let draw = || ids[usize::from(next.fetch_add(1, Ordering::Relaxed))];
            let mut first = ns.ask(to, 512, &c, &query(), draw).unwrap();
            let mut second = ns.ask(to, 512, &c, &query(), draw).unwrap();
            assert_eq!((first.id(), second.id()), (7, 9));
            let mut buf = [0u8; 512];
            let mut sent = Vec::new();
            for _ in 0..2 {
                let (n, from) = server.recv_from(&mut buf).unwrap();
                sent.push((buf[..n].to_vec(), from));
            }
            assert_eq!(sent[0].1, sent[1].1, "one socket");
            // a runt, an id nobody waits for, too big, then the answers, last first
            server.send_to(&[1], sent[0].1).unwrap();
            server.send_to(&[0, 8, 0x81, 0x80], sent[0].1).unwrap();
            server.send_to(&[0u8; 600], sent[0].1).unwrap();
            server.send_to(&sent[1].0, sent[0].1).unwrap();
            server.send_to(&sent[0].0, sent[0].1).unwrap();
            assert_eq!(second.answer().await.unwrap()[..2], [0, 9]);
            assert_eq!(first.answer().await.unwrap()[..2], [0, 7]);
            let rows = c.rows();
            let get = |n: &str| rows.iter().find(|r| r.0 == n).unwrap().1;
            assert_eq!((get("invalid"), get("outdated"), get("too_big")), (1, 1, 1));
            // a question given up (dropped) is no longer waited for: its answer is late
            let gone = ns.ask(to, 512, &c, &query(), || 11).unwrap();
            drop(gone);
            let (n, from) = server.recv_from(&mut buf).unwrap();
            server.send_to(&buf[..n], from).unwrap();
            let mut last = ns.ask(to, 512, &c, &query(), || 12).unwrap();
            let (n, from) = server.recv_from(&mut buf).unwrap();
            server.send_to(&buf[..n], from).unwrap();
            assert_eq!(last.answer().await.unwrap()[..2], [0, 12]);
            assert_eq!(c.rows().iter().find(|r| r.0 == "outdated").unwrap().1, 2);
        });
    }
}
