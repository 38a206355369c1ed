//! Byte ranges on the wire: reads coalesced into spans, the spans grouped into requests,
//! the `Range` header that asks for them, and the answers' bytes (a single part with its
//! `Content-Range`, a `multipart/byteranges` body, or a whole body from byte 0) delivered
//! into the readers' buffers.
//!
//! Format: RFC 9110 §14 (range requests) and §14.6 (`multipart/byteranges`).

use std::io::{BufRead, Read};
use std::ops::Range;

/// A read of one object: `buf.len()` bytes at `pos`.
pub(super) struct Target<'a> {
    pub pos: u64,
    pub buf: &'a mut [u8],
}

impl Target<'_> {
    fn end(&self) -> u64 {
        self.pos + self.buf.len() as u64
    }
}

/// A span of an object asked for in one range: bytes `start..end`, holding targets
/// `targets` (indices into the targets sorted by position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Span {
    pub start: u64,
    pub end: u64,
    pub targets: Range<usize>,
}

/// Sorts `targets` by position and coalesces them into spans: targets that overlap, touch
/// or lie at most `gap` bytes apart share a span (the gap's bytes are fetched and dropped).
/// Empty targets take no span.
pub(super) fn coalesce(targets: &mut [Target<'_>], gap: u64) -> Vec<Span> {
    targets.sort_by_key(|t| (t.pos, t.buf.len()));
    let mut spans: Vec<Span> = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        if t.buf.is_empty() {
            continue;
        }
        match spans.last_mut() {
            Some(s) if t.pos <= s.end.saturating_add(gap) => {
                s.end = s.end.max(t.end());
                s.targets.end = i + 1;
            }
            _ => spans.push(Span {
                start: t.pos,
                end: t.end(),
                targets: i..i + 1,
            }),
        }
    }
    spans
}

/// Merges the closest spans until at most `most` are left (the bytes between them fetched
/// and dropped): what a server that answers one range per request gets when a read would
/// take too many requests, down to one span over everything (whole chunks) at worst.
pub(super) fn merge_to(mut spans: Vec<Span>, most: usize) -> Vec<Span> {
    let most = most.max(1);
    while spans.len() > most {
        let (k, _) = spans
            .windows(2)
            .enumerate()
            .map(|(k, w)| (k, w[1].start - w[0].end))
            .min_by_key(|&(_, gap)| gap)
            .unwrap_or((0, 0));
        let next = spans.remove(k + 1);
        let s = &mut spans[k];
        s.end = s.end.max(next.end);
        s.targets.end = next.targets.end;
    }
    spans
}

/// The `Range` header value asking for `spans` (`bytes=a-b,c-d`, inclusive ends).
pub(super) fn range_header(spans: &[Span]) -> String {
    let mut h = String::from("bytes=");
    for (k, s) in spans.iter().enumerate() {
        if k > 0 {
            h.push(',');
        }
        h.push_str(&format!("{}-{}", s.start, s.end - 1));
    }
    h
}

/// A parsed `Content-Range`: the bytes sent (`None` for `bytes */len`) and the full length
/// (`None` for `*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ContentRange {
    pub range: Option<Range<u64>>,
    pub total: Option<u64>,
}

/// Parses a `Content-Range` value: `bytes a-b/len`, `bytes a-b/*` or `bytes */len`.
pub(super) fn parse_content_range(v: &str) -> Option<ContentRange> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse::<u64>().ok()?),
    };
    let range = match range.trim() {
        "*" => None,
        r => {
            let (a, b) = r.split_once('-')?;
            let (a, b) = (a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?);
            if b < a || total.is_some_and(|t| b >= t) {
                return None;
            }
            Some(a..b.checked_add(1)?)
        }
    };
    Some(ContentRange { range, total })
}

/// The boundary of a `multipart/byteranges` content type, or `None` for another type.
pub(super) fn multipart_boundary(content_type: &str) -> Option<String> {
    let mut parts = content_type.split(';');
    let kind = parts.next()?.trim();
    if !kind.eq_ignore_ascii_case("multipart/byteranges") {
        return None;
    }
    parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| v.trim().trim_matches('"').to_string())
            .filter(|b| !b.is_empty() && b.len() <= 200)
    })
}

/// Why the bytes of an answer could not be delivered.
#[derive(Debug)]
pub(super) enum BodyError {
    /// The connection failed or ended early: worth asking again.
    Io(std::io::Error),
    /// The answer is malformed or not what was asked for.
    Bad(String),
}

impl From<std::io::Error> for BodyError {
    fn from(e: std::io::Error) -> Self {
        BodyError::Io(e)
    }
}

