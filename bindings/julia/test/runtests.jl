# Tests of the Julia bindings. Run with the library on the path:
#   STRATA_LIBRARY=/path/to/target/release/libstrata.so julia --project=bindings/julia -e 'using Pkg; Pkg.test()'
# NOT RUN in Strata's own test suite (no Julia toolchain there); tests/julia_ccalls.rs checks
# the ccalls against the header and the library instead.
using Test
using Strata
using Strata: LibStrata

@testset "Strata.jl" begin
    @testset "library" begin
        @test Strata.version() == "0.1.0"
        @test LibStrata.strata_abi_version() == 1
        @test Strata.error_name(LibStrata.STRATA_ERROR_DATA) == "STRATA_ERROR_DATA"
    end

    @testset "runtime" begin
        info = Strata.runtime_info()
        @test info.workers >= 0
        @test info.nthreads >= 1
        @test info.l2 > 0
        # The runtime exists now: configuring it again fails with a message.
        err = try
            Strata.configure_runtime(workers = 1)
            nothing
        catch e
            e
        end
        @test err isa StrataError
        @test err.code == LibStrata.STRATA_ERROR_INVALID_PARAM
        @test occursin("already exists", err.message)
        Strata.set_nthreads(2)
        @test Strata.runtime_info().nthreads == 2
    end

    @testset "chunks" begin
        A = [sin(i / 100) * 15 + 273.15 for i in 1:100_000]
        c = compress(A; codec = :zstd, clevel = 5)
        @test length(c) < sizeof(A) ÷ 2
        info = chunkinfo(c)
        @test info.codec == 5
        @test info.typesize == 8
        @test info.nbytes == sizeof(A)
        @test info.cbytes == length(c)
        @test decompress(Float64, c) == A
        @test getitem(Float64, c, 54_321:54_325) == A[54_321:54_325]
        # Corrupt input: an error carrying the library's message, not a crash.
        bad = copy(c)
        bad[1] = 99
        err = try
            decompress(Float64, bad)
            nothing
        catch e
            e
        end
        @test err isa StrataError
        @test err.code == LibStrata.STRATA_ERROR_VERSION_SUPPORT
        @test err.name == "STRATA_ERROR_VERSION_SUPPORT"
        @test occursin("version 99", err.message)
        @test_throws StrataError compress(A; codec = 200)
        @test_throws ArgumentError compress(A; codec = :snappy)
    end

    @testset "frames" begin
        dir = mktempdir()
        path = joinpath(dir, "t.b2frame")
        items = 25_000
        data = Int32.((0:10*items-1) .÷ 10 .* 3)
        s = SChunk(; path = path, typesize = 4, codec = :lz4, overwrite = true)
        meta!(s, "units", UInt8[0xa4, UInt8('d'), UInt8('e'), UInt8('g'), UInt8('C')])
        for k in 0:9
            append!(s, data[k*items+1:(k+1)*items])
        end
        vlmeta!(s, "history", Vector{UInt8}("made in Julia"))
        close(s)

        r = Strata.open(path)
        @test nchunks(r) == 10
        @test typesize(r) == 4
        @test chunksize(r) == items * 4
        @test nbytes(r) == sizeof(data)
        @test metanames(r) == ["units"]
        @test meta(r, "units")[2:end] == Vector{UInt8}("degC")
        @test String(vlmeta(r, "history")) == "made in Julia"
        @test vlmetanames(r) == ["history"]
        @test decompress_chunk(Int32, r, 4) == data[3*items+1:4*items]
        @test reduce(vcat, (decompress_chunk(Int32, r, k) for k in 1:10)) == data
        err = try
            append!(r, data[1:items])
            nothing
        catch e
            e
        end
        @test err.code == LibStrata.STRATA_ERROR_FILE_WRITE
        @test_throws StrataError meta(r, "missing")

        # An in-memory copy, edited.
        m = SChunk(to_cframe(r))
        close(r)
        update_chunk!(m, 1, -data[1:items])
        delete_chunk!(m, 2)
        @test nchunks(m) == 9
        insert_chunk!(m, 2, compress(data[items+1:2*items]; codec = :zstd))
        @test decompress_chunk(Int32, m, 1) == -data[1:items]
        @test decompress_chunk(Int32, m, 2) == data[items+1:2*items]
        # Chunks 4 and 3 swapped in one commit; a chunk named twice is refused.
        c3, c4 = chunk(m, 3), chunk(m, 4)
        update_chunks!(m, [4, 3], [c3, c4])
        @test decompress_chunk(Int32, m, 3) == data[3*items+1:4*items]
        @test decompress_chunk(Int32, m, 4) == data[2*items+1:3*items]
        err = try
            update_chunks!(m, [3, 3], [c3, c4])
            nothing
        catch e
            e
        end
        @test err.code == LibStrata.STRATA_ERROR_INVALID_PARAM
        delete_vlmeta!(m, "history")
        @test isempty(vlmetanames(m))
        close(m)
        @test_throws ArgumentError nchunks(m)
    end

    @testset "N-d arrays" begin
        dir = mktempdir()
        path = joinpath(dir, "t.b2nd")
        T = [1000.0 * k + 10.0 * j + 0.01 * i for i in 1:40, j in 1:30, k in 1:12]
        a = NDArray(T; path = path, chunks = (40, 30, 4), blocks = (40, 10, 2), codec = :zstd)
        @test size(a) == (40, 30, 12)
        @test chunks(a) == (40, 30, 4)
        @test blocks(a) == (40, 10, 2)
        @test dtype(a) == "<f8"
        close(a)

        r = Strata.open_array(path; mode = :readwrite)
        @test r isa NDArray{Float64,3}
        # The file's C shape is the reverse: python-blosc2 sees (12, 30, 40).
        info = Strata.array_info(r)
        @test info.shape[1:3] == (12, 30, 40)
        @test Array(r) == T
        @test r[7, 11, 3] == T[7, 11, 3]
        @test r[2:9, 5, :] == T[2:9, 5, :]
        @test r[1:3:40, 30:-2:1, 12:-1:1] == T[1:3:40, 30:-2:1, 12:-1:1]
        r[1:4, 1:2, 12] = fill(-1.0, 4, 2)
        T[1:4, 1:2, 12] .= -1.0
        @test Array(r) == T
        resize!(r, 40, 30, 14)
        @test size(r) == (40, 30, 14)
        @test all(r[:, :, 13:14] .== 0)
        err = try
            r[41, 1, 1]
            nothing
        catch e
            e
        end
        @test err isa BoundsError
        close(r)

        z = Strata.zeros(Float32, 7, 9; chunks = (4, 4), blocks = (2, 2))
        @test Array(z) == zeros(Float32, 7, 9)
        f = Strata.full(Int16(-3), 5, 6)
        @test Array(f) == fill(Int16(-3), 5, 6)
        m = Strata.open_array(path)
        @test_throws StrataError (m[1, 1, 1:2] = [1.0, 2.0])   # opened read-only
    end

    @testset "changes along an axis" begin
        step(t) = Float32[1000 * t + 100 * y + x for x in 1:24, y in 1:12]
        run = Strata.zeros(Float32, 24, 12, 0; chunks = (24, 6, 4), blocks = (24, 6, 2))
        for t in 1:9
            append!(run, step(t))                       # one time step per call
        end
        R = cat((step(t) for t in 1:9)...; dims = 3)
        @test size(run) == (24, 12, 9)
        @test Array(run) == R
        insert!(run, 5, fill(-1.0f0, 24, 12, 4))        # before step 5: whole chunks
        R = cat(R[:, :, 1:4], fill(-1.0f0, 24, 12, 4), R[:, :, 5:9]; dims = 3)
        @test Array(run) == R
        deleteat!(run, 1:4)
        deleteat!(run, 9:9)
        R = R[:, :, 5:12]
        @test Array(run) == R
        @test_throws StrataError insert!(run, 3, step(0))   # inside a chunk
        @test_throws StrataError append!(run, zeros(Float32, 5, 5))
        resize!(run, 24, 18, 8; at = (1, 1, 1))        # 6 rows of zeros in front
        @test Array(run) == cat(zeros(Float32, 24, 6, 8), R; dims = 2)
        twice = concatenate([run, run])
        @test size(twice) == (24, 18, 16)
        @test Array(twice) == cat(Array(run), Array(run); dims = 3)
        s = stack_arrays([run, run])
        @test size(s) == (24, 18, 8, 2)
        @test s[:, :, :, 2] == Array(run)
    end

    @testset "HDF5 datasets" begin
        dir = mktempdir()
        G = Float32[100 * j + i for i in 1:120, j in 1:90]
        a = NDArray(G; path = joinpath(dir, "g.b2nd"), chunks = (60, 30), blocks = (20, 10))
        h5 = joinpath(dir, "g.h5")
        export_hdf5(a, h5, "/grid")
        @test_throws StrataError export_hdf5(a, h5, "/grid")       # exists
        export_hdf5(a, h5, "/grid"; overwrite = true)
        close(a)
        d = open_hdf5(h5, "/grid")
        @test d isa NDArray{Float32,2}
        @test size(d) == (120, 90) && chunks(d) == (60, 30) && blocks(d) == (20, 10)
        @test Array(d) == G
        @test d[10:30, 40:8:88] == G[10:30, 40:8:88]
        @test_throws StrataError (d[1, 1:2] = Float32[1, 2])      # an HDF5 dataset reads only
        close(d)
        @test_throws StrataError open_hdf5(h5, "/nothing")
    end
end
