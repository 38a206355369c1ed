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
export append_chunk!, insert_chunk!, update_chunk!, delete_chunk!, chunk, decompress_chunk
export meta, meta!, metanames, vlmeta, vlmeta!, delete_vlmeta!, vlmetanames, to_cframe

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

end # module Strata
