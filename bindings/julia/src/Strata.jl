"""
    Strata

Julia bindings to Strata, a Blosc2-compatible engine for chunked, compressed N-dimensional
arrays: compress and decompress chunks, super-chunks in frame files (`.b2frame`) and sparse
frame directories, b2nd arrays (`.b2nd`) that python-blosc2 and C-Blosc2 open.

Two layers: [`LibStrata`](@ref) holds one `ccall` per C function of `strata.h`; this module
wraps them for Julia: arrays in and out, 1-based indices, errors thrown as
[`StrataError`](@ref) with the library's message.

Column-major order: Julia arrays store the first index fastest; b2nd arrays are C order (the
last index fastest). An `Array{T,N}` of size `(n1, ..., nN)` is stored as a b2nd array of
shape `(nN, ..., n1)`: the bytes are the same, the dimensions reversed. Python sees the
transpose of what Julia sees.
"""
module Strata

include("LibStrata.jl")

export StrataError, compress, decompress, getitem, chunkinfo
export SChunk, nchunks, nbytes, cbytes, typesize, chunksize
export append_chunk!, insert_chunk!, update_chunk!, update_chunks!, delete_chunk!, chunk, decompress_chunk
export meta, meta!, metanames, vlmeta, vlmeta!, delete_vlmeta!, vlmetanames, to_cframe
export NDArray, chunks, blocks, dtype, save, open_hdf5, export_hdf5, concatenate, stack_arrays
export BlockCache, cachestats, set_cache!, clear!

# ------------------------------------------------------------------ errors

"""
    StrataError(code, name, message)

A failed call: `code` is the negative `STRATA_ERROR_*` code, `name` its macro name
(`"STRATA_ERROR_WRITE_BUFFER"`), `message` what `strata_last_error` said.
"""
struct StrataError <: Exception
    code::Int
    name::String
    message::String
end

Base.showerror(io::IO, e::StrataError) = print(io, "StrataError ", e.name, " (", e.code, "): ", e.message)

"This thread's last error message."
function last_error()
    n = LibStrata.strata_last_error(C_NULL, 0)
    buf = Vector{UInt8}(undef, n + 1)
    LibStrata.strata_last_error(buf, length(buf))
    return String(buf[1:n])
end

"The macro name of an error code, e.g. `\"STRATA_ERROR_DATA\"` for -3."
function error_name(code::Integer)
    n = LibStrata.strata_error_name(Int32(code), C_NULL, 0)
    n < 0 && return "unknown error $code"
    buf = Vector{UInt8}(undef, n + 1)
    LibStrata.strata_error_name(Int32(code), buf, length(buf))
    return String(buf[1:n])
end

"Returns `rc` when it is not negative, else throws the call's [`StrataError`](@ref)."
function check(rc::Integer)
    rc >= 0 && return rc
    msg = last_error()
    throw(StrataError(Int(rc), error_name(rc), msg))
end

"The library version string, e.g. `\"0.1.0\"`."
version() = unsafe_string(LibStrata.strata_version())

# ------------------------------------------------------------------ parameters

const CODECS = Dict(:blosclz => 0, :lz4 => 1, :lz4hc => 2, :zlib => 4, :zstd => 5)
const FILTERS = Dict(:nofilter => 0, :shuffle => 1, :bitshuffle => 2, :delta => 3,
                     :trunc_prec => 4, :bytedelta => 35)
const SYNCS = Dict(:none => LibStrata.STRATA_SYNC_NONE, :on_close => LibStrata.STRATA_SYNC_ON_CLOSE,
                   :every_write => LibStrata.STRATA_SYNC_EVERY_WRITE)
const MODES = Dict(:read => LibStrata.STRATA_OPEN_READ, :readwrite => LibStrata.STRATA_OPEN_READWRITE,
                   :append => LibStrata.STRATA_OPEN_APPEND)

codec_id(c::Integer) = UInt8(c)
codec_id(c::Symbol) = UInt8(get(() -> throw(ArgumentError("unknown codec $c; one of $(keys(CODECS))")), CODECS, c))
filter_id(f::Integer) = UInt8(f)
filter_id(f::Symbol) = UInt8(get(() -> throw(ArgumentError("unknown filter $f; one of $(keys(FILTERS))")), FILTERS, f))

"""
    cparams(; typesize, codec=:blosclz, clevel=5, filters=[:shuffle], filters_meta=[], nthreads=0,
            blocksize=0, splitmode=4, use_dict=false)

Compression parameters (`strata_cparams`): codec `:blosclz`, `:lz4`, `:lz4hc`, `:zlib`,
`:zstd` or an ID; up to 6 filters (`:shuffle`, `:bitshuffle`, `:delta`, `:trunc_prec`,
`:bytedelta` or IDs) applied in order; `typesize` in bytes.
"""
function cparams(; typesize::Integer, codec = :blosclz, clevel::Integer = 5, filters = [:shuffle],
                 filters_meta = UInt8[], nthreads::Integer = 0, blocksize::Integer = 0,
                 splitmode::Integer = 4, use_dict::Bool = false)
    length(filters) <= 6 || throw(ArgumentError("at most 6 filters"))
    d = Ref{LibStrata.strata_cparams}()
    check(LibStrata.strata_cparams_default(d))
    f = ntuple(i -> i <= length(filters) ? filter_id(filters[i]) : 0x00, 6)
    m = ntuple(i -> i <= length(filters_meta) ? UInt8(filters_meta[i]) : 0x00, 6)
    return LibStrata.strata_cparams(d[].size, codec_id(codec), 0x00, UInt8(clevel), UInt8(splitmode),
                                    UInt32(typesize), UInt32(blocksize), f, m, UInt8(use_dict),
                                    UInt32(nthreads))
