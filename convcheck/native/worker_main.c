/*
 * worker_main.c: the native judge's worker as a C program.
 *
 * It does what an op's Python worker (convolution's ops/convolution/native/worker.py)
 * does (load a library of an op's ABI, judge cases with its check and run entries, fill
 * and read the run's tensors), for a fraction of the cost of a Python process: forking this program and
 * letting the copy die of a sanitizer report costs a millisecond or two, where a forked
 * Python worker costs several. It names no op's parameter: a request is the op's call
 * schema in order, neutral (convcheck_unit.h), which the op's call unit, built in with
 * it, turns into the op's call. Built per op, with the library's own sanitizer flags
 * (convcheck/native/build.py, build_worker), started by convcheck/sandbox/ as a
 * WorkerSpec "program":
 *
 *     worker_main REQUEST_FD RESULT_FD PARENT_PID MODE MEMORY_MB MARKER LIBRARY WHAT
 *                 MAX_TENSOR_ELEMENTS MAX_OUT_ELEMENTS MAX_WORK
 *
 * The protocol (message kinds, modes, limits) is convcheck/sandbox/protocol.py's, included
 * as worker_protocol.h, which build_worker generates from it: its CONVCHECK_ names are
 * that module's. MODE CONVCHECK_MODE_SERVE: a worker. Requests come on REQUEST_FD as
 * records (a uint32 length, then that many bytes), results go to RESULT_FD as records:
 * STARTED once loaded, or START_FAILED and why; then one RESULT and the answer (or ERROR,
 * a site and a report: the library returned a non-zero status) per request, written as
 * soon as it is done. Every number is in the machine's byte order: both ends run on one
 * machine. The layouts are read in read_request and written in the answer functions;
 * convcheck/native/wire.py is the parent's side, and names the answers' verdicts and the
 * arguments' kinds.
 *
 * MODE CONVCHECK_MODE_FORK_SERVER: loads the library once, then forks a worker for each
 * message on REQUEST_FD (a Unix socket; each message carries three descriptors: the new
 * worker's request pipe, result pipe and output file), answering lines, FORKED and the
 * pid or FORK_REFUSED and why, on RESULT_FD, as convcheck/_worker_main.py's server does.
 * A worker is forked with CLONE_PARENT: it is the parent's own child, reaped and killed
 * by it.
 *
 * MEMORY_MB: CONVCHECK_NO_LIMIT or an address-space limit (a plain build; a sanitized
 * one's limits are in ASAN_OPTIONS). MARKER: the environment variable that tells a
 * worker's descendants apart; a forked worker puts its pid at its end (see rename_marker).
 */
#define _GNU_SOURCE /* clone flags, F_DUPFD_CLOEXEC, getrandom */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "convcheck_unit.h"
#include "worker_protocol.h" /* generated: see build_worker */
#include "worker_unit.h"     /* generated: the op's entry names and ABI version */

enum { EMPTY_BLOCK = 16 }; /* see allocate_block */
enum { SCAN_BYTES = 2048 }; /* of the thread descriptor, where glibc keeps the thread id */

static struct {
    int64_t max_tensor_elements, max_out_elements, max_work;
} lib;
static void *check_entry, *run_entry; /* the library's, as dlsym found them */

/* ---- growable byte buffers -------------------------------------------------------- */

typedef struct {
    unsigned char *data;
    size_t len, cap;
} buffer;

static void die(const char *what) {
    perror(what);
    _exit(1);
}

/* Room for `more` bytes. Never near SIZE_MAX: requests are bounded by CONVCHECK_REQUEST_LIMIT,
 * answers by RunLimits' max_out_elements. */
static void reserve(buffer *b, size_t more) {
    if (b->cap - b->len >= more) {
        return;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < more) {
        cap *= 2;
    }
    unsigned char *grown = realloc(b->data, cap);
    if (grown == NULL) {
        die("convcheck worker: realloc");
    }
    b->data = grown;
    b->cap = cap;
}

static void put(buffer *b, const void *bytes, size_t n) {
    reserve(b, n);
    if (n) {
        memcpy(b->data + b->len, bytes, n);
    }
    b->len += n;
}

