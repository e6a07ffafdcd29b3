/*
 * worker_main.c: the native judge's worker as a C program: its requests judged, its
 * answers written.
 *
 * It does what an op's Python worker (convolution's ops/convolution/native/worker.py)
 * does (load a library of an op's ABI, judge cases with its check and run entries, fill
 * and read the run's tensors), for a fraction of the cost of a Python process: forking this program and
 * letting the copy die of a sanitizer report costs a millisecond or two, where a forked
 * Python worker costs several. It names no op's parameter: a request is the op's call
 * schema in order, neutral (convcheck_unit.h), which the op's call unit, built in with
 * it, turns into the op's call. Built per op, with the library's own sanitizer flags
 * (convcheck/native/build.py, build_worker, from WORKER_SOURCES), started by
 * convcheck/sandbox/ as a WorkerSpec "program":
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
 * machine. A request's layout is read in worker_request.c, an answer's written here;
 * convcheck/native/wire.py is the parent's side, and names the answers' verdicts and the
 * arguments' kinds.
 *
 * MODE CONVCHECK_MODE_FORK_SERVER: loads the library once, then forks a worker for each
 * message on REQUEST_FD (worker_process.c, fork_forever), as convcheck/_worker_main.py's
 * server does.
 *
 * MEMORY_MB: CONVCHECK_NO_LIMIT or an address-space limit (a plain build; a sanitized
 * one's limits are in ASAN_OPTIONS). MARKER: the environment variable that tells a
 * worker's descendants apart.
 */
#define _GNU_SOURCE /* pread, ftruncate, strnlen */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "convcheck_unit.h"
#include "worker_buffer.h"
#include "worker_process.h"
#include "worker_protocol.h" /* generated: see build_worker */
#include "worker_request.h"
#include "worker_unit.h"     /* generated: the op's entry names and ABI version */
#include "worker_values.h"

enum { EMPTY_BLOCK = 16 }; /* see allocate_block */

static struct {
    int64_t max_tensor_elements, max_out_elements, max_work;
} lib;
static void *check_entry, *run_entry; /* the library's, as dlsym found them */

/* The arguments and the result, reused from request to request as the Python worker
 * reuses its structs. */
static convcheck_unit_args request_args;
static convcheck_unit_result result;

/* ---- answers ------------------------------------------------------------------------ */

static buffer answer;

static void begin_answer(int verdict) {
    answer.len = 0;
    buffer_put_u8(&answer, CONVCHECK_RESULT);
    buffer_put_u8(&answer, (uint8_t)verdict);
}

static void tool_error(const char *format, ...) {
    char detail[300]; /* the Python worker's detail is cut at 300 characters too */
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    begin_answer(CONVCHECK_VERDICT_TOOL_ERROR);
    buffer_put_text(&answer, detail);
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
    buffer_put_text(&answer, field);
    buffer_put_text(&answer, detail);
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
        buffer_put_text(&answer, result.check); /* NUL-terminated: answer_violation checked */
        return;
    }
    begin_answer(CONVCHECK_VERDICT_ACCEPT);
    buffer_put_u8(&answer, (uint8_t)result.outputs);
    for (int32_t k = 0; k < result.outputs; k++) {
        buffer_put_u8(&answer, (uint8_t)result.rank[k]);
        for (int32_t i = 0; i < result.rank[k]; i++) { /* 0..16, checked */
            buffer_put_i32(&answer, result.sizes[k][i]);
        }
    }
    buffer_put_u8(&answer, 0); /* ran */
}

/* The library returned a non-zero status: reported as the Python worker's exception is
 * (a "python-exception" crash whose site names the status), and the worker goes on. */
