/* trace/source.c - see source.h. */
#include "trace/source.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#ifdef TRIAGE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define SRC_DEFAULT_CHUNK (1u << 20)
#define SRC_INPUT_BUF (256u * 1024u)
/* Four slots: one being scanned, up to three inflated ahead. More would only add memory:
 * the two stages run at similar speeds. */
#define SRC_RING TR_SOURCE_RING
/* The reading-ahead share a source starts with (of TR_SOURCE_SHARE), and how it moves:
 * a step a chunk towards equal CPU time a chunk on the two threads, held while they are
 * within 1/SRC_SHARE_BAND of each other; each thread's CPU time a chunk is averaged over
 * about SRC_COST_SMOOTH chunks. */
#define SRC_SHARE_START 8u
#define SRC_SHARE_STEP 1u
#define SRC_SHARE_BAND 16u
#define SRC_COST_SMOOTH 4u

void tr_set_error(tr_error *err, int code, bool has_offset, uint64_t offset, const char *fmt, ...) {
  if (!err) return;
  err->code = code;
  err->has_offset = has_offset;
  err->offset = has_offset ? offset : 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

/* Under AddressSanitizer a chunk's buffer is freed when its borrow ends (the next chunk
 * is made into a new one; a memory buffer's chunks are handed out as such copies): a
 * pointer kept into a chunk past tr_source_next's next call then reads freed memory, which
 * ASan reports at once, instead of silently reading a later chunk's bytes from a reused
 * buffer or the caller's (audit of borrowed trace strings, session 16). */
#if defined(__SANITIZE_ADDRESS__)
#define SRC_FREE_EACH_CHUNK true
#else
#define SRC_FREE_EACH_CHUNK false
#endif

typedef struct ring_slot {
  uint8_t *buf;
  tr_block_masks *masks; /* when indexing: the masks of buf */
  size_t len;
  uint64_t comp_end;
  int status; /* 1 data, 0 end, -1 error */
  tr_error err;
} ring_slot;

struct tr_source {
  /* raw input */
  int fd;
  bool own_fd;
  const uint8_t *mem;
  size_t mem_len;
  bool raw_eof;
  uint64_t total;
  uint64_t raw_consumed; /* bytes of raw input consumed so far (plain) */
  uint8_t *inbuf;
  /* the unconsumed part of the input window (raw bytes: compressed for gzip) */
  const uint8_t *in_next;
  size_t in_avail;
  /* gzip state: one of two inflaters (see inflate_step) */
  bool gzip;
  bool use_isal;
  z_stream zs;
  bool zs_init;
#ifdef TRIAGE_HAVE_ISAL
  struct inflate_state *isal;
#endif
  bool in_member;
  const uint8_t *in_base; /* start of the current input window */
  uint64_t in_base_off;   /* its offset in the raw input */
  size_t chunk;
  /* plain-file chunk buffer */
  uint8_t *plain_buf;
  /* block masks (structural.h): the classifier's state, carried from chunk to chunk by
   * whichever thread makes the chunks; the masks of plain chunks; those of the chunk
   * handed out last */
  bool index;
  tr_simd_level level;
  tr_struct_state sst;
  tr_block_masks *plain_masks;
  const tr_block_masks *masks;
  /* consumer side */
  uint64_t consumed;
  bool done;
  /* thread ring */
  bool threaded;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t not_empty, not_full;
  ring_slot slots[SRC_RING];
  size_t head, count;
  bool holding;
  bool stop;
  /* reading ahead (tr_source_ahead_fn): the hook, its share, and what it is chosen from:
   * each thread's CPU time a chunk (ns, smoothed: the reader's under mu) and its clock
   * when it last finished a chunk */
  tr_source_ahead_fn ahead;
  void *ahead_ctx;
  unsigned share;
  bool fixed_share;
  uint64_t rd_cost, in_cost, rd_mark, in_mark;
  /* unthreaded gzip uses slots[0] only; plain input read on the reader's thread, plain_buf */
};

/* ------------------------------------------------------------------ raw input */

/* Refills the inflate input window. Returns 0, or -1 on a read error. */
/* Reads from the file until buf holds cap bytes or the file ends (then raw_eof is set);
 * *have counts what buf already held and grows with each read. */
static int fill_from_fd(tr_source *s, uint8_t *buf, size_t cap, size_t *have, tr_error *err) {
  while (*have < cap) {
    ssize_t r = read(s->fd, buf + *have, cap - *have);
    if (r < 0) {
      if (errno == EINTR) continue;
      tr_set_error(err, TR_ERR_IO, false, 0, "read error: %s", strerror(errno));
      return -1;
    }
    if (r == 0) {
      s->raw_eof = true;
      break;
    }
    *have += (size_t)r;
  }
  return 0;
}

static int raw_fill(tr_source *s, tr_error *err) {
  if (s->raw_eof) return 0;
  uint64_t used = (uint64_t)(s->in_next - s->in_base);
  if (s->mem) {
    s->in_base_off += used;
    s->in_base = s->mem + s->in_base_off;
    size_t left = s->mem_len - (size_t)s->in_base_off;
    /* feed memory in bounded windows so compressed offsets advance like a file's */
    size_t n = left < SRC_INPUT_BUF ? left : SRC_INPUT_BUF;
    s->in_next = s->in_base;
    s->in_avail = n;
    s->raw_eof = (n == left);
    return 0;
  }
  /* keep unconsumed bytes (a member boundary may need two bytes of magic) */
  size_t keep = s->in_avail;
  if (keep) memmove(s->inbuf, s->in_next, keep);
  s->in_base_off += used;
  s->in_base = s->inbuf;
  size_t have = keep;
  if (fill_from_fd(s, s->inbuf, SRC_INPUT_BUF, &have, err) != 0) return -1;
  s->in_next = s->inbuf;
  s->in_avail = have;
  return 0;
}

static uint64_t comp_offset(const tr_source *s) {
  return s->in_base_off + (uint64_t)(s->in_next - s->in_base);
}

/* ------------------------------------------------------------------ inflaters */

/* Why two: ISA-L's igzip inflates 3-4x faster than zlib on x86-64 and streams (unlike
 * libdeflate, which needs the whole file in memory); zlib is everywhere. Both see the
 * same input window and output buffer and report in the same terms, so the code around
 * them (members, padding, truncation, offsets) is shared. */

enum { STEP_ERROR = -1, STEP_MORE = 0, STEP_MEMBER_END = 1 };

/* Starts a new member at the current input position. */
static int member_reset(tr_source *s) {
#ifdef TRIAGE_HAVE_ISAL
  if (s->use_isal) {
    isal_inflate_reset(s->isal);
    s->isal->crc_flag = ISAL_GZIP; /* parse the header, verify CRC-32 and ISIZE */
    return 0;
  }
#endif
  return inflateReset(&s->zs) == Z_OK ? 0 : -1;
}

#ifdef TRIAGE_HAVE_ISAL
static const char *isal_message(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid block";
    case ISAL_INVALID_SYMBOL:
      return "invalid code";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
      return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
      return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "incorrect data check";
    case ISAL_NEED_DICT:
      return "needs a preset dictionary";
    default:
      return "inflate failed";
  }
}

