//! Open datasets: a `.b2nd` array or a `.b2frame` super-chunk, contiguous or sparse, opened
//! read-only through the library from the descriptor [`crate::fsroot`] checked, with the
//! version that names it in caches and ETags; the bounded cache of open handles; and what
//! the routes compute from a dataset (metadata, stored chunks, slices as b2nd cframes).
//!
//! Every function here reads or decompresses: they run on the pool ([`crate::work`]).

use crate::budget::Charge;
use crate::error::ApiError;
use crate::fsroot::{check_sparse, proc_path, Identity, Node};
use crate::parse::IndexEntry;
use crate::select::{self, Basic, Fancy, FancyAxis, Indexed};
use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;
use strata::cache::{BlockCache, BlockKey, DatasetVersion};
use strata::chunk::CParams;
use strata::ndarray::dtype::{fields, numpy_name, Field};
use strata::ndarray::partition::{even_out, slab};
use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, Slice};
use strata::schunk::values::Value as Msg;
use strata::schunk::{SChunk, SChunkOptions};
use strata::{CodecId, FilterId};

/// What a dataset holds.
#[derive(Debug)]
pub enum Body {
    /// A b2nd array.
    Array(Box<NdArray>),
    /// A plain super-chunk.
    Frame(Box<SChunk>),
}

/// An open dataset.
#[derive(Debug)]
pub struct Dataset {
    /// `root/relative/path`, as clients name it.
    pub path: String,
    /// The last segment (file or directory name).
    pub name: String,
    /// The identity it was opened with.
    pub id: Identity,
    /// Its version: changes whenever the file or the frame's state changes.
    pub version: DatasetVersion,
    /// The strong ETag of everything served from this version.
    pub etag: String,
    /// The array or frame.
    pub body: Body,
    /// A contiguous frame's file, for its stored bytes.
    stored: Option<File>,
    /// A sparse frame's directory, which the library reads through its `/proc/self/fd` path.
    _dir: Option<OwnedFd>,
    /// The `GET /api/info` answer's text, made once.
    info_text: OnceLock<Bytes>,
    /// Why an array's items cannot be read as its dtype says ([`dtype_fault`]).
    items_fault: Option<String>,
}

/// The message of errors reading a dataset (details go to the log).
pub const UNREADABLE: &str = "the dataset could not be read";

/// The start of the message of a dataset whose stored bytes are damaged.
pub const DAMAGED: &str = "the dataset is damaged";

/// A library error met while reading a dataset, logged: 501 for a codec or filter no plugin
/// here provides, 422 for stored bytes that are damaged (saying what is wrong), 500 for
/// anything else.
pub fn read_error(path: &str, e: &strata::Error) -> ApiError {
    tracing::warn!(dataset = %path, error = %e, "read failed");
    // A codec or filter no plugin here provides is a feature this server lacks, not a
    // fault: 501, naming the ID (the searched directories stay in the log).
    let missing = match e.root() {
        strata::Error::UnknownCodec { id } | strata::Error::CodecNotFound { id, .. } => {
            Some(("codec", id))
        }
        strata::Error::UnknownFilter { id } | strata::Error::FilterNotFound { id, .. } => {
            Some(("filter", id))
        }
        _ => None,
    };
    if let Some((what, id)) = missing {
        return ApiError::new(
            axum::http::StatusCode::NOT_IMPLEMENTED,
            format!("the dataset needs {what} ID {id}, which this server has no plugin for"),
        );
    }
    match damage(e) {
        Some(what) => ApiError::unprocessable(format!("{DAMAGED}: {what}")),
        None => ApiError::new(axum::http::StatusCode::INTERNAL_SERVER_ERROR, UNREADABLE),
    }
}

/// What is wrong with the stored bytes when `e` is about them (a header, a truncation, a
/// stream that does not decode): the chunk or block it is in, then the library's words for
/// it, with no path; `None` for any other error.
fn damage(e: &strata::Error) -> Option<String> {
    use std::fmt::Write as _;
    use strata::error::code;
    use strata::Error;
    let root = e.root();
    let words = match root {
        // A sparse frame's index names a chunk file its directory does not hold.
        Error::Io { path, .. } if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {
            let name = path.rsplit('/').next().unwrap_or_default();
            if !name.ends_with(".chunk") {
                return None;
            }
            format!("the chunk file {name} is missing")
        }
        // Its text names the file: say it without.
        Error::FrameType {
            expected, found, ..
        } => format!("the frame's type byte {found} is not {expected}"),
        Error::Filter { .. } => root.to_string(),
        _ if matches!(
            root.code(),
            code::DATA
                | code::READ_BUFFER
                | code::INVALID_HEADER
                | code::VERSION_SUPPORT
                | code::RUN_LENGTH
        ) =>
        {
            root.to_string()
        }
        _ => return None,
    };
    let mut out = String::new();
    let mut at = e;
    loop {
        match at {
            Error::At {
                what,
                index,
                source,
            } => {
                let _ = write!(out, "{what} {index}: ");
                at = source;
            }
            Error::Frame { source, .. } | Error::InFile { source, .. } => at = source,
            _ => break,
        }
    }
    out.push_str(&words);
    Some(out)
}

