! Fortran 2008 interface to Strata's C API (include/strata.h), on ISO_C_BINDING.
!
! One BIND(C) interface per C function, scalars by VALUE, buffers as TYPE(C_PTR) (pass
! C_LOC of a contiguous TARGET array) followed by their length in bytes, strings as
! NUL-terminated CHARACTER(KIND=C_CHAR) (use strata_cstr). Return values and error codes are
! the C ones: negative = a STRATA_ERROR_* code, and strata_error_message() tells what failed.
!
! Shapes: b2nd arrays are C order (last dimension fastest); a Fortran array is column-major
! (first dimension fastest). The same bytes are a Fortran array A(n1, n2, ..., nk) and a C
! array of shape (nk, ..., n2, n1): pass shapes, starts and stops reversed, 0-based. See
! README.md.
!
! Build: gfortran -std=f2008 -c strata.f90; link programs with libstrata.a -lm -lpthread -ldl.
module strata
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! Error codes (the STRATA_ERROR_* macros of strata.h; tests/fortran.rs checks they agree).
  integer(c_int32_t), parameter, public :: STRATA_ERROR_DATA = -3
  integer(c_int32_t), parameter, public :: STRATA_ERROR_MEMORY_ALLOC = -4
  integer(c_int32_t), parameter, public :: STRATA_ERROR_READ_BUFFER = -5
  integer(c_int32_t), parameter, public :: STRATA_ERROR_WRITE_BUFFER = -6
  integer(c_int32_t), parameter, public :: STRATA_ERROR_CODEC_SUPPORT = -7
  integer(c_int32_t), parameter, public :: STRATA_ERROR_CODEC_PARAM = -8
  integer(c_int32_t), parameter, public :: STRATA_ERROR_CODEC_DICT = -9
  integer(c_int32_t), parameter, public :: STRATA_ERROR_VERSION_SUPPORT = -10
  integer(c_int32_t), parameter, public :: STRATA_ERROR_INVALID_HEADER = -11
  integer(c_int32_t), parameter, public :: STRATA_ERROR_INVALID_PARAM = -12
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FILE_READ = -13
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FILE_WRITE = -14
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FILE_OPEN = -15
  integer(c_int32_t), parameter, public :: STRATA_ERROR_RUN_LENGTH = -17
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FILTER_PIPELINE = -18
  integer(c_int32_t), parameter, public :: STRATA_ERROR_CHUNK_INSERT = -19
  integer(c_int32_t), parameter, public :: STRATA_ERROR_CHUNK_APPEND = -20
  integer(c_int32_t), parameter, public :: STRATA_ERROR_CHUNK_UPDATE = -21
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FRAME_TYPE = -24
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FILE_TRUNCATE = -25
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FRAME_SPECIAL = -28
  integer(c_int32_t), parameter, public :: STRATA_ERROR_FILE_REMOVE = -31
  integer(c_int32_t), parameter, public :: STRATA_ERROR_NULL_POINTER = -32
  integer(c_int32_t), parameter, public :: STRATA_ERROR_INVALID_INDEX = -33
  integer(c_int32_t), parameter, public :: STRATA_ERROR_METALAYER_NOT_FOUND = -34
  integer(c_int32_t), parameter, public :: STRATA_ERROR_MAX_BUFSIZE_EXCEEDED = -35
  integer(c_int32_t), parameter, public :: STRATA_ERROR_PLUGIN_PANIC = -1000
  integer(c_int32_t), parameter, public :: STRATA_ERROR_PANIC = -1001
  integer(c_int32_t), parameter, public :: STRATA_ERROR_PLUGIN_LOAD = -1002
  integer(c_int32_t), parameter, public :: STRATA_ERROR_INTERNAL = -1003
  integer(c_int32_t), parameter, public :: STRATA_ERROR_REMOTE = -1004

  ! Sync policies, open modes and special-value kinds (unsigned char in C).
  integer(c_int8_t), parameter, public :: STRATA_SYNC_NONE = 0
  integer(c_int8_t), parameter, public :: STRATA_SYNC_ON_CLOSE = 1
  integer(c_int8_t), parameter, public :: STRATA_SYNC_EVERY_WRITE = 2
  integer(c_int8_t), parameter, public :: STRATA_OPEN_READ = 0
  integer(c_int8_t), parameter, public :: STRATA_OPEN_READWRITE = 1
  integer(c_int8_t), parameter, public :: STRATA_OPEN_APPEND = 2
  integer(c_int8_t), parameter, public :: STRATA_SPECIAL_NONE = 0
  integer(c_int8_t), parameter, public :: STRATA_SPECIAL_ZERO = 1
  integer(c_int8_t), parameter, public :: STRATA_SPECIAL_NAN = 2
  integer(c_int8_t), parameter, public :: STRATA_SPECIAL_VALUE = 3
  integer(c_int8_t), parameter, public :: STRATA_SPECIAL_UNINIT = 4
  integer(c_int32_t), parameter, public :: STRATA_MAX_DIM = 16

  ! strata_cparams. uint8_t fields are integer(c_int8_t): IDs above 127 are stored as ID - 256.
  type, bind(c), public :: strata_cparams
    integer(c_size_t) :: size
    integer(c_int8_t) :: codec
    integer(c_int8_t) :: codec_meta
    integer(c_int8_t) :: clevel
    integer(c_int8_t) :: splitmode
    integer(c_int32_t) :: typesize
    integer(c_int32_t) :: blocksize
    integer(c_int8_t) :: filters(6)
    integer(c_int8_t) :: filters_meta(6)
    integer(c_int8_t) :: use_dict
    integer(c_int32_t) :: nthreads
  end type strata_cparams

  type, bind(c), public :: strata_dparams
    integer(c_size_t) :: size
    integer(c_int32_t) :: nthreads
  end type strata_dparams

  type, bind(c), public :: strata_storage
    integer(c_size_t) :: size
    integer(c_int8_t) :: sparse
    integer(c_int8_t) :: overwrite
    integer(c_int8_t) :: sync
    integer(c_size_t) :: chunksize
  end type strata_storage

  type, bind(c), public :: strata_chunk_info
    integer(c_int8_t) :: version
    integer(c_int8_t) :: versionlz
    integer(c_int8_t) :: flags
    integer(c_int8_t) :: codec
    integer(c_int8_t) :: codec_meta
    integer(c_int8_t) :: special
    integer(c_int8_t) :: header_len
    integer(c_int8_t) :: blosc2_flags
    integer(c_int32_t) :: typesize
    integer(c_int32_t) :: nbytes
    integer(c_int32_t) :: blocksize
    integer(c_int32_t) :: cbytes
    integer(c_int8_t) :: filters(6)
    integer(c_int8_t) :: filters_meta(6)
  end type strata_chunk_info

  ! strata_ndarray_params: shapes in C order (reverse a Fortran array's dimensions).
  type, bind(c), public :: strata_ndarray_params
    integer(c_size_t) :: size
    integer(c_int32_t) :: ndim
    integer(c_int64_t) :: shape(16)
    integer(c_int32_t) :: chunkshape(16)
    integer(c_int32_t) :: blockshape(16)
    type(strata_cparams) :: cparams
    type(strata_dparams) :: dparams
  end type strata_ndarray_params

  type, bind(c), public :: strata_ndarray_info
    integer(c_int32_t) :: ndim
    integer(c_int32_t) :: typesize
    integer(c_int64_t) :: shape(16)
    integer(c_int32_t) :: chunkshape(16)
    integer(c_int32_t) :: blockshape(16)
    integer(c_int64_t) :: nbytes
    integer(c_int64_t) :: cbytes
  end type strata_ndarray_info

  public :: strata_version, strata_abi_version, strata_last_error, strata_error_name
  public :: strata_cparams_default, strata_dparams_default, strata_storage_default
  public :: strata_compress, strata_decompress, strata_getitem, strata_chunk_get_info
  public :: strata_schunk_create, strata_schunk_open, strata_schunk_from_cframe, strata_schunk_to_cframe
  public :: strata_schunk_flush, strata_schunk_close, strata_schunk_free
  public :: strata_schunk_nchunks, strata_schunk_nbytes, strata_schunk_cbytes, strata_schunk_typesize
  public :: strata_schunk_chunksize, strata_schunk_frame_len, strata_schunk_get_cparams
  public :: strata_schunk_append_buffer, strata_schunk_append_data, strata_schunk_append_chunk
  public :: strata_schunk_insert_chunk, strata_schunk_update_chunk, strata_schunk_update_buffer
  public :: strata_schunk_delete_chunk, strata_schunk_get_chunk, strata_schunk_decompress_chunk
  public :: strata_schunk_getitem, strata_schunk_meta_add, strata_schunk_meta_update, strata_schunk_meta_get
  public :: strata_schunk_vlmeta_set, strata_schunk_vlmeta_get, strata_schunk_vlmeta_delete
  public :: strata_ndarray_params_default, strata_ndarray_uninit, strata_ndarray_zeros, strata_ndarray_full
  public :: strata_ndarray_from_buffer, strata_ndarray_open, strata_ndarray_from_cframe, strata_ndarray_to_cframe
  public :: strata_ndarray_save, strata_ndarray_close, strata_ndarray_free, strata_ndarray_get_info
  public :: strata_ndarray_dtype, strata_ndarray_get_slice, strata_ndarray_set_slice, strata_ndarray_resize
  public :: strata_ndarray_open_hdf5, strata_ndarray_export_hdf5
  public :: strata_cstr, strata_error_message, strata_version_string
  ! N-d arrays, changes along an axis (src/ffi/ops.rs)
  public :: strata_ndarray_append, strata_ndarray_insert, strata_ndarray_delete, strata_ndarray_resize_at
  public :: strata_ndarray_concatenate, strata_ndarray_stack

  interface
    ! ---------------------------------------------------------------- library, errors
    function strata_version() bind(c, name="strata_version") result(r)
      import :: c_ptr
      type(c_ptr) :: r
    end function strata_version

    function strata_abi_version() bind(c, name="strata_abi_version") result(r)
      import :: c_int32_t
      integer(c_int32_t) :: r
    end function strata_abi_version

    function strata_last_error(buf, len) bind(c, name="strata_last_error") result(r)
      import :: c_char, c_size_t
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_size_t) :: r
    end function strata_last_error

    function strata_error_name(code, buf, len) bind(c, name="strata_error_name") result(r)
      import :: c_int32_t, c_int64_t, c_char, c_size_t
      integer(c_int32_t), value :: code
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_error_name

    ! ---------------------------------------------------------------- parameters
    function strata_cparams_default(out) bind(c, name="strata_cparams_default") result(r)
      import :: strata_cparams, c_int32_t
      type(strata_cparams), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_cparams_default

    function strata_dparams_default(out) bind(c, name="strata_dparams_default") result(r)
      import :: strata_dparams, c_int32_t
      type(strata_dparams), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_dparams_default

    function strata_storage_default(out) bind(c, name="strata_storage_default") result(r)
      import :: strata_storage, c_int32_t
      type(strata_storage), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_storage_default

    ! ---------------------------------------------------------------- chunks
    function strata_compress(cparams, src, srclen, dst, dstlen) bind(c, name="strata_compress") result(r)
      import :: strata_cparams, c_ptr, c_size_t, c_int64_t
      type(strata_cparams), intent(in) :: cparams
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_compress

    function strata_decompress(src, srclen, dst, dstlen) bind(c, name="strata_decompress") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_decompress

    function strata_getitem(src, srclen, start, nitems, dst, dstlen) bind(c, name="strata_getitem") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      integer(c_size_t), value :: start
      integer(c_size_t), value :: nitems
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_getitem

    function strata_chunk_get_info(src, srclen, out) bind(c, name="strata_chunk_get_info") result(r)
      import :: c_ptr, c_size_t, c_int32_t, strata_chunk_info
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      type(strata_chunk_info), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_chunk_get_info

    ! ---------------------------------------------------------------- super-chunks
    ! Always a path here (a frame file, or with storage%sparse a directory): an in-memory
    ! frame needs urlpath NULL, which this interface does not pass.
    function strata_schunk_create(urlpath, storage, cparams, dparams, out) &
        bind(c, name="strata_schunk_create") result(r)
      import :: c_char, strata_storage, strata_cparams, strata_dparams, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(strata_cparams), intent(in) :: cparams
      type(strata_dparams), intent(in) :: dparams
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_schunk_create

    function strata_schunk_open(urlpath, mode, sync, dparams, out) bind(c, name="strata_schunk_open") result(r)
      import :: c_char, c_int8_t, strata_dparams, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      integer(c_int8_t), value :: mode
      integer(c_int8_t), value :: sync
      type(strata_dparams), intent(in) :: dparams
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_schunk_open

    function strata_schunk_from_cframe(src, srclen, out) bind(c, name="strata_schunk_from_cframe") result(r)
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_schunk_from_cframe

    function strata_schunk_to_cframe(schunk, dst, dstlen) bind(c, name="strata_schunk_to_cframe") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_schunk_to_cframe

    function strata_schunk_flush(schunk) bind(c, name="strata_schunk_flush") result(r)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: schunk
      integer(c_int32_t) :: r
    end function strata_schunk_flush

    function strata_schunk_close(schunk) bind(c, name="strata_schunk_close") result(r)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: schunk
      integer(c_int32_t) :: r
    end function strata_schunk_close

    subroutine strata_schunk_free(schunk) bind(c, name="strata_schunk_free")
      import :: c_ptr
      type(c_ptr), value :: schunk
    end subroutine strata_schunk_free

    function strata_schunk_nchunks(schunk) bind(c, name="strata_schunk_nchunks") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_nchunks

    function strata_schunk_nbytes(schunk) bind(c, name="strata_schunk_nbytes") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_nbytes

    function strata_schunk_cbytes(schunk) bind(c, name="strata_schunk_cbytes") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_cbytes

    function strata_schunk_frame_len(schunk) bind(c, name="strata_schunk_frame_len") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_frame_len

    function strata_schunk_typesize(schunk) bind(c, name="strata_schunk_typesize") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_typesize

    function strata_schunk_chunksize(schunk) bind(c, name="strata_schunk_chunksize") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_chunksize

    function strata_schunk_get_cparams(schunk, out) bind(c, name="strata_schunk_get_cparams") result(r)
      import :: c_ptr, strata_cparams, c_int32_t
      type(c_ptr), value :: schunk
      type(strata_cparams), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_schunk_get_cparams

    function strata_schunk_append_buffer(schunk, src, srclen) bind(c, name="strata_schunk_append_buffer") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      integer(c_int64_t) :: r
    end function strata_schunk_append_buffer

    function strata_schunk_append_data(schunk, src, srclen) bind(c, name="strata_schunk_append_data") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      integer(c_int64_t) :: r
    end function strata_schunk_append_data

    function strata_schunk_append_chunk(schunk, chunk, chunklen) bind(c, name="strata_schunk_append_chunk") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      type(c_ptr), value :: chunk
      integer(c_size_t), value :: chunklen
      integer(c_int64_t) :: r
    end function strata_schunk_append_chunk

    function strata_schunk_insert_chunk(schunk, nchunk, chunk, chunklen) &
        bind(c, name="strata_schunk_insert_chunk") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nchunk
      type(c_ptr), value :: chunk
      integer(c_size_t), value :: chunklen
      integer(c_int64_t) :: r
    end function strata_schunk_insert_chunk

    function strata_schunk_update_chunk(schunk, nchunk, chunk, chunklen) &
        bind(c, name="strata_schunk_update_chunk") result(r)
      import :: c_ptr, c_size_t, c_int64_t, c_int32_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nchunk
      type(c_ptr), value :: chunk
      integer(c_size_t), value :: chunklen
      integer(c_int32_t) :: r
    end function strata_schunk_update_chunk

    function strata_schunk_update_buffer(schunk, nchunk, src, srclen) &
        bind(c, name="strata_schunk_update_buffer") result(r)
      import :: c_ptr, c_size_t, c_int64_t, c_int32_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nchunk
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      integer(c_int32_t) :: r
    end function strata_schunk_update_buffer

    function strata_schunk_delete_chunk(schunk, nchunk) bind(c, name="strata_schunk_delete_chunk") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nchunk
      integer(c_int64_t) :: r
    end function strata_schunk_delete_chunk

    function strata_schunk_get_chunk(schunk, nchunk, dst, dstlen) bind(c, name="strata_schunk_get_chunk") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nchunk
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_schunk_get_chunk

    function strata_schunk_decompress_chunk(schunk, nchunk, dst, dstlen) &
        bind(c, name="strata_schunk_decompress_chunk") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nchunk
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_schunk_decompress_chunk

    function strata_schunk_getitem(schunk, nchunk, start, nitems, dst, dstlen) &
        bind(c, name="strata_schunk_getitem") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nchunk
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: nitems
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_schunk_getitem

    function strata_schunk_meta_add(schunk, name, content, contentlen) bind(c, name="strata_schunk_meta_add") result(r)
      import :: c_ptr, c_char, c_size_t, c_int32_t
      type(c_ptr), value :: schunk
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: content
      integer(c_size_t), value :: contentlen
      integer(c_int32_t) :: r
    end function strata_schunk_meta_add

    function strata_schunk_meta_update(schunk, name, content, contentlen) &
        bind(c, name="strata_schunk_meta_update") result(r)
      import :: c_ptr, c_char, c_size_t, c_int32_t
      type(c_ptr), value :: schunk
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: content
      integer(c_size_t), value :: contentlen
      integer(c_int32_t) :: r
    end function strata_schunk_meta_update

    function strata_schunk_meta_get(schunk, name, dst, dstlen) bind(c, name="strata_schunk_meta_get") result(r)
      import :: c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_schunk_meta_get

    function strata_schunk_vlmeta_set(schunk, name, content, contentlen) &
        bind(c, name="strata_schunk_vlmeta_set") result(r)
      import :: c_ptr, c_char, c_size_t, c_int32_t
      type(c_ptr), value :: schunk
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: content
      integer(c_size_t), value :: contentlen
      integer(c_int32_t) :: r
    end function strata_schunk_vlmeta_set

    function strata_schunk_vlmeta_get(schunk, name, dst, dstlen) bind(c, name="strata_schunk_vlmeta_get") result(r)
      import :: c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: schunk
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_schunk_vlmeta_get

    function strata_schunk_vlmeta_delete(schunk, name) bind(c, name="strata_schunk_vlmeta_delete") result(r)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: schunk
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t) :: r
    end function strata_schunk_vlmeta_delete

    ! ---------------------------------------------------------------- N-d arrays
    ! Shapes, starts, stops and steps are C order, 0-based, stops exclusive: for a Fortran
    ! array, reverse the dimensions (README.md). dtype: strata_cstr("<f8") etc.
    function strata_ndarray_params_default(out) bind(c, name="strata_ndarray_params_default") result(r)
      import :: strata_ndarray_params, c_int32_t
      type(strata_ndarray_params), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_params_default

    function strata_ndarray_uninit(urlpath, storage, params, dtype, out) bind(c, name="strata_ndarray_uninit") result(r)
      import :: c_char, strata_storage, strata_ndarray_params, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(strata_ndarray_params), intent(in) :: params
      character(kind=c_char), intent(in) :: dtype(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_uninit

    function strata_ndarray_zeros(urlpath, storage, params, dtype, out) bind(c, name="strata_ndarray_zeros") result(r)
      import :: c_char, strata_storage, strata_ndarray_params, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(strata_ndarray_params), intent(in) :: params
      character(kind=c_char), intent(in) :: dtype(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_zeros

    function strata_ndarray_full(urlpath, storage, params, dtype, value, valuelen, out) &
        bind(c, name="strata_ndarray_full") result(r)
      import :: c_char, strata_storage, strata_ndarray_params, c_ptr, c_size_t, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(strata_ndarray_params), intent(in) :: params
      character(kind=c_char), intent(in) :: dtype(*)
      type(c_ptr), value :: value
      integer(c_size_t), value :: valuelen
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_full

    function strata_ndarray_from_buffer(urlpath, storage, params, dtype, src, srclen, out) &
        bind(c, name="strata_ndarray_from_buffer") result(r)
      import :: c_char, strata_storage, strata_ndarray_params, c_ptr, c_size_t, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(strata_ndarray_params), intent(in) :: params
      character(kind=c_char), intent(in) :: dtype(*)
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_from_buffer

    function strata_ndarray_open(urlpath, mode, sync, out) bind(c, name="strata_ndarray_open") result(r)
      import :: c_char, c_int8_t, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      integer(c_int8_t), value :: mode
      integer(c_int8_t), value :: sync
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_open

    function strata_ndarray_from_cframe(src, srclen, out) bind(c, name="strata_ndarray_from_cframe") result(r)
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_from_cframe

    function strata_ndarray_to_cframe(array, dst, dstlen) bind(c, name="strata_ndarray_to_cframe") result(r)
      import :: c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: array
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_ndarray_to_cframe

    function strata_ndarray_save(array, urlpath) bind(c, name="strata_ndarray_save") result(r)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: urlpath(*)
      integer(c_int32_t) :: r
    end function strata_ndarray_save

    function strata_ndarray_close(array) bind(c, name="strata_ndarray_close") result(r)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: array
      integer(c_int32_t) :: r
    end function strata_ndarray_close

    subroutine strata_ndarray_free(array) bind(c, name="strata_ndarray_free")
      import :: c_ptr
      type(c_ptr), value :: array
    end subroutine strata_ndarray_free

    function strata_ndarray_get_info(array, out) bind(c, name="strata_ndarray_get_info") result(r)
      import :: c_ptr, strata_ndarray_info, c_int32_t
      type(c_ptr), value :: array
      type(strata_ndarray_info), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_get_info

    function strata_ndarray_dtype(array, buf, len) bind(c, name="strata_ndarray_dtype") result(r)
      import :: c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_ndarray_dtype

    ! ---------------------------------------------------------------- HDF5 datasets
    function strata_ndarray_open_hdf5(path, dataset, out) bind(c, name="strata_ndarray_open_hdf5") result(r)
      import :: c_char, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: path(*)
      character(kind=c_char), intent(in) :: dataset(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_open_hdf5

    function strata_ndarray_export_hdf5(array, path, dataset, overwrite) &
        bind(c, name="strata_ndarray_export_hdf5") result(r)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: path(*)
      character(kind=c_char), intent(in) :: dataset(*)
      integer(c_int32_t), value :: overwrite
      integer(c_int32_t) :: r
    end function strata_ndarray_export_hdf5

    function strata_ndarray_get_slice(array, ndim, start, stop, step, dst, dstlen) &
        bind(c, name="strata_ndarray_get_slice") result(r)
      import :: c_ptr, c_int32_t, c_int64_t, c_size_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: ndim
      integer(c_int64_t), intent(in) :: start(*)
      integer(c_int64_t), intent(in) :: stop(*)
      integer(c_int64_t), intent(in) :: step(*)
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_ndarray_get_slice

    function strata_ndarray_set_slice(array, ndim, start, stop, step, src, srclen) &
        bind(c, name="strata_ndarray_set_slice") result(r)
      import :: c_ptr, c_int32_t, c_int64_t, c_size_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: ndim
      integer(c_int64_t), intent(in) :: start(*)
      integer(c_int64_t), intent(in) :: stop(*)
      integer(c_int64_t), intent(in) :: step(*)
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      integer(c_int32_t) :: r
    end function strata_ndarray_set_slice

    function strata_ndarray_resize(array, ndim, new_shape) bind(c, name="strata_ndarray_resize") result(r)
      import :: c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: ndim
      integer(c_int64_t), intent(in) :: new_shape(*)
      integer(c_int32_t) :: r
    end function strata_ndarray_resize

    ! ---------------------------------------------------------------- N-d arrays: changes along an axis
    ! (src/ffi/ops.rs). `axis` is a C axis, 0-based: axis 0 is the LAST Fortran dimension, so
    ! a field f(nx, ny, nt) (C shape (nt, ny, nx)) grows in time along axis 0, and one time
    ! step f(:, :, t) is one slab. Lengths are bytes; positions 0-based.
    function strata_ndarray_append(array, axis, src, srclen) bind(c, name="strata_ndarray_append") result(r)
      import :: c_ptr, c_int32_t, c_int64_t, c_size_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: axis
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      integer(c_int64_t) :: r
    end function strata_ndarray_append

    function strata_ndarray_insert(array, axis, position, src, srclen) &
        bind(c, name="strata_ndarray_insert") result(r)
      import :: c_ptr, c_int32_t, c_int64_t, c_size_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: axis
      integer(c_int64_t), value :: position
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      integer(c_int64_t) :: r
    end function strata_ndarray_insert

    function strata_ndarray_delete(array, axis, start, len) bind(c, name="strata_ndarray_delete") result(r)
      import :: c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: axis
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: len
      integer(c_int64_t) :: r
    end function strata_ndarray_delete

    ! `start` (C order, 0-based) is required here; the old shape puts the change at the ends.
    function strata_ndarray_resize_at(array, ndim, new_shape, start) bind(c, name="strata_ndarray_resize_at") result(r)
      import :: c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: ndim
      integer(c_int64_t), intent(in) :: new_shape(*)
      integer(c_int64_t), intent(in) :: start(*)
      integer(c_int32_t) :: r
    end function strata_ndarray_resize_at

    function strata_ndarray_concatenate(arrays, narrays, axis, urlpath, storage, out) &
        bind(c, name="strata_ndarray_concatenate") result(r)
      import :: c_ptr, c_size_t, c_int32_t, c_char, strata_storage
      type(c_ptr), intent(in) :: arrays(*)
      integer(c_size_t), value :: narrays
      integer(c_int32_t), value :: axis
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_concatenate

    function strata_ndarray_stack(arrays, narrays, axis, urlpath, storage, out) &
        bind(c, name="strata_ndarray_stack") result(r)
      import :: c_ptr, c_size_t, c_int32_t, c_char, strata_storage
      type(c_ptr), intent(in) :: arrays(*)
      integer(c_size_t), value :: narrays
      integer(c_int32_t), value :: axis
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_stack
    ! ---------------------------------------------------------------- end of changes along an axis

    ! C's strlen, to read strata_version()'s string.
    function c_strlen(s) bind(c, name="strlen") result(r)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: r
    end function c_strlen
  end interface

  ! ================================================================ runtime, cache, attributes
  ! (the C functions of the runtime, the block cache, plugins and an N-d array's attributes;
  ! the section's helpers are at the end of the module)
  type, bind(c), public :: strata_runtime_config
    integer(c_size_t) :: size
    integer(c_int32_t) :: workers
    integer(c_int32_t) :: nthreads
    integer(c_int32_t) :: pin
    integer(c_size_t) :: l1d
    integer(c_size_t) :: l2
    integer(c_size_t) :: l3
  end type strata_runtime_config

  type, bind(c), public :: strata_runtime_info
    integer(c_int32_t) :: workers
    integer(c_int32_t) :: nthreads
    integer(c_int32_t) :: pinned
    integer(c_int32_t) :: logical_cores
    integer(c_int32_t) :: physical_cores
    integer(c_size_t) :: l1d
    integer(c_size_t) :: l2
    integer(c_size_t) :: l3
  end type strata_runtime_info

  type, bind(c), public :: strata_cache_stats
    integer(c_int64_t) :: hits
    integer(c_int64_t) :: misses
    integer(c_int64_t) :: coalesced
    integer(c_int64_t) :: inserts
    integer(c_int64_t) :: evictions
    integer(c_int64_t) :: bytes
    integer(c_int64_t) :: entries
    integer(c_int64_t) :: capacity
  end type strata_cache_stats

  ! One metalayer for strata_ndarray_zeros_with_meta: name and content as C pointers (c_loc of
  ! a TARGET strata_cstr string and of the content bytes).
  type, bind(c), public :: strata_metalayer
    type(c_ptr) :: name
    type(c_ptr) :: content
    integer(c_size_t) :: contentlen
  end type strata_metalayer

  public :: strata_runtime_config_default, strata_runtime_configure, strata_runtime_get_info
  public :: strata_runtime_set_nthreads, strata_load_plugin
  public :: strata_cache_new, strata_cache_free, strata_cache_get_stats, strata_cache_clear
  public :: strata_ndarray_set_cache, strata_ndarray_set_nthreads, strata_schunk_set_nthreads
  public :: strata_schunk_copy, strata_schunk_fill_special, strata_schunk_update_chunks
  public :: strata_schunk_meta_count, strata_schunk_meta_name, strata_schunk_vlmeta_count
  public :: strata_schunk_vlmeta_name
  public :: strata_ndarray_zeros_memory, strata_ndarray_from_buffer_memory
  public :: strata_ndarray_get_cparams, strata_ndarray_zeros_with_meta
  public :: strata_ndarray_meta_get, strata_ndarray_meta_set, strata_ndarray_meta_count
  public :: strata_ndarray_meta_name, strata_ndarray_vlmeta_set, strata_ndarray_vlmeta_get
  public :: strata_ndarray_vlmeta_delete, strata_ndarray_vlmeta_count, strata_ndarray_vlmeta_name
  public :: strata_ndarray_vlmeta_set_int64, strata_ndarray_vlmeta_get_int64
  public :: strata_ndarray_vlmeta_set_float64, strata_ndarray_vlmeta_get_float64
  public :: strata_ndarray_vlmeta_set_string, strata_ndarray_vlmeta_get_string
  public :: strata_ndarray_vlmeta_set_int64_array, strata_ndarray_vlmeta_set_float64_array
  public :: strata_ndarray_vlmeta_get_int64_array, strata_ndarray_vlmeta_get_float64_array
  public :: strata_codec_id, strata_codec_name, strata_filter_id, strata_filter_name
  public :: strata_sizeof, strata_vlmeta_set, strata_vlmeta_string, strata_codec_name_string
  public :: strata_filter_name_string, strata_ndarray_vlmeta_names

  !> Bytes of an array of any type, rank 1 to 4, allocatable or assumed-shape (what C calls
  !> the buffer's length): size(a) * storage_size(a) / 8.
  interface strata_sizeof
    module procedure sizeof_1, sizeof_2, sizeof_3, sizeof_4
  end interface strata_sizeof

  !> Sets vlmetalayer `name` of an N-d array to an integer(c_int64_t), a real(c_double), a
  !> character string, or a rank-1 array of either number kind (python-blosc2 reads an int,
  !> a float, a str, a list). Returns 0 or a STRATA_ERROR_* code.
  interface strata_vlmeta_set
    module procedure vlmeta_set_i8, vlmeta_set_r8, vlmeta_set_str, vlmeta_set_i8s, vlmeta_set_r8s
  end interface strata_vlmeta_set

  interface
    function strata_runtime_config_default(out) bind(c, name="strata_runtime_config_default") result(r)
      import :: strata_runtime_config, c_int32_t
      type(strata_runtime_config), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_runtime_config_default

    function strata_runtime_configure(config) bind(c, name="strata_runtime_configure") result(r)
      import :: strata_runtime_config, c_int32_t
      type(strata_runtime_config), intent(in) :: config
      integer(c_int32_t) :: r
    end function strata_runtime_configure

    function strata_runtime_get_info(out) bind(c, name="strata_runtime_get_info") result(r)
      import :: strata_runtime_info, c_int32_t
      type(strata_runtime_info), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_runtime_get_info

    function strata_runtime_set_nthreads(nthreads) bind(c, name="strata_runtime_set_nthreads") result(r)
      import :: c_int32_t
      integer(c_int32_t), value :: nthreads
      integer(c_int32_t) :: r
    end function strata_runtime_set_nthreads

    function strata_load_plugin(path) bind(c, name="strata_load_plugin") result(r)
      import :: c_char, c_int32_t
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int32_t) :: r
    end function strata_load_plugin

    function strata_cache_new(capacity) bind(c, name="strata_cache_new") result(r)
      import :: c_int64_t, c_ptr
      integer(c_int64_t), value :: capacity
      type(c_ptr) :: r
    end function strata_cache_new

    subroutine strata_cache_free(cache) bind(c, name="strata_cache_free")
      import :: c_ptr
      type(c_ptr), value :: cache
    end subroutine strata_cache_free

    function strata_cache_get_stats(cache, out) bind(c, name="strata_cache_get_stats") result(r)
      import :: c_ptr, strata_cache_stats, c_int32_t
      type(c_ptr), value :: cache
      type(strata_cache_stats), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_cache_get_stats

    function strata_cache_clear(cache) bind(c, name="strata_cache_clear") result(r)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: cache
      integer(c_int32_t) :: r
    end function strata_cache_clear

    function strata_ndarray_set_cache(array, cache) bind(c, name="strata_ndarray_set_cache") result(r)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: array, cache
      integer(c_int32_t) :: r
    end function strata_ndarray_set_cache

    function strata_ndarray_set_nthreads(array, compress_nthreads, decompress_nthreads) &
        bind(c, name="strata_ndarray_set_nthreads") result(r)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: array
      integer(c_int32_t), value :: compress_nthreads, decompress_nthreads
      integer(c_int32_t) :: r
    end function strata_ndarray_set_nthreads

    function strata_schunk_set_nthreads(schunk, compress_nthreads, decompress_nthreads) &
        bind(c, name="strata_schunk_set_nthreads") result(r)
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: schunk
      integer(c_int32_t), value :: compress_nthreads, decompress_nthreads
      integer(c_int32_t) :: r
    end function strata_schunk_set_nthreads

    function strata_schunk_copy(schunk, urlpath, storage, out) bind(c, name="strata_schunk_copy") result(r)
      import :: c_ptr, c_char, strata_storage, c_int32_t
      type(c_ptr), value :: schunk
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_schunk_copy

    function strata_schunk_fill_special(schunk, nitems, special, chunksize) &
        bind(c, name="strata_schunk_fill_special") result(r)
      import :: c_ptr, c_int64_t, c_int8_t, c_size_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: nitems
      integer(c_int8_t), value :: special
      integer(c_size_t), value :: chunksize
      integer(c_int64_t) :: r
    end function strata_schunk_fill_special

    ! `chunks` holds `n` C pointers (c_loc of each compressed chunk).
    function strata_schunk_update_chunks(schunk, nchunks, chunks, chunklens, n) &
        bind(c, name="strata_schunk_update_chunks") result(r)
      import :: c_ptr, c_int64_t, c_size_t, c_int32_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), intent(in) :: nchunks(*)
      type(c_ptr), intent(in) :: chunks(*)
      integer(c_size_t), intent(in) :: chunklens(*)
      integer(c_size_t), value :: n
      integer(c_int32_t) :: r
    end function strata_schunk_update_chunks

    function strata_schunk_meta_count(schunk) bind(c, name="strata_schunk_meta_count") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_meta_count

    function strata_schunk_meta_name(schunk, i, buf, len) bind(c, name="strata_schunk_meta_name") result(r)
      import :: c_ptr, c_int64_t, c_char, c_size_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: i
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_schunk_meta_name

    function strata_schunk_vlmeta_count(schunk) bind(c, name="strata_schunk_vlmeta_count") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: schunk
      integer(c_int64_t) :: r
    end function strata_schunk_vlmeta_count

    function strata_schunk_vlmeta_name(schunk, i, buf, len) bind(c, name="strata_schunk_vlmeta_name") result(r)
      import :: c_ptr, c_int64_t, c_char, c_size_t
      type(c_ptr), value :: schunk
      integer(c_int64_t), value :: i
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_schunk_vlmeta_name

    ! In-memory arrays: strata_ndarray_zeros and _from_buffer with a NULL urlpath and storage.
    function c_ndarray_zeros_memory(urlpath, storage, params, dtype, out) &
        bind(c, name="strata_ndarray_zeros") result(r)
      import :: c_ptr, strata_ndarray_params, c_char, c_int32_t
      type(c_ptr), value :: urlpath, storage
      type(strata_ndarray_params), intent(in) :: params
      character(kind=c_char), intent(in) :: dtype(*)
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function c_ndarray_zeros_memory

    function c_ndarray_from_buffer_memory(urlpath, storage, params, dtype, src, srclen, out) &
        bind(c, name="strata_ndarray_from_buffer") result(r)
      import :: c_ptr, strata_ndarray_params, c_char, c_size_t, c_int32_t
      type(c_ptr), value :: urlpath, storage
      type(strata_ndarray_params), intent(in) :: params
      character(kind=c_char), intent(in) :: dtype(*)
      type(c_ptr), value :: src
      integer(c_size_t), value :: srclen
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function c_ndarray_from_buffer_memory

    ! ---------------------------------------------------------------- N-d attributes
    function strata_ndarray_get_cparams(array, out) bind(c, name="strata_ndarray_get_cparams") result(r)
      import :: c_ptr, strata_cparams, c_int32_t
      type(c_ptr), value :: array
      type(strata_cparams), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_get_cparams

    function strata_ndarray_zeros_with_meta(urlpath, storage, params, dtype, metalayers, nmetalayers, out) &
        bind(c, name="strata_ndarray_zeros_with_meta") result(r)
      import :: c_char, strata_storage, strata_ndarray_params, strata_metalayer, c_size_t, c_ptr, c_int32_t
      character(kind=c_char), intent(in) :: urlpath(*)
      type(strata_storage), intent(in) :: storage
      type(strata_ndarray_params), intent(in) :: params
      character(kind=c_char), intent(in) :: dtype(*)
      type(strata_metalayer), intent(in) :: metalayers(*)
      integer(c_size_t), value :: nmetalayers
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_zeros_with_meta

    function strata_ndarray_meta_get(array, name, dst, dstlen) bind(c, name="strata_ndarray_meta_get") result(r)
      import :: c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_ndarray_meta_get

    function strata_ndarray_meta_set(array, name, content, contentlen) bind(c, name="strata_ndarray_meta_set") result(r)
      import :: c_ptr, c_char, c_size_t, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: content
      integer(c_size_t), value :: contentlen
      integer(c_int32_t) :: r
    end function strata_ndarray_meta_set

    function strata_ndarray_meta_count(array) bind(c, name="strata_ndarray_meta_count") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: array
      integer(c_int64_t) :: r
    end function strata_ndarray_meta_count

    function strata_ndarray_meta_name(array, i, buf, len) bind(c, name="strata_ndarray_meta_name") result(r)
      import :: c_ptr, c_int64_t, c_char, c_size_t
      type(c_ptr), value :: array
      integer(c_int64_t), value :: i
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_ndarray_meta_name

    function strata_ndarray_vlmeta_set(array, name, content, contentlen) &
        bind(c, name="strata_ndarray_vlmeta_set") result(r)
      import :: c_ptr, c_char, c_size_t, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: content
      integer(c_size_t), value :: contentlen
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_set

    function strata_ndarray_vlmeta_get(array, name, dst, dstlen) bind(c, name="strata_ndarray_vlmeta_get") result(r)
      import :: c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: dst
      integer(c_size_t), value :: dstlen
      integer(c_int64_t) :: r
    end function strata_ndarray_vlmeta_get

    function strata_ndarray_vlmeta_delete(array, name) bind(c, name="strata_ndarray_vlmeta_delete") result(r)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_delete

    function strata_ndarray_vlmeta_count(array) bind(c, name="strata_ndarray_vlmeta_count") result(r)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: array
      integer(c_int64_t) :: r
    end function strata_ndarray_vlmeta_count

    function strata_ndarray_vlmeta_name(array, i, buf, len) bind(c, name="strata_ndarray_vlmeta_name") result(r)
      import :: c_ptr, c_int64_t, c_char, c_size_t
      type(c_ptr), value :: array
      integer(c_int64_t), value :: i
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_ndarray_vlmeta_name

    function strata_ndarray_vlmeta_set_int64(array, name, value) bind(c, name="strata_ndarray_vlmeta_set_int64") result(r)
      import :: c_ptr, c_char, c_int64_t, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), value :: value
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_set_int64

    function strata_ndarray_vlmeta_get_int64(array, name, out) bind(c, name="strata_ndarray_vlmeta_get_int64") result(r)
      import :: c_ptr, c_char, c_int64_t, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_get_int64

    function strata_ndarray_vlmeta_set_float64(array, name, value) &
        bind(c, name="strata_ndarray_vlmeta_set_float64") result(r)
      import :: c_ptr, c_char, c_double, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), value :: value
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_set_float64

    function strata_ndarray_vlmeta_get_float64(array, name, out) &
        bind(c, name="strata_ndarray_vlmeta_get_float64") result(r)
      import :: c_ptr, c_char, c_double, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), intent(out) :: out
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_get_float64

    function strata_ndarray_vlmeta_set_string(array, name, value) &
        bind(c, name="strata_ndarray_vlmeta_set_string") result(r)
      import :: c_ptr, c_char, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*), value(*)
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_set_string

    function strata_ndarray_vlmeta_get_string(array, name, buf, len) &
        bind(c, name="strata_ndarray_vlmeta_get_string") result(r)
      import :: c_ptr, c_char, c_size_t, c_int64_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_ndarray_vlmeta_get_string

    function strata_ndarray_vlmeta_set_int64_array(array, name, values, n) &
        bind(c, name="strata_ndarray_vlmeta_set_int64_array") result(r)
      import :: c_ptr, c_char, c_int64_t, c_size_t, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(in) :: values(*)
      integer(c_size_t), value :: n
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_set_int64_array

    function strata_ndarray_vlmeta_set_float64_array(array, name, values, n) &
        bind(c, name="strata_ndarray_vlmeta_set_float64_array") result(r)
      import :: c_ptr, c_char, c_double, c_size_t, c_int32_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), intent(in) :: values(*)
      integer(c_size_t), value :: n
      integer(c_int32_t) :: r
    end function strata_ndarray_vlmeta_set_float64_array

    function strata_ndarray_vlmeta_get_int64_array(array, name, dst, n) &
        bind(c, name="strata_ndarray_vlmeta_get_int64_array") result(r)
      import :: c_ptr, c_char, c_int64_t, c_size_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t) :: dst(*)
      integer(c_size_t), value :: n
      integer(c_int64_t) :: r
    end function strata_ndarray_vlmeta_get_int64_array

    function strata_ndarray_vlmeta_get_float64_array(array, name, dst, n) &
        bind(c, name="strata_ndarray_vlmeta_get_float64_array") result(r)
      import :: c_ptr, c_char, c_double, c_size_t, c_int64_t
      type(c_ptr), value :: array
      character(kind=c_char), intent(in) :: name(*)
      real(c_double) :: dst(*)
      integer(c_size_t), value :: n
      integer(c_int64_t) :: r
    end function strata_ndarray_vlmeta_get_float64_array

    function strata_codec_id(name) bind(c, name="strata_codec_id") result(r)
      import :: c_char, c_int32_t
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t) :: r
    end function strata_codec_id

    function strata_codec_name(id, buf, len) bind(c, name="strata_codec_name") result(r)
      import :: c_int8_t, c_char, c_size_t, c_int64_t
      integer(c_int8_t), value :: id
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_codec_name

    function strata_filter_id(name) bind(c, name="strata_filter_id") result(r)
      import :: c_char, c_int32_t
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t) :: r
    end function strata_filter_id

    function strata_filter_name(id, buf, len) bind(c, name="strata_filter_name") result(r)
      import :: c_int8_t, c_char, c_size_t, c_int64_t
      integer(c_int8_t), value :: id
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_int64_t) :: r
    end function strata_filter_name
  end interface

