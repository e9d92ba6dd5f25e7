//! A simulated LLM inference fleet behind rampart, to compare balancing algorithms on
//! time to first token (TTFT) and throughput (docs/BALANCING.md has the figures).
//!
//! Each replica is an HTTP/1.1 server answering `POST /v1/completions` with an SSE
//! token stream. Its model of a real inference server:
//! - prefill is serial per replica (one prompt at a time) and costs `PREFILL_PER_BYTE`
//!   per prompt byte it has not cached, slowed by the streams it is decoding;
//! - it caches the KV state of the last `CACHE_PREFIXES` shared prefixes it served
//!   (LRU), so a prompt whose prefix it holds prefills only its own suffix;
//! - decoding emits one token per `DECODE_STEP`, slowed by the streams it decodes;
//! - one replica is `SLOW_FACTOR` times slower than the others.
//!
//! The workload is open loop (Poisson arrivals at `--rate` per second for
//! `--seconds`): prompts share one of `GROUPS` long prefixes (a system prompt and a
//! document) plus a short own question; 30 % of the streams are long.
//!
//! Run: `cargo build -p rampart && cargo run -p rampart --example inference_fleet --
//! [--rate 10] [--seconds 30] [--algos roundrobin,leastconn,...] [--factor 150]`
//! (`--factor`: the `hash-balance-factor` of prefix-affinity, 125 by default); it starts
//! `target/debug/rampart` (or `$RAMPART_BIN`) once per algorithm.

use std::collections::VecDeque;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const REPLICAS: usize = 4;
const SLOW_FACTOR: f64 = 2.0;
const GROUPS: usize = 12;
const CACHE_PREFIXES: usize = 4;
const PREFIX_BYTES: usize = 2000;
const PREFILL_PER_BYTE: Duration = Duration::from_micros(100);
const PREFILL_FIXED: Duration = Duration::from_millis(10);
const DECODE_STEP: Duration = Duration::from_millis(30);
const SHORT_TOKENS: usize = 10;
const LONG_TOKENS: usize = 80;

/// One simulated replica's state.
struct Replica {
    slow: f64,
    /// Streams being decoded now.
    decoding: AtomicUsize,
    /// Most streams it held at once (prefilling or decoding).
    peak: AtomicUsize,
    active: AtomicUsize,
    /// Serial prefill, and the cached prefixes (most recent last).
    prefill: tokio::sync::Mutex<VecDeque<u64>>,
    served: AtomicU64,
    hits: AtomicU64,
    /// The most streams it held, on taking a new one, above its bounded-load share of
    /// the fleet's streams (HAProxy's `ceil(ceil(total × factor / 100) / n)`).
    excess: AtomicI64,
    /// Every replica's stream count, to compute that share.
    fleet: Arc<[AtomicUsize]>,
    index: usize,
    factor: usize,
}

fn prefix_text(group: usize) -> String {
    let head = format!("Group {group}: you are assistant number {group}; answer about document {group}. ");
    let mut s = head.repeat(PREFIX_BYTES / head.len() + 1);
    s.truncate(PREFIX_BYTES);
    s
}

fn hash(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3))
}

/// The prompt of a request body `{"prompt":"...","max_tokens":N}`.
fn parse_body(body: &[u8]) -> Option<(&[u8], usize)> {
    let text = std::str::from_utf8(body).ok()?;
    let p = text.find("\"prompt\":\"")? + 10;
    let end = p + text[p..].find('"')?;
    let m = text.find("\"max_tokens\":")? + 13;
    let n = text[m..].trim_end_matches('}').trim().parse().ok()?;
    Some((&body[p..end], n))
}

