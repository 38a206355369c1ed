//! A small HTTP/1.1 file server for the remote-frame tests, on 127.0.0.1 with an ephemeral
//! port: it serves files from memory with `Range` (one or many ranges, `multipart/byteranges`),
//! `ETag` (or `Last-Modified`) and `If-Range` as static web servers do, or misbehaves as a test asks (ignores
//! ranges, does one range only, dies mid-body, truncates, answers slowly, redirects, fails
//! with a status). It stops when dropped.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How the server treats `Range`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranges {
    /// Single and multipart ranges.
    Many,
    /// One range; a request for several gets the whole file (200).
    One,
    /// None: always the whole file (200).
    None,
}

/// Something the server does wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Closes the connection after this many body bytes of every answer after the first
    /// `spare` requests.
    DieMidBody { after: usize, spare: u64 },
    /// Sends each 206 answer's body one byte short of its Content-Length, then closes.
    Truncate { spare: u64 },
    /// Waits this long before answering requests after the first `spare`.
    Slow { delay: Duration, spare: u64 },
    /// Sends the body of answers after the first `spare` one byte at a time, `pause` apart.
    Trickle { pause: Duration, spare: u64 },
    /// Answers every request with this status (and a short body), after the first `spare`.
    Status { code: u16, spare: u64 },
    /// Answers the first `count` requests with 503, then serves normally.
    FailFirst { count: u64 },
    /// Redirects every path `/r/X` to `/X` (302).
    Redirect,
    /// Redirects every request to itself.
    RedirectLoop,
    /// Sends no `ETag`: each file's version as a `Last-Modified` date instead (and takes
    /// that date in `If-Range`).
    NoEtag,
}

/// The `Last-Modified` date the server gives a file under [`Fault::NoEtag`]: a day of
/// January 2026 picked by its ETag (different for the versions [`file`] makes).
pub fn last_modified(f: &File) -> String {
    let day = f.etag.bytes().map(u32::from).sum::<u32>() % 28 + 1;
    format!("Thu, {day:02} Jan 2026 00:00:00 GMT")
}

/// A served file: its bytes and its ETag.
#[derive(Debug, Clone)]
pub struct File {
    pub bytes: Arc<Vec<u8>>,
    pub etag: String,
}

/// The files a server holds, by path (without the leading `/`); tests may change them.
pub type Files = Arc<Mutex<HashMap<String, File>>>;

/// Makes a file with an ETag from its length and a version number.
pub fn file(bytes: Vec<u8>, version: u32) -> File {
    File {
        etag: format!("\"{:x}-{version}\"", bytes.len()),
        bytes: Arc::new(bytes),
    }
}