static int isal_step(tr_source *s, uint8_t **out, size_t *out_left, const char **msg) {
  struct inflate_state *st = s->isal;
  st->next_in = (uint8_t *)(uintptr_t)s->in_next;
  st->avail_in = (uint32_t)s->in_avail;
  st->next_out = *out;
  st->avail_out = (uint32_t)*out_left;
  int rc = isal_inflate(st);
  s->in_next = st->next_in;
  s->in_avail = st->avail_in;
  *out = st->next_out;
  *out_left = st->avail_out;
  if (rc < 0) {
    /* point at the byte being decoded, not past ISA-L's read-ahead bit buffer, so the
     * offset does not depend on how far ahead it happened to read */
    size_t ahead = st->read_in_length > 0 ? (size_t)st->read_in_length / 8 : 0;
    size_t back = (size_t)(s->in_next - s->in_base);
    s->in_next -= ahead < back ? ahead : back;
    s->in_avail += ahead < back ? ahead : back;
    *msg = isal_message(rc);
    return STEP_ERROR;
  }
  return st->block_state == ISAL_BLOCK_FINISH ? STEP_MEMBER_END : STEP_MORE;
}
#endif

/* One inflate call over the current input window into out. Advances in_next, *out and
 * *out_left; STEP_MORE when it needs more input or output room. */
