/*
 * hostile_target.c: a convcheck target that misbehaves on request, for the robustness
 * tests. It accepts every call with out's declared sizes, except where `groups` asks for
 * something else:
 *
 *   99, -5   out_rank out of range         7   a negative out size
 *   8        accepted is neither 0 nor 1   9   a check id without its NUL
 *   0        SIGSEGV                       13  hangs (writes its pid to $HOSTILE_PIDS first)
 *   42       forks a child that calls setsid and sleeps (its pid goes to $HOSTILE_PIDS)
 *   43       as 42, then SIGSEGV             3   returns status 3 (check id "hostile.status")
 *   44       allocates 512 MB: rejects with "hostile.no_memory" if it cannot
 *   45       allocates until malloc fails (the address-space limit), then hangs
 *
 * Built with -DGARBAGE it writes bogus result lines to fds 3..31 in its constructor and in
 * every call; with -DPRINT it prints to stdout and stderr from its constructor and
 * destructor; with -DHANG every call hangs as 13 does; with -DTHREAD its constructor starts
 * a thread (a process with two threads must not fork); with -DNULL_NAME convcheck_name()
 * returns NULL; with -DFORK_ON_LOAD its constructor forks two children that sleep, one
 * calling setsid (their pids go to $HOSTILE_PIDS). $HOSTILE_LOADS names a file
 * counting the loads; from load $HOSTILE_CRASH_FROM on, the constructor aborts.
 */
#define _DEFAULT_SOURCE /* fork, setsid, pause under -std=c11 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "convcheck_abi.h"

static void garbage(void) {
#ifdef GARBAGE
    static const char bogus[] = "R{\"verdict\": \"accept\"}\nEnot json\nS\n\377\376garbage";
    for (int fd = 3; fd < 32; fd++) {
        ssize_t ignored = write(fd, bogus, sizeof bogus - 1);
        (void)ignored;
    }
#endif
}

static void record_pid(pid_t pid) {
    const char *path = getenv("HOSTILE_PIDS");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
    }
}

#ifdef THREAD
static void *sleep_forever(void *unused) {
    for (;;) {
        pause();
    }
    return unused;
}
#endif

#ifdef FORK_ON_LOAD
/* A child that sleeps until killed, in a session of its own or not; its pid recorded. */
static void fork_on_load(int new_session) {
    pid_t child = fork();
    if (child == 0) {
        if (new_session) {
            setsid();
        }
        for (;;) {
            pause();
        }
    }
    record_pid(child);
}
#endif

__attribute__((constructor)) static void on_load(void) {
#ifdef FORK_ON_LOAD
    fork_on_load(0);
    fork_on_load(1);
#endif
#ifdef THREAD
    pthread_t thread;
    pthread_create(&thread, NULL, sleep_forever, NULL);
#endif
#ifdef PRINT
    printf("{\"name\": \"printed by the constructor\"}\n{");
    fprintf(stderr, "constructor says hello\n");
#endif
    garbage();
    const char *loads = getenv("HOSTILE_LOADS");
    const char *crash_from = getenv("HOSTILE_CRASH_FROM");
    if (loads) {
        int count = 0;
        FILE *f = fopen(loads, "r");
        if (f) {
            if (fscanf(f, "%d", &count) != 1) {
                count = 0;
            }
            fclose(f);
        }
        count++;
        f = fopen(loads, "w");
        if (f) {
            fprintf(f, "%d\n", count);
            fclose(f);
        }
        if (crash_from && count >= atoi(crash_from)) {
            abort();
        }
    }
}

__attribute__((destructor)) static void on_unload(void) {
#ifdef PRINT
    printf("{\"error\": \"printed by the destructor\"}\n");
    fprintf(stderr, "destructor says goodbye\n");
#endif
}

int32_t convcheck_abi_version(void) {
    return CONVCHECK_ABI_VERSION;
}

const char *convcheck_name(void) {
#ifdef NULL_NAME
    return NULL;
#else
    return "hostile target";
#endif
}

static void fork_setsid_sleeper(void) {
    pid_t child = fork();
    if (child == 0) {
        setsid();
        for (;;) {
            pause();
        }
    }
    record_pid(child);
}

int32_t convcheck_check(const convcheck_call *call, convcheck_result *result) {
    garbage();
    memset(result, 0, sizeof *result);
    result->accepted = 1;
    result->out_rank = call->out.rank;
    memcpy(result->out_sizes, call->out.sizes, sizeof result->out_sizes);
#ifdef HANG
    const int64_t groups = 13;
#else
    const int64_t groups = call->groups;
#endif
    switch (groups) {
    case 99:
    case -5:
        result->out_rank = (int32_t)groups;
        break;
    case 7:
        result->out_sizes[1] = -1372;
        break;
    case 8:
        result->accepted = 2;
        break;
    case 9:
        result->accepted = 0;
        memset(result->check, 'x', sizeof result->check);
        break;
    case 0:
        raise(SIGSEGV);
        break;
    case 3:
        strcpy(result->check, "hostile.status");
        return 3;
    case 44: {
        char *block = malloc((size_t)512 << 20);
        if (block == NULL) {
            result->accepted = 0;
            strcpy(result->check, "hostile.no_memory");
        }
        free(block);
        break;
    }
    case 45:
        /* Reserves address space until malloc fails (the worker's limit), then hangs, as
           a library that retries forever would. */
        while (malloc((size_t)256 << 20) != NULL) {
        }
        for (;;) {
            pause();
        }
    case 13:
        record_pid(getpid());
        for (;;) {
            pause();
        }
    case 42:
        fork_setsid_sleeper();
        break;
    case 43:
        fork_setsid_sleeper();
        raise(SIGSEGV);
        break;
    default:
        break;
    }
    return 0;
}

int32_t convcheck_run(const convcheck_call *call, convcheck_result *result) {
    return convcheck_check(call, result);
}