static void answer_status(const char *entry, int32_t status) {
    char site[160];
    size_t check_len = strnlen(result.check, sizeof result.check);
    snprintf(site, sizeof site, "_Status: %s returned %" PRId32 " (%.*s)", entry, status,
             (int)check_len, result.check);
    answer.len = 0;
    buffer_put_u8(&answer, CONVCHECK_ERROR);
    buffer_put_text(&answer, site);
    /* The report: what this request printed, then the status. */
    off_t end = lseek(2, 0, SEEK_CUR);
    off_t start = end > CONVCHECK_REPORT_LIMIT ? end - CONVCHECK_REPORT_LIMIT : 0;
    char printed[CONVCHECK_REPORT_LIMIT];
    ssize_t got = end > 0 ? pread(2, printed, (size_t)(end - start), start) : 0;
    buffer report = {0};
    buffer_put(&report, printed, got > 0 ? (size_t)got : 0);
    buffer_put(&report, site, strlen(site));
    buffer_put(&report, "\n", 1);
    buffer_put_string(&answer, (const char *)report.data, report.len);
    free(report.data);
}

/* ---- run: limits, blocks ------------------------------------------------------------ */

/* worker.py's _small_enough, with the same limits (RunLimits), and the op's estimate of
 * the work (its unit's, worker.py's _work). Returns -1 (after a tool-error answer) where
 * the Python worker's estimate would fail. */
static int small_enough(void) {
    uint64_t limit = (uint64_t)lib.max_tensor_elements, out_numel = 0;
    for (int32_t i = 0; i < request_args.count; i++) {
        const convcheck_unit_arg *a = &request_args.arg[i];
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
    if (convcheck_unit_work(&request_args, &result, &work, error, sizeof error) != 0) {
        tool_error("%s", error);
        return -1;
    }
    return work <= (uint64_t)lib.max_work;
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
    buffer_reserve(&scratch, (size_t)(numel ? numel : 1) * sizeof(uint64_t));
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
        store_value(block + offsets[i] * elsize, t->dtype, small_value(i, a->offset, t->dtype));
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
        buffer_put_u32(&answer, (uint32_t)walks[k].numel);
        uint64_t *offsets = offsets_buffer(walks[k].numel);
        offsets_of(&walks[k], offsets);
        buffer_reserve(&answer, (size_t)walks[k].numel * 8);
        for (uint64_t i = 0; i < walks[k].numel; i++) {
            double v = load_value((const unsigned char *)t->data + offsets[i] * elsize, t->dtype);
            buffer_put(&answer, &v, 8);
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
    for (int32_t i = 0; i < request_args.count; i++) {
        convcheck_unit_arg *a = &request_args.arg[i];
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
    int32_t status = convcheck_unit_call(run_entry, &request_args, &result);
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
    for (int32_t i = 0; i < request_args.count; i++) {
        request_args.arg[i].tensor.data = NULL;
    }
}

static void judge(int run) {
    int32_t status = convcheck_unit_call(check_entry, &request_args, &result);
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
            const char *wrong = read_request(&r, &request_args, &run);
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
        buffer_reserve(&in, 1 << 16);
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
            worker_die("setrlimit(RLIMIT_AS)");
        }
    }
    lib.max_tensor_elements = parse_count(argv[9]);
    lib.max_out_elements = parse_count(argv[10]);
    lib.max_work = parse_count(argv[11]);
    char message[512];
    int loaded = load_library(argv[7], argv[8], message, sizeof message, &check_entry, &run_entry);
    if (fork_server) {
        if (loaded != 0) {
            write_line(result_fd, "%c%.*s", CONVCHECK_START_FAILED, CONVCHECK_SITE_LIMIT, message);
            return 1;
        }
        write_line(result_fd, "%c", CONVCHECK_STARTED);
        fork_forever(request_fd, result_fd, parent, argv[6], serve);
    }
    buffer started = {0};
    if (loaded != 0) {
        buffer_put_u8(&started, CONVCHECK_START_FAILED);
        buffer_put(&started, message, strnlen(message, CONVCHECK_SITE_LIMIT));
        send_record(result_fd, &started);
        return 1;
    }
    buffer_put_u8(&started, CONVCHECK_STARTED);
    send_record(result_fd, &started);
    serve(request_fd, result_fd);
    return 0;
}
