/* A sentence the analysis formats: tools/check-settings-use.py --prose must reject it, and
 * accept the diagnostic for the error record, the key and the allow-listed subject beside
 * it. */
#include <stdio.h>

int fail(const char *fmt, ...);
int evidence(char *buf, size_t cap, const char *kernel, int rc);
int evidence(char *buf, size_t cap, const char *kernel, int rc) {
  if (rc) return fail("cannot read the trace (%d)", rc);
  snprintf(buf, cap, "dep_%s", kernel);
  snprintf(buf, cap, "%s (site share)", kernel);
  return snprintf(buf, cap, "next on its stream: %s", kernel);
}
