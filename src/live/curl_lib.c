/*
 * live/curl_lib.c - dlopen libcurl and resolve the functions live capture calls
 * (curl_lib.h says why it is not linked).
 */
#include "live/curl_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set by CMake from the SONAME of the libcurl pkg-config found (cmake/libcurl-soname.cmake). */
#ifndef TRIAGE_LIBCURL_SONAME
#define TRIAGE_LIBCURL_SONAME "libcurl.so.4"
#endif

/* dlsym returns a data pointer; POSIX guarantees it converts to a function pointer of the
 * same size, which the memcpy below relies on. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers fit in void *");

/* The result of the one load: written once under pthread_once, read-only afterwards. */
static pthread_once_t lv_curl_once = PTHREAD_ONCE_INIT;
static lv_curl_api lv_curl_table;
static bool lv_curl_loaded;
static char lv_curl_error[1024]; /* holds tried (256) + first_error (512) + text */

/* Resolves name from h into *slot (a function pointer member of the table). */
static bool lv_curl_sym(void *h, const char *lib, const char *name, void *slot, size_t size) {
  dlerror(); /* clear a stale message */
  void *p = dlsym(h, name);
  if (!p) {
    const char *why = dlerror();
    snprintf(lv_curl_error, sizeof lv_curl_error,
             "live capture needs libcurl, but %s has no %s (%s)", lib, name,
             why ? why : "symbol is NULL");
    return false;
  }
  memcpy(slot, &p, size);
  return true;
}

static void lv_curl_do_load(void) {
  const char *names[3];
  size_t n = 0;
  const char *override = getenv("TRIAGE_LIBCURL");
  if (override && *override) {
    names[n++] = override;
  } else {
    names[n++] = TRIAGE_LIBCURL_SONAME;
    if (strcmp(TRIAGE_LIBCURL_SONAME, "libcurl.so.4") != 0) names[n++] = "libcurl.so.4";
    /* Debian's libcurl3-gnutls: same ABI, another TLS backend. */
    names[n++] = "libcurl-gnutls.so.4";
  }

  void *h = NULL;
  const char *lib = NULL;
  char first_error[512] = "";
  for (size_t i = 0; i < n && !h; i++) {
    /* RTLD_NOW: a missing dependency fails here, not mid-capture. RTLD_LOCAL: libcurl's
     * symbols do not leak into the global namespace. */
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) {
      lib = names[i];
    } else if (i == 0) {
      const char *why = dlerror();
      snprintf(first_error, sizeof first_error, "%s", why ? why : "unknown error");
    }
  }
  if (!h) {
    char tried[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof tried; i++) {
      int w = snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", names[i]);
      if (w < 0) break;
      used += (size_t)w;
    }
    snprintf(lv_curl_error, sizeof lv_curl_error,
             "live capture needs libcurl, which cannot be loaded (tried %s%s): %s", tried,
             override && *override ? ", from TRIAGE_LIBCURL" : "", first_error);
    return;
  }

  lv_curl_api t;
  memset(&t, 0, sizeof t);
#define LV_CURL_SYM(member, name) lv_curl_sym(h, lib, name, &t.member, sizeof t.member)
  bool ok = LV_CURL_SYM(global_init, "curl_global_init") &&
            LV_CURL_SYM(global_cleanup, "curl_global_cleanup") &&
            LV_CURL_SYM(easy_init, "curl_easy_init") &&
            LV_CURL_SYM(easy_setopt, "curl_easy_setopt") &&
            LV_CURL_SYM(easy_perform, "curl_easy_perform") &&
            LV_CURL_SYM(easy_getinfo, "curl_easy_getinfo") &&
            LV_CURL_SYM(easy_cleanup, "curl_easy_cleanup") &&
            LV_CURL_SYM(easy_strerror, "curl_easy_strerror") &&
            LV_CURL_SYM(slist_append, "curl_slist_append") &&
            LV_CURL_SYM(slist_free_all, "curl_slist_free_all");
#undef LV_CURL_SYM
  if (!ok) {
    dlclose(h); /* nothing of it was called yet */
    return;
  }
  lv_curl_table = t;
  lv_curl_loaded = true;
}

const lv_curl_api *lv_curl_load(char *err, size_t err_cap) {
  pthread_once(&lv_curl_once, lv_curl_do_load);
  if (lv_curl_loaded) return &lv_curl_table;
  if (err_cap) snprintf(err, err_cap, "%s", lv_curl_error);
  return NULL;
}