static void put_u8(buffer *b, uint8_t v) { put(b, &v, 1); }
static void put_u32(buffer *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(buffer *b, int32_t v) { put(b, &v, 4); }

static void put_string(buffer *b, const char *s, size_t n) {
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}

static void put_text(buffer *b, const char *s) { put_string(b, s, strlen(s)); }

static void write_all(int fd, const unsigned char *data, size_t n) {
    while (n) {
        ssize_t done = write(fd, data, n);
        if (done < 0 && errno == EINTR) {
            continue;
        }
        if (done <= 0) {
            _exit(1); /* the parent is gone: nobody to answer */
        }
        data += done;
        n -= (size_t)done;
    }
}

/* A record: its length, then `b`'s bytes (b->data[0] is the tag). */
static void send_record(int fd, buffer *b) {
    uint32_t n = (uint32_t)b->len;
    unsigned char head[4];
    memcpy(head, &n, 4);
    struct iovec parts[2] = {{head, 4}, {b->data, b->len}};
    ssize_t done = writev(fd, parts, 2);
    if (done == (ssize_t)(4 + b->len)) {
        return;
    }
    /* A short write (a full pipe): the rest in order, without writev's bookkeeping. */
    size_t sent = done < 0 ? 0 : (size_t)done;
    if (sent < 4) {
        write_all(fd, head + sent, 4 - sent);
        sent = 4;
    }
    write_all(fd, b->data + (sent - 4), b->len - (sent - 4));
}

/* ---- the request -------------------------------------------------------------------- */

typedef struct {
    const unsigned char *at, *end;
    int bad; /* read past the end: the request is malformed */
} reader;

static void take(reader *r, void *out, size_t n) {
    if (r->bad || (size_t)(r->end - r->at) < n) {
        r->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->at, n);
    r->at += n;
}

static uint8_t take_u8(reader *r) {
    uint8_t v;
    take(r, &v, 1);
    return v;
}

static int32_t take_i32(reader *r) {
    int32_t v;
    take(r, &v, 4);
    return v;
}

static int64_t take_i64(reader *r) {
    int64_t v;
    take(r, &v, 8);
    return v;
}

/* One int64 list of the call. Like the Python worker's arrays, its storage only grows
 * (to at least 4 entries) and keeps what earlier requests left past the current length:
 * a kernel that reads past a list's length reads what it would have read there. */
typedef struct {
    int64_t *data;
    int64_t cap;
} list_storage;

static list_storage lists[CONVCHECK_UNIT_MAX_ARGS]; /* by the argument's place */

static const int64_t *take_list(reader *r, list_storage *s, int64_t *len) {
    int64_t n = take_i64(r);
    /* Bounded by what is left of the request, so the allocation below is too. */
    if (r->bad || n < 0 || n > (int64_t)((size_t)(r->end - r->at) / 8)) {
        r->bad = 1;
        *len = 0;
        return s->data;
    }
    if (s->data == NULL || s->cap < n) {
        int64_t cap = n > 4 ? n : 4;
        free(s->data);
        s->data = calloc((size_t)cap, sizeof(int64_t));
        if (s->data == NULL) {
            die("convcheck worker: calloc");
        }
        s->cap = cap;
    }
    take(r, s->data, (size_t)n * 8);
    *len = n;
    return s->data;
}

/* flags (u8: PRESENT, OUTPUT); if present: rank, dtype, offset (u8 each), sizes and dim
 * order (int32 each). An absent tensor keeps what the last request put in its place. */
static void take_tensor(reader *r, convcheck_unit_arg *a) {
    uint8_t flags = take_u8(r);
    convcheck_unit_tensor *t = &a->tensor;
    a->present = (flags & CONVCHECK_TENSOR_PRESENT) != 0;
    a->output = (flags & CONVCHECK_TENSOR_OUTPUT) != 0;
    t->data = NULL;
    if (!a->present) {
        t->rank = 0;
        return;
    }
    int32_t rank = take_u8(r);
    if (rank > CONVCHECK_UNIT_MAX_RANK) { /* the parent sends valid cases: ranks up to 16 */
        r->bad = 1;
        return;
    }
    t->rank = rank;
    t->dtype = take_u8(r);
    a->offset = take_u8(r);
    for (int32_t d = 0; d < rank; d++) {
        t->sizes[d] = take_i32(r);
    }
    for (int32_t d = 0; d < rank; d++) {
        t->dim_order[d] = take_i32(r);
    }
}

/* The arguments and the result, reused from request to request as the Python worker
 * reuses its structs. */
static convcheck_unit_args args;
static convcheck_unit_result result;

/* mode (0 check, 1 run), the argument count (u8), then each argument: its kind (u8) and
 * its value (a tensor: take_tensor; an int list: a count and that many int64; an int: an
 * int64; an optional int: present (u8) and an int64 if so; a bool: a u8). NULL, or what
 * is wrong with the request. */
static const char *read_request(reader *r, int *run) {
    uint8_t mode = take_u8(r);
    if (mode > 1) {
        return "mode: expected 0 (check) or 1 (run)";
    }
    *run = mode == 1;
    int32_t count = take_u8(r);
    if (count > CONVCHECK_UNIT_MAX_ARGS) {
        return "more arguments than the C worker holds";
    }
    args.count = count;
    for (int32_t i = 0; i < count && !r->bad; i++) {
        convcheck_unit_arg *a = &args.arg[i];
        a->kind = take_u8(r);
        a->present = 1;
        a->output = 0;
        switch (a->kind) {
        case CONVCHECK_ARG_TENSOR: take_tensor(r, a); break;
        case CONVCHECK_ARG_INT_LIST: a->list = take_list(r, &lists[i], &a->list_len); break;
        case CONVCHECK_ARG_INT: a->value = take_i64(r); break;
        case CONVCHECK_ARG_OPTIONAL_INT:
            a->present = take_u8(r);
            a->value = a->present ? take_i64(r) : 0;
            break;
        case CONVCHECK_ARG_BOOL: a->value = take_u8(r); break;
        default: return "an argument of an unknown kind";
        }
    }
    if (r->bad || r->at != r->end) {
        return "a malformed request (a rank above 16, or not the bytes of one call)";
    }
    return NULL;
}

/* ---- answers ------------------------------------------------------------------------ */

static buffer answer;

static void begin_answer(int verdict) {
    answer.len = 0;
    put_u8(&answer, CONVCHECK_RESULT);
    put_u8(&answer, (uint8_t)verdict);
}

static void tool_error(const char *format, ...) {
    char detail[300]; /* the Python worker's detail is cut at 300 characters too */
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    begin_answer(CONVCHECK_VERDICT_TOOL_ERROR);
    put_text(&answer, detail);
}

/* abi.violation: the result's fields outside the ABI, checked before any is used. */
static int answer_violation(void) {
    char detail[96], field[64];
    field[0] = 0;
    if (result.accepted != 0 && result.accepted != 1) {
        snprintf(field, sizeof field, "accepted");
        snprintf(detail, sizeof detail, "accepted is %" PRId32 ", not 0 or 1", result.accepted);
    } else if (!result.accepted) {
        if (memchr(result.check, 0, sizeof result.check) == NULL) {
            snprintf(field, sizeof field, "check");
            snprintf(detail, sizeof detail, "the check id is not NUL-terminated within %d bytes",
                     CONVCHECK_UNIT_CHECK_LEN);
        } else if (result.check[0] == 0) {
            snprintf(field, sizeof field, "check");
            snprintf(detail, sizeof detail, "rejected without a check id");
        }
    } else {
        for (int32_t k = 0; k < result.outputs && !field[0]; k++) { /* the unit's count */
            int32_t rank = result.rank[k];
            if (rank < 0 || rank > CONVCHECK_UNIT_MAX_RANK) {
                snprintf(field, sizeof field, "%s_rank", result.name[k]);
                snprintf(detail, sizeof detail, "%s is %" PRId32 ", not in 0..%d", field, rank,
                         CONVCHECK_UNIT_MAX_RANK);
                break;
            }
            for (int32_t i = 0; i < rank; i++) { /* rank checked above */
                if (result.sizes[k][i] < 0) {
                    snprintf(field, sizeof field, "%s_sizes", result.name[k]);
                    snprintf(detail, sizeof detail, "%s[%" PRId32 "] is %" PRId32 ", negative",
                             field, i, result.sizes[k][i]);
                    break;
                }
            }
        }
    }
    if (field[0] == 0) {
        return 0;
    }
    begin_answer(CONVCHECK_VERDICT_ABI_VIOLATION);
    put_text(&answer, field);
    put_text(&answer, detail);
    return 1;
}

/* The answer to a result within the ABI: accept (ran or not) or reject. An accepted
 * answer gives every output's rank and sizes, and ends with its ran flag, which run_call
 * may set and follow with values. */
static void answer_result(void) {
    if (answer_violation()) {
        return;
    }
    if (!result.accepted) {
        begin_answer(CONVCHECK_VERDICT_REJECT);
        put_text(&answer, result.check); /* NUL-terminated: answer_violation checked */
        return;
    }
    begin_answer(CONVCHECK_VERDICT_ACCEPT);
    put_u8(&answer, (uint8_t)result.outputs);
    for (int32_t k = 0; k < result.outputs; k++) {
        put_u8(&answer, (uint8_t)result.rank[k]);
        for (int32_t i = 0; i < result.rank[k]; i++) { /* 0..16, checked */
            put_i32(&answer, result.sizes[k][i]);
        }
    }
    put_u8(&answer, 0); /* ran */
}

/* The library returned a non-zero status: reported as the Python worker's exception is
 * (a "python-exception" crash whose site names the status), and the worker goes on. */
static void answer_status(const char *entry, int32_t status) {
    char site[160];
    size_t check_len = strnlen(result.check, sizeof result.check);
    snprintf(site, sizeof site, "_Status: %s returned %" PRId32 " (%.*s)", entry, status,
             (int)check_len, result.check);
    answer.len = 0;
    put_u8(&answer, CONVCHECK_ERROR);
    put_text(&answer, site);
    /* The report: what this request printed, then the status. */
    off_t end = lseek(2, 0, SEEK_CUR);
    off_t start = end > CONVCHECK_REPORT_LIMIT ? end - CONVCHECK_REPORT_LIMIT : 0;
    char printed[CONVCHECK_REPORT_LIMIT];
    ssize_t got = end > 0 ? pread(2, printed, (size_t)(end - start), start) : 0;
    buffer report = {0};
    put(&report, printed, got > 0 ? (size_t)got : 0);
    put(&report, site, strlen(site));
    put(&report, "\n", 1);
    put_string(&answer, (const char *)report.data, report.len);
    free(report.data);
}

void convcheck_unit_one_output(convcheck_unit_result *to, int32_t accepted, const char *check,
                               const char *name, int32_t rank, const int32_t *sizes) {
    to->accepted = accepted;
    memcpy(to->check, check, sizeof to->check);
    to->outputs = 1;
    to->name[0] = name;
    to->rank[0] = rank;
    memcpy(to->sizes[0], sizes, sizeof to->sizes[0]);
}

/* ---- run: limits, blocks, values ---------------------------------------------------- */

/* Products and sums of sizes, saturated: only compared with limits far below the cap. */
uint64_t convcheck_sat_mul(uint64_t a, uint64_t b) {
    if (a != 0 && b > UINT64_MAX / a) {
        return UINT64_MAX;
    }
    return a * b;
}

uint64_t convcheck_sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint64_t convcheck_numel(const int32_t *sizes, int32_t from, int32_t rank) {
    uint64_t n = 1;
    for (int32_t d = from; d < rank; d++) { /* rank <= 16: checked when read */
        n = convcheck_sat_mul(n, (uint64_t)sizes[d]);
    }
    return n;
}

/* worker.py's _small_enough, with the same limits (RunLimits), and the op's estimate of
 * the work (its unit's, worker.py's _work). Returns -1 (after a tool-error answer) where
 * the Python worker's estimate would fail. */
static int small_enough(void) {
    uint64_t limit = (uint64_t)lib.max_tensor_elements, out_numel = 0;
    for (int32_t i = 0; i < args.count; i++) {
        const convcheck_unit_arg *a = &args.arg[i];
        if (a->kind == CONVCHECK_ARG_TENSOR && a->present && !a->output &&
            convcheck_numel(a->tensor.sizes, 0, a->tensor.rank) > limit) {
            return 0;
        }
    }
    for (int32_t k = 0; k < result.outputs; k++) {
        uint64_t numel = convcheck_numel(result.sizes[k], 0, result.rank[k]);
        if (numel > limit) {
            return 0;
        }
        out_numel = convcheck_sat_add(out_numel, numel);
    }
    if (out_numel > (uint64_t)lib.max_out_elements) {
        return 0;
    }
    uint64_t work;
    char error[160];
    if (convcheck_unit_work(&args, &result, &work, error, sizeof error) != 0) {
        tool_error("%s", error);
        return -1;
    }
    return work <= (uint64_t)lib.max_work;
}

/* By dtype code (wire.py's DTYPE_CODES, ExecuTorch's ScalarType order without gaps). */
static const size_t ELEMENT_SIZE[CONVCHECK_DTYPE_COUNT] = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2};

