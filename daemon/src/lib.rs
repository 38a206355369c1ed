//! `stratad`, Strata's daemon: serves the Blosc2 datasets under its data roots to many
//! clients over HTTP, as a thin layer over the `strata` library.
//!
//! One process holds the pinned runtime (one worker per core), the codec registry and the
//! shared cache of decompressed blocks. The network side (tokio, hyper, axum) only moves
//! bytes; every read of a dataset runs on the runtime through a bounded work queue
//! ([`work`]), so fifty clients reading one grid never run more compute threads than cores.
//!
//! * [`caterva`]: the Caterva2-compatible read API (`/api/*`), for `caterva2.Client`,
//!   `blosc2.C2Array` and `blosc2.Proxy`.
//! * [`native`]: the native API (`/v1/*`): metadata, chunk index, raw frames with ranges and
//!   ETags, stored chunks, slices as raw bytes, `.npy` or b2nd.
//! * [`fsroot`]: the data roots, and the only way paths are resolved (`openat2` beneath the
//!   root, no symlinks by default, no FIFOs or devices).
//! * [`parse`] and [`select`]: the request grammars and NumPy's indexing rules.
//! * [`dataset`]: open datasets, their versions, the handle cache, what routes compute.
//! * [`serve`]: stored bytes with ranges, computed bodies.
//! * [`budget`]: the memory budget of computed answers.
//! * [`auth`]: bearer tokens; [`config`]: flags and TOML; [`metrics`]: `/metrics`;
//!   [`server`]: routes, limits, accept loop, TLS, graceful shutdown.

pub mod app;
pub mod auth;
pub mod budget;
pub mod caterva;
pub mod config;
pub mod conn;
pub mod dataset;
pub mod error;
pub mod fsroot;
pub mod metrics;
pub mod native;
pub mod parse;
pub mod select;
pub mod serve;
pub mod server;
pub mod work;

use app::App;
use config::Config;
use std::io::Write as _;
use std::sync::Arc;
use strata::scheduler::{Runtime, RuntimeConfig};

/// Runs the daemon with `config` until SIGTERM or SIGINT.
///
/// # Errors
/// A message when a root, the tokens file or the TLS files cannot be read, or the address
/// cannot be bound.
pub fn run(config: Config) -> Result<(), String> {
    let roots = config
        .roots
        .iter()
        .map(|r| fsroot::Root::open(&r.name, &r.path, r.public))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<&str> = config.roots.iter().map(|r| r.name.as_str()).collect();
    let tokens = config
        .tokens
        .as_deref()
        .map(|p| auth::Tokens::load(p, &names))
        .transpose()?;
    let tls = config
        .tls
        .as_ref()
        .map(|(c, k)| server::tls_acceptor(c, k))
        .transpose()?;
    let runtime = Runtime::configure_global(RuntimeConfig {
        workers: config.workers,
        ..RuntimeConfig::default()
    })
    .unwrap_or_else(|_| Runtime::global());
    // Entries the plugin search path names like libraries but that are none (directories,
    // FIFOs...) are never opened: said once, here.
    for (path, what) in strata::registry::Registry::global().skipped_plugin_entries() {
        tracing::warn!(path = %path.display(), what, "plugin search path: skipped, not a regular file");
    }
    let metrics = Arc::new(metrics::Metrics::default());
    let app = Arc::new(App {
        work: work::Work::new(
            Arc::clone(&runtime),
            config.limits.queue,
            Arc::clone(&metrics),
        ),
        budget: budget::Budget::new(config.limits.memory_budget, Arc::clone(&metrics)),
        handles: dataset::Handles::new(config.handles),
        cache: Arc::new(strata::cache::BlockCache::new(config.cache_bytes)),
        chunks: strata::cache::BlockCache::new(config.chunk_cache_bytes),
        roots,
        tokens,
        metrics,
        config,
    });
    let io = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(app.config.io_threads)
        .max_blocking_threads(1)
        .thread_name("stratad-io")
        .enable_all()
        .build()
        .map_err(|e| format!("the I/O runtime: {e}"))?;
    io.block_on(async move {
        let std_listener = std::net::TcpListener::bind(app.config.listen)
            .map_err(|e| format!("listen on {}: {e}", app.config.listen))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| e.to_string())?;
        let listener =
            tokio::net::TcpListener::from_std(std_listener).map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        tracing::info!(
            %addr,
            workers = runtime.workers(),
            pinned = runtime.pinned(),
            roots = ?app.roots.iter().map(|r| (&r.name, &r.path)).collect::<Vec<_>>(),
            auth = app.tokens.is_some(),
            "stratad ready"
        );
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "stratad listening on {scheme}://{addr}");
        let _ = out.flush();
        drop(out);
        server::serve(app, listener, tls, server::signal()).await;
        Ok(())
    })
}
