//! [`RemoteIo`]: a frame read over HTTP(S) byte ranges — the library's only network code.
//!
//! A URL names a contiguous frame (`.b2frame`, `.b2nd`) or a sparse frame directory (its
//! `chunks.b2frame` index and `%08X.chunk` files beside it) on any server that answers
//! `Range` requests: stratad (`/v1/raw/…`, or the Caterva2-compatible `/api/fetch/…`),
//! Caterva2's `cat2-server`, a static web server such as nginx. The frame layer reads
//! through it as it reads a file, lazily: the header, the offsets index and the trailer once
//! at open, then for each chunk a slice touches its header and `bstarts`, then only the
//! blocks the slice needs.
//!
//! * **Requests.** One agent per store, its connections kept alive and reused. The reads of
//!   one step ([`FrameIo::read_many`]) are sorted and coalesced (touching ranges, or ranges
//!   at most [`RemoteOptions::coalesce_gap`] apart, become one), then sent as
//!   `multipart/byteranges` requests of up to [`RemoteOptions::max_ranges`] ranges each.
//!   A server that answers a multi-range request with one whole body is asked one range per
//!   request from then on, the closest ranges merged so that a step takes at most
//!   [`RemoteOptions::max_requests`] requests (down to whole chunks); a server that ignores
//!   `Range` altogether (answers 200) still gives the right bytes: a small file is read
//!   whole once and kept, a large one read from its start up to the last byte needed.
//! * **Failures.** Connect, read and whole-request timeouts; transient failures (5xx, 408, 429, connection
//!   resets, timeouts, a body that ends early or lacks bytes asked for) are retried
//!   [`RemoteOptions::retries`] times with exponential backoff; anything else is an
//!   [`Error::Remote`] naming the URL and the HTTP status. Redirects are followed up to
//!   [`RemoteOptions::max_redirects`] times (later requests go straight to where they led).
//! * **Consistency.** The first answer's `ETag` (or `Last-Modified`) and the length are the
//!   object's validator: every ranged request carries it in `If-Range`, and every answer is
//!   checked against it, so a file changed after the open fails with an error saying so
//!   instead of mixing bytes of two versions. A sparse frame's index is checked again after
//!   each chunk file's first answer (chunk files are written before the index that names
//!   them, so a chunk file newer than the index read at open means the index changed).
//! * **Read-only.** Every write fails with [`Error::Io`] (write).
//! * **Accounting.** [`FrameIo::traffic`] counts the file bytes and the requests moved since
//!   the open; each [`FrameIo::read_many`] returns its own share.
//!
//! Protocol facts (what servers answer: `Range`, `multipart/byteranges`, `ETag`, `If-Range`)
//! are in `docs/remote.md`.

mod http;
mod ranges;

use super::io::{is_url, FrameIo, Obj, ReadReq, Traffic, SFRAME_INDEX};
use crate::error::{Error, IoOp, Result};
use crate::format::frame::{FrameHeader, FrameType, HEADER_MINLEN};
use http::{remote, Ask, Client, Get, Validator};
use ranges::{coalesce, merge_to, Span, Target};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How a [`RemoteIo`] talks to its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    /// Most time to open a connection (default 10 s).
    pub connect_timeout: Duration,
    /// Most time to wait for an answer, and for each read of its body (default 30 s).
    pub read_timeout: Duration,
    /// Most time one request takes from its start to the last byte of its answer, so that a
    /// server sending a body a byte at a time cannot hold a read forever (default 300 s).
    pub request_timeout: Duration,
    /// Attempts after the first for a transient failure (default 3).
    pub retries: u32,
    /// Wait before the first retry, doubled at each next one (default 100 ms).
    pub backoff: Duration,
    /// Redirects followed per request (default 5).
    pub max_redirects: u32,
    /// Ranges per multi-range request (default 64).
    pub max_ranges: usize,
    /// Ranges at most this many bytes apart are fetched as one (default 128: less than the
    /// framing of a multipart part).
    pub coalesce_gap: u64,
    /// Most requests one step of a read takes from a server that answers one range per
    /// request: closer ranges are merged until they fit (default 8).
    pub max_requests: usize,
    /// A file sent whole by a server that ignores `Range` is kept in memory when it is at
    /// most this long (default 16 MiB); a longer one is read from its start each time.
    pub keep_whole: u64,
    /// Ask a data service that slices arrays (a URL `…/api/fetch/{root}/{path}`, which
    /// stratad and Caterva2 serve, or stratad's `…/v1/raw/{root}/{path}`) to cut array
    /// selections itself and send only them, compressed ([`FrameIo::server_selection`]),
    /// instead of reading the blocks they touch (default true).
    pub server_slices: bool,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(300),
            retries: 3,
            backoff: Duration::from_millis(100),
            max_redirects: 5,
            max_ranges: 64,
            coalesce_gap: 128,
            max_requests: 8,
            keep_whole: 16 << 20,
            server_slices: true,
        }
    }
}

