/* worker_buffer.h: the C worker's growable byte buffers and the records it writes. */
#ifndef WORKER_BUFFER_H
#define WORKER_BUFFER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *data;
    size_t len, cap;
} buffer;

/* perror(what), then exit: the worker cannot go on (an allocation failed, say). */
void worker_die(const char *what);

void buffer_reserve(buffer *b, size_t more);
void buffer_put(buffer *b, const void *bytes, size_t n);
void buffer_put_u8(buffer *b, uint8_t v);
void buffer_put_u32(buffer *b, uint32_t v);
void buffer_put_i32(buffer *b, int32_t v);
/* A uint32 length, then the n bytes. */
void buffer_put_string(buffer *b, const char *s, size_t n);
void buffer_put_text(buffer *b, const char *s);

void write_all(int fd, const unsigned char *data, size_t n);
/* One record: a uint32 length, then the buffer's bytes. */
void send_record(int fd, buffer *b);

#endif /* WORKER_BUFFER_H */
