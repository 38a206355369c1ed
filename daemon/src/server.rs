//! The HTTP server: routes, the guard every request passes (size limits, deadline,
//! counters), the accept loop (connection limit, optional TLS, HTTP/1.1 and HTTP/2) and the
//! graceful shutdown on SIGTERM/SIGINT, which stops accepting and lets requests in flight
//! finish.

use crate::app::App;
use crate::caterva;
use crate::conn;
use crate::error::ApiError;
use crate::metrics::{route_index, Refusal};
use crate::native;
use crate::work::deadline_error;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

/// Caterva2's routes that write, administer users or log in (all refused).
const WRITE_ROUTES: [&str; 17] = [
    "upload",
    "load_from_url",
    "append",
    "publish",
    "unfold",
    "remove",
    "addnotebook",
    "move",
    "copy",
    "lazyexpr",
    "upload_lazyarr",
    "adduser",
    "deluser",
    "listusers",
    "preview",
    "peer",
    "service-worker-heartbeat",
];

/// How long requests in flight may take to finish after a shutdown signal.
pub const GRACE: Duration = Duration::from_secs(30);

/// The route label of `path` for the counters.
#[must_use]
pub fn route_of(path: &str) -> &'static str {
    const PREFIXES: [(&str, &str); 14] = [
        ("/api/list/", "/api/list"),
        ("/api/info/", "/api/info"),
        ("/api/fetch/", "/api/fetch"),
        ("/api/chunk/", "/api/chunk"),
        ("/api/download/", "/api/download"),
        ("/v1/meta/", "/v1/meta"),
        ("/v1/index/", "/v1/index"),
        ("/v1/raw/", "/v1/raw"),
        ("/v1/chunk/", "/v1/chunk"),
        ("/v1/chunks/", "/v1/chunks"),
        ("/v1/slice/", "/v1/slice"),
        ("/auth/", "/auth"),
        ("/healthz", "/healthz"),
        ("/metrics", "/metrics"),
    ];
    if path == "/api/roots" {
        return "/api/roots";
    }
    PREFIXES
        .iter()
        .find(|(p, _)| path.starts_with(p))
        .map_or("other", |(_, r)| r)
}

/// Every request passes here: URI and header sizes (414, 431), the deadline (503), and the
/// counters.
async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = route_index(route_of(req.uri().path()));
    let limits = &app.config.limits;
    let uri_len = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    let header_len: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    let resp = if uri_len > limits.uri_bytes {
        ApiError::new(
            StatusCode::URI_TOO_LONG,
            format!("the request target exceeds {} bytes", limits.uri_bytes),
        )
        .into_response()
    } else if header_len > limits.header_bytes {
        ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("the request headers exceed {} bytes", limits.header_bytes),
        )
        .into_response()
    } else {
        let mut held = app.metrics.admit();
        let r = match tokio::time::timeout(limits.request_timeout, next.run(req)).await {
            Ok(r) => r,
            Err(_) => {
                app.metrics.refuse(Refusal::Deadline);
                deadline_error().into_response()
            }
        };
        held.answered();
        // In flight until the body is sent.
        crate::serve::hold(r, held)
    };
    app.metrics
        .observe(route, resp.status().as_u16(), start.elapsed());
    resp
}