pub struct Server {
    pub addr: SocketAddr,
    pub files: Files,
    /// Requests answered.
    pub requests: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(files: HashMap<String, File>, ranges: Ranges, fault: Option<Fault>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let files: Files = Arc::new(Mutex::new(files));
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicU64::new(0));
        let ctx = Ctx {
            files: files.clone(),
            ranges,
            fault,
            requests: requests.clone(),
        };
        let stop2 = stop.clone();
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let ctx = ctx.clone();
                let stop = stop2.clone();
                std::thread::spawn(move || serve(conn, &ctx, &stop));
            }
        });
        Server {
            addr,
            files,
            requests,
            stop,
            accept: Some(accept),
        }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{path}", self.addr)
    }

    /// Replaces the file at `path` (a new version: new ETag).
    pub fn replace(&self, path: &str, f: File) {
        self.files.lock().unwrap().insert(path.to_string(), f);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

#[derive(Clone)]
struct Ctx {
    files: Files,
    ranges: Ranges,
    fault: Option<Fault>,
    requests: Arc<AtomicU64>,
}

/// One request: path and headers (names lowercased).
struct Request {
    path: String,
    headers: HashMap<String, String>,
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let _method = parts.next()?;
    let target = parts.next()?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let path = target
        .split('?')
        .next()
        .unwrap_or("")
        .trim_start_matches('/')
        .to_string();
    Some(Request { path, headers })
}

fn serve(conn: TcpStream, ctx: &Ctx, stop: &AtomicBool) {
    conn.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut w = conn;
    while let Some(req) = read_request(&mut reader) {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let n = ctx.requests.fetch_add(1, Ordering::SeqCst);
        let close = req
            .headers
            .get("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        if answer(&mut w, &req, ctx, n).is_err() || close {
            return;
        }
    }
}

fn head(w: &mut TcpStream, status: &str, headers: &[(String, String)]) -> std::io::Result<()> {
    let mut s = format!("HTTP/1.1 {status}\r\n");
    for (k, v) in headers {
        s.push_str(&format!("{k}: {v}\r\n"));
    }
    s.push_str("\r\n");
    w.write_all(s.as_bytes())
}

/// Parses `bytes=a-b,c-,-n` against a length; `None` when unsatisfiable or malformed.
fn parse_ranges(v: &str, len: u64) -> Option<Vec<(u64, u64)>> {
    let spec = v.trim().strip_prefix("bytes=")?;
    let mut out = Vec::new();
    for part in spec.split(',') {
        let (a, b) = part.trim().split_once('-')?;
        let (start, end) = match (a.trim(), b.trim()) {
            ("", n) => {
                let n: u64 = n.parse().ok()?;
                (len.saturating_sub(n), len - 1)
            }
            (a, "") => (a.parse().ok()?, len - 1),
            (a, b) => (a.parse().ok()?, b.parse::<u64>().ok()?.min(len - 1)),
        };
        if start > end || start >= len {
            return None;
        }
        out.push((start, end));
    }
    Some(out)
}

/// A 302 to `/path`.
fn redirect(w: &mut TcpStream, path: &str) -> std::io::Result<()> {
    let headers = [
        ("Location".to_string(), format!("/{path}")),
        ("Content-Length".to_string(), "0".to_string()),
    ];
    head(w, "302 Found", &headers)
}

fn answer(w: &mut TcpStream, req: &Request, ctx: &Ctx, n: u64) -> std::io::Result<()> {
    let mut die_after = None;
    let mut truncate = false;
    let mut trickle = None;
    match &ctx.fault {
        Some(Fault::Slow { delay, spare }) if n >= *spare => std::thread::sleep(*delay),
        Some(Fault::Status { code, spare }) if n >= *spare => {
            let body = b"no";
            head(
                w,
                &format!("{code} Fault"),
                &[("Content-Length".into(), "2".into())],
            )?;
            return w.write_all(body);
        }
        Some(Fault::FailFirst { count }) if n < *count => {
            head(
                w,
                "503 Service Unavailable",
                &[("Content-Length".into(), "0".into())],
            )?;
            return Ok(());
        }
        Some(Fault::RedirectLoop) => {
            let to = format!("/{}", req.path);
            head(
                w,
                "302 Found",
                &[
                    ("Location".into(), to),
                    ("Content-Length".into(), "0".into()),
                ],
            )?;
            return Ok(());
        }
        Some(Fault::Redirect) => {
            if let Some(rest) = req.path.strip_prefix("r/") {
                let to = format!("/{rest}");
                head(
                    w,
                    "302 Found",
                    &[
                        ("Location".into(), to),
                        ("Content-Length".into(), "0".into()),
                    ],
                )?;
                return Ok(());
            }
        }
        Some(Fault::DieMidBody { after, spare }) if n >= *spare => die_after = Some(*after),
        Some(Fault::Truncate { spare }) if n >= *spare => truncate = true,
        Some(Fault::Trickle { pause, spare }) if n >= *spare => trickle = Some(*pause),
        _ => {}
    }
    let Some(f) = ctx.files.lock().unwrap().get(&req.path).cloned() else {
        head(w, "404 Not Found", &[("Content-Length".into(), "9".into())])?;
        return w.write_all(b"not found");
    };
    let len = f.bytes.len() as u64;
    let validator = if ctx.fault == Some(Fault::NoEtag) {
        ("Last-Modified".to_string(), last_modified(&f))
    } else {
        ("ETag".to_string(), f.etag.clone())
    };
    let if_range_ok = req
        .headers
        .get("if-range")
        .is_none_or(|v| *v == validator.1);
    let mut headers = vec![
        validator,
        ("Accept-Ranges".to_string(), "bytes".to_string()),
    ];
    let ranges = req
        .headers
        .get("range")
        .filter(|_| if_range_ok && ctx.ranges != Ranges::None)
        .map(|v| parse_ranges(v, len));
    let send = |w: &mut TcpStream, body: &[u8]| -> std::io::Result<()> {
        if let Some(pause) = trickle {
            for b in body {
                w.write_all(std::slice::from_ref(b))?;
                w.flush()?;
                std::thread::sleep(pause);
            }
            return Ok(());
        }
        match die_after {
            Some(k) if k < body.len() => {
                w.write_all(&body[..k])?;
                w.flush()?;
                w.shutdown(std::net::Shutdown::Both)?;
                Err(std::io::Error::other("died"))
            }
            _ => w.write_all(body),
        }
    };
    match ranges {
        Some(None) => {
            headers.push(("Content-Range".into(), format!("bytes */{len}")));
            headers.push(("Content-Length".into(), "0".into()));
            head(w, "416 Range Not Satisfiable", &headers)
        }
        Some(Some(r)) if r.len() == 1 || ctx.ranges == Ranges::Many => {
            let mut body = Vec::new();
            if r.len() == 1 {
                let (a, b) = r[0];
                headers.push(("Content-Range".into(), format!("bytes {a}-{b}/{len}")));
                body.extend_from_slice(&f.bytes[a as usize..=b as usize]);
            } else {
                let boundary = "STRATA_TEST_BOUNDARY";
                headers.push((
                    "Content-Type".into(),
                    format!("multipart/byteranges; boundary={boundary}"),
                ));
                for &(a, b) in &r {
                    body.extend_from_slice(
                        format!(
                            "\r\n--{boundary}\r\nContent-Type: application/octet-stream\r\n\
                             Content-Range: bytes {a}-{b}/{len}\r\n\r\n"
                        )
                        .as_bytes(),
                    );
                    body.extend_from_slice(&f.bytes[a as usize..=b as usize]);
                }
                body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
            }
            headers.push(("Content-Length".into(), body.len().to_string()));
            head(w, "206 Partial Content", &headers)?;
            if truncate {
                w.write_all(&body[..body.len() - 1])?;
                w.flush()?;
                w.shutdown(std::net::Shutdown::Both)?;
                return Err(std::io::Error::other("truncated"));
            }
            send(w, &body)
        }
        _ => {
            headers.push(("Content-Length".into(), len.to_string()));
            head(w, "200 OK", &headers)?;
            send(w, &f.bytes)
        }
    }
}

/// Reads a whole response to `GET path` (for checks of the server itself).
pub fn get(addr: SocketAddr, path: &str, range: Option<&str>) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut req = format!("GET /{path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
    if let Some(r) = range {
        req.push_str(&format!("Range: {r}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let status = String::from_utf8_lossy(&out[..split])
        .lines()
        .next()
        .unwrap()
        .to_string();
    (status, out[split + 4..].to_vec())
}
