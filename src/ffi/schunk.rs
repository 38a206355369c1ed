//! C functions for super-chunks and frames (`strata_schunk`): create in memory, in a frame
//! file or a sparse frame directory; open; append, insert, update, delete and read chunks;
//! metalayers and vlmetalayers; contiguous-frame buffers.
//!
//! Format: C-Blosc2 `blosc/schunk.c`, `blosc/frame.c`, `README_CFRAME_FORMAT.rst`,
//! `README_SFRAME_FORMAT.rst`; `docs/frame-format.md`.

#![allow(unsafe_code)]

use super::chunk::{STRATA_SPECIAL_NAN, STRATA_SPECIAL_UNINIT, STRATA_SPECIAL_ZERO};
use super::handle::{self, handle, Handle};
use super::params::{strata_cparams, strata_dparams, strata_storage, sync_policy};
use super::{
    arg_mut, call, call_status, copy_out, count, name_out, slice_in, slice_out, str_in, FfiResult,
};
use crate::error::{Error, Expected};
use crate::format::chunk::SpecialType;
use crate::frame::OpenMode;
use crate::schunk::{Location, OpenOptions, SChunk, SChunkOptions};
use std::ffi::c_char;
use std::path::PathBuf;

/// `strata_schunk_open` mode: read only.
pub const STRATA_OPEN_READ: u8 = 0;
/// `strata_schunk_open` mode: read and write everything.
pub const STRATA_OPEN_READWRITE: u8 = 1;
/// `strata_schunk_open` mode: read, and append chunks only.
pub const STRATA_OPEN_APPEND: u8 = 2;

/// A super-chunk: chunks of one chunksize with metalayers and vlmetalayers, in a Blosc2
/// frame in memory, in a file or in a sparse directory. Opaque; made by
/// `strata_schunk_create`, `_open`, `_from_cframe`, `_copy`; released by `strata_schunk_close`
/// or `strata_schunk_free`.
#[allow(non_camel_case_types)] // the C name
pub struct strata_schunk {
    inner: SChunk,
}
handle!(strata_schunk, SChunk, "schunk");

// One call at a time may change a handle; calls taking a `const` handle may overlap.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<SChunk>();
};

/// The open mode of a `STRATA_OPEN_*` value.
pub(super) fn open_mode(code: u8) -> crate::Result<OpenMode> {
    match code {
        STRATA_OPEN_READ => Ok(OpenMode::Read),
        STRATA_OPEN_READWRITE => Ok(OpenMode::ReadWrite),
        STRATA_OPEN_APPEND => Ok(OpenMode::Append),
        other => Err(Error::range(
            "open mode",
            other,
            Expected::OneOf("STRATA_OPEN_READ (0), _READWRITE (1) or _APPEND (2)"),
        )),
    }
}

/// An index or count `n` of `what` from C: negative is out of range.
pub(super) fn index(n: i64, what: &'static str) -> crate::Result<usize> {
    usize::try_from(n).map_err(|_| Error::index(what, n, 0))
}

/// Where a new frame goes: `urlpath` NULL = memory.
///
/// # Safety
/// `urlpath` NULL or NUL-terminated.
pub(super) unsafe fn location(urlpath: *const c_char, sparse: bool) -> FfiResult<Location> {
    if urlpath.is_null() {
        if sparse {
            let what = "a sparse frame needs a urlpath";
            return Err(Error::Unsupported { what }.into());
        }
        return Ok(Location::Memory);
    }
    // SAFETY: forwarded from the caller.
    let path = PathBuf::from(unsafe { str_in(urlpath, "urlpath") }?);
    Ok(if sparse {
        Location::Dir(path)
    } else {
        Location::File(path)
    })
}

