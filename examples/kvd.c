/*
 * kvd.c - a small key-value server traced with tracec/track_event.h only:
 * an acceptor hands requests to 4 worker threads (flows from the accept to
 * the request), each request a slice with debug args and a typed lookup
 * event with custom fields, a counter of stored keys, and a compactor that
 * runs as a child process (fork + exec of this program with --compactor).
 *
 * The same macros feed every session active at the moment: the program's
 * own trace file (--trace), and `tracec record`'s session when it runs
 * under the recorder.  The compactor, a child exec'd with the inherited
 * environment, is recorded too, as a second process in the same trace:
 *
 *   ./kvd --trace kvd.pftrace 200                  its own file only
 *   tracec record -o all.pftrace -- ./kvd 200      both processes, one trace
 *   tracec record -o all.pftrace -- ./kvd --trace kvd.pftrace 200   both
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "my_events.tracec.h"
#include "tracec/track_event.h"

#define KVD_CATEGORIES(C) C(kv, "kv") C(compact, "compact")
TRACEC_TE_DECLARE_CATEGORIES(KVD_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(KVD_CATEGORIES)

enum { WORKERS = 4, LEVELS = 3 };

typedef struct request {
    uint64_t id; /* also the flow id from its accept to its slice */
    uint32_t key;
    int put;
} request;

typedef struct queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    request *items;
    size_t head, tail, cap;
    int closed;
} queue;

static queue q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0};
static uint64_t keys_stored;

static int take(request *r) {
    pthread_mutex_lock(&q.mu);
    while (q.head == q.tail && !q.closed) pthread_cond_wait(&q.cv, &q.mu);
    int got = q.head != q.tail;
    if (got) *r = q.items[q.head++];
    pthread_mutex_unlock(&q.mu);
    return got;
}

static void *worker(void *arg) {
    char name[16];
    request r;
    snprintf(name, sizeof name, "worker %d", (int)(intptr_t)arg);
    pthread_setname_np(pthread_self(), name);
    while (take(&r)) {
        if (r.put)
            TRACEC_TE(kv, TRACEC_TE_SLICE_BEGIN("put"), TRACEC_TE_ARG_UINT("key", r.key), TRACEC_TE_TERMINATING_FLOW(r.id));
        else
            TRACEC_TE(kv, TRACEC_TE_SLICE_BEGIN("get"), TRACEC_TE_ARG_UINT("key", r.key), TRACEC_TE_TERMINATING_FLOW(r.id));
        char key[32];
        snprintf(key, sizeof key, "user:%u", r.key);
        TRACEC_EVENT_AS(kv, my_app_MyEvent, ev, "lookup") {
            my_app_MyEvent_set_cstr_custom_string(&ev, key);
            my_app_MyEvent_set_custom_counter(&ev, (int64_t)r.id);
        }
        if (r.put) TRACEC_COUNTER(kv, "keys stored", (int64_t)__atomic_add_fetch(&keys_stored, 1, __ATOMIC_RELAXED));
        TRACEC_SLICE_END(kv);
    }
    return NULL;
}

/* The child: merges LEVELS levels, each a slice with its level and the bytes it merged as a counter. */
static int compactor(void) {
    TRACEC_SLICE_BEGIN(compact, "compact");
    for (int level = 0; level < LEVELS; level++) {
        TRACEC_TE(compact, TRACEC_TE_SLICE_BEGIN("merge level"), TRACEC_TE_ARG_INT("level", level));
        TRACEC_COUNTER(compact, "bytes merged", (int64_t)(level + 1) * 65536);
        TRACEC_SLICE_END(compact);
    }
    TRACEC_SLICE_END(compact);
    return 0;
}

/* Runs this program again as the compactor (fork + exec: a process of its own, same environment). */
static pid_t start_compactor(const char *self, const char *trace) {
    char own[4096];
    pid_t pid = fork();
    if (pid != 0) return pid;
    if (trace != NULL) {
        snprintf(own, sizeof own, "%s.compactor", trace);
        execl(self, self, "--compactor", "--trace", own, (char *)NULL);
    } else {
        execl(self, self, "--compactor", (char *)NULL);
    }
    perror("kvd: exec the compactor");
    _exit(127);
}

int main(int argc, char **argv) {
    const char *trace = NULL;
    int as_compactor = 0;
    long requests = 200;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--compactor") == 0)
            as_compactor = 1;
        else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc)
            trace = argv[++i];
        else if ((requests = strtol(argv[i], NULL, 10)) <= 0) {
            fprintf(stderr, "usage: kvd [--trace OWN.pftrace] [REQUESTS]\n");
            return 2;
        }
    }

    tracec_session *own = NULL;
    if (trace != NULL) { /* the program's own session, beside any recorder's */
        tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
        cfg.path = trace;
        tracec_status_t st = tracec_session_start(&cfg, &own);
        if (st != TRACEC_STATUS_SUCCESS) {
            fprintf(stderr, "kvd: %s: %s\n", trace, tracec_status_str(st));
            return 1;
        }
    }
    int rc = 0;
    if (as_compactor) {
        rc = compactor();
    } else {
        pthread_t th[WORKERS];
        q.cap = (size_t)requests;
        if ((q.items = calloc(q.cap, sizeof *q.items)) == NULL) return 1;
        for (int i = 0; i < WORKERS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1); /* its own name, not "exe" */
        self[len > 0 ? len : 0] = '\0';
        pid_t child = start_compactor(len > 0 ? self : argv[0], trace);
        for (long i = 0; i < requests; i++) {
            request r = {(uint64_t)i + 1, (uint32_t)(i * 7919 % 1000), i % 3 == 0};
            TRACEC_TE(kv, TRACEC_TE_INSTANT("accept"), TRACEC_TE_FLOW(r.id));
            pthread_mutex_lock(&q.mu);
            q.items[q.tail++] = r;
            pthread_cond_signal(&q.cv);
            pthread_mutex_unlock(&q.mu);
        }
        pthread_mutex_lock(&q.mu);
        q.closed = 1;
        pthread_cond_broadcast(&q.cv);
        pthread_mutex_unlock(&q.mu);
        for (int i = 0; i < WORKERS; i++) pthread_join(th[i], NULL);
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "kvd: the compactor failed\n");
            rc = 1;
        }
        free(q.items);
    }
    if (own != NULL && tracec_session_stop(own) != TRACEC_STATUS_SUCCESS) rc = 1;
    return rc;
}