end

"Decompression parameters (`strata_dparams`)."
function dparams(; nthreads::Integer = 0)
    d = Ref{LibStrata.strata_dparams}()
    check(LibStrata.strata_dparams_default(d))
    return LibStrata.strata_dparams(d[].size, UInt32(nthreads))
end

"Storage settings (`strata_storage`) for a new frame or array."
function storage(; sparse::Bool = false, overwrite::Bool = false, sync::Symbol = :on_close,
                 chunksize::Integer = 0)
    d = Ref{LibStrata.strata_storage}()
    check(LibStrata.strata_storage_default(d))
    return LibStrata.strata_storage(d[].size, UInt8(sparse), UInt8(overwrite), UInt8(SYNCS[sync]),
                                    Csize_t(chunksize))
end

# ------------------------------------------------------------------ runtime

"""
    configure_runtime(; workers=-1, nthreads=0, pin=-1, l1d=0, l2=0, l3=0)

Creates the process runtime before any other call (see `strata_runtime_configure`): worker
threads (-1 one per core), default threads per job, pinning (-1 default, 0 off, 1 on), cache
sizes in bytes (0 detected).
"""
function configure_runtime(; workers::Integer = -1, nthreads::Integer = 0, pin::Integer = -1,
                           l1d::Integer = 0, l2::Integer = 0, l3::Integer = 0)
    d = Ref{LibStrata.strata_runtime_config}()
    check(LibStrata.strata_runtime_config_default(d))
    cfg = LibStrata.strata_runtime_config(d[].size, Int32(workers), Int32(nthreads), Int32(pin),
                                          Csize_t(l1d), Csize_t(l2), Csize_t(l3))
    check(LibStrata.strata_runtime_configure(Ref(cfg)))
    return nothing
end

"The process runtime: workers, threads, pinning, cores and cache sizes (a NamedTuple)."
function runtime_info()
    r = Ref{LibStrata.strata_runtime_info}()
    check(LibStrata.strata_runtime_get_info(r))
    i = r[]
    return (workers = Int(i.workers), nthreads = Int(i.nthreads), pinned = i.pinned != 0,
            logical_cores = Int(i.logical_cores), physical_cores = Int(i.physical_cores),
            l1d = Int(i.l1d), l2 = Int(i.l2), l3 = Int(i.l3))
end

"Sets the default threads per job (≥ 1)."
set_nthreads(n::Integer) = (check(LibStrata.strata_runtime_set_nthreads(Int32(n))); nothing)

"Loads a plugin library; returns how many codecs and filters it registered."
load_plugin(path::AbstractString) = Int(check(LibStrata.strata_load_plugin(path)))

# ------------------------------------------------------------------ chunks

bitstype_check(::Type{T}) where {T} =
    isbitstype(T) || throw(ArgumentError("$T is not a bits type: Strata stores plain items"))

"""
    compress(A; codec=:blosclz, clevel=5, filters=[:shuffle], kw...) -> Vector{UInt8}

One Blosc2 chunk holding the items of `A` (contiguous, of a bits type), typesize `sizeof(eltype(A))`.
"""
function compress(A::Array{T}; kw...) where {T}
    bitstype_check(T)
    p = cparams(; typesize = sizeof(T), kw...)
    dst = Vector{UInt8}(undef, sizeof(A) + 32)
    n = check(LibStrata.strata_compress(Ref(p), A, sizeof(A), dst, length(dst)))
    return resize!(dst, n)
end

"""
    chunkinfo(chunk) -> NamedTuple

The chunk header's fields: version, codec, typesize, nbytes, cbytes, blocksize, filters, special.
"""
function chunkinfo(chunk::Vector{UInt8})
    r = Ref{LibStrata.strata_chunk_info}()
    check(LibStrata.strata_chunk_get_info(chunk, length(chunk), r))
    i = r[]
    return (version = Int(i.version), codec = Int(i.codec), codec_meta = Int(i.codec_meta),
            typesize = Int(i.typesize), nbytes = Int(i.nbytes), cbytes = Int(i.cbytes),
            blocksize = Int(i.blocksize), filters = collect(i.filters),
            filters_meta = collect(i.filters_meta), special = Int(i.special))
end

"""
    decompress(T, chunk) -> Vector{T}

The items of a chunk as a vector of `T`.
"""
function decompress(::Type{T}, chunk::Vector{UInt8}) where {T}
    bitstype_check(T)
    nb = chunkinfo(chunk).nbytes
    nb % sizeof(T) == 0 || throw(ArgumentError("chunk of $nb bytes is not a whole number of $T"))
    out = Vector{T}(undef, nb ÷ sizeof(T))
    check(LibStrata.strata_decompress(chunk, length(chunk), out, sizeof(out)))
    return out
