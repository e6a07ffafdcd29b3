/* worker_buffer.c: growable byte buffers, and records written whole to a pipe. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "worker_buffer.h"

void worker_die(const char *what) {
    perror(what);
    _exit(1);
}

/* Room for `more` bytes. Never near SIZE_MAX: requests are bounded by CONVCHECK_REQUEST_LIMIT,
 * answers by RunLimits' max_out_elements. */
void buffer_reserve(buffer *b, size_t more) {
    if (b->cap - b->len >= more) {
        return;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < more) {
        cap *= 2;
    }
    unsigned char *grown = realloc(b->data, cap);
    if (grown == NULL) {
        worker_die("convcheck worker: realloc");
    }
    b->data = grown;
    b->cap = cap;
}

void buffer_put(buffer *b, const void *bytes, size_t n) {
    buffer_reserve(b, n);
    if (n) {
        memcpy(b->data + b->len, bytes, n);
    }
    b->len += n;
}

void buffer_put_u8(buffer *b, uint8_t v) { buffer_put(b, &v, 1); }
void buffer_put_u32(buffer *b, uint32_t v) { buffer_put(b, &v, 4); }
void buffer_put_i32(buffer *b, int32_t v) { buffer_put(b, &v, 4); }

void buffer_put_string(buffer *b, const char *s, size_t n) {
    buffer_put_u32(b, (uint32_t)n);
    buffer_put(b, s, n);
}

void buffer_put_text(buffer *b, const char *s) { buffer_put_string(b, s, strlen(s)); }

void write_all(int fd, const unsigned char *data, size_t n) {
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
void send_record(int fd, buffer *b) {
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