/// A b2nd metalayer the library refuses for this frame (shape, chunkshape and blockshape
/// that disagree with each other or with the frame's chunks, an item count that overflows,
/// chunks past Blosc2's limit): the stored bytes are damaged, 422 (logged). A missing codec
/// plugin stays 501 and an I/O error 500, as [`read_error`] says.
fn metalayer_error(path: &str, e: &strata::Error) -> ApiError {
    let r = read_error(path, e);
    if r.status != axum::http::StatusCode::INTERNAL_SERVER_ERROR || e.io_kind().is_some() {
        return r;
    }
    ApiError::unprocessable(format!("{DAMAGED}: the b2nd metalayer: {}", e.root()))
}

/// Why the items of `a` cannot be read as its dtype says: a dtype no array can be made with
/// (so no answer can name it), or one whose items are not the frame's typesize (a `|u1` over
/// 8-byte items would be sent as the first byte of each). `None` when they agree, or when
/// the array names no dtype.
fn dtype_fault(a: &NdArray) -> Option<String> {
    let d = a.dtype()?;
    match ArrayParams::from_dtype(&[1], d).map(|p| p.cparams.typesize) {
        Ok(n) if n == a.typesize() => None,
        Ok(n) => Some(format!(
            "its dtype {d:?} has {n}-byte items, its frame {}-byte items",
            a.typesize()
        )),
        Err(e) => Some(format!("its dtype: {}", e.root())),
    }
}

impl Dataset {
    /// Opens the dataset at `node` (a file or a sparse directory).
    ///
    /// # Errors
    /// 404 for another kind of node or a sparse directory holding anything but regular files;
    /// 422 (logged) for a file that is not a frame or a damaged one ([`read_error`]).
    pub fn open(
        node: Node,
        path: String,
        name: String,
        cache: &Arc<BlockCache>,
    ) -> Result<Dataset, ApiError> {
        let (schunk, stored, dir, id) = match node {
            Node::File { fd, id } => {
                let p = proc_path(&fd);
                let schunk = SChunk::open(&p, OpenMode::Read).map_err(|e| read_error(&path, &e))?;
                let file =
                    File::open(&p).map_err(|e| ApiError::internal(format!("{path}: {e}")))?;
                (schunk, Some(file), None, id)
            }
            Node::Sparse { fd, id } => {
                check_sparse(&fd).map_err(|_| ApiError::not_found())?;
                let schunk = SChunk::open(proc_path(&fd), OpenMode::Read)
                    .map_err(|e| read_error(&path, &e))?;
                (schunk, None, Some(fd), id)
            }
            Node::Dir { .. } => return Err(ApiError::not_found()),
        };
        let version = DatasetVersion::of(&schunk);
        let mut items_fault = None;
        let body = if schunk.meta("b2nd").is_some() || schunk.meta("caterva").is_some() {
            let arr = NdArray::from_schunk(schunk).map_err(|e| metalayer_error(&path, &e))?;
            items_fault = dtype_fault(&arr);
            Body::Array(Box::new(arr.with_cache_as(Arc::clone(cache), version)))
        } else {
            Body::Frame(Box::new(schunk))
        };
        Ok(Dataset {
            path,
            name,
            id,
            version,
            etag: format!("\"{:016x}\"", version.0),
            body,
            stored,
            _dir: dir,
            info_text: OnceLock::new(),
            items_fault,
        })
    }

    /// 422 when the array's dtype cannot describe its items (see `dtype_fault`): what
    /// decodes items refuses, what sends stored bytes does not need it.
    ///
    /// # Errors
    /// As said.
    pub fn check_items(&self) -> Result<(), ApiError> {
        match &self.items_fault {
            Some(why) => Err(ApiError::unprocessable(format!("{DAMAGED}: {why}"))),
            None => Ok(()),
        }
    }

    /// The super-chunk.
    #[must_use]
    pub fn schunk(&self) -> &SChunk {
        match &self.body {
            Body::Array(a) => a.schunk(),
            Body::Frame(s) => s,
        }
    }

    /// Whether it is a sparse frame (no single stored file).
    #[must_use]
    pub fn is_sparse(&self) -> bool {
        self.stored.is_none()
    }

    /// The length of the stored file (`None` for a sparse frame).
    #[must_use]
    pub fn stored_len(&self) -> Option<u64> {
        self.stored.as_ref().map(|_| self.id.size)
    }

    /// Its modification time.
    #[must_use]
    pub fn mtime(&self) -> SystemTime {
        crate::fsroot::mtime(&self.id)
    }

