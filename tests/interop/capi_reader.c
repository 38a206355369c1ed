/* Reads a frame or a b2nd array written by someone else through Strata's C API only, for
 * tests/interop/test_capi.py, which compares what it prints and writes with what
 * python-blosc2 wrote.
 *
 * Usage: capi_reader FRAME OUT.raw
 *   Prints "nchunks N", "typesize T", "chunksize C", "nbytes B", then one line per metalayer
 *   "meta NAME HEX" and per vlmetalayer "vlmeta NAME HEX" (HEX = the content's bytes); writes
 *   the data, decompressed chunk by chunk, to OUT.raw.
 * Usage: capi_reader nd ARRAY OUT.raw
 *   Prints "ndim N", "shape ...", "chunkshape ...", "blockshape ...", "dtype D"; writes the
 *   whole array (C order) to OUT.raw and the selection [1:-1:2] in every dimension to
 *   OUT.raw.step.
 * Usage: capi_reader attrs ARRAY
 *   Prints the array's compression parameters ("codec NAME", "clevel L", "filters ID..."),
 *   one line per metalayer "meta NAME HEX", and one per vlmetalayer as the typed helpers read
 *   it: "int NAME V", "float NAME V" (%.17g), "str NAME S", "ints NAME V...",
 *   "floats NAME V...", or "raw NAME HEX" when none of them applies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

static int fail(const char *what, int64_t rc) {
  char msg[512];
  strata_last_error(msg, sizeof msg);
  fprintf(stderr, "%s: %lld: %s\n", what, (long long)rc, msg);
  return 1;
}

static void hex_line(const char *kind, const char *name, const uint8_t *b, int64_t n) {
  printf("%s %s ", kind, name);
  for (int64_t i = 0; i < n; i++) printf("%02x", b[i]);
  printf("\n");
}

static int write_file(const char *path, const uint8_t *b, int64_t n) {
  FILE *out = fopen(path, "wb");
  if (!out) return 1;
  size_t w = fwrite(b, 1, (size_t)n, out);
  fclose(out);
  return w == (size_t)n ? 0 : 1;
}

static int read_nd(const char *path, const char *out) {
  strata_ndarray *a = NULL;
  int rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &a);
  if (rc != 0) return fail("ndarray_open", rc);
  strata_ndarray_info info;
  if ((rc = strata_ndarray_get_info(a, &info)) != 0) return fail("get_info", rc);
  printf("ndim %d\nshape", info.ndim);
  for (int d = 0; d < info.ndim; d++) printf(" %lld", (long long)info.shape[d]);
  printf("\nchunkshape");
  for (int d = 0; d < info.ndim; d++) printf(" %d", info.chunkshape[d]);
  printf("\nblockshape");
  for (int d = 0; d < info.ndim; d++) printf(" %d", info.blockshape[d]);
  char dtype[256];
  int64_t n = strata_ndarray_dtype(a, dtype, sizeof dtype);
  if (n < 0) return fail("dtype", n);
  printf("\ndtype %s\n", dtype);
  int64_t start[STRATA_MAX_DIM], stop[STRATA_MAX_DIM], step[STRATA_MAX_DIM];
  for (int step_run = 0; step_run < 2; step_run++) {
    for (int d = 0; d < info.ndim; d++) start[d] = 1, stop[d] = -1, step[d] = 2;
    int ndim = step_run ? info.ndim : 0; /* 0: the whole array */
    int64_t size = strata_ndarray_get_slice(a, ndim, start, stop, step, NULL, 0);
    if (size < 0) return fail("get_slice size", size);
    uint8_t *buf = (uint8_t *)malloc(size > 0 ? (size_t)size : 1);
    if (!buf) return 1;
    n = strata_ndarray_get_slice(a, ndim, start, stop, step, buf, (size_t)size);
    if (n != size) return fail("get_slice", n);
    char name[1024];
    snprintf(name, sizeof name, "%s%s", out, step_run ? ".step" : "");
    if (write_file(name, buf, n)) return 1;
    free(buf);
  }
  strata_ndarray_free(a);
  return 0;
}