async fn read_request(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return Some(buf[end + 4..end + 4 + len].to_vec());
            }
        }
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn serve(r: Arc<Replica>, mut s: TcpStream) -> Option<()> {
    let body = read_request(&mut s).await?;
    let (prompt, tokens) = parse_body(&body)?;
    let now = r.active.fetch_add(1, Ordering::SeqCst) + 1;
    r.peak.fetch_max(now, Ordering::SeqCst);
    r.fleet[r.index].fetch_add(1, Ordering::SeqCst);
    let total: usize = r.fleet.iter().map(|a| a.load(Ordering::SeqCst)).sum();
    let bound = (total * r.factor).div_ceil(100).div_ceil(r.fleet.len());
    r.excess.fetch_max(now as i64 - bound as i64, Ordering::Relaxed);
    let key = hash(&prompt[..prompt.len().min(PREFIX_BYTES)]);
    {
        let mut cache = r.prefill.lock().await;
        let hit = cache.iter().position(|&k| k == key);
        let uncached = if hit.is_some() { prompt.len().saturating_sub(PREFIX_BYTES) } else { prompt.len() };
        if let Some(i) = hit {
            cache.remove(i);
            r.hits.fetch_add(1, Ordering::Relaxed);
        }
        cache.push_back(key);
        if cache.len() > CACHE_PREFIXES {
            cache.pop_front();
        }
        let contention = 1.0 + 0.05 * r.decoding.load(Ordering::Relaxed) as f64;
        let t = (PREFILL_FIXED + PREFILL_PER_BYTE * uncached as u32).mul_f64(contention * r.slow);
        tokio::time::sleep(t).await;
    }
    r.served.fetch_add(1, Ordering::Relaxed);
    r.decoding.fetch_add(1, Ordering::SeqCst);
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    let mut out = head.as_bytes().to_vec();
    let mut result = Some(());
    for i in 0..tokens {
        let data = format!("data: {{\"token\":{i}}}\n\n");
        out.extend_from_slice(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes());
        if s.write_all(&out).await.is_err() {
            result = None;
            break;
        }
        out.clear();
        let contention = 1.0 + 0.03 * r.decoding.load(Ordering::Relaxed) as f64;
        tokio::time::sleep(DECODE_STEP.mul_f64(contention * r.slow)).await;
    }
    if result.is_some() {
        result = s.write_all(b"0\r\n\r\n").await.ok();
    }
    r.decoding.fetch_sub(1, Ordering::SeqCst);
    r.active.fetch_sub(1, Ordering::SeqCst);
    r.fleet[r.index].fetch_sub(1, Ordering::SeqCst);
    result
}

/// Starts the replicas on one thread; returns their addresses and states.
fn start_replicas(factor: usize) -> (Vec<SocketAddr>, Vec<Arc<Replica>>) {
    let fleet: Arc<[AtomicUsize]> = (0..REPLICAS).map(|_| AtomicUsize::new(0)).collect();
    let replicas: Vec<Arc<Replica>> = (0..REPLICAS)
        .map(|i| {
            Arc::new(Replica {
                slow: if i == REPLICAS - 1 { SLOW_FACTOR } else { 1.0 },
                decoding: AtomicUsize::new(0),
                peak: AtomicUsize::new(0),
                active: AtomicUsize::new(0),
                prefill: tokio::sync::Mutex::new(VecDeque::new()),
                served: AtomicU64::new(0),
                hits: AtomicU64::new(0),
                excess: AtomicI64::new(i64::MIN),
                fleet: fleet.clone(),
                index: i,
                factor,
            })
        })
        .collect();
    let listeners: Vec<std::net::TcpListener> =
        (0..REPLICAS).map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind a replica")).collect();
    let addrs = listeners.iter().map(|l| l.local_addr().expect("replica address")).collect();
    let states = replicas.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            for (l, r) in listeners.into_iter().zip(replicas) {
                l.set_nonblocking(true).expect("nonblocking");
                let l = TcpListener::from_std(l).expect("listener");
                tokio::spawn(async move {
                    while let Ok((s, _)) = l.accept().await {
                        tokio::spawn(serve(r.clone(), s));
                    }
                });
            }
            std::future::pending::<()>().await;
        });
    });
    (addrs, states)
}

