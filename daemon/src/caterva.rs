//! The Caterva2-compatible read API under `/api`, so that `caterva2.Client`,
//! `blosc2.C2Array` and `blosc2.Proxy` work unmodified: roots, recursive listings, metadata,
//! fetch (stored file with ranges, or slices, `indices` and fields as b2nd cframes), stored
//! chunks and downloads. Writes, logins and filters are refused with a `{"detail"}` answer.

use crate::app::{App, Target};
use crate::dataset::{iso, Body, Dataset, Query};
use crate::error::ApiError;
use crate::fsroot::Node;
use crate::parse::{self, IndexEntry, KeyItem};
use crate::select;
use crate::serve::{self, Offer};
use crate::work::Permit;
use axum::body::Body as HttpBody;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// The part of the request path after `prefix` (still encoded).
pub fn rest<'a>(req: &'a Request, prefix: &str) -> &'a str {
    req.uri().path().strip_prefix(prefix).unwrap_or("")
}

/// The query's `key=value` pairs, decoded (`+` is a space).
#[must_use]
pub fn query(req: &Request) -> Vec<(String, String)> {
    form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param<'a>(q: &'a [(String, String)], name: &str) -> Option<&'a str> {
    q.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn json_response(v: &Value, etag: Option<&str>) -> Response {
    json_text(v.to_string().into(), etag)
}

fn json_text(text: bytes::Bytes, etag: Option<&str>) -> Response {
    let mut r = (StatusCode::OK, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(Ok(e)) = etag.map(HeaderValue::from_str) {
        r.headers_mut().insert(header::ETAG, e);
    }
    r
}

/// `GET /api/roots`: the roots the caller may read.
pub(crate) async fn roots(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let caller = app.caller(req.headers())?;
    let mut m = Map::new();
    for r in app.roots.iter().filter(|r| app.may_read(&caller, r)) {
        m.insert(r.name.clone(), json!({ "name": r.name }));
    }
    Ok(json_response(&Value::Object(m), None))
}

fn target(
    app: &Arc<App>,
    req: &Request,
    prefix: &str,
) -> Result<(crate::auth::Caller, Target), ApiError> {
    let caller = app.caller(req.headers())?;
    let t = app.target(rest(req, prefix), &caller)?;
    Ok((caller, t))
}

/// `GET /api/list/{path}`: the datasets under a directory, recursively, relative to it and
/// sorted; a dataset lists as its own name.
pub(crate) async fn list(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let (_, t) = target(&app, &req, "/api/list/")?;
    let permit = app.work.permit();
    let a = Arc::clone(&app);
    let max = app.config.limits.list_entries;
    let names = permit
        .run(app.deadline(start), move || {
            a.roots[t.root]
                .list(&t.node, &t.name, max)
                .map(|(names, _)| names)
                .map_err(list_error)
        })
        .await?;
    Ok(json_response(&json!(names), None))
}

fn list_error(e: crate::fsroot::FsError) -> ApiError {
    match e {
        crate::fsroot::FsError::NotFound => ApiError::not_found(),
        crate::fsroot::FsError::TooLarge => ApiError::too_large("the listing has too many entries"),
        crate::fsroot::FsError::Io(m) => ApiError::internal(m),
    }
}

/// `GET /api/info/{path}`: a dataset's metadata (with its ETag), or a directory's summary.
pub(crate) async fn info(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let (_, t) = target(&app, &req, "/api/info/")?;
    let permit = app.work.permit();
    if let Node::Dir { id, .. } = &t.node {
        let mtime = iso(crate::fsroot::mtime(id));
        let a = Arc::clone(&app);
        let max = app.config.limits.list_entries;
        let (names, size) = permit
            .run(app.deadline(start), move || {
                a.roots[t.root]
                    .list(&t.node, &t.name, max)
                    .map_err(list_error)
            })
            .await?;
        let v = json!({"kind": "group", "mtime": mtime, "size": size, "nfiles": names.len()});
        return Ok(json_response(&v, None));
    }
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    if serve::not_modified(req.headers(), &ds.etag) {
        return Ok(serve::response_304(&ds));
    }
    Ok(json_text(
        ds.caterva_info_text(app.nthreads()),
        Some(&ds.etag),
    ))
}

/// A fetch's parameters, from the query or a POST body.
#[derive(Debug, Default)]
struct FetchParams {
    slice: Option<String>,
    indices: Option<String>,
    field: Option<String>,
    filter: Option<String>,
}

impl FetchParams {
    fn from_query(q: &[(String, String)]) -> FetchParams {
        FetchParams {
            slice: param(q, "slice_").map(str::to_owned),
            indices: param(q, "indices").map(str::to_owned),
            field: param(q, "field").map(str::to_owned),
            filter: param(q, "filter").map(str::to_owned),
        }
    }

    fn from_body(body: &[u8]) -> Result<FetchParams, ApiError> {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::unprocessable(format!("the body is not JSON: {e}")))?;
        let Value::Object(m) = v else {
            return Err(ApiError::unprocessable("the body must be a JSON object"));
        };
        let mut p = FetchParams::default();
        for (k, v) in m {
            let text = match v {
                Value::Null => None,
                Value::String(s) => Some(s),
                other if k == "indices" => Some(other.to_string()),
                _ => return Err(ApiError::unprocessable(format!("{k} must be a string"))),
            };
            match k.as_str() {
                "slice_" => p.slice = text,
                "indices" => p.indices = text,
                "field" => p.field = text,
                "filter" => p.filter = text,
                other => {
                    return Err(ApiError::unprocessable(format!(
                        "unknown parameter {other:?}"
                    )))
                }
            }
        }
        Ok(p)
    }

    /// The computed query, or `None` for the whole dataset as stored.
    fn query(&self, ds: &Dataset, max_coords: usize) -> Result<Option<Query>, ApiError> {
        if self.filter.as_deref().is_some_and(|f| !f.trim().is_empty()) {
            return Err(ApiError::bad_request("filter is not supported"));
        }
        let field = self.field.clone().filter(|f| !f.is_empty());
        if let Some(ix) = &self.indices {
            if self.slice.as_deref().is_some_and(|s| !s.trim().is_empty()) || field.is_some() {
                return Err(ApiError::bad_request(
                    "indices cannot be combined with slice_, filter or field",
                ));
            }
            let entries: Vec<IndexEntry> =
                parse::indices(ix, max_coords).map_err(|(many, m)| {
                    if many {
                        ApiError::too_large(m)
                    } else {
                        ApiError::bad_request(m)
                    }
                })?;
            return Ok(Some(Query {
                indices: Some(entries),
                ..Query::default()
            }));
        }
        let key = parse::key(self.slice.as_deref().unwrap_or("")).map_err(ApiError::bad_request)?;
        if field.is_none() && whole(ds, &key)? {
            return Ok(None);
        }
        Ok(Some(Query {
            key,
            indices: None,
            field,
        }))
    }
}

