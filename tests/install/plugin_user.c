/* Built by tests/install.rs with only an installed Strata: `cc plugin_user.c $(pkg-config
 * --cflags --libs strata)`, run without LD_LIBRARY_PATH from outside the prefix. Compresses
 * runs of bytes with codec 244 (plugins/examples/c-codec, a plugin library): the library
 * finds it in the plugin directory installed beside it, or the program exits 2 with the
 * error. Prints "codec example_rle: N -> M bytes" and "ok". */
#include <stdio.h>
#include <string.h>

#include "strata.h"

int main(void) {
  static uint8_t data[6000], chunk[6000 + 64], back[6000];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i / 500);
  strata_cparams cp;
  strata_cparams_default(&cp);
  cp.codec = 244;
  cp.typesize = 1;
  for (int i = 0; i < 6; i++) cp.filters[i] = 0;
  int64_t n = strata_compress(&cp, data, sizeof data, chunk, sizeof chunk);
  if (n < 0) {
    char msg[1024];
    strata_last_error(msg, sizeof msg);
    printf("compress: %lld: %s\n", (long long)n, msg);
    return 2;
  }
  int64_t m = strata_decompress(chunk, (size_t)n, back, sizeof back);
  char name[32];
  if (m != (int64_t)sizeof data || memcmp(back, data, sizeof data) != 0 ||
      strata_codec_name(244, name, sizeof name) < 0)
    return 1;
  printf("codec %s: %zu -> %lld bytes\nok\n", name, sizeof data, (long long)n);
  return 0;
}