static int inflate_step(tr_source *s, uint8_t **out, size_t *out_left, const char **msg) {
#ifdef TRIAGE_HAVE_ISAL
  if (s->use_isal) return isal_step(s, out, out_left, msg);
#endif
  s->zs.next_in = (Bytef *)(uintptr_t)s->in_next;
  s->zs.avail_in = (uInt)s->in_avail;
  s->zs.next_out = *out;
  s->zs.avail_out = (uInt)*out_left;
  int rc = inflate(&s->zs, Z_NO_FLUSH);
  s->in_next = s->zs.next_in;
  s->in_avail = s->zs.avail_in;
  *out = s->zs.next_out;
  *out_left = s->zs.avail_out;
  if (rc == Z_STREAM_END) return STEP_MEMBER_END;
  if (rc == Z_OK || rc == Z_BUF_ERROR) return STEP_MORE; /* BUF_ERROR: no progress possible */
  *msg = s->zs.msg ? s->zs.msg : "inflate failed";
  return STEP_ERROR;
}

/* Between members: zero padding is tolerated (as gzip(1) and Python do), then either
 * the end (returns 0) or the next member's magic (returns 1, member started). */
static int next_member(tr_source *s, tr_error *err) {
  while (s->in_avail > 0 && *s->in_next == 0) {
    s->in_next++;
    s->in_avail--;
    if (s->in_avail == 0 && !s->raw_eof && raw_fill(s, err) != 0) return -1;
  }
  if (s->in_avail == 0) return 0; /* end of input */
  if (s->in_avail < 2 && !s->raw_eof && raw_fill(s, err) != 0) return -1;
  if (s->in_avail < 2 || s->in_next[0] != 0x1f || s->in_next[1] != 0x8b) {
    tr_set_error(err, TR_ERR_GZIP, true, comp_offset(s),
                 "trailing data after gzip member is not gzip");
    return -1;
  }
  if (member_reset(s) != 0) {
    tr_set_error(err, TR_ERR_GZIP, true, comp_offset(s), "cannot restart inflate");
    return -1;
  }
  s->in_member = true;
  return 1;
}

/* Inflates up to cap bytes into out. Returns 1 with data (*len > 0), 0 at the end, -1 on
 * error. */
static int gz_fill(tr_source *s, uint8_t *out, size_t cap, size_t *len, tr_error *err) {
  uint8_t *o = out;
  size_t left = cap;
  while (left > 0) {
    if (s->in_avail == 0 && !s->raw_eof && raw_fill(s, err) != 0) return -1;
    if (!s->in_member) {
      int rc = next_member(s, err);
      if (rc < 0) return -1;
      if (rc == 0) break;
    }
    size_t before_in = s->in_avail, before_out = left;
    const char *msg = NULL;
    int rc = inflate_step(s, &o, &left, &msg);
    if (rc == STEP_ERROR) {
      tr_set_error(err, TR_ERR_GZIP, true, comp_offset(s), "corrupt gzip data: %s", msg);
      return -1;
    }
    if (rc == STEP_MEMBER_END) {
      s->in_member = false;
    } else if (s->in_avail == 0 && s->raw_eof && before_in == 0 && left == before_out) {
      /* no input left and the inflater made no progress on what it buffered */
      tr_set_error(err, TR_ERR_GZIP, true, comp_offset(s),
                   "truncated gzip stream (input ends inside a member)");
      return -1;
    }
  }
  *len = cap - left;
  return *len > 0 ? 1 : 0;
}

/* ------------------------------------------------------------------ thread */

/* Reads the file's next plain chunk into out: cap bytes unless the file ends first, the
 * first window (read by open to see the magic) handed out first. 1 with data (*len > 0), 0
 * at the end, -1 on error. */
static int plain_fill(tr_source *s, uint8_t *out, size_t cap, size_t *len, tr_error *err) {
  size_t have = 0;
  if (s->in_avail) {
    have = s->in_avail < cap ? s->in_avail : cap;
    memcpy(out, s->in_next, have);
    s->in_next += have;
    s->in_avail -= have;
  }
  if (!s->raw_eof && s->in_avail == 0 && fill_from_fd(s, out, cap, &have, err) != 0) return -1;
  *len = have;
  s->raw_consumed += have;
  return have > 0;
}

/* A new buffer of n bytes in place of *buf, freed (SRC_FREE_EACH_CHUNK only); false when
 * out of memory. */