end

"""
    getitem(T, chunk, range) -> Vector{T}

Items `range` (1-based) of a chunk, decompressing only the blocks that hold them.
"""
function getitem(::Type{T}, chunk::Vector{UInt8}, range::UnitRange{<:Integer}) where {T}
    bitstype_check(T)
    out = Vector{T}(undef, length(range))
    check(LibStrata.strata_getitem(chunk, length(chunk), first(range) - 1, length(range), out, sizeof(out)))
    return out
end

# ------------------------------------------------------------------ super-chunks

function checked_path(path::AbstractString)
    '\0' in path && throw(ArgumentError("path contains a NUL byte"))
    return String(path)
end

"""
    SChunk

A super-chunk: chunks with metalayers and vlmetalayers in a Blosc2 frame (memory, a
`.b2frame` file, or a sparse directory). Made by [`SChunk(; ...)`](@ref), [`Strata.open`] or
`SChunk(frame::Vector{UInt8})`; freed by `close` or the garbage collector. Chunk indices are
1-based.
"""
mutable struct SChunk
    handle::Ptr{LibStrata.strata_schunk}
    function SChunk(handle::Ptr{LibStrata.strata_schunk})
        s = new(handle)
        finalizer(s) do x
            LibStrata.strata_schunk_free(x.handle)
            x.handle = C_NULL
        end
        return s
    end
end

# A SChunk passed to a ccall stays rooted and gives its handle.
Base.cconvert(::Type{Ptr{LibStrata.strata_schunk}}, s::SChunk) = s
function Base.unsafe_convert(::Type{Ptr{LibStrata.strata_schunk}}, s::SChunk)
    s.handle == C_NULL && throw(ArgumentError("the SChunk is closed"))
    return s.handle
end

"""
    SChunk(; path=nothing, typesize, sparse=false, overwrite=false, sync=:on_close, chunksize=0,
           nthreads=0, cparams...)

A new, empty super-chunk: in memory (`path === nothing`), a frame file, or with `sparse` a
frame directory. `cparams...` as for [`compress`](@ref).
"""
function SChunk(; path::Union{Nothing,AbstractString} = nothing, typesize::Integer, sparse::Bool = false,
                overwrite::Bool = false, sync::Symbol = :on_close, chunksize::Integer = 0,
                decompress_nthreads::Integer = 0, kw...)
    cp = cparams(; typesize = typesize, kw...)
    st = storage(; sparse = sparse, overwrite = overwrite, sync = sync, chunksize = chunksize)
    dp = dparams(; nthreads = decompress_nthreads)
    out = Ref{Ptr{LibStrata.strata_schunk}}(C_NULL)
    p = path === nothing ? C_NULL : checked_path(path)
    check(LibStrata.strata_schunk_create(p, Ref(st), Ref(cp), Ref(dp), out))
    return SChunk(out[])
end

"A writable in-memory super-chunk from a copy of a contiguous frame's bytes."
function SChunk(frame::Vector{UInt8})
    out = Ref{Ptr{LibStrata.strata_schunk}}(C_NULL)
    check(LibStrata.strata_schunk_from_cframe(frame, length(frame), out))
    return SChunk(out[])
end

"""
    Strata.open(path; mode=:read, sync=:on_close) -> SChunk

Opens a frame file or sparse frame directory; `mode` is `:read`, `:readwrite` or `:append`.
An `http://` or `https://` URL opens a remote frame, read-only (`mode=:read`), fetching only
the bytes reads need; its failures throw a `StrataError` with code `STRATA_ERROR_REMOTE` (−1004).
"""
function open(path::AbstractString; mode::Symbol = :read, sync::Symbol = :on_close)
    out = Ref{Ptr{LibStrata.strata_schunk}}(C_NULL)
    check(LibStrata.strata_schunk_open(path, UInt8(MODES[mode]), UInt8(SYNCS[sync]), C_NULL, out))
    return SChunk(out[])
end

"Flushes and frees the super-chunk; it cannot be used afterwards."
function Base.close(s::SChunk)
    s.handle == C_NULL && return nothing
    h, s.handle = s.handle, C_NULL
    check(LibStrata.strata_schunk_close(h))
    return nothing
end

Base.flush(s::SChunk) = (check(LibStrata.strata_schunk_flush(s)); nothing)

nchunks(s::SChunk) = Int(check(LibStrata.strata_schunk_nchunks(s)))
nbytes(s::SChunk) = Int(check(LibStrata.strata_schunk_nbytes(s)))
cbytes(s::SChunk) = Int(check(LibStrata.strata_schunk_cbytes(s)))
typesize(s::SChunk) = Int(check(LibStrata.strata_schunk_typesize(s)))
"Bytes of every chunk but the last (0 before the first chunk)."
chunksize(s::SChunk) = Int(check(LibStrata.strata_schunk_chunksize(s)))
Base.length(s::SChunk) = nchunks(s)

"Compresses `A` as one chunk with the super-chunk's parameters and appends it."
function Base.append!(s::SChunk, A::Array)
    bitstype_check(eltype(A))
    check(LibStrata.strata_schunk_append_buffer(s, A, sizeof(A)))
    return s