fn start_rampart(algo: &str, replicas: &[SocketAddr], factor: Option<u32>) -> (Child, SocketAddr) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port");
    let balance = match algo {
        "prefix-affinity" => {
            let bound = factor.map(|f| format!("\n  hash-balance-factor {f}")).unwrap_or_default();
            format!("balance prefix-affinity req.body len 256\n  option http-buffer-request{bound}")
        }
        a => format!("balance {a}"),
    };
    let mut cfg = format!(
        "global\n  nbthread 1\ndefaults\n  mode http\n  timeout client 60s\n  timeout server 60s\n  \
         timeout connect 2s\nlisten llm\n  bind {port}\n  {balance}\n"
    );
    for (i, a) in replicas.iter().enumerate() {
        cfg.push_str(&format!("  server r{i} {a}\n"));
    }
    let path = std::env::temp_dir().join(format!("inference_fleet_{}.cfg", std::process::id()));
    std::fs::File::create(&path).and_then(|mut f| f.write_all(cfg.as_bytes())).expect("write the config");
    let bin = std::env::var("RAMPART_BIN").unwrap_or_else(|_| "target/debug/rampart".into());
    let mut child = Command::new(bin).arg("-f").arg(&path).stdout(Stdio::null()).spawn().expect("start rampart");
    for _ in 0..100 {
        if std::net::TcpStream::connect(port).is_ok() {
            return (child, port);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("rampart did not listen on {port}");
}

/// xorshift64*: a reproducible workload without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One request: TTFT and tokens received, `None` on failure.
async fn one_request(proxy: SocketAddr, body: String) -> Option<(Duration, usize)> {
    let t0 = Instant::now();
    let mut s = TcpStream::connect(proxy).await.ok()?;
    let req = format!(
        "POST /v1/completions HTTP/1.1\r\nHost: llm\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.ok()?;
    let mut buf = vec![0u8; 16384];
    let mut seen = Vec::new();
    let mut ttft = None;
    loop {
        let n = s.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&buf[..n]);
        if ttft.is_none() && memchr_data(&seen) {
            ttft = Some(t0.elapsed());
        }
    }
    if !seen.starts_with(b"HTTP/1.1 200") {
        return None;
    }
    let tokens = seen.windows(6).filter(|w| w == b"data: ").count();
    Some((ttft?, tokens))
}

fn memchr_data(b: &[u8]) -> bool {
    b.windows(6).any(|w| w == b"data: ")
}

struct Outcome {
    ttft: Vec<Duration>,
    tokens: usize,
    failed: usize,
    elapsed: Duration,
}

fn run_workload(proxy: SocketAddr, rate: f64, seconds: u64) -> Outcome {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async move {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let start = Instant::now();
        let mut at = Duration::ZERO;
        let mut tasks = Vec::new();
        let mut q = 0u64;
        while at < Duration::from_secs(seconds) {
            tokio::time::sleep_until((start + at).into()).await;
            let group = (rng.next() % GROUPS as u64) as usize;
            let tokens = if rng.unit() < 0.3 { LONG_TOKENS } else { SHORT_TOKENS };
            q += 1;
            let body = format!(
                "{{\"prompt\":\"{}Question {q}: what does it say about item {}?\",\"max_tokens\":{tokens}}}",
                prefix_text(group),
                rng.next() % 1000
            );
            tasks.push(tokio::spawn(one_request(proxy, body)));
            at += Duration::from_secs_f64(-rng.unit().max(1e-9).ln() / rate);
        }
        let mut all = Vec::with_capacity(tasks.len());
        for t in tasks {
            all.push(t.await.ok().flatten());
        }
        let elapsed = start.elapsed();
        let failed = all.iter().filter(|r| r.is_none()).count();
        let ok: Vec<(Duration, usize)> = all.into_iter().flatten().collect();
        let mut ttft: Vec<Duration> = ok.iter().map(|r| r.0).collect();
        ttft.sort_unstable();
        Outcome { tokens: ok.iter().map(|r| r.1).sum(), ttft, failed, elapsed }
    })
}

fn pct(v: &[Duration], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    v[i].as_secs_f64() * 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let rate: f64 = arg("--rate").and_then(|v| v.parse().ok()).unwrap_or(10.0);
    let seconds: u64 = arg("--seconds").and_then(|v| v.parse().ok()).unwrap_or(30);
    let factor: Option<u32> = arg("--factor").and_then(|v| v.parse().ok());
    let algos = arg("--algos")
        .unwrap_or_else(|| "roundrobin,leastconn,random(2),peak-ewma,prefix-affinity".into())
        .split(',')
        .map(str::to_owned)
        .collect::<Vec<_>>();
    println!(
        "{REPLICAS} replicas (r{} {SLOW_FACTOR}x slower), {GROUPS} shared prefixes of {PREFIX_BYTES} B, \
         {CACHE_PREFIXES} cached per replica, {rate} req/s for {seconds} s",
        REPLICAS - 1
    );
    println!(
        "\n| algorithm | TTFT p50 ms | TTFT p90 ms | TTFT p99 ms | req/s | tokens/s | prefix hits | failed | \
         peak streams per replica | most streams above the bound on admission |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for algo in &algos {
        let (addrs, replicas) = start_replicas(factor.unwrap_or(125) as usize);
        let (mut child, proxy) = start_rampart(algo, &addrs, factor);
        let out = run_workload(proxy, rate, seconds);
        let above = replicas.iter().map(|r| r.excess.load(Ordering::Relaxed)).max().unwrap_or(0);
        let _ = child.kill();
        let _ = child.wait();
        let served: u64 = replicas.iter().map(|r| r.served.load(Ordering::Relaxed)).sum();
        let hits: u64 = replicas.iter().map(|r| r.hits.load(Ordering::Relaxed)).sum();
        let peaks: Vec<String> = replicas.iter().map(|r| r.peak.load(Ordering::Relaxed).to_string()).collect();
        let secs = out.elapsed.as_secs_f64();
        println!(
            "| {algo} | {:.0} | {:.0} | {:.0} | {:.1} | {:.0} | {:.0} % | {} | {} | {above} |",
            pct(&out.ttft, 0.5),
            pct(&out.ttft, 0.9),
            pct(&out.ttft, 0.99),
            out.ttft.len() as f64 / secs,
            out.tokens as f64 / secs,
            100.0 * hits as f64 / served.max(1) as f64,
            out.failed,
            peaks.join(" / ")
        );
    }
}