/* The attributes of the array at `path`, read with the typed helpers (see the usage). */
static int read_attrs(const char *path) {
  strata_ndarray *a = NULL;
  int rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &a);
  if (rc != 0) return fail("open", rc);
  strata_cparams cp;
  char name[64];
  rc = strata_ndarray_get_cparams(a, &cp);
  if (rc != 0 || strata_codec_name(cp.codec, name, sizeof name) < 0) return fail("cparams", rc);
  printf("codec %s\nclevel %d\nfilters", name, cp.clevel);
  for (int i = 0; i < 6; i++) printf(" %d", cp.filters[i]);
  printf("\n");
  uint8_t buf[4096];
  int64_t n = strata_ndarray_meta_count(a);
  for (int64_t i = 0; i < n; i++) {
    if (strata_ndarray_meta_name(a, i, name, sizeof name) < 0) return fail("meta_name", i);
    int64_t len = strata_ndarray_meta_get(a, name, buf, sizeof buf);
    if (len < 0) return fail("meta_get", len);
    hex_line("meta", name, buf, len);
  }
  n = strata_ndarray_vlmeta_count(a);
  for (int64_t i = 0; i < n; i++) {
    if (strata_ndarray_vlmeta_name(a, i, name, sizeof name) < 0) return fail("vlmeta_name", i);
    int64_t iv, len;
    double fv, fa[64];
    int64_t ia[64];
    char s[256];
    if (strata_ndarray_vlmeta_get_int64(a, name, &iv) == 0) {
      printf("int %s %lld\n", name, (long long)iv);
    } else if (strata_ndarray_vlmeta_get_float64(a, name, &fv) == 0) {
      printf("float %s %.17g\n", name, fv);
    } else if (strata_ndarray_vlmeta_get_string(a, name, s, sizeof s) >= 0) {
      printf("str %s %s\n", name, s);
    } else if ((len = strata_ndarray_vlmeta_get_int64_array(a, name, ia, 64)) >= 0) {
      printf("ints %s", name);
      for (int64_t k = 0; k < len; k++) printf(" %lld", (long long)ia[k]);
      printf("\n");
    } else if ((len = strata_ndarray_vlmeta_get_float64_array(a, name, fa, 64)) >= 0) {
      printf("floats %s", name);
      for (int64_t k = 0; k < len; k++) printf(" %.17g", fa[k]);
      printf("\n");
    } else {
      len = strata_ndarray_vlmeta_get(a, name, buf, sizeof buf);
      if (len < 0) return fail("vlmeta_get", len);
      hex_line("raw", name, buf, len);
    }
  }
  return strata_ndarray_close(a) == 0 ? 0 : fail("close", -1);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "attrs") == 0) return read_attrs(argv[2]);
  if (argc == 4 && strcmp(argv[1], "nd") == 0) return read_nd(argv[2], argv[3]);
  if (argc != 3) return 2;
  strata_schunk *s = NULL;
  int rc = strata_schunk_open(argv[1], STRATA_OPEN_READ, STRATA_SYNC_NONE, NULL, &s);
  if (rc != 0) return fail("open", rc);
  int64_t nchunks = strata_schunk_nchunks(s);
  printf("nchunks %lld\ntypesize %lld\nchunksize %lld\nnbytes %lld\n", (long long)nchunks,
         (long long)strata_schunk_typesize(s), (long long)strata_schunk_chunksize(s),
         (long long)strata_schunk_nbytes(s));
  char name[32];
  uint8_t *content;
  for (int vl = 0; vl < 2; vl++) {
    int64_t count = vl ? strata_schunk_vlmeta_count(s) : strata_schunk_meta_count(s);
    for (int64_t i = 0; i < count; i++) {
      int64_t len = vl ? strata_schunk_vlmeta_name(s, i, name, sizeof name)
                       : strata_schunk_meta_name(s, i, name, sizeof name);
      if (len < 0) return fail("name", len);
      int64_t size = vl ? strata_schunk_vlmeta_get(s, name, NULL, 0) : strata_schunk_meta_get(s, name, NULL, 0);
      if (size < 0) return fail("size query", size);
      content = (uint8_t *)malloc((size_t)size + 1);
      if (!content) return 1;
      int64_t got = vl ? strata_schunk_vlmeta_get(s, name, content, (size_t)size)
                       : strata_schunk_meta_get(s, name, content, (size_t)size);
      if (got != size) return fail("get", got);
      hex_line(vl ? "vlmeta" : "meta", name, content, got);
      free(content);
    }
  }
  FILE *out = fopen(argv[2], "wb");
  if (!out) return 1;
  int64_t chunksize = strata_schunk_chunksize(s);
  uint8_t *buf = (uint8_t *)malloc(chunksize > 0 ? (size_t)chunksize : 1);
  if (!buf) return 1;
  for (int64_t c = 0; c < nchunks; c++) {
    int64_t n = strata_schunk_decompress_chunk(s, c, buf, (size_t)chunksize);
    if (n < 0) return fail("decompress_chunk", n);
    fwrite(buf, 1, (size_t)n, out);
  }
  fclose(out);
  free(buf);
  strata_schunk_free(s);
  return 0;
}
