! A model's output written one time step per call: an allocatable real(4) field t(nx, ny) is
! computed for each step and stored as plane `step` of a .b2nd array of C shape
! (nsteps, ny, nx); the array carries its attributes (vlmetalayers: the step count, the time
! step, the units, the levels) and a metalayer made with it. Byte lengths come from
! strata_sizeof (no c_sizeof, which gfortran refuses for allocatables). Then the file is
! reopened: compression parameters and codec/filter names, every attribute, one step read
! back into an assumed-shape section; an in-memory copy of one step; the runtime's threads
! and a block cache.
!
! Usage: model_attributes [dir]   (dir for the .b2nd file, default ".")
program model_attributes
  use, intrinsic :: iso_c_binding
  use strata
  implicit none

  integer, parameter :: nx = 90, ny = 45, nsteps = 6
  real(c_float), allocatable, target :: t(:, :), back(:, :)
  type(strata_ndarray_params) :: p
  type(strata_storage) :: st
  type(strata_cparams) :: cp
  type(strata_runtime_info) :: rt
  type(strata_cache_stats) :: stats
  type(strata_metalayer) :: layers(1)
  type(c_ptr) :: a, m, cache
  integer(c_int64_t) :: rc, step, start(3), stop(3), nsaved, levels(3)
  integer(c_int64_t), parameter :: one(3) = 1
  integer(c_int8_t), target :: version(5) = [int(z'd2', c_int8_t), 0_c_int8_t, 0_c_int8_t, 0_c_int8_t, 1_c_int8_t]
  character(kind=c_char, len=8), target :: layer_name = "version" // c_null_char
  real(c_double) :: dt
  character(len=512) :: dir
  character(len=31), allocatable :: names(:)
  character(len=:), allocatable :: units
  integer :: i, j

  dir = "."
  if (command_argument_count() >= 1) call get_command_argument(1, dir)

  call check(int(strata_runtime_set_nthreads(2), c_int64_t), "runtime_set_nthreads")
  call check(int(strata_runtime_get_info(rt), c_int64_t), "runtime_get_info")
  if (rt%nthreads /= 2) call fail("runtime threads")

  ! C shape (nsteps, ny, nx): one chunk per step, blocks of 15 latitudes.
  call check(int(strata_ndarray_params_default(p), c_int64_t), "params_default")
  p%ndim = 3
  p%shape(1:3) = [int(nsteps, c_int64_t), int(ny, c_int64_t), int(nx, c_int64_t)]
  p%chunkshape(1:3) = [1, ny, nx]
  p%blockshape(1:3) = [1, 15, nx]
  p%cparams%codec = int(strata_codec_id(strata_cstr("zstd")), c_int8_t)
  p%cparams%clevel = 6
  p%cparams%filters = 0
  p%cparams%filters(6) = int(strata_filter_id(strata_cstr("bitshuffle")), c_int8_t)
  call check(int(strata_storage_default(st), c_int64_t), "storage_default")
  st%overwrite = 1
  ! Metalayer "version": msgpack int32 1, a fixed width so that later versions fit in place.
  layers(1) = strata_metalayer(c_loc(layer_name), c_loc(version), int(size(version), c_size_t))
  call check(int(strata_ndarray_zeros_with_meta(strata_cstr(trim(dir) // "/model.b2nd"), st, p, &
                 strata_cstr("<f4"), layers, 1_c_size_t, a), c_int64_t), "zeros_with_meta")

  ! The model: one step per call, the field t(nx, ny) is plane [step, :, :].
  allocate(t(nx, ny))
  do step = 0, nsteps - 1
    call model(step, t)
    start = [step, 0_c_int64_t, 0_c_int64_t]
    stop = [step + 1, int(ny, c_int64_t), int(nx, c_int64_t)]
    call check(int(strata_ndarray_set_slice(a, 3, start, stop, one, c_loc(t), strata_sizeof(t)), &
                   c_int64_t), "set_slice step")
    call check(int(strata_vlmeta_set(a, "steps_done", step + 1), c_int64_t), "steps_done")
  end do
  call check(int(strata_vlmeta_set(a, "dt", 1800.0_c_double), c_int64_t), "dt")
  call check(int(strata_vlmeta_set(a, "units", "K"), c_int64_t), "units")
  call check(int(strata_vlmeta_set(a, "levels", [850_c_int64_t, 500_c_int64_t, 250_c_int64_t]), c_int64_t), &
             "levels")
  call check(int(strata_vlmeta_set(a, "origin", [-90.0_c_double, -180.0_c_double]), c_int64_t), "origin")
  version(5) = 2
  call check(int(strata_ndarray_meta_set(a, strata_cstr("version"), c_loc(version), &
                 int(size(version), c_size_t)), c_int64_t), "meta_set")
  call check(int(strata_ndarray_close(a), c_int64_t), "close")

  ! Reopened read-only, through a block cache.
  call check(int(strata_ndarray_open(strata_cstr(trim(dir) // "/model.b2nd"), STRATA_OPEN_READ, STRATA_SYNC_NONE, a), &
                 c_int64_t), "open")
  cache = strata_cache_new(16_c_int64_t * 1024 * 1024)
  call check(int(strata_ndarray_set_cache(a, cache), c_int64_t), "set_cache")
  call check(int(strata_ndarray_get_cparams(a, cp), c_int64_t), "get_cparams")
  if (strata_codec_name_string(cp%codec) /= "zstd" .or. cp%clevel /= 6) call fail("codec")
  if (strata_filter_name_string(cp%filters(6)) /= "bitshuffle") call fail("filter")
  if (cp%blocksize /= 15 * nx * 4) call fail("blocksize")

  call strata_ndarray_vlmeta_names(a, names)
  if (size(names) /= 5) call fail("vlmeta count")
  if (names(1) /= "steps_done" .or. names(5) /= "origin") call fail("vlmeta names")
  call check(int(strata_ndarray_vlmeta_get_int64(a, strata_cstr("steps_done"), nsaved), c_int64_t), "get steps_done")
  call check(int(strata_ndarray_vlmeta_get_float64(a, strata_cstr("dt"), dt), c_int64_t), "get dt")
  units = strata_vlmeta_string(a, "units", rc)
  call check(rc, "get units")
  rc = strata_ndarray_vlmeta_get_int64_array(a, strata_cstr("levels"), levels, int(size(levels), c_size_t))
  call check(rc, "get levels")
  if (nsaved /= nsteps .or. dt /= 1800.0_c_double .or. units /= "K" .or. rc /= 3 .or. levels(2) /= 500) &
    call fail("attribute values")
  rc = strata_ndarray_vlmeta_get_int64(a, strata_cstr("units"), nsaved)
  if (rc /= STRATA_ERROR_INVALID_PARAM) call fail("units read as an integer")
  rc = strata_ndarray_meta_get(a, strata_cstr("version"), c_loc(version), int(size(version), c_size_t))
  if (rc /= 5 .or. version(5) /= 2) call fail("metalayer version")
  print '(a, i0, a, f7.1, 3a, i0, a)', "model.b2nd: ", nsteps, " steps, dt ", dt, " s, units ", units, &
    ", ", strata_ndarray_meta_count(a), " metalayers"

  ! Step 3 back into an allocatable, and its latitudes 11..20 into an assumed-shape section.
  allocate(back(nx, ny))
  start = [3_c_int64_t, 0_c_int64_t, 0_c_int64_t]
  stop = [4_c_int64_t, int(ny, c_int64_t), int(nx, c_int64_t)]
  rc = strata_ndarray_get_slice(a, 3, start, stop, one, c_loc(back), strata_sizeof(back))
  call check(rc, "get_slice step 3")
  call model(3_c_int64_t, t)
  if (rc /= strata_sizeof(back) .or. any(back /= t)) call fail("step 3")
  call read_rows(a, back(:, 11:20))
  if (any(back(:, 11:20) /= t(:, 11:20))) call fail("rows of step 3")

  ! An in-memory array of the field alone, from the allocatable's bytes.
  p%ndim = 2
  p%shape(1:2) = [int(ny, c_int64_t), int(nx, c_int64_t)]
  p%chunkshape(1:2) = [ny, nx]
  p%blockshape(1:2) = [15, nx]
  call check(int(strata_ndarray_from_buffer_memory(p, "<f4", c_loc(t), strata_sizeof(t), m), c_int64_t), &
             "from_buffer_memory")
  back = 0
  rc = strata_ndarray_get_slice(m, 2, [0_c_int64_t, 0_c_int64_t], [int(ny, c_int64_t), int(nx, c_int64_t)], &
                                one, c_loc(back), strata_sizeof(back))
  if (rc /= strata_sizeof(back) .or. any(back /= t)) call fail("in-memory array")
  call check(int(strata_ndarray_close(m), c_int64_t), "close memory")

  call check(int(strata_cache_get_stats(cache, stats), c_int64_t), "cache stats")
  if (stats%misses < 1) call fail("no block read through the cache")
  call check(int(strata_ndarray_close(a), c_int64_t), "close")
  call strata_cache_free(cache)
  print '(a)', "ok"

contains

  !> The model's field at `step`: a smooth pattern that moves east one cell per step.
  subroutine model(step, f)
    integer(c_int64_t), intent(in) :: step
    real(c_float), intent(out) :: f(:, :)
    do j = 1, size(f, 2)
      do i = 1, size(f, 1)
        f(i, j) = 250.0 + 30.0 * sin(real(i + step) / 9.0) * cos(real(j) / 7.0)
      end do
    end do
  end subroutine model

  !> Latitudes 11..20 of step 3 into `rows` (an assumed-shape section, copied contiguous
  !> for the call).
  subroutine read_rows(arr, rows)
    type(c_ptr), intent(in) :: arr
    real(c_float), intent(inout) :: rows(:, :)
    real(c_float), allocatable, target :: buf(:, :)
    integer(c_int64_t) :: n
    allocate(buf(size(rows, 1), size(rows, 2)))
    n = strata_ndarray_get_slice(arr, 3, [3_c_int64_t, 10_c_int64_t, 0_c_int64_t], &
                                 [4_c_int64_t, 20_c_int64_t, int(nx, c_int64_t)], one, c_loc(buf), strata_sizeof(buf))
    call check(n, "get_slice rows")
    rows = buf
  end subroutine read_rows

  subroutine check(rc, what)
    integer(c_int64_t), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc < 0) then
      print '(a, a, i0, a, a)', what, " failed: ", rc, ": ", strata_error_message()
      error stop 1
    end if
  end subroutine check

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a, a)', "wrong: ", what
    error stop 1
  end subroutine fail
end program model_attributes
