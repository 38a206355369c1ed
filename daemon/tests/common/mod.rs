//! What the daemon's integration tests share: a stratad process on 127.0.0.1:0 (stopped when
//! dropped, also when a test fails), a raw HTTP/1.1 client (requests exactly as written: no
//! path normalisation, so attacks reach the server as sent), and datasets made with the
//! library.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use strata::ndarray::{ArrayParams, Location, NdArray};

/// A running stratad.
pub struct Daemon {
    pub child: Child,
    pub addr: SocketAddr,
    pub scheme: &'static str,
}

impl Daemon {
    /// Starts stratad with `args` (plus `--listen 127.0.0.1:0`).
    pub fn start(args: &[&str]) -> Daemon {
        Self::start_env(args, &[])
    }

    /// Starts stratad with `args` and environment `env`.
    pub fn start_env(args: &[&str], env: &[(&str, &str)]) -> Daemon {
        Self::start_with(args, env, Stdio::inherit())
    }

    /// Starts stratad with `args` and environment `env`, its log (stderr) written to `log`.
    pub fn start_logged(args: &[&str], env: &[(&str, &str)], log: &Path) -> Daemon {
        Self::start_with(args, env, std::fs::File::create(log).unwrap().into())
    }

    fn start_with(args: &[&str], env: &[(&str, &str)], stderr: Stdio) -> Daemon {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_stratad"));
        cmd.args(args)
            .args(["--listen", "127.0.0.1:0"])
            .env("STRATAD_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(stderr);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn stratad");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(rest) = line.trim().strip_prefix("stratad listening on ") else {
            let _ = child.kill();
            panic!("stratad did not start: {line:?}");
        };
        let (scheme, addr) = rest.split_once("://").unwrap();
        Daemon {
            child,
            addr: addr.parse().unwrap(),
            scheme: if scheme == "https" { "https" } else { "http" },
        }
    }

    /// Sends SIGTERM and waits (up to `limit`) for the exit status.
    pub fn terminate(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Threads of the daemon process now.
    pub fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.child.id())).map_or(0, Iterator::count)
    }

    /// A `/proc/<pid>/status` field in kB (VmRSS, VmHWM).
    pub fn status_kb(&self, field: &str) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        s.lines()
            .find_map(|l| {
                l.strip_prefix(field).and_then(|r| {
                    r.trim_start_matches(':')
                        .split_whitespace()
                        .next()?
                        .parse()
                        .ok()
                })
            })
            .unwrap_or(0)
    }

    /// One GET.
    pub fn get(&self, target: &str) -> Resp {
        request(
            self.addr,
            &format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        )
    }

    /// One GET with extra header lines (each ending in `\r\n`).
    pub fn get_with(&self, target: &str, headers: &str) -> Resp {
        request(
            self.addr,
            &format!("GET {target} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n"),
        )
    }

    /// A counter of `/metrics` (0 when absent).
    pub fn metric(&self, line_prefix: &str) -> f64 {
        let m = self.get("/metrics");
        String::from_utf8_lossy(&m.body)
            .lines()
            .find_map(|l| {
                l.strip_prefix(line_prefix)
                    .and_then(|v| v.trim().parse().ok())
            })
            .unwrap_or(0.0)
    }

    /// Polls `/metrics` every 20 ms until the gauge `line_prefix` reads `want` (the poll's own
    /// request and connection included), and asserts it does within 10 s.
    pub fn metric_settles_at(&self, line_prefix: &str, want: f64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut now = self.metric(line_prefix);
        while now != want && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            now = self.metric(line_prefix);
        }
        assert_eq!(now, want, "{}", line_prefix.trim());
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// An HTTP answer.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The `detail` of a JSON error body.
    pub fn detail(&self) -> String {
        let v: serde_json::Value = serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON ({}): {:?}", self.status, self.text()));
        v["detail"].as_str().unwrap_or_default().to_owned()
    }
}

/// Sends `raw` on a new connection and reads one answer.
pub fn request(addr: SocketAddr, raw: &str) -> Resp {
    request_bytes(addr, raw.as_bytes())
}

