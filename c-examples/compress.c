/* Compress a buffer of doubles into one Blosc2 chunk, read it back whole and in part, and
 * show how errors are reported. Build: cc -std=c11 compress.c -I include libstrata.a -lm -lpthread -ldl */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define N 100000

static int report(const char *what, int64_t rc) {
  char msg[256];
  strata_last_error(msg, sizeof msg);
  fprintf(stderr, "%s failed with %lld: %s\n", what, (long long)rc, msg);
  return 1;
}

int main(void) {
  double *data = malloc(N * sizeof *data);
  double *back = malloc(N * sizeof *back);
  size_t dstlen = N * sizeof(double) + 32;
  uint8_t *chunk = malloc(dstlen);
  if (!data || !back || !chunk) return 1;
  for (int i = 0; i < N; i++) data[i] = sin(i / 1000.0) * 15.0 + 273.15;

  printf("strata %s (ABI %u)\n", strata_version(), strata_abi_version());
  if (strcmp(strata_version(), STRATA_VERSION) != 0) return 1;

  strata_cparams cp;
  strata_cparams_default(&cp);
  cp.codec = 5; /* zstd */
  cp.typesize = sizeof(double);
  int64_t cbytes = strata_compress(&cp, (const uint8_t *)data, N * sizeof(double), chunk, dstlen);
  if (cbytes < 0) return report("compress", cbytes);
  printf("compressed %zu bytes into %lld (ratio %.2f)\n", N * sizeof(double), (long long)cbytes,
         (double)(N * sizeof(double)) / (double)cbytes);

  int64_t nbytes = strata_decompress(chunk, (size_t)cbytes, (uint8_t *)back, N * sizeof(double));
  if (nbytes < 0) return report("decompress", nbytes);
  if (memcmp(data, back, N * sizeof(double)) != 0) return 1;

  double five[5];
  int64_t got = strata_getitem(chunk, (size_t)cbytes, 54321, 5, (uint8_t *)five, sizeof five);
  if (got != (int64_t)sizeof five || memcmp(five, data + 54321, sizeof five) != 0) return 1;
  printf("items 54321..54325 read back without decompressing the whole chunk\n");

  /* Errors: a too-small destination, and a corrupted chunk. */
  int64_t rc = strata_decompress(chunk, (size_t)cbytes, (uint8_t *)back, 10);
  if (rc != -6) return 1;
  report("decompress into 10 bytes (expected)", rc);
  chunk[0] = 99;
  rc = strata_decompress(chunk, (size_t)cbytes, (uint8_t *)back, N * sizeof(double));
  if (rc != -10) return 1;
  report("decompress of a corrupted chunk (expected)", rc);

  free(data);
  free(back);
  free(chunk);
  printf("ok\n");
  return 0;
}