/// Whether `key` asks for the whole dataset in order (answered with the stored file).
fn whole(ds: &Dataset, key: &[KeyItem]) -> Result<bool, ApiError> {
    match &ds.body {
        Body::Array(a) => Ok(select::basic(key, a.shape())
            .map_err(ApiError::bad_request)?
            .whole),
        Body::Frame(s) => {
            let items = s.nbytes() / s.typesize().max(1) as u64;
            Ok(match key {
                [] => true,
                [KeyItem::Slice { start, stop, step }] => {
                    matches!(start, None | Some(0))
                        && stop.is_none_or(|e| e >= 0 && e as u64 >= items)
                        && matches!(step, None | Some(1))
                }
                _ => false,
            })
        }
    }
}

/// A sparse dataset's whole contents, which have no stored file to send: one contiguous
/// frame built on the work pool and charged to the answer budget (a `Range` refused first).
async fn sparse_cframe(
    app: &Arc<App>,
    ds: &Arc<Dataset>,
    req_headers: &HeaderMap,
    permit: Permit,
    start: Instant,
) -> Result<Response, ApiError> {
    serve::refuse_range(req_headers)?;
    let (d, charge) = (Arc::clone(ds), app.budget.charge());
    let (bytes, charge) = permit
        .run(app.deadline(start), move || {
            let mut charge = charge;
            Ok((d.cframe(&mut charge)?, charge))
        })
        .await?;
    Ok(serve::charged(
        app,
        bytes,
        charge,
        "application/octet-stream",
        Some(ds),
    ))
}

