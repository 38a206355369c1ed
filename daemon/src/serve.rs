//! Response bodies: a dataset's stored file with ETag, `If-None-Match`, `Range` (single,
//! suffix, multipart/byteranges), `If-Range`; and computed bodies, which carry
//! `Accept-Ranges: none` and refuse `Range` with 416.
//!
//! Stored bytes are read on the pool, at most [`PIECE`] bytes per task: a large body is
//! streamed piece by piece as the client takes it, so a slow client holds no thread and no
//! more than a piece of memory, charged to the memory budget until it is sent. If the file is cut short while being sent, the stream fails
//! and the connection is closed: the client never gets wrong bytes.

use crate::app::App;
use crate::budget::Charge;
use crate::dataset::Dataset;
use crate::error::ApiError;
use crate::parse::{range, Ranges};
use crate::work::Permit;
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Most bytes of a stored file read by one task.
pub const PIECE: usize = 1 << 20;

/// How a stored file is offered.
#[derive(Debug, Clone, Copy)]
pub struct Offer {
    /// Honour `Range` (else a `Range` gets 416, as Caterva2's download does).
    pub ranges: bool,
    /// Send `Content-Disposition: attachment` with the dataset's name.
    pub attachment: bool,
}

/// `Content-Disposition: attachment` for `name`.
#[must_use]
pub fn attachment(name: &str) -> HeaderValue {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ');
    let v = if plain {
        format!("attachment; filename=\"{name}\"")
    } else {
        let enc = percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC);
        format!("attachment; filename*=UTF-8''{enc}")
    };
    HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

fn etag_matches(list: &str, etag: &str) -> bool {
    list.split(',')
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == etag)
}

/// Whether `If-None-Match` names `etag` (the client has it: 304).
#[must_use]
pub fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|l| etag_matches(l, etag))
}

/// 304 with the validators.
#[must_use]
pub fn response_304(ds: &Dataset) -> Response {
    let mut r = StatusCode::NOT_MODIFIED.into_response();
    validators(r.headers_mut(), ds);
    r
}

fn validators(h: &mut HeaderMap, ds: &Dataset) {
    if let Ok(v) = HeaderValue::from_str(&ds.etag) {
        h.insert(header::ETAG, v);
    }
    if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(ds.mtime())) {
        h.insert(header::LAST_MODIFIED, v);
    }
}

/// Whether `If-Range` (absent, or the current ETag or Last-Modified date) lets `Range` apply.
fn if_range_holds(headers: &HeaderMap, ds: &Dataset) -> bool {
    let Some(v) = headers.get(header::IF_RANGE) else {
        return true;
    };
    // A validator that is not even text matches nothing: the whole file is sent.
    let Ok(v) = v.to_str() else {
        return false;
    };
    let v = v.trim();
    if v.starts_with('"') || v.starts_with("W/") {
        return v == ds.etag;
    }
    // A date must be exactly the Last-Modified date (to the second).
    let secs = |t: SystemTime| t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok();
    httpdate::parse_http_date(v)
        .ok()
        .is_some_and(|d| secs(d) == secs(ds.mtime()))
}

/// The next boundary of a multipart answer.
fn boundary() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("{:016x}{:08x}", t ^ 0x5bd1_e995_7f4a_7c15, n as u32)
}

/// One piece of a body: bytes already made, or stored bytes still to read.
enum Seg {
    Bytes(Bytes),
    File { pos: u64, len: u64 },
}

/// A piece of a streamed stored file, with its memory charge: given back when the last of
/// its bytes has been written to the socket (or dropped with the connection).
struct Piece {
    data: Vec<u8>,
    _charge: Charge,
}

