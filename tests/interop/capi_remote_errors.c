/* The C API's errors on URLs, for tests/interop/test_remote.py.
 *
 * Usage: capi_remote_errors GOOD_URL MISSING_URL
 *   GOOD_URL names a b2nd array, MISSING_URL nothing. Prints one line per call:
 *   "CALL CODE_NAME MESSAGE" (CODE_NAME from strata_error_name, "ok" for 0). */
#include <stdio.h>
#include <string.h>

#include "strata.h"

static void report(const char *call, int32_t rc) {
  char name[64] = "ok", msg[512] = "";
  if (rc != 0) {
    if (strata_error_name(rc, name, sizeof name) < 0) snprintf(name, sizeof name, "%d", rc);
    strata_last_error(msg, sizeof msg);
  }
  printf("%s %s %s\n", call, name, msg);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_remote_errors GOOD_URL MISSING_URL\n");
    return 2;
  }
  strata_ndarray *a = NULL;
  strata_schunk *s = NULL;
  report("ndarray_open_missing", strata_ndarray_open(argv[2], STRATA_OPEN_READ, STRATA_SYNC_NONE, &a));
  report("schunk_open_missing", strata_schunk_open(argv[2], STRATA_OPEN_READ, STRATA_SYNC_NONE, NULL, &s));
  report("ndarray_open_readwrite",
         strata_ndarray_open(argv[1], STRATA_OPEN_READWRITE, STRATA_SYNC_NONE, &a));
  report("schunk_open_append", strata_schunk_open(argv[1], STRATA_OPEN_APPEND, STRATA_SYNC_NONE, NULL, &s));
  int32_t rc = strata_ndarray_open(argv[1], STRATA_OPEN_READ, STRATA_SYNC_NONE, &a);
  report("ndarray_open_read", rc);
  if (rc == 0) strata_ndarray_free(a);
  printf("remote_code %d\n", STRATA_ERROR_REMOTE);
  return 0;
}
