//! One HTTP GET of byte ranges, with timeouts, bounded retries and backoff on transient
//! failures (5xx, 408, 429, resets, timeouts, bodies that end early), the answer checked
//! against the object's validator and its bytes delivered into the readers' buffers.

use super::ranges::{
    multipart_boundary, parse_content_range, range_header, BodyError, Sink, Span, Target,
};
use super::RemoteOptions;
use crate::error::{Error, Result};
use crate::frame::io::Traffic;
use std::io::{BufReader, Read};
use ureq::http::header::{
    CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG, IF_RANGE, LAST_MODIFIED, RANGE,
};
use ureq::http::{HeaderMap, StatusCode};
use ureq::ResponseExt;

/// What names one version of a remote object: its `ETag` (or `Last-Modified`) and length,
/// as the first answer gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Validator {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub len: u64,
}

impl Validator {
    /// The `If-Range` value: a strong ETag, else the `Last-Modified` date.
    fn if_range(&self) -> Option<&str> {
        match &self.etag {
            Some(e) if !e.starts_with("W/") => Some(e),
            _ => self.last_modified.as_deref(),
        }
    }

    /// Why `seen` is another version of the object, if it is.
    fn changed(&self, seen: &Seen) -> Option<String> {
        if let (Some(a), Some(b)) = (&self.etag, &seen.etag) {
            if a != b {
                return Some(format!("its ETag was {a}, it is now {b}"));
            }
        } else if let (Some(a), Some(b)) = (&self.last_modified, &seen.last_modified) {
            if a != b {
                return Some(format!("it was last modified {a}, it is now {b}"));
            }
        }
        match seen.len {
            Some(len) if len != self.len => {
                Some(format!("it had {} bytes, it now has {len}", self.len))
            }
            _ => None,
        }
    }
}

/// What an answer says of the object.
#[derive(Debug, Clone, Default)]
pub(super) struct Seen {
    /// Its length (from `Content-Range`, or `Content-Length` of a whole body).
    pub len: Option<u64>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// The URL that answered (after redirects).
    pub url: String,
}

impl Seen {
    fn from_headers(h: &HeaderMap, url: String) -> Seen {
        let text = |name| {
            h.get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        Seen {
            len: None,
            etag: text(ETAG),
            last_modified: text(LAST_MODIFIED),
            url,
        }
    }

    /// The validator this answer gives the object (its length must be known).
    pub fn validator(&self) -> Option<Validator> {
        Some(Validator {
            etag: self.etag.clone(),
            last_modified: self.last_modified.clone(),
            len: self.len?,
        })
    }
}

/// How a GET asks for its spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ask {
    /// With a `Range` header naming them.
    Ranges,
    /// Without: the whole object, its bytes kept up to the last span's end.
    Whole,
}

/// An answer that delivered the spans' bytes.
#[derive(Debug)]
pub(super) struct Answer {
    pub seen: Seen,
    /// True when the server sent ranges (206), false for a whole body (200).
    pub ranged: bool,
    /// The whole object, when the server sent all of it and it was kept (see
    /// [`Client::get`]).
    pub whole: Option<Vec<u8>>,
}

/// One GET: of which object, which spans, asked how, against which validator.
#[derive(Debug, Clone, Copy)]
pub(super) struct Get<'a> {
    /// The object's URL.
    pub url: &'a str,
    /// The spans wanted (sorted, disjoint).
    pub spans: &'a [Span],
    pub ask: Ask,
    /// With a validator, every answer must be that version of the object (`If-Range`
    /// asks the server to check too).
    pub known: Option<&'a Validator>,
    /// Spans past the object's end are cut at it (an object shorter than asked for is no
    /// error): for a first contact, which does not know the length.
    pub short: bool,
    /// A whole body (200) of at most this many bytes (or of unknown length, when not 0) is
    /// read whole and returned.
    pub keep: u64,
}

/// How one attempt failed.
enum Fail {
    /// Worth another attempt: the status (if any) and what happened.
    Retry(Option<u16>, String),
    /// Final.
    Stop(Error),
}

/// An HTTP client for one store: one agent (its connections reused), the store's options.
pub(super) struct Client {
    agent: ureq::Agent,
    pub opts: RemoteOptions,
}

