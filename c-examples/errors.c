/* How failures look from C: each call below fails on purpose, returns its STRATA_ERROR_* code
 * and leaves a message for strata_last_error(); the program prints both and checks the code.
 * Build: cc -std=c11 errors.c -I include libstrata.a -lm -lpthread -ldl */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define N 20000

static int failures = 0;

/* Prints the outcome of a call expected to fail with `want`. */
static void expect(const char *what, int64_t rc, int want) {
  char name[64] = "?", msg[512];
  strata_error_name((int32_t)rc, name, sizeof name);
  strata_last_error(msg, sizeof msg);
  printf("%-34s -> %s (%lld): %s\n", what, name, (long long)rc, msg);
  if (rc != want) {
    char wanted[64] = "?";
    strata_error_name(want, wanted, sizeof wanted);
    fprintf(stderr, "  expected %s (%d)\n", wanted, want);
    failures++;
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  float *data = (float *)malloc(N * sizeof(float));
  uint8_t *chunk = (uint8_t *)malloc(N * sizeof(float) + 32);
  if (!data || !chunk) return 1;
  for (int i = 0; i < N; i++) data[i] = (float)(i % 100) * 0.5f;
  strata_cparams cp;
  strata_cparams_default(&cp);
  cp.typesize = sizeof(float);
  int64_t cbytes = strata_compress(&cp, (const uint8_t *)data, N * sizeof(float), chunk, N * sizeof(float) + 32);
  if (cbytes <= 0) return 1;

  /* Buffers. */
  expect("decompress into a small buffer", strata_decompress(chunk, (size_t)cbytes, (uint8_t *)data, 100),
         STRATA_ERROR_WRITE_BUFFER);
  expect("compress into a small buffer",
         strata_compress(&cp, (const uint8_t *)data, N * sizeof(float), chunk + 0, 0), STRATA_ERROR_WRITE_BUFFER);
  cbytes = strata_compress(&cp, (const uint8_t *)data, N * sizeof(float), chunk, N * sizeof(float) + 32);
  expect("decompress a truncated chunk", strata_decompress(chunk, (size_t)cbytes - 10, (uint8_t *)data, N * sizeof(float)),
         STRATA_ERROR_READ_BUFFER);
  expect("getitem past the end", strata_getitem(chunk, (size_t)cbytes, N - 1, 2, (uint8_t *)data, 8),
         STRATA_ERROR_INVALID_INDEX);

  /* Corrupt input: a wrong version byte, then a block stream of garbage. */
  uint8_t *bad = (uint8_t *)malloc((size_t)cbytes);
  if (!bad) return 1;
  memcpy(bad, chunk, (size_t)cbytes);
  bad[0] = 42;
  expect("decompress, version byte 42", strata_decompress(bad, (size_t)cbytes, (uint8_t *)data, N * sizeof(float)),
         STRATA_ERROR_VERSION_SUPPORT);
  strata_cparams zstd = cp;
  zstd.codec = 5;
  cbytes = strata_compress(&zstd, (const uint8_t *)data, N * sizeof(float), bad, (size_t)cbytes);
  if (cbytes <= 0) return 1;
  for (int64_t i = cbytes / 2; i < cbytes; i++) bad[i] = (uint8_t)(i * 37);
  /* Each stream starts with its length, negative for a run of one byte: garbage there reads
     as a run that cannot be. */
  expect("decompress a garbled stream", strata_decompress(bad, (size_t)cbytes, (uint8_t *)data, N * sizeof(float)),
         STRATA_ERROR_RUN_LENGTH);
  free(bad);

  /* Parameters and codecs. */
  strata_cparams wrong = cp;
  wrong.clevel = 12;
  expect("compress with clevel 12", strata_compress(&wrong, (const uint8_t *)data, 400, chunk, 1000),
         STRATA_ERROR_INVALID_PARAM);
  wrong = cp;
  wrong.codec = 200; /* a user codec ID nobody registered */
  expect("compress with unknown codec 200", strata_compress(&wrong, (const uint8_t *)data, 4000, chunk, 5000),
         STRATA_ERROR_CODEC_SUPPORT);
  wrong = cp;
  wrong.size = 8; /* as if compiled against an older, smaller struct */
  expect("cparams of another size", strata_compress(&wrong, (const uint8_t *)data, 400, chunk, 1000),
         STRATA_ERROR_INVALID_PARAM);
  expect("NULL cparams", strata_compress(NULL, (const uint8_t *)data, 400, chunk, 1000), STRATA_ERROR_NULL_POINTER);
  expect("NULL source with a length", strata_decompress(NULL, 100, (uint8_t *)data, 100), STRATA_ERROR_NULL_POINTER);

  /* Frames. */
  char path[1024];
  strata_schunk *s = NULL;
  snprintf(path, sizeof path, "%s/does-not-exist.b2frame", dir);
  expect("open a missing file", strata_schunk_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, NULL, &s),
         STRATA_ERROR_FILE_OPEN);
  snprintf(path, sizeof path, "%s/not-a-frame.b2frame", dir);
  FILE *f = fopen(path, "wb");
  if (!f) return 1;
  fwrite(data, 1, 4000, f);
  fclose(f);
  expect("open a file that is no frame", strata_schunk_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, NULL, &s),
         STRATA_ERROR_INVALID_HEADER);
  expect("open mode 9", strata_schunk_open(path, 9, STRATA_SYNC_NONE, NULL, &s), STRATA_ERROR_INVALID_PARAM);
  if (s != NULL) return 1; /* out-parameters are written only on success */
  expect("create, existing file", strata_schunk_create(path, NULL, NULL, NULL, &s), STRATA_ERROR_FILE_OPEN);
  expect("from_cframe of a chunk", strata_schunk_from_cframe(chunk, (size_t)cbytes, &s), STRATA_ERROR_INVALID_HEADER);
  remove(path);
  expect("nchunks of NULL", strata_schunk_nchunks(NULL), STRATA_ERROR_NULL_POINTER);

  if (strata_schunk_create(NULL, NULL, &cp, NULL, &s) != 0) return 1;
  expect("delete chunk 0 of none", strata_schunk_delete_chunk(s, 0), STRATA_ERROR_INVALID_INDEX);
  expect("decompress chunk -1", strata_schunk_decompress_chunk(s, -1, (uint8_t *)data, 4), STRATA_ERROR_INVALID_INDEX);
  expect("metalayer name of 40 bytes",
         strata_schunk_meta_add(s, "a-name-much-longer-than-31-bytes-allowed", NULL, 0), STRATA_ERROR_INVALID_PARAM);
  expect("vlmetalayer not there", strata_schunk_vlmeta_get(s, "x", NULL, 0), STRATA_ERROR_METALAYER_NOT_FOUND);
  if (strata_schunk_append_buffer(s, (const uint8_t *)data, 4000) != 1) return 1;
  expect("append a larger chunk", strata_schunk_append_buffer(s, (const uint8_t *)data, 8000),
         STRATA_ERROR_CHUNK_APPEND);
  expect("add a metalayer after a chunk", strata_schunk_meta_add(s, "late", NULL, 0), STRATA_ERROR_INVALID_PARAM);
  strata_schunk_free(s);

  /* The message: truncated to the buffer, full length returned. */
  strata_decompress(chunk, 3, (uint8_t *)data, 10);
  size_t len = strata_last_error(NULL, 0);
  char tiny[8];
  size_t again = strata_last_error(tiny, sizeof tiny);
  printf("message of %zu bytes, truncated: \"%s\"\n", len, tiny);
  if (len < 8 || again != len || strlen(tiny) != 7) failures++;
  char name[8];
  if (strata_error_name(STRATA_ERROR_DATA, name, sizeof name) != STRATA_ERROR_WRITE_BUFFER) failures++;
  if (strata_error_name(STRATA_ERROR_DATA, NULL, 0) != (int64_t)strlen("STRATA_ERROR_DATA")) failures++;

  free(data);
  free(chunk);
  if (failures) return 1;
  printf("ok\n");
  return 0;
}
