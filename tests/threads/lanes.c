/*
 * lanes.c - two threads classifying and matching the same names at once, each in its lane
 * of one rule set (rules.h, te_lane_enter), then folding; run by ctest tsan/lanes in a
 * ThreadSanitizer build, which reports any access the lanes leave shared. Exits 0 when the
 * answers equal one thread's, 1 otherwise, 2 when the packs do not load.
 *
 *   lanes RULES_DIR
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "triage/rules.h"

#define N_NAMES 3000

typedef struct job {
  const te_rules *r;
  unsigned lane;
  const char *got[N_NAMES];
} job;

static void name_of(size_t i, char *out, size_t cap) {
  static const char *const parts[] = {"ncclDevKernel_AllReduce", "sm90_xmma_gemm", "copy_kernel",
                                      "triton_poi_fused_add", "flash_fwd_kernel"};
  snprintf(out, cap, "%s_%zu", parts[i % 5], i / 5);
}

static void *classify_all(void *arg) {
  job *j = arg;
  if (j->lane && te_lane_enter(j->lane) != 0) return NULL;
  const te_matcher *m = te_rules_matcher(j->r, "single_node_collective");
  char name[96];
  for (size_t i = 0; i < N_NAMES; i++) {
    name_of(i, name, sizeof name);
    j->got[i] = te_rules_classify(j->r, "kernel", name, NULL);
    if (m) (void)te_matcher_match(m, name, strlen(name));
  }
  if (j->lane) te_lane_leave();
  return NULL;
}

static te_rules *load(const char *dir) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  bool ok = r && d && te_rules_load_path(r, dir, d) == TE_OK && te_rules_finalize(r, d) == TE_OK;
  te_diags_destroy(d);
  if (!ok) te_rules_destroy(r);
  return ok ? r : NULL;
}

int main(int argc, char **argv) {
  te_rules *one = argc > 1 ? load(argv[1]) : NULL, *two = argc > 1 ? load(argv[1]) : NULL;
  if (!one || !two) {
    fprintf(stderr, "lanes: cannot load the packs\n");
    return 2;
  }
  static job serial, a, b;
  serial = (job){.r = one};
  a = (job){.r = two, .lane = 1};
  b = (job){.r = two, .lane = 2};
  classify_all(&serial);
  pthread_t th;
  if (pthread_create(&th, NULL, classify_all, &b) != 0) return 1;
  classify_all(&a);
  pthread_join(th, NULL);
  te_rules_lanes_fold(two);
  int bad = 0;
  for (size_t i = 0; i < N_NAMES; i++)
    bad += !a.got[i] || !b.got[i] || strcmp(a.got[i], serial.got[i]) != 0 ||
           strcmp(b.got[i], serial.got[i]) != 0;
  te_rules_destroy(one);
  te_rules_destroy(two);
  printf("lanes: %d of %d names answered otherwise than by one thread\n", bad, N_NAMES);
  return bad ? 1 : 0;
}