end

"Cuts `A` into chunks of the chunksize, compresses them in parallel and appends them."
function append_data!(s::SChunk, A::Array)
    bitstype_check(eltype(A))
    check(LibStrata.strata_schunk_append_data(s, A, sizeof(A)))
    return s
end

append_chunk!(s::SChunk, c::Vector{UInt8}) = (check(LibStrata.strata_schunk_append_chunk(s, c, length(c))); s)
"Inserts compressed chunk `c` before chunk `i` (1-based)."
insert_chunk!(s::SChunk, i::Integer, c::Vector{UInt8}) =
    (check(LibStrata.strata_schunk_insert_chunk(s, i - 1, c, length(c))); s)
"Replaces chunk `i` (1-based) by compressed chunk `c`."
update_chunk!(s::SChunk, i::Integer, c::Vector{UInt8}) =
    (check(LibStrata.strata_schunk_update_chunk(s, i - 1, c, length(c))); s)
"""
    update_chunks!(s, is, cs)

Replaces chunks `is` (1-based) by the compressed chunks `cs` in one commit: on a file, a crash
leaves all of them replaced or none. A chunk number given twice is an error, and nothing is
written.
"""
function update_chunks!(s::SChunk, is::AbstractVector{<:Integer}, cs::AbstractVector{Vector{UInt8}})
    length(is) == length(cs) ||
        throw(ArgumentError("$(length(is)) chunk numbers for $(length(cs)) chunks"))
    nums = Int64[i - 1 for i in is]
    lens = Csize_t[length(c) for c in cs]
    GC.@preserve cs begin
        ptrs = Ptr{UInt8}[pointer(c) for c in cs]
        check(LibStrata.strata_schunk_update_chunks(s, nums, ptrs, lens, length(cs)))
    end
    return s
end

"Replaces chunk `i` (1-based) by the items of `A`, compressed with the super-chunk's parameters."
update_chunk!(s::SChunk, i::Integer, A::Array) =
    (check(LibStrata.strata_schunk_update_buffer(s, i - 1, A, sizeof(A))); s)
"Removes chunk `i` (1-based)."
delete_chunk!(s::SChunk, i::Integer) = (check(LibStrata.strata_schunk_delete_chunk(s, i - 1)); s)

"Compressed chunk `i` (1-based), as stored."
function chunk(s::SChunk, i::Integer)
    n = check(LibStrata.strata_schunk_get_chunk(s, i - 1, C_NULL, 0))
    out = Vector{UInt8}(undef, n)
    check(LibStrata.strata_schunk_get_chunk(s, i - 1, out, length(out)))
    return out
end

"Chunk `i` (1-based), decompressed into a `Vector{T}`."
function decompress_chunk(::Type{T}, s::SChunk, i::Integer) where {T}
    bitstype_check(T)
    nb = chunkinfo(chunk(s, i)).nbytes
    out = Vector{T}(undef, nb ÷ sizeof(T))
    check(LibStrata.strata_schunk_decompress_chunk(s, i - 1, out, sizeof(out)))
    return out
end

"The whole super-chunk as one contiguous frame (the bytes of a `.b2frame` file)."
function to_cframe(s::SChunk)
    n = check(LibStrata.strata_schunk_to_cframe(s, C_NULL, 0))
    out = Vector{UInt8}(undef, n)
    check(LibStrata.strata_schunk_to_cframe(s, out, length(out)))
    return out
end

# Copies a name or content out of a size-query function `f(buf, len)`.
function fetch_bytes(f)
    n = check(f(C_NULL, 0))
    buf = Vector{UInt8}(undef, n)
    check(f(buf, length(buf)))
    return buf
end

function fetch_name(f)
    n = check(f(C_NULL, 0))
    buf = Vector{UInt8}(undef, n + 1)
    check(f(buf, length(buf)))
    return String(buf[1:n])
end

"Content of metalayer `name`."
meta(s::SChunk, name::AbstractString) = fetch_bytes((b, l) -> LibStrata.strata_schunk_meta_get(s, name, b, l))
"Adds metalayer `name` (before the first chunk), or overwrites an existing one in place."
function meta!(s::SChunk, name::AbstractString, content::Vector{UInt8})
    exists = LibStrata.strata_schunk_meta_get(s, name, C_NULL, 0) >= 0
    f = exists ? LibStrata.strata_schunk_meta_update : LibStrata.strata_schunk_meta_add
    check(f(s, name, content, length(content)))
    return s
end
"Names of the metalayers, in order."
metanames(s::SChunk) = [fetch_name((b, l) -> LibStrata.strata_schunk_meta_name(s, i, b, l))
                        for i in 0:check(LibStrata.strata_schunk_meta_count(s))-1]

"Decompressed content of vlmetalayer `name`."
vlmeta(s::SChunk, name::AbstractString) = fetch_bytes((b, l) -> LibStrata.strata_schunk_vlmeta_get(s, name, b, l))
"Sets vlmetalayer `name` (compressed as python-blosc2 does)."
vlmeta!(s::SChunk, name::AbstractString, content::Vector{UInt8}) =
    (check(LibStrata.strata_schunk_vlmeta_set(s, name, content, length(content))); s)