    /// Bytes `pos..pos + len` of the stored file.
    ///
    /// # Errors
    /// 500 when the file is shorter than it was when opened (truncated while served) or
    /// cannot be read.
    pub fn read_stored(&self, pos: u64, len: usize) -> Result<Vec<u8>, ApiError> {
        let file = self.stored.as_ref().ok_or_else(ApiError::not_found)?;
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, pos).map_err(|e| {
            tracing::warn!(dataset = %self.path, error = %e, pos, len, "stored bytes unreadable");
            ApiError::new(axum::http::StatusCode::INTERNAL_SERVER_ERROR, UNREADABLE)
        })?;
        Ok(buf)
    }

    /// The whole dataset as one contiguous frame: the stored file, or a sparse frame
    /// converted; its size (for a sparse frame: its chunks' and 64 KiB for the rest) is
    /// reserved in `charge` first.
    ///
    /// # Errors
    /// 503 when it does not fit in the memory budget now; as [`Dataset::read_stored`].
    pub fn cframe(&self, charge: &mut Charge) -> Result<Vec<u8>, ApiError> {
        let size = self
            .stored_len()
            .unwrap_or_else(|| self.schunk().cbytes().saturating_add(64 << 10));
        charge.reserve(size)?;
        match self.stored_len() {
            Some(n) => self.read_stored(0, usize::try_from(n).map_err(ApiError::internal)?),
            None => self
                .schunk()
                .to_cframe()
                .map_err(|e| read_error(&self.path, &e)),
        }
    }

    fn chunk_key(&self, n: u64) -> BlockKey {
        BlockKey {
            dataset: self.version,
            nchunk: n,
            nblock: 0,
        }
    }

    /// Stored chunk `n` if `chunks` (the stored-chunk cache) holds it: nothing is read.
    #[must_use]
    pub fn cached_chunk(&self, n: u64, chunks: &BlockCache) -> Option<Bytes> {
        chunks.get(&self.chunk_key(n)).map(Bytes::from_owner)
    }

    /// Stored chunk `n`, as its bytes are in the frame (a special chunk as the 32-byte chunk
    /// C-Blosc2 builds for it), from `chunks` or read and kept there.
    ///
    /// # Errors
    /// As [`Dataset::load_chunk`].
    pub fn chunk(&self, n: u64, chunks: &BlockCache) -> Result<Bytes, ApiError> {
        match self.cached_chunk(n, chunks) {
            Some(b) => Ok(b),
            None => self.load_chunk(n, chunks),
        }
    }

    /// Stored chunk `n` read from the file and kept in `chunks` (not looked up there first).
    ///
    /// # Errors
    /// 404 for a chunk number out of range; 500 for a chunk that cannot be read.
    pub fn load_chunk(&self, n: u64, chunks: &BlockCache) -> Result<Bytes, ApiError> {
        let s = self.schunk();
        let nchunks = s.nchunks();
        let i = usize::try_from(n)
            .ok()
            .filter(|&i| i < nchunks)
            .ok_or_else(|| {
                ApiError::new(
                    axum::http::StatusCode::NOT_FOUND,
                    format!("chunk {n} is out of range: the dataset has {nchunks} chunks"),
                )
            })?;
        let c = s.chunk(i).map_err(|e| read_error(&self.path, &e))?;
        Ok(Bytes::from_owner(chunks.insert(self.chunk_key(n), c)))
    }

    /// Where each stored chunk is in the stored file and its compressed length; `None` for a
    /// chunk without bytes of its own there (special, or in a sparse frame).
    ///
    /// # Errors
    /// 500 for an index that cannot be read.
    pub fn chunk_index(&self) -> Result<Vec<Option<(u64, u64)>>, ApiError> {
        self.schunk()
            .chunk_spans()
            .map_err(|e| read_error(&self.path, &e))
    }

    /// The NumPy dtype string of the items.
    #[must_use]
    pub fn dtype(&self) -> String {
        match &self.body {
            Body::Array(a) => a
                .dtype()
                .map_or_else(|| format!("|S{}", a.typesize()), str::to_owned),
            Body::Frame(s) => format!("|S{}", s.typesize()),
        }
    }

    /// The vlmetalayers as JSON, values decoded from msgpack (an undecodable one is `null`).
    #[must_use]
    pub fn vlmeta(&self) -> Value {
        let s = self.schunk();
        let mut m = Map::new();
        for name in s.vlmeta_names() {
            let v = s
                .vlmeta_value(name)
                .map_or(Value::Null, |v| msg_to_json(&v));
            m.insert(name.to_owned(), v);
        }
        Value::Object(m)
    }

    fn cparams_json(&self, nthreads: usize) -> Value {
        let c = self.schunk().cparams();
        let pairs: Vec<Value> = c
            .filters
            .iter()
            .zip(&c.filters_meta)
            .filter(|(f, _)| **f != FilterId::NOFILTER)
            .map(|(f, m)| json!([f.0, m]))
            .collect();
        json!({
            "codec": c.codec.0,
            "codec_meta": c.codec_meta,
            "clevel": c.clevel,
            "filters": c.filters.map(u8::from),
            "filters_meta": c.filters_meta,
            "typesize": c.typesize,
            "blocksize": c.blocksize,
            "nthreads": nthreads,
            "splitmode": c.splitmode as u8,
            "tuner": 0,
            "use_dict": c.use_dict,
            "filters, meta": pairs,
        })
    }

    fn schunk_json(&self, nthreads: usize) -> Value {
        let s = self.schunk();
        let (nbytes, cbytes) = (s.nbytes(), s.cbytes());
        let chunksize = s.chunksize().unwrap_or(0);
        json!({
            "cbytes": cbytes,
            "chunkshape": chunksize / s.typesize().max(1),
            "chunksize": chunksize,
            "contiguous": !self.is_sparse(),
            "cparams": self.cparams_json(nthreads),
            "cratio": if cbytes == 0 { 0.0 } else { nbytes as f64 / cbytes as f64 },
            "nbytes": nbytes,
            "urlpath": self.path,
            "vlmeta": self.vlmeta(),
            "nchunks": s.nchunks(),
            "mtime": Value::Null,
        })
    }

    /// The `GET /api/info` answer, as Caterva2 gives it (`nthreads` is the pool's).
    #[must_use]
    pub fn caterva_info(&self, nthreads: usize) -> Value {
        let ranges = if self.is_sparse() { "none" } else { "bytes" };
        let mtime = iso(self.mtime());
        match &self.body {
            Body::Array(a) => json!({
                "shape": a.shape(),
                "chunks": a.chunkshape(),
                "blocks": a.blockshape(),
                "dtype": numpy_name(&self.dtype()),
                "schunk": self.schunk_json(nthreads),
                "mtime": mtime,
                "accept_ranges": ranges,
            }),
            Body::Frame(_) => {
                let mut v = self.schunk_json(nthreads);
                // As Caterva2: the super-chunk's own keys, its file's time, nothing else.
                if let Value::Object(m) = &mut v {
                    m.insert("mtime".into(), Value::String(mtime));
                }
                v
            }
        }
    }

    /// [`Dataset::caterva_info`] as JSON text, made at the first call and kept (`nthreads`,
    /// the pool's, is the same for every call).
    #[must_use]
    pub fn caterva_info_text(&self, nthreads: usize) -> Bytes {
        self.info_text
            .get_or_init(|| Bytes::from(self.caterva_info(nthreads).to_string()))
            .clone()
    }

    /// The `GET /v1/meta` answer.
    #[must_use]
    pub fn native_meta(&self, nthreads: usize) -> Value {
        let s = self.schunk();
        let mut v = json!({
            "kind": match self.body { Body::Array(_) => "b2nd", Body::Frame(_) => "frame" },
            "dtype": self.dtype(),
            "dtype_numpy": numpy_name(&self.dtype()),
            "typesize": s.typesize(),
            "nchunks": s.nchunks(),
            "chunk_nbytes": s.chunksize(),
            "nbytes": s.nbytes(),
            "cbytes": s.cbytes(),
            "cparams": self.cparams_json(nthreads),
            "vlmeta": self.vlmeta(),
            "etag": self.etag.trim_matches('"'),
            "size": self.stored_len(),
            "sparse": self.is_sparse(),
            "mtime": iso(self.mtime()),
        });
        if let (Body::Array(a), Value::Object(m)) = (&self.body, &mut v) {
            m.insert("shape".into(), json!(a.shape()));
            m.insert("chunks".into(), json!(a.chunkshape()));
            m.insert("blocks".into(), json!(a.blockshape()));
        }
        v
    }

    /// Checks that a result of `nitems` items of `itemsize` bytes stays under `limit`, and
    /// reserves its bytes in `charge`.
    fn check_size(
        nitems: u128,
        itemsize: usize,
        limit: u64,
        charge: &mut Charge,
    ) -> Result<usize, ApiError> {
        let bytes = nitems.saturating_mul(itemsize as u128);
        if bytes > u128::from(limit) {
            return Err(ApiError::too_large(format!(
                "the selection holds {bytes} bytes, more than the limit of {limit}"
            )));
        }
        let n = usize::try_from(bytes).map_err(ApiError::internal)?;
        charge.reserve(n as u64)?;
        Ok(n)
    }

    /// `head` followed by the items of a basic selection of array `a`, C order, NumPy's
    /// shape (their bytes reserved in `charge` first).
    ///
    /// # Errors
    /// 413 over `limit` bytes; 503 when they do not fit in the memory budget now; 422 for
    /// damaged data, 500 for other read errors.
    pub fn read_basic(
        &self,
        a: &NdArray,
        b: &Basic,
        limit: u64,
        charge: &mut Charge,
        head: Vec<u8>,
    ) -> Result<Vec<u8>, ApiError> {
        self.check_items()?;
        let n = Self::check_size(b.nitems(), a.typesize(), limit, charge)?;
        let mut out = head;
        let at = out.len();
        out.resize(at + n, 0);
        a.get_slice(&b.slices, &mut out[at..])
            .map_err(|e| read_error(&self.path, &e))?;
        Ok(out)
    }

    /// The items of a fancy selection of array `a` (NumPy's advanced indexing), C order.
    /// Points that share a chunk are read as one box when they fill enough of it, one by one
    /// otherwise.
    ///
    /// # Errors
    /// 413 over `limit` bytes; 503 when they do not fit in the memory budget now (`charge`);
    /// 422 for damaged data, 500 for other read errors.
    pub fn read_fancy(
        &self,
        a: &NdArray,
        f: &Fancy,
        limit: u64,
        charge: &mut Charge,
    ) -> Result<Vec<u8>, ApiError> {
        self.check_items()?;
        let ts = a.typesize();
        let total = Self::check_size(f.nitems(), ts, limit, charge)?;
        let mut out = vec![0u8; total];
        if total == 0 {
            return Ok(out);
        }
        let adv: Vec<usize> = (0..f.axes.len())
            .filter(|&d| matches!(f.axes[d], FancyAxis::Points(_)))
            .collect();
        let sl: Vec<(usize, Slice, usize)> = f
            .axes
            .iter()
            .enumerate()
            .filter_map(|(d, ax)| match ax {
                FancyAxis::Slice(s, sel) => Some((d, *s, sel.len)),
                FancyAxis::Points(_) => None,
            })
            .collect();
        let inner: usize = sl.iter().map(|s| s.2).product();
        let point_bytes = inner * ts;
        // The result: [slice axes before `at`] [points] [slice axes after], or points first.
        let at = f.at.unwrap_or(0);
        let before: usize = sl.iter().take(at).map(|s| s.2).product();
        let after_bytes = point_bytes / before.max(1);
        let place = |out: &mut [u8], k: usize, data: &[u8]| {
            for b in 0..before {
                let dst = (b * f.npoints + k) * after_bytes;
                out[dst..dst + after_bytes]
                    .copy_from_slice(&data[b * after_bytes..(b + 1) * after_bytes]);
            }
        };
        let chunkshape = a.chunkshape().to_vec();
        let mut groups: HashMap<Vec<usize>, Vec<usize>> = HashMap::new();
        for k in 0..f.npoints {
            let key = adv
                .iter()
                .map(|&d| f.coord(d, k).unwrap_or(0) / chunkshape[d].max(1))
                .collect();
            groups.entry(key).or_default().push(k);
        }
        let read = |slices: &[Slice], n: usize| -> Result<Vec<u8>, ApiError> {
            let mut buf = vec![0u8; n];
            a.get_slice(slices, &mut buf)
                .map_err(|e| read_error(&self.path, &e))?;
            Ok(buf)
        };
        for pts in groups.values() {
            let lo: Vec<usize> = adv
                .iter()
                .map(|&d| pts.iter().filter_map(|&k| f.coord(d, k)).min().unwrap_or(0))
                .collect();
            let hi: Vec<usize> = adv
                .iter()
                .map(|&d| pts.iter().filter_map(|&k| f.coord(d, k)).max().unwrap_or(0) + 1)
                .collect();
            let box_points: u128 = lo.iter().zip(&hi).map(|(l, h)| (h - l) as u128).product();
            let box_bytes = box_points.saturating_mul(point_bytes as u128);
            // The box is scratch memory beyond the answer (up to 8 times its points' bytes):
            // read only when the budget has room for it now, else point by point.
            let dense = box_points <= 8 * pts.len() as u128
                && box_bytes <= u128::from(limit)
                && charge.try_reserve(box_bytes as u64);
            if dense {
                let mut slices = Vec::with_capacity(f.axes.len());
                let mut shape = Vec::with_capacity(f.axes.len());
                let mut ai = 0;
                for ax in &f.axes {
                    match ax {
                        FancyAxis::Points(_) => {
                            slices.push(Slice::range(lo[ai] as i64, hi[ai] as i64));
                            shape.push(hi[ai] - lo[ai]);
                            ai += 1;
                        }
                        FancyAxis::Slice(s, sel) => {
                            slices.push(*s);
                            shape.push(sel.len);
                        }
                    }
                }
                let bx = read(&slices, box_bytes as usize)?;
                for &k in pts {
                    let fixed: Vec<Option<usize>> = {
                        let mut ai = 0;
                        f.axes
                            .iter()
                            .enumerate()
                            .map(|(d, ax)| match ax {
                                FancyAxis::Points(_) => {
                                    let c = f.coord(d, k).unwrap_or(0) - lo[ai];
                                    ai += 1;
                                    Some(c)
                                }
                                FancyAxis::Slice(..) => None,
                            })
                            .collect()
                    };
                    let data = sub_box(&bx, &shape, &fixed, ts);
                    place(&mut out, k, &data);
                }
                drop(bx);
                charge.release(box_bytes as u64);
            } else {
                for &k in pts {
                    let slices: Vec<Slice> = f
                        .axes
                        .iter()
                        .enumerate()
                        .map(|(d, ax)| match ax {
                            FancyAxis::Points(_) => Slice::index(f.coord(d, k).unwrap_or(0) as i64),
                            FancyAxis::Slice(s, _) => *s,
                        })
                        .collect();
                    let data = read(&slices, point_bytes)?;
                    place(&mut out, k, &data);
                }
            }
        }
        Ok(out)
    }

    /// The b2nd cframe of an array of `shape` and `dtype` holding `data`, compressed as this
    /// dataset is (a lossless codec and filters in place of lossy ones), in C-order slab
    /// blocks of at most 32 KiB (`answer_blockshape`; chunks derived).
    ///
    /// # Errors
    /// 422 for a dtype no array can have; 500 when the array cannot be built.
    pub fn array_cframe(
        &self,
        shape: &[usize],
        dtype: &str,
        data: &[u8],
    ) -> Result<Vec<u8>, ApiError> {
        // A dtype no array can be made with is the stored metalayer's fault.
        let mut params = ArrayParams::from_dtype(shape, dtype)
            .map_err(|e| ApiError::unprocessable(format!("{DAMAGED}: its dtype: {}", e.root())))?;
        let ts = params.cparams.typesize;
        let cparams = lossless(self.schunk().cparams(), ts);
        if let Some(block) = answer_blockshape(shape, ts) {
            params = params.with_blockshape(&block);
        }
        let params = params.with_cparams(&cparams);
        NdArray::from_buffer(&params, &Location::Memory, data)
            .and_then(|a| a.to_cframe())
            .map_err(ApiError::internal)
    }

    /// Items `range` of a plain frame, as a new frame's cframe.
    ///
    /// # Errors
    /// 413 over `limit` bytes; 503 when it does not fit in the memory budget now (`charge`);
    /// 422 for damaged data, 500 for other read errors.
    pub fn frame_cframe(
        &self,
        s: &SChunk,
        range: std::ops::Range<u64>,
        limit: u64,
        charge: &mut Charge,
    ) -> Result<Vec<u8>, ApiError> {
        let ts = s.typesize().max(1);
        let n = Self::check_size(u128::from(range.end - range.start), ts, limit, charge)?;
        let mut data = vec![0u8; n];
        let (lo, hi) = (range.start * ts as u64, range.end * ts as u64);
        let mut at = 0u64;
        let mut filled = 0usize;
        for i in 0..s.nchunks() {
            if at >= hi {
                break;
            }
            let len = match s.chunksize() {
                Some(cs) => (s.nbytes() - at).min(cs as u64),
                None => {
                    s.chunk_info(i)
                        .map_err(|e| read_error(&self.path, &e))?
                        .nbytes as u64
                }
            };
            let (a, b) = (lo.max(at), hi.min(at + len));
            if a < b {
                let want = (b - a) as usize;
                s.decompress_range(
                    i,
                    (a - at) as usize..(b - at) as usize,
                    &mut data[filled..filled + want],
                )
                .map_err(|e| read_error(&self.path, &e))?;
                filled += want;
            }
            at += len;
        }
        Self::reserve_frame(n, charge)?;
        let opts = SChunkOptions::default()
            .with_cparams(lossless(s.cparams(), ts))
            .with_chunksize(s.chunksize().unwrap_or(0));
        let mut out = SChunk::new(&opts).map_err(ApiError::internal)?;
        out.append_data(&data).map_err(ApiError::internal)?;
        out.to_cframe().map_err(ApiError::internal)
    }

    /// Reserves in `charge` what compressing `n` decoded bytes into a frame may take while
    /// it is built: the compressed chunks, then the frame made of them (at most the decoded
    /// size each: the codecs store what does not compress as it is).
    fn reserve_frame(n: usize, charge: &mut Charge) -> Result<(), ApiError> {
        charge.reserve(2 * n as u64)
    }

    /// What `api/fetch` answers for a computed (not whole) request: a b2nd cframe of the
    /// selection (or of one field of it), or a frame's cframe for a plain frame; the memory
    /// it takes while made is reserved in `charge` first.
    ///
    /// # Errors
    /// 400 for keys that do not fit the dataset or an unknown field; 413 over `limit`; 503
    /// when it does not fit in the memory budget now; 422 for damaged data.
    pub fn fetch(&self, q: &Query, limit: u64, charge: &mut Charge) -> Result<Vec<u8>, ApiError> {
        match &self.body {
            Body::Frame(s) => {
                if q.indices.is_some() || q.field.is_some() {
                    return Err(ApiError::bad_request(
                        "indices and field need an N-dimensional array",
                    ));
                }
                let items = s.nbytes() / s.typesize().max(1) as u64;
                let range = select::flat(&q.key, items).map_err(ApiError::bad_request)?;
                self.frame_cframe(s, range, limit, charge)
            }
            Body::Array(a) => {
                let field = match &q.field {
                    Some(name) => Some(self.field(name)?),
                    None => None,
                };
                let (data, shape) = match &q.indices {
                    Some(entries) => {
                        match select::indexed(entries, a.shape()).map_err(ApiError::bad_request)? {
                            Indexed::Basic(b) => {
                                (self.read_basic(a, &b, limit, charge, Vec::new())?, b.shape)
                            }
                            Indexed::Fancy(f) => {
                                (self.read_fancy(a, &f, limit, charge)?, f.shape.clone())
                            }
                        }
                    }
                    None => {
                        let b = select::basic(&q.key, a.shape()).map_err(ApiError::bad_request)?;
                        (self.read_basic(a, &b, limit, charge, Vec::new())?, b.shape)
                    }
                };
                match field {
                    None => {
                        Self::reserve_frame(data.len(), charge)?;
                        self.array_cframe(&shape, &self.dtype(), &data)
                    }
                    Some(f) => {
                        // The field's bytes, then their frame.
                        charge.reserve(data.len() as u64)?;
                        Self::reserve_frame(data.len(), charge)?;
                        let bytes = f.gather(&data, a.typesize()).map_err(ApiError::internal)?;
                        let mut shape = shape;
                        shape.extend_from_slice(&f.shape);
                        self.array_cframe(&shape, &f.dtype, &bytes)
                    }
                }
            }
        }
    }

    /// Field `name` of a structured array.
    ///
    /// # Errors
    /// 400 when the dtype has no such field.
    pub fn field(&self, name: &str) -> Result<Field, ApiError> {
        let all = fields(&self.dtype()).ok().flatten().ok_or_else(|| {
            ApiError::bad_request("the array is not structured (its dtype has no fields)")
        })?;
        all.into_iter()
            .find(|f| f.name == name)
            .ok_or_else(|| ApiError::bad_request(format!("the array has no field {name:?}")))
    }
}