/// Creates an empty super-chunk and writes its handle to `*out`.
///
/// `urlpath` NULL keeps the frame in memory; otherwise it is a contiguous frame file
/// (`.b2frame`; `.b2nd` for N-d arrays) or, with `storage->sparse`, a sparse frame directory.
/// `storage`, `cparams` and `dparams` may be NULL for the defaults (`strata_storage_default`,
/// `strata_cparams_default`, `strata_dparams_default`). The cparams are stored in the frame
/// header and compress every chunk `strata_schunk_append_buffer` / `_append_data` make.
///
/// Returns 0, or `STRATA_ERROR_INVALID_PARAM` for bad parameters, `STRATA_ERROR_FILE_OPEN`
/// when the path exists (without `storage->overwrite`) or cannot be created,
/// `STRATA_ERROR_NULL_POINTER` when `out` is NULL.
///
/// # Safety
/// `urlpath` NULL or NUL-terminated; each params pointer NULL or pointing to its struct;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_create(
    urlpath: *const c_char,
    storage: *const strata_storage,
    cparams: *const strata_cparams,
    dparams: *const strata_dparams,
    out: *mut *mut strata_schunk,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (out, storage, cparams, dparams) = unsafe {
            (
                arg_mut(out, "out")?,
                strata_storage::read_or_default(storage)?,
                strata_cparams::read_or_default(cparams)?,
                strata_dparams::read_or_default(dparams)?,
            )
        };
        // SAFETY: forwarded from the caller.
        let loc = unsafe { location(urlpath, storage.sparse) }?;
        let opts = SChunkOptions::default()
            .with_cparams(cparams)
            .with_dparams(dparams)
            .with_chunksize(storage.chunksize)
            .with_sync(storage.sync)
            .with_overwrite(storage.overwrite);
        strata_schunk::hand_out(out, SChunk::create(&loc, &opts)?);
        Ok(())
    })
}

/// Opens the frame at `urlpath` (a file: contiguous frame; a directory: sparse frame) and
/// writes its handle to `*out`. `mode` is `STRATA_OPEN_READ`, `STRATA_OPEN_READWRITE` or
/// `STRATA_OPEN_APPEND` (appends only); `sync` a `STRATA_SYNC_*` value; `dparams` may be
/// NULL for the defaults. An `http://` or `https://` URL opens a remote frame, read-only
/// (`STRATA_OPEN_READ`), read lazily over HTTP byte ranges.
///
/// Returns 0, or `STRATA_ERROR_FILE_OPEN` when the path cannot be opened,
/// `STRATA_ERROR_INVALID_HEADER` for a malformed frame (the message names the file),
/// `STRATA_ERROR_FRAME_TYPE`, `STRATA_ERROR_INVALID_PARAM` for a bad mode or sync (or a
/// write mode for a URL), `STRATA_ERROR_REMOTE` when the server refuses, cannot be reached
/// or the file changed (the message names the URL and the status).
///
/// # Safety
/// `urlpath` NULL or NUL-terminated; `dparams` NULL or valid; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_open(
    urlpath: *const c_char,
    mode: u8,
    sync: u8,
    dparams: *const strata_dparams,
    out: *mut *mut strata_schunk,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (out, path, dparams) = unsafe {
            (
                arg_mut(out, "out")?,
                str_in(urlpath, "urlpath")?,
                strata_dparams::read_or_default(dparams)?,
            )
        };
        let opts = OpenOptions::new(open_mode(mode)?).with_sync(sync_policy(sync)?);
        let mut s = SChunk::open_with(path, &opts)?;
        s.set_nthreads(s.cparams().nthreads, dparams.nthreads);
        strata_schunk::hand_out(out, s);
        Ok(())
    })
}

/// Makes an in-memory, writable super-chunk from a copy of the contiguous frame at `src`
/// (`srclen` bytes, exactly the frame's length) and writes its handle to `*out`. Returns 0,
/// or `STRATA_ERROR_INVALID_HEADER` for a malformed frame.
///
/// # Safety
/// `src` readable for `srclen` bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_from_cframe(
    src: *const u8,
    srclen: usize,
    out: *mut *mut strata_schunk,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { handle::from_bytes(src, srclen, out, SChunk::from_cframe) }
}

/// Copies the whole super-chunk as one contiguous frame (what `strata_schunk_from_cframe`
/// and python-blosc2's `blosc2.schunk_from_cframe` read) into `dst` (`dstlen` bytes; `NULL, 0`
/// asks for the size; a sparse frame is converted each call). Returns the frame's length in
/// bytes, or `STRATA_ERROR_WRITE_BUFFER` when `dst` is too small.
///
/// # Safety
/// `schunk` NULL or a live handle; `dst` NULL or writable for `dstlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_to_cframe(
    schunk: *const strata_schunk,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { handle::bytes_out(schunk, dst, dstlen, SChunk::to_cframe) }
}

