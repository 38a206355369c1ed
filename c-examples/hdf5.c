/* An N-d array into an HDF5 file and back: a 300 x 200 float32 field made in memory is
 * written as the dataset /fields/t of <dir>/strata_export.h5 with HDF5's Blosc2 filter
 * (32026: its chunks copied as stored), then that dataset is opened as an array handle and
 * read with the same slice calls as a .b2nd array (only the chunks and blocks a slice touches
 * are read and decompressed). h5py with hdf5plugin, PyTables and h5dump read the file too.
 *
 * Usage: hdf5 [dir]   (default ".")
 * Build: cc -std=c11 hdf5.c -I include libstrata.a $(pkg-config --libs hdf5) -lm -lpthread -ldl */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define NY 300
#define NX 200

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

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[4096];
  snprintf(path, sizeof path, "%s/strata_export.h5", dir);
  static float field[NY][NX];
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++) field[y][x] = (float)(20.0 * sin(y / 17.0) * cos(x / 23.0) + y * 0.01);

  /* 1. The array, in memory: chunks of 128 x 128, blocks of 32 x 64, zstd. */
  strata_ndarray_params p;
  strata_ndarray_params_default(&p);
  p.ndim = 2;
  p.shape[0] = NY, p.shape[1] = NX;
  p.chunkshape[0] = 128, p.chunkshape[1] = 128;
  p.blockshape[0] = 32, p.blockshape[1] = 64;
  p.cparams.codec = 5;
  strata_ndarray *a = NULL;
  int rc = strata_ndarray_from_buffer(NULL, NULL, &p, "<f4", (const uint8_t *)field, sizeof field, &a);
  CHECK(rc == 0, "from_buffer", rc);

  /* 2. Into the HDF5 file (replacing the dataset if it is there), then a second time: refused. */
  rc = strata_ndarray_export_hdf5(a, path, "/fields/t", 1);
  CHECK(rc == 0, "export_hdf5", rc);
  rc = strata_ndarray_export_hdf5(a, path, "/fields/t", 0);
  CHECK(rc == STRATA_ERROR_FILE_OPEN, "export_hdf5 over an existing dataset", rc);
  strata_ndarray_free(a);

  /* 3. The dataset as an array handle: its shape, chunks, blocks and dtype. */
  strata_ndarray *h = NULL;
  rc = strata_ndarray_open_hdf5(path, "/fields/t", &h);
  CHECK(rc == 0, "open_hdf5", rc);
  strata_ndarray_info info;
  rc = strata_ndarray_get_info(h, &info);
  CHECK(rc == 0, "get_info", rc);
  CHECK(info.ndim == 2 && info.typesize == 4 && info.shape[0] == NY && info.shape[1] == NX, "info shape", 0);
  CHECK(info.chunkshape[0] == 128 && info.chunkshape[1] == 128, "info chunkshape", 0);
  CHECK(info.blockshape[0] == 32 && info.blockshape[1] == 64, "info blockshape", 0);
  CHECK(info.nbytes == (int64_t)sizeof field && info.cbytes > 0 && info.cbytes < info.nbytes, "info sizes", info.cbytes);
  char dtype[16];
  rc = (int)strata_ndarray_dtype(h, dtype, sizeof dtype);
  CHECK(rc == 3 && strcmp(dtype, "<f4") == 0, "dtype", rc);

  /* 4. Slices: a row, a strided box walking x backwards, one item. */
  float row[NX];
  int64_t start[2] = {150, 0}, stop[2] = {151, NX};
  int64_t n = strata_ndarray_get_slice(h, 2, start, stop, NULL, (uint8_t *)row, sizeof row);
  CHECK(n == (int64_t)sizeof row && memcmp(row, field[150], sizeof row) == 0, "row", n);
  float box[10][20];
  int64_t bstart[2] = {5, 199}, bstop[2] = {295, -NX - 1}, bstep[2] = {29, -10}; /* -NX-1: past index 0 */
  n = strata_ndarray_get_slice(h, 2, bstart, bstop, bstep, (uint8_t *)box, sizeof box);
  CHECK(n == (int64_t)sizeof box, "box", n);
  for (int i = 0; i < 10; i++)
    for (int j = 0; j < 20; j++) CHECK(box[i][j] == field[5 + 29 * i][199 - 10 * j], "box item", i * 20 + j);
  float one;
  int64_t ostart[2] = {-1, -1}, ostop[2] = {NY, NX};
  n = strata_ndarray_get_slice(h, 2, ostart, ostop, NULL, (uint8_t *)&one, sizeof one);
  CHECK(n == 4 && one == field[NY - 1][NX - 1], "last item", n);

  /* 5. An HDF5 handle reads only; a missing dataset does not open. */
  rc = strata_ndarray_set_slice(h, 2, start, stop, NULL, (const uint8_t *)row, sizeof row);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM, "set_slice on an HDF5 handle", rc);
  rc = strata_ndarray_close(h);
  CHECK(rc == 0, "close", rc);
  strata_ndarray *missing = NULL;
  rc = strata_ndarray_open_hdf5(path, "/fields/nothing", &missing);
  CHECK(rc == STRATA_ERROR_FILE_OPEN && missing == NULL, "open a missing dataset", rc);

  printf("%s: /fields/t %lld x %lld, %lld bytes stored\nok\n", path, (long long)info.shape[0],
         (long long)info.shape[1], (long long)info.cbytes);
  return 0;
}
