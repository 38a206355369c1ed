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
        delete_vlmeta!(m, "history")
        @test isempty(vlmetanames(m))
        close(m)
        @test_throws ArgumentError nchunks(m)
    end
end
