/* worker_process.h: the C worker as a process: its descriptors, its parent, its library,
 * and the fork server that starts workers from a loaded copy. */
#ifndef WORKER_PROCESS_H
#define WORKER_PROCESS_H

#include <stddef.h>
#include <sys/types.h>

/* Killed with the parent (which is `parent`, else exit now). */
void die_with_parent(pid_t parent);

/* fd moved to a random descriptor in [CONVCHECK_PRIVATE_FD_LOW, CONVCHECK_PRIVATE_FD_TOP)
 * (close-on-exec), the original closed: a library that writes to "its" fd 3..31, or
 * closes them, cannot reach the results. */
int private_fd(int fd);

/* worker.load_library's checks, with its messages, for the op's entries (worker_unit.h):
 * 0 with the check and run entries found, or -1 with `message` set. */
int load_library(const char *path, const char *what, char *message, size_t size,
                 void **check_entry, void **run_entry);

/* A line of text, formatted, written whole. */
void write_line(int fd, const char *format, ...);

/* The fork server: a worker forked for each message on `server`, serving with `serve`;
 * never returns (exits when the parent closes the socket). */
void fork_forever(int server, int result_fd, pid_t parent, const char *marker,
                  void (*serve)(int request_fd, int result_fd));

#endif /* WORKER_PROCESS_H */
