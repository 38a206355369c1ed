/* A model writing its output one time step per call: a float32 field of NY latitudes x NX
 * longitudes appended along the time axis of a .b2nd file (each call writes only the chunks
 * the new step lands in), then the file edited along that axis (insert, delete, resize with
 * a start) and joined with itself (concatenate, stack).
 *
 * Item t, y, x of the run holds t * 1000 + y * NX + x. Files it leaves, which
 * tests/interop/test_axis_ops.py opens with python-blosc2 and compares:
 *   <dir>/timesteps.b2nd         NT steps appended one per call
 *   <dir>/timesteps_edit.b2nd    a copy: 4 steps of -1 inserted at step 4, the first 4 steps
 *                                deleted, the last one deleted, 12 longitudes of zeros at 0
 *   <dir>/timesteps_concat.b2nd  the run twice along time
 *   <dir>/timesteps_stack.b2nd   the run twice along a new first axis
 *
 * An integer index of a dimension is the range i .. i + 1 there (start i, stop i + 1): the
 * bytes are the same as with the dimension dropped, so there is nothing to squeeze.
 *
 * Usage: timesteps [dir]   (default ".")
 * Build: cc -std=c11 timesteps.c -I include libstrata.a -lm -lpthread -ldl */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define NT 10
#define NY 18
#define NX 36
#define STEP (NY * NX)

static int check(int ok, const char *what, int64_t rc) {
  if (ok) return 0;
  char msg[512];
  strata_last_error(msg, sizeof msg);
  fprintf(stderr, "%s: rc %lld: %s\n", what, (long long)rc, msg);
  return 1;
}
#define CHECK(cond, what, rc) \
  do {                          \
    if (check((cond), (what), (rc))) return 1; \
  } while (0)

/* The model's field at step t. */
static void model_step(int t, float *field) {
  for (int i = 0; i < STEP; i++) field[i] = (float)(t * 1000 + i);
}

/* Reads step t of `a` (an integer index: t .. t + 1 along time) into `field` (`nx`
 * longitudes). */