contains

  !> `s` without trailing blanks, NUL-terminated, for a `const char *` argument.
  pure function strata_cstr(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function strata_cstr

  !> This thread's last error message (empty when no call has failed).
  function strata_error_message() result(msg)
    character(len=:), allocatable :: msg
    character(kind=c_char) :: buf(1024)
    integer(c_size_t) :: n, i
    n = strata_last_error(buf, int(size(buf), c_size_t))
    n = min(n, int(size(buf) - 1, c_size_t))
    allocate(character(len=n) :: msg)
    do i = 1, n
      msg(i:i) = buf(i)
    end do
  end function strata_error_message

  !> The library version, e.g. "0.1.0".
  function strata_version_string() result(v)
    character(len=:), allocatable :: v
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    p = strata_version()
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: v)
    do i = 1, n
      v(i:i) = chars(i)
    end do
  end function strata_version_string
  ! ================================================================ runtime, cache, attributes
  ! (helpers of the section above)

  pure function sizeof_1(a) result(n)
    class(*), intent(in) :: a(:)
    integer(c_size_t) :: n
    n = int(size(a), c_size_t) * int(storage_size(a) / 8, c_size_t)
  end function sizeof_1

  pure function sizeof_2(a) result(n)
    class(*), intent(in) :: a(:, :)
    integer(c_size_t) :: n
    n = int(size(a), c_size_t) * int(storage_size(a) / 8, c_size_t)
  end function sizeof_2

  pure function sizeof_3(a) result(n)
    class(*), intent(in) :: a(:, :, :)
    integer(c_size_t) :: n
    n = int(size(a), c_size_t) * int(storage_size(a) / 8, c_size_t)
  end function sizeof_3

  pure function sizeof_4(a) result(n)
    class(*), intent(in) :: a(:, :, :, :)
    integer(c_size_t) :: n
    n = int(size(a), c_size_t) * int(storage_size(a) / 8, c_size_t)
  end function sizeof_4

  !> An in-memory array of zeros (strata_ndarray_zeros without a path); 0 or an error code.
  function strata_ndarray_zeros_memory(params, dtype, out) result(r)
    type(strata_ndarray_params), intent(in) :: params
    character(len=*), intent(in) :: dtype
    type(c_ptr), intent(out) :: out
    integer(c_int32_t) :: r
    r = c_ndarray_zeros_memory(c_null_ptr, c_null_ptr, params, strata_cstr(dtype), out)
  end function strata_ndarray_zeros_memory

  !> An in-memory array holding `src` (bytes at a C pointer, `srclen` of them: c_loc(a) and
  !> strata_sizeof(a)); 0 or an error code.
  function strata_ndarray_from_buffer_memory(params, dtype, src, srclen, out) result(r)
    type(strata_ndarray_params), intent(in) :: params
    character(len=*), intent(in) :: dtype
    type(c_ptr), intent(in) :: src
    integer(c_size_t), intent(in) :: srclen
    type(c_ptr), intent(out) :: out
    integer(c_int32_t) :: r
    r = c_ndarray_from_buffer_memory(c_null_ptr, c_null_ptr, params, strata_cstr(dtype), src, srclen, out)
  end function strata_ndarray_from_buffer_memory

  function vlmeta_set_i8(array, name, value) result(r)
    type(c_ptr), intent(in) :: array
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: value
    integer(c_int32_t) :: r
    r = strata_ndarray_vlmeta_set_int64(array, strata_cstr(name), value)
  end function vlmeta_set_i8

  function vlmeta_set_r8(array, name, value) result(r)
    type(c_ptr), intent(in) :: array
    character(len=*), intent(in) :: name
    real(c_double), intent(in) :: value
    integer(c_int32_t) :: r
    r = strata_ndarray_vlmeta_set_float64(array, strata_cstr(name), value)
  end function vlmeta_set_r8

  function vlmeta_set_str(array, name, value) result(r)
    type(c_ptr), intent(in) :: array
    character(len=*), intent(in) :: name, value
    integer(c_int32_t) :: r
    r = strata_ndarray_vlmeta_set_string(array, strata_cstr(name), value // c_null_char)
  end function vlmeta_set_str

  function vlmeta_set_i8s(array, name, values) result(r)
    type(c_ptr), intent(in) :: array
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: values(:)
    integer(c_int32_t) :: r
    r = strata_ndarray_vlmeta_set_int64_array(array, strata_cstr(name), values, int(size(values), c_size_t))
  end function vlmeta_set_i8s

  function vlmeta_set_r8s(array, name, values) result(r)
    type(c_ptr), intent(in) :: array
    character(len=*), intent(in) :: name
    real(c_double), intent(in) :: values(:)
    integer(c_int32_t) :: r
    r = strata_ndarray_vlmeta_set_float64_array(array, strata_cstr(name), values, int(size(values), c_size_t))
  end function vlmeta_set_r8s

  !> The string value of vlmetalayer `name`, or "" with `rc` < 0 (an error code) when it has
  !> none.
  function strata_vlmeta_string(array, name, rc) result(s)
    type(c_ptr), intent(in) :: array
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(out) :: rc
    character(len=:), allocatable :: s
    character(kind=c_char), allocatable :: buf(:)
    rc = strata_ndarray_vlmeta_get_string(array, strata_cstr(name), buf, 0_c_size_t)
    s = ""
    if (rc < 0) return
    allocate(buf(rc + 1))
    rc = strata_ndarray_vlmeta_get_string(array, strata_cstr(name), buf, int(size(buf), c_size_t))
    if (rc >= 0) s = chars(buf, rc)
  end function strata_vlmeta_string

  !> The names of the array's vlmetalayers into `names`, blank-padded to 31 characters
  !> (Blosc2's longest name).
  subroutine strata_ndarray_vlmeta_names(array, names)
    type(c_ptr), intent(in) :: array
    character(len=31), allocatable, intent(out) :: names(:)
    character(kind=c_char) :: buf(32)
    integer(c_int64_t) :: i, n, len
    n = max(strata_ndarray_vlmeta_count(array), 0_c_int64_t)
    allocate(names(n))
    do i = 1, n
      len = strata_ndarray_vlmeta_name(array, i - 1, buf, int(size(buf), c_size_t))
      names(i) = ""
      if (len > 0) names(i) = chars(buf, len)
    end do
  end subroutine strata_ndarray_vlmeta_names

  !> The name of codec `id` ("" for an unknown one).
  function strata_codec_name_string(id) result(s)
    integer(c_int8_t), intent(in) :: id
    character(len=:), allocatable :: s
    character(kind=c_char) :: buf(64)
    integer(c_int64_t) :: n
    n = strata_codec_name(id, buf, int(size(buf), c_size_t))
    s = ""
    if (n > 0) s = chars(buf, n)
  end function strata_codec_name_string

  !> The name of filter `id` ("" for an unknown one).
  function strata_filter_name_string(id) result(s)
    integer(c_int8_t), intent(in) :: id
    character(len=:), allocatable :: s
    character(kind=c_char) :: buf(64)
    integer(c_int64_t) :: n
    n = strata_filter_name(id, buf, int(size(buf), c_size_t))
    s = ""
    if (n > 0) s = chars(buf, n)
  end function strata_filter_name_string

  !> The first `n` characters of `buf` as a string.
  pure function chars(buf, n) result(s)
    character(kind=c_char), intent(in) :: buf(:)
    integer(c_int64_t), intent(in) :: n
    character(len=n) :: s
    integer(c_int64_t) :: i
    do i = 1, n
      s(i:i) = buf(i)
    end do
  end function chars
end module strata