impl RemoteOptions {
    /// The defaults, with what the environment sets: `STRATA_HTTP_CONNECT_TIMEOUT`,
    /// `STRATA_HTTP_READ_TIMEOUT` and `STRATA_HTTP_REQUEST_TIMEOUT` (seconds, fractions
    /// allowed), `STRATA_HTTP_RETRIES`, `STRATA_HTTP_SERVER_SLICES` (`0` or `1`).
    ///
    /// # Errors
    /// [`Error::EnvVar`] naming a variable whose value does not parse.
    pub fn from_env() -> Result<RemoteOptions> {
        let mut o = RemoteOptions::default();
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let bad = |name: &'static str, v: &str| Error::EnvVar {
            name,
            value: v.to_string(),
            expected: "a positive number of seconds",
        };
        for (name, slot) in [
            ("STRATA_HTTP_CONNECT_TIMEOUT", &mut o.connect_timeout),
            ("STRATA_HTTP_READ_TIMEOUT", &mut o.read_timeout),
            ("STRATA_HTTP_REQUEST_TIMEOUT", &mut o.request_timeout),
        ] {
            if let Some(v) = var(name) {
                let secs: f64 = v.trim().parse().map_err(|_| bad(name, &v))?;
                *slot = Duration::try_from_secs_f64(secs)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| bad(name, &v))?;
            }
        }
        if let Some(v) = var("STRATA_HTTP_RETRIES") {
            o.retries = v.trim().parse().map_err(|_| Error::EnvVar {
                name: "STRATA_HTTP_RETRIES",
                value: v.clone(),
                expected: "a count",
            })?;
        }
        if let Some(v) = var("STRATA_HTTP_SERVER_SLICES") {
            o.server_slices = match v.trim() {
                "0" => false,
                "1" => true,
                _ => {
                    return Err(Error::EnvVar {
                        name: "STRATA_HTTP_SERVER_SLICES",
                        value: v.clone(),
                        expected: "0 or 1",
                    })
                }
            };
        }
        Ok(o)
    }
}

/// What the server can do with ranges (learned once per store).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Ranges {
    /// Several ranges per request (until a server answers otherwise).
    Many = 0,
    /// One range per request.
    One = 1,
    /// None: every answer is the whole file.
    None = 2,
}

/// One object of the store, as its first answer described it.
#[derive(Debug)]
struct Object {
    /// Where it is (after redirects).
    url: String,
    validator: Validator,
    /// Its first bytes, from that answer (all of it when the server sent it whole).
    head: Vec<u8>,
}

/// A read-only frame store over HTTP(S); see the module docs.
pub struct RemoteIo {
    client: Arc<Client>,
    /// The frame's URL as given (a sparse frame's: its index `…/chunks.b2frame`).
    url: String,
    /// A sparse frame's directory URL (no final `/`) and the query the URL carried.
    dir: Option<(String, String)>,
    kind: FrameType,
    ranges: AtomicU8,
    objects: Mutex<HashMap<Obj, Arc<Object>>>,
    traffic: Mutex<Traffic>,
    /// Set once the server refused a selection (it does not slice, or not that way).
    slices_refused: AtomicBool,
}

