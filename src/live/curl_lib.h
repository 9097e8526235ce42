/*
 * live/curl_lib.h - libcurl, loaded with dlopen the first time live capture needs it.
 *
 * Why: linking libcurl makes every triage run load it and its ~30 dependent libraries
 * (TLS, Kerberos, LDAP, ...): ~4 MB resident and ~15-20 ms of dynamic linking before
 * main, for a feature only --url uses (docs/performance.md, round 7). So triage is built
 * against libcurl's headers only and resolves the few functions src/live calls at run
 * time, from the library whose SONAME CMake read at configure time
 * (TRIAGE_LIBCURL_SONAME), then "libcurl.so.4", then "libcurl-gnutls.so.4". The
 * environment variable TRIAGE_LIBCURL, when set and non-empty, is the only name tried
 * (the tests use it to exercise the failure path; docs/live.md).
 *
 * Call sites go through the table: curl->easy_setopt(c, CURLOPT_URL, url). The members
 * are not named after the libcurl functions on purpose: <curl/curl.h> may define
 * curl_easy_setopt / curl_easy_getinfo as type-checking macros, which would also expand
 * after "->". Those two are variadic, as in libcurl, so arguments must have the types
 * libcurl documents for each option (long, not int).
 *
 * Ownership: the table and the library are loaded once per process and stay loaded until
 * it exits (never dlclose'd: TLS libraries register exit handlers that point into them);
 * callers never free them. err is the caller's buffer.
 */
#ifndef TRIAGE_LV_CURL_LIB_H
#define TRIAGE_LV_CURL_LIB_H

#include <stddef.h>

#include <curl/curl.h>

/* The libcurl functions src/live calls, with the prototypes of <curl/curl.h>. */
typedef struct lv_curl_api {
  CURLcode (*global_init)(long flags);
  void (*global_cleanup)(void);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL *curl);
  CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
  void (*easy_cleanup)(CURL *curl);
  const char *(*easy_strerror)(CURLcode code);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
  void (*slist_free_all)(struct curl_slist *list);
} lv_curl_api;

/* Loads libcurl on the first call (thread-safe: one load per process; later calls return
 * the same result without trying again). Returns the table, or NULL with a one-line
 * message in err (no trailing newline, no "triage: " prefix) naming the library tried
 * and the loader's reason. Never prints. */
const lv_curl_api *lv_curl_load(char *err, size_t err_cap);

#endif
