/* A plugin library for tests/plugins_dynamic.rs, built with cc in several variants by
 * preprocessor switches, good and bad:
 *   TEST_ID, TEST_KIND, TEST_ABI, TEST_NAME  descriptor fields (defaults: 200, codec, the
 *                                            header's ABI version, "test_rle")
 *   NO_ENTRY                                 no strata_plugin_descriptors symbol
 *   TWICE                                    the descriptor listed twice
 *   SAME_NAME                                a second descriptor: another ID, the same name
 *   NULL_LIST                                the entry point returns NULL (count 1)
 *   NAME_AT_END=n                            the name is n bytes of 'a' with no NUL, ending
 *                                            where an unreadable page begins
 *   FAIL_CODE=n                              the encoder fails with code n and a message
 *   LOG_PATH="file"                          each call of the entry point appends a line there
 *   UNDEFINED_SYMBOL                         the encoder calls a function nothing defines
 * The codec is a byte run-length coder: (count, value) pairs. */
#ifdef NAME_AT_END
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#endif
#include "strata.h"

#include <stdio.h>
#include <string.h>
#ifdef NAME_AT_END
#include <sys/mman.h>
#include <unistd.h>
#endif

#ifndef TEST_ID
#define TEST_ID 200
#endif
#ifndef TEST_KIND
#define TEST_KIND STRATA_PLUGIN_CODEC
#endif
#ifndef TEST_ABI
#define TEST_ABI STRATA_PLUGIN_ABI_VERSION
#endif
#ifndef TEST_NAME
#define TEST_NAME "test_rle"
#endif

#ifdef UNDEFINED_SYMBOL
/* Declared, defined nowhere: the library links (undefined symbols are allowed in shared
 * libraries) and only binding it finds the hole. */
int64_t strata_test_undefined_function(void);
#endif

static int64_t rle_encode(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                          const strata_block_ctx *ctx) {
#if defined(UNDEFINED_SYMBOL)
  (void)src; (void)srclen; (void)dst; (void)dstlen; (void)ctx;
  return strata_test_undefined_function();
#elif defined(FAIL_CODE)
  snprintf(ctx->errbuf, ctx->errbuf_len, "test failure in block %zu", ctx->nblock);
  (void)src; (void)srclen; (void)dst; (void)dstlen;
  return FAIL_CODE;
#else
  (void)ctx;
  size_t out = 0;
  for (size_t i = 0; i < srclen;) {
    size_t run = 1;
    while (i + run < srclen && run < 255 && src[i + run] == src[i]) run++;
    if (out + 2 > dstlen) return 0; /* does not fit: stored raw */
    dst[out++] = (uint8_t)run;
    dst[out++] = src[i];
    i += run;
  }
  return (int64_t)out;
#endif
}

static int64_t rle_decode(const uint8_t *src, size_t srclen, uint8_t *dst, size_t dstlen,
                          const strata_block_ctx *ctx) {
  size_t out = 0;
  for (size_t i = 0; i + 1 < srclen; i += 2) {
    if (out + src[i] > dstlen) {
      snprintf(ctx->errbuf, ctx->errbuf_len, "run overflows the block");
      return STRATA_ERROR_DATA;
    }
    memset(dst + out, src[i + 1], src[i]);
    out += src[i];
  }
  return out == dstlen ? (int64_t)out : STRATA_ERROR_DATA;
}

static int32_t copy_filter(const uint8_t *src, uint8_t *dst, size_t size, const strata_block_ctx *ctx) {
  (void)ctx;
  memcpy(dst, src, size);
  return 0;
}

static const strata_plugin plugin = {
    .abi_version = TEST_ABI,
    .size = sizeof(strata_plugin),
    .kind = TEST_KIND,
    .id = TEST_ID,
    .version = 1,
    .name = TEST_NAME,
    .encode = rle_encode,
    .decode = rle_decode,
    .decode_items = NULL,
    .forward = copy_filter,
    .backward = copy_filter,
};

#ifdef TWICE
static const strata_plugin *const list[] = {&plugin, &plugin};
#elif defined(SAME_NAME)
static const strata_plugin namesake = {
    .abi_version = TEST_ABI,
    .size = sizeof(strata_plugin),
    .kind = TEST_KIND,
    .id = TEST_ID + 1,
    .version = 1,
    .name = TEST_NAME,
    .encode = rle_encode,
    .decode = rle_decode,
    .decode_items = NULL,
    .forward = copy_filter,
    .backward = copy_filter,
};
static const strata_plugin *const list[] = {&plugin, &namesake};
#elif defined(NAME_AT_END)
static strata_plugin unterminated;
static const strata_plugin *const list[] = {&unterminated};
#else
static const strata_plugin *const list[] = {&plugin};
#endif

#ifndef NO_ENTRY
const strata_plugin *const *strata_plugin_descriptors(size_t *count) {
#ifdef LOG_PATH
  FILE *log = fopen(LOG_PATH, "a");
  if (log) {
    fputs("entry\n", log);
    fclose(log);
  }
#endif
  *count = sizeof(list) / sizeof(list[0]);
#ifdef NAME_AT_END
  long page = sysconf(_SC_PAGESIZE);
  char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE) != 0) {
    return NULL;
  }
  memset(p + page - NAME_AT_END, 'a', NAME_AT_END);
  unterminated = plugin;
  unterminated.name = p + page - NAME_AT_END;
#endif
#ifdef NULL_LIST
  return NULL;
#else
  return list;
#endif
}
#else
int not_a_plugin(void) { return (int)sizeof(list); }
#endif