/// A computed fetch: a key (`slice_`/`sel`), or `indices`, and maybe one field.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// The basic key (empty: everything).
    pub key: Vec<crate::parse::KeyItem>,
    /// An `indices` key instead.
    pub indices: Option<Vec<IndexEntry>>,
    /// One field of a structured array.
    pub field: Option<String>,
}

/// `src` for recompressing results of `typesize`-byte items: lossy codecs (ZFP and any
/// plugin) and filters (trunc_prec) are replaced, so a client decodes exactly the values the
/// server read.
fn lossless(src: &CParams, typesize: usize) -> CParams {
    let mut c = CParams {
        typesize,
        blocksize: 0,
        nthreads: 0,
        nd: None,
        ..src.clone()
    };
    if !matches!(
        c.codec,
        CodecId::BLOSCLZ | CodecId::LZ4 | CodecId::LZ4HC | CodecId::ZLIB | CodecId::ZSTD
    ) {
        c.codec = CodecId::ZSTD;
        c.clevel = 5;
        c.codec_meta = 0;
        c.use_dict = false;
    }
    for (f, m) in c.filters.iter_mut().zip(c.filters_meta.iter_mut()) {
        match *f {
            FilterId::NOFILTER | FilterId::SHUFFLE | FilterId::BITSHUFFLE | FilterId::DELTA => {}
            FilterId::BYTEDELTA_BUGGY | FilterId::BYTEDELTA => {
                *m = u8::try_from(typesize).unwrap_or(0);
            }
            _ => {
                *f = FilterId::NOFILTER;
                *m = 0;
            }
        }
    }
    let empty = |filters: &[FilterId]| filters.iter().all(|&f| f == FilterId::NOFILTER);
    if empty(&c.filters) && !empty(&src.filters) {
        c.filters[5] = FilterId::SHUFFLE;
    }
    c
}