/// Sends `raw` bytes on a new connection and reads one answer. The daemon may answer and
/// close before all of an oversized request is sent (431, 413): the answer is read then.
pub fn request_bytes(addr: SocketAddr, raw: &[u8]) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    if let Err(e) = s.write_all(raw) {
        use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
        assert!(
            matches!(e.kind(), BrokenPipe | ConnectionReset),
            "sending: {e}"
        );
    }
    let mut r = BufReader::new(s);
    read_response(&mut r, raw.starts_with(b"HEAD")).expect("an answer")
}

/// Reads one answer from `r` (`head`: no body follows).
pub fn read_response(r: &mut impl BufRead, head: bool) -> std::io::Result<Resp> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "closed",
        ));
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let find = |n: &str| {
        headers
            .iter()
            .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if !head && status != 304 && status != 204 {
        if let Some(n) = find("content-length") {
            let n: usize = n.parse().map_err(std::io::Error::other)?;
            body.resize(n, 0);
            r.read_exact(&mut body)?;
        } else if find("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            loop {
                line.clear();
                r.read_line(&mut line)?;
                let n = usize::from_str_radix(line.trim(), 16).map_err(std::io::Error::other)?;
                let mut piece = vec![0u8; n + 2];
                r.read_exact(&mut piece)?;
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&piece[..n]);
            }
        } else {
            r.read_to_end(&mut body)?;
        }
    }
    Ok(Resp {
        status,
        headers,
        body,
    })
}

/// A keep-alive connection that sends requests one after another.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        Self::try_open(addr).unwrap()
    }

    pub fn try_open(addr: SocketAddr) -> std::io::Result<Conn> {
        let s = TcpStream::connect(addr)?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        s.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(s),
        })
    }

    pub fn get(&mut self, target: &str, headers: &str) -> std::io::Result<Resp> {
        let req = format!("GET {target} HTTP/1.1\r\nHost: x\r\n{headers}\r\n");
        self.reader.get_mut().write_all(req.as_bytes())?;
        read_response(&mut self.reader, false)
    }
}

/// Values of a test array: item `i` of a `<f4` array is `i as f32 * 0.5`.
pub fn f32_items(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect()
}

/// A `.b2nd` file of `<f4` items (see [`f32_items`]) with the given partitions.
pub fn make_f32(path: &Path, shape: &[usize], chunks: &[usize], blocks: &[usize]) -> PathBuf {
    let n: usize = shape.iter().product();
    let params = ArrayParams::from_dtype(shape, "<f4")
        .unwrap()
        .with_chunkshape(chunks)
        .with_blockshape(blocks)
        .with_overwrite(true);
    NdArray::from_buffer(&params, &Location::File(path.to_path_buf()), &f32_items(n))
        .unwrap()
        .close()
        .unwrap();
    path.to_path_buf()
}

/// A `.b2nd` file of `<f4` items that do not compress (xorshift noise): `shape` items take
/// about their own size on disk.
pub fn make_noise(path: &Path, shape: &[usize], chunks: &[usize], blocks: &[usize]) -> Vec<u8> {
    let n: usize = shape.iter().product();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..n)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as u32).to_le_bytes()
        })
        .collect();
    let params = ArrayParams::from_dtype(shape, "<u4")
        .unwrap()
        .with_chunkshape(chunks)
        .with_blockshape(blocks)
        .with_overwrite(true);
    NdArray::from_buffer(&params, &Location::File(path.to_path_buf()), &data)
        .unwrap()
        .close()
        .unwrap();
    data
}

/// A data root with `grid.b2nd` (200 × 300 `<f4`, chunks 64 × 100, blocks 16 × 25) and
/// `sub/line.b2nd` (1000 `<f4`, chunks 100, blocks 25).
pub fn data_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    make_f32(
        &dir.path().join("grid.b2nd"),
        &[200, 300],
        &[64, 100],
        &[16, 25],
    );
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    make_f32(&dir.path().join("sub/line.b2nd"), &[1000], &[100], &[25]);
    dir
}

/// The `<f4` values of a raw little-endian body.
pub fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// A self-signed certificate for `localhost`, its PEM written to `dir/cert.pem` and its key
/// to `dir/key.pem`; returns the certificate and the two paths.
pub fn self_signed(dir: &Path) -> (rcgen::Certificate, PathBuf, PathBuf) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cp, kp) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cp, cert.pem()).unwrap();
    std::fs::write(&kp, key.serialize_pem()).unwrap();
    (cert, cp, kp)
}