"Removes vlmetalayer `name`."
delete_vlmeta!(s::SChunk, name::AbstractString) = (check(LibStrata.strata_schunk_vlmeta_delete(s, name)); s)
"Names of the vlmetalayers, in order."
vlmetanames(s::SChunk) = [fetch_name((b, l) -> LibStrata.strata_schunk_vlmeta_name(s, i, b, l))
                          for i in 0:check(LibStrata.strata_schunk_vlmeta_count(s))-1]

# ------------------------------------------------------------------ N-d arrays

# NumPy dtype strings of Julia's plain element types (little-endian).
const DTYPES = Dict{DataType,String}(
    Bool => "|b1", Int8 => "|i1", UInt8 => "|u1", Int16 => "<i2", UInt16 => "<u2", Int32 => "<i4",
    UInt32 => "<u4", Int64 => "<i8", UInt64 => "<u8", Float16 => "<f2", Float32 => "<f4",
    Float64 => "<f8", ComplexF32 => "<c8", ComplexF64 => "<c16")

"The Julia element type of a dtype string: a plain type, else `NTuple{typesize,UInt8}`."
function eltype_of(dtype::AbstractString, typesize::Integer)
    for (T, d) in DTYPES
        (d == dtype || (sizeof(T) == 1 && d[2:end] == dtype[2:end])) && return T
    end
    return NTuple{Int(typesize),UInt8}
end

"""
    NDArray{T,N}

A b2nd N-d array of `N` dimensions of `T` in a frame (memory, a `.b2nd` file, or a sparse
directory). Julia's dimensions are the reverse of the stored (C-order) shape: `size(a)` is
`(nN, …, n1)` for a b2nd shape `(n1, …, nN)`, and `a[i, j, k]` is python-blosc2's
`arr[k-1, j-1, i-1]`. Index with integers, ranges (steps too) and `:`; assign arrays to
sections; `Array(a)` reads it whole.
"""
mutable struct NDArray{T,N}
    handle::Ptr{LibStrata.strata_ndarray}
    function NDArray{T,N}(handle::Ptr{LibStrata.strata_ndarray}) where {T,N}
        a = new{T,N}(handle)
        finalizer(a) do x
            LibStrata.strata_ndarray_free(x.handle)
            x.handle = C_NULL
        end
        return a
    end
end

Base.cconvert(::Type{Ptr{LibStrata.strata_ndarray}}, a::NDArray) = a
function Base.unsafe_convert(::Type{Ptr{LibStrata.strata_ndarray}}, a::NDArray)
    a.handle == C_NULL && throw(ArgumentError("the NDArray is closed"))
    return a.handle
end

function array_info(a::NDArray)
    r = Ref{LibStrata.strata_ndarray_info}()
    check(LibStrata.strata_ndarray_get_info(a, r))
    return r[]
end

"Julia dimensions (reversed C shape)."
Base.size(a::NDArray{T,N}) where {T,N} = ntuple(d -> Int(array_info(a).shape[N-d+1]), N)
Base.size(a::NDArray, d::Integer) = size(a)[d]
Base.ndims(::NDArray{T,N}) where {T,N} = N
Base.eltype(::NDArray{T}) where {T} = T
Base.length(a::NDArray) = prod(size(a))
"Chunk shape in Julia order."
chunks(a::NDArray{T,N}) where {T,N} = ntuple(d -> Int(array_info(a).chunkshape[N-d+1]), N)
"Block shape in Julia order."
blocks(a::NDArray{T,N}) where {T,N} = ntuple(d -> Int(array_info(a).blockshape[N-d+1]), N)
"The NumPy dtype string stored in the array."
dtype(a::NDArray) = fetch_name((b, l) -> LibStrata.strata_ndarray_dtype(a, b, l))
nbytes(a::NDArray) = Int(array_info(a).nbytes)
cbytes(a::NDArray) = Int(array_info(a).cbytes)

# strata_ndarray_params for Julia dims `dims` (reversed here), with optional chunks/blocks.
function nd_params(::Type{T}, dims::Dims{N}, chunks, blocks; kw...) where {T,N}
    N <= LibStrata.STRATA_MAX_DIM || throw(ArgumentError("at most $(LibStrata.STRATA_MAX_DIM) dimensions"))
    d = Ref{LibStrata.strata_ndarray_params}()
    check(LibStrata.strata_ndarray_params_default(d))
    rev(x, ::Type{S}) where {S} = ntuple(i -> i <= N && x !== nothing ? S(x[N-i+1]) : zero(S), 16)
    cp = cparams(; typesize = sizeof(T), kw...)
    return LibStrata.strata_ndarray_params(d[].size, Int32(N), rev(dims, Int64), rev(chunks, Int32),
                                           rev(blocks, Int32), cp, d[].dparams)
end

dtype_of(::Type{T}, dtype) where {T} =
    dtype !== nothing ? String(dtype) : get(DTYPES, T, "|V$(sizeof(T))")

