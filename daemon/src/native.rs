//! Strata's native API under `/v1`, for its own clients and generic HTTP tools: metadata,
//! the chunk index, the stored file (HEAD, Range, ETag, 304, If-Range), stored chunks one or
//! many at a time, and decompressed slices as raw bytes, `.npy` or a b2nd cframe.

use crate::app::App;
use crate::caterva::{query, read_body, rest};
use crate::dataset::{Body, Query};
use crate::error::ApiError;
use crate::parse;
use crate::select;
use crate::serve::{self, Offer};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;

fn ok_json(v: &serde_json::Value, etag: &str) -> Response {
    let mut r = (StatusCode::OK, v.to_string()).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(e) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, e);
    }
    r
}

/// `GET /v1/meta/{path}`.
pub(crate) async fn meta(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let caller = app.caller(req.headers())?;
    let t = app.target(rest(&req, "/v1/meta/"), &caller)?;
    let permit = app.work.permit();
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    if serve::not_modified(req.headers(), &ds.etag) {
        return Ok(serve::response_304(&ds));
    }
    Ok(ok_json(&ds.native_meta(app.nthreads()), &ds.etag))
}

/// `GET /v1/index/{path}`: `u64` chunk count, then per chunk `u64` offset in the stored file
/// and `u64` compressed length, little-endian; a chunk not stored (special, or in a sparse
/// frame's own file) has offset `u64::MAX` and length 0. `?fmt=json` gives the same as JSON.
pub(crate) async fn index(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let caller = app.caller(req.headers())?;
    let t = app.target(rest(&req, "/v1/index/"), &caller)?;
    let json = query(&req).iter().any(|(k, v)| k == "fmt" && v == "json");
    let permit = app.work.permit();
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    if serve::not_modified(req.headers(), &ds.etag) {
        return Ok(serve::response_304(&ds));
    }
    let d = Arc::clone(&ds);
    let mut charge = app.budget.charge();
    // The entries, then the answer made of them.
    charge.reserve(32 * ds.schunk().nchunks() as u64 + 8)?;
    let entries = permit
        .run(app.deadline(start), move || d.chunk_index())
        .await?;
    if json {
        let v: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| match e {
                Some((o, n)) => serde_json::json!([o, n]),
                None => serde_json::Value::Null,
            })
            .collect();
        return Ok(serve::hold(
            ok_json(&serde_json::json!(v), &ds.etag),
            charge,
        ));
    }
    let mut out = Vec::with_capacity(8 + entries.len() * 16);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for e in &entries {
        let (o, n) = e.unwrap_or((u64::MAX, 0));
        out.extend_from_slice(&o.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
    }
    drop(entries);
    Ok(serve::charged(
        &app,
        out,
        charge,
        "application/octet-stream",
        Some(&ds),
    ))
}

/// `GET`/`HEAD /v1/raw/{path}`: the stored file.
pub(crate) async fn raw(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let caller = app.caller(req.headers())?;
    let t = app.target(rest(&req, "/v1/raw/"), &caller)?;
    let permit = app.work.permit();
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    if ds.is_sparse() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "a sparse frame has no single stored file: read its chunks",
        ));
    }
    serve::stored(
        &app,
        &ds,
        req.headers(),
        Offer {
            ranges: true,
            attachment: false,
        },
        permit,
    )
    .await
}

fn chunk_response(
    app: &App,
    ds: &crate::dataset::Dataset,
    n: u64,
    bytes: bytes::Bytes,
) -> Response {
    let sizes = strata::format::chunk::ChunkHeader::parse(&bytes).ok();
    let mut r = serve::computed(app, bytes, "application/octet-stream", None);
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}/{n}\"", ds.etag.trim_matches('"'))) {
        h.insert(header::ETAG, v);
    }
    if let Some(c) = sizes {
        h.insert("x-chunk-nbytes", HeaderValue::from(c.nbytes));
        h.insert("x-chunk-cbytes", HeaderValue::from(c.cbytes));
        h.insert("x-chunk-blocksize", HeaderValue::from(c.blocksize));
    }
    r
}

/// `GET /v1/chunk/{path}/{n}`: stored chunk `n`.
pub(crate) async fn chunk(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let caller = app.caller(req.headers())?;
    let raw = rest(&req, "/v1/chunk/");
    let (path, n) = raw
        .rsplit_once('/')
        .ok_or_else(|| ApiError::bad_request("expected /v1/chunk/{path}/{n}"))?;
    let n = parse::nchunk(n).map_err(ApiError::bad_request)?;
    let t = app.target(path, &caller)?;
    serve::refuse_range(req.headers())?;
    let (ds, bytes) = app.stored_chunk(t, n, start).await?;
    Ok(chunk_response(&app, &ds, n, bytes))
}