async fn healthz() -> Response {
    let mut r = (StatusCode::OK, "ok\n").into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    r
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let q = app.metrics.queued.load(Ordering::Relaxed);
    let c = app.cache.stats();
    let k = app.chunks.stats();
    let extra = [
        (
            "stratad_pool_workers",
            "Worker threads of the pool.",
            app.work.runtime().workers() as u64,
        ),
        (
            "stratad_open_datasets",
            "Open dataset handles kept.",
            app.handles.len() as u64,
        ),
        (
            "stratad_queue_capacity",
            "Requests the work queue admits at once.",
            app.config.limits.queue as u64,
        ),
        ("stratad_queue_tasks", "Requests admitted now.", q),
        (
            "stratad_cache_hits_total",
            "Blocks read from the block cache.",
            c.hits,
        ),
        (
            "stratad_cache_misses_total",
            "Blocks decompressed into the block cache.",
            c.misses,
        ),
        (
            "stratad_cache_coalesced_total",
            "Hits that waited for another reader's load.",
            c.coalesced,
        ),
        (
            "stratad_cache_inserts_total",
            "Blocks stored in the block cache.",
            c.inserts,
        ),
        (
            "stratad_cache_evictions_total",
            "Blocks evicted from the block cache.",
            c.evictions,
        ),
        (
            "stratad_cache_bytes",
            "Bytes held by the block cache.",
            c.bytes,
        ),
        (
            "stratad_cache_entries",
            "Blocks held by the block cache.",
            c.entries,
        ),
        (
            "stratad_cache_capacity_bytes",
            "The block cache's byte bound.",
            c.capacity,
        ),
        (
            "stratad_answer_bytes",
            "Bytes of computed answers held (made or being sent).",
            app.budget.used(),
        ),
        (
            "stratad_answer_bytes_peak",
            "The most bytes of computed answers held at once since start.",
            app.budget.peak(),
        ),
        (
            "stratad_answer_budget_bytes",
            "The memory budget of computed answers.",
            app.budget.capacity(),
        ),
        (
            "stratad_chunk_cache_hits_total",
            "Stored chunks sent from the stored-chunk cache.",
            k.hits,
        ),
        (
            "stratad_chunk_cache_misses_total",
            "Stored chunks read from their files.",
            k.misses,
        ),
        (
            "stratad_chunk_cache_evictions_total",
            "Stored chunks evicted from the stored-chunk cache.",
            k.evictions,
        ),
        (
            "stratad_chunk_cache_bytes",
            "Bytes held by the stored-chunk cache.",
            k.bytes,
        ),
        (
            "stratad_chunk_cache_capacity_bytes",
            "The stored-chunk cache's byte bound.",
            k.capacity,
        ),
    ];
    let mut r = (StatusCode::OK, app.metrics.render(&extra)).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

async fn not_found() -> ApiError {
    ApiError::not_found()
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::internal("a request handler panicked").into_response()
}

/// The routes.
pub fn router(app: Arc<App>) -> Router {
    let mut r = Router::new()
        .route("/api/roots", get(caterva::roots))
        .route("/api/list/{*path}", get(caterva::list))
        .route("/api/info/{*path}", get(caterva::info))
        .route(
            "/api/fetch/{*path}",
            get(caterva::fetch).post(caterva::fetch_post),
        )
        .route("/api/chunk/{*path}", get(caterva::chunk))
        .route("/api/download/{*path}", get(caterva::download))
        .route("/v1/meta/{*path}", get(native::meta))
        .route("/v1/index/{*path}", get(native::index))
        .route("/v1/raw/{*path}", get(native::raw))
        .route("/v1/chunk/{*path}", get(native::chunk))
        .route("/v1/chunks/{*path}", post(native::chunks))
        .route("/v1/slice/{*path}", get(native::slice))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/auth/{*rest}", any(caterva::read_only));
    for name in WRITE_ROUTES {
        r = r
            .route(&format!("/api/{name}/"), any(caterva::read_only))
            .route(&format!("/api/{name}/{{*path}}"), any(caterva::read_only));
    }
    r.fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(TraceLayer::new_for_http())
        .with_state(app)
}

/// The TLS acceptor for the PEM certificate chain `cert` and private key `key`.
///
/// # Errors
/// A message for unreadable or invalid files.
pub fn tls_acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("TLS: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The answer written to a connection over the limit, before closing it.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 48\r\n\r\n{\"detail\":\"too many connections; retry shortly\"}";

/// Serves `app` on `listener` until `shutdown` resolves, then lets the requests in flight
/// finish (up to [`GRACE`]).
pub async fn serve(
    app: Arc<App>,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) {
    let svc = TowerToHyperService::new(router(Arc::clone(&app)));
    let limits = app.config.limits.clone();
    // HTTP/1.1 only: see `conn`.
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size((limits.uri_bytes + limits.header_bytes + 16384).max(8192));
    let graceful = GracefulShutdown::new();
    let conns = Arc::new(Semaphore::new(limits.connections.max(1)));
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = Arc::clone(&conns).try_acquire_owned() else {
            app.metrics.refuse(Refusal::Connections);
            let plain = tls.is_none();
            tokio::spawn(async move {
                let mut stream = stream;
                if plain {
                    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(REFUSED))
                        .await;
                }
                let _ = stream.shutdown().await;
            });
            continue;
        };
        let _ = stream.set_nodelay(true);
        conn::bound_unsent(&stream);
        let (svc, builder, watcher, metrics) = (
            svc.clone(),
            builder.clone(),
            graceful.watcher(),
            Arc::clone(&app.metrics),
        );
        let tls = tls.clone();
        let hrt = limits.header_read_timeout;
        // A client that takes none of an answer for `send_timeout` loses its connection, so
        // clients that stop reading cannot hold the connection slots.
        let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
        stream.set_write_timeout(Some(limits.send_timeout));
        let stream = Box::pin(stream);
        metrics.connections.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            // A client that sends no byte of a request head within `hrt` (after the TLS
            // handshake, which has the same deadline) is dropped: see `conn`.
            let done = match tls {
                None => match conn::first_byte(stream, hrt).await {
                    Some(s) => {
                        let conn = builder.serve_connection(TokioIo::new(s), svc);
                        watcher.watch(conn).await
                    }
                    None => Ok(()),
                },
                Some(acc) => match tokio::time::timeout(hrt, acc.accept(stream)).await {
                    Ok(Ok(s)) => match conn::first_byte(s, hrt).await {
                        Some(s) => {
                            let conn = builder.serve_connection(TokioIo::new(s), svc);
                            watcher.watch(conn).await
                        }
                        None => Ok(()),
                    },
                    _ => Ok(()),
                },
            };
            if let Err(e) = done {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
            metrics.connections.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
        });
    }
    drop(listener);
    tracing::info!("shutting down: no new connections; waiting for requests in flight");
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections closed"),
        () = tokio::time::sleep(GRACE) => tracing::warn!("requests still running after the grace period"),
    }
}

/// Resolves on SIGTERM or SIGINT.
pub async fn signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM"),
        _ = int.recv() => tracing::info!("SIGINT"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_labels() {
        assert_eq!(route_of("/api/roots"), "/api/roots");
        assert_eq!(route_of("/api/fetch/@public/a.b2nd"), "/api/fetch");
        assert_eq!(route_of("/v1/chunks/x"), "/v1/chunks");
        assert_eq!(route_of("/v1/chunk/x/3"), "/v1/chunk");
        assert_eq!(route_of("/etc/passwd"), "other");
        assert_eq!(
            REFUSED.len() - REFUSED.windows(4).position(|w| w == b"\r\n\r\n").unwrap() - 4,
            48
        );
    }
}