function make_array(f, ::Type{T}, dims::Dims{N}; path = nothing, chunks = nothing, blocks = nothing,
                    dtype = nothing, sparse::Bool = false, overwrite::Bool = false, sync::Symbol = :on_close,
                    kw...) where {T,N}
    bitstype_check(T)
    p = nd_params(T, dims, chunks, blocks; kw...)
    st = storage(; sparse = sparse, overwrite = overwrite, sync = sync)
    out = Ref{Ptr{LibStrata.strata_ndarray}}(C_NULL)
    url = path === nothing ? C_NULL : checked_path(path)
    check(f(url, Ref(st), Ref(p), dtype_of(T, dtype), out))
    return NDArray{T,N}(out[])
end

"""
    NDArray(A::Array; path=nothing, chunks=nothing, blocks=nothing, dtype=nothing, sparse=false,
            overwrite=false, cparams...)

A b2nd array holding `A` (in memory, or at `path`): stored with the reversed shape, so the
bytes are `A`'s. `chunks`/`blocks` in Julia order (derived when `nothing`); `dtype` defaults
to NumPy's name for `eltype(A)`.
"""
function NDArray(A::Array{T,N}; kw...) where {T,N}
    make_array(T, size(A); kw...) do url, st, p, dt, out
        LibStrata.strata_ndarray_from_buffer(url, st, p, dt, A, sizeof(A), out)
    end
end

"An array of zeros of `T` and Julia dimensions `dims` (no chunk data stored)."
zeros(::Type{T}, dims::Integer...; kw...) where {T} =
    make_array(T, Dims(dims); kw...) do url, st, p, dt, out
        LibStrata.strata_ndarray_zeros(url, st, p, dt, out)
    end

"An array of undefined contents (read as zeros)."
uninit(::Type{T}, dims::Integer...; kw...) where {T} =
    make_array(T, Dims(dims); kw...) do url, st, p, dt, out
        LibStrata.strata_ndarray_uninit(url, st, p, dt, out)
    end

"An array with every item `value`."
function full(value::T, dims::Integer...; kw...) where {T}
    v = Ref(value)
    make_array(T, Dims(dims); kw...) do url, st, p, dt, out
        GC.@preserve v LibStrata.strata_ndarray_full(url, st, p, dt,
                                                     Ptr{UInt8}(Base.unsafe_convert(Ptr{T}, v)), sizeof(T), out)
    end
end

"""
    Strata.open_array(path; mode=:read, sync=:on_close, T=nothing) -> NDArray

Opens a `.b2nd` file or sparse directory, or the `http://`/`https://` URL of one (read-only:
indexing fetches only the blocks a section touches); the element type comes from its dtype
(plain NumPy types), else `NTuple{typesize,UInt8}`, unless `T` is given.
"""
function open_array(path::AbstractString; mode::Symbol = :read, sync::Symbol = :on_close,
                    T::Union{Nothing,DataType} = nothing)
    out = Ref{Ptr{LibStrata.strata_ndarray}}(C_NULL)
    check(LibStrata.strata_ndarray_open(path, UInt8(MODES[mode]), UInt8(SYNCS[sync]), out))
    return wrap_handle(out[], T)
end

"""
    Strata.open_hdf5(path, dataset; T=nothing) -> NDArray

Opens dataset `dataset` (`"/group/name"`) of the HDF5 file `path` as a read-only `NDArray`:
indexing reads only the chunks and blocks a section touches where its chunks are Blosc2
frames (HDF5's filter 32026), and goes through HDF5 otherwise. Element type as `open_array`.
"""
function open_hdf5(path::AbstractString, dataset::AbstractString; T::Union{Nothing,DataType} = nothing)
    out = Ref{Ptr{LibStrata.strata_ndarray}}(C_NULL)
    check(LibStrata.strata_ndarray_open_hdf5(path, dataset, out))
    return wrap_handle(out[], T)
end

"""
    export_hdf5(a::NDArray, path, dataset; overwrite=false)

Writes `a` as dataset `dataset` of the HDF5 file `path` (made if missing) with HDF5's Blosc2
filter, its chunks copied as stored; h5py with hdf5plugin, PyTables and h5dump read it.
"""
function export_hdf5(a::NDArray, path::AbstractString, dataset::AbstractString; overwrite::Bool = false)
    check(LibStrata.strata_ndarray_export_hdf5(a, path, dataset, Int32(overwrite)))
    return nothing
end

# An NDArray over the handle `h`, its element type from its dtype unless `T` is given.
function wrap_handle(h::Ptr{LibStrata.strata_ndarray}, T)
    r = Ref{LibStrata.strata_ndarray_info}()
    rc = LibStrata.strata_ndarray_get_info(h, r)
    rc < 0 && (LibStrata.strata_ndarray_free(h); check(rc))
    info = r[]
    n = LibStrata.strata_ndarray_dtype(h, C_NULL, 0)
    buf = Vector{UInt8}(undef, max(n, 0) + 1)
    LibStrata.strata_ndarray_dtype(h, buf, length(buf))
    E = T === nothing ? eltype_of(String(buf[1:max(n, 0)]), info.typesize) : T
    if sizeof(E) != info.typesize
        LibStrata.strata_ndarray_free(h)
        throw(ArgumentError("element type $E has $(sizeof(E)) bytes, the array's items $(info.typesize)"))
    end
    return NDArray{E,Int(info.ndim)}(h)
