! Built by tests/install.rs with only an installed Strata:
! `gfortran prog.f90 $(pkg-config --cflags --libs strata-fortran)`, run without
! LD_LIBRARY_PATH. An in-memory array from an allocatable, read back; an attribute set and
! read. Prints the library version and "ok".
program prog
  use, intrinsic :: iso_c_binding
  use strata
  implicit none
  real(c_double), allocatable, target :: x(:, :), y(:, :)
  type(strata_ndarray_params) :: p
  type(c_ptr) :: a
  integer(c_int64_t) :: n, steps
  integer :: i

  allocate(x(8, 5), y(8, 5))
  x = reshape([(real(i, c_double) / 4, i = 1, 40)], [8, 5])
  y = 0
  if (strata_ndarray_params_default(p) /= 0) error stop 1
  p%ndim = 2
  p%shape(1:2) = [5_c_int64_t, 8_c_int64_t]
  p%chunkshape(1:2) = [5, 4]
  p%blockshape(1:2) = [5, 2]
  if (strata_ndarray_from_buffer_memory(p, "<f8", c_loc(x), strata_sizeof(x), a) /= 0) error stop 2
  n = strata_ndarray_get_slice(a, 2, [0_c_int64_t, 0_c_int64_t], [5_c_int64_t, 8_c_int64_t], &
                               [1_c_int64_t, 1_c_int64_t], c_loc(y), strata_sizeof(y))
  if (n /= strata_sizeof(y) .or. any(y /= x)) error stop 3
  if (strata_vlmeta_set(a, "steps", 40_c_int64_t) /= 0) error stop 4
  if (strata_ndarray_vlmeta_get_int64(a, strata_cstr("steps"), steps) /= 0 .or. steps /= 40) error stop 5
  if (strata_ndarray_close(a) /= 0) error stop 6
  print '(a, a)', "strata ", strata_version_string()
  print '(a)', "ok"
end program prog