/// Copies the super-chunk (parameters, metalayers, vlmetalayers, chunks as stored) to
/// `urlpath` (NULL: memory; `storage` as for `strata_schunk_create`, its `chunksize`
/// ignored) and writes the new handle to `*out` — e.g. a sparse frame into one file.
/// Returns 0, or the errors of `strata_schunk_create` and of reading the chunks.
///
/// # Safety
/// `schunk` NULL or a live handle; `urlpath` NULL or NUL-terminated; `storage` NULL or
/// valid; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_copy(
    schunk: *const strata_schunk,
    urlpath: *const c_char,
    storage: *const strata_storage,
    out: *mut *mut strata_schunk,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (s, out, storage) = unsafe {
            (
                strata_schunk::get(schunk)?,
                arg_mut(out, "out")?,
                strata_storage::read_or_default(storage)?,
            )
        };
        // SAFETY: forwarded from the caller.
        let loc = unsafe { location(urlpath, storage.sparse) }?;
        let opts = SChunkOptions {
            sync: storage.sync,
            overwrite: storage.overwrite,
            ..SChunkOptions::default()
        };
        strata_schunk::hand_out(out, s.copy_to(&loc, &opts)?);
        Ok(())
    })
}

/// Flushes written data to stable storage (per the sync policy). Returns 0, or
/// `STRATA_ERROR_FILE_WRITE` when the system fails.
///
/// # Safety
/// `schunk` NULL or a live handle, not used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_flush(schunk: *mut strata_schunk) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the handle.
        let s = unsafe { strata_schunk::get_mut(schunk) }?;
        Ok(s.flush()?)
    })
}

/// Flushes and frees the handle (freed even when the flush fails); NULL does nothing.
/// Returns 0, or `STRATA_ERROR_FILE_WRITE` when the final flush fails.
///
/// # Safety
/// `schunk` NULL or a live handle, not used again after the call.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_close(schunk: *mut strata_schunk) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { handle::close(schunk, SChunk::close) }
}

/// Frees the handle, flushing as `strata_schunk_close` does but ignoring a failure; NULL
/// does nothing.
///
/// # Safety
/// `schunk` NULL or a live handle, not used again after the call.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_free(schunk: *mut strata_schunk) {
    // SAFETY: forwarded from the caller.
    unsafe { handle::free(schunk) }
}

/// Runs `f` on the handle's super-chunk.
///
/// # Safety
/// `schunk` NULL or a live handle.
unsafe fn with<T>(schunk: *const strata_schunk, f: impl FnOnce(&SChunk) -> T) -> FfiResult<T> {
    // SAFETY: forwarded from the caller.
    let s = unsafe { strata_schunk::get(schunk) }?;
    Ok(f(s))
}

/// Number of chunks, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_nchunks(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.nchunks())) })
}

/// Uncompressed size of all chunks in bytes, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_nbytes(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.nbytes())) })
}

/// Compressed size in bytes as the frame header counts it (the chunk data section; for a
/// sparse frame the chunk files), or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_cbytes(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.cbytes())) })
}

/// Length of the frame in bytes (of `chunks.b2frame` for a sparse frame), or
/// `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_frame_len(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.frame_len())) })
}

/// Item size in bytes, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_typesize(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.typesize())) })
}

/// Bytes of every chunk but the last; 0 before the first chunk or for a frame with
/// variable-size chunks; or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_chunksize(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.chunksize().unwrap_or(0))) })
}

/// Writes the super-chunk's compression parameters (the frame header's, with this handle's
/// thread count) into `*out`. Returns 0 or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_get_cparams(
    schunk: *const strata_schunk,
    out: *mut strata_cparams,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (s, out) = unsafe { (strata_schunk::get(schunk)?, arg_mut(out, "out")?) };
        *out = strata_cparams::from(s.cparams());
        Ok(())
    })
}

/// Sets the threads this handle compresses and decompresses with (0 = the runtime's
/// default); the bytes written do not depend on them. Returns 0 or
/// `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle, not used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_set_nthreads(
    schunk: *mut strata_schunk,
    compress_nthreads: u32,
    decompress_nthreads: u32,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the handle.
        let s = unsafe { strata_schunk::get_mut(schunk) }?;
        s.set_nthreads(compress_nthreads as usize, decompress_nthreads as usize);
        Ok(())
    })
}

