/* Reads a frame written by someone else through Strata's C API only, for
 * tests/interop/test_capi.py: prints what the frame says about itself and writes its data,
 * decompressed chunk by chunk, to a raw file the test compares with what python-blosc2 wrote.
 *
 * Usage: capi_reader FRAME OUT.raw
 * Prints: "nchunks N", "typesize T", "chunksize C", "nbytes B", then one line per metalayer
 * "meta NAME HEX" and per vlmetalayer "vlmeta NAME HEX" (HEX = the content's bytes). */
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv) {
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
