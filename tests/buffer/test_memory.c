/*
 * test_memory.c - a buffer whose halves and durable part live in the
 * caller's sealed memfd (tracec_buffer_config_t.memory): the records are in
 * the memfd as they are written, a memfd that is not fit is refused, a fork
 * child never writes into it, and a destroy leaves no mapping behind.  The
 * engine's own suites also run with every buffer in a memfd (the
 * buffer_*_memfd ctest entries).
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "buffer_util.h"

static const char probe[] = "tracec-memfd-probe-0123456789";

/* A memfd of `size` bytes with `seals` added. */
static int make_memfd(size_t size, int seals) {
    int fd = memfd_create("tracec-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t)size), 0);
    if (seals) cr_assert_eq(fcntl(fd, F_ADD_SEALS, seals), 0);
    return fd;
}

/* Whether the memfd's bytes hold `what`. */
static bool memfd_holds(int fd, const void *what, size_t len) {
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert_neq(m, MAP_FAILED);
    bool found = memmem(m, (size_t)st.st_size, what, len) != NULL;
    munmap(m, (size_t)st.st_size);
    return found;
}

/* Lines of /proc/self/maps that map a memfd the buffer made or was given. */
static int memfd_mappings(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f) != NULL) n += strstr(line, "memfd:tracec-") != NULL;
    fclose(f);
    return n;
}

static tracec_buffer_config_t memfd_config(tracec_buffering_mode_t mode, tracec_buffer_policy_t policy,
                                           collector *c, int fd) {
    tracec_buffer_config_t cfg = TRACEC_BUFFER_CONFIG_INIT;
    cfg.mode = mode;
    cfg.policy = policy;
    cfg.size = 4096;
    cfg.callback = collect_cb;
    cfg.callback_data = c;
    cfg.memory = TRACEC_BUFFER_MEMORY_MEMFD;
    cfg.memory_fd = fd;
    return cfg;
}

Test(buffer_memory, records_are_in_the_callers_memfd_in_every_mode) {
    static const struct {
        tracec_buffering_mode_t mode;
        tracec_buffer_policy_t policy;
    } modes[] = {{TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS},
                 {TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE},
                 {TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE}};
    tracec_context_id_t ctx = started_context();
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        collector c;
        collector_init(&c);
        size_t need = tracec_buffer_memory_size(modes[i].mode, 4096, 0);
        cr_assert_gt(need, 0);
        int fd = make_memfd(need, F_SEAL_SHRINK | F_SEAL_GROW);
        tracec_buffer_config_t cfg = memfd_config(modes[i].mode, modes[i].policy, &c, fd);
        tracec_buffer_id_t b;
        OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
        OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, 1, probe, sizeof probe));
        cr_assert(memfd_holds(fd, probe, sizeof probe), "mode %d: the record is not in the memfd", (int)modes[i].mode);
        close(fd); /* the buffer keeps its mapping */
        OK(tracec_flush_buffer(b));
        cr_assert_eq(collector_count(&c), 1);
        cr_assert_eq(c.recs[0].size, sizeof probe);
        cr_assert_eq(memcmp(c.recs[0].data, probe, sizeof probe), 0);
        OK(tracec_destroy_buffer(b));
        collector_forget(&c);
    }
    cr_assert_eq(memfd_mappings(), 0, "a destroyed buffer left its mapping");
    test_end();
}

Test(buffer_memory, a_memfd_that_is_not_fit_is_refused) {
    tracec_context_id_t ctx = started_context();
    collector c;
    collector_init(&c);
    size_t need = tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_STREAMING, 4096, 0);
    tracec_buffer_id_t b;
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    tracec_buffer_config_t cfg = memfd_config(TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, &c,
                                              pipefd[0]);
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT, "not a memfd");
    cfg.memory_fd = -1;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT, "no fd");
    int unsealed = make_memfd(need, 0);
    cfg.memory_fd = unsealed;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT,
                 "can shrink under the writers");
    int small = make_memfd(need - 4096, F_SEAL_SHRINK);
    cfg.memory_fd = small;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT, "too small");
    cfg.memory = 7;
    cr_assert_eq(tracec_create_buffer_with_config(ctx, &cfg, &b), TRACEC_STATUS_INVALID_ARGUMENT, "bad memory");
    cr_assert_eq(tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_LAST, 4096, 0), 0);
    cr_assert_eq(tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_STREAMING, 0, 0), 0);
    cr_assert_eq(memfd_mappings(), 0);
    close(pipefd[0]);
    close(pipefd[1]);
    close(unsealed);
    close(small);
    test_end();
}

/* A fork child does not have the mapping: its handle is refused there and it never writes into the memfd. */
Test(buffer_memory, a_fork_child_never_writes_into_the_memfd) {
    static const char child_probe[] = "written-by-the-fork-child";
    tracec_context_id_t ctx = started_context();
    collector c;
    collector_init(&c);
    size_t need = tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_STREAMING, 4096, 0);
    int fd = make_memfd(need, F_SEAL_SHRINK | F_SEAL_GROW);
    tracec_buffer_config_t cfg = memfd_config(TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS, &c, fd);
    tracec_buffer_id_t b;
    OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
    tracec_buffer_writer bw;
    OK(tracec_buffer_writer_init(&bw, b, 0));
    OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, probe, sizeof probe));
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int bad = 0;
        bad |= tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, 1, child_probe, sizeof child_probe) !=
               TRACEC_STATUS_BUFFER_NOT_FOUND;
        bad |= put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, child_probe,
                                sizeof child_probe) == TRACEC_STATUS_SUCCESS;
        bad |= tracec_destroy_buffer(b) != TRACEC_STATUS_BUFFER_NOT_FOUND;
        bad |= memfd_mappings() != 0;
        _exit(bad);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child could use the parent's memfd buffer");
    cr_assert(!memfd_holds(fd, child_probe, sizeof child_probe), "the child wrote into the parent's memfd");
    OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, probe, sizeof probe));
    tracec_buffer_writer_release(&bw);
    OK(tracec_flush_buffer(b));
    cr_assert_eq(collector_count(&c), 2, "the parent's buffer works after the fork");
    OK(tracec_destroy_buffer(b));
    close(fd);
    test_end();
}

Test(buffer_memory, a_thousand_creates_and_destroys_leave_no_mapping) {
    tracec_context_id_t ctx = started_context();
    size_t need = tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 0);
    int fd = make_memfd(need, F_SEAL_SHRINK);
    for (int i = 0; i < 1000; i++) {
        collector c;
        collector_init(&c);
        tracec_buffer_config_t cfg = memfd_config(TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE, &c, fd);
        tracec_buffer_id_t b;
        OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
        OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, 1, probe, sizeof probe));
        OK(tracec_destroy_buffer(b));
        collector_forget(&c);
    }
    cr_assert_eq(memfd_mappings(), 0);
    close(fd);
    test_end();
}