static bool fresh_buffer(uint8_t **buf, size_t n) {
  if (!SRC_FREE_EACH_CHUNK) return true;
  free(*buf);
  *buf = malloc(n);
  return *buf != NULL;
}

/* Makes the slot's next chunk (and its masks): on the second thread when threaded. */
static void fill_slot(tr_source *s, ring_slot *slot) {
  if (!fresh_buffer(&slot->buf, s->chunk)) {
    slot->status = -1;
    tr_set_error(&slot->err, TR_ERR_NOMEM, false, 0, "out of memory");
    return;
  }
  slot->status = s->gzip ? gz_fill(s, slot->buf, s->chunk, &slot->len, &slot->err)
                         : plain_fill(s, slot->buf, s->chunk, &slot->len, &slot->err);
  slot->comp_end = s->gzip ? comp_offset(s) : s->raw_consumed;
  if (slot->status == 1 && slot->masks)
    tr_struct_index_at(s->level, &s->sst, slot->buf, slot->len, slot->masks);
}

/* The calling thread's CPU time, ns (0: unknown). Time blocked on the ring is not in it. */
static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A thread has finished a chunk: its CPU time since *mark into the average *cost. */
static void cost_note(uint64_t *cost, uint64_t *mark) {
  uint64_t now = thread_cpu_ns();
  if (*mark && now > *mark) {
    uint64_t c = now - *mark;
    *cost = *cost ? *cost - *cost / SRC_COST_SMOOTH + c / SRC_COST_SMOOTH : c;
  }
  *mark = now;
}

/* The share of the next chunk's parsing the inflate thread takes: up a step while the
 * reader spends more CPU time a chunk than the inflate thread, down while less. CPU time,
 * not which thread waited for the other: on a loaded machine a thread waits whenever the
 * other is descheduled, and the share that followed the waits fell to its floor (hta15 at
 * load 17: reader 512-594 ms, inflate thread 286-307). rd_cost: the reader's. */
static void share_adjust(tr_source *s, uint64_t rd_cost) {
  uint64_t in = s->in_cost;
  if (s->fixed_share || !rd_cost || !in) return;
  if (rd_cost > in + in / SRC_SHARE_BAND)
    s->share =
        s->share + SRC_SHARE_STEP < TR_SOURCE_SHARE ? s->share + SRC_SHARE_STEP : TR_SOURCE_SHARE;
  else if (rd_cost + rd_cost / SRC_SHARE_BAND < in)
    s->share = s->share > SRC_SHARE_STEP ? s->share - SRC_SHARE_STEP : 0;
}

static void *producer_main(void *arg) {
  tr_source *s = arg;
  size_t tail = 0;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    while (s->count == SRC_RING && !s->stop) pthread_cond_wait(&s->not_full, &s->mu);
    bool stop = s->stop;
    uint64_t rd_cost = s->rd_cost;
    pthread_mutex_unlock(&s->mu);
    if (stop) return NULL;
    ring_slot *slot = &s->slots[tail];
    /* the slot is free: the consumer never touches slots it has not been handed */
    fill_slot(s, slot);
    if (s->ahead && slot->status == 1 && slot->masks) {
      share_adjust(s, rd_cost);
      s->ahead(s->ahead_ctx, (unsigned)tail, slot->buf, slot->len, slot->masks, s->share);
      cost_note(&s->in_cost, &s->in_mark);
    }
    pthread_mutex_lock(&s->mu);
    s->count++;
    pthread_cond_signal(&s->not_empty);
    pthread_mutex_unlock(&s->mu);
    if (slot->status != 1) return NULL;
    tail = (tail + 1) % SRC_RING;
  }
}

/* ------------------------------------------------------------------ open / close */

bool tr_inflate_has_isal(void) {
#ifdef TRIAGE_HAVE_ISAL
  return true;
#else
  return false;
#endif
}

static tr_source *source_new(const tr_source_opts *o) {
  tr_source *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->use_isal = tr_inflate_has_isal() && o->inflater != TR_INFLATE_ZLIB;
  s->fd = -1;
  s->chunk = o->chunk ? o->chunk : SRC_DEFAULT_CHUNK;
  s->index = o->index;
  s->level = o->level;
  s->ahead = o->ahead;
  s->ahead_ctx = o->ahead_ctx;
  s->fixed_share = o->ahead_share != 0;
  s->share = o->ahead_share ? o->ahead_share : SRC_SHARE_START;
  if (s->share > TR_SOURCE_SHARE) s->share = TR_SOURCE_SHARE;
  return s;
}

