/* worker_request.h: a request's bytes decoded into the neutral arguments of a call. */
#ifndef WORKER_REQUEST_H
#define WORKER_REQUEST_H

#include "convcheck_unit.h"

typedef struct {
    const unsigned char *at, *end;
    int bad; /* read past the end: the request is malformed */
} reader;

/* mode (0 check, 1 run), the argument count (u8), then each argument: its kind (u8) and
 * its value (a tensor: flags, rank, dtype, offset, sizes, dim order; an int list: a
 * count and that many int64; an int: an int64; an optional int: present (u8) and an
 * int64 if so; a bool: a u8), into `args`. NULL, or what is wrong with the request. */
const char *read_request(reader *r, convcheck_unit_args *args, int *run);

#endif /* WORKER_REQUEST_H */
