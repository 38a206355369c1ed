"""
    LibStrata

The raw layer: one Julia function per C function of `include/strata.h`, each a single
`ccall` with the header's types, and the header's structs and constants. Nothing here checks
or converts; `Strata` (the Julian layer) does. `tests/julia_ccalls.rs` in the repository
checks every `ccall` and struct below against the header and the built library.

The library is `ENV["STRATA_LIBRARY"]` when set at load time (a path to `libstrata.so`),
else `libstrata` on the system's library path.
"""
module LibStrata

const libstrata = get(ENV, "STRATA_LIBRARY", "libstrata")

# ------------------------------------------------------------------ constants
const STRATA_ERROR_DATA = -3
const STRATA_ERROR_MEMORY_ALLOC = -4
const STRATA_ERROR_READ_BUFFER = -5
const STRATA_ERROR_WRITE_BUFFER = -6
const STRATA_ERROR_CODEC_SUPPORT = -7
const STRATA_ERROR_CODEC_PARAM = -8
const STRATA_ERROR_CODEC_DICT = -9
const STRATA_ERROR_VERSION_SUPPORT = -10
const STRATA_ERROR_INVALID_HEADER = -11
const STRATA_ERROR_INVALID_PARAM = -12
const STRATA_ERROR_FILE_READ = -13
const STRATA_ERROR_FILE_WRITE = -14
const STRATA_ERROR_FILE_OPEN = -15
const STRATA_ERROR_RUN_LENGTH = -17
const STRATA_ERROR_FILTER_PIPELINE = -18
const STRATA_ERROR_CHUNK_INSERT = -19
const STRATA_ERROR_CHUNK_APPEND = -20
const STRATA_ERROR_CHUNK_UPDATE = -21
const STRATA_ERROR_FRAME_TYPE = -24
const STRATA_ERROR_FILE_TRUNCATE = -25
const STRATA_ERROR_FRAME_SPECIAL = -28
const STRATA_ERROR_FILE_REMOVE = -31
const STRATA_ERROR_NULL_POINTER = -32
const STRATA_ERROR_INVALID_INDEX = -33
const STRATA_ERROR_METALAYER_NOT_FOUND = -34
const STRATA_ERROR_MAX_BUFSIZE_EXCEEDED = -35
const STRATA_ERROR_PLUGIN_PANIC = -1000
const STRATA_ERROR_PANIC = -1001
const STRATA_ERROR_PLUGIN_LOAD = -1002
const STRATA_ERROR_INTERNAL = -1003
const STRATA_ERROR_REMOTE = -1004

const STRATA_SYNC_NONE = 0
const STRATA_SYNC_ON_CLOSE = 1
const STRATA_SYNC_EVERY_WRITE = 2
const STRATA_OPEN_READ = 0
const STRATA_OPEN_READWRITE = 1
const STRATA_OPEN_APPEND = 2
const STRATA_SPECIAL_NONE = 0
const STRATA_SPECIAL_ZERO = 1
const STRATA_SPECIAL_NAN = 2
const STRATA_SPECIAL_VALUE = 3
const STRATA_SPECIAL_UNINIT = 4
const STRATA_MAX_DIM = 16

# ------------------------------------------------------------------ structs (C layout)
struct strata_cparams
    size::Csize_t
    codec::UInt8
    codec_meta::UInt8
    clevel::UInt8
    splitmode::UInt8
    typesize::UInt32
    blocksize::UInt32
    filters::NTuple{6,UInt8}
    filters_meta::NTuple{6,UInt8}
    use_dict::UInt8
    nthreads::UInt32
end

struct strata_dparams
    size::Csize_t
    nthreads::UInt32
end

struct strata_storage
    size::Csize_t
    sparse::UInt8
    overwrite::UInt8
    sync::UInt8
    chunksize::Csize_t
end

