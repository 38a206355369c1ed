/* Register a codec written in C in-process with strata_register_plugin, compress and
 * decompress a chunk with it, and see the registry refuse bad descriptors.
 * Build: cc -std=c11 register_plugin.c -I include libstrata.a -lm -lpthread -ldl */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define N 50000

/* A codec that stores every byte XOR 0x5A, dropping the block's trailing zero bytes (then
 * restored): enough to see the plugin run in both directions. */
static int64_t xor_encode(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                          const strata_block_ctx *ctx) {
  (void)ctx;
  size_t n = srclen;
  while (n > 0 && src[n - 1] == 0) n--;
  if (n + 4 > dstlen) return 0; /* does not fit: stored raw */
  uint32_t len = (uint32_t)n;
  memcpy(dst, &len, 4);
  for (size_t i = 0; i < n; i++) dst[4 + i] = src[i] ^ 0x5A;
  return (int64_t)(n + 4);
}

static int64_t xor_decode(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                          const strata_block_ctx *ctx) {
  uint32_t len;
  if (srclen < 4) return STRATA_ERROR_DATA;
  memcpy(&len, src, 4);
  if (len > dstlen || len + 4 > srclen) {
    snprintf(ctx->errbuf, ctx->errbuf_len, "stream claims %u bytes", len);
    return STRATA_ERROR_DATA;
  }
  for (size_t i = 0; i < len; i++) dst[i] = src[4 + i] ^ 0x5A;
  memset(dst + len, 0, dstlen - len);
  return (int64_t)dstlen;
}

static int expect_error(const strata_plugin *p, const char *what) {
  int rc = strata_register_plugin(p);
  char msg[512];
  strata_last_error(msg, sizeof msg);
  if (rc != STRATA_ERROR_PLUGIN_LOAD) {
    fprintf(stderr, "%s: expected STRATA_ERROR_PLUGIN_LOAD, got %d (%s)\n", what, rc, msg);
    return 1;
  }
  printf("refused (%s): %s\n", what, msg);
  return 0;
}

int main(void) {
  strata_plugin codec = {
      .abi_version = STRATA_PLUGIN_ABI_VERSION,
      .size = sizeof(strata_plugin),
      .kind = STRATA_PLUGIN_CODEC,
      .id = 230, /* a user ID: 160-255 */
      .version = 1,
      .name = "xor_trim",
      .encode = xor_encode,
      .decode = xor_decode,
  };
  int rc = strata_register_plugin(&codec);
  if (rc != 0) return 1;

  uint8_t *data = calloc(N, 1), *back = malloc(N), *chunk = malloc(N + 32);
  if (!data || !back || !chunk) return 1;
  for (int i = 0; i < N / 2; i++) data[i] = (uint8_t)(i * 7);
  strata_cparams cp;
  strata_cparams_default(&cp);
  cp.codec = 230;
  cp.typesize = 1;
  memset(cp.filters, 0, sizeof cp.filters);
  int64_t cbytes = strata_compress(&cp, data, N, chunk, N + 32);
  if (cbytes <= 0 || cbytes >= N || chunk[22] != 230) return 1;
  if (strata_decompress(chunk, (size_t)cbytes, back, N) != N || memcmp(data, back, N) != 0) return 1;
  printf("codec 230 (xor_trim): %d bytes -> %lld\n", N, (long long)cbytes);

  /* The same ID again, a Blosc2-assigned ID under another name, a wrong ABI version. */
  if (expect_error(&codec, "ID taken")) return 1;
  strata_plugin bad = codec;
  bad.id = 35;
  if (expect_error(&bad, "Blosc2's zfp_rate")) return 1;
  bad = codec;
  bad.id = 231;
  bad.abi_version = STRATA_PLUGIN_ABI_VERSION + 1;
  if (expect_error(&bad, "ABI version")) return 1;
  bad = codec;
  bad.id = 232;
  bad.name = "xor_other";
  bad.decode = NULL;
  if (expect_error(&bad, "no decoder")) return 1;
  free(data);
  free(back);
  free(chunk);
  printf("ok\n");
  return 0;
}
