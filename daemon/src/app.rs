//! The daemon's state and what every route does first: split the request path, find the
//! root, check the caller's right to it, resolve the path beneath it and get the dataset's
//! open handle.

use crate::auth::{token_of, Caller, Tokens};
use crate::budget::Budget;
use crate::config::Config;
use crate::dataset::{Dataset, Handles};
use crate::error::ApiError;
use crate::fsroot::{FsError, Node, Root};
use crate::metrics::Metrics;
use crate::parse::request_path;
use crate::work::{Permit, Work};
use axum::http::{header, HeaderMap, StatusCode};
use bytes::Bytes;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use strata::cache::BlockCache;

/// Everything the routes share.
#[derive(Debug)]
pub struct App {
    /// The configuration.
    pub config: Config,
    /// The data roots, in configuration order.
    pub roots: Vec<Root>,
    /// The tokens (`None`: no auth).
    pub tokens: Option<Tokens>,
    /// Open datasets.
    pub handles: Handles,
    /// The shared cache of decompressed blocks.
    pub cache: Arc<BlockCache>,
    /// Hot stored chunks (block 0 of each key: the chunk as stored), sent as they are kept.
    pub chunks: BlockCache,
    /// The work queue on the pool (admission per request).
    pub work: Work,
    /// The memory budget of computed answers.
    pub budget: Arc<Budget>,
    /// Counters.
    pub metrics: Arc<Metrics>,
}

/// A request path resolved beneath its root.
#[derive(Debug)]
pub struct Target {
    /// Index of the root in [`App::roots`].
    pub root: usize,
    /// `root/rel`, as the client named it (decoded).
    pub path: String,
    /// The path relative to the root (`""` for the root itself).
    pub rel: String,
    /// The last segment (the root's name for the root itself).
    pub name: String,
    /// What is there.
    pub node: Node,
}

impl App {
    /// The deadline of a request that arrived at `start`.
    #[must_use]
    pub fn deadline(&self, start: Instant) -> Instant {
        start + self.config.limits.request_timeout
    }

    /// Who sent the request.
    ///
    /// # Errors
    /// 401 for a malformed `Authorization` header, an unknown or an expired token.
    pub fn caller(&self, headers: &HeaderMap) -> Result<Caller, ApiError> {
        let Some(tokens) = &self.tokens else {
            return Ok(Caller::Anonymous);
        };
        let auth = headers
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or("\u{0}"));
        let cookies = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok());
        let token = token_of(auth, cookies)
            .map_err(|_| unauthorized("the Authorization header is not a bearer token"))?;
        match tokens.caller(token, SystemTime::now()) {
            Caller::Unknown => Err(unauthorized("the token is not valid")),
            Caller::Expired => Err(unauthorized("the token has expired")),
            c => Ok(c),
        }
    }

    /// Whether `caller` may read root `root`.
    #[must_use]
    pub fn may_read(&self, caller: &Caller, root: &Root) -> bool {
        if self.tokens.is_none() || root.public {
            return true;
        }
        matches!(caller, Caller::Token(g) if g.roots.contains(&root.name))
    }

    /// Resolves the request path `raw` (still percent-encoded) for `caller`.
    ///
    /// # Errors
    /// 400 for a refused path; 404 for an unknown root or anything not served; 401/403 for a
    /// root the caller may not read.
    pub fn target(&self, raw: &str, caller: &Caller) -> Result<Target, ApiError> {
        let segs = request_path(raw).map_err(|e| ApiError::bad_request(e.to_string()))?;
        let (root_name, rest) = segs.split_first().ok_or_else(ApiError::not_found)?;
        let (root, r) = self
            .roots
            .iter()
            .enumerate()
            .find(|(_, r)| r.name == *root_name)
            .ok_or_else(ApiError::not_found)?;
        if !self.may_read(caller, r) {
            return Err(match caller {
                Caller::Anonymous => unauthorized("this root needs a token"),
                _ => ApiError::new(StatusCode::FORBIDDEN, "the token does not grant this root"),
            });
        }
        let node = r
            .resolve(rest, self.config.follow_symlinks)
            .map_err(|e| match e {
                FsError::NotFound | FsError::TooLarge => ApiError::not_found(),
                FsError::Io(m) => ApiError::internal(format!("{}: {m}", r.name)),
            })?;
        Ok(Target {
            root,
            path: segs.join("/"),
            rel: rest.join("/"),
            name: segs.last().cloned().unwrap_or_default(),
            node,
        })
    }

    /// The open dataset at `t` (a file or a sparse directory): the kept handle while the
    /// identity is the same, else opened on the pool (under the request's `permit`) and kept.
    ///
    /// # Errors
    /// 404 for a directory that is no dataset; as [`Dataset::open`] and [`Permit::run`].
    pub async fn dataset(
        self: &Arc<Self>,
        t: Target,
        permit: &Permit,
        deadline: Instant,
    ) -> Result<Arc<Dataset>, ApiError> {
        if matches!(t.node, Node::Dir { .. }) {
            return Err(ApiError::not_found());
        }
        let id = t.node.identity();
        if let Some(ds) = self.handles.get(t.root, &t.rel, &id) {
            return Ok(ds);
        }
        let (root, rel) = (t.root, t.rel.clone());
        let cache = Arc::clone(&self.cache);
        let ds = permit
            .run(deadline, move || {
                Dataset::open(t.node, t.path, t.name, &cache).map(Arc::new)
            })
            .await?;
        self.handles.put(root, &rel, Arc::clone(&ds));
        Ok(ds)
    }

    /// The dataset at `t` and the stored bytes of its chunk `n`: from the chunk cache when
    /// there, else read on the pool under the request's `permit` (and cached).
    ///
    /// # Errors
    /// As [`App::dataset`], [`Dataset::load_chunk`] and [`Permit::run`].
    pub async fn stored_chunk(
        self: &Arc<Self>,
        t: Target,
        n: u64,
        start: Instant,
    ) -> Result<(Arc<Dataset>, Bytes), ApiError> {
        let permit = self.work.permit();
        let ds = self.dataset(t, &permit, self.deadline(start)).await?;
        let bytes = match ds.cached_chunk(n, &self.chunks) {
            Some(b) => b,
            None => {
                let (d, a) = (Arc::clone(&ds), Arc::clone(self));
                permit
                    .run(self.deadline(start), move || d.load_chunk(n, &a.chunks))
                    .await?
            }
        };
        Ok((ds, bytes))
    }

    /// Whether the dataset behind `ds` is still the one at its path (after a read error: if
    /// not, it changed while being read and a retry will see the new one).
    #[must_use]
    pub fn changed(&self, raw: &str, caller: &Caller, ds: &Dataset) -> bool {
        self.target(raw, caller)
            .map_or(true, |t| t.node.identity() != ds.id)
    }

    /// The threads of the pool (what `cparams.nthreads` reports).
    #[must_use]
    pub fn nthreads(&self) -> usize {
        self.work.runtime().nthreads()
    }
}

/// 401 with `detail`.
pub fn unauthorized(detail: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, detail)
}