end

"Saves the array as a contiguous `.b2nd` file at `path` (replacing it)."
save(a::NDArray, path::AbstractString) = (check(LibStrata.strata_ndarray_save(a, path)); nothing)

function Base.close(a::NDArray)
    a.handle == C_NULL && return nothing
    h, a.handle = a.handle, C_NULL
    check(LibStrata.strata_ndarray_close(h))
    return nothing
end

"""
    resize!(a::NDArray, dims...; at=nothing)

Changes the Julia dimensions to `dims` (same count). Without `at` the change is at the end of
each dimension and items gained read as zeros. With `at` (one 1-based position per
dimension) zeros come in before position `at[d]` where dimension `d` grows, and the items
from `at[d]` go where it shrinks; away from a dimension's end, `at[d] - 1` and the change
must be whole chunks.
"""
function Base.resize!(a::NDArray{T,N}, dims::Integer...; at = nothing) where {T,N}
    length(dims) == N || throw(ArgumentError("$N dimensions expected"))
    shape = Int64[dims[N-i+1] for i in 1:N]
    if at === nothing
        check(LibStrata.strata_ndarray_resize(a, Int32(N), shape))
    else
        length(at) == N || throw(ArgumentError("$N positions expected"))
        start = Int64[at[N-i+1] - 1 for i in 1:N]
        check(LibStrata.strata_ndarray_resize_at(a, Int32(N), shape, start))
    end
    return a
end

# The C axis of Julia dimension `dim` of an N-dimensional array.
function c_axis(dim::Integer, N::Integer)
    1 <= dim <= N || throw(ArgumentError("dimension $dim of an array of $N"))
    return Int32(N - dim)
end

"""
    append!(a::NDArray, X; dim=ndims(a))

Appends `X` along Julia dimension `dim` (by default the last: the time axis of an
`nx × ny × nt` field, so a model appends each `nx × ny` step as it comes). `X` has `a`'s size
in every other dimension. Only the chunks the new items land in are written.
"""
function Base.append!(a::NDArray{T,N}, X::AbstractArray; dim::Integer = N) where {T,N}
    src = Array{T}(X)
    check(LibStrata.strata_ndarray_append(a, c_axis(dim, N), src, sizeof(src)))
    return a
end

"""
    insert!(a::NDArray, i, X; dim=ndims(a))

Inserts `X` (as for `append!`) along Julia dimension `dim` before index `i`: at the end any
count, elsewhere `i - 1` and the count must be whole chunks.
"""
function Base.insert!(a::NDArray{T,N}, i::Integer, X::AbstractArray; dim::Integer = N) where {T,N}
    src = Array{T}(X)
    check(LibStrata.strata_ndarray_insert(a, c_axis(dim, N), Int64(i - 1), src, sizeof(src)))
    return a
end

"""
    deleteat!(a::NDArray, r::UnitRange; dim=ndims(a))

Deletes indices `r` along Julia dimension `dim`: at the end any range, elsewhere whole chunks.
"""
function Base.deleteat!(a::NDArray{T,N}, r::UnitRange{<:Integer}; dim::Integer = N) where {T,N}
    check(LibStrata.strata_ndarray_delete(a, c_axis(dim, N), Int64(first(r) - 1), Int64(length(r))))
    return a
end

# A new array joining `arrays` (all NDArray{T,N}) along C axis `axis` with `f`.
function join_arrays(f, arrays, axis::Int32, ::Type{T}, M::Int; path = nothing, sparse::Bool = false,
                     overwrite::Bool = false, sync::Symbol = :on_close) where {T}
    isempty(arrays) && throw(ArgumentError("no arrays to join"))
    st = storage(; sparse = sparse, overwrite = overwrite, sync = sync)
    out = Ref{Ptr{LibStrata.strata_ndarray}}(C_NULL)
    url = path === nothing ? C_NULL : checked_path(path)
    GC.@preserve arrays begin
        handles = Ptr{LibStrata.strata_ndarray}[Base.unsafe_convert(Ptr{LibStrata.strata_ndarray}, x) for x in arrays]
        check(f(handles, length(handles), axis, url, Ref(st), out))
    end
    return NDArray{T,M}(out[])
end

"""
    concatenate(arrays::AbstractVector{<:NDArray}; dim=ndims, path=nothing, sparse=false,
                overwrite=false)

A new array (in memory, or at `path`) holding `arrays` one after the other along Julia
dimension `dim` (same element type, and sizes but along `dim`), with the first array's
chunks, blocks and compression; chunks that line up are copied as stored.
"""
function concatenate(arrays::AbstractVector{NDArray{T,N}}; dim::Integer = N, kw...) where {T,N}
    return join_arrays(LibStrata.strata_ndarray_concatenate, arrays, c_axis(dim, N), T, N; kw...)
end