/* convcheck.values.logical_values: element i (row-major) of `role`'s tensor. */
static int small_value(uint64_t i, int64_t offset, int32_t dtype) {
    int raw = (int)((i * 7 + (uint64_t)offset) % 11);
    if (dtype == CONVCHECK_DTYPE_BOOL) {
        return raw % 2;
    }
    return dtype == CONVCHECK_DTYPE_UINT8 ? raw : raw - 5;
}

static uint16_t half_bits(int v) {
    /* An integer of magnitude below 2048 is exact in float16. */
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v);
    if (a == 0) {
        return sign;
    }
    int e = 0;
    while ((a >> (e + 1)) != 0) {
        e++;
    }
    unsigned mantissa = (a << (10 - e)) & 0x3ff;
    return (uint16_t)(sign | (unsigned)(e + 15) << 10 | mantissa);
}

static uint16_t bfloat16_bits(float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return (uint16_t)((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16); /* round to nearest even */
}

static void store(unsigned char *at, int32_t dtype, int v) {
    int8_t i8 = (int8_t)v;
    uint8_t u8 = (uint8_t)v;
    int16_t i16 = (int16_t)v;
    int32_t i32 = v;
    int64_t i64 = v;
    uint16_t u16;
    float f32 = (float)v;
    double f64 = v;
    switch (dtype) {
    case CONVCHECK_DTYPE_UINT8:
    case CONVCHECK_DTYPE_BOOL: memcpy(at, &u8, 1); break;
    case CONVCHECK_DTYPE_INT8: memcpy(at, &i8, 1); break;
    case CONVCHECK_DTYPE_INT16: memcpy(at, &i16, 2); break;
    case CONVCHECK_DTYPE_INT32: memcpy(at, &i32, 4); break;
    case CONVCHECK_DTYPE_INT64: memcpy(at, &i64, 8); break;
    case CONVCHECK_DTYPE_FLOAT16: u16 = half_bits(v); memcpy(at, &u16, 2); break;
    case CONVCHECK_DTYPE_FLOAT32: memcpy(at, &f32, 4); break;
    case CONVCHECK_DTYPE_FLOAT64: memcpy(at, &f64, 8); break;
    case CONVCHECK_DTYPE_BFLOAT16:
    default: u16 = bfloat16_bits(f32); memcpy(at, &u16, 2); break;
    }
}

static double half_value(uint16_t h) {
    int exponent = (h >> 10) & 0x1f;
    double mantissa = h & 0x3ff;
    double magnitude;
    if (exponent == 0) {
        magnitude = ldexp(mantissa, -24); /* subnormal */
    } else if (exponent == 31) {
        magnitude = mantissa == 0 ? HUGE_VAL : NAN;
    } else {
        magnitude = ldexp(mantissa + 1024, exponent - 25);
    }
    return h & 0x8000 ? -magnitude : magnitude;
}

static double load(const unsigned char *at, int32_t dtype) {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint16_t u16;
    uint32_t u32;
    float f32;
    double f64;
    switch (dtype) {
    case CONVCHECK_DTYPE_UINT8: memcpy(&u8, at, 1); return u8;
    case CONVCHECK_DTYPE_BOOL: memcpy(&u8, at, 1); return u8 != 0;
    case CONVCHECK_DTYPE_INT8: memcpy(&i8, at, 1); return i8;
    case CONVCHECK_DTYPE_INT16: memcpy(&i16, at, 2); return i16;
    case CONVCHECK_DTYPE_INT32: memcpy(&i32, at, 4); return i32;
    case CONVCHECK_DTYPE_INT64: memcpy(&i64, at, 8); return (double)i64;
    case CONVCHECK_DTYPE_FLOAT16: memcpy(&u16, at, 2); return half_value(u16);
    case CONVCHECK_DTYPE_FLOAT32: memcpy(&f32, at, 4); return f32;
    case CONVCHECK_DTYPE_FLOAT64: memcpy(&f64, at, 8); return f64;
    default: memcpy(&u16, at, 2); u32 = (uint32_t)u16 << 16; memcpy(&f32, &u32, 4); return f32;
    }
}

/* The element strides of a tensor laid out by `order` (outermost first); 0 if `order` is
 * not a permutation of 0..rank-1. */
static int layout(const int32_t *sizes, const int32_t *order, int32_t rank, uint64_t *strides) {
    int seen[CONVCHECK_UNIT_MAX_RANK] = {0};
    uint64_t step = 1;
    for (int32_t k = rank - 1; k >= 0; k--) { /* rank <= 16: checked when read */
        int32_t d = order[k];
        if (d < 0 || d >= rank || seen[d]) {
            return 0;
        }
        seen[d] = 1;
        strides[d] = step;
        /* Below max_tensor_elements (checked before), or wrapping past a 0 size: then no
         * element is visited. */
        step *= (uint64_t)sizes[d];
    }
    return 1;
}

/* Calls visit(element offset, logical index) for each element in logical (row-major)
 * order. */
typedef struct {
    int32_t rank;
    const int32_t *sizes;
    uint64_t strides[CONVCHECK_UNIT_MAX_RANK];
    uint64_t numel;
} walk;

static int start_walk(walk *w, const int32_t *sizes, const int32_t *order, int32_t rank) {
    w->rank = rank;
    w->sizes = sizes;
    w->numel = convcheck_numel(sizes, 0, rank);
    return layout(sizes, order, rank, w->strides);
}

/* The physical offset of each logical element, in logical order, into `offsets`. */
static void offsets_of(const walk *w, uint64_t *offsets) {
    int32_t index[CONVCHECK_UNIT_MAX_RANK] = {0};
    uint64_t at = 0;
    for (uint64_t i = 0; i < w->numel; i++) {
        offsets[i] = at;
        for (int32_t d = w->rank - 1; d >= 0; d--) { /* an odometer over the sizes */
            if (++index[d] < w->sizes[d]) {
                at += w->strides[d];
                break;
            }
            at -= w->strides[d] * (uint64_t)(index[d] - 1);
            index[d] = 0;
        }
    }
}

/* A block of exactly nbytes from malloc (ASan's, in a sanitized build, which then reports
 * a read one past its end). An empty tensor gets the end of a 16-byte block: ASan serves
 * malloc(0) as one addressable byte, while any read at a block's end is reported; 16
 * keeps that end aligned for every dtype. */
static void *allocate_block(void **blocks, int *count, size_t nbytes) {
    unsigned char *block = malloc(nbytes ? nbytes : EMPTY_BLOCK);
    if (block == NULL) {
        return NULL;
    }
    blocks[(*count)++] = block;
    return nbytes ? block : block + EMPTY_BLOCK;
}

static buffer scratch; /* offsets of a tensor's elements */

static uint64_t *offsets_buffer(uint64_t numel) {
    scratch.len = 0;
    reserve(&scratch, (size_t)(numel ? numel : 1) * sizeof(uint64_t));
    return (uint64_t *)scratch.data;
}

/* A tensor's block, filled by convcheck.values in its dim order; 0 (after a tool-error
 * answer) if it cannot be. */
static int filled_block(convcheck_unit_arg *a, int32_t place, void **blocks, int *count) {
    convcheck_unit_tensor *t = &a->tensor;
    walk w;
    if (t->dtype < 0 || t->dtype >= CONVCHECK_DTYPE_COUNT) {
        tool_error("KeyError: argument %" PRId32 " dtype %" PRId32, place, t->dtype);
        return 0;
    }
    if (!start_walk(&w, t->sizes, t->dim_order, t->rank)) {
        tool_error("ValueError: argument %" PRId32 "'s dim_order is not a permutation of its dims",
                   place);
        return 0;
    }
    size_t elsize = ELEMENT_SIZE[t->dtype]; /* a dtype code: checked above */
    unsigned char *block = allocate_block(blocks, count, (size_t)w.numel * elsize);
    if (block == NULL) {
        tool_error("MemoryError: malloc(%zu) failed", (size_t)w.numel * elsize);
        return 0;
    }
    uint64_t *offsets = offsets_buffer(w.numel);
    offsets_of(&w, offsets);
    for (uint64_t i = 0; i < w.numel; i++) {
        store(block + offsets[i] * elsize, t->dtype, small_value(i, a->offset, t->dtype));
    }
    t->data = block;
    return 1;
}

/* An output's block: zeros, `sizes` as the check entry resized it. */
static int empty_block(convcheck_unit_arg *a, const int32_t *sizes, int32_t rank, void **blocks,
                       int *count) {
    if (a->tensor.dtype < 0 || a->tensor.dtype >= CONVCHECK_DTYPE_COUNT) {
        tool_error("KeyError: an output's dtype %" PRId32, a->tensor.dtype);
        return 0;
    }
    size_t nbytes = (size_t)convcheck_numel(sizes, 0, rank) * ELEMENT_SIZE[a->tensor.dtype];
    unsigned char *block = allocate_block(blocks, count, nbytes);
    if (block == NULL) {
        tool_error("MemoryError: malloc(%zu) failed", nbytes);
        return 0;
    }
    memset(block, 0, nbytes);
    a->tensor.data = block;
    return 1;
}

/* Each output's values, read by its declared dim order with the sizes it was resized to,
 * in logical order after the answer's ran flag; 0 if an output was resized to another
 * rank (its values unread), or (after a tool-error answer) its dim order does not fit. */
static int answer_values(convcheck_unit_arg **outputs) {
    walk walks[CONVCHECK_UNIT_MAX_OUTPUTS];
    for (int32_t k = 0; k < result.outputs; k++) {
        const convcheck_unit_tensor *t = &outputs[k]->tensor;
        /* An output resized to another rank than declared left no declared order to read
           it by: its sizes already tell the judges, its values stay unread. */
        if (t->rank != result.rank[k]) {
            return 0;
        }
        if (!start_walk(&walks[k], result.sizes[k], t->dim_order, t->rank)) {
            tool_error("ValueError: output %" PRId32 "'s dim_order does not fit its %" PRId32
                       " dims",
                       k, result.rank[k]);
            return 0;
        }
    }
    answer.data[answer.len - 1] = 1; /* ran */
    for (int32_t k = 0; k < result.outputs; k++) {
        const convcheck_unit_tensor *t = &outputs[k]->tensor;
        size_t elsize = ELEMENT_SIZE[t->dtype]; /* checked by empty_block */
        put_u32(&answer, (uint32_t)walks[k].numel);
        uint64_t *offsets = offsets_buffer(walks[k].numel);
        offsets_of(&walks[k], offsets);
        reserve(&answer, (size_t)walks[k].numel * 8);
        for (uint64_t i = 0; i < walks[k].numel; i++) {
            double v = load((const unsigned char *)t->data + offsets[i] * elsize, t->dtype);
            put(&answer, &v, 8);
        }
    }
    return 1;
}

/* worker.py's _run: the tensors filled, the run entry called, the outputs read in logical
 * order; the answer written. `checked`: the check entry's result, which the run must
 * repeat for its values to be read. */
static void run_call(const convcheck_unit_result *checked) {
    void *blocks[CONVCHECK_UNIT_MAX_ARGS];
    int count = 0;
    convcheck_unit_arg *outputs[CONVCHECK_UNIT_MAX_OUTPUTS];
    int32_t found = 0;
    for (int32_t i = 0; i < args.count; i++) {
        convcheck_unit_arg *a = &args.arg[i];
        if (a->kind != CONVCHECK_ARG_TENSOR || !a->present) {
            continue;
        }
        if (!a->output) {
            if (!filled_block(a, i, blocks, &count)) {
                goto done;
            }
        } else if (found >= checked->outputs || found >= CONVCHECK_UNIT_MAX_OUTPUTS) {
            tool_error("ValueError: more output tensors than the check's result has");
            goto done;
        } else {
            if (!empty_block(a, checked->sizes[found], checked->rank[found], blocks, &count)) {
                goto done;
            }
            outputs[found++] = a;
        }
    }
    int32_t status = convcheck_unit_call(run_entry, &args, &result);
    if (status != 0) {
        answer_status(CONVCHECK_UNIT_RUN, status);
        goto done;
    }
    answer_result();
    if (answer.data[1] != CONVCHECK_VERDICT_ACCEPT || result.outputs != found) {
        goto done;
    }
    for (int32_t k = 0; k < found; k++) {
        if (result.rank[k] != checked->rank[k] ||
            memcmp(result.sizes[k], checked->sizes[k], (size_t)result.rank[k] * 4) != 0) {
            goto done;
        }
    }
    answer_values(outputs);
done:
    for (int i = 0; i < count; i++) {
        free(blocks[i]);
    }
    for (int32_t i = 0; i < args.count; i++) {
        args.arg[i].tensor.data = NULL;
    }
}

static void judge(int run) {
    int32_t status = convcheck_unit_call(check_entry, &args, &result);
    if (status != 0) {
        answer_status(CONVCHECK_UNIT_CHECK, status);
        return;
    }
    answer_result();
    if (!run || answer.data[1] != CONVCHECK_VERDICT_ACCEPT) {
        return;
    }
    convcheck_unit_result checked = result;
    if (small_enough() == 1) {
        run_call(&checked);
    }
}

/* ---- serving ------------------------------------------------------------------------ */

static void empty_output(void) {
    /* One system call when the last request printed nothing, the usual case. */
    if (lseek(2, 0, SEEK_CUR) != 0) {
        if (ftruncate(2, 0) != 0) {
            /* not a file (a terminal, when run by hand): nothing to empty */
        }
        lseek(2, 0, SEEK_SET);
    }
}

static void serve(int request_fd, int result_fd) {
    buffer in = {0};
    size_t used = 0; /* bytes of `in` already handled */
    uint64_t skip = 0; /* bytes still to come of a request above CONVCHECK_REQUEST_LIMIT */
    for (;;) {
        /* Handle every complete record held, then read more. */
        while (in.len - used >= 4 || (skip && in.len > used)) {
            if (skip) {
                size_t dropped = in.len - used < skip ? in.len - used : (size_t)skip;
                used += dropped;
                skip -= dropped;
                continue;
            }
            uint32_t n;
            memcpy(&n, in.data + used, 4);
            /* A request is a few hundred bytes; its lists may be long, but not this long:
             * a longer one is answered with a tool-error, unread, so `in` never holds more
             * than one request's bytes. */
            if (n > CONVCHECK_REQUEST_LIMIT) {
                used += 4;
                skip = n;
                tool_error("ValueError: a request of %" PRIu32 " bytes, above the C worker's "
                           "limit of %d",
                           n, CONVCHECK_REQUEST_LIMIT);
                send_record(result_fd, &answer);
                continue;
            }
            if (in.len - used - 4 < n) {
                break;
            }
            reader r = {in.data + used + 4, in.data + used + 4 + n, 0};
            used += 4 + (size_t)n;
            empty_output();
            int run;
            const char *wrong = read_request(&r, &run);
            if (wrong == NULL) {
                judge(run);
            } else {
                tool_error("ValueError: %s", wrong);
            }
            send_record(result_fd, &answer);
        }
        if (used) {
            memmove(in.data, in.data + used, in.len - used);
            in.len -= used;
            used = 0;
        }
        reserve(&in, 1 << 16);
        ssize_t got = read(request_fd, in.data + in.len, in.cap - in.len);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return; /* the parent closed the pipe: the pool is done with us */
        }
        in.len += (size_t)got;
    }
}

