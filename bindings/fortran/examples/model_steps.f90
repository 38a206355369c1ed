! A model writing its output one time step per call: a real(4) field f(nx, ny) of each step
! appended to a .b2nd file along time. In C order the file is (nt, ny, nx): the shape is the
! Fortran one reversed, and time, the last Fortran dimension, is C axis 0. Each call writes
! only the chunks the new step lands in. Then the run is concatenated and stacked with
! itself, edited along time (insert, delete) and widened in longitude (resize_at).
!
! Item (x, y, t) of the run holds 1000 * t + 100 * y + x (1-based t, y, x). python-blosc2
! reads the file as arr[t - 1, y - 1, x - 1].
!
! Usage: model_steps [dir]   (dir for the .b2nd files, default ".")
program model_steps
  use, intrinsic :: iso_c_binding
  use strata
  implicit none

  integer, parameter :: nx = 24, ny = 12, nt = 9
  real(c_float), target :: f(nx, ny), back(nx, ny), four(nx, ny, 4)
  type(strata_ndarray_params) :: p
  type(strata_ndarray_info) :: info
  type(strata_storage) :: st
  type(c_ptr) :: a, c
  type(c_ptr) :: two(2)
  integer(c_int64_t) :: n, start(3), stop(3), step(3)
  integer(c_size_t) :: step_bytes
  integer :: t
  character(len=512) :: dir

  dir = "."
  if (command_argument_count() >= 1) call get_command_argument(1, dir)
  step_bytes = int(storage_size(f) / 8, c_size_t) * int(size(f), c_size_t)

  ! An empty run: C shape (0, ny, nx), chunks of 4 steps x 6 x nx, blocks of 2 x 6 x nx.
  call check(int(strata_ndarray_params_default(p), c_int64_t), "params_default")
  p%ndim = 3
  p%shape(1:3) = [integer(c_int64_t) :: 0, ny, nx]
  p%chunkshape(1:3) = [integer(c_int32_t) :: 4, 6, nx]
  p%blockshape(1:3) = [integer(c_int32_t) :: 2, 6, nx]
  call check(int(strata_storage_default(st), c_int64_t), "storage_default")
  st%overwrite = 1_c_int8_t
  call check(int(strata_ndarray_zeros(strata_cstr(trim(dir) // "/model_steps.b2nd"), st, p, strata_cstr("<f4"), a), &
                 c_int64_t), "zeros")

  ! The model's loop: compute a step, append it.
  do t = 1, nt
    call model(t, f)
    n = strata_ndarray_append(a, 0_c_int32_t, c_loc(f), step_bytes)
    if (n /= t) call fail("append a step", n)
  end do
  call check(int(strata_ndarray_get_info(a, info), c_int64_t), "get_info")
  if (any(info%shape(1:3) /= [integer(c_int64_t) :: nt, ny, nx])) stop "shape after the appends"

  ! Step 5 back: the C slice [4:5, :, :] (an integer index i is i .. i + 1).
  start = [4_c_int64_t, 0_c_int64_t, 0_c_int64_t]
  stop = [5_c_int64_t, int(ny, c_int64_t), int(nx, c_int64_t)]
  step = 1
  n = strata_ndarray_get_slice(a, 3_c_int32_t, start, stop, step, c_loc(back), step_bytes)
  call model(5, f)
  if (n /= int(step_bytes, c_int64_t) .or. any(back /= f)) call fail("step 5", n)
  ! A step of the wrong size, and a Fortran dimension used as an axis, are refused.
  n = strata_ndarray_append(a, 0_c_int32_t, c_loc(f), step_bytes - 4)
  if (n /= STRATA_ERROR_INVALID_PARAM) call fail("part of a step", n)
  n = strata_ndarray_append(a, 3_c_int32_t, c_loc(f), step_bytes)
  if (n /= STRATA_ERROR_INVALID_PARAM) call fail("axis 3 of 3", n)

  ! The run twice along time, in a new file.
  two = [a, a]
  call check(int(strata_ndarray_concatenate(two, 2_c_size_t, 0_c_int32_t, &
                 strata_cstr(trim(dir) // "/model_steps_twice.b2nd"), st, c), c_int64_t), "concatenate")
  call check(int(strata_ndarray_get_info(c, info), c_int64_t), "get_info twice")
  if (info%shape(1) /= 2 * nt) stop "concatenated length"
  call check(int(strata_ndarray_close(c), c_int64_t), "close twice")
  ! ... and stacked along a new first C axis (a new last Fortran dimension): C shape
  ! (2, nt, ny, nx), chunks of 1 there.
  call check(int(strata_ndarray_stack(two, 2_c_size_t, 0_c_int32_t, &
                 strata_cstr(trim(dir) // "/model_steps_stack.b2nd"), st, c), c_int64_t), "stack")
  call check(int(strata_ndarray_get_info(c, info), c_int64_t), "get_info stack")
  if (info%ndim /= 4 .or. info%shape(1) /= 2 .or. info%chunkshape(1) /= 1) stop "stacked shape"
  call check(int(strata_ndarray_close(c), c_int64_t), "close stack")

  ! Edit along time: 4 steps of -1 before step 5 (0-based 4: whole chunks), then the first
  ! 4 steps and the last one deleted.
  four = -1.0
  n = strata_ndarray_insert(a, 0_c_int32_t, 4_c_int64_t, c_loc(four), 4 * step_bytes)
  if (n /= nt + 4) call fail("insert 4 steps", n)
  n = strata_ndarray_delete(a, 0_c_int32_t, 0_c_int64_t, 4_c_int64_t)
  if (n /= nt) call fail("delete 4 steps", n)
  n = strata_ndarray_delete(a, 0_c_int32_t, int(nt - 1, c_int64_t), 1_c_int64_t)
  if (n /= nt - 1) call fail("delete the last step", n)
  ! Now steps 1-4 are -1 and step 5 is the run's step 5.
  n = strata_ndarray_get_slice(a, 3_c_int32_t, start, stop, step, c_loc(back), step_bytes)
  if (n /= int(step_bytes, c_int64_t) .or. any(back /= f)) call fail("step 5 after the edit", n)
  start(1) = 0
  stop(1) = 1
  n = strata_ndarray_get_slice(a, 3_c_int32_t, start, stop, step, c_loc(back), step_bytes)
  if (n /= int(step_bytes, c_int64_t) .or. any(back /= -1.0)) call fail("inserted step", n)
  ! Twice the longitudes, the new ones (zeros) in front: C start 0 along lon, a whole chunk.
  call check(int(strata_ndarray_resize_at(a, 3_c_int32_t, [integer(c_int64_t) :: nt - 1, ny, 2 * nx], &
                 [integer(c_int64_t) :: 0, 0, 0]), c_int64_t), "resize_at")
  start = [4_c_int64_t, 0_c_int64_t, int(nx, c_int64_t)]
  stop = [5_c_int64_t, int(ny, c_int64_t), int(2 * nx, c_int64_t)]
  n = strata_ndarray_get_slice(a, 3_c_int32_t, start, stop, step, c_loc(back), step_bytes)
  if (n /= int(step_bytes, c_int64_t) .or. any(back /= f)) call fail("step 5 after resize_at", n)
  start(3) = 0
  stop(3) = nx
  n = strata_ndarray_get_slice(a, 3_c_int32_t, start, stop, step, c_loc(back), step_bytes)
  if (n /= int(step_bytes, c_int64_t) .or. any(back /= 0.0)) call fail("new longitudes", n)
  call check(int(strata_ndarray_close(a), c_int64_t), "close")
  print "(a, i0, a)", "model_steps.b2nd: ", nt, " steps appended one per call, edited, concatenated, stacked"
  print "(a)", "ok"

contains

  subroutine model(t, field)
    integer, intent(in) :: t
    real(c_float), intent(out) :: field(nx, ny)
    integer :: x, y
    do y = 1, ny
      do x = 1, nx
        field(x, y) = real(1000 * t + 100 * y + x, c_float)
      end do
    end do
  end subroutine model

  subroutine check(rc, what)
    integer(c_int64_t), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc < 0) call fail(what, rc)
  end subroutine check

  subroutine fail(what, rc)
    character(len=*), intent(in) :: what
    integer(c_int64_t), intent(in) :: rc
    print "(a, a, i0, a, a)", what, ": rc ", rc, ": ", strata_error_message()
    error stop 1
  end subroutine fail
end program model_steps