struct strata_chunk_info
    version::UInt8
    versionlz::UInt8
    flags::UInt8
    codec::UInt8
    codec_meta::UInt8
    special::UInt8
    header_len::UInt8
    blosc2_flags::UInt8
    typesize::Int32
    nbytes::Int32
    blocksize::Int32
    cbytes::Int32
    filters::NTuple{6,UInt8}
    filters_meta::NTuple{6,UInt8}
end

struct strata_runtime_config
    size::Csize_t
    workers::Int32
    nthreads::Int32
    pin::Int32
    l1d::Csize_t
    l2::Csize_t
    l3::Csize_t
end

struct strata_runtime_info
    workers::Int32
    nthreads::Int32
    pinned::Int32
    logical_cores::Int32
    physical_cores::Int32
    l1d::Csize_t
    l2::Csize_t
    l3::Csize_t
end

struct strata_ndarray_params
    size::Csize_t
    ndim::Int32
    shape::NTuple{16,Int64}
    chunkshape::NTuple{16,Int32}
    blockshape::NTuple{16,Int32}
    cparams::strata_cparams
    dparams::strata_dparams
end

struct strata_ndarray_info
    ndim::Int32
    typesize::Int32
    shape::NTuple{16,Int64}
    chunkshape::NTuple{16,Int32}
    blockshape::NTuple{16,Int32}
    nbytes::Int64
    cbytes::Int64
end

struct strata_metalayer
    name::Ptr{UInt8}
    content::Ptr{UInt8}
    contentlen::Csize_t
end

struct strata_cache_stats
    hits::UInt64
    misses::UInt64
    coalesced::UInt64
    inserts::UInt64
    evictions::UInt64
    bytes::UInt64
    entries::UInt64
    capacity::UInt64
end

"Opaque block cache handle (only `Ptr{strata_cache}` exists)."
mutable struct strata_cache end

"Opaque super-chunk handle (only `Ptr{strata_schunk}` exists)."
mutable struct strata_schunk end

"Opaque N-d array handle (only `Ptr{strata_ndarray}` exists)."
mutable struct strata_ndarray end

# ------------------------------------------------------------------ library, errors
strata_version() = ccall((:strata_version, libstrata), Cstring, ())

strata_abi_version() = ccall((:strata_abi_version, libstrata), UInt32, ())

strata_last_error(buf, len) =
    ccall((:strata_last_error, libstrata), Csize_t, (Ptr{UInt8}, Csize_t), buf, len)

strata_error_name(code, buf, len) =
    ccall((:strata_error_name, libstrata), Int64, (Int32, Ptr{UInt8}, Csize_t), code, buf, len)

# ------------------------------------------------------------------ parameters
strata_cparams_default(out) =
    ccall((:strata_cparams_default, libstrata), Int32, (Ptr{strata_cparams},), out)

strata_dparams_default(out) =
    ccall((:strata_dparams_default, libstrata), Int32, (Ptr{strata_dparams},), out)

strata_storage_default(out) =
    ccall((:strata_storage_default, libstrata), Int32, (Ptr{strata_storage},), out)

# ------------------------------------------------------------------ runtime
strata_runtime_config_default(out) =
    ccall((:strata_runtime_config_default, libstrata), Int32, (Ptr{strata_runtime_config},), out)

strata_runtime_configure(config) =
    ccall((:strata_runtime_configure, libstrata), Int32, (Ptr{strata_runtime_config},), config)

strata_runtime_get_info(out) =
    ccall((:strata_runtime_get_info, libstrata), Int32, (Ptr{strata_runtime_info},), out)

strata_runtime_set_nthreads(nthreads) =
    ccall((:strata_runtime_set_nthreads, libstrata), Int32, (Int32,), nthreads)

# ------------------------------------------------------------------ plugins
strata_load_plugin(path) = ccall((:strata_load_plugin, libstrata), Int32, (Cstring,), path)