/* ---- start-up ----------------------------------------------------------------------- */

static void die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
        die("prctl(PR_SET_PDEATHSIG)");
    }
    if (getppid() != parent) { /* the parent died before prctl took effect */
        _exit(1);
    }
}

/* fd moved to a random descriptor in [CONVCHECK_PRIVATE_FD_LOW, CONVCHECK_PRIVATE_FD_TOP)
 * (close-on-exec), the original closed: a library that writes to "its" fd 3..31, or
 * closes them, cannot reach the results. */
static int private_fd(int fd) {
    struct rlimit limit;
    rlim_t top = CONVCHECK_PRIVATE_FD_TOP;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        limit.rlim_cur < top) {
        top = limit.rlim_cur;
    }
    rlim_t low = CONVCHECK_PRIVATE_FD_LOW < top / 2 ? CONVCHECK_PRIVATE_FD_LOW : top / 2;
    uint32_t random = 0;
    if (getrandom(&random, sizeof random, 0) != sizeof random) {
        random = (uint32_t)getpid();
    }
    int start = (int)(low + random % (top - low));
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, start);
    if (moved < 0) { /* nothing free from start up to the limit */
        moved = fcntl(fd, F_DUPFD_CLOEXEC, (int)low);
    }
    if (moved < 0) {
        die("convcheck worker: fcntl(F_DUPFD_CLOEXEC)");
    }
    close(fd);
    return moved;
}

