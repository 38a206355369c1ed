/* A real climate grid as an N-d array: the Levitus ocean temperature climatology (float32,
 * 20 depths x 180 latitudes x 360 longitudes, from data/levitus_temp.npy) written as a .b2nd
 * file, reopened, and read back by slices: the surface layer, one depth profile, a strided
 * sub-grid, the depths upside down. Then an in-memory copy is edited (set_slice, resize),
 * and small arrays are made whole (zeros, full).
 *
 * The files it leaves open in python-blosc2 (tests/interop/test_capi.py checks them):
 * <dir>/levitus_temp.b2nd (the grid) and <dir>/levitus_edit.b2nd (the edited copy).
 *
 * Usage: climate [dir [datadir]]   (defaults "." and "data")
 * Build: cc -std=c11 climate.c -I include libstrata.a -lm -lpthread -ldl */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define NZ 20
#define NY 180
#define NX 360

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

/* Reads a little-endian float32 C-order .npy of shape (NZ, NY, NX): version 1 or 2 header,
 * whose dictionary must say exactly that. */
static float *read_npy(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char pre[12];
  float *data = NULL;
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) goto out;
  size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (pre[6] >= 2) { /* version 2: a 4-byte length */
    if (fread(pre + 10, 1, 2, f) != 2) goto out;
    hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  }
  char *header = (char *)malloc(hlen + 1);
  if (!header || fread(header, 1, hlen, f) != hlen) {
    free(header);
    goto out;
  }
  header[hlen] = 0;
  int ok = strstr(header, "'descr': '<f4'") && strstr(header, "'fortran_order': False") &&
           strstr(header, "'shape': (20, 180, 360)");
  free(header);
  if (!ok) goto out;
  data = (float *)malloc(sizeof(float) * NZ * NY * NX);
  if (data && fread(data, sizeof(float), NZ * NY * NX, f) != NZ * NY * NX) {
    free(data);
    data = NULL;
  }
out:
  fclose(f);
  return data;
}