/// Runs `f` on the handle's super-chunk, mutably, with `(ptr, len)` as a byte slice.
///
/// # Safety
/// `schunk` NULL or a live handle not used elsewhere during the call; `ptr` readable for
/// `len` bytes.
unsafe fn with_input(
    schunk: *mut strata_schunk,
    ptr: *const u8,
    len: usize,
    f: impl FnOnce(&mut SChunk, &[u8]) -> crate::Result<i64>,
) -> FfiResult<i64> {
    // SAFETY: forwarded from the caller.
    let (s, data) = unsafe { (strata_schunk::get_mut(schunk)?, slice_in(ptr, len, "src")?) };
    Ok(f(s, data)?)
}

/// Runs `f` on the handle's super-chunk, mutably, with the C string `name` and `(ptr, len)` as
/// a byte slice; returns 0 or the error code.
///
/// # Safety
/// As [`with_input`]; `name` NULL or NUL-terminated.
unsafe fn named_input(
    schunk: *mut strata_schunk,
    name: *const c_char,
    ptr: *const u8,
    len: usize,
    f: impl FnOnce(&mut SChunk, &str, &[u8]) -> crate::Result<()>,
) -> i32 {
    call_status(|| {
        // SAFETY: forwarded from the caller.
        let name = unsafe { str_in(name, "name") }?;
        // SAFETY: forwarded from the caller.
        unsafe { with_input(schunk, ptr, len, |s, data| f(s, name, data).map(|()| 0)) }?;
        Ok(())
    })
}

/// Copies name `i` of `names(super-chunk)` (of `what`) NUL-terminated into `(buf, len)` with
/// the size-query rule.
///
/// # Safety
/// `schunk` NULL or a live handle; `buf` NULL or writable for `len` bytes.
unsafe fn nth_name(
    schunk: *const strata_schunk,
    i: i64,
    buf: *mut c_char,
    len: usize,
    what: &'static str,
    names: impl FnOnce(&SChunk) -> Vec<&str>,
) -> i64 {
    call(|| {
        // SAFETY: forwarded from the caller.
        let names = names(unsafe { strata_schunk::get(schunk) }?);
        let name = names
            .get(index(i, what)?)
            .ok_or_else(|| Error::index(what, i, names.len()))?;
        // SAFETY: forwarded from the caller.
        unsafe { name_out(name, buf, len) }
    })
}

/// Compresses `srclen` bytes at `src` as one chunk with the super-chunk's cparams and
/// appends it. Every chunk but the last must hold the same number of bytes (the first
/// chunk fixes it). Returns the new number of chunks, or `STRATA_ERROR_CHUNK_APPEND` (wrong
/// size), `STRATA_ERROR_FILE_WRITE` (read-only handle or a failed write),
/// `STRATA_ERROR_MAX_BUFSIZE_EXCEEDED`.
///
/// # Safety
/// `schunk` NULL or a live handle not used elsewhere during the call; `src` readable for
/// `srclen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_append_buffer(
    schunk: *mut strata_schunk,
    src: *const u8,
    srclen: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with_input(schunk, src, srclen, |s, d| Ok(count(s.append_buffer(d)?))) })
}

/// Cuts `srclen` bytes at `src` into chunks of the chunksize (before the first chunk: the
/// storage's `chunksize`), compresses them in parallel and appends them. Returns the new
/// number of chunks, or the errors of `strata_schunk_append_buffer`.
///
/// # Safety
/// As `strata_schunk_append_buffer`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_append_data(
    schunk: *mut strata_schunk,
    src: *const u8,
    srclen: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with_input(schunk, src, srclen, |s, d| Ok(count(s.append_data(d)?))) })
}

/// Appends the compressed chunk at `chunk` (`chunklen` bytes, e.g. from `strata_compress`
/// or `strata_schunk_get_chunk`), stored as it is. Returns the new number of chunks, or the
/// errors of `strata_schunk_append_buffer` and of parsing the chunk.
///
/// # Safety
/// `schunk` NULL or a live handle not used elsewhere during the call; `chunk` readable for
/// `chunklen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_append_chunk(
    schunk: *mut strata_schunk,
    chunk: *const u8,
    chunklen: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe {
        with_input(schunk, chunk, chunklen, |s, c| {
            Ok(count(s.append_chunk(c)?))
        })
    })
}