/* worker.load_library's checks, with its messages, for the op's entries (worker_unit.h).
 * 0, or -1 with `message` set. */
static int load_library(const char *path, const char *what, char *message, size_t size) {
    static const char *const symbols[] = {CONVCHECK_UNIT_VERSION_ENTRY, CONVCHECK_UNIT_NAME,
                                          CONVCHECK_UNIT_CHECK, CONVCHECK_UNIT_RUN};
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        snprintf(message, size, "ConvcheckError: %s %s: cannot be loaded (%s)", what, path,
                 dlerror());
        return -1;
    }
    void *found[4];
    for (int i = 0; i < 4; i++) { /* the four entries of symbols[] */
        found[i] = dlsym(handle, symbols[i]);
        if (found[i] == NULL) {
            snprintf(message, size,
                     "ConvcheckError: %s %s: missing symbol %s (is it built against "
                     "%s?)",
                     what, path, symbols[i], CONVCHECK_UNIT_HEADER);
            return -1;
        }
    }
    int32_t (*version)(void);
    memcpy(&version, &found[0], sizeof version); /* dlsym's object pointer as a function */
    int32_t given = version();
    if (given != CONVCHECK_UNIT_VERSION) {
        snprintf(message, size,
                 "ConvcheckError: %s %s: ABI version %" PRId32 ", convcheck speaks version %d "
                 "(rebuild it against this %s)",
                 what, path, given, CONVCHECK_UNIT_VERSION, CONVCHECK_UNIT_HEADER);
        return -1;
    }
    check_entry = found[2];
    run_entry = found[3];
    return 0;
}