/// `POST /v1/chunks/{path}` with a JSON list of chunk numbers: `u32` count, then per chunk
/// `u64` number, `u64` length and its stored bytes (little-endian).
pub(crate) async fn chunks(
    State(app): State<Arc<App>>,
    req: Request,
) -> Result<Response, ApiError> {
    let start = Instant::now();
    let caller = app.caller(req.headers())?;
    let t = app.target(rest(&req, "/v1/chunks/"), &caller)?;
    let limit = app.config.limits.body_bytes;
    let body = read_body(req.into_body(), limit).await?;
    let wanted: Vec<u64> = serde_json::from_slice(&body)
        .map_err(|_| ApiError::bad_request("the body must be a JSON list of chunk numbers"))?;
    let max = app.config.limits.chunks_per_request;
    if wanted.len() > max {
        return Err(ApiError::too_large(format!(
            "at most {max} chunks per request"
        )));
    }
    let permit = app.work.permit();
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    let (d, a, charge) = (Arc::clone(&ds), Arc::clone(&app), app.budget.charge());
    let cap = app.config.limits.slice_bytes;
    let (out, charge) = permit
        .run(app.deadline(start), move || {
            let mut charge = charge;
            let mut out = Vec::new();
            out.extend_from_slice(&(wanted.len() as u32).to_le_bytes());
            for n in wanted {
                let c = d.chunk(n, &a.chunks)?;
                if (out.len() + 16 + c.len()) as u64 > cap {
                    return Err(ApiError::too_large(format!(
                        "the chunks exceed {cap} bytes"
                    )));
                }
                charge.reserve(16 + c.len() as u64)?;
                out.extend_from_slice(&n.to_le_bytes());
                out.extend_from_slice(&(c.len() as u64).to_le_bytes());
                out.extend_from_slice(&c);
            }
            Ok((out, charge))
        })
        .await?;
    Ok(serve::charged(
        &app,
        out,
        charge,
        "application/octet-stream",
        Some(&ds),
    ))
}

/// Formats of `/v1/slice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fmt {
    Raw,
    Npy,
    B2nd,
}

/// A `.npy` (version 1.0) header for `shape` items of `descr`.
fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let descr = if descr.starts_with('[') {
        descr.to_owned()
    } else {
        format!("'{descr}'")
    };
    let shape = match shape {
        [] => "()".to_owned(),
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + length (2) + dict + '\n', padded to 64 bytes.
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// `GET /v1/slice/{path}?sel=…&fmt=raw|npy|b2nd`: a selection with NumPy's meaning
/// (`start:stop:step` per axis; an integer drops its axis), decompressed through the shared
/// block cache. `raw` is C-order bytes with `X-Shape` and `X-Dtype`.
pub(crate) async fn slice(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let caller = app.caller(req.headers())?;
    let t = app.target(rest(&req, "/v1/slice/"), &caller)?;
    let q = query(&req);
    let sel = q
        .iter()
        .rev()
        .find(|(k, _)| k == "sel")
        .map_or("", |(_, v)| v.as_str());
    let key = parse::key(sel).map_err(ApiError::bad_request)?;
    let fmt = match q
        .iter()
        .rev()
        .find(|(k, _)| k == "fmt")
        .map(|(_, v)| v.as_str())
    {
        None | Some("raw") => Fmt::Raw,
        Some("npy") => Fmt::Npy,
        Some("b2nd") => Fmt::B2nd,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "fmt {other:?}: expected raw, npy or b2nd"
            )))
        }
    };
    serve::refuse_range(req.headers())?;
    let permit = app.work.permit();
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    let Body::Array(a) = &ds.body else {
        return Err(ApiError::bad_request(
            "/v1/slice needs an N-dimensional array",
        ));
    };
    let b = select::basic(&key, a.shape()).map_err(ApiError::bad_request)?;
    let dtype = ds.dtype();
    let (d, charge) = (Arc::clone(&ds), app.budget.charge());
    let limit = app.config.limits.slice_bytes;
    let shape = b.shape.clone();
    let dt = dtype.clone();
    let (bytes, charge) = permit
        .run(app.deadline(start), move || {
            let mut charge = charge;
            let Body::Array(a) = &d.body else {
                return Err(ApiError::bad_request("not an array"));
            };
            let out = match fmt {
                Fmt::B2nd => d.fetch(
                    &Query {
                        key,
                        indices: None,
                        field: None,
                    },
                    limit,
                    &mut charge,
                )?,
                Fmt::Raw => d.read_basic(a, &b, limit, &mut charge, Vec::new())?,
                Fmt::Npy => d.read_basic(a, &b, limit, &mut charge, npy_header(&dt, &b.shape))?,
            };
            Ok((out, charge))
        })
        .await?;
    let ctype = match fmt {
        Fmt::Npy => "application/x-npy",
        _ => "application/octet-stream",
    };
    let mut r = serve::charged(&app, bytes, charge, ctype, Some(&ds));
    if fmt == Fmt::Raw {
        let h = r.headers_mut();
        let s = shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",");
        if let Ok(v) = HeaderValue::from_str(&s) {
            h.insert("x-shape", v);
        }
        if let Ok(v) = HeaderValue::from_str(&dtype) {
            h.insert("x-dtype", v);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_headers_are_aligned() {
        for (d, s) in [
            ("<f4", vec![3usize, 4]),
            ("|u1", vec![]),
            ("[('a', '<i4')]", vec![7]),
        ] {
            let h = npy_header(d, &s);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
            assert_eq!(h[h.len() - 1], b'\n');
        }
        let h = String::from_utf8(npy_header("<f4", &[3, 4])[10..].to_vec()).unwrap();
        assert!(h.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"));
    }
}