"""
    stack_arrays(arrays::AbstractVector{<:NDArray}; dim=ndims + 1, path=nothing, ...)

A new array with one more dimension, `dim` (1 to `ndims + 1`; by default a new last one),
along which `arrays` (all of one size) come one after the other, as python-blosc2's `stack`.
"""
function stack_arrays(arrays::AbstractVector{NDArray{T,N}}; dim::Integer = N + 1, kw...) where {T,N}
    return join_arrays(LibStrata.strata_ndarray_stack, arrays, c_axis(dim, N + 1), T, N + 1; kw...)
end

# One Julia index of dimension `d` (length `len`) as a C slice (start, stop, step) and the
# number of items it selects; stops follow Python (exclusive, clipped).
function c_slice(i::Integer, len::Int)
    1 <= i <= len || throw(BoundsError())
    return (Int64(i - 1), Int64(i), Int64(1), 1)
end
c_slice(::Colon, len::Int) = (Int64(0), Int64(len), Int64(1), len)
function c_slice(r::AbstractRange{<:Integer}, len::Int)
    isempty(r) && return (Int64(0), Int64(0), Int64(1), 0)
    (1 <= minimum(r) && maximum(r) <= len) || throw(BoundsError())
    s = step(r)
    start = first(r) - 1
    stop = last(r) - 1 + sign(s)          # one step past the last, 0-based
    stop < 0 && (stop = -len - 1)         # before index 0: Python's "to the start"
    return (Int64(start), Int64(stop), Int64(s), length(r))
end

# The C selection of Julia indices `I` (reversed), and the Julia shape of the result.
function c_selection(a::NDArray{T,N}, I) where {T,N}
    length(I) == N || throw(ArgumentError("$N indices expected, got $(length(I))"))
    sz = size(a)
    parts = [c_slice(I[d], sz[d]) for d in 1:N]
    start = Int64[parts[N-d+1][1] for d in 1:N]
    stop = Int64[parts[N-d+1][2] for d in 1:N]
    stp = Int64[parts[N-d+1][3] for d in 1:N]
    return start, stop, stp, Tuple(p[4] for p in parts)
end

function Base.getindex(a::NDArray{T,N}, I...) where {T,N}
    start, stop, stp, dims = c_selection(a, I)
    out = Array{T,N}(undef, dims)
    check(LibStrata.strata_ndarray_get_slice(a, Int32(N), start, stop, stp, out, sizeof(out)))
    keep = Tuple(d for d in 1:N if !(I[d] isa Integer))
    return length(keep) == N ? out : reshape(out, Tuple(dims[d] for d in keep))
end

function Base.setindex!(a::NDArray{T,N}, X::AbstractArray, I...) where {T,N}
    start, stop, stp, dims = c_selection(a, I)
    src = Array{T}(X)
    length(src) == prod(dims) || throw(DimensionMismatch("$(size(X)) into a selection of $dims"))
    check(LibStrata.strata_ndarray_set_slice(a, Int32(N), start, stop, stp, src, sizeof(src)))
    return a
end

"The whole array, read into a Julia `Array` (same bytes, reversed shape)."
Base.Array(a::NDArray{T,N}) where {T,N} = a[ntuple(_ -> Colon(), N)...]

"The array as a contiguous frame (a `.b2nd` file's bytes)."
function to_cframe(a::NDArray)
    n = check(LibStrata.strata_ndarray_to_cframe(a, C_NULL, 0))
    out = Vector{UInt8}(undef, n)
    check(LibStrata.strata_ndarray_to_cframe(a, out, length(out)))
    return out
end

# ------------------------------------------------------------------ block cache

"""
    BlockCache(capacity)

A cache of decompressed blocks of at most `capacity` bytes, shared by the arrays given it
(`set_cache!`): a block one of them decompressed, the others copy. Blocks are kept under each
array's version (its file's identity when opened and its frame's state), so a file changed on
disk and opened again never gets old blocks.
"""
mutable struct BlockCache
    handle::Ptr{LibStrata.strata_cache}
    function BlockCache(capacity::Integer)
        c = new(LibStrata.strata_cache_new(UInt64(capacity)))
        finalizer(c) do x
            LibStrata.strata_cache_free(x.handle)
            x.handle = C_NULL
        end
        return c
    end
end

Base.cconvert(::Type{Ptr{LibStrata.strata_cache}}, c::BlockCache) = c
function Base.unsafe_convert(::Type{Ptr{LibStrata.strata_cache}}, c::BlockCache)
    c.handle == C_NULL && throw(ArgumentError("the BlockCache is freed"))
    return c.handle
end

"The cache's counters: hits, misses (blocks decompressed), evictions, bytes and blocks held."
function cachestats(c::BlockCache)
    r = Ref{LibStrata.strata_cache_stats}()
    check(LibStrata.strata_cache_get_stats(c, r))
    return r[]
end

"Makes `a` read its blocks through `c` (`nothing`: through none)."
function set_cache!(a::NDArray, c::Union{BlockCache,Nothing})
    ptr = c === nothing ? Ptr{LibStrata.strata_cache}(C_NULL) : Base.unsafe_convert(Ptr{LibStrata.strata_cache}, c)
    check(LibStrata.strata_ndarray_set_cache(a, ptr))
    return a
end

"Drops every block `c` holds."
clear!(c::BlockCache) = (check(LibStrata.strata_cache_clear(c)); c)

end # module Strata