# ------------------------------------------------------------------ chunks
strata_compress(cparams, src, srclen, dst, dstlen) =
    ccall((:strata_compress, libstrata), Int64,
          (Ptr{strata_cparams}, Ptr{UInt8}, Csize_t, Ptr{UInt8}, Csize_t),
          cparams, src, srclen, dst, dstlen)

strata_decompress(src, srclen, dst, dstlen) =
    ccall((:strata_decompress, libstrata), Int64,
          (Ptr{UInt8}, Csize_t, Ptr{UInt8}, Csize_t), src, srclen, dst, dstlen)

strata_getitem(src, srclen, start, nitems, dst, dstlen) =
    ccall((:strata_getitem, libstrata), Int64,
          (Ptr{UInt8}, Csize_t, Csize_t, Csize_t, Ptr{UInt8}, Csize_t),
          src, srclen, start, nitems, dst, dstlen)

strata_chunk_get_info(src, srclen, out) =
    ccall((:strata_chunk_get_info, libstrata), Int32,
          (Ptr{UInt8}, Csize_t, Ptr{strata_chunk_info}), src, srclen, out)

# ------------------------------------------------------------------ super-chunks
strata_schunk_create(urlpath, storage, cparams, dparams, out) =
    ccall((:strata_schunk_create, libstrata), Int32,
          (Ptr{UInt8}, Ptr{strata_storage}, Ptr{strata_cparams}, Ptr{strata_dparams},
           Ptr{Ptr{strata_schunk}}),
          urlpath, storage, cparams, dparams, out)

strata_schunk_open(urlpath, mode, sync, dparams, out) =
    ccall((:strata_schunk_open, libstrata), Int32,
          (Cstring, UInt8, UInt8, Ptr{strata_dparams}, Ptr{Ptr{strata_schunk}}),
          urlpath, mode, sync, dparams, out)

strata_schunk_from_cframe(src, srclen, out) =
    ccall((:strata_schunk_from_cframe, libstrata), Int32,
          (Ptr{UInt8}, Csize_t, Ptr{Ptr{strata_schunk}}), src, srclen, out)

strata_schunk_to_cframe(schunk, dst, dstlen) =
    ccall((:strata_schunk_to_cframe, libstrata), Int64,
          (Ptr{strata_schunk}, Ptr{UInt8}, Csize_t), schunk, dst, dstlen)

strata_schunk_copy(schunk, urlpath, storage, out) =
    ccall((:strata_schunk_copy, libstrata), Int32,
          (Ptr{strata_schunk}, Ptr{UInt8}, Ptr{strata_storage}, Ptr{Ptr{strata_schunk}}),
          schunk, urlpath, storage, out)

strata_schunk_flush(schunk) =
    ccall((:strata_schunk_flush, libstrata), Int32, (Ptr{strata_schunk},), schunk)

strata_schunk_close(schunk) =
    ccall((:strata_schunk_close, libstrata), Int32, (Ptr{strata_schunk},), schunk)

strata_schunk_free(schunk) =
    ccall((:strata_schunk_free, libstrata), Cvoid, (Ptr{strata_schunk},), schunk)