/// Inserts the compressed chunk at `chunk` before chunk `nchunk` (`nchunk == nchunks`
/// appends); a chunk inserted before the end must hold exactly the chunksize. Returns the new
/// number of chunks, or `STRATA_ERROR_INVALID_INDEX`, `STRATA_ERROR_CHUNK_INSERT`,
/// `STRATA_ERROR_FILE_WRITE` (handle not opened read-write).
///
/// # Safety
/// As `strata_schunk_append_chunk`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_insert_chunk(
    schunk: *mut strata_schunk,
    nchunk: i64,
    chunk: *const u8,
    chunklen: usize,
) -> i64 {
    call(|| {
        let n = index(nchunk, "chunk")?;
        // SAFETY: forwarded from the caller.
        unsafe {
            with_input(schunk, chunk, chunklen, |s, c| {
                Ok(count(s.insert_chunk(n, c)?))
            })
        }
    })
}

/// Replaces chunk `nchunk` by the compressed chunk at `chunk`. Returns 0, or
/// `STRATA_ERROR_INVALID_INDEX`, `STRATA_ERROR_CHUNK_UPDATE` (breaks the chunksize),
/// `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// As `strata_schunk_append_chunk`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_update_chunk(
    schunk: *mut strata_schunk,
    nchunk: i64,
    chunk: *const u8,
    chunklen: usize,
) -> i32 {
    call(|| {
        let n = index(nchunk, "chunk")?;
        // SAFETY: forwarded from the caller.
        unsafe {
            with_input(schunk, chunk, chunklen, |s, c| {
                s.update_chunk(n, c).map(|()| 0)
            })
        }
    }) as i32
}

/// Replaces `n` chunks in one commit: chunk `nchunks[i]` by the compressed chunk at
/// `chunks[i]`, `chunklens[i]` bytes long. On a file the bytes after the first replaced chunk
/// move once, and a crash leaves every chunk replaced or none. Returns 0, or the errors of
/// `strata_schunk_update_chunk`, or `STRATA_ERROR_INVALID_PARAM` when a chunk number appears
/// twice; every chunk is checked before anything is written.
///
/// # Safety
/// `schunk` as `strata_schunk_append_chunk`; `nchunks`, `chunks` and `chunklens` NULL (when
/// `n` is 0) or readable for `n` items each; each `chunks[i]` readable for `chunklens[i]`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_update_chunks(
    schunk: *mut strata_schunk,
    nchunks: *const i64,
    chunks: *const *const u8,
    chunklens: *const usize,
    n: usize,
) -> i32 {
    call_status(|| {
        // SAFETY: forwarded from the caller.
        let (s, numbers, ptrs, lens) = unsafe {
            (
                strata_schunk::get_mut(schunk)?,
                slice_in(nchunks, n, "nchunks")?,
                slice_in(chunks, n, "chunks")?,
                slice_in(chunklens, n, "chunklens")?,
            )
        };
        let mut updates = Vec::with_capacity(n);
        for ((&number, &ptr), &len) in numbers.iter().zip(ptrs).zip(lens) {
            // SAFETY: the caller guarantees each `chunks[i]` readable for `chunklens[i]`.
            let chunk = unsafe { slice_in(ptr, len, "chunks[i]")? };
            updates.push((index(number, "chunk")?, chunk));
        }
        Ok(s.update_chunks(&updates)?)
    })
}

/// Compresses `srclen` bytes at `src` with the super-chunk's cparams and replaces chunk
/// `nchunk` with them. Returns 0, or the errors of `strata_schunk_update_chunk`.
///
/// # Safety
/// As `strata_schunk_append_buffer`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_update_buffer(
    schunk: *mut strata_schunk,
    nchunk: i64,
    src: *const u8,
    srclen: usize,
) -> i32 {
    call(|| {
        let n = index(nchunk, "chunk")?;
        // SAFETY: forwarded from the caller.
        unsafe {
            with_input(schunk, src, srclen, |s, d| {
                s.update_buffer(n, d).map(|()| 0)
            })
        }
    }) as i32
}

/// Removes chunk `nchunk`. Returns the new number of chunks, or
/// `STRATA_ERROR_INVALID_INDEX`, `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `schunk` NULL or a live handle not used elsewhere during the call.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_delete_chunk(
    schunk: *mut strata_schunk,
    nchunk: i64,
) -> i64 {
    call(|| {
        let n = index(nchunk, "chunk")?;
        // SAFETY: forwarded from the caller.
        unsafe {
            with_input(schunk, std::ptr::null(), 0, |s, _| {
                Ok(count(s.delete_chunk(n)?))
            })
        }
    })
}