/* Room for the masks of one chunk. */
static tr_block_masks *masks_new(const tr_source *s) {
  return malloc((s->chunk + TR_BLOCK - 1) / TR_BLOCK * sizeof(tr_block_masks));
}

static int nomem(tr_error *err) {
  tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
  return -1;
}

/* The gzip inflater: ISA-L's or zlib's. */
static int inflater_start(tr_source *s) {
#ifdef TRIAGE_HAVE_ISAL
  if (s->use_isal) {
    s->isal = malloc(sizeof *s->isal);
    if (!s->isal) return -1;
    isal_inflate_init(s->isal);
    s->isal->crc_flag = ISAL_GZIP;
  }
#endif
  if (!s->use_isal) {
    if (inflateInit2(&s->zs, 16 + MAX_WBITS) != Z_OK) return -1;
    s->zs_init = true;
  }
  s->in_member = true;
  return 0;
}

/* Plain input read on the reader's thread: a file's chunk buffer (a buffer's chunks lie
 * in it) and the masks. */
static bool plain_start(tr_source *s) {
  if (!s->mem && !(s->plain_buf = malloc(s->chunk))) return false;
  return !s->index || (s->plain_masks = masks_new(s));
}

/* Starts the source on its first bytes. A file of plain JSON goes through the ring on the
 * second thread as gzip does (read, masks and reading ahead there: the JSON of a plain
 * file was all the reader's thread's work); a buffer's plain chunks are read in place. */
static int source_start(tr_source *s, const uint8_t *first, size_t first_len, bool threaded,
                        tr_error *err) {
  s->gzip = first_len >= 2 && first[0] == 0x1f && first[1] == 0x8b;
  if (!s->gzip && (!threaded || s->mem)) return plain_start(s) ? 0 : nomem(err);
  if (s->gzip && inflater_start(s) != 0) return nomem(err);
  size_t n_slots = threaded ? SRC_RING : 1;
  for (size_t i = 0; i < n_slots; i++) {
    s->slots[i].buf = malloc(s->chunk);
    if (!s->slots[i].buf) return nomem(err);
    if (s->index && !(s->slots[i].masks = masks_new(s))) return nomem(err);
  }
  if (threaded) {
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->not_empty, NULL);
    pthread_cond_init(&s->not_full, NULL);
    /* without a second thread we still work, only slower */
    s->threaded = pthread_create(&s->thread, NULL, producer_main, s) == 0;
    if (!s->threaded) {
      pthread_mutex_destroy(&s->mu);
      pthread_cond_destroy(&s->not_empty);
      pthread_cond_destroy(&s->not_full);
      if (!s->gzip && !plain_start(s)) return nomem(err);
    }
  }
  return 0;
}

tr_source *tr_source_open_buffer(const void *buf, size_t len, const tr_source_opts *o,
                                 tr_error *err) {
  tr_source *s = source_new(o);
  if (!s) {
    tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
    return NULL;
  }
  s->mem = buf ? buf : (const uint8_t *)"";
  s->mem_len = buf ? len : 0;
  s->total = s->mem_len;
  s->in_base = s->mem;
  s->in_next = s->mem;
  s->in_avail = 0;
  if (source_start(s, s->mem, s->mem_len, o->threaded, err) != 0) {
    tr_source_close(s);
    return NULL;
  }
  return s;
}

tr_source *tr_source_open_path(const char *path, const tr_source_opts *o, tr_error *err) {
  tr_source *s = source_new(o);
  if (!s) {
    tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
    return NULL;
  }
  if (strcmp(path, "-") == 0) {
    s->fd = 0;
  } else {
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) {
      tr_set_error(err, TR_ERR_IO, false, 0, "%s",
                   errno == ENOENT ? "no such file or directory" : strerror(errno));
      free(s);
      return NULL;
    }
    s->own_fd = true;
  }
  struct stat st;
  if (fstat(s->fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      tr_set_error(err, TR_ERR_IO, false, 0, "is a directory");
      tr_source_close(s);
      return NULL;
    }
    if (S_ISREG(st.st_mode)) s->total = (uint64_t)st.st_size;
  }
  s->inbuf = malloc(SRC_INPUT_BUF);
  if (!s->inbuf) {
    tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
    tr_source_close(s);
    return NULL;
  }
  s->in_base = s->inbuf;
  s->in_next = s->inbuf;
  s->in_avail = 0;
  /* read the first window to see the magic; it is then fed to inflate or the scanner */
  if (raw_fill(s, err) != 0) {
    tr_source_close(s);
    return NULL;
  }
  if (source_start(s, s->inbuf, s->in_avail, o->threaded, err) != 0) {
    tr_source_close(s);
    return NULL;
  }
  return s;
}