static int64_t read_step(const strata_ndarray *a, int64_t t, int nx, float *field) {
  int64_t start[3] = {t, 0, 0}, stop[3] = {t + 1, NY, nx};
  return strata_ndarray_get_slice(a, 3, start, stop, NULL, (uint8_t *)field, sizeof(float) * NY * (size_t)nx);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[1024], edit[1024], cat[1024], stk[1024];
  snprintf(path, sizeof path, "%s/timesteps.b2nd", dir);
  snprintf(edit, sizeof edit, "%s/timesteps_edit.b2nd", dir);
  snprintf(cat, sizeof cat, "%s/timesteps_concat.b2nd", dir);
  snprintf(stk, sizeof stk, "%s/timesteps_stack.b2nd", dir);

  /* 1. An empty run: 0 steps, chunks of 4 steps x 9 x 12, blocks of 2 x 9 x 12. */
  strata_ndarray_params p;
  strata_ndarray_params_default(&p);
  p.ndim = 3;
  p.shape[0] = 0, p.shape[1] = NY, p.shape[2] = NX;
  p.chunkshape[0] = 4, p.chunkshape[1] = 9, p.chunkshape[2] = 12;
  p.blockshape[0] = 2, p.blockshape[1] = 9, p.blockshape[2] = 12;
  strata_storage st;
  strata_storage_default(&st);
  st.overwrite = 1;
  strata_ndarray *a = NULL;
  int rc = strata_ndarray_zeros(path, &st, &p, "<f4", &a);
  CHECK(rc == 0, "zeros", rc);

  /* 2. The model's loop: one step per call. */
  float field[STEP], back[STEP];
  for (int t = 0; t < NT; t++) {
    model_step(t, field);
    int64_t n = strata_ndarray_append(a, 0, (const uint8_t *)field, sizeof field);
    CHECK(n == t + 1, "append a step", n);
  }
  int64_t n = read_step(a, 7, NX, back);
  model_step(7, field);
  CHECK(n == (int64_t)sizeof back && memcmp(back, field, sizeof back) == 0, "step 7", n);
  /* Mistakes are refused before anything is written. */
  n = strata_ndarray_append(a, 3, (const uint8_t *)field, sizeof field);
  CHECK(n == STRATA_ERROR_INVALID_PARAM, "append along axis 3 of 3", n);
  n = strata_ndarray_append(a, 0, (const uint8_t *)field, sizeof field - 4);
  CHECK(n == STRATA_ERROR_INVALID_PARAM, "append part of a step", n);
  n = strata_ndarray_insert(a, 0, 3, (const uint8_t *)field, sizeof field);
  CHECK(n == STRATA_ERROR_INVALID_PARAM, "insert inside a chunk", n);
  strata_ndarray_info info;
  rc = strata_ndarray_get_info(a, &info);
  CHECK(rc == 0 && info.shape[0] == NT, "still NT steps", info.shape[0]);
  printf("%s: %d steps of %d x %d, %lld bytes -> %lld\n", path, (int)info.shape[0], NY, NX,
         (long long)info.nbytes, (long long)info.cbytes);
  rc = strata_ndarray_close(a);
  CHECK(rc == 0, "close", rc);

  /* 3. A read-only handle refuses to change. */
  rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &a);
  CHECK(rc == 0, "open read-only", rc);
  n = strata_ndarray_append(a, 0, (const uint8_t *)field, sizeof field);
  CHECK(n == STRATA_ERROR_FILE_WRITE, "append read-only", n);
  n = strata_ndarray_delete(a, 0, 0, 4);
  CHECK(n == STRATA_ERROR_FILE_WRITE, "delete read-only", n);

  /* 4. Concatenate and stack the run with itself (new files). */
  const strata_ndarray *two[2] = {a, a};
  strata_ndarray *c = NULL;
  rc = strata_ndarray_concatenate(two, 2, 0, cat, &st, &c);
  CHECK(rc == 0, "concatenate", rc);
  n = read_step(c, NT + 3, NX, back);
  model_step(3, field);
  CHECK(n > 0 && memcmp(back, field, sizeof back) == 0, "concatenated step NT + 3", n);
  rc = strata_ndarray_close(c);
  CHECK(rc == 0, "close concat", rc);
  rc = strata_ndarray_stack(two, 2, 0, stk, &st, &c);
  CHECK(rc == 0, "stack", rc);
  rc = strata_ndarray_get_info(c, &info);
  CHECK(rc == 0 && info.ndim == 4 && info.shape[0] == 2 && info.shape[1] == NT && info.chunkshape[0] == 1,
        "stacked shape", rc);
  rc = strata_ndarray_close(c);
  CHECK(rc == 0, "close stack", rc);
  rc = strata_ndarray_concatenate(two, 2, 3, cat, &st, &c);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM, "concatenate along axis 3 of 3", rc);
  rc = strata_ndarray_save(a, edit);
  CHECK(rc == 0, "save a copy", rc);
  strata_ndarray_free(a);

  /* 5. Edit the copy along time and longitude. */
  rc = strata_ndarray_open(edit, STRATA_OPEN_READWRITE, STRATA_SYNC_NONE, &a);
  CHECK(rc == 0, "open the copy", rc);
  float *four = (float *)malloc(sizeof(float) * 4 * STEP);
  if (!four) return 1;
  for (int i = 0; i < 4 * STEP; i++) four[i] = -1.0f;
  n = strata_ndarray_insert(a, 0, 4, (const uint8_t *)four, sizeof(float) * 4 * STEP);
  CHECK(n == NT + 4, "insert 4 steps at 4 (whole chunks)", n);
  free(four);
  n = strata_ndarray_delete(a, 0, 0, 4);
  CHECK(n == NT, "delete the first 4 steps", n);
  n = strata_ndarray_delete(a, 0, NT - 1, 1);
  CHECK(n == NT - 1, "delete the last step", n);
  int64_t wider[3] = {NT - 1, NY, NX + 12}, at[3] = {0, 0, 0};
  rc = strata_ndarray_resize_at(a, 3, wider, at);
  CHECK(rc == 0, "12 longitudes of zeros at 0", rc);
  /* Now step 0 is -1 everywhere but the zeros, step 4 the run's step 4. */
  float row[NY * (NX + 12)];
  n = read_step(a, 4, NX + 12, row);
  CHECK(n == (int64_t)sizeof row, "edited step 4", n);
  model_step(4, field);
  for (int y = 0; y < NY; y++) {
    for (int x = 0; x < NX + 12; x++) {
      float want = x < 12 ? 0.0f : field[y * NX + x - 12];
      CHECK(row[y * (NX + 12) + x] == want, "edited value", y * 1000 + x);
    }
  }
  rc = strata_ndarray_close(a);
  CHECK(rc == 0, "close the copy", rc);
  printf("edited copy %s, joined copies %s and %s\n", edit, cat, stk);
  printf("ok\n");
  return 0;
}