/// The error for `url` with `status` (if any) and `message`.
pub(super) fn remote(url: &str, status: Option<u16>, message: impl Into<String>) -> Error {
    Error::Remote {
        url: url.to_string(),
        status,
        message: message.into(),
    }
}

/// The error for an object that is no longer the version opened.
pub(super) fn changed(url: &str, status: Option<u16>, why: &str) -> Error {
    remote(
        url,
        status,
        format!("the file changed since it was opened ({why}); open it again"),
    )
}

fn status_text(status: u16) -> String {
    let reason = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!("HTTP {status} {reason}").trim_end().to_string()
}

impl Client {
    pub fn new(opts: RemoteOptions) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(opts.max_redirects)
            .max_redirects_will_error(true)
            .timeout_connect(Some(opts.connect_timeout))
            .timeout_per_read(Some(opts.read_timeout))
            .timeout_recv_response(Some(opts.read_timeout))
            .timeout_global(Some(opts.request_timeout))
            .user_agent(concat!("strata/", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            agent: config.new_agent(),
            opts,
        }
    }

    /// Does `g`, delivering the spans' bytes into `targets` and retrying transient
    /// failures; adds what moved to `moved`.
    pub fn get(
        &self,
        g: Get<'_>,
        targets: &mut [Target<'_>],
        moved: &mut Traffic,
    ) -> Result<Answer> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            moved.requests += 1;
            match self.attempt(g, targets, moved) {
                Ok(a) => return Ok(a),
                Err(Fail::Retry(..)) if attempt <= self.opts.retries => {
                    let wait = self.opts.backoff.saturating_mul(1 << (attempt - 1).min(16));
                    std::thread::sleep(wait);
                }
                Err(Fail::Retry(status, why)) => {
                    let tries = if attempt == 1 {
                        "1 attempt".to_string()
                    } else {
                        format!("{attempt} attempts")
                    };
                    return Err(remote(
                        g.url,
                        status,
                        format!("{why} (gave up after {tries})"),
                    ));
                }
                Err(Fail::Stop(e)) => return Err(e),
            }
        }
    }

    fn attempt(
        &self,
        g: Get<'_>,
        targets: &mut [Target<'_>],
        moved: &mut Traffic,
    ) -> Result<Answer, Fail> {
        let Get {
            url,
            spans,
            ask,
            known,
            short,
            keep,
        } = g;
        let mut req = self.agent.get(url);
        if ask == Ask::Ranges {
            req = req.header(RANGE, range_header(spans));
            if let Some(v) = known.and_then(Validator::if_range) {
                req = req.header(IF_RANGE, v);
            }
        }
        let resp = req.call().map_err(|e| self.transport(url, e))?;
        let status = resp.status().as_u16();
        let mut seen = Seen::from_headers(resp.headers(), resp.get_uri().to_string());
        let header = |name| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let content_range = header(CONTENT_RANGE).and_then(|v| parse_content_range(&v));
        let content_type = header(CONTENT_TYPE).unwrap_or_default();
        let content_length = header(CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
        let stop = |message: String| Fail::Stop(remote(url, Some(status), message));
        match status {
            206 | 200 => {}
            416 => {
                seen.len = content_range.as_ref().and_then(|c| c.total);
                return match known {
                    Some(v) => Err(Fail::Stop(changed(
                        url,
                        Some(status),
                        &v.changed(&seen)
                            .unwrap_or_else(|| "a range it had is not satisfiable".into()),
                    ))),
                    None if seen.len == Some(0) => Ok(Answer {
                        seen,
                        ranged: true,
                        whole: None,
                    }),
                    None => Err(stop(format!(
                        "{}: the range asked for is not satisfiable",
                        status_text(status)
                    ))),
                };
            }
            412 => {
                return Err(Fail::Stop(changed(
                    url,
                    Some(status),
                    "the server says its validator no longer matches",
                )))
            }
            408 | 429 | 500..=599 => return Err(Fail::Retry(Some(status), status_text(status))),
            _ => return Err(stop(status_text(status))),
        }
        let ranged = status == 206;
        let boundary = multipart_boundary(&content_type);
        if ranged {
            seen.len = content_range.as_ref().and_then(|c| c.total);
            if boundary.is_none()
                && content_range
                    .as_ref()
                    .and_then(|c| c.range.clone())
                    .is_none()
            {
                return Err(stop(
                    "a 206 answer with neither a Content-Range nor multipart parts".into(),
                ));
            }
        } else {
            seen.len = content_length;
        }
        if let Some(why) = known.and_then(|v| v.changed(&seen)) {
            return Err(Fail::Stop(changed(url, Some(status), &why)));
        }
        let mut body = resp.into_body().into_reader();
        let mut sink = Sink::new(targets, spans);
        let mut whole = None;
        let read = if !ranged && keep > 0 && content_length.is_none_or(|l| l <= keep) {
            // A small object sent whole (or one of unknown length): kept, and the spans
            // taken from it.
            let mut all = Vec::new();
            match (&mut body).take(keep + 1).read_to_end(&mut all) {
                Err(e) => Err(BodyError::Io(e)),
                Ok(_) if content_length.is_some_and(|l| l != all.len() as u64) => {
                    Err(BodyError::Io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "the body ended after {} of its {} bytes",
                            all.len(),
                            content_length.unwrap_or(0)
                        ),
                    )))
                }
                Ok(_) if all.len() as u64 > keep => Err(BodyError::Bad(format!(
                    "the server sends neither byte ranges nor the length of a body over \
                     {keep} bytes"
                ))),
                Ok(_) => {
                    seen.len = Some(all.len() as u64);
                    if let Some(why) = known.and_then(|v| v.changed(&seen)) {
                        return Err(Fail::Stop(changed(url, Some(status), &why)));
                    }
                    let r = sink.read_from_start(&mut &all[..], seen.len);
                    sink.moved = all.len() as u64;
                    whole = Some(all);
                    r
                }
            }
        } else if !ranged {
            sink.read_from_start(&mut body, seen.len)
        } else if let Some(b) = &boundary {
            sink.read_multipart(&mut BufReader::new(&mut body), b)
        } else {
            let r = content_range.and_then(|c| c.range).unwrap_or(0..0);
            sink.read_part(&mut body, r.start, r.end - r.start)
        };
        moved.bytes += sink.moved;
        match read {
            Ok(()) => {}
            Err(BodyError::Io(e)) => {
                // ureq hands its own timeouts to the reader wrapped in an io::Error.
                let timed_out = e.kind() == std::io::ErrorKind::TimedOut
                    || e.get_ref()
                        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
                        .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)));
                let what = if timed_out {
                    "timed out"
                } else {
                    "the connection broke"
                };
                return Err(Fail::Retry(
                    Some(status),
                    format!("{what} while reading the answer ({e})"),
                ));
            }
            Err(BodyError::Bad(m)) => return Err(stop(m)),
        }
        let len = seen.len.or(known.map(|v| v.len));
        if let Some(gap) = sink.missing(if short { len } else { None }) {
            return Err(Fail::Retry(
                Some(status),
                format!(
                    "the answer lacks bytes {}..{} that were asked for",
                    gap.start, gap.end
                ),
            ));
        }
        drop(sink);
        Ok(Answer {
            seen,
            ranged,
            whole,
        })
    }

    /// Sorts a failure to get an answer: connection trouble and timeouts are worth another
    /// attempt, the rest is final.
    fn transport(&self, url: &str, e: ureq::Error) -> Fail {
        use std::io::ErrorKind as K;
        match e {
            ureq::Error::Timeout(t) => Fail::Retry(None, format!("timed out ({t})")),
            ureq::Error::Io(io)
                if matches!(
                    io.kind(),
                    K::ConnectionReset
                        | K::ConnectionAborted
                        | K::ConnectionRefused
                        | K::BrokenPipe
                        | K::UnexpectedEof
                        | K::TimedOut
                        | K::Interrupted
                ) =>
            {
                Fail::Retry(None, format!("connection failed: {io}"))
            }
            ureq::Error::ConnectionFailed => Fail::Retry(None, "connection failed".into()),
            ureq::Error::Protocol(p) => Fail::Retry(None, format!("HTTP protocol error: {p}")),
            ureq::Error::TooManyRedirects => Fail::Stop(remote(
                url,
                None,
                format!("more than {} redirects", self.opts.max_redirects),
            )),
            ureq::Error::HostNotFound => Fail::Stop(remote(url, None, "host not found")),
            other => Fail::Stop(remote(url, None, other.to_string())),
        }
    }
}