/// Fills an empty super-chunk with `nitems` items of a special value (`STRATA_SPECIAL_ZERO`,
/// `_NAN` for typesize 4 or 8, `_UNINIT`) in chunks of `chunksize` bytes, storing no chunk
/// data. Returns the number of chunks, or `STRATA_ERROR_FRAME_SPECIAL` (not empty),
/// `STRATA_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `schunk` NULL or a live handle not used elsewhere during the call.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_fill_special(
    schunk: *mut strata_schunk,
    nitems: i64,
    special: u8,
    chunksize: usize,
) -> i64 {
    call(|| {
        let kind = match special {
            STRATA_SPECIAL_ZERO => SpecialType::Zero,
            STRATA_SPECIAL_NAN => SpecialType::Nan,
            STRATA_SPECIAL_UNINIT => SpecialType::Uninit,
            other => {
                let kinds = Expected::OneOf("STRATA_SPECIAL_ZERO, _NAN or _UNINIT");
                return Err(Error::range("special", other, kinds).into());
            }
        };
        let nitems = u64::try_from(nitems)
            .map_err(|_| Error::range("nitems", nitems, Expected::AtLeast(0)))?;
        // SAFETY: forwarded from the caller.
        unsafe {
            with_input(schunk, std::ptr::null(), 0, |s, _| {
                Ok(count(s.fill_special(nitems, kind, chunksize)?))
            })
        }
    })
}

/// Copies compressed chunk `nchunk`, as stored (a special chunk as the 32-byte chunk
/// C-Blosc2 builds for it), into `dst` (`dstlen` bytes; `NULL, 0` asks for the size).
/// Returns the chunk's cbytes, or `STRATA_ERROR_INVALID_INDEX`, `STRATA_ERROR_WRITE_BUFFER`,
/// `STRATA_ERROR_INVALID_HEADER` / `STRATA_ERROR_FILE_READ` for a damaged frame.
///
/// # Safety
/// `schunk` NULL or a live handle; `dst` NULL or writable for `dstlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_get_chunk(
    schunk: *const strata_schunk,
    nchunk: i64,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the handle.
        let s = unsafe { strata_schunk::get(schunk) }?;
        let chunk = s.chunk(index(nchunk, "chunk")?)?;
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(&chunk, dst, dstlen) }
    })
}

/// Decompresses chunk `nchunk` into `dst` (`dstlen` bytes, at least its nbytes). Returns its
/// nbytes, or `STRATA_ERROR_INVALID_INDEX`, `STRATA_ERROR_WRITE_BUFFER`, and the errors of
/// `strata_decompress` (the message names the frame).
///
/// # Safety
/// `schunk` NULL or a live handle; `dst` writable for `dstlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_decompress_chunk(
    schunk: *const strata_schunk,
    nchunk: i64,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (s, dst) = unsafe { (strata_schunk::get(schunk)?, slice_out(dst, dstlen, "dst")?) };
        Ok(count(s.decompress_chunk(index(nchunk, "chunk")?, dst)?))
    })
}

/// Copies items `[start, start + nitems)` (of the typesize) of chunk `nchunk` into `dst`,
/// reading and decompressing only the blocks that hold them. Returns the bytes written, or
/// `STRATA_ERROR_INVALID_INDEX`, `STRATA_ERROR_WRITE_BUFFER`, and the errors of
/// `strata_schunk_decompress_chunk`.
///
/// # Safety
/// `schunk` NULL or a live handle; `dst` writable for `dstlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_getitem(
    schunk: *const strata_schunk,
    nchunk: i64,
    start: i64,
    nitems: i64,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (s, dst) = unsafe { (strata_schunk::get(schunk)?, slice_out(dst, dstlen, "dst")?) };
        let n = s.getitem(
            index(nchunk, "chunk")?,
            index(start, "item")?,
            index(nitems, "item count")?,
            dst,
        )?;
        Ok(count(n))
    })
}

/// Adds metalayer `name` (≤ 31 bytes) with `contentlen` bytes of `content` (python-blosc2
/// stores msgpack values); only before the first chunk. Returns 0, or
/// `STRATA_ERROR_INVALID_PARAM` (bad or taken name, 16 already, chunks present),
/// `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `schunk` NULL or a live handle not used elsewhere during the call; `name` NUL-terminated;
/// `content` readable for `contentlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_meta_add(
    schunk: *mut strata_schunk,
    name: *const c_char,
    content: *const u8,
    contentlen: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { named_input(schunk, name, content, contentlen, SChunk::meta_add) }
}

