//! Configuration: a TOML file (`--config`) and command-line flags, flags winning.
//!
//! ```toml
//! listen = "127.0.0.1:8000"
//! cache_bytes = "1G"          # the shared cache of decompressed blocks
//! chunk_cache_bytes = "64M"   # hot stored chunks, sent without reading them again
//! handles = 256               # open datasets kept
//! follow_symlinks = false     # symlinks staying inside their root (off: none at all)
//! log_format = "text"         # or "json"
//!
//! [[root]]
//! name = "@public"            # the root as clients see it
//! path = "/data/grids"
//! public = true               # readable without a token (default: true for @public)
//!
//! [limits]
//! slice_bytes = "256M"        # decoded bytes per slice (413)
//! memory_budget = "1G"        # computed answers held at once (503 + Retry-After)
//! body_bytes = "9M"           # request bodies (413)
//! uri_bytes = 16384           # request target (414)
//! header_bytes = 32768        # all request headers (431)
//! ranges = 64                 # spans per Range header (416)
//! indices = 1000000           # coordinates per `indices` key (413)
//! chunks_per_request = 1024   # chunk numbers per POST /v1/chunks (413)
//! list_entries = 100000       # datasets per listing (413)
//! request_timeout = "30s"     # per-request deadline (503)
//! queue = 256                 # requests waiting for or running on the pool (503)
//! connections = 1024          # open connections (503 to the next ones)
//! header_read_timeout = "10s" # a client that does not send its request in time is dropped
//! send_timeout = "60s"        # a client that takes none of its answer for this long is dropped
//!
//! [auth]
//! tokens = "/etc/stratad/tokens.toml"
//!
//! [tls]
//! cert = "/etc/stratad/cert.pem"
//! key = "/etc/stratad/key.pem"
//! ```

use clap::Parser;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// `stratad`: serves the Blosc2 datasets under its data roots over HTTP, to Caterva2's
/// clients and Strata's own, with one pinned pool and one shared cache of decompressed blocks.
#[derive(Debug, Parser)]
#[command(name = "stratad", version)]
pub struct Flags {
    /// A TOML configuration file (flags override it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A data root, as NAME=DIR (repeatable). `@public=DIR` is Caterva2's anonymous root.
    #[arg(long = "root", value_name = "NAME=DIR")]
    pub roots: Vec<String>,
    /// A root readable without a token when auth is on (repeatable; `@public` is by default).
    #[arg(long = "public", value_name = "NAME")]
    pub public: Vec<String>,
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// Bytes of decompressed blocks kept (K/M/G suffixes).
    #[arg(long, value_name = "SIZE")]
    pub cache_bytes: Option<String>,
    /// Bytes of hot stored chunks kept, sent without reading them again (K/M/G; 0: none).
    #[arg(long, value_name = "SIZE")]
    pub chunk_cache_bytes: Option<String>,
    /// Open datasets kept.
    #[arg(long, value_name = "N")]
    pub handles: Option<usize>,
    /// Decoded bytes one slice may have (K/M/G).
    #[arg(long, value_name = "SIZE")]
    pub max_slice_bytes: Option<String>,
    /// Bytes of computed answers (decoded slices, cframes, `.npy` bodies) held at once, until
    /// sent; an answer that does not fit beside the others is refused with 503 (K/M/G).
    #[arg(long, value_name = "SIZE")]
    pub memory_budget: Option<String>,
    /// Requests waiting for or running on the pool; more are refused with 503.
    #[arg(long, value_name = "N")]
    pub queue: Option<usize>,
    /// Open connections; more are refused with 503.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Per-request deadline (e.g. 30s, 500ms).
    #[arg(long, value_name = "DURATION")]
    pub request_timeout: Option<String>,
    /// Worker threads of the pool (default: one per physical core).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Threads doing network I/O (default: 2, at most the cores).
    #[arg(long, value_name = "N")]
    pub io_threads: Option<usize>,
    /// Bearer tokens file (TOML, hashed tokens; see `stratad hash-token`).
    #[arg(long, value_name = "FILE")]
    pub tokens: Option<PathBuf>,
    /// TLS certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Follow symlinks that stay inside their root.
    #[arg(long)]
    pub follow_symlinks: bool,
    /// Log format: text or json.
    #[arg(long, value_name = "FORMAT")]
    pub log_format: Option<String>,
    /// A subcommand instead of serving.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Reads a token on stdin and prints the `sha256 = "..."` line of a tokens file.
    HashToken,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<SocketAddr>,
    cache_bytes: Option<Size>,
    chunk_cache_bytes: Option<Size>,
    handles: Option<usize>,
    workers: Option<usize>,
    io_threads: Option<usize>,
    follow_symlinks: Option<bool>,
    log_format: Option<String>,
    #[serde(default)]
    root: Vec<RootConfig>,
    #[serde(default)]
    limits: LimitsFile,
    auth: Option<AuthFile>,
    tls: Option<TlsFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RootConfig {
    name: String,
    path: PathBuf,
    public: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    slice_bytes: Option<Size>,
    memory_budget: Option<Size>,
    body_bytes: Option<Size>,
    uri_bytes: Option<usize>,
    header_bytes: Option<usize>,
    ranges: Option<usize>,
    indices: Option<usize>,
    chunks_per_request: Option<usize>,
    list_entries: Option<usize>,
    request_timeout: Option<String>,
    queue: Option<usize>,
    connections: Option<usize>,
    header_read_timeout: Option<String>,
    send_timeout: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthFile {
    tokens: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert: PathBuf,
    key: PathBuf,
}

/// A size: bytes, or a string with a K/M/G suffix.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(#[serde(deserialize_with = "size_text")] u64),
}

impl Size {
    fn get(self) -> u64 {
        match self {
            Size::Bytes(n) | Size::Text(n) => n,
        }
    }
}

fn size_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let s = String::deserialize(d)?;
    parse_size(&s).map_err(serde::de::Error::custom)
}

