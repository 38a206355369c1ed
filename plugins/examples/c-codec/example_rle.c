/* example_rle: a Strata codec plugin written in C (codec ID 244, a user ID).
 *
 * A byte run-length coder: each run of up to 255 equal bytes becomes (count, byte). It shows the
 * whole plugin ABI of include/strata.h: the encoder, the decoder, an error message through the
 * block context, and the entry point that lists the library's descriptors.
 *
 * Build:  cc -std=c11 -O2 -shared -fPIC -I include example_rle.c -o libexample_rle.so
 * Use:    put libexample_rle.so in a directory of STRATA_PLUGIN_PATH (or in
 *         ~/.local/lib/strata/plugins); compress with codec 244 (or --codec example_rle).
 */
#include <stdio.h>
#include <string.h>

#include "strata.h"

/* Called once per stream of each block. Returns the compressed size, 0 when the result would
 * not fit in `dstlen` bytes (Strata then stores the stream raw), or a negative code. */
static int64_t rle_encode(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                          const strata_block_ctx *ctx) {
  (void)ctx; /* typesize, blocksize, nblock, meta, and for N-d data the shapes, are there */
  size_t out = 0;
  for (size_t i = 0; i < srclen;) {
    size_t run = 1;
    while (i + run < srclen && run < 255 && src[i + run] == src[i]) run++;
    if (out + 2 > dstlen) return 0;
    dst[out++] = (uint8_t)run;
    dst[out++] = src[i];
    i += run;
  }
  return (int64_t)out;
}

/* Must fill all `dstlen` bytes and return dstlen, or a negative code (with a message). */
static int64_t rle_decode(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                          const strata_block_ctx *ctx) {
  size_t out = 0;
  if (srclen % 2 != 0) {
    snprintf(ctx->errbuf, ctx->errbuf_len, "block %zu: odd stream length %zu", ctx->nblock, srclen);
    return STRATA_ERROR_DATA;
  }
  for (size_t i = 0; i < srclen; i += 2) {
    if (src[i] == 0 || out + src[i] > dstlen) {
      snprintf(ctx->errbuf, ctx->errbuf_len, "block %zu: bad run at byte %zu", ctx->nblock, i);
      return STRATA_ERROR_DATA;
    }
    memset(dst + out, src[i + 1], src[i]);
    out += src[i];
  }
  if (out != dstlen) {
    snprintf(ctx->errbuf, ctx->errbuf_len, "block %zu: %zu bytes decoded, %zu expected", ctx->nblock, out, dstlen);
    return STRATA_ERROR_DATA;
  }
  return (int64_t)out;
}

static const strata_plugin example_rle = {
    .abi_version = STRATA_PLUGIN_ABI_VERSION,
    .size = sizeof(strata_plugin),
    .kind = STRATA_PLUGIN_CODEC,
    .id = 244,
    .version = 1,
    .name = "example_rle",
    .encode = rle_encode,
    .decode = rle_decode,
    .decode_items = NULL, /* optional: decode a few items without the whole block */
};

static const strata_plugin *const plugins[] = {&example_rle};

/* The one symbol Strata looks for (STRATA_PLUGIN_ENTRY). */
const strata_plugin *const *strata_plugin_descriptors(size_t *count) {
  *count = sizeof plugins / sizeof plugins[0];
  return plugins;
}