void tr_source_close(tr_source *s) {
  if (!s) return;
  if (s->threaded) {
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->not_full);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->not_empty);
    pthread_cond_destroy(&s->not_full);
  }
  if (s->zs_init) inflateEnd(&s->zs);
#ifdef TRIAGE_HAVE_ISAL
  free(s->isal);
#endif
  for (size_t i = 0; i < SRC_RING; i++) {
    free(s->slots[i].buf);
    free(s->slots[i].masks);
  }
  free(s->plain_buf);
  free(s->plain_masks);
  free(s->inbuf);
  if (s->own_fd && s->fd >= 0) close(s->fd);
  free(s);
}

/* ------------------------------------------------------------------ consumer */

static int plain_next(tr_source *s, const uint8_t **data, size_t *len, tr_error *err) {
  if (s->mem) {
    size_t left = s->mem_len - (size_t)s->consumed;
    if (left == 0) return 0;
    size_t n = left < s->chunk ? left : s->chunk;
    *data = s->mem + s->consumed;
    if (SRC_FREE_EACH_CHUNK) { /* a copy freed at the next chunk, as a file's chunks are */
      if (!fresh_buffer(&s->plain_buf, n)) return nomem(err);
      memcpy(s->plain_buf, *data, n);
      *data = s->plain_buf;
    }
    *len = n;
    s->consumed += n;
    return 1;
  }
  if (!fresh_buffer(&s->plain_buf, s->chunk)) return nomem(err);
  int rc = plain_fill(s, s->plain_buf, s->chunk, len, err);
  if (rc != 1) return rc;
  *data = s->plain_buf;
  s->consumed = s->raw_consumed;
  return 1;
}

int tr_source_next(tr_source *s, const uint8_t **data, size_t *len, tr_error *err) {
  *data = NULL;
  *len = 0;
  s->masks = NULL;
  if (s->done) return 0;
  if (!s->gzip && !s->threaded) {
    int rc = plain_next(s, data, len, err);
    if (rc <= 0) s->done = true;
    if (rc == 1 && s->plain_masks) {
      tr_struct_index_at(s->level, &s->sst, *data, *len, s->plain_masks);
      s->masks = s->plain_masks;
    }
    return rc;
  }
  ring_slot *slot;
  if (!s->threaded) {
    slot = &s->slots[0];
    fill_slot(s, slot);
  } else {
    uint64_t rd_cost = s->rd_cost, rd_mark = s->rd_mark;
    if (s->ahead) cost_note(&rd_cost, &rd_mark); /* the reader's chunk before this one */
    pthread_mutex_lock(&s->mu);
    s->rd_cost = rd_cost;
    s->rd_mark = rd_mark;
    if (s->holding) {
      s->holding = false;
      s->head = (s->head + 1) % SRC_RING;
      s->count--;
      pthread_cond_signal(&s->not_full);
    }
    while (s->count == 0) pthread_cond_wait(&s->not_empty, &s->mu);
    slot = &s->slots[s->head];
    s->holding = true;
    pthread_mutex_unlock(&s->mu);
  }
  if (slot->status != 1) {
    s->done = true;
    if (slot->status < 0) {
      if (err) *err = slot->err;
      return -1;
    }
    return 0;
  }
  s->consumed = slot->comp_end;
  *data = slot->buf;
  *len = slot->len;
  s->masks = slot->masks;
  return 1;
}

const tr_block_masks *tr_source_masks(const tr_source *s) { return s->masks; }

int tr_source_slot(const tr_source *s) { return s->threaded && s->holding ? (int)s->head : -1; }

uint64_t tr_source_consumed(const tr_source *s) { return s->consumed; }
uint64_t tr_source_total(const tr_source *s) { return s->total; }
bool tr_source_is_gzip(const tr_source *s) { return s->gzip; }