impl std::fmt::Debug for RemoteIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteIo")
            .field("url", &self.url)
            .field("kind", &self.kind)
            .field("ranges", &self.ranges())
            .finish_non_exhaustive()
    }
}

/// Where the data service holding the file at `url` cuts selection `sel` of it (see
/// [`RemoteOptions::server_slices`]): Caterva2's `…/api/fetch/{path}?slice_=…` (which
/// stratad serves too) and stratad's own `…/v1/slice/{path}?sel=…&fmt=b2nd` for a file URL
/// `…/v1/raw/{path}`; `None` for other URLs. The URL's own query is kept.
fn selection_url(url: &str, sel: &str) -> Option<String> {
    let (path, query) = split_query(url);
    let extra = query.strip_prefix('?').filter(|q| !q.is_empty());
    let with = |base: &str, ours: String| match extra {
        Some(q) => format!("{base}?{ours}&{q}"),
        None => format!("{base}?{ours}"),
    };
    let after_host = path.find("://").map_or(0, |i| i + 3);
    let route = &path[after_host..];
    if route.contains("/api/fetch/") {
        Some(with(path, format!("slice_={sel}")))
    } else if let Some(at) = route.find("/v1/raw/") {
        let at = after_host + at;
        let base = format!(
            "{}/v1/slice/{}",
            &path[..at],
            &path[at + "/v1/raw/".len()..]
        );
        Some(with(&base, format!("sel={sel}&fmt=b2nd")))
    } else {
        None
    }
}

/// `url` split into what precedes its query and the query (with its `?`), fragment dropped.
fn split_query(url: &str) -> (&str, &str) {
    let url = url.split('#').next().unwrap_or(url);
    match url.find('?') {
        Some(q) => (&url[..q], &url[q..]),
        None => (url, ""),
    }
}

impl RemoteIo {
    /// Opens the frame at `url`: a contiguous frame file, or a sparse frame directory (a URL
    /// ending in `/`, a URL that is not a frame file but has `chunks.b2frame` under it, or
    /// the URL of a `chunks.b2frame` itself). Reads the frame's first 87 bytes (the fixed
    /// header), which also tells the length, the validator and whether the server answers
    /// ranges.
    ///
    /// # Errors
    /// [`Error::Unsupported`] (inside [`Error::InFile`] naming it) for a URL that is not
    /// `http://` or `https://`;
    /// [`Error::Remote`] naming the URL and the status when the server refuses, cannot be
    /// reached, or sends something that is not a Blosc2 frame.
    pub fn open(url: &str, opts: &RemoteOptions) -> Result<RemoteIo> {
        if !is_url(url) {
            let what = "not an http:// or https:// URL";
            return Err(Error::in_file(url, Error::Unsupported { what }));
        }
        let client = Arc::new(Client::new(opts.clone()));
        let (path, query) = split_query(url);
        let as_dir = |dir: &str| -> Result<RemoteIo> {
            let dir = dir.trim_end_matches('/').to_string();
            let index = format!("{dir}/{SFRAME_INDEX}{query}");
            let dir = Some((dir, query.to_string()));
            Self::with_frame(client.clone(), index, dir, FrameType::Sparse)
        };
        if path.ends_with('/') {
            return as_dir(path);
        }
        let first =
            match Self::with_frame(client.clone(), url.to_string(), None, FrameType::Contiguous) {
                Ok(io) => return Ok(io),
                Err(e) => e,
            };
        if let Some(dir) = path.strip_suffix(SFRAME_INDEX) {
            // The index of a sparse frame, named itself.
            return as_dir(dir);
        }
        match first {
            // Not a frame file: maybe a sparse frame directory.
            Error::Remote {
                status: Some(403 | 404),
                ..
            }
            | Error::Frame { .. }
            | Error::FrameType { .. } => as_dir(path).map_err(|_| first),
            _ => Err(first),
        }
    }