impl AsRef<[u8]> for Piece {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

/// A charge of `n` bytes for the next piece, waiting for room in the budget until `deadline`.
async fn piece_charge(app: &App, n: u64, deadline: Instant) -> Result<Charge, ApiError> {
    let mut charge = app.budget.charge();
    while !charge.try_reserve(n) {
        if Instant::now() >= deadline {
            app.metrics.refuse(crate::metrics::Refusal::Deadline);
            return Err(crate::work::deadline_error());
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    Ok(charge)
}

/// A streamed body: the request's permit goes with it, holding a place only while a piece is
/// read (see [`crate::work`]). Each piece read is charged to the memory budget until it is
/// sent: `first` is the first one's charge, taken before the head was sent; later pieces
/// wait for room (a client that takes nothing keeps its one piece, never more).
fn body_of(
    app: &Arc<App>,
    ds: &Arc<Dataset>,
    segs: Vec<Seg>,
    mut permit: Permit,
    first: Charge,
) -> Body {
    permit.release();
    let state = (
        Arc::clone(app),
        Arc::clone(ds),
        segs.into_iter().rev().collect::<Vec<_>>(),
        permit,
        Some(first),
    );
    let stream = futures_util::stream::unfold(
        state,
        |(app, ds, mut segs, mut permit, mut first)| async move {
            let seg = segs.pop()?;
            let piece = match seg {
                Seg::Bytes(b) => Ok(b),
                Seg::File { pos, len } => {
                    let n = len.min(PIECE as u64);
                    if n < len {
                        segs.push(Seg::File {
                            pos: pos + n,
                            len: len - n,
                        });
                    }
                    let d = Arc::clone(&ds);
                    let deadline = app.deadline(Instant::now());
                    let charge = match first.take() {
                        Some(c) => Ok(c),
                        None => piece_charge(&app, n, deadline).await,
                    };
                    let read = match charge {
                        Ok(charge) => {
                            permit
                                .run_waiting(deadline, move || {
                                    let data = d.read_stored(pos, n as usize)?;
                                    Ok(Bytes::from_owner(Piece {
                                        data,
                                        _charge: charge,
                                    }))
                                })
                                .await
                        }
                        Err(e) => Err(e),
                    };
                    permit.release();
                    read.map_err(|e| std::io::Error::other(e.detail))
                }
            };
            if let Ok(b) = &piece {
                app.metrics
                    .body_bytes
                    .fetch_add(b.len() as u64, Ordering::Relaxed);
            }
            Some((piece, (app, ds, segs, permit, first)))
        },
    );
    Body::from_stream(stream)
}

/// The stored file of `ds` (a contiguous frame) as `offer` says, honouring the request's
/// conditional and `Range` headers.
///
/// # Errors
/// 400 for a malformed `Range`; 416 for an unsatisfiable one, too many spans, or any `Range`
/// when ranges are not offered; 404 for a sparse frame.
pub async fn stored(
    app: &Arc<App>,
    ds: &Arc<Dataset>,
    headers: &HeaderMap,
    offer: Offer,
    permit: Permit,
) -> Result<Response, ApiError> {
    let total = ds.stored_len().ok_or_else(ApiError::not_found)?;
    if not_modified(headers, &ds.etag) {
        return Ok(response_304(ds));
    }
    let asked = headers
        .get(header::RANGE)
        .map(|v| v.to_str().unwrap_or("\u{0}").to_owned());
    let spans = match asked {
        Some(_) if !offer.ranges => {
            return Err(ApiError::range("ranges are not served here", Some(total)))
        }
        Some(r) if if_range_holds(headers, ds) => {
            match range(&r, total, app.config.limits.ranges) {
                Ranges::Spans(s) => Some(s),
                Ranges::OtherUnit => None,
                Ranges::Unsatisfiable => {
                    return Err(ApiError::range(
                        "the range is outside the file",
                        Some(total),
                    ))
                }
                Ranges::TooMany => {
                    return Err(ApiError::range(
                        format!("at most {} ranges per request", app.config.limits.ranges),
                        Some(total),
                    ))
                }
                Ranges::Malformed => return Err(ApiError::bad_request("malformed Range header")),
            }
        }
        _ => None,
    };
    let mut h = HeaderMap::new();
    validators(&mut h, ds);
    h.insert(
        header::ACCEPT_RANGES,
        HeaderValue::from_static(if offer.ranges { "bytes" } else { "none" }),
    );
    if offer.attachment {
        h.insert(header::CONTENT_DISPOSITION, attachment(&ds.name));
    }
    let octet = HeaderValue::from_static("application/octet-stream");
    let (status, segs, len) = match spans.as_deref() {
        None => {
            h.insert(header::CONTENT_TYPE, octet);
            (
                StatusCode::OK,
                vec![Seg::File { pos: 0, len: total }],
                total,
            )
        }
        Some([(a, b)]) => {
            h.insert(header::CONTENT_TYPE, octet);
            h.insert(
                header::CONTENT_RANGE,
                HeaderValue::from_str(&format!("bytes {a}-{b}/{total}"))
                    .map_err(ApiError::internal)?,
            );
            (
                StatusCode::PARTIAL_CONTENT,
                vec![Seg::File {
                    pos: *a,
                    len: b - a + 1,
                }],
                b - a + 1,
            )
        }
        Some(many) => {
            let bnd = boundary();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_str(&format!("multipart/byteranges; boundary={bnd}"))
                    .map_err(ApiError::internal)?,
            );
            let mut segs = Vec::with_capacity(many.len() * 2 + 1);
            let mut len = 0u64;
            for (i, (a, b)) in many.iter().enumerate() {
                let head = format!(
                    "{}--{bnd}\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes {a}-{b}/{total}\r\n\r\n",
                    if i == 0 { "" } else { "\r\n" }
                );
                len += head.len() as u64 + (b - a + 1);
                segs.push(Seg::Bytes(Bytes::from(head)));
                segs.push(Seg::File {
                    pos: *a,
                    len: b - a + 1,
                });
            }
            let tail = format!("\r\n--{bnd}--\r\n");
            len += tail.len() as u64;
            segs.push(Seg::Bytes(Bytes::from(tail)));
            (StatusCode::PARTIAL_CONTENT, segs, len)
        }
    };
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    // Admitted before the head is sent: a streamed body is never refused halfway.
    permit.admit()?;
    // Small bodies are read at once (one task); large ones are streamed.
    let file_bytes: u64 = segs
        .iter()
        .map(|s| match s {
            Seg::File { len, .. } => *len,
            Seg::Bytes(_) => 0,
        })
        .sum();
    if file_bytes <= PIECE as u64 {
        let d = Arc::clone(ds);
        let deadline = app.deadline(Instant::now());
        let mut charge = app.budget.charge();
        charge.reserve(len)?;
        let out = permit
            .run(deadline, move || {
                let mut out = Vec::with_capacity(len as usize);
                for s in segs {
                    match s {
                        Seg::Bytes(b) => out.extend_from_slice(&b),
                        Seg::File { pos, len } => {
                            out.extend_from_slice(&d.read_stored(pos, len as usize)?)
                        }
                    }
                }
                Ok(out)
            })
            .await?;
        app.metrics
            .body_bytes
            .fetch_add(out.len() as u64, Ordering::Relaxed);
        let mut r = hold((status, Body::from(out)).into_response(), charge);
        *r.headers_mut() = h;
        return Ok(r);
    }
    // The first piece's memory, taken before the head is sent (refused as a computed
    // answer would be).
    let mut first = app.budget.charge();
    first.reserve(file_bytes.min(PIECE as u64))?;
    let mut r = (status, body_of(app, ds, segs, permit, first)).into_response();
    *r.headers_mut() = h;
    Ok(r)
}

/// Largest frame a held body hands to the connection at once.
const FRAME: usize = 64 << 10;

/// A body that keeps `held` (a memory charge, the in-flight count) until its last frame is
/// taken or it is dropped (the client went away, or the connection failed). Its bytes are
/// handed on in frames of at most [`FRAME`] bytes: the connection queues a few frames
/// ahead of the socket, so a large body taken as one frame would leave at once, long before
/// it is sent.
struct Holding {
    inner: Body,
    /// What is left of the inner body's last frame.
    pending: Bytes,
    held: Option<Box<dyn Send>>,
}

impl http_body::Body for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if this.pending.is_empty() {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(f))) => match f.into_data() {
                    Ok(data) => this.pending = data,
                    Err(other) => return Poll::Ready(Some(Ok(other))),
                },
                Poll::Ready(end) => {
                    this.held = None;
                    return Poll::Ready(end);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = this.pending.len().min(FRAME);
        Poll::Ready(Some(Ok(http_body::Frame::data(this.pending.split_to(n)))))
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        let (inner, pending) = (self.inner.size_hint(), self.pending.len() as u64);
        let mut h = http_body::SizeHint::new();
        if let Some(upper) = inner.upper() {
            h.set_upper(upper + pending);
        }
        h.set_lower(inner.lower() + pending);
        h
    }
}

