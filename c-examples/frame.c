/* A frame file from C: create it with a metalayer and a vlmetalayer, append chunks, close,
 * reopen to append the last one, reopen read-only and read everything back (whole chunks,
 * items, compressed chunks, the metadata); then edit an in-memory copy (update, delete,
 * insert, a batched update) and copy it into a sparse frame directory.
 *
 * The file it leaves, <dir>/frame.b2frame, opens in python-blosc2 (tests/interop/test_capi.py
 * checks the data): blosc2.open("frame.b2frame").
 *
 * Usage: frame [dir]    (dir defaults to ".")
 * Build: cc -std=c11 frame.c -I include libstrata.a -lm -lpthread -ldl
 * This file is also valid C++ (tests/ffi_c.rs builds it with g++ -std=c++17). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#define CHUNK_ITEMS 25000 /* int32 items per chunk */
#define NFULL 9           /* full chunks */
#define LAST_ITEMS 12345  /* items in the last, shorter chunk */

/* The value of item k of the whole frame (tests/interop/test_capi.py computes the same). */
static int32_t value(int64_t k) { return (int32_t)((k / 10) * 3 + (k % 7)); }

static void fill(int32_t *buf, int64_t first, int64_t n) {
  for (int64_t i = 0; i < n; i++) buf[i] = value(first + i);
}

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
  char path[1024], sparse_path[1024];
  snprintf(path, sizeof path, "%s/frame.b2frame", dir);
  snprintf(sparse_path, sizeof sparse_path, "%s/frame_sparse.b2frame", dir);
  int32_t *buf = (int32_t *)malloc(CHUNK_ITEMS * sizeof(int32_t));
  int32_t *back = (int32_t *)malloc(CHUNK_ITEMS * sizeof(int32_t));
  if (!buf || !back) return 1;

  /* 1. Create the file: zstd, clevel 5, shuffle, 4-byte items. */
  strata_cparams cp;
  strata_cparams_default(&cp);
  cp.codec = 5;
  cp.typesize = sizeof(int32_t);
  strata_storage st;
  strata_storage_default(&st);
  st.overwrite = 1;
  strata_schunk *s = NULL;
  int rc = strata_schunk_create(path, &st, &cp, NULL, &s);
  CHECK(rc == 0 && s != NULL, "create", rc);
  /* Metalayer contents are free bytes; python-blosc2 reads msgpack: the string "degC". */
  const uint8_t units[] = {0xa4, 'd', 'e', 'g', 'C'};
  rc = strata_schunk_meta_add(s, "units", units, sizeof units);
  CHECK(rc == 0, "meta_add", rc);
  const char history[] = "\xaf" "made by frame.c"; /* msgpack str of 15 bytes */
  rc = strata_schunk_vlmeta_set(s, "history", (const uint8_t *)history, strlen(history));
  CHECK(rc == 0, "vlmeta_set", rc);

  /* 2. Append: NFULL - 1 chunks compressed by the frame, one compressed here first. */
  for (int c = 0; c < NFULL - 1; c++) {
    fill(buf, (int64_t)c * CHUNK_ITEMS, CHUNK_ITEMS);
    int64_t n = strata_schunk_append_buffer(s, (const uint8_t *)buf, CHUNK_ITEMS * sizeof(int32_t));
    CHECK(n == c + 1, "append_buffer", n);
  }
  size_t cap = CHUNK_ITEMS * sizeof(int32_t) + 32;
  uint8_t *chunk = (uint8_t *)malloc(cap);
  if (!chunk) return 1;
  fill(buf, (int64_t)(NFULL - 1) * CHUNK_ITEMS, CHUNK_ITEMS);
  int64_t cbytes = strata_compress(&cp, (const uint8_t *)buf, CHUNK_ITEMS * sizeof(int32_t), chunk, cap);
  CHECK(cbytes > 0, "compress", cbytes);
  int64_t n = strata_schunk_append_chunk(s, chunk, (size_t)cbytes);
  CHECK(n == NFULL, "append_chunk", n);
  rc = strata_schunk_close(s);
  CHECK(rc == 0, "close", rc);

  /* 3. Reopen to append the short last chunk. */
  rc = strata_schunk_open(path, STRATA_OPEN_APPEND, STRATA_SYNC_ON_CLOSE, NULL, &s);
  CHECK(rc == 0, "open (append)", rc);
  rc = strata_schunk_meta_update(s, "units", units, sizeof units);
  CHECK(rc == STRATA_ERROR_FILE_WRITE, "meta_update refused in append mode", rc);
  fill(buf, (int64_t)NFULL * CHUNK_ITEMS, LAST_ITEMS);
  n = strata_schunk_append_buffer(s, (const uint8_t *)buf, LAST_ITEMS * sizeof(int32_t));
  CHECK(n == NFULL + 1, "append last", n);
  /* After a short chunk nothing more can be appended (every chunk but the last is full). */
  n = strata_schunk_append_buffer(s, (const uint8_t *)buf, CHUNK_ITEMS * sizeof(int32_t));
  CHECK(n == STRATA_ERROR_CHUNK_APPEND, "append after the short chunk is refused", n);
  rc = strata_schunk_close(s);
  CHECK(rc == 0, "close", rc);

  /* 4. Reopen read-only and read it all back. */
  rc = strata_schunk_open(path, STRATA_OPEN_READ, STRATA_SYNC_ON_CLOSE, NULL, &s);
  CHECK(rc == 0, "open (read)", rc);
  int64_t nchunks = strata_schunk_nchunks(s), nbytes = strata_schunk_nbytes(s);
  CHECK(nchunks == NFULL + 1, "nchunks", nchunks);
  CHECK(nbytes == (int64_t)(NFULL * CHUNK_ITEMS + LAST_ITEMS) * 4, "nbytes", nbytes);
  CHECK(strata_schunk_typesize(s) == 4, "typesize", strata_schunk_typesize(s));
  CHECK(strata_schunk_chunksize(s) == CHUNK_ITEMS * 4, "chunksize", strata_schunk_chunksize(s));
  printf("%s: %lld chunks, %lld bytes -> %lld (frame %lld bytes)\n", path, (long long)nchunks,
         (long long)nbytes, (long long)strata_schunk_cbytes(s), (long long)strata_schunk_frame_len(s));
  for (int64_t c = 0; c < nchunks; c++) {
    int64_t items = c < NFULL ? CHUNK_ITEMS : LAST_ITEMS;
    int64_t got = strata_schunk_decompress_chunk(s, c, (uint8_t *)back, CHUNK_ITEMS * sizeof(int32_t));
    CHECK(got == items * 4, "decompress_chunk", got);
    fill(buf, c * CHUNK_ITEMS, items);
    CHECK(memcmp(buf, back, (size_t)got) == 0, "chunk data", c);
  }
  int32_t three[3];
  int64_t got = strata_schunk_getitem(s, 4, 1000, 3, (uint8_t *)three, sizeof three);
  CHECK(got == 12 && three[0] == value(4 * CHUNK_ITEMS + 1000) && three[2] == value(4 * CHUNK_ITEMS + 1002),
        "getitem", got);
  /* A compressed chunk: ask for its size, then copy it; its header says what it is. */
  int64_t need = strata_schunk_get_chunk(s, 8, NULL, 0);
  CHECK(need == cbytes, "get_chunk size query", need);
  got = strata_schunk_get_chunk(s, 8, chunk, (size_t)need);
  CHECK(got == need, "get_chunk", got);
  strata_chunk_info info;
  rc = strata_chunk_get_info(chunk, (size_t)got, &info);
  CHECK(rc == 0 && info.codec == 5 && info.typesize == 4 && info.nbytes == CHUNK_ITEMS * 4 &&
            info.cbytes == got && info.filters[5] == 1,
        "chunk_get_info", rc);
  got = strata_schunk_get_chunk(s, 8, chunk, 10);
  CHECK(got == STRATA_ERROR_WRITE_BUFFER, "get_chunk into 10 bytes", got);
  /* Metadata. */
  uint8_t meta[16];
  got = strata_schunk_meta_get(s, "units", NULL, 0);
  CHECK(got == (int64_t)sizeof units, "meta_get size query", got);
  got = strata_schunk_meta_get(s, "units", meta, sizeof meta);
  CHECK(got == (int64_t)sizeof units && memcmp(meta, units, sizeof units) == 0, "meta_get", got);
  got = strata_schunk_meta_get(s, "nope", meta, sizeof meta);
  CHECK(got == STRATA_ERROR_METALAYER_NOT_FOUND, "meta_get of a missing name", got);
  char name[32];
  CHECK(strata_schunk_meta_count(s) == 1, "meta_count", strata_schunk_meta_count(s));
  got = strata_schunk_meta_name(s, 0, name, sizeof name);
  CHECK(got == 5 && strcmp(name, "units") == 0, "meta_name", got);
  char hist[64];
  got = strata_schunk_vlmeta_get(s, "history", (uint8_t *)hist, sizeof hist);
  CHECK(got == (int64_t)strlen(history) && memcmp(hist, history, (size_t)got) == 0, "vlmeta_get", got);
  got = strata_schunk_vlmeta_name(s, 0, name, sizeof name);
  CHECK(got == 7 && strcmp(name, "history") == 0, "vlmeta_name", got);
  n = strata_schunk_append_buffer(s, (const uint8_t *)buf, 4);
  CHECK(n == STRATA_ERROR_FILE_WRITE, "append refused read-only", n);
  strata_cparams stored;
  rc = strata_schunk_get_cparams(s, &stored);
  CHECK(rc == 0 && stored.codec == 5 && stored.clevel == 5 && stored.typesize == 4, "get_cparams", rc);

  /* 5. An in-memory copy through a contiguous-frame buffer; edit it. */
  int64_t flen = strata_schunk_to_cframe(s, NULL, 0);
  CHECK(flen == strata_schunk_frame_len(s), "to_cframe size query", flen);
  uint8_t *frame = (uint8_t *)malloc((size_t)flen);
  if (!frame) return 1;
  got = strata_schunk_to_cframe(s, frame, (size_t)flen);
  CHECK(got == flen, "to_cframe", got);
  strata_schunk *m = NULL;
  rc = strata_schunk_from_cframe(frame, (size_t)flen, &m);
  CHECK(rc == 0, "from_cframe", rc);
  free(frame);
  fill(buf, 0, CHUNK_ITEMS);
  for (int i = 0; i < CHUNK_ITEMS; i++) buf[i] = -buf[i];
  rc = strata_schunk_update_buffer(m, 0, (const uint8_t *)buf, CHUNK_ITEMS * sizeof(int32_t));
  CHECK(rc == 0, "update_buffer", rc);
  n = strata_schunk_delete_chunk(m, 1);
  CHECK(n == NFULL, "delete_chunk", n);
  got = strata_schunk_get_chunk(s, 1, chunk, cap); /* chunk 1 of the file */
  CHECK(got > 0, "get_chunk 1", got);
  n = strata_schunk_insert_chunk(m, 1, chunk, (size_t)got);
  CHECK(n == NFULL + 1, "insert_chunk", n);
  n = strata_schunk_insert_chunk(m, 99, chunk, (size_t)got);
  CHECK(n == STRATA_ERROR_INVALID_INDEX, "insert_chunk past the end", n);
  got = strata_schunk_decompress_chunk(m, 0, (uint8_t *)back, CHUNK_ITEMS * sizeof(int32_t));
  CHECK(got > 0 && memcmp(buf, back, (size_t)got) == 0, "updated chunk 0", got);
  got = strata_schunk_decompress_chunk(m, 1, (uint8_t *)back, CHUNK_ITEMS * sizeof(int32_t));
  fill(buf, CHUNK_ITEMS, CHUNK_ITEMS);
  CHECK(got > 0 && memcmp(buf, back, (size_t)got) == 0, "inserted chunk 1", got);
  /* Chunks 3 and 2 replaced in one commit (by the file's chunks 3 and 2, given in that
   * order); a batch naming a chunk twice is refused whole. */
  uint8_t *chunk3 = (uint8_t *)malloc(cap);
  if (!chunk3) return 1;
  int64_t len2 = strata_schunk_get_chunk(s, 2, chunk, cap);
  int64_t len3 = strata_schunk_get_chunk(s, 3, chunk3, cap);
  CHECK(len2 > 0 && len3 > 0, "get_chunk 2 and 3", len2 > 0 ? len3 : len2);
  const int64_t which[2] = {3, 2};
  const uint8_t *const bytes[2] = {chunk3, chunk};
  const size_t lens[2] = {(size_t)len3, (size_t)len2};
  rc = strata_schunk_update_chunks(m, which, bytes, lens, 2);
  CHECK(rc == 0, "update_chunks", rc);
  for (int c = 2; c <= 3; c++) {
    fill(buf, (int64_t)c * CHUNK_ITEMS, CHUNK_ITEMS);
    got = strata_schunk_decompress_chunk(m, c, (uint8_t *)back, CHUNK_ITEMS * sizeof(int32_t));
    CHECK(got > 0 && memcmp(buf, back, (size_t)got) == 0, "chunk after update_chunks", c);
  }
  const int64_t twice[2] = {2, 2};
  rc = strata_schunk_update_chunks(m, twice, bytes, lens, 2);
  CHECK(rc == STRATA_ERROR_INVALID_PARAM, "update_chunks naming a chunk twice", rc);
  free(chunk3);
  fill(buf, CHUNK_ITEMS, CHUNK_ITEMS);
  rc = strata_schunk_vlmeta_delete(m, "history");
  CHECK(rc == 0 && strata_schunk_vlmeta_count(m) == 0, "vlmeta_delete", rc);

  /* 6. Into a sparse frame directory, and back. */
  st.sparse = 1;
  strata_schunk *d = NULL;
  rc = strata_schunk_copy(m, sparse_path, &st, &d);
  CHECK(rc == 0, "copy to a sparse frame", rc);
  rc = strata_schunk_close(d);
  CHECK(rc == 0, "close sparse", rc);
  rc = strata_schunk_open(sparse_path, STRATA_OPEN_READ, STRATA_SYNC_NONE, NULL, &d);
  CHECK(rc == 0 && strata_schunk_nchunks(d) == NFULL + 1, "reopen sparse", rc);
  got = strata_schunk_decompress_chunk(d, 1, (uint8_t *)back, CHUNK_ITEMS * sizeof(int32_t));
  CHECK(got > 0 && memcmp(buf, back, (size_t)got) == 0, "sparse chunk 1", got);
  printf("edited copy in %s: %lld chunks\n", sparse_path, (long long)strata_schunk_nchunks(d));

  strata_schunk_free(d);
  strata_schunk_free(m);
  strata_schunk_free(s);
  strata_schunk_free(NULL);
  free(chunk);
  free(buf);
  free(back);
  printf("ok\n");
  return 0;
}
