! Compress a real(8) 3-D field with Strata from Fortran: the whole array as one chunk (read
! back whole and one element at a time), then as a frame file of one chunk per k-plane,
! closed, reopened and read plane by plane.
!
! Fortran stores T(i, j, k) with i fastest, so the array's bytes are, in C terms, an array of
! shape (nk, nj, ni): element T(i, j, k) is item (i-1) + ni*(j-1) + ni*nj*(k-1), and the
! plane T(:, :, k) is one contiguous run of ni*nj items.
!
! Usage: compress_array [dir]   (dir for the frame file, default ".")
program compress_array
  use, intrinsic :: iso_c_binding
  use strata
  implicit none

  integer, parameter :: ni = 90, nj = 45, nk = 12
  real(c_double), target :: t(ni, nj, nk), back(ni, nj, nk), plane(ni, nj), one
  integer(c_int8_t), allocatable, target :: chunk(:)
  type(strata_cparams) :: cp
  type(strata_dparams) :: dp
  type(strata_storage) :: st
  type(strata_chunk_info) :: info
  type(c_ptr) :: s
  integer(c_int64_t) :: cbytes, n, item
  integer(c_size_t) :: nbytes
  integer :: i, j, k
  character(len=512) :: dir

  dir = "."
  if (command_argument_count() >= 1) call get_command_argument(1, dir)
  print '(a, a)', "strata ", strata_version_string()

  ! A smooth field: temperature falling with depth k, waves in i and j.
  do k = 1, nk
    do j = 1, nj
      do i = 1, ni
        t(i, j, k) = 25.0d0 - 1.5d0 * k + 2.0d0 * sin(i / 7.0d0) * cos(j / 5.0d0)
      end do
    end do
  end do
  nbytes = int(c_sizeof(t), c_size_t)

  ! 1. One chunk: zstd, 8-byte items, shuffle (the default filter).
  call check(strata_cparams_default(cp), "cparams_default")
  if (cp%size /= c_sizeof(cp)) stop "strata_cparams layout differs between C and Fortran"
  cp%codec = 5_c_int8_t
  cp%typesize = 8
  allocate(chunk(nbytes + 32))
  cbytes = strata_compress(cp, c_loc(t), nbytes, c_loc(chunk), int(size(chunk), c_size_t))
  call check(cbytes, "compress")
  print '(a, i0, a, i0, a)', "array of ", nbytes, " bytes -> chunk of ", cbytes, " bytes"
  call check(strata_chunk_get_info(c_loc(chunk), int(cbytes, c_size_t), info), "chunk_get_info")
  if (info%nbytes /= nbytes .or. info%typesize /= 8 .or. info%codec /= 5) stop "chunk header"

  n = strata_decompress(c_loc(chunk), int(cbytes, c_size_t), c_loc(back), nbytes)
  call check(n, "decompress")
  if (any(back /= t)) stop "decompressed array differs"

  ! One element, T(17, 33, 9), without decompressing the whole chunk.
  item = (17 - 1) + int(ni, c_int64_t) * (33 - 1) + int(ni, c_int64_t) * nj * (9 - 1)
  n = strata_getitem(c_loc(chunk), int(cbytes, c_size_t), int(item, c_size_t), 1_c_size_t, &
                     c_loc(one), 8_c_size_t)
  call check(n, "getitem")
  if (one /= t(17, 33, 9)) stop "getitem"

  ! A too-small destination is an error with a message, not a crash.
  n = strata_decompress(c_loc(chunk), int(cbytes, c_size_t), c_loc(back), 100_c_size_t)
  if (n /= STRATA_ERROR_WRITE_BUFFER) stop "expected STRATA_ERROR_WRITE_BUFFER"
  print '(a, a)', "decompress into 100 bytes (expected): ", strata_error_message()

  ! 2. A frame file, one chunk per k-plane.
  call check(strata_storage_default(st), "storage_default")
  st%overwrite = 1_c_int8_t
  call check(strata_dparams_default(dp), "dparams_default")
  call check(strata_schunk_create(strata_cstr(trim(dir) // "/field.b2frame"), st, cp, dp, s), "create")
  do k = 1, nk
    call check(strata_schunk_append_buffer(s, c_loc(t(1, 1, k)), int(ni * nj * 8, c_size_t)), "append")
  end do
  call check(strata_schunk_close(s), "close")

  call check(strata_schunk_open(strata_cstr(trim(dir) // "/field.b2frame"), STRATA_OPEN_READ, &
                                STRATA_SYNC_NONE, dp, s), "open")
  if (strata_schunk_nchunks(s) /= nk) stop "nchunks"
  if (strata_schunk_nbytes(s) /= nbytes) stop "nbytes"
  do k = 1, nk
    n = strata_schunk_decompress_chunk(s, int(k - 1, c_int64_t), c_loc(plane), int(c_sizeof(plane), c_size_t))
    call check(n, "decompress_chunk")
    if (any(plane /= t(:, :, k))) stop "plane differs"
  end do
  print '(a, i0, a, i0, a)', "frame: ", strata_schunk_nchunks(s), " planes, ", strata_schunk_cbytes(s), &
        " bytes compressed"
  n = strata_schunk_decompress_chunk(s, int(nk, c_int64_t), c_loc(plane), int(c_sizeof(plane), c_size_t))
  if (n /= STRATA_ERROR_INVALID_INDEX) stop "expected STRATA_ERROR_INVALID_INDEX"
  call strata_schunk_free(s)
  print '(a)', "ok"

contains

  subroutine check(rc, what)
    class(*), intent(in) :: rc
    character(len=*), intent(in) :: what
    integer(c_int64_t) :: code
    select type (rc)
    type is (integer(c_int32_t))
      code = rc
    type is (integer(c_int64_t))
      code = rc
    class default
      stop "check: not an integer"
    end select
    if (code < 0) then
      print '(a, a, i0, a, a)', what, " failed: ", code, ": ", strata_error_message()
      error stop 1
    end if
  end subroutine check
end program compress_array