/// The most bytes of an answer's block: blocks this small compress about twice as fast as
/// one block of 64 KiB or more (they and the codec's tables stay in the core's L1 and L2
/// caches), for a ratio a few percent lower (`benches/results/daemon_vs_caterva2.md`).
const ANSWER_BLOCK_BYTES: usize = 32 * 1024;

/// The blockshape of an answer of `shape` with items of `typesize` bytes: the C-order slab of
/// at most [`ANSWER_BLOCK_BYTES`] (whole rows first), evened out, so that blocks are runs of
/// the answer's bytes compressed where they lie. `None` (the library's default partitions)
/// for a shape with no items or no dimensions.
fn answer_blockshape(shape: &[usize], typesize: usize) -> Option<Vec<usize>> {
    if shape.is_empty() || shape.contains(&0) {
        return None;
    }
    let nitems = (ANSWER_BLOCK_BYTES / typesize.max(1)).max(1);
    Some(even_out(&slab(nitems, shape), shape))
}

/// The items of a C-order box of `shape` where each axis is `fixed` at an index or free,
/// in C order over the free axes.
fn sub_box(bx: &[u8], shape: &[usize], fixed: &[Option<usize>], ts: usize) -> Vec<u8> {
    let nd = shape.len();
    let mut strides = vec![ts; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let base: usize = fixed
        .iter()
        .zip(&strides)
        .map(|(f, s)| f.unwrap_or(0) * s)
        .sum();
    let free: Vec<usize> = (0..nd).filter(|&d| fixed[d].is_none()).collect();
    let count: usize = free.iter().map(|&d| shape[d]).product();
    let mut out = Vec::with_capacity(count * ts);
    if count == 0 {
        return out;
    }
    let mut idx = vec![0usize; free.len()];
    loop {
        let off = base
            + free
                .iter()
                .zip(&idx)
                .map(|(&d, &i)| i * strides[d])
                .sum::<usize>();
        out.extend_from_slice(&bx[off..off + ts]);
        let mut j = free.len();
        loop {
            if j == 0 {
                return out;
            }
            j -= 1;
            idx[j] += 1;
            if idx[j] < shape[free[j]] {
                break;
            }
            idx[j] = 0;
        }
    }
}

/// A msgpack value as JSON (binary as text, maps with text keys, extensions as `null`).
#[must_use]
pub fn msg_to_json(v: &Msg) -> Value {
    match v {
        Msg::Nil => Value::Null,
        Msg::Bool(b) => Value::Bool(*b),
        Msg::Int(i) => i64::try_from(*i)
            .map(Value::from)
            .or_else(|_| u64::try_from(*i).map(Value::from))
            .unwrap_or(Value::Null),
        Msg::F32(x) => {
            serde_json::Number::from_f64(f64::from(*x)).map_or(Value::Null, Value::Number)
        }
        Msg::F64(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        Msg::Str(s) => Value::String(s.clone()),
        Msg::Bin(b) => Value::String(String::from_utf8_lossy(b).into_owned()),
        Msg::Array(items) => Value::Array(items.iter().map(msg_to_json).collect()),
        Msg::Map(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Msg::Str(s) => s.clone(),
                        other => msg_to_json(other).to_string(),
                    };
                    (key, msg_to_json(v))
                })
                .collect(),
        ),
        Msg::Ext(..) => Value::Null,
    }
}

