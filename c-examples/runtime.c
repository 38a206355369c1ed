/* Configure the process runtime before any other call: two workers, no pinning, a default of
 * two threads per job and given cache sizes; then see what it is, change the default thread
 * count, and see a second configuration refused.
 * Build: cc -std=c11 runtime.c -I include libstrata.a -lm -lpthread -ldl */
#include <stdio.h>
#include <string.h>

#include "strata.h"

int main(void) {
  strata_runtime_config cfg;
  if (strata_runtime_config_default(&cfg) != 0) return 1;
  cfg.workers = 2;
  cfg.nthreads = 2;
  cfg.pin = 0;
  cfg.l2 = 512 * 1024;
  cfg.l3 = 4 * 1024 * 1024;
  int rc = strata_runtime_configure(&cfg);
  if (rc != 0) return 1;

  strata_runtime_info info;
  if (strata_runtime_get_info(&info) != 0) return 1;
  printf("workers %d, nthreads %d, pinned %d, cores %d logical / %d physical\n", info.workers,
         info.nthreads, info.pinned, info.logical_cores, info.physical_cores);
  printf("caches: L1d %zu, L2 %zu, L3 %zu bytes\n", info.l1d, info.l2, info.l3);
  if (info.workers != 2 || info.nthreads != 2 || info.pinned != 0) return 1;
  if (info.l2 != 512 * 1024 || info.l3 != 4 * 1024 * 1024 || info.l1d == 0) return 1;

  if (strata_runtime_set_nthreads(1) != 0) return 1;
  strata_runtime_get_info(&info);
  if (info.nthreads != 1) return 1;
  if (strata_runtime_set_nthreads(0) != STRATA_ERROR_INVALID_PARAM) return 1;

  /* The runtime exists now: configuring it again is refused. */
  rc = strata_runtime_configure(&cfg);
  char msg[256];
  strata_last_error(msg, sizeof msg);
  printf("second configure: %d (%s)\n", rc, msg);
  if (rc != STRATA_ERROR_INVALID_PARAM) return 1;

  /* A struct from an older, smaller header is refused rather than misread. */
  cfg.size = sizeof cfg - 1;
  if (strata_runtime_configure(&cfg) != STRATA_ERROR_INVALID_PARAM) return 1;
  cfg.size = sizeof cfg;
  cfg.pin = 7;
  if (strata_runtime_configure(&cfg) != STRATA_ERROR_INVALID_PARAM) return 1;
  strata_last_error(msg, sizeof msg);
  if (strstr(msg, "pin 7") == NULL) return 1;
  printf("ok\n");
  return 0;
}