static float at(const float *t, int z, int y, int x) { return t[((size_t)z * NY + y) * NX + x]; }

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *datadir = argc > 2 ? argv[2] : "data";
  char path[1024], npy[1024], edit_path[1024];
  snprintf(npy, sizeof npy, "%s/levitus_temp.npy", datadir);
  snprintf(path, sizeof path, "%s/levitus_temp.b2nd", dir);
  snprintf(edit_path, sizeof edit_path, "%s/levitus_edit.b2nd", dir);
  float *t = read_npy(npy);
  if (!t) {
    fprintf(stderr, "cannot read %s (scripts/fetch-data.sh makes it)\n", npy);
    return 1;
  }

  /* 1. Write it: chunks of 4 depths x 90 x 180, blocks of 2 x 30 x 60, zstd + shuffle. */
  strata_ndarray_params p;
  strata_ndarray_params_default(&p);
  p.ndim = 3;
  p.shape[0] = NZ, p.shape[1] = NY, p.shape[2] = NX;
  p.chunkshape[0] = 4, p.chunkshape[1] = 90, p.chunkshape[2] = 180;
  p.blockshape[0] = 2, p.blockshape[1] = 30, p.blockshape[2] = 60;
  p.cparams.codec = 5;
  strata_storage st;
  strata_storage_default(&st);
  st.overwrite = 1;
  strata_ndarray *a = NULL;
  int rc = strata_ndarray_from_buffer(path, &st, &p, "<f4", (const uint8_t *)t, sizeof(float) * NZ * NY * NX, &a);
  CHECK(rc == 0, "from_buffer", rc);
  rc = strata_ndarray_close(a);
  CHECK(rc == 0, "close", rc);

  /* 2. Reopen and check what it is. */
  rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &a);
  CHECK(rc == 0, "open", rc);
  strata_ndarray_info info;
  rc = strata_ndarray_get_info(a, &info);
  CHECK(rc == 0 && info.ndim == 3 && info.typesize == 4 && info.shape[0] == NZ && info.shape[1] == NY &&
            info.shape[2] == NX && info.chunkshape[1] == 90 && info.blockshape[2] == 60 &&
            info.nbytes == (int64_t)sizeof(float) * NZ * NY * NX,
        "get_info", rc);
  char dtype[16];
  int64_t n = strata_ndarray_dtype(a, dtype, sizeof dtype);
  CHECK(n == 3 && strcmp(dtype, "<f4") == 0, "dtype", n);
  printf("%s: %d x %d x %d %s, %lld bytes -> %lld\n", path, (int)info.shape[0], (int)info.shape[1],
         (int)info.shape[2], dtype, (long long)info.nbytes, (long long)info.cbytes);

  /* 3. Slices. The surface layer: [0, :, :] (only depth 0 given; the rest whole). */
  float *surface = (float *)malloc(sizeof(float) * NY * NX);
  if (!surface) return 1;
  int64_t s0[3] = {0, 0, 0}, e0[3] = {1, NY, NX};
  n = strata_ndarray_get_slice(a, 1, s0, e0, NULL, NULL, 0);
  CHECK(n == (int64_t)sizeof(float) * NY * NX, "get_slice size query", n);
  n = strata_ndarray_get_slice(a, 1, s0, e0, NULL, (uint8_t *)surface, sizeof(float) * NY * NX);
  CHECK(n > 0 && memcmp(surface, t, (size_t)n) == 0, "surface layer", n);
  /* A depth profile: [:, 70, 200] (cells below the sea floor or on land hold -1e10). */
  float profile[NZ];
  int64_t s1[3] = {0, 70, 200}, e1[3] = {NZ, 71, 201};
  n = strata_ndarray_get_slice(a, 3, s1, e1, NULL, (uint8_t *)profile, sizeof profile);
  CHECK(n == (int64_t)sizeof profile, "profile", n);
  for (int z = 0; z < NZ; z++) CHECK(profile[z] == at(t, z, 70, 200), "profile value", z);
  printf("profile at [:, 70, 200]: %.2f degC at the surface, %.2f at depth level 12\n", profile[0],
         profile[12]);
  /* Every 10th latitude and longitude at depth 5: [5, ::10, ::10] as 1 x 18 x 36. */
  float grid[18 * 36];
  int64_t s2[3] = {5, 0, 0}, e2[3] = {6, NY, NX}, st2[3] = {1, 10, 10};
  n = strata_ndarray_get_slice(a, 3, s2, e2, st2, (uint8_t *)grid, sizeof grid);
  CHECK(n == (int64_t)sizeof grid, "strided", n);
  for (int y = 0; y < 18; y++)
    for (int x = 0; x < 36; x++) CHECK(grid[y * 36 + x] == at(t, 5, 10 * y, 10 * x), "strided value", y);
  /* Depths upside down at one point: [::-1, 45, 45] (start -1, stop before 0, step -1). */
  int64_t s3[3] = {-1, 45, 45}, e3[3] = {-NZ - 1, 46, 46}, st3[3] = {-1, 1, 1};
  n = strata_ndarray_get_slice(a, 3, s3, e3, st3, (uint8_t *)profile, sizeof profile);
  CHECK(n == (int64_t)sizeof profile, "reversed", n);
  for (int z = 0; z < NZ; z++) CHECK(profile[z] == at(t, NZ - 1 - z, 45, 45), "reversed value", z);
  n = strata_ndarray_get_slice(a, 3, s1, e1, NULL, (uint8_t *)profile, 8);
  CHECK(n == STRATA_ERROR_WRITE_BUFFER, "get_slice into 8 bytes", n);
  int64_t zero_step[3] = {1, 0, 1};
  n = strata_ndarray_get_slice(a, 3, s1, e1, zero_step, (uint8_t *)profile, sizeof profile);
  CHECK(n == STRATA_ERROR_INVALID_PARAM, "step 0", n);
  rc = strata_ndarray_set_slice(a, 3, s1, e1, NULL, (const uint8_t *)profile, sizeof profile);
  CHECK(rc == STRATA_ERROR_FILE_WRITE, "set_slice refused read-only", rc);

  /* 4. An in-memory copy, edited: a 2 x 3 x 4 box set to -5, then two more depth levels. */
  int64_t flen = strata_ndarray_to_cframe(a, NULL, 0);
  CHECK(flen > 0, "to_cframe size query", flen);
  uint8_t *frame = (uint8_t *)malloc((size_t)flen);
  if (!frame) return 1;
  n = strata_ndarray_to_cframe(a, frame, (size_t)flen);
  CHECK(n == flen, "to_cframe", n);
  strata_ndarray *m = NULL;
  rc = strata_ndarray_from_cframe(frame, (size_t)flen, &m);
  CHECK(rc == 0, "from_cframe", rc);
  free(frame);
  float box[2 * 3 * 4];
  for (int i = 0; i < 24; i++) box[i] = -5.0f;
  int64_t bs[3] = {3, 88, 178}, be[3] = {5, 91, 182}; /* crosses chunk edges in y and x */
  rc = strata_ndarray_set_slice(m, 3, bs, be, NULL, (const uint8_t *)box, sizeof box);
  CHECK(rc == 0, "set_slice", rc);
  float back[24];
  n = strata_ndarray_get_slice(m, 3, bs, be, NULL, (uint8_t *)back, sizeof back);
  CHECK(n == (int64_t)sizeof back && memcmp(back, box, sizeof box) == 0, "set_slice read back", n);
  int64_t bigger[3] = {NZ + 2, NY, NX};
  rc = strata_ndarray_resize(m, 3, bigger);
  CHECK(rc == 0, "resize", rc);
  int64_t ds[3] = {NZ, 0, 0}, de[3] = {NZ + 2, NY, NX};
  n = strata_ndarray_get_slice(m, 3, ds, de, NULL, (uint8_t *)surface, sizeof(float) * NY * NX);
  CHECK(n == STRATA_ERROR_WRITE_BUFFER, "new levels need 2 layers of room", n);
  float *two = (float *)calloc(2 * NY * NX, sizeof(float));
  if (!two) return 1;
  for (int i = 0; i < 2 * NY * NX; i++) two[i] = 1.0f;
  n = strata_ndarray_get_slice(m, 3, ds, de, NULL, (uint8_t *)two, sizeof(float) * 2 * NY * NX);
  CHECK(n == (int64_t)sizeof(float) * 2 * NY * NX, "new levels", n);
  for (int i = 0; i < 2 * NY * NX; i++) CHECK(two[i] == 0.0f, "new levels read as zeros", i);
  free(two);
  rc = strata_ndarray_save(m, edit_path);
  CHECK(rc == 0, "save", rc);
  printf("edited copy saved to %s\n", edit_path);

  /* 5. Arrays made whole: 7 x 9 of 3.5 (in memory), and zeros. */
  strata_ndarray_params q;
  strata_ndarray_params_default(&q);
  q.ndim = 2;
  q.shape[0] = 7, q.shape[1] = 9;
  q.chunkshape[0] = 4, q.chunkshape[1] = 4;
  q.blockshape[0] = 2, q.blockshape[1] = 2;
  float v = 3.5f;
  strata_ndarray *f = NULL, *z = NULL;
  rc = strata_ndarray_full(NULL, NULL, &q, "<f4", (const uint8_t *)&v, sizeof v, &f);
  CHECK(rc == 0, "full", rc);
  rc = strata_ndarray_zeros(NULL, NULL, &q, "<f4", &z);
  CHECK(rc == 0, "zeros", rc);
  float small[63], small0[63];
  int64_t all0[2] = {0, 0}, all1[2] = {7, 9};
  n = strata_ndarray_get_slice(f, 2, all0, all1, NULL, (uint8_t *)small, sizeof small);
  CHECK(n == (int64_t)sizeof small, "full read", n);
  n = strata_ndarray_get_slice(z, 2, all0, all1, NULL, (uint8_t *)small0, sizeof small0);
  CHECK(n == (int64_t)sizeof small0, "zeros read", n);
  for (int i = 0; i < 63; i++) CHECK(small[i] == 3.5f && small0[i] == 0.0f, "whole arrays", i);
  rc = strata_ndarray_full(NULL, NULL, &q, "<f4", (const uint8_t *)&v, 2, &f);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM, "full with a 2-byte value", rc);
  q.ndim = 17;
  rc = strata_ndarray_zeros(NULL, NULL, &q, "<f4", &z);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM, "17 dimensions", rc);

  strata_ndarray_free(f);
  strata_ndarray_free(z);
  strata_ndarray_free(m);
  strata_ndarray_free(a);
  strata_ndarray_free(NULL);
  free(surface);
  free(t);
  printf("ok\n");
  return 0;
}
