! Reads a 3-D <f8 b2nd array through the Fortran module, from a path or an http(s):// URL
! alike, for tests/interop/test_remote.py: prints its C shape, then one plane and one column
! of it as numbers, so that the test compares what a URL gives with what the file gives.
!
! Usage: remote_reader PATH-OR-URL
program remote_reader
  use, intrinsic :: iso_c_binding
  use strata
  implicit none

  type(strata_ndarray_info) :: info
  type(c_ptr) :: a
  integer(c_int64_t) :: start(3), stop(3), step(3), n
  real(c_double), allocatable, target :: plane(:), col(:)
  character(len=2048) :: where

  call get_command_argument(1, where)
  call check(int(strata_ndarray_open(strata_cstr(trim(where)), STRATA_OPEN_READ, STRATA_SYNC_ON_CLOSE, a), &
                 c_int64_t), "open")
  call check(int(strata_ndarray_get_info(a, info), c_int64_t), "get_info")
  if (info%ndim /= 3 .or. info%typesize /= 8) stop "not a 3-d array of 8-byte items"
  print '(a, 3(1x, i0))', "shape", info%shape(1:3)
  ! C [5, :, :] and C [:, 33, 7].
  allocate(plane(info%shape(2) * info%shape(3)), col(info%shape(1)))
  start = [integer(c_int64_t) :: 5, 0, 0]
  stop = [integer(c_int64_t) :: 6, info%shape(2), info%shape(3)]
  step = 1
  n = strata_ndarray_get_slice(a, 3, start, stop, step, c_loc(plane), int(8 * size(plane), c_size_t))
  call check(n, "plane")
  start = [integer(c_int64_t) :: 0, 33, 7]
  stop = [integer(c_int64_t) :: info%shape(1), 34, 8]
  n = strata_ndarray_get_slice(a, 3, start, stop, step, c_loc(col), int(8 * size(col), c_size_t))
  call check(n, "column")
  print '(a, es24.16)', "plane sum", sum(plane)
  print '(a, *(1x, es24.16))', "column", col
  call check(int(strata_ndarray_close(a), c_int64_t), "close")

contains

  subroutine check(rc, what)
    integer(c_int64_t), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc < 0) then
      print '(a, a, i0, a, a)', what, " failed: ", rc, ": ", strata_error_message()
      error stop 1
    end if
  end subroutine check
end program remote_reader