/// Delivers an answer's bytes into the targets of some spans and records which bytes of
/// those spans arrived.
pub(super) struct Sink<'t, 'a> {
    targets: &'t mut [Target<'a>],
    spans: &'t [Span],
    /// The byte ranges received, in arrival order.
    got: Vec<Range<u64>>,
    /// File bytes read off the wire (payload, not multipart framing).
    pub moved: u64,
    /// Most payload bytes this answer may carry before it is refused.
    limit: u64,
}

/// Bytes read at once from a body.
const PIECE: usize = 64 << 10;

impl<'t, 'a> Sink<'t, 'a> {
    pub fn new(targets: &'t mut [Target<'a>], spans: &'t [Span]) -> Self {
        let asked: u64 = spans.iter().map(|s| s.end - s.start).sum();
        let last = spans.iter().map(|s| s.end).max().unwrap_or(0);
        Sink {
            targets,
            spans,
            got: Vec::new(),
            moved: 0,
            limit: asked.max(last) + asked + (1 << 20),
        }
    }

    /// Copies `data`, the object's bytes at `pos`, into every target it overlaps.
    fn deliver(&mut self, pos: u64, data: &[u8]) {
        let end = pos + data.len() as u64;
        let first = self.spans.partition_point(|s| s.end <= pos);
        for s in &self.spans[first..] {
            if s.start >= end {
                break;
            }
            for t in &mut self.targets[s.targets.clone()] {
                let (a, b) = (pos.max(t.pos), end.min(t.end()));
                if a < b {
                    let src = &data[(a - pos) as usize..(b - pos) as usize];
                    t.buf[(a - t.pos) as usize..(b - t.pos) as usize].copy_from_slice(src);
                }
            }
        }
        if let Some(last) = self.got.last_mut().filter(|g| g.end == pos) {
            last.end = end;
        } else {
            self.got.push(pos..end);
        }
    }

    /// Reads `len` bytes of the object at `pos` from `body` and delivers them.
    pub fn read_part(&mut self, body: &mut dyn Read, pos: u64, len: u64) -> Result<(), BodyError> {
        let mut buf = vec![0u8; PIECE.min(len as usize)];
        let mut at = pos;
        let end = pos + len;
        while at < end {
            let want = buf.len().min((end - at) as usize);
            let n = match body.read(&mut buf[..want]) {
                Ok(0) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("the body ended after {} of {len} bytes", at - pos),
                    )
                    .into())
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            self.moved += n as u64;
            if self.moved > self.limit {
                return Err(BodyError::Bad(format!(
                    "the answer carries more than the {} bytes asked for",
                    self.limit
                )));
            }
            self.deliver(at, &buf[..n]);
            at += n as u64;
        }
        Ok(())
    }

    /// Reads a whole object's body from byte 0 (a server that ignored the ranges), keeping
    /// the spans' bytes, and stops after the last byte any span needs; `len` is the body's
    /// length when known.
    pub fn read_from_start(
        &mut self,
        body: &mut dyn Read,
        len: Option<u64>,
    ) -> Result<(), BodyError> {
        let last = self.spans.iter().map(|s| s.end).max().unwrap_or(0);
        let want = len.map_or(last, |l| l.min(last));
        let mut skip = vec![0u8; PIECE];
        let mut at = 0u64;
        // Skip to the first span, then read each span (and the bytes between).
        for s in self.spans {
            let start = s.start.min(want);
            while at < start {
                let n = skip.len().min((start - at) as usize);
                body.read_exact(&mut skip[..n]).map_err(BodyError::Io)?;
                self.moved += n as u64;
                at += n as u64;
            }
            let end = s.end.min(want);
            if at < end {
                self.read_part(body, at, end - at)?;
                at = end;
            }
        }
        Ok(())
    }

    /// Reads a `multipart/byteranges` body with `boundary`, delivering each part where its
    /// `Content-Range` says.
    pub fn read_multipart(
        &mut self,
        body: &mut dyn BufRead,
        boundary: &str,
    ) -> Result<(), BodyError> {
        let delimiter = format!("--{boundary}");
        let close = format!("--{boundary}--");
        let mut line = Vec::new();
        // Up to the first delimiter (a preamble is allowed, and ignored).
        loop {
            if !read_line(body, &mut line)? {
                return Err(BodyError::Bad("no part in the multipart answer".into()));
            }
            let l = trim_crlf(&line);
            if l == close.as_bytes() {
                return Ok(());
            }
            if l == delimiter.as_bytes() {
                break;
            }
        }
        loop {
            // The part's headers, then its bytes, then the next delimiter.
            let mut range = None;
            loop {
                if !read_line(body, &mut line)? {
                    return Err(ended());
                }
                let l = trim_crlf(&line);
                if l.is_empty() {
                    break;
                }
                let text = String::from_utf8_lossy(l);
                if let Some((k, v)) = text.split_once(':') {
                    if k.trim().eq_ignore_ascii_case("content-range") {
                        range = parse_content_range(v).and_then(|c| c.range);
                    }
                }
            }
            let range = range.ok_or_else(|| {
                BodyError::Bad("a part of the multipart answer has no Content-Range".into())
            })?;
            self.read_part(body, range.start, range.end - range.start)?;
            // CRLF, then the delimiter or the close delimiter.
            loop {
                if !read_line(body, &mut line)? {
                    return Err(ended());
                }
                let l = trim_crlf(&line);
                if l == close.as_bytes() {
                    return Ok(());
                }
                if l == delimiter.as_bytes() {
                    break;
                }
                if !l.is_empty() {
                    return Err(BodyError::Bad(
                        "bytes after a part of the multipart answer where its delimiter belongs"
                            .into(),
                    ));
                }
            }
        }
    }

    /// The first bytes of the spans that did not arrive, if any (a span's bytes past
    /// `len`, the object's length, are not expected).
    pub fn missing(&self, len: Option<u64>) -> Option<Range<u64>> {
        let mut got = self.got.clone();
        got.sort_by_key(|g| g.start);
        for s in self.spans {
            let end = len.map_or(s.end, |l| s.end.min(l));
            let mut at = s.start;
            for g in &got {
                if g.start <= at && g.end > at {
                    at = g.end;
                }
            }
            if at < end {
                return Some(at..end);
            }
        }
        None
    }
}

