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
#include "tracec/abi/shm_layout.h"

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

/* ---- the memfd as the reading process sees it (tracec/abi/shm_layout.h) ---- */

/* A second, read-only mapping of the memfd, as the recorder maps it. */
static const uint8_t *reader_map(int fd, size_t need) {
    void *m = mmap(NULL, need, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert_neq(m, MAP_FAILED);
    return (const uint8_t *)m;
}

static const tracec_shm_header *hdr_of(const uint8_t *m) { return (const tracec_shm_header *)(const void *)m; }

static uint64_t ld64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static uint32_t ld32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

/* The geometry words say what the buffer was created with. */
static void check_geometry(const tracec_shm_header *h, tracec_buffering_mode_t mode, size_t size, size_t need) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    cr_assert_eq(ld64(&h->magic), TRACEC_SHM_MAGIC);
    cr_assert_eq(memcmp(&h->magic, "TCSHM002", 8), 0);
    cr_assert_eq(h->version, TRACEC_SHM_VERSION);
    cr_assert_eq(h->header_bytes, TRACEC_SHM_HEADER_BYTES);
    cr_assert_eq(h->mode, (uint32_t)mode);
    cr_assert_eq(h->halves, mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1u : 2u);
    cr_assert_eq(h->size, (size + pg - 1) / pg * pg);
    cr_assert_eq(h->half_bytes, (h->size * 3 + pg - 1) / pg * pg);
    cr_assert_eq(h->durable_bytes == 0, mode == TRACEC_BUFFERING_MODE_STREAMING);
    cr_assert_eq(TRACEC_SHM_HEADER_BYTES + h->halves * h->half_bytes + h->durable_bytes, need);
}

/*
 * Walks half h's blocks up to its `reserved` hint, as a salvage would:
 * every chunk carries the tag of the half's generation, every record in it
 * is one of the test's (payload `len` bytes).  Returns the records seen.
 */
static size_t walk_half(const uint8_t *m, int h, size_t len) {
    const tracec_shm_header *hd = hdr_of(m);
    const uint8_t *base = m + TRACEC_SHM_HEADER_BYTES + (size_t)h * hd->half_bytes;
    uint64_t gen = ld64(&hd->half[h].gen);
    uint32_t end = ld32(&hd->half[h].reserved);
    cr_assert_leq(end, hd->half_bytes);
    size_t n = 0;
    for (uint32_t off = 0; off + TRACEC_I_BLK_HDR <= end;) {
        tracec_i_blk blk;
        memcpy(&blk, base + off, sizeof blk);
        cr_assert_eq(blk.body % 8, 0);
        cr_assert_leq(off + TRACEC_I_BLK_HDR + blk.body, end);
        if (blk.size == 0xffffffffu) {
            cr_assert_eq(blk.kind, TRACEC_SHM_CHUNK_TAG(gen), "half %d: a chunk's tag is %u, its generation %llu", h,
                         blk.kind, (unsigned long long)gen);
            cr_assert_neq(blk.kind, 0u);
            const uint8_t *r = base + off + TRACEC_I_BLK_HDR, *e = r + blk.committed;
            while (r < e) {
                tracec_i_blk rec;
                memcpy(&rec, r, sizeof rec);
                cr_assert_eq(rec.size, len + 5, "a Trace.packet record: 0x0A, its length, field 900 (2 + 1 bytes) and its bytes");
                n++;
                r += TRACEC_I_BLK_HDR + rec.body;
            }
        } else {
            cr_assert_eq(blk.size, len);
            n++;
        }
        off += TRACEC_I_BLK_HDR + blk.body;
    }
    return n;
}

static uint64_t half_gen(const uint8_t *m, int h) { return ld64(&hdr_of(m)->half[h].gen); }

/* the bytes of field 900 in each packet */
#define PK 61u