/// ISO-8601 UTC with microseconds and `Z`, as Caterva2 writes times.
#[must_use]
pub fn iso(t: SystemTime) -> String {
    humantime::format_rfc3339_micros(t).to_string()
}

/// Handles by (root, relative path), with when each was last used.
type HandleMap = HashMap<(usize, String), (Arc<Dataset>, u64)>;

/// Open datasets, at most `capacity`, the least recently used dropped first; a handle is
/// reused only while the path still has the identity it was opened with.
#[derive(Debug)]
pub struct Handles {
    map: Mutex<HandleMap>,
    capacity: usize,
    tick: AtomicU64,
}

impl Handles {
    /// A cache of `capacity` handles.
    #[must_use]
    pub fn new(capacity: usize) -> Handles {
        Handles {
            map: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
            tick: AtomicU64::new(0),
        }
    }

    /// The handle of `rel` in root `root`, if it was opened with identity `id`.
    #[must_use]
    pub fn get(&self, root: usize, rel: &str, id: &Identity) -> Option<Arc<Dataset>> {
        let t = self.tick.fetch_add(1, Ordering::Relaxed);
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        match m.get_mut(&(root, rel.to_owned())) {
            Some((ds, used)) if ds.id == *id => {
                *used = t;
                Some(Arc::clone(ds))
            }
            _ => None,
        }
    }

