/* Attributes and parameters of an N-d array from C: a model's output grid (float32,
 * 4 time steps x 180 latitudes x 360 longitudes) made with a metalayer, given vlmetalayers
 * (python-blosc2's `vlmeta`: an int, a float, a string, lists of ints and floats, and raw
 * msgpack), then reopened to read its compression parameters, partitions, dtype and every
 * attribute back; codec and filter names looked up both ways; failures on purpose.
 *
 * The file it leaves, <dir>/attrs.b2nd, is opened by python-blosc2 in
 * tests/interop/test_capi.py, which checks arr.vlmeta and arr.schunk.meta.
 *
 * Usage: attrs [dir [datadir]]   (defaults "."; datadir unused)
 * Build: cc -std=c11 attrs.c -I include libstrata.a -lm -lpthread -ldl */
#include <stdio.h>
#include <string.h>

#include "strata.h"

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

/* The last error's message equals `want`. */
static int message_is(const char *want) {
  char msg[512];
  strata_last_error(msg, sizeof msg);
  if (strcmp(msg, want) == 0) return 1;
  fprintf(stderr, "message \"%s\", expected \"%s\"\n", msg, want);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[1024];
  snprintf(path, sizeof path, "%s/attrs.b2nd", dir);

  /* 1. Codec and filter names <-> IDs (ASCII case ignored for Blosc2's names). */
  int zstd = strata_codec_id("zstd"), shuffle = strata_filter_id("shuffle");
  CHECK(zstd == 5 && strata_codec_id("LZ4") == 1 && shuffle == 1 && strata_filter_id("nofilter") == 0,
        "codec and filter IDs", zstd);
  char name[32];
  int64_t n = strata_codec_name(5, name, sizeof name);
  CHECK(n == 4 && strcmp(name, "zstd") == 0, "codec name 5", n);
  n = strata_filter_name(2, name, sizeof name);
  CHECK(n == 10 && strcmp(name, "bitshuffle") == 0, "filter name 2", n);
  n = strata_codec_id("nozip");
  CHECK(n == STRATA_ERROR_INVALID_PARAM, "unknown codec name", n);
  n = strata_codec_name(9, name, sizeof name);
  CHECK(n == STRATA_ERROR_CODEC_SUPPORT && message_is("unknown codec ID 9"), "unknown codec ID", n);
  n = strata_codec_name(5, name, 4);
  CHECK(n == STRATA_ERROR_WRITE_BUFFER, "codec name into 4 bytes", n);

  /* 2. Make the grid with a metalayer "version": msgpack int32 7 (D2 00 00 00 07), a fixed
   *    width so that later versions fit in place. */
  strata_ndarray_params p;
  strata_ndarray_params_default(&p);
  p.ndim = 3;
  p.shape[0] = 4, p.shape[1] = 180, p.shape[2] = 360;
  p.chunkshape[0] = 1, p.chunkshape[1] = 180, p.chunkshape[2] = 360;
  p.blockshape[0] = 1, p.blockshape[1] = 45, p.blockshape[2] = 90;
  p.cparams.codec = (uint8_t)zstd;
  p.cparams.clevel = 7;
  for (int i = 0; i < 6; i++) p.cparams.filters[i] = 0;
  p.cparams.filters[4] = 3; /* delta, then shuffle */
  p.cparams.filters[5] = (uint8_t)shuffle;
  strata_storage st;
  strata_storage_default(&st);
  st.overwrite = 1;
  const uint8_t version7[] = {0xd2, 0, 0, 0, 7};
  strata_metalayer layers[1] = {{"version", version7, sizeof version7}};
  strata_ndarray *a = NULL;
  int rc = strata_ndarray_zeros_with_meta(path, &st, &p, "<f4", layers, 1, &a);
  CHECK(rc == 0, "zeros_with_meta", rc);

  /* 3. Attributes (vlmetalayers), typed and raw. */
  const int64_t levels[3] = {0, 10, 250};
  const double bounds[4] = {-90.0, 90.0, -180.0, 180.0};
  const uint8_t done[1] = {0xc3}; /* msgpack true */
  rc = strata_ndarray_vlmeta_set_int64(a, "step", 3);
  CHECK(rc == 0, "set step", rc);
  rc = strata_ndarray_vlmeta_set_float64(a, "dt", 1800.5);
  CHECK(rc == 0, "set dt", rc);
  rc = strata_ndarray_vlmeta_set_string(a, "units", "degC");
  CHECK(rc == 0, "set units", rc);
  rc = strata_ndarray_vlmeta_set_int64_array(a, "levels", levels, 3);
  CHECK(rc == 0, "set levels", rc);
  rc = strata_ndarray_vlmeta_set_float64_array(a, "bounds", bounds, 4);
  CHECK(rc == 0, "set bounds", rc);
  rc = strata_ndarray_vlmeta_set(a, "done", done, sizeof done);
  CHECK(rc == 0, "set done", rc);
  rc = strata_ndarray_vlmeta_set_string(a, "scratch", "removed below");
  CHECK(rc == 0, "set scratch", rc);
  rc = strata_ndarray_vlmeta_delete(a, "scratch");
  CHECK(rc == 0, "delete scratch", rc);
  rc = strata_ndarray_vlmeta_set_int64(a, "step", 4); /* replaced */
  CHECK(rc == 0, "set step again", rc);
  /* The metalayer updated in place: 8, still 5 bytes. A longer value does not fit. */
  const uint8_t version8[] = {0xd2, 0, 0, 0, 8}, longer[9] = {0xd3, 0, 0, 0, 0, 0, 0, 0, 9};
  rc = strata_ndarray_meta_set(a, "version", version8, sizeof version8);
  CHECK(rc == 0, "meta_set version", rc);
  rc = strata_ndarray_meta_set(a, "version", longer, sizeof longer);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM, "meta_set longer", rc);
  rc = strata_ndarray_meta_set(a, "b2nd", version8, sizeof version8);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM &&
            message_is("invalid parameter: the array's own metalayer changes only through the array (resize)"),
        "meta_set b2nd", rc);
  rc = strata_ndarray_close(a);
  CHECK(rc == 0, "close", rc);

  /* 4. Reopen read-only: parameters, partitions, dtype. */
  rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &a);
  CHECK(rc == 0, "open", rc);
  strata_cparams cp;
  rc = strata_ndarray_get_cparams(a, &cp);
  CHECK(rc == 0 && cp.codec == 5 && cp.clevel == 7 && cp.typesize == 4 && cp.filters[4] == 3 &&
            cp.filters[5] == 1 && cp.blocksize == 45 * 90 * 4,
        "get_cparams", rc);
  strata_ndarray_info info;
  rc = strata_ndarray_get_info(a, &info);
  CHECK(rc == 0 && info.chunkshape[0] == 1 && info.chunkshape[2] == 360 && info.blockshape[1] == 45,
        "get_info", rc);
  char dtype[8];
  n = strata_ndarray_dtype(a, dtype, sizeof dtype);
  CHECK(n == 3 && strcmp(dtype, "<f4") == 0, "dtype", n);
  n = strata_codec_name(cp.codec, name, sizeof name);
  CHECK(n > 0, "codec name", n);
  printf("%s: codec %s clevel %d, filters", path, name, cp.clevel);
  for (int i = 0; i < 6; i++)
    if (cp.filters[i] && strata_filter_name(cp.filters[i], name, sizeof name) > 0) printf(" %s", name);
  printf(", blocks of %u bytes\n", cp.blocksize);

  /* 5. Metalayers: "b2nd" (the array's own) and "version". */
  n = strata_ndarray_meta_count(a);
  CHECK(n == 2, "meta_count", n);
  n = strata_ndarray_meta_name(a, 1, name, sizeof name);
  CHECK(n == 7 && strcmp(name, "version") == 0, "meta_name 1", n);
  uint8_t content[16];
  n = strata_ndarray_meta_get(a, "version", content, sizeof content);
  CHECK(n == 5 && memcmp(content, version8, 5) == 0, "meta_get version", n);
  n = strata_ndarray_meta_get(a, "calendar", content, sizeof content);
  CHECK(n == STRATA_ERROR_METALAYER_NOT_FOUND, "meta_get calendar", n);

  /* 6. Every vlmetalayer back. */
  n = strata_ndarray_vlmeta_count(a);
  CHECK(n == 6, "vlmeta_count", n);
  for (int64_t i = 0; i < n; i++) {
    int64_t len = strata_ndarray_vlmeta_name(a, i, name, sizeof name);
    CHECK(len > 0, "vlmeta_name", len);
    printf("vlmeta %s\n", name);
  }
  int64_t step = 0;
  double dt = 0;
  rc = strata_ndarray_vlmeta_get_int64(a, "step", &step);
  CHECK(rc == 0 && step == 4, "get step", rc);
  rc = strata_ndarray_vlmeta_get_float64(a, "dt", &dt);
  CHECK(rc == 0 && dt == 1800.5, "get dt", rc);
  rc = strata_ndarray_vlmeta_get_float64(a, "step", &dt); /* an int a float64 holds */
  CHECK(rc == 0 && dt == 4.0, "get step as float64", rc);
  char units[8];
  n = strata_ndarray_vlmeta_get_string(a, "units", NULL, 0);
  CHECK(n == 4, "units length", n);
  n = strata_ndarray_vlmeta_get_string(a, "units", units, sizeof units);
  CHECK(n == 4 && strcmp(units, "degC") == 0, "get units", n);
  int64_t lv[3];
  n = strata_ndarray_vlmeta_get_int64_array(a, "levels", NULL, 0);
  CHECK(n == 3, "levels count", n);
  n = strata_ndarray_vlmeta_get_int64_array(a, "levels", lv, 3);
  CHECK(n == 3 && lv[0] == 0 && lv[1] == 10 && lv[2] == 250, "get levels", n);
  double b[4], lvf[3];
  n = strata_ndarray_vlmeta_get_float64_array(a, "bounds", b, 4);
  CHECK(n == 4 && memcmp(b, bounds, sizeof b) == 0, "get bounds", n);
  n = strata_ndarray_vlmeta_get_float64_array(a, "levels", lvf, 3);
  CHECK(n == 3 && lvf[2] == 250.0, "get levels as float64", n);
  n = strata_ndarray_vlmeta_get(a, "done", content, sizeof content);
  CHECK(n == 1 && content[0] == 0xc3, "get done", n);

  /* 7. Failures: the wrong kind, too small a buffer, a missing name, a read-only handle. */
  rc = strata_ndarray_vlmeta_get_int64(a, "units", &step);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM && message_is("invalid parameter: vlmetalayer \"units\" holds a string, not an int64"),
        "units as int64", rc);
  rc = strata_ndarray_vlmeta_get_int64(a, "dt", &step);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM && message_is("invalid parameter: vlmetalayer \"dt\" holds a float, not an int64"),
        "dt as int64", rc);
  n = strata_ndarray_vlmeta_get_int64_array(a, "bounds", lv, 3);
  CHECK(n == STRATA_ERROR_INVALID_PARAM &&
            message_is("invalid parameter: vlmetalayer \"bounds\" item 0 holds a float, not an int64"),
        "bounds as int64s", n);
  n = strata_ndarray_vlmeta_get_float64_array(a, "bounds", b, 3);
  CHECK(n == STRATA_ERROR_WRITE_BUFFER, "bounds into 3", n);
  n = strata_ndarray_vlmeta_get_string(a, "units", units, 4);
  CHECK(n == STRATA_ERROR_WRITE_BUFFER, "units into 4 bytes", n);
  rc = strata_ndarray_vlmeta_get_float64(a, "scratch", &dt);
  CHECK(rc == STRATA_ERROR_METALAYER_NOT_FOUND, "deleted scratch", rc);
  rc = strata_ndarray_vlmeta_set_int64(a, "step", 5);
  CHECK(rc == STRATA_ERROR_FILE_WRITE, "set on a read-only handle", rc);
  rc = strata_ndarray_close(a);
  CHECK(rc == 0, "close", rc);
  printf("ok\n");
  return 0;
}