Test(buffer_memory, the_header_gens_and_chunk_tags_are_the_readers_contract_in_every_mode) {
    static const struct {
        tracec_buffering_mode_t mode;
        tracec_buffer_policy_t policy;
    } modes[] = {{TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_LOSSLESS},
                 {TRACEC_BUFFERING_MODE_STREAMING, TRACEC_BUFFER_POLICY_DISCARD},
                 {TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE},
                 {TRACEC_BUFFERING_MODE_ONESHOT, TRACEC_BUFFER_POLICY_NONE}};
    uint8_t payload[PK];
    memset(payload, 0x5a, sizeof payload);
    tracec_context_id_t ctx = started_context();
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        tracec_buffering_mode_t mode = modes[i].mode;
        collector c;
        collector_init(&c);
        c.keep = 0;
        size_t need = tracec_buffer_memory_size(mode, 4096, 0);
        int fd = make_memfd(need, F_SEAL_SHRINK | F_SEAL_GROW);
        const uint8_t *m = reader_map(fd, need);
        const tracec_shm_header *hd = hdr_of(m);
        tracec_buffer_config_t cfg = memfd_config(mode, modes[i].policy, &c, fd);
        cfg.watermark = cfg.size; /* STREAMING: no delivery before the half fills */
        tracec_buffer_id_t b;
        OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
        close(fd);
        check_geometry(hd, mode, 4096, need);
        /* Fresh: the first generation of each region, nothing handed or reserved. */
        cr_assert_eq(ld32(&hd->active), 0u);
        for (uint32_t h = 0; h < hd->halves; h++) {
            cr_assert_neq(half_gen(m, (int)h), 0u);
            cr_assert_eq(ld32(&hd->half[h].handed), (uint32_t)TRACEC_SHM_REGION_FREE);
            cr_assert_eq(ld32(&hd->half[h].reserved), 0u);
        }
        if (hd->durable_bytes) cr_assert_neq(ld64(&hd->durable.gen), 0u);

        /* A few packets: they are in the active half's chunks, tagged with its generation. */
        tracec_buffer_writer bw;
        OK(tracec_buffer_writer_init(&bw, b, 0));
        for (int k = 0; k < 5; k++)
            OK(put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, payload,
                                sizeof payload));
        cr_assert_eq(walk_half(m, 0, PK), 5, "mode %d", (int)mode);
        cr_assert_gt(ld32(&hd->half[0].reserved), 0u);

        /* Fill well past two halves: the halves are reset (their generations advance, by at least
           2 at each reset so that consecutive generations have distinct chunk tags). */
        uint64_t g0 = half_gen(m, 0), g1 = half_gen(m, 1);
        for (int k = 0; k < 400; k++)
            (void)put_bytes_packet(&bw, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_TRACK_EVENT, payload,
                                   sizeof payload);
        tracec_buffer_writer_release(&bw);
        OK(tracec_flush_buffer(b));
        tracec_buffer_stats_t st;
        OK(tracec_query_buffer_stats(b, &st));
        /* The counters were published at the flush. */
        cr_assert_eq(ld64(&hd->accepted), st.accepted, "mode %d", (int)mode);
        cr_assert_eq(ld64(&hd->dropped), st.dropped);
        cr_assert_eq(ld64(&hd->overwritten), st.overwritten);
        cr_assert_eq(ld64(&hd->refused), st.refused);
        cr_assert_eq(st.accepted + st.dropped, 405);
        uint32_t act = ld32(&hd->active);
        cr_assert_lt(act, hd->halves);
        switch (mode) {
            case TRACEC_BUFFERING_MODE_ONESHOT:
                cr_assert_gt(st.dropped, 0);
                cr_assert_eq(half_gen(m, 0), g0, "ONESHOT never resets a running half");
                cr_assert_eq(walk_half(m, 0, PK), st.accepted);
                break;
            case TRACEC_BUFFERING_MODE_CIRCULAR:
                cr_assert_gt(st.overwritten, 0);
                cr_assert(half_gen(m, 0) >= g0 + 2 && half_gen(m, 1) >= g1 + 2, "both halves were reset");
                /* What is left in the halves: the records not overwritten, all in current chunks. */
                cr_assert_eq(walk_half(m, 0, PK) + walk_half(m, 1, PK), st.accepted - st.overwritten);
                break;
            default:
                if (modes[i].policy == TRACEC_BUFFER_POLICY_LOSSLESS) {
                    cr_assert_eq(st.dropped, 0);
                    cr_assert_gt(st.half_switches, 2);
                    cr_assert(half_gen(m, 0) >= g0 + 2 && half_gen(m, 1) >= g1 + 2, "both halves were reset");
                }
                break;
        }
        for (uint32_t h = 0; h < hd->halves; h++) cr_assert_eq(half_gen(m, (int)h) % 2, g0 % 2);
        OK(tracec_destroy_buffer(b));
        munmap((void *)(uintptr_t)m, need);
        collector_forget(&c);
    }
    test_end();
}

/* A start with CLEAR_ENTIRE rewrites the durable part: its generation advances first. */
Test(buffer_memory, clearing_the_durable_part_advances_its_generation) {
    tracec_context_id_t ctx = started_context();
    collector c;
    collector_init(&c);
    size_t need = tracec_buffer_memory_size(TRACEC_BUFFERING_MODE_CIRCULAR, 4096, 0);
    int fd = make_memfd(need, F_SEAL_SHRINK);
    const uint8_t *m = reader_map(fd, need);
    tracec_buffer_config_t cfg = memfd_config(TRACEC_BUFFERING_MODE_CIRCULAR, TRACEC_BUFFER_POLICY_NONE, &c, fd);
    tracec_buffer_id_t b;
    OK(tracec_create_buffer_with_config(ctx, &cfg, &b));
    uint64_t dg = ld64(&hdr_of(m)->durable.gen), g0 = half_gen(m, 0);
    OK(tracec_buffer_emit(b, TRACEC_BUFFER_CATEGORY_TRACING, TRACEC_BUFFER_TRACING_INTERNED_DATA, probe, sizeof probe));
    OK(tracec_stop_context(ctx));
    tracec_start_options_t so = TRACEC_START_OPTIONS_INIT;
    OK(tracec_start_context_with_options(ctx, &so));
    cr_assert_eq(ld64(&hdr_of(m)->durable.gen), dg, "RETAIN keeps the durable part");
    OK(tracec_stop_context(ctx));
    so.disposition = TRACEC_BUFFER_DISPOSITION_CLEAR_ENTIRE;
    OK(tracec_start_context_with_options(ctx, &so));
    cr_assert_geq(ld64(&hdr_of(m)->durable.gen), dg + 2);
    cr_assert_geq(half_gen(m, 0), g0 + 2);
    cr_assert_eq(ld32(&hdr_of(m)->active), 0u);
    OK(tracec_destroy_buffer(b));
    munmap((void *)(uintptr_t)m, need);
    close(fd);
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
