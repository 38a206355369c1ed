! A real(4) 2-D Fortran array as a .b2nd array written as a dataset of an HDF5 file (HDF5's
! Blosc2 filter, 32026, its chunks copied as stored), then that dataset opened as an array handle and a section of it read back: the same
! slice call as for a .b2nd array, reading only the chunks and blocks the section touches.
! h5py with hdf5plugin, PyTables and h5dump read the file as well.
!
! As in slice_array.f90, the Fortran array g(ni, nj) is the C-order array (nj, ni).
!
! Usage: hdf5_dataset [dir]   (dir for the .h5 file, default ".")
program hdf5_dataset
  use, intrinsic :: iso_c_binding
  use strata
  implicit none

  integer, parameter :: ni = 120, nj = 90
  real(c_float), target :: g(ni, nj), sec(21, 7)
  type(strata_ndarray_params) :: p
  type(strata_ndarray_info) :: info
  type(strata_storage) :: st
  type(c_ptr) :: a, h
  integer(c_int64_t) :: n, start(2), stop(2), step(2)
  integer :: i, j
  character(len=512) :: dir
  character(kind=c_char) :: dtype(16)

  dir = "."
  if (command_argument_count() >= 1) call get_command_argument(1, dir)
  do j = 1, nj
    do i = 1, ni
      g(i, j) = real(100 * j + i, c_float) / 8.0
    end do
  end do

  ! A .b2nd array of C shape (nj, ni): chunks of 30 x 60, blocks of 10 x 20, lz4.
  call check(int(strata_ndarray_params_default(p), c_int64_t), "params_default")
  p%ndim = 2
  p%shape(1:2) = [integer(c_int64_t) :: nj, ni]
  p%chunkshape(1:2) = [integer(c_int32_t) :: 30, 60]
  p%blockshape(1:2) = [integer(c_int32_t) :: 10, 20]
  p%cparams%codec = 1_c_int8_t
  call check(int(strata_storage_default(st), c_int64_t), "storage_default")
  st%overwrite = 1_c_int8_t
  call check(int(strata_ndarray_from_buffer(strata_cstr(trim(dir) // "/grid.b2nd"), st, p, strata_cstr("<f4"), &
                                            c_loc(g), int(c_sizeof(g), c_size_t), a), c_int64_t), "from_buffer")
  call check(int(strata_ndarray_export_hdf5(a, strata_cstr(trim(dir) // "/grid.h5"), strata_cstr("/grid"), 1), &
                 c_int64_t), "export_hdf5")
  call strata_ndarray_free(a)

  call check(int(strata_ndarray_open_hdf5(strata_cstr(trim(dir) // "/grid.h5"), strata_cstr("/grid"), h), c_int64_t), &
             "open_hdf5")
  call check(int(strata_ndarray_get_info(h, info), c_int64_t), "get_info")
  if (any(info%shape(1:2) /= [integer(c_int64_t) :: nj, ni])) stop "shape"
  if (any(info%chunkshape(1:2) /= [30, 60]) .or. any(info%blockshape(1:2) /= [10, 20])) stop "partitions"
  n = strata_ndarray_dtype(h, dtype, int(size(dtype), c_size_t))
  if (n /= 3 .or. any(dtype(1:3) /= ["<", "f", "4"])) stop "dtype"

  ! The section g(10:30, 40:88:8): C start (40-1, 10-1), stop (88, 30), step (8, 1).
  start = [integer(c_int64_t) :: 39, 9]
  stop = [integer(c_int64_t) :: 88, 30]
  step = [integer(c_int64_t) :: 8, 1]
  call check(strata_ndarray_get_slice(h, 2, start, stop, step, c_loc(sec), int(c_sizeof(sec), c_size_t)), "section")
  if (any(sec /= g(10:30, 40:88:8))) stop "section differs"
  call check(int(strata_ndarray_close(h), c_int64_t), "close")
  print '(a, i0, a, i0, a, i0, a)', "grid.h5:/grid (", nj, ", ", ni, ") of <f4, ", info%cbytes, " bytes stored"
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
end program hdf5_dataset