    /// Keeps `ds` as the handle of `rel` in `root`.
    pub fn put(&self, root: usize, rel: &str, ds: Arc<Dataset>) {
        let t = self.tick.fetch_add(1, Ordering::Relaxed);
        let mut m = self.map.lock().unwrap_or_else(|e| e.into_inner());
        m.insert((root, rel.to_owned()), (ds, t));
        while m.len() > self.capacity {
            let Some(oldest) = m
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            m.remove(&oldest);
        }
    }

    /// Handles kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether none is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_boxes() {
        // a (2, 3, 4) box of 1-byte items, axis 1 fixed at 2
        let bx: Vec<u8> = (0..24).collect();
        assert_eq!(
            sub_box(&bx, &[2, 3, 4], &[None, Some(2), None], 1),
            [8, 9, 10, 11, 20, 21, 22, 23]
        );
        assert_eq!(
            sub_box(&bx, &[2, 3, 4], &[Some(1), Some(0), Some(3)], 1),
            [15]
        );
        assert_eq!(
            sub_box(&bx, &[2, 0, 4], &[None, None, Some(0)], 1),
            Vec::<u8>::new()
        );
    }

    #[test]
    fn answer_blocks_are_slabs_of_whole_rows() {
        // float64 hyperplanes: whole rows, the outer dimension cut evenly
        assert_eq!(answer_blockshape(&[40, 20, 10], 8), Some(vec![20, 20, 10]));
        assert_eq!(answer_blockshape(&[40, 16, 20], 8), Some(vec![10, 16, 20]));
        assert_eq!(answer_blockshape(&[60, 30], 8), Some(vec![60, 30]));
        // a row longer than a block is cut, evenly too
        assert_eq!(answer_blockshape(&[3, 100_000], 8), Some(vec![1, 4000]));
        // items larger than a block: one item each
        assert_eq!(answer_blockshape(&[5], 40_000), Some(vec![1]));
        assert_eq!(answer_blockshape(&[], 8), None);
        assert_eq!(answer_blockshape(&[4, 0], 8), None);
    }

    #[test]
    fn lossless_results() {
        let zfp = CParams {
            codec: CodecId::ZFP_ACC,
            codec_meta: 2,
            filters: [0, 0, 0, 0, 4, 1].map(FilterId),
            filters_meta: [0, 0, 0, 0, 10, 0],
            ..CParams::default()
        };
        let c = lossless(&zfp, 4);
        assert_eq!(
            (c.codec, c.filters, c.filters_meta),
            (CodecId::ZSTD, [0, 0, 0, 0, 0, 1].map(FilterId), [0; 6])
        );
        let plain = CParams::default();
        assert_eq!(lossless(&plain, 8).codec, plain.codec);
    }

    /// Writes a small array of `rows` x 4 bytes at `dir/name` and opens it as the daemon does.
    fn open_at(
        root: &crate::fsroot::Root,
        dir: &std::path::Path,
        name: &str,
        rows: u8,
    ) -> Arc<Dataset> {
        let params = ArrayParams::from_dtype(&[usize::from(rows), 4], "<u1")
            .unwrap()
            .with_chunkshape(&[2, 2])
            .with_blockshape(&[2, 2])
            .with_overwrite(true);
        let data: Vec<u8> = (0..rows * 4).collect();
        NdArray::from_buffer(&params, &Location::File(dir.join(name)), &data)
            .unwrap()
            .close()
            .unwrap();
        let node = root.resolve(&[name.to_owned()], false).unwrap();
        let cache = Arc::new(BlockCache::new(1 << 20));
        let ds = Dataset::open(node, format!("@public/{name}"), name.to_owned(), &cache);
        Arc::new(ds.unwrap())
    }

    #[test]
    fn handles_are_bounded_and_checked_against_the_identity() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::fsroot::Root::open("@public", dir.path(), true).unwrap();
        let handles = Handles::new(2);
        let a = open_at(&root, dir.path(), "a.b2nd", 4);
        let b = open_at(&root, dir.path(), "b.b2nd", 4);
        handles.put(0, "a.b2nd", Arc::clone(&a));
        handles.put(0, "b.b2nd", Arc::clone(&b));
        assert!(Arc::ptr_eq(&handles.get(0, "a.b2nd", &a.id).unwrap(), &a));
        // Another root, or an identity the path no longer has, is no hit.
        assert!(handles.get(1, "a.b2nd", &a.id).is_none());
        let other = Identity {
            size: a.id.size + 1,
            ..a.id
        };
        assert!(handles.get(0, "a.b2nd", &other).is_none());
        // A third handle drops the least recently used one (b: a was just read).
        let c = open_at(&root, dir.path(), "c.b2nd", 4);
        handles.put(0, "c.b2nd", Arc::clone(&c));
        assert_eq!(handles.len(), 2);
        assert!(handles.get(0, "b.b2nd", &b.id).is_none());
        assert!(handles.get(0, "a.b2nd", &a.id).is_some());
        assert!(handles.get(0, "c.b2nd", &c.id).is_some());
        // The file rewritten (larger) has another identity: the old handle is not served.
        let a2 = open_at(&root, dir.path(), "a.b2nd", 8);
        assert_ne!(a2.id, a.id);
        assert!(handles.get(0, "a.b2nd", &a2.id).is_none());
    }

    #[test]
    fn msgpack_as_json() {
        let v = Msg::Map(vec![
            (Msg::from("a"), Msg::from(1)),
            (Msg::from("b"), Msg::from("foo")),
            (Msg::from("c"), Msg::F64(123.456)),
            (Msg::from(7), Msg::Array(vec![Msg::Nil, Msg::Bool(true)])),
        ]);
        assert_eq!(
            msg_to_json(&v),
            json!({"a": 1, "b": "foo", "c": 123.456, "7": [null, true]})
        );
    }
}