/* ---- the fork server ---------------------------------------------------------------- */

/* The thread id's place in this thread's descriptor: a clone system call (glibc's fork
 * takes no flags) must write the child's there, as fork does, or glibc's raise (and so
 * abort, and a sanitizer's report) signals the server's thread id from the child. */
__attribute__((no_sanitize_address)) static pid_t *thread_id_slot(void) {
    /* glibc's descriptor is larger than SCAN_BYTES and aligned for its fields. */
    pid_t *self = (pid_t *)pthread_self();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    pid_t *found = NULL;
    int matches = 0;
    for (size_t i = 0; i < SCAN_BYTES / sizeof(pid_t); i++) {
        if (self[i] == tid) {
            found = &self[i];
            matches++;
        }
    }
    return matches == 1 ? found : NULL;
}

/* Why forking is unsafe here, or NULL: a second thread (fork copies only this one), or a
 * child process (every forked worker would share its pipes). */
static const char *fork_hazard(char *reason, size_t size) {
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) {
        return "/proc/self/task cannot be read";
    }
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        count += entry->d_name[0] != '.';
    }
    closedir(tasks);
    if (count != 1) {
        snprintf(reason, size, "%d threads", count);
        return reason;
    }
    char path[64], children[2];
    snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)syscall(SYS_gettid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, children, 1);
        close(fd);
        if (got > 0) {
            return "a child process";
        }
    }
    return NULL;
}

