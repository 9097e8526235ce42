/*
 * live/http.c - the one HTTP request primitive live capture needs, over libcurl.
 *
 * Every request is bounded three ways: connect time (LV_CONNECT_TIMEOUT_S), total time
 * (the caller's timeout) and reply size (LV_MAX_REPLY_BYTES). Ctrl-C aborts a request
 * in flight through the progress callback, so a 300 s generate call does not hold the
 * user hostage.
 *
 * libcurl is not linked: it is loaded on the first request (curl_lib.h says why).
 */
#include "live/curl_lib.h"
#include "live/lv_internal.h"
#include "util/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct lv_sink {
  ut_buf body;
  bool too_big;
} lv_sink;

static size_t lv_sink_write(char *ptr, size_t size, size_t nmemb, void *user) {
  lv_sink *s = user;
  size_t n = size * nmemb;
  if (s->too_big || s->body.n + n > LV_MAX_REPLY_BYTES) {
    s->too_big = true;
    return 0; /* makes curl fail with CURLE_WRITE_ERROR */
  }
  ut_buf_addn(&s->body, ptr, n);
  return ut_buf_str(&s->body) ? n : 0;
}

static int lv_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
  (void)dltotal;
  (void)dlnow;
  (void)ultotal;
  (void)ulnow;
  const lv_http *h = user;
  return (!h->ignore_interrupt && lv_interrupted) ? 1 : 0;
}

void lv_reply_free(lv_reply *r) {
  if (!r) return;
  free(r->body);
  r->body = NULL;
  r->len = 0;
}

/* The status and one-line error of a finished exchange. */
static void lv_classify(const lv_curl_api *curl, CURL *c, CURLcode rc, bool too_big,
                        long connect_ms, double timeout_s, lv_reply *reply) {
  long os_errno = 0;
  curl->easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
  curl->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply->code);
  if (rc == CURLE_OK) {
    reply->status = LV_HTTP_OK;
  } else if (too_big) {
    reply->status = LV_HTTP_TOO_BIG;
    snprintf(reply->error, sizeof reply->error, "reply larger than %u bytes",
             (unsigned)LV_MAX_REPLY_BYTES);
  } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
    reply->status = LV_HTTP_INTERRUPTED;
    snprintf(reply->error, sizeof reply->error, "interrupted");
  } else if (rc == CURLE_COULDNT_CONNECT && os_errno == ECONNREFUSED) {
    reply->status = LV_HTTP_REFUSED;
    snprintf(reply->error, sizeof reply->error, "connection refused");
  } else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) {
    reply->status = LV_HTTP_CONNECT;
    snprintf(reply->error, sizeof reply->error, "%s", curl->easy_strerror(rc));
  } else if (rc == CURLE_OPERATION_TIMEDOUT) {
    /* Tell a connect timeout (nothing answered the SYN) from a slow reply. */
    double connect_s = 0;
    curl->easy_getinfo(c, CURLINFO_CONNECT_TIME, &connect_s);
    if (connect_s <= 0) {
      reply->status = LV_HTTP_CONNECT;
      snprintf(reply->error, sizeof reply->error, "no answer within %ld s",
               connect_ms / 1000L > 0 ? connect_ms / 1000L : 1L);
    } else {
      reply->status = LV_HTTP_TIMEOUT;
      snprintf(reply->error, sizeof reply->error, "no reply within %.0f s", timeout_s);
    }
  } else {
    reply->status = LV_HTTP_ERROR;
    snprintf(reply->error, sizeof reply->error, "%s", curl->easy_strerror(rc));
  }
}

lv_http_status lv_http_request(const lv_http *h, const char *method, const char *url,
                               const char *json_body, double timeout_s, lv_reply *reply) {
  memset(reply, 0, sizeof *reply);
  if (!h->ignore_interrupt && lv_interrupted) {
    reply->status = LV_HTTP_INTERRUPTED;
    snprintf(reply->error, sizeof reply->error, "interrupted");
    return reply->status;
  }
  /* Only the unit tests get here without lv_run, which loads libcurl before any request. */
  const lv_curl_api *curl = lv_curl_load(reply->error, sizeof reply->error);
  if (!curl) {
    reply->status = LV_HTTP_ERROR;
    return reply->status;
  }
  CURL *c = curl->easy_init();
  if (!c) {
    reply->status = LV_HTTP_ERROR;
    snprintf(reply->error, sizeof reply->error, "cannot initialise libcurl");
    return reply->status;
  }
  if (timeout_s <= 0 || timeout_s > LV_MAX_STEP_TIMEOUT_S) timeout_s = LV_MAX_STEP_TIMEOUT_S;
  long timeout_ms = (long)(timeout_s * 1000.0);
  if (timeout_ms < 1) timeout_ms = 1;
  long connect_ms = LV_CONNECT_TIMEOUT_S * 1000L;
  if (connect_ms > timeout_ms) connect_ms = timeout_ms;

  lv_sink sink = {0};
  struct curl_slist *hdrs = NULL;
  char auth[1024];
  if (h->api_key && *h->api_key) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", h->api_key);
    hdrs = curl->slist_append(hdrs, auth);
  }
  /* Expect: 100-continue would add a one-second stall to every large prompt. */
  hdrs = curl->slist_append(hdrs, "Expect:");
  if (json_body) hdrs = curl->slist_append(hdrs, "Content-Type: application/json");

  curl->easy_setopt(c, CURLOPT_URL, url);
  curl->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl->easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl->easy_setopt(c, CURLOPT_WRITEFUNCTION, lv_sink_write);
  curl->easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, lv_progress);
  lv_http options = *h; /* the progress callback reads it; curl wants a mutable pointer */
  curl->easy_setopt(c, CURLOPT_XFERINFODATA, &options);
  curl->easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  if (strcmp(method, "POST") == 0) {
    curl->easy_setopt(c, CURLOPT_POST, 1L);
    curl->easy_setopt(c, CURLOPT_POSTFIELDS, json_body ? json_body : "");
    curl->easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)(json_body ? strlen(json_body) : 0));
  } else {
    curl->easy_setopt(c, CURLOPT_HTTPGET, 1L);
  }

  CURLcode rc = curl->easy_perform(c);
  lv_classify(curl, c, rc, sink.too_big, connect_ms, timeout_s, reply);
  if (reply->status == LV_HTTP_OK || reply->status == LV_HTTP_TIMEOUT) {
    reply->body = sink.body.p; /* moved: NULL for an empty body, as before */
    reply->len = sink.body.n;
    sink.body.p = NULL;
  }
  ut_buf_free(&sink.body);
  curl->slist_free_all(hdrs);
  curl->easy_cleanup(c);
  return reply->status;
}
