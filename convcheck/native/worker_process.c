/* worker_process.c: the worker's process set-up (its parent, private descriptors, the
 * library and its entries) and the fork server.
 *
 * The fork server answers each message on its Unix socket (each carries three
 * descriptors: the new worker's request pipe, result pipe and output file) with a line,
 * FORKED and the pid or FORK_REFUSED and why. A worker is forked with CLONE_PARENT: it
 * is the parent's own child, reaped and killed by it. A forked worker puts its pid at
 * the end of the marker variable's value (see rename_marker). */
#define _GNU_SOURCE /* clone flags, F_DUPFD_CLOEXEC, getrandom */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "worker_buffer.h"
#include "worker_process.h"
#include "worker_protocol.h" /* generated: see build_worker */
#include "worker_unit.h"     /* generated: the op's entry names and ABI version */

enum { SCAN_BYTES = 2048 }; /* of the thread descriptor, where glibc keeps the thread id */

void die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
        worker_die("prctl(PR_SET_PDEATHSIG)");
    }
    if (getppid() != parent) { /* the parent died before prctl took effect */
        _exit(1);
    }
}

int private_fd(int fd) {
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
        worker_die("convcheck worker: fcntl(F_DUPFD_CLOEXEC)");
    }
    close(fd);
    return moved;
}

int load_library(const char *path, const char *what, char *message, size_t size,
                 void **check_entry, void **run_entry) {
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
    *check_entry = found[2];
    *run_entry = found[3];
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

void write_line(int fd, const char *format, ...) {
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
                          const char *marker, void (*serve)(int, int)) {
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
    buffer_put_u8(&started, CONVCHECK_STARTED);
    send_record(result_fd, &started);
    serve(request_fd, result_fd);
    _exit(0);
}

void fork_forever(int server, int result_fd, pid_t parent, const char *marker,
                  void (*serve)(int request_fd, int result_fd)) {
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
            forked_worker(server, result_fd, fds, parent, marker, serve);
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