/* The sanitizer runtimes read this process's modules now, once: each forked worker
 * inherits that, where it would read them again for its report's stack. UBSan only when
 * it does not symbolize (gcc's, set up by a call before its first report, would then stay
 * without function names). */
static void warm_symbolizers(void) {
    typedef void (*symbolize_fn)(void *, const char *, char *, size_t);
    const char *ubsan_options = getenv("UBSAN_OPTIONS");
    int ubsan = ubsan_options != NULL && strstr(ubsan_options, "symbolize=0") != NULL;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL) {
        return;
    }
    char line[4096], paths[4][1024];
    int count = 0;
    while (count < 4 && fgets(line, sizeof line, maps) != NULL) { /* 4 runtimes at most */
        char *path = strchr(line, '/');
        if (path == NULL) {
            continue;
        }
        path[strcspn(path, "\n")] = 0;
        const char *name = strrchr(path, '/') + 1;
        int runtime = strncmp(name, "libasan", 7) == 0 ||
                      strncmp(name, "libclang_rt.asan", 16) == 0 ||
                      (ubsan && strncmp(name, "libubsan", 8) == 0);
        int known = 0;
        for (int i = 0; i < count; i++) {
            known |= strcmp(paths[i], path) == 0;
        }
        if (runtime && !known && strlen(path) < sizeof paths[0]) {
            strcpy(paths[count++], path);
        }
    }
    fclose(maps);
    symbolize_fn functions[4];
    int found = 0;
    for (int i = 0; i < count; i++) { /* all opened first: each dlopen undoes the last warm */
        void *handle = dlopen(paths[i], RTLD_NOW | RTLD_NOLOAD);
        void *symbol = handle ? dlsym(handle, "__sanitizer_symbolize_pc") : NULL;
        if (symbol != NULL) {
            memcpy(&functions[found++], &symbol, sizeof functions[0]);
        }
    }
    char answer_text[256];
    for (int i = 0; i < found; i++) {
        void *pc;
        memcpy(&pc, &functions[i], sizeof pc);
        functions[i](pc, "%p %F %L", answer_text, sizeof answer_text);
    }
}

static void write_line(int fd, const char *format, ...) {
    char line[512];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (n < 0) {
        return;
    }
    if ((size_t)n > sizeof line - 2) {
        n = (int)sizeof line - 2;
    }
    line[n] = '\n';
    write_all(fd, (const unsigned char *)line, (size_t)n + 1);
}