async fn fetch_with(
    app: Arc<App>,
    req_headers: &HeaderMap,
    t: Target,
    p: FetchParams,
    start: Instant,
    allow_ranges: bool,
) -> Result<Response, ApiError> {
    let permit = app.work.permit();
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    match p.query(&ds, app.config.limits.indices)? {
        None if !ds.is_sparse() => {
            serve::stored(
                &app,
                &ds,
                req_headers,
                Offer {
                    ranges: allow_ranges,
                    attachment: true,
                },
                permit,
            )
            .await
        }
        None => sparse_cframe(&app, &ds, req_headers, permit, start).await,
        Some(q) => {
            serve::refuse_range(req_headers)?;
            let (d, charge) = (Arc::clone(&ds), app.budget.charge());
            let limit = app.config.limits.slice_bytes;
            let (bytes, charge) = permit
                .run(app.deadline(start), move || {
                    let mut charge = charge;
                    Ok((d.fetch(&q, limit, &mut charge)?, charge))
                })
                .await?;
            Ok(serve::charged(
                &app,
                bytes,
                charge,
                "application/octet-stream",
                Some(&ds),
            ))
        }
    }
}

/// `GET /api/fetch/{path}`: the stored file (with ranges) for a whole request, else a cframe
/// of the selection.
pub(crate) async fn fetch(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let (_, t) = target(&app, &req, "/api/fetch/")?;
    let p = FetchParams::from_query(&query(&req));
    fetch_with(app, req.headers(), t, p, start, true).await
}

/// `POST /api/fetch/{path}`: the same, parameters in a JSON body (never ranged).
pub(crate) async fn fetch_post(
    State(app): State<Arc<App>>,
    req: Request,
) -> Result<Response, ApiError> {
    let start = Instant::now();
    let (_, t) = target(&app, &req, "/api/fetch/")?;
    let headers = req.headers().clone();
    let limit = app.config.limits.body_bytes;
    let body = read_body(req.into_body(), limit).await?;
    let p = FetchParams::from_body(&body)?;
    serve::refuse_range(&headers)?;
    fetch_with(app, &headers, t, p, start, false).await
}

/// The request body, at most `limit` bytes.
///
/// # Errors
/// 413 past `limit` (at once, before any of it is read, when its `Content-Length` says so:
/// no `100 Continue` is sent for it); 400 when the body cannot be read.
pub(crate) async fn read_body(body: HttpBody, limit: usize) -> Result<bytes::Bytes, ApiError> {
    use http_body::Body as _;
    use http_body_util::BodyExt;
    let too_large = || ApiError::too_large(format!("the request body exceeds {limit} bytes"));
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    let limited = http_body_util::Limited::new(body, limit);
    match limited.collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(too_large())
        }
        Err(_) => Err(ApiError::bad_request("the request body could not be read")),
    }
}

/// `GET /api/chunk/{path}?nchunk=N`: stored chunk N, byte for byte.
pub(crate) async fn chunk(State(app): State<Arc<App>>, req: Request) -> Result<Response, ApiError> {
    let start = Instant::now();
    let (_, t) = target(&app, &req, "/api/chunk/")?;
    let q = query(&req);
    let n = match param(&q, "nchunk") {
        None => {
            return Err(ApiError::unprocessable(
                "the query parameter nchunk is required",
            ))
        }
        Some(v) => parse::nchunk(v).map_err(ApiError::unprocessable)?,
    };
    serve::refuse_range(req.headers())?;
    let (ds, bytes) = app.stored_chunk(t, n, start).await?;
    Ok(serve::computed(
        &app,
        bytes,
        "application/octet-stream",
        Some(&ds),
    ))
}

/// `GET /api/download/{path}`: the stored file as an attachment (no ranges, as Caterva2).
pub(crate) async fn download(
    State(app): State<Arc<App>>,
    req: Request,
) -> Result<Response, ApiError> {
    let start = Instant::now();
    let (_, t) = target(&app, &req, "/api/download/")?;
    let permit = app.work.permit();
    let ds = app.dataset(t, &permit, app.deadline(start)).await?;
    if ds.is_sparse() {
        let mut r = sparse_cframe(&app, &ds, req.headers(), permit, start).await?;
        r.headers_mut()
            .insert(header::CONTENT_DISPOSITION, serve::attachment(&ds.name));
        return Ok(r);
    }
    serve::stored(
        &app,
        &ds,
        req.headers(),
        Offer {
            ranges: false,
            attachment: true,
        },
        permit,
    )
    .await
}

/// Caterva2's write, admin and log-in routes: this server is read-only.
pub(crate) async fn read_only() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "this server is read-only: uploads, writes, user administration and log-in are not supported",
    )
}