/// Overwrites metalayer `name` in place with `contentlen` bytes (not longer than the stored
/// content; a shorter one overwrites its first bytes, as C-Blosc2 does). Returns 0, or
/// `STRATA_ERROR_METALAYER_NOT_FOUND`, `STRATA_ERROR_INVALID_PARAM` (longer content).
///
/// # Safety
/// As `strata_schunk_meta_add`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_meta_update(
    schunk: *mut strata_schunk,
    name: *const c_char,
    content: *const u8,
    contentlen: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { named_input(schunk, name, content, contentlen, SChunk::meta_update) }
}

/// Copies the content of metalayer `name` into `dst` (`dstlen` bytes; `NULL, 0` asks for the
/// size). Returns its length in bytes, or `STRATA_ERROR_METALAYER_NOT_FOUND`,
/// `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `schunk` NULL or a live handle; `name` NUL-terminated; `dst` NULL or writable for
/// `dstlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_meta_get(
    schunk: *const strata_schunk,
    name: *const c_char,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (s, name) = unsafe { (strata_schunk::get(schunk)?, str_in(name, "name")?) };
        let content = s
            .meta(name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(content, dst, dstlen) }
    })
}

/// Number of metalayers, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_meta_count(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.meta_names().len())) })
}

/// Copies the name of metalayer `i` (0-based, in order) NUL-terminated into `buf` (`len`
/// bytes, at least the name's length + 1; `NULL, 0` asks for the length). Returns the
/// name's length without the NUL, or `STRATA_ERROR_INVALID_INDEX`,
/// `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `schunk` NULL or a live handle; `buf` NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_meta_name(
    schunk: *const strata_schunk,
    i: i64,
    buf: *mut c_char,
    len: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { nth_name(schunk, i, buf, len, "metalayer", SChunk::meta_names) }
}

/// Sets vlmetalayer `name` (≤ 31 bytes) to `contentlen` bytes of `content`, compressed as
/// python-blosc2 does (zstd, clevel 5), adding it or replacing its content. Returns 0, or
/// `STRATA_ERROR_INVALID_PARAM` (bad name, 16 already), `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// As `strata_schunk_meta_add`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_vlmeta_set(
    schunk: *mut strata_schunk,
    name: *const c_char,
    content: *const u8,
    contentlen: usize,
) -> i32 {
    let set = |s: &mut SChunk, name: &str, c: &[u8]| s.vlmeta_set(name, c, None);
    // SAFETY: forwarded from the caller.
    unsafe { named_input(schunk, name, content, contentlen, set) }
}

/// Copies the decompressed content of vlmetalayer `name` into `dst` (`dstlen` bytes;
/// `NULL, 0` asks for the size). Returns its length in bytes, or
/// `STRATA_ERROR_METALAYER_NOT_FOUND`, `STRATA_ERROR_WRITE_BUFFER`, decompression errors.
///
/// # Safety
/// As `strata_schunk_meta_get`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_vlmeta_get(
    schunk: *const strata_schunk,
    name: *const c_char,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (s, name) = unsafe { (strata_schunk::get(schunk)?, str_in(name, "name")?) };
        let content = s.vlmeta(name)?;
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(&content, dst, dstlen) }
    })
}

/// Removes vlmetalayer `name`. Returns 0, or `STRATA_ERROR_METALAYER_NOT_FOUND`,
/// `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `schunk` NULL or a live handle not used elsewhere during the call; `name` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_vlmeta_delete(
    schunk: *mut strata_schunk,
    name: *const c_char,
) -> i32 {
    let delete = |s: &mut SChunk, name: &str, _: &[u8]| s.vlmeta_delete(name);
    // SAFETY: forwarded from the caller.
    unsafe { named_input(schunk, name, std::ptr::null(), 0, delete) }
}

/// Number of vlmetalayers, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `schunk` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_vlmeta_count(schunk: *const strata_schunk) -> i64 {
    // SAFETY: forwarded from the caller.
    call(|| unsafe { with(schunk, |s| count(s.vlmeta_names().len())) })
}

/// Copies the name of vlmetalayer `i` as `strata_schunk_meta_name` does.
///
/// # Safety
/// As `strata_schunk_meta_name`.
#[no_mangle]
pub unsafe extern "C" fn strata_schunk_vlmeta_name(
    schunk: *const strata_schunk,
    i: i64,
    buf: *mut c_char,
    len: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { nth_name(schunk, i, buf, len, "vlmetalayer", SChunk::vlmeta_names) }
}