/// Parses a size as the library reads every size (`123`, `64K`, `256M`, `1GiB`: powers of
/// 1024, [`strata::scheduler::parse_size`]).
///
/// # Errors
/// A message naming the text for anything else, 0 included.
pub fn parse_size(s: &str) -> Result<u64, String> {
    strata::scheduler::parse_size(s)
        .map(|n| n as u64)
        .map_err(|e| format!("{s:?}: {e}"))
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s.trim()).map_err(|e| format!("{s:?} is not a duration: {e}"))
}

/// Limits on what one request may ask for.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Decoded bytes of one slice.
    pub slice_bytes: u64,
    /// Bytes of computed answers held at once ([`crate::budget`]).
    pub memory_budget: u64,
    /// Bytes of a request body.
    pub body_bytes: usize,
    /// Bytes of the request target.
    pub uri_bytes: usize,
    /// Bytes of all request headers.
    pub header_bytes: usize,
    /// Spans of one `Range` header.
    pub ranges: usize,
    /// Coordinates of one `indices` key.
    pub indices: usize,
    /// Chunk numbers of one `POST /v1/chunks`.
    pub chunks_per_request: usize,
    /// Datasets of one listing.
    pub list_entries: usize,
    /// Deadline of one request.
    pub request_timeout: Duration,
    /// Requests admitted to the pool at once (waiting or running; 503 past it).
    pub queue: usize,
    /// Open connections.
    pub connections: usize,
    /// Time a client has to send its request head.
    pub header_read_timeout: Duration,
    /// Time an answer may wait for a client that takes none of it before the connection is
    /// dropped.
    pub send_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            slice_bytes: 256 << 20,
            memory_budget: 1 << 30,
            body_bytes: 9 << 20,
            uri_bytes: 16 << 10,
            header_bytes: 32 << 10,
            ranges: 64,
            indices: 1_000_000,
            chunks_per_request: 1024,
            list_entries: 100_000,
            request_timeout: Duration::from_secs(30),
            queue: 256,
            connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            send_timeout: Duration::from_secs(60),
        }
    }
}

/// A data root to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSpec {
    /// The name clients use.
    pub name: String,
    /// The directory.
    pub path: PathBuf,
    /// Readable without a token.
    pub public: bool,
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The data roots.
    pub roots: Vec<RootSpec>,
    /// Bytes of the block cache.
    pub cache_bytes: u64,
    /// Bytes of the stored-chunk cache.
    pub chunk_cache_bytes: u64,
    /// Open datasets kept.
    pub handles: usize,
    /// Pool workers (`None`: one per physical core).
    pub workers: Option<usize>,
    /// Network I/O threads.
    pub io_threads: usize,
    /// Follow symlinks inside roots.
    pub follow_symlinks: bool,
    /// `json` logs instead of text.
    pub json_logs: bool,
    /// Request limits.
    pub limits: Limits,
    /// The tokens file; `None`: no auth, every root readable.
    pub tokens: Option<PathBuf>,
    /// TLS certificate and key.
    pub tls: Option<(PathBuf, PathBuf)>,
}