/* The marker's value ends in ten digits, which a forked worker overwrites in place with
 * its pid: /proc/PID/environ shows the block the server was started with, shared. */
static void rename_marker(const char *name) {
    char *value = getenv(name);
    char *dot = value ? strrchr(value, '.') : NULL;
    char digits[16];
    snprintf(digits, sizeof digits, "%010ld", (long)getpid());
    if (dot != NULL && strlen(dot + 1) == strlen(digits)) {
        memcpy(dot + 1, digits, strlen(digits));
    }
}

static void forked_worker(int server, int server_result, const int *fds, pid_t parent,
                          const char *marker) {
    setsid();
    close(server);
    close(server_result);
    dup2(fds[2], 1);
    dup2(fds[2], 2);
    close(fds[2]);
    int request_fd = private_fd(fds[0]), result_fd = private_fd(fds[1]);
    rename_marker(marker);
    die_with_parent(parent);
    buffer started = {0};
    put_u8(&started, CONVCHECK_STARTED);
    send_record(result_fd, &started);
    serve(request_fd, result_fd);
    _exit(0);
}

static void fork_forever(int server, int result_fd, pid_t parent, const char *marker) {
    pid_t *tid_slot = thread_id_slot();
    warm_symbolizers();
    char reason[64];
    for (;;) {
        char byte;
        int fds[3];
        char control[CMSG_SPACE(sizeof fds)];
        struct iovec part = {&byte, 1};
        struct msghdr message = {0};
        message.msg_iov = &part;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        ssize_t got = recvmsg(server, &message, MSG_CMSG_CLOEXEC);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) { /* the parent closed the socket: the pool is done with us */
            _exit(0);
        }
        int count = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL;
             c = CMSG_NXTHDR(&message, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                continue;
            }
            size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < n; i++) {
                int fd;
                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (count < 3) { /* fds[] holds three; more is a refused message */
                    fds[count] = fd;
                } else {
                    close(fd);
                }
                count++;
            }
        }
        const char *unsafe = tid_slot == NULL ? "the thread id is not found in the thread "
                                                "descriptor"
                                              : fork_hazard(reason, sizeof reason);
        if (unsafe == NULL && count != 3) {
            unsafe = "not three descriptors";
        }
        if (unsafe != NULL) {
            for (int i = 0; i < count && i < 3; i++) {
                close(fds[i]);
            }
            write_line(result_fd, "%c%s", CONVCHECK_FORK_REFUSED, unsafe);
            continue;
        }
        long pid = syscall(SYS_clone, (long)(CLONE_PARENT | CLONE_CHILD_SETTID | SIGCHLD), 0L,
                           0L, tid_slot, tid_slot);
        if (pid == 0) {
            forked_worker(server, result_fd, fds, parent, marker);
        }
        for (int i = 0; i < 3; i++) {
            close(fds[i]);
        }
        if (pid < 0) {
            write_line(result_fd, "%cclone: %s", CONVCHECK_FORK_REFUSED, strerror(errno));
        } else {
            write_line(result_fd, "%c%ld", CONVCHECK_FORKED, pid);
        }
    }
}

static int64_t parse_count(const char *text) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || *end != 0 || v < 0) {
        fprintf(stderr, "convcheck worker: %s is not a count\n", text);
        _exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    if (argc != 12) {
        fprintf(stderr,
                "usage: %s REQUEST_FD RESULT_FD PARENT_PID MODE MEMORY_MB MARKER LIBRARY WHAT "
                "MAX_TENSOR_ELEMENTS MAX_OUT_ELEMENTS MAX_WORK\n",
                argv[0]);
        return 2;
    }
    int fork_server = strcmp(argv[4], CONVCHECK_MODE_FORK_SERVER) == 0;
    if (!fork_server && strcmp(argv[4], CONVCHECK_MODE_SERVE) != 0) {
        fprintf(stderr, "convcheck worker: MODE %s is neither %s nor %s\n", argv[4],
                CONVCHECK_MODE_SERVE, CONVCHECK_MODE_FORK_SERVER);
        return 2;
    }
    pid_t parent = (pid_t)parse_count(argv[3]);
    die_with_parent(parent);
    int request_fd = private_fd((int)parse_count(argv[1]));
    int result_fd = private_fd((int)parse_count(argv[2]));
    if (strcmp(argv[5], CONVCHECK_NO_LIMIT) != 0) {
        rlim_t bytes = (rlim_t)parse_count(argv[5]) << 20;
        struct rlimit limit = {bytes, bytes};
        if (setrlimit(RLIMIT_AS, &limit) != 0) {
            die("setrlimit(RLIMIT_AS)");
        }
    }
    lib.max_tensor_elements = parse_count(argv[9]);
    lib.max_out_elements = parse_count(argv[10]);
    lib.max_work = parse_count(argv[11]);
    char message[512];
    int loaded = load_library(argv[7], argv[8], message, sizeof message);
    if (fork_server) {
        if (loaded != 0) {
            write_line(result_fd, "%c%.*s", CONVCHECK_START_FAILED, CONVCHECK_SITE_LIMIT, message);
            return 1;
        }
        write_line(result_fd, "%c", CONVCHECK_STARTED);
        fork_forever(request_fd, result_fd, parent, argv[6]);
    }
    buffer started = {0};
    if (loaded != 0) {
        put_u8(&started, CONVCHECK_START_FAILED);
        put(&started, message, strnlen(message, CONVCHECK_SITE_LIMIT));
        send_record(result_fd, &started);
        return 1;
    }
    put_u8(&started, CONVCHECK_STARTED);
    send_record(result_fd, &started);
    serve(request_fd, result_fd);
    return 0;
}