    /// The store of the frame at `url` (of layout `kind`, a sparse frame's index when `dir`
    /// is given), its first bytes read and checked to be a frame of that layout.
    fn with_frame(
        client: Arc<Client>,
        url: String,
        dir: Option<(String, String)>,
        kind: FrameType,
    ) -> Result<RemoteIo> {
        let io = RemoteIo {
            client,
            url,
            dir,
            kind,
            ranges: AtomicU8::new(Ranges::Many as u8),
            objects: Mutex::new(HashMap::new()),
            traffic: Mutex::new(Traffic::default()),
            slices_refused: AtomicBool::new(false),
        };
        let frame = io.first_contact(Obj::Frame, HEADER_MINLEN as u64)?;
        let h = FrameHeader::parse_fixed(&frame.head).map_err(|e| Error::frame(&io.url, e))?;
        if h.frame_type != kind as u8 {
            return Err(Error::FrameType {
                path: io.url.clone(),
                expected: kind.name(),
                found: h.frame_type,
            });
        }
        Ok(io)
    }

    /// The URL the frame was opened by.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    fn ranges(&self) -> Ranges {
        match self.ranges.load(Ordering::Relaxed) {
            0 => Ranges::Many,
            1 => Ranges::One,
            _ => Ranges::None,
        }
    }

    /// Learns that the server does at most `r` (never raises what it can do).
    fn downgrade(&self, r: Ranges) {
        self.ranges.fetch_max(r as u8, Ordering::Relaxed);
    }

    fn count(&self, t: Traffic) {
        *self.traffic.lock().unwrap_or_else(PoisonError::into_inner) += t;
    }

    /// The URL of `obj`.
    fn url_of(&self, obj: Obj) -> String {
        match (obj, &self.dir) {
            (Obj::Chunk(n), Some((dir, query))) => format!("{dir}/{n:08X}.chunk{query}"),
            _ => self.url.clone(),
        }
    }

    fn known(&self, obj: Obj) -> Option<Arc<Object>> {
        let map = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(&obj).cloned()
    }

    /// `obj`, described by its first answer (asked for now if there was none).
    fn object(&self, obj: Obj) -> Result<Arc<Object>> {
        if let Some(o) = self.known(obj) {
            return Ok(o);
        }
        if let Obj::Chunk(n) = obj {
            if self.kind != FrameType::Sparse {
                let e = Error::Unsupported {
                    what: "a contiguous frame has no chunk files",
                };
                return Err(Error::in_file(
                    &self.url,
                    Error::at("chunk file", n as usize, e),
                ));
            }
        }
        let o = self.first_contact(obj, 1)?;
        if obj != Obj::Frame {
            self.revalidate_index()?;
        }
        Ok(o)
    }

    /// Asks for the first `n` bytes of `obj`, and records what the answer says of it (where
    /// it is, its validator, whether the server does ranges).
    fn first_contact(&self, obj: Obj, n: u64) -> Result<Arc<Object>> {
        let client = &self.client;
        let url = self.url_of(obj);
        let mut head = vec![0u8; n as usize];
        let spans = [Span {
            start: 0,
            end: n,
            targets: 0..1,
        }];
        let mut targets = [Target {
            pos: 0,
            buf: &mut head,
        }];
        let ask = if self.ranges() == Ranges::None {
            Ask::Whole
        } else {
            Ask::Ranges
        };
        let mut moved = Traffic::default();
        let g = Get {
            url: &url,
            spans: &spans,
            ask,
            known: None,
            short: true,
            keep: client.opts.keep_whole,
        };
        let got = client.get(g, &mut targets, &mut moved);
        self.count(moved);
        let a = got?;
        if !a.ranged {
            self.downgrade(Ranges::None);
        }
        let validator = a.seen.validator().ok_or_else(|| {
            remote(
                &url,
                Some(200),
                "the server sends neither byte ranges nor the file's length",
            )
        })?;
        let head = match a.whole {
            Some(all) => all,
            None => {
                head.truncate(validator.len.min(n) as usize);
                head
            }
        };
        let o = Arc::new(Object {
            url: a.seen.url,
            validator,
            head,
        });
        let mut map = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(map.entry(obj).or_insert(o).clone())
    }

    /// Checks that a sparse frame's index is still the one opened.
    fn revalidate_index(&self) -> Result<()> {
        let index = self.object(Obj::Frame)?;
        let mut one = [0u8; 1];
        self.fetch(
            &index,
            &mut [Target {
                pos: 0,
                buf: &mut one,
            }],
        )?;
        Ok(())
    }

    /// Fills `targets` (reads of object `o`, each inside it) in as few requests as the
    /// server allows; returns what moved.
    fn fetch(&self, o: &Object, targets: &mut [Target<'_>]) -> Result<Traffic> {
        let mut moved = Traffic::default();
        let spans = coalesce(targets, self.client.opts.coalesce_gap);
        let r = self.fetch_spans(o, spans, targets, &mut moved);
        self.count(moved);
        r.map(|()| moved)
    }

    /// Fetches `spans` (of `targets`) as the server allows: many per request, one per
    /// request (the closest merged until they fit in [`RemoteOptions::max_requests`]), or
    /// the whole file read up to the last span.
    fn fetch_spans(
        &self,
        o: &Object,
        spans: Vec<Span>,
        targets: &mut [Target<'_>],
        moved: &mut Traffic,
    ) -> Result<()> {
        let opts = &self.client.opts;
        let v = Some(&o.validator);
        let get = |spans: &[Span], targets: &mut [Target<'_>], ask, moved: &mut Traffic| {
            let g = Get {
                url: &o.url,
                spans,
                ask,
                known: v,
                short: false,
                keep: 0,
            };
            self.client.get(g, targets, moved)
        };
        match self.ranges() {
            _ if spans.is_empty() => {}
            Ranges::None => {
                get(&spans, targets, Ask::Whole, moved)?;
            }
            Ranges::One => {
                for s in merge_to(spans, opts.max_requests) {
                    get(std::slice::from_ref(&s), targets, Ask::Ranges, moved)?;
                }
            }
            Ranges::Many => {
                let mut at = 0;
                while at < spans.len() {
                    if self.ranges() != Ranges::Many {
                        // The server was found to do fewer ranges than asked.
                        return self.fetch_spans(o, spans[at..].to_vec(), targets, moved);
                    }
                    let group = &spans[at..spans.len().min(at + opts.max_ranges.max(1))];
                    let a = get(group, targets, Ask::Ranges, moved)?;
                    if !a.ranged {
                        // A whole body for several ranges: the server does one at most (the
                        // first contact got a range); for one range, none.
                        self.downgrade(if group.len() > 1 {
                            Ranges::One
                        } else {
                            Ranges::None
                        });
                    }
                    at += group.len();
                }
            }
        }
        Ok(())
    }
}

impl FrameIo for RemoteIo {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()> {
        self.read_many(&mut [ReadReq { obj, pos, buf }]).map(|_| ())
    }

    fn read_many(&self, reqs: &mut [ReadReq<'_>]) -> Result<Traffic> {
        let mut moved = Traffic::default();
        let mut by_obj: Vec<&mut ReadReq<'_>> = reqs.iter_mut().collect();
        by_obj.sort_by_key(|r| r.obj);
        let mut rest = &mut by_obj[..];
        while let Some(first) = rest.first() {
            let obj = first.obj;
            let n = rest.iter().take_while(|r| r.obj == obj).count();
            let (group, tail) = rest.split_at_mut(n);
            rest = tail;
            let o = self.object(obj)?;
            let mut targets = Vec::with_capacity(group.len());
            for r in group.iter_mut() {
                let end = r.pos.checked_add(r.buf.len() as u64);
                if end.is_none_or(|e| e > o.validator.len) {
                    let e = Error::Truncated {
                        what: "the remote file",
                        needed: usize::try_from(r.pos.saturating_add(r.buf.len() as u64))
                            .unwrap_or(usize::MAX),
                        available: usize::try_from(o.validator.len).unwrap_or(usize::MAX),
                    };
                    return Err(Error::frame(&o.url, e));
                }
                let from = r.pos as usize;
                match o.head.get(from..from + r.buf.len()) {
                    Some(held) => r.buf.copy_from_slice(held),
                    None => targets.push(Target {
                        pos: r.pos,
                        buf: &mut *r.buf,
                    }),
                }
            }
            if !targets.is_empty() {
                moved += self.fetch(&o, &mut targets)?;
            }
        }
        Ok(moved)
    }

    fn len(&self, obj: Obj) -> Result<u64> {
        Ok(self.object(obj)?.validator.len)
    }

    fn write_at(&mut self, obj: Obj, _pos: u64, _data: &[u8]) -> Result<()> {
        Err(self.read_only(obj))
    }

    fn set_len(&mut self, obj: Obj, _len: u64) -> Result<()> {
        Err(self.read_only(obj))
    }

    fn sync(&mut self, _obj: Obj) -> Result<()> {
        Ok(())
    }

    fn replace(&mut self, obj: Obj, _parts: &[&[u8]], _durable: bool) -> Result<()> {
        Err(self.read_only(obj))
    }

    fn remove(&mut self, obj: Obj) -> Result<()> {
        Err(self.read_only(obj))
    }

    fn path(&self, obj: Obj) -> String {
        self.url_of(obj)
    }

    fn frame_type(&self) -> FrameType {
        self.kind
    }

    fn batches_reads(&self) -> bool {
        true
    }

    fn traffic(&self) -> Option<Traffic> {
        Some(*self.traffic.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn server_selection(&self, sel: &str, max_len: u64) -> Option<Result<(Vec<u8>, Traffic)>> {
        if !self.client.opts.server_slices
            || self.kind != FrameType::Contiguous
            || self.slices_refused.load(Ordering::Relaxed)
        {
            return None;
        }
        let url = selection_url(&self.known(Obj::Frame)?.url, sel)?;
        let mut moved = Traffic::default();
        let g = Get {
            url: &url,
            spans: &[],
            ask: Ask::Whole,
            known: None,
            short: true,
            keep: max_len.max(1),
        };
        let r = self.client.get(g, &mut [], &mut moved);
        self.count(moved);
        match r {
            Ok(a) => a.whole.map(|body| Ok((body, moved))),
            // The server answered but will not cut this selection (no such route, a limit):
            // the blocks are read instead, now and from then on.
            Err(Error::Remote {
                status: Some(400..=499),
                ..
            }) => {
                self.slices_refused.store(true, Ordering::Relaxed);
                None
            }
            // A body of unknown length that ran past `max_len`.
            Err(Error::Remote {
                status: Some(200), ..
            }) => None,
            Err(e) => Some(Err(e)),
        }
    }

    fn validator(&self) -> Option<String> {
        let v = &self.known(Obj::Frame)?.validator;
        if v.etag.is_none() && v.last_modified.is_none() {
            return None;
        }
        Some(format!(
            "{} {} {} {}",
            self.url,
            v.etag.as_deref().unwrap_or("-"),
            v.last_modified.as_deref().unwrap_or("-"),
            v.len
        ))
    }
}

impl RemoteIo {
    fn read_only(&self, obj: Obj) -> Error {
        Error::refused(
            self.url_of(obj),
            IoOp::Write,
            std::io::ErrorKind::PermissionDenied,
            "a remote frame is read-only",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::selection_url;

    #[test]
    fn selection_urls_of_the_services_that_slice() {
        let sel = "0:10,5:6";
        assert_eq!(
            selection_url("http://h:8000/api/fetch/@public/a/x.b2nd", sel).as_deref(),
            Some("http://h:8000/api/fetch/@public/a/x.b2nd?slice_=0:10,5:6")
        );
        assert_eq!(
            selection_url("https://h/pre/v1/raw/@public/x.b2nd?token=t#frag", sel).as_deref(),
            Some("https://h/pre/v1/slice/@public/x.b2nd?sel=0:10,5:6&fmt=b2nd&token=t")
        );
        assert_eq!(selection_url("http://h/data/x.b2nd", sel), None);
        // Only the path counts, not a host or a query that looks like a route.
        assert_eq!(selection_url("http://h/x.b2nd?p=/api/fetch/", sel), None);
        assert_eq!(selection_url("http://h/v1/rawx/x.b2nd", sel), None);
    }
}