impl Config {
    /// The configuration from `flags` and the file they name.
    ///
    /// # Errors
    /// A message for an unreadable or invalid file, a bad flag value, no root, or two roots
    /// of one name.
    pub fn from_flags(flags: &Flags) -> Result<Config, String> {
        let file: FileConfig = match &flags.config {
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
                toml::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?
            }
            None => FileConfig::default(),
        };
        let mut roots: Vec<RootSpec> = file
            .root
            .iter()
            .map(|r| RootSpec {
                name: r.name.clone(),
                path: r.path.clone(),
                public: r.public.unwrap_or(r.name == "@public"),
            })
            .collect();
        for spec in &flags.roots {
            let (name, dir) = spec
                .split_once('=')
                .ok_or_else(|| format!("--root {spec:?}: expected NAME=DIR"))?;
            roots.push(RootSpec {
                name: name.to_owned(),
                path: PathBuf::from(dir),
                public: name == "@public",
            });
        }
        for name in &flags.public {
            let r = roots
                .iter_mut()
                .find(|r| &r.name == name)
                .ok_or_else(|| format!("--public {name}: no such root"))?;
            r.public = true;
        }
        if roots.is_empty() {
            return Err("no data root: give --root NAME=DIR or [[root]] in the config".into());
        }
        for (i, r) in roots.iter().enumerate() {
            if r.name.is_empty()
                || r.name.contains(['/', '\\', '\0'])
                || r.name == "."
                || r.name == ".."
            {
                return Err(format!(
                    "root name {:?} is not a single path segment",
                    r.name
                ));
            }
            if roots[..i].iter().any(|o| o.name == r.name) {
                return Err(format!("root {:?} given twice", r.name));
            }
        }
        let mut limits = Limits::default();
        let l = &file.limits;
        let size = |s: Option<Size>, d: u64| s.map_or(d, Size::get);
        limits.slice_bytes = size(l.slice_bytes, limits.slice_bytes);
        limits.memory_budget = size(l.memory_budget, limits.memory_budget);
        limits.body_bytes = usize::try_from(size(l.body_bytes, limits.body_bytes as u64))
            .map_err(|_| "limits.body_bytes is too large".to_string())?;
        limits.uri_bytes = l.uri_bytes.unwrap_or(limits.uri_bytes);
        limits.header_bytes = l.header_bytes.unwrap_or(limits.header_bytes);
        limits.ranges = l.ranges.unwrap_or(limits.ranges).max(1);
        limits.indices = l.indices.unwrap_or(limits.indices);
        limits.chunks_per_request = l.chunks_per_request.unwrap_or(limits.chunks_per_request);
        limits.list_entries = l.list_entries.unwrap_or(limits.list_entries);
        if let Some(t) = &l.request_timeout {
            limits.request_timeout = parse_duration(t)?;
        }
        if let Some(t) = &l.header_read_timeout {
            limits.header_read_timeout = parse_duration(t)?;
        }
        if let Some(t) = &l.send_timeout {
            limits.send_timeout = parse_duration(t)?;
        }
        limits.queue = l.queue.unwrap_or(limits.queue);
        limits.connections = l.connections.unwrap_or(limits.connections);
        if let Some(s) = &flags.max_slice_bytes {
            limits.slice_bytes = parse_size(s)?;
        }
        if let Some(s) = &flags.memory_budget {
            limits.memory_budget = parse_size(s)?;
        }
        if let Some(n) = flags.queue {
            limits.queue = n;
        }
        if let Some(n) = flags.max_connections {
            limits.connections = n;
        }
        if let Some(t) = &flags.request_timeout {
            limits.request_timeout = parse_duration(t)?;
        }
        let cache_bytes = match &flags.cache_bytes {
            Some(s) => parse_size(s)?,
            None => file.cache_bytes.map_or(256 << 20, Size::get),
        };
        let chunk_cache_bytes = match &flags.chunk_cache_bytes {
            Some(s) => parse_size(s)?,
            None => file.chunk_cache_bytes.map_or(64 << 20, Size::get),
        };
        let log_format = flags
            .log_format
            .clone()
            .or(file.log_format)
            .unwrap_or_else(|| "text".into());
        let json_logs = match log_format.as_str() {
            "text" => false,
            "json" => true,
            other => return Err(format!("log format {other:?}: expected text or json")),
        };
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let tls = match (&flags.tls_cert, &flags.tls_key, file.tls) {
            (Some(c), Some(k), _) => Some((c.clone(), k.clone())),
            (None, None, Some(t)) => Some((t.cert, t.key)),
            _ => None,
        };
        Ok(Config {
            listen: flags
                .listen
                .or(file.listen)
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8000))),
            roots,
            cache_bytes,
            chunk_cache_bytes,
            handles: flags.handles.or(file.handles).unwrap_or(256).max(1),
            workers: flags.workers.or(file.workers),
            io_threads: flags
                .io_threads
                .or(file.io_threads)
                .unwrap_or(2)
                .clamp(1, cores.max(1)),
            follow_symlinks: flags.follow_symlinks || file.follow_symlinks.unwrap_or(false),
            json_logs,
            limits,
            tokens: flags.tokens.clone().or(file.auth.map(|a| a.tokens)),
            tls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("123").unwrap(), 123);
        assert_eq!(parse_size("64K").unwrap(), 64 << 10);
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999G").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn flags_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("s.toml");
        std::fs::write(
            &cfg,
            format!(
                "listen = \"127.0.0.1:0\"\ncache_bytes = \"8M\"\n[[root]]\nname = \"team\"\npath = \"{}\"\n[limits]\nranges = 3\nrequest_timeout = \"2s\"\nmemory_budget = \"32M\"\n",
                dir.path().display()
            ),
        )
        .unwrap();
        let flags = Flags::parse_from([
            "stratad",
            "--config",
            cfg.to_str().unwrap(),
            "--root",
            &format!("@public={}", dir.path().display()),
            "--cache-bytes",
            "16M",
        ]);
        let c = Config::from_flags(&flags).unwrap();
        assert_eq!(c.cache_bytes, 16 << 20);
        assert_eq!(c.limits.ranges, 3);
        assert_eq!(c.limits.request_timeout, Duration::from_secs(2));
        assert_eq!(c.limits.memory_budget, 32 << 20);
        let flag = Flags::parse_from([
            "stratad",
            "--config",
            cfg.to_str().unwrap(),
            "--memory-budget",
            "3M",
        ]);
        assert_eq!(
            Config::from_flags(&flag).unwrap().limits.memory_budget,
            3 << 20
        );
        assert_eq!(
            c.roots
                .iter()
                .map(|r| (r.name.as_str(), r.public))
                .collect::<Vec<_>>(),
            [("team", false), ("@public", true)]
        );
        let twice = Flags::parse_from(["stratad", "--root", "a=/x", "--root", "a=/y"]);
        assert!(Config::from_flags(&twice).is_err());
        let bad = Flags::parse_from(["stratad", "--root", "a/b=/x"]);
        assert!(Config::from_flags(&bad).is_err());
        assert!(Config::from_flags(&Flags::parse_from(["stratad"])).is_err());
    }

    #[test]
    fn the_example_config_parses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("stratad.toml");
        std::fs::write(&p, include_str!("../stratad.example.toml")).unwrap();
        let flags = Flags::parse_from(["stratad", "--config", p.to_str().unwrap()]);
        let c = Config::from_flags(&flags).unwrap();
        let d = Limits::default();
        assert_eq!(c.roots[0].name, "@public");
        assert!(c.roots[0].public);
        assert_eq!(
            (c.cache_bytes, c.handles, c.listen.port()),
            (256 << 20, 256, 8000)
        );
        assert_eq!(
            (c.limits.slice_bytes, c.limits.queue, c.limits.ranges),
            (d.slice_bytes, d.queue, d.ranges)
        );
        assert_eq!(c.limits.request_timeout, d.request_timeout);
        assert_eq!(c.limits.memory_budget, d.memory_budget);
    }
}