fn ended() -> BodyError {
    BodyError::Io(std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "the multipart answer ended before its close delimiter",
    ))
}

/// Longest header or delimiter line accepted in a multipart body.
const MAX_LINE: usize = 8 << 10;

/// Reads one line (up to and with its LF) into `line`; false at the end of the body.
fn read_line(body: &mut dyn BufRead, line: &mut Vec<u8>) -> Result<bool, BodyError> {
    line.clear();
    let n = body.take(MAX_LINE as u64 + 1).read_until(b'\n', line)?;
    if n > MAX_LINE {
        return Err(BodyError::Bad(
            "a line of the multipart answer is too long".into(),
        ));
    }
    Ok(n > 0)
}

fn trim_crlf(l: &[u8]) -> &[u8] {
    let l = l.strip_suffix(b"\n").unwrap_or(l);
    l.strip_suffix(b"\r").unwrap_or(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans_of(reqs: &[(u64, usize)], gap: u64) -> Vec<(u64, u64, Range<usize>)> {
        let mut bufs: Vec<Vec<u8>> = reqs.iter().map(|&(_, n)| vec![0; n]).collect();
        let mut targets: Vec<Target<'_>> = reqs
            .iter()
            .zip(&mut bufs)
            .map(|(&(pos, _), buf)| Target { pos, buf })
            .collect();
        coalesce(&mut targets, gap)
            .into_iter()
            .map(|s| (s.start, s.end, s.targets))
            .collect()
    }

    #[test]
    fn reads_coalesce_when_they_touch_overlap_or_lie_close() {
        let reqs = [
            (100, 10),
            (0, 10),
            (10, 5),
            (112, 4),
            (50, 0),
            (200, 10),
            (205, 2),
        ];
        assert_eq!(
            spans_of(&reqs, 0),
            [
                (0, 15, 0..2),
                (100, 110, 3..4),
                (112, 116, 4..5),
                (200, 210, 5..7)
            ]
        );
        assert_eq!(
            spans_of(&reqs, 2),
            [(0, 15, 0..2), (100, 116, 3..5), (200, 210, 5..7)]
        );
        // Merged down to two requests: the smallest gaps go first.
        let mut bufs = [vec![0u8; 10], vec![0; 10], vec![0; 10]];
        let [a, b, c] = &mut bufs;
        let mut t = [
            Target { pos: 0, buf: a },
            Target { pos: 30, buf: b },
            Target { pos: 1000, buf: c },
        ];
        let s = merge_to(coalesce(&mut t, 0), 2);
        assert_eq!(
            s,
            [
                Span {
                    start: 0,
                    end: 40,
                    targets: 0..2
                },
                Span {
                    start: 1000,
                    end: 1010,
                    targets: 2..3
                }
            ]
        );
        assert_eq!(range_header(&s), "bytes=0-39,1000-1009");
        assert_eq!(merge_to(s, 0).len(), 1);
    }

    #[test]
    fn content_ranges_parse_or_are_refused() {
        let cr = |s| parse_content_range(s);
        assert_eq!(
            cr("bytes 0-31/5271"),
            Some(ContentRange {
                range: Some(0..32),
                total: Some(5271)
            })
        );
        assert_eq!(
            cr("bytes 5-9/*"),
            Some(ContentRange {
                range: Some(5..10),
                total: None
            })
        );
        assert_eq!(
            cr("bytes */100"),
            Some(ContentRange {
                range: None,
                total: Some(100)
            })
        );
        for bad in [
            "bytes 9-5/100",
            "bytes 0-100/100",
            "items 0-1/2",
            "bytes 0-1",
            "bytes a-b/3",
        ] {
            assert_eq!(cr(bad), None, "{bad}");
        }
        assert_eq!(
            multipart_boundary("multipart/byteranges; boundary=\"3d6b6a416f9b5\""),
            Some("3d6b6a416f9b5".into())
        );
        assert_eq!(
            multipart_boundary("Multipart/Byteranges;boundary=x"),
            Some("x".into())
        );
        assert_eq!(multipart_boundary("application/octet-stream"), None);
        assert_eq!(multipart_boundary("multipart/byteranges"), None);
    }

    /// The object `0, 1, 2, …` (mod 251), and targets over it.
    fn object(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn multipart_answers_fill_the_targets_in_any_order() {
        let obj = object(5000);
        let mut a = vec![0u8; 100];
        let mut b = vec![0u8; 50];
        let mut c = vec![0u8; 10];
        let mut targets = vec![
            Target {
                pos: 4000,
                buf: &mut c,
            },
            Target {
                pos: 10,
                buf: &mut a,
            },
            Target {
                pos: 60,
                buf: &mut b,
            },
        ];
        let spans = coalesce(&mut targets, 0);
        assert_eq!(spans.len(), 2);
        // The server merged the first span with bytes before it and sent the parts in reverse.
        let mut body = Vec::new();
        body.extend_from_slice(b"preamble\r\n--XX\r\nContent-Type: application/octet-stream\r\n");
        body.extend_from_slice(b"Content-Range: bytes 4000-4009/5000\r\n\r\n");
        body.extend_from_slice(&obj[4000..4010]);
        body.extend_from_slice(b"\r\n--XX\r\ncontent-range: bytes 0-110/5000\r\n\r\n");
        body.extend_from_slice(&obj[0..111]);
        body.extend_from_slice(b"\r\n--XX--\r\n");
        let mut sink = Sink::new(&mut targets, &spans);
        sink.read_multipart(&mut &body[..], "XX").unwrap();
        assert_eq!(sink.missing(Some(5000)), None);
        assert_eq!(sink.moved, 121);
        drop(sink);
        assert_eq!(
            (&a[..], &b[..], &c[..]),
            (&obj[10..110], &obj[60..110], &obj[4000..4010])
        );

        // A body that stops inside a part, or lacks a part, or carries garbage.
        let mut t = vec![Target {
            pos: 10,
            buf: &mut a,
        }];
        let spans = coalesce(&mut t, 0);
        let cut = b"--XX\r\nContent-Range: bytes 10-109/5000\r\n\r\nshort";
        let mut sink = Sink::new(&mut t, &spans);
        let e = sink.read_multipart(&mut &cut[..], "XX").unwrap_err();
        assert!(
            matches!(e, BodyError::Io(ref e) if e.to_string().contains("after 5 of 100")),
            "{e:?}"
        );
        let none = b"--XX--\r\n";
        let mut sink = Sink::new(&mut t, &spans);
        sink.read_multipart(&mut &none[..], "XX").unwrap();
        assert_eq!(sink.missing(None), Some(10..110));
        let norange = b"--XX\r\nContent-Type: x\r\n\r\n";
        let mut sink = Sink::new(&mut t, &spans);
        assert!(matches!(
            sink.read_multipart(&mut &norange[..], "XX"),
            Err(BodyError::Bad(_))
        ));
    }

    #[test]
    fn a_whole_body_is_read_up_to_the_last_byte_needed() {
        let obj = object(100_000);
        let mut a = vec![0u8; 10];
        let mut b = vec![0u8; 20];
        let mut targets = vec![
            Target {
                pos: 70_000,
                buf: &mut a,
            },
            Target {
                pos: 5,
                buf: &mut b,
            },
        ];
        let spans = coalesce(&mut targets, 0);
        let mut sink = Sink::new(&mut targets, &spans);
        let mut body = &obj[..];
        sink.read_from_start(&mut body, Some(100_000)).unwrap();
        assert_eq!(sink.moved, 70_010);
        assert_eq!(sink.missing(None), None);
        drop(sink);
        assert_eq!(body.len(), 29_990, "the rest is left unread");
        assert_eq!((&a[..], &b[..]), (&obj[70_000..70_010], &obj[5..25]));
        // An object shorter than a span: the bytes past its end are not expected.
        let mut c = vec![0u8; 10];
        let mut t = vec![Target {
            pos: 99_995,
            buf: &mut c,
        }];
        let spans = coalesce(&mut t, 0);
        let mut sink = Sink::new(&mut t, &spans);
        sink.read_from_start(&mut &obj[..], Some(100_000)).unwrap();
        assert_eq!(sink.missing(Some(100_000)), None);
        assert_eq!(sink.missing(None), Some(100_000..100_005));
    }
}