/// `r` with `held` kept until its body is sent or dropped.
#[must_use]
pub fn hold(r: Response, held: impl Send + 'static) -> Response {
    r.map(|inner| {
        Body::new(Holding {
            inner,
            pending: Bytes::new(),
            held: Some(Box::new(held)),
        })
    })
}

/// A computed body (a cframe, a chunk, a slice): `Accept-Ranges: none`, the dataset's
/// validators when given.
#[must_use]
pub fn computed(
    app: &App,
    bytes: impl Into<Bytes>,
    content_type: &'static str,
    ds: Option<&Dataset>,
) -> Response {
    let bytes: Bytes = bytes.into();
    app.metrics
        .body_bytes
        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
    let mut r = (StatusCode::OK, bytes).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("none"));
    if let Some(ds) = ds {
        validators(h, ds);
    }
    r
}

/// [`computed`] for an answer made under `charge` (its memory budget): the charge is settled
/// to the body's size and held until the body is sent or dropped.
#[must_use]
pub fn charged(
    app: &App,
    bytes: Vec<u8>,
    mut charge: Charge,
    content_type: &'static str,
    ds: Option<&Dataset>,
) -> Response {
    charge.settle(bytes.len() as u64);
    hold(computed(app, bytes, content_type, ds), charge)
}

/// 416 for a `Range` on a computed body, before any work.
///
/// # Errors
/// When the request has a `Range` header.
pub fn refuse_range(headers: &HeaderMap) -> Result<(), ApiError> {
    if headers.contains_key(header::RANGE) {
        return Err(ApiError::range(
            "ranges are served on stored files only; this answer is computed",
            None,
        ));
    }
    Ok(())
}
