/* The shared block cache from C: one cache of decompressed blocks given to two handles of one
 * .b2nd file (as two readers of one grid would hold), so a block the first read decompresses
 * the second finds in the cache; then the file is rewritten in place and opened again, and the
 * new handle reads the new values, never the cached old ones.
 *
 * Usage: cache [dir]   (default ".")
 * Build: cc -std=c11 cache.c -I include libstrata.a -lm -lpthread -ldl */
#include <stdio.h>
#include <string.h>

#include "strata.h"

#define NY 256
#define NX 512

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

static float grid[NY][NX];

/* Row `y`, columns 100..163, of the array: 64 floats. */
static int64_t read_row(const strata_ndarray *a, int y, float *out) {
  int64_t start[2] = {y, 100}, stop[2] = {y + 1, 164};
  return strata_ndarray_get_slice(a, 2, start, stop, NULL, (uint8_t *)out, 64 * sizeof(float));
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[1024];
  snprintf(path, sizeof path, "%s/cache_grid.b2nd", dir);
  for (int y = 0; y < NY; y++)
    for (int x = 0; x < NX; x++) grid[y][x] = (float)(y * NX + x) * 0.25f;

  strata_ndarray_params p;
  strata_ndarray_params_default(&p);
  p.ndim = 2;
  p.shape[0] = NY, p.shape[1] = NX;
  p.chunkshape[0] = 128, p.chunkshape[1] = 128;
  p.blockshape[0] = 16, p.blockshape[1] = 32;
  p.cparams.typesize = 4;
  strata_storage st;
  strata_storage_default(&st);
  st.overwrite = 1;
  strata_ndarray *w = NULL;
  int rc = strata_ndarray_from_buffer(path, &st, &p, "<f4", (const uint8_t *)grid, sizeof grid, &w);
  CHECK(rc == 0, "from_buffer", rc);
  CHECK(strata_ndarray_close(w) == 0, "close", -1);

  strata_cache *cache = strata_cache_new(16u << 20);
  strata_ndarray *a = NULL, *b = NULL;
  rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &a);
  CHECK(rc == 0, "open a", rc);
  rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &b);
  CHECK(rc == 0, "open b", rc);
  CHECK(strata_ndarray_set_cache(a, cache) == 0 && strata_ndarray_set_cache(b, cache) == 0, "set_cache", -1);

  float ra[64], rb[64];
  int64_t n = read_row(a, 40, ra);
  CHECK(n == 64 * 4, "a: get_slice", n);
  n = read_row(b, 40, rb);
  CHECK(n == 64 * 4, "b: get_slice", n);
  for (int i = 0; i < 64; i++) CHECK(ra[i] == grid[40][100 + i] && rb[i] == ra[i], "row 40", i);

  /* Row 40, columns 100..163, crosses 3 blocks of 32 columns: a decompressed them, b found
   * them in the cache. */
  strata_cache_stats s;
  CHECK(strata_cache_get_stats(cache, &s) == 0, "stats", -1);
  CHECK(s.misses == 3 && s.hits == 3 && s.entries == 3, "a then b", (int64_t)s.misses);
  /* The arrays hold the cache too: this handle can go first. */
  strata_cache_free(cache);
  cache = NULL;

  /* Rewrite row 40 in place (another writer) and open the file again: its version is a new
   * one, so the blocks a and b cached are not its blocks. */
  strata_ndarray *rw = NULL;
  rc = strata_ndarray_open(path, STRATA_OPEN_READWRITE, STRATA_SYNC_NONE, &rw);
  CHECK(rc == 0, "open rw", rc);
  float ones[64];
  for (int i = 0; i < 64; i++) ones[i] = -1.0f;
  int64_t start[2] = {40, 100}, stop[2] = {41, 164};
  rc = strata_ndarray_set_slice(rw, 2, start, stop, NULL, (const uint8_t *)ones, sizeof ones);
  CHECK(rc == 0, "set_slice", rc);
  CHECK(strata_ndarray_close(rw) == 0, "close rw", -1);

  strata_cache *shared = strata_cache_new(16u << 20);
  strata_ndarray *c = NULL;
  rc = strata_ndarray_open(path, STRATA_OPEN_READ, STRATA_SYNC_NONE, &c);
  CHECK(rc == 0, "open c", rc);
  CHECK(strata_ndarray_set_cache(c, shared) == 0, "set_cache c", -1);
  n = read_row(c, 40, rb);
  CHECK(n == 64 * 4 && rb[0] == -1.0f && rb[63] == -1.0f, "c reads the new row", n);
  n = read_row(c, 40, rb);
  CHECK(n == 64 * 4 && rb[0] == -1.0f, "c again", n);
  n = read_row(a, 40, ra);
  CHECK(n == 64 * 4 && ra[0] == grid[40][100], "a still reads the file it opened", n);
  CHECK(strata_cache_get_stats(shared, &s) == 0, "stats", -1);
  CHECK(s.misses == 3 && s.hits == 3 && s.entries == 3 && s.bytes <= s.capacity, "counters", (int64_t)s.misses);
  printf("cache: %llu hits, %llu misses, %llu blocks, %llu bytes of %llu\n", (unsigned long long)s.hits,
         (unsigned long long)s.misses, (unsigned long long)s.entries, (unsigned long long)s.bytes,
         (unsigned long long)s.capacity);
  CHECK(strata_cache_clear(shared) == 0, "clear", -1);
  CHECK(strata_cache_get_stats(shared, &s) == 0 && s.entries == 0, "cleared", (int64_t)s.entries);
  CHECK(strata_ndarray_set_cache(c, NULL) == 0, "detach", -1);
  strata_cache_free(shared);
  strata_ndarray_free(a);
  strata_ndarray_free(b);
  strata_ndarray_free(c);
  printf("cache.c ok\n");
  return 0;
}
