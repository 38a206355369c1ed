! A real(8) 3-D Fortran array as a b2nd N-d array (.b2nd file), and sections of it read back
! and written, with Fortran's column-major order mapped explicitly to b2nd's C order.
!
! The array t(ni, nj, nk) has i fastest in memory, so its bytes are a C-order array of shape
! (nk, nj, ni): the shape, starts and stops passed to Strata are the Fortran ones reversed,
! 0-based, stops exclusive. The section t(i1:i2, j1:j2, k1:k2) is the C slice
! start = (k1-1, j1-1, i1-1), stop = (k2, j2, i2); the bytes Strata returns are a Fortran
! array b(i2-i1+1, j2-j1+1, k2-k1+1). python-blosc2 sees the file as arr[k, j, i] (tests).
!
! Usage: slice_array [dir]   (dir for the .b2nd file, default ".")
program slice_array
  use, intrinsic :: iso_c_binding
  use strata
  implicit none

  integer, parameter :: ni = 64, nj = 50, nk = 30
  real(c_double), target :: t(ni, nj, nk)
  real(c_double), target :: sec(11, 11, 1), col(nk), plane(ni, nj), patch(4, 3, 2)
  type(strata_ndarray_params) :: p
  type(strata_ndarray_info) :: info
  type(strata_storage) :: st
  type(c_ptr) :: a
  integer(c_int64_t) :: n, start(3), stop(3), step(3)
  integer :: i, j, k
  character(len=512) :: dir
  character(kind=c_char) :: dtype(16)

  dir = "."
  if (command_argument_count() >= 1) call get_command_argument(1, dir)

  do k = 1, nk
    do j = 1, nj
      do i = 1, ni
        t(i, j, k) = 1000.0d0 * k + 10.0d0 * j + 0.01d0 * i
      end do
    end do
  end do

  ! Shape reversed: (nk, nj, ni); chunks of whole (i, j) planes in 5-plane slabs.
  call check(int(strata_ndarray_params_default(p), c_int64_t), "params_default")
  if (p%size /= c_sizeof(p)) stop "strata_ndarray_params layout differs between C and Fortran"
  p%ndim = 3
  p%shape(1:3) = [integer(c_int64_t) :: nk, nj, ni]
  p%chunkshape(1:3) = [integer(c_int32_t) :: 5, nj, ni]
  p%blockshape(1:3) = [integer(c_int32_t) :: 1, 25, ni]
  p%cparams%codec = 5_c_int8_t
  call check(int(strata_storage_default(st), c_int64_t), "storage_default")
  st%overwrite = 1_c_int8_t
  call check(int(strata_ndarray_from_buffer(strata_cstr(trim(dir) // "/field.b2nd"), st, p, strata_cstr("<f8"), &
                                            c_loc(t), int(c_sizeof(t), c_size_t), a), c_int64_t), "from_buffer")
  call check(int(strata_ndarray_close(a), c_int64_t), "close")

  call check(int(strata_ndarray_open(strata_cstr(trim(dir) // "/field.b2nd"), STRATA_OPEN_READWRITE, &
                                     STRATA_SYNC_ON_CLOSE, a), c_int64_t), "open")
  call check(int(strata_ndarray_get_info(a, info), c_int64_t), "get_info")
  if (info%ndim /= 3 .or. info%typesize /= 8) stop "info"
  if (any(info%shape(1:3) /= [integer(c_int64_t) :: nk, nj, ni])) stop "shape"
  n = strata_ndarray_dtype(a, dtype, int(size(dtype), c_size_t))
  if (n /= 3 .or. any(dtype(1:3) /= ["<", "f", "8"])) stop "dtype"
  print '(a, 3(i0, 1x), a, i0, a, i0, a, i0, a)', "field.b2nd: C shape ", info%shape(1:3), "= Fortran t(", &
        ni, ", ", nj, ", ", nk, ") of <f8"

  ! The section t(10:20, 5:15, 3): C start (3-1, 5-1, 10-1), stop (3, 15, 20).
  start = [integer(c_int64_t) :: 2, 4, 9]
  stop = [integer(c_int64_t) :: 3, 15, 20]
  step = 1
  n = strata_ndarray_get_slice(a, 3, start, stop, step, c_null_ptr, 0_c_size_t)
  if (n /= c_sizeof(sec)) stop "size query"
  call check(strata_ndarray_get_slice(a, 3, start, stop, step, c_loc(sec), int(c_sizeof(sec), c_size_t)), "section")
  if (any(sec(:, :, 1) /= t(10:20, 5:15, 3))) stop "section differs"

  ! A column t(33, 44, :): C [:, 43, 32].
  start = [integer(c_int64_t) :: 0, 43, 32]
  stop = [integer(c_int64_t) :: nk, 44, 33]
  call check(strata_ndarray_get_slice(a, 3, start, stop, step, c_loc(col), int(c_sizeof(col), c_size_t)), "column")
  if (any(col /= t(33, 44, :))) stop "column differs"

  ! A plane t(:, :, 17) with every dimension whole past the first: ndim 1, C [16, :, :].
  start(1) = 16
  stop(1) = 17
  call check(strata_ndarray_get_slice(a, 1, start, stop, step, c_loc(plane), int(c_sizeof(plane), c_size_t)), &
             "plane")
  if (any(plane /= t(:, :, 17))) stop "plane differs"

  ! Strided: t(1:7:2, 1:5:2, 1:3:2) is C start (0, 0, 0), stop (3, 5, 7), step (2, 2, 2).
  start = 0
  stop = [integer(c_int64_t) :: 3, 5, 7]
  step = 2
  call check(strata_ndarray_get_slice(a, 3, start, stop, step, c_loc(patch), int(c_sizeof(patch), c_size_t)), &
             "strided")
  if (any(patch /= t(1:7:2, 1:5:2, 1:3:2))) stop "strided section differs"

  ! Write t(61:64, 48:50, 29:30) = -1 and read it back.
  patch = -1.0d0
  start = [integer(c_int64_t) :: 28, 47, 60]
  stop = [integer(c_int64_t) :: 30, 50, 64]
  step = 1
  call check(int(strata_ndarray_set_slice(a, 3, start, stop, step, c_loc(patch), int(c_sizeof(patch), c_size_t)), &
                 c_int64_t), "set_slice")
  t(61:64, 48:50, 29:30) = -1.0d0
  patch = 0.0d0
  call check(strata_ndarray_get_slice(a, 3, start, stop, step, c_loc(patch), int(c_sizeof(patch), c_size_t)), &
             "read back")
  if (any(patch /= -1.0d0)) stop "set_slice not read back"

  ! A too-small buffer is an error with a message, not a crash.
  n = strata_ndarray_get_slice(a, 3, start, stop, step, c_loc(col), 8_c_size_t)
  if (n /= STRATA_ERROR_WRITE_BUFFER) stop "expected STRATA_ERROR_WRITE_BUFFER"
  print '(a, a)', "get_slice into 8 bytes (expected): ", strata_error_message()
  call check(int(strata_ndarray_close(a), c_int64_t), "close")
  print '(a)', "ok"

contains

  subroutine check(rc, what)
    integer(c_int64_t), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc < 0) then
      print '(a, a, i0, a, a)', what, " failed: ", rc, ": ", strata_error_message()
      error stop 1
    end if
  end subroutine check
end program slice_array