strata_schunk_nchunks(schunk) =
    ccall((:strata_schunk_nchunks, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_nbytes(schunk) =
    ccall((:strata_schunk_nbytes, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_cbytes(schunk) =
    ccall((:strata_schunk_cbytes, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_frame_len(schunk) =
    ccall((:strata_schunk_frame_len, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_typesize(schunk) =
    ccall((:strata_schunk_typesize, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_chunksize(schunk) =
    ccall((:strata_schunk_chunksize, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_get_cparams(schunk, out) =
    ccall((:strata_schunk_get_cparams, libstrata), Int32,
          (Ptr{strata_schunk}, Ptr{strata_cparams}), schunk, out)

strata_schunk_set_nthreads(schunk, compress_nthreads, decompress_nthreads) =
    ccall((:strata_schunk_set_nthreads, libstrata), Int32,
          (Ptr{strata_schunk}, UInt32, UInt32), schunk, compress_nthreads, decompress_nthreads)

strata_schunk_append_buffer(schunk, src, srclen) =
    ccall((:strata_schunk_append_buffer, libstrata), Int64,
          (Ptr{strata_schunk}, Ptr{UInt8}, Csize_t), schunk, src, srclen)

strata_schunk_append_data(schunk, src, srclen) =
    ccall((:strata_schunk_append_data, libstrata), Int64,
          (Ptr{strata_schunk}, Ptr{UInt8}, Csize_t), schunk, src, srclen)

strata_schunk_append_chunk(schunk, chunk, chunklen) =
    ccall((:strata_schunk_append_chunk, libstrata), Int64,
          (Ptr{strata_schunk}, Ptr{UInt8}, Csize_t), schunk, chunk, chunklen)

strata_schunk_insert_chunk(schunk, nchunk, chunk, chunklen) =
    ccall((:strata_schunk_insert_chunk, libstrata), Int64,
          (Ptr{strata_schunk}, Int64, Ptr{UInt8}, Csize_t), schunk, nchunk, chunk, chunklen)

strata_schunk_update_chunk(schunk, nchunk, chunk, chunklen) =
    ccall((:strata_schunk_update_chunk, libstrata), Int32,
          (Ptr{strata_schunk}, Int64, Ptr{UInt8}, Csize_t), schunk, nchunk, chunk, chunklen)

strata_schunk_update_chunks(schunk, nchunks, chunks, chunklens, n) =
    ccall((:strata_schunk_update_chunks, libstrata), Int32,
          (Ptr{strata_schunk}, Ptr{Int64}, Ptr{Ptr{UInt8}}, Ptr{Csize_t}, Csize_t),
          schunk, nchunks, chunks, chunklens, n)

strata_schunk_update_buffer(schunk, nchunk, src, srclen) =
    ccall((:strata_schunk_update_buffer, libstrata), Int32,
          (Ptr{strata_schunk}, Int64, Ptr{UInt8}, Csize_t), schunk, nchunk, src, srclen)

strata_schunk_delete_chunk(schunk, nchunk) =
    ccall((:strata_schunk_delete_chunk, libstrata), Int64,
          (Ptr{strata_schunk}, Int64), schunk, nchunk)

strata_schunk_fill_special(schunk, nitems, special, chunksize) =
    ccall((:strata_schunk_fill_special, libstrata), Int64,
          (Ptr{strata_schunk}, Int64, UInt8, Csize_t), schunk, nitems, special, chunksize)

strata_schunk_get_chunk(schunk, nchunk, dst, dstlen) =
    ccall((:strata_schunk_get_chunk, libstrata), Int64,
          (Ptr{strata_schunk}, Int64, Ptr{UInt8}, Csize_t), schunk, nchunk, dst, dstlen)

strata_schunk_decompress_chunk(schunk, nchunk, dst, dstlen) =
    ccall((:strata_schunk_decompress_chunk, libstrata), Int64,
          (Ptr{strata_schunk}, Int64, Ptr{UInt8}, Csize_t), schunk, nchunk, dst, dstlen)

strata_schunk_getitem(schunk, nchunk, start, nitems, dst, dstlen) =
    ccall((:strata_schunk_getitem, libstrata), Int64,
          (Ptr{strata_schunk}, Int64, Int64, Int64, Ptr{UInt8}, Csize_t),
          schunk, nchunk, start, nitems, dst, dstlen)

strata_schunk_meta_add(schunk, name, content, contentlen) =
    ccall((:strata_schunk_meta_add, libstrata), Int32,
          (Ptr{strata_schunk}, Cstring, Ptr{UInt8}, Csize_t), schunk, name, content, contentlen)

strata_schunk_meta_update(schunk, name, content, contentlen) =
    ccall((:strata_schunk_meta_update, libstrata), Int32,
          (Ptr{strata_schunk}, Cstring, Ptr{UInt8}, Csize_t), schunk, name, content, contentlen)

strata_schunk_meta_get(schunk, name, dst, dstlen) =
    ccall((:strata_schunk_meta_get, libstrata), Int64,
          (Ptr{strata_schunk}, Cstring, Ptr{UInt8}, Csize_t), schunk, name, dst, dstlen)

strata_schunk_meta_count(schunk) =
    ccall((:strata_schunk_meta_count, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_meta_name(schunk, i, buf, len) =
    ccall((:strata_schunk_meta_name, libstrata), Int64,
          (Ptr{strata_schunk}, Int64, Ptr{UInt8}, Csize_t), schunk, i, buf, len)

strata_schunk_vlmeta_set(schunk, name, content, contentlen) =
    ccall((:strata_schunk_vlmeta_set, libstrata), Int32,
          (Ptr{strata_schunk}, Cstring, Ptr{UInt8}, Csize_t), schunk, name, content, contentlen)

strata_schunk_vlmeta_get(schunk, name, dst, dstlen) =
    ccall((:strata_schunk_vlmeta_get, libstrata), Int64,
          (Ptr{strata_schunk}, Cstring, Ptr{UInt8}, Csize_t), schunk, name, dst, dstlen)

strata_schunk_vlmeta_delete(schunk, name) =
    ccall((:strata_schunk_vlmeta_delete, libstrata), Int32,
          (Ptr{strata_schunk}, Cstring), schunk, name)

strata_schunk_vlmeta_count(schunk) =
    ccall((:strata_schunk_vlmeta_count, libstrata), Int64, (Ptr{strata_schunk},), schunk)

strata_schunk_vlmeta_name(schunk, i, buf, len) =
    ccall((:strata_schunk_vlmeta_name, libstrata), Int64,
          (Ptr{strata_schunk}, Int64, Ptr{UInt8}, Csize_t), schunk, i, buf, len)

# ------------------------------------------------------------------ N-d arrays (C order)
strata_ndarray_params_default(out) =
    ccall((:strata_ndarray_params_default, libstrata), Int32, (Ptr{strata_ndarray_params},), out)

strata_ndarray_uninit(urlpath, storage, params, dtype, out) =
    ccall((:strata_ndarray_uninit, libstrata), Int32,
          (Ptr{UInt8}, Ptr{strata_storage}, Ptr{strata_ndarray_params}, Ptr{UInt8}, Ptr{Ptr{strata_ndarray}}),
          urlpath, storage, params, dtype, out)

strata_ndarray_zeros(urlpath, storage, params, dtype, out) =
    ccall((:strata_ndarray_zeros, libstrata), Int32,
          (Ptr{UInt8}, Ptr{strata_storage}, Ptr{strata_ndarray_params}, Ptr{UInt8}, Ptr{Ptr{strata_ndarray}}),
          urlpath, storage, params, dtype, out)

strata_ndarray_full(urlpath, storage, params, dtype, value, valuelen, out) =
    ccall((:strata_ndarray_full, libstrata), Int32,
          (Ptr{UInt8}, Ptr{strata_storage}, Ptr{strata_ndarray_params}, Ptr{UInt8}, Ptr{UInt8}, Csize_t,
           Ptr{Ptr{strata_ndarray}}),
          urlpath, storage, params, dtype, value, valuelen, out)

strata_ndarray_from_buffer(urlpath, storage, params, dtype, src, srclen, out) =
    ccall((:strata_ndarray_from_buffer, libstrata), Int32,
          (Ptr{UInt8}, Ptr{strata_storage}, Ptr{strata_ndarray_params}, Ptr{UInt8}, Ptr{UInt8}, Csize_t,
           Ptr{Ptr{strata_ndarray}}),
          urlpath, storage, params, dtype, src, srclen, out)

strata_ndarray_open(urlpath, mode, sync, out) =
    ccall((:strata_ndarray_open, libstrata), Int32,
          (Cstring, UInt8, UInt8, Ptr{Ptr{strata_ndarray}}), urlpath, mode, sync, out)

strata_ndarray_from_cframe(src, srclen, out) =
    ccall((:strata_ndarray_from_cframe, libstrata), Int32,
          (Ptr{UInt8}, Csize_t, Ptr{Ptr{strata_ndarray}}), src, srclen, out)

strata_ndarray_to_cframe(array, dst, dstlen) =
    ccall((:strata_ndarray_to_cframe, libstrata), Int64,
          (Ptr{strata_ndarray}, Ptr{UInt8}, Csize_t), array, dst, dstlen)

strata_ndarray_save(array, urlpath) =
    ccall((:strata_ndarray_save, libstrata), Int32, (Ptr{strata_ndarray}, Cstring), array, urlpath)

strata_ndarray_close(array) =
    ccall((:strata_ndarray_close, libstrata), Int32, (Ptr{strata_ndarray},), array)

strata_ndarray_free(array) =
    ccall((:strata_ndarray_free, libstrata), Cvoid, (Ptr{strata_ndarray},), array)

strata_ndarray_get_info(array, out) =
    ccall((:strata_ndarray_get_info, libstrata), Int32,
          (Ptr{strata_ndarray}, Ptr{strata_ndarray_info}), array, out)

strata_ndarray_dtype(array, buf, len) =
    ccall((:strata_ndarray_dtype, libstrata), Int64,
          (Ptr{strata_ndarray}, Ptr{UInt8}, Csize_t), array, buf, len)

strata_ndarray_set_nthreads(array, compress_nthreads, decompress_nthreads) =
    ccall((:strata_ndarray_set_nthreads, libstrata), Int32,
          (Ptr{strata_ndarray}, UInt32, UInt32), array, compress_nthreads, decompress_nthreads)

strata_ndarray_get_slice(array, ndim, start, stop, step, dst, dstlen) =
    ccall((:strata_ndarray_get_slice, libstrata), Int64,
          (Ptr{strata_ndarray}, Int32, Ptr{Int64}, Ptr{Int64}, Ptr{Int64}, Ptr{UInt8}, Csize_t),
          array, ndim, start, stop, step, dst, dstlen)

strata_ndarray_set_slice(array, ndim, start, stop, step, src, srclen) =
    ccall((:strata_ndarray_set_slice, libstrata), Int32,
          (Ptr{strata_ndarray}, Int32, Ptr{Int64}, Ptr{Int64}, Ptr{Int64}, Ptr{UInt8}, Csize_t),
          array, ndim, start, stop, step, src, srclen)

strata_ndarray_open_hdf5(path, dataset, out) =
    ccall((:strata_ndarray_open_hdf5, libstrata), Int32,
          (Cstring, Cstring, Ptr{Ptr{strata_ndarray}}), path, dataset, out)

strata_ndarray_export_hdf5(array, path, dataset, overwrite) =
    ccall((:strata_ndarray_export_hdf5, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Cstring, Int32), array, path, dataset, overwrite)

strata_ndarray_resize(array, ndim, new_shape) =
    ccall((:strata_ndarray_resize, libstrata), Int32,
          (Ptr{strata_ndarray}, Int32, Ptr{Int64}), array, ndim, new_shape)

# ------------------------------------------------------------------ changes along an axis
strata_ndarray_append(array, axis, src, srclen) =
    ccall((:strata_ndarray_append, libstrata), Int64,
          (Ptr{strata_ndarray}, Int32, Ptr{UInt8}, Csize_t), array, axis, src, srclen)

strata_ndarray_insert(array, axis, position, src, srclen) =
    ccall((:strata_ndarray_insert, libstrata), Int64,
          (Ptr{strata_ndarray}, Int32, Int64, Ptr{UInt8}, Csize_t), array, axis, position, src, srclen)

strata_ndarray_delete(array, axis, start, len) =
    ccall((:strata_ndarray_delete, libstrata), Int64,
          (Ptr{strata_ndarray}, Int32, Int64, Int64), array, axis, start, len)

strata_ndarray_resize_at(array, ndim, new_shape, start) =
    ccall((:strata_ndarray_resize_at, libstrata), Int32,
          (Ptr{strata_ndarray}, Int32, Ptr{Int64}, Ptr{Int64}), array, ndim, new_shape, start)

strata_ndarray_concatenate(arrays, narrays, axis, urlpath, storage, out) =
    ccall((:strata_ndarray_concatenate, libstrata), Int32,
          (Ptr{Ptr{strata_ndarray}}, Csize_t, Int32, Ptr{UInt8}, Ptr{strata_storage}, Ptr{Ptr{strata_ndarray}}),
          arrays, narrays, axis, urlpath, storage, out)

strata_ndarray_stack(arrays, narrays, axis, urlpath, storage, out) =
    ccall((:strata_ndarray_stack, libstrata), Int32,
          (Ptr{Ptr{strata_ndarray}}, Csize_t, Int32, Ptr{UInt8}, Ptr{strata_storage}, Ptr{Ptr{strata_ndarray}}),
          arrays, narrays, axis, urlpath, storage, out)

strata_ndarray_set_cache(array, cache) =
    ccall((:strata_ndarray_set_cache, libstrata), Int32,
          (Ptr{strata_ndarray}, Ptr{strata_cache}), array, cache)

# ------------------------------------------------------------------ N-d attributes and parameters
strata_ndarray_get_cparams(array, out) =
    ccall((:strata_ndarray_get_cparams, libstrata), Int32,
          (Ptr{strata_ndarray}, Ptr{strata_cparams}), array, out)

strata_ndarray_zeros_with_meta(urlpath, storage, params, dtype, metalayers, nmetalayers, out) =
    ccall((:strata_ndarray_zeros_with_meta, libstrata), Int32,
          (Ptr{UInt8}, Ptr{strata_storage}, Ptr{strata_ndarray_params}, Ptr{UInt8}, Ptr{strata_metalayer},
           Csize_t, Ptr{Ptr{strata_ndarray}}),
          urlpath, storage, params, dtype, metalayers, nmetalayers, out)

strata_ndarray_meta_get(array, name, dst, dstlen) =
    ccall((:strata_ndarray_meta_get, libstrata), Int64,
          (Ptr{strata_ndarray}, Cstring, Ptr{UInt8}, Csize_t), array, name, dst, dstlen)

strata_ndarray_meta_set(array, name, content, contentlen) =
    ccall((:strata_ndarray_meta_set, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Ptr{UInt8}, Csize_t), array, name, content, contentlen)

strata_ndarray_meta_count(array) =
    ccall((:strata_ndarray_meta_count, libstrata), Int64, (Ptr{strata_ndarray},), array)

strata_ndarray_meta_name(array, i, buf, len) =
    ccall((:strata_ndarray_meta_name, libstrata), Int64,
          (Ptr{strata_ndarray}, Int64, Ptr{UInt8}, Csize_t), array, i, buf, len)

strata_ndarray_vlmeta_set(array, name, content, contentlen) =
    ccall((:strata_ndarray_vlmeta_set, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Ptr{UInt8}, Csize_t), array, name, content, contentlen)

strata_ndarray_vlmeta_get(array, name, dst, dstlen) =
    ccall((:strata_ndarray_vlmeta_get, libstrata), Int64,
          (Ptr{strata_ndarray}, Cstring, Ptr{UInt8}, Csize_t), array, name, dst, dstlen)

strata_ndarray_vlmeta_delete(array, name) =
    ccall((:strata_ndarray_vlmeta_delete, libstrata), Int32, (Ptr{strata_ndarray}, Cstring), array, name)

strata_ndarray_vlmeta_count(array) =
    ccall((:strata_ndarray_vlmeta_count, libstrata), Int64, (Ptr{strata_ndarray},), array)

strata_ndarray_vlmeta_name(array, i, buf, len) =
    ccall((:strata_ndarray_vlmeta_name, libstrata), Int64,
          (Ptr{strata_ndarray}, Int64, Ptr{UInt8}, Csize_t), array, i, buf, len)

strata_ndarray_vlmeta_set_int64(array, name, value) =
    ccall((:strata_ndarray_vlmeta_set_int64, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Int64), array, name, value)

strata_ndarray_vlmeta_get_int64(array, name, out) =
    ccall((:strata_ndarray_vlmeta_get_int64, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Ptr{Int64}), array, name, out)

strata_ndarray_vlmeta_set_float64(array, name, value) =
    ccall((:strata_ndarray_vlmeta_set_float64, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Float64), array, name, value)

strata_ndarray_vlmeta_get_float64(array, name, out) =
    ccall((:strata_ndarray_vlmeta_get_float64, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Ptr{Float64}), array, name, out)

strata_ndarray_vlmeta_set_string(array, name, value) =
    ccall((:strata_ndarray_vlmeta_set_string, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Cstring), array, name, value)

strata_ndarray_vlmeta_get_string(array, name, buf, len) =
    ccall((:strata_ndarray_vlmeta_get_string, libstrata), Int64,
          (Ptr{strata_ndarray}, Cstring, Ptr{UInt8}, Csize_t), array, name, buf, len)

strata_ndarray_vlmeta_set_int64_array(array, name, values, n) =
    ccall((:strata_ndarray_vlmeta_set_int64_array, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Ptr{Int64}, Csize_t), array, name, values, n)

strata_ndarray_vlmeta_set_float64_array(array, name, values, n) =
    ccall((:strata_ndarray_vlmeta_set_float64_array, libstrata), Int32,
          (Ptr{strata_ndarray}, Cstring, Ptr{Float64}, Csize_t), array, name, values, n)

strata_ndarray_vlmeta_get_int64_array(array, name, dst, n) =
    ccall((:strata_ndarray_vlmeta_get_int64_array, libstrata), Int64,
          (Ptr{strata_ndarray}, Cstring, Ptr{Int64}, Csize_t), array, name, dst, n)

strata_ndarray_vlmeta_get_float64_array(array, name, dst, n) =
    ccall((:strata_ndarray_vlmeta_get_float64_array, libstrata), Int64,
          (Ptr{strata_ndarray}, Cstring, Ptr{Float64}, Csize_t), array, name, dst, n)

strata_codec_id(name) = ccall((:strata_codec_id, libstrata), Int32, (Cstring,), name)

strata_codec_name(id, buf, len) =
    ccall((:strata_codec_name, libstrata), Int64, (UInt8, Ptr{UInt8}, Csize_t), id, buf, len)

strata_filter_id(name) = ccall((:strata_filter_id, libstrata), Int32, (Cstring,), name)

strata_filter_name(id, buf, len) =
    ccall((:strata_filter_name, libstrata), Int64, (UInt8, Ptr{UInt8}, Csize_t), id, buf, len)

# ------------------------------------------------------------------ block cache
strata_cache_new(capacity) =
    ccall((:strata_cache_new, libstrata), Ptr{strata_cache}, (UInt64,), capacity)

strata_cache_free(cache) =
    ccall((:strata_cache_free, libstrata), Cvoid, (Ptr{strata_cache},), cache)

strata_cache_get_stats(cache, out) =
    ccall((:strata_cache_get_stats, libstrata), Int32,
          (Ptr{strata_cache}, Ptr{strata_cache_stats}), cache, out)

strata_cache_clear(cache) =
    ccall((:strata_cache_clear, libstrata), Int32, (Ptr{strata_cache},), cache)

end # module LibStrata
