/*
 * region.c - the recorder's reading side of the buffer engine's shared
 * layout (tracec/abi/shm_layout.h; tracec/recorder.h declares the calls):
 * the header check, the consistent copy of a region, and the walk of a
 * copy's blocks.  Everything read from a writer's memfd is hostile input.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record_check.h"
#include "record_seq.h"
#include "tracec/abi/record_protocol.h"
#include "tracec/abi/buffer_abi.h"
#include "tracec/recorder.h"
#include "tracec/trace_file.h"
#include "tracec/writer.h"

/* How many times a copy is tried while the writer keeps reusing the region. */
#define COPY_TRIES 16

/* ---- the geometry and the header ----------------------------------------------------- */

static bool geometry_ok(const tracec_recorder_shm_geometry *g) {
    if (g == NULL) return false;
    if (g->mode != TRACEC_BUFFERING_MODE_ONESHOT && g->mode != TRACEC_BUFFERING_MODE_CIRCULAR &&
        g->mode != TRACEC_BUFFERING_MODE_STREAMING)
        return false;
    if (g->halves != (g->mode == TRACEC_BUFFERING_MODE_ONESHOT ? 1u : 2u)) return false;
    return g->size > 0 && g->half_bytes >= g->size && g->half_bytes <= UINT32_MAX && g->half_bytes % 8u == 0 &&
           g->durable_bytes <= UINT32_MAX && g->durable_bytes % 8u == 0;
}

uint64_t tracec_recorder_shm_bytes(const tracec_recorder_shm_geometry *g) {
    if (!geometry_ok(g)) return 0;
    return TRACEC_SHM_HEADER_BYTES + (uint64_t)g->halves * g->half_bytes + g->durable_bytes;
}

/* Bytes of region r in geometry g (0: the geometry has no such region). */
static uint64_t region_bytes(const tracec_recorder_shm_geometry *g, uint32_t r) {
    if (r == TRACEC_RECORDER_REGION_DURABLE) return g->durable_bytes;
    return r < g->halves ? g->half_bytes : 0;
}

/* Byte offset of region r in the mapping. */
static uint64_t region_offset(const tracec_recorder_shm_geometry *g, uint32_t r) {
    uint32_t halves_before = r == TRACEC_RECORDER_REGION_DURABLE ? g->halves : r;
    return TRACEC_SHM_HEADER_BYTES + (uint64_t)halves_before * g->half_bytes;
}

static const tracec_shm_region *header_region(const tracec_shm_header *h, uint32_t r) {
    return r == TRACEC_RECORDER_REGION_DURABLE ? &h->durable : &h->half[r];
}

/* Clamps *v to max; true if it had to. */
static bool clamp32(uint32_t *v, uint64_t max) {
    if (*v <= max) return false;
    *v = (uint32_t)max;
    return true;
}

/* Clamps a byte count to max and down to a multiple of 8 (blocks are); true if it had to. */
static bool clamp_bytes(uint32_t *v, uint64_t max) {
    bool bad = clamp32(v, max);
    if (*v % TRACEC_I_BLK_ALIGN == 0) return bad;
    *v -= *v % TRACEC_I_BLK_ALIGN;
    return true;
}

tracec_status_t tracec_recorder_check_shm_header(const tracec_shm_header *copy, const tracec_recorder_shm_geometry *g,
                                                 tracec_recorder_shm_state *out, const char **why) {
    const char *w = NULL;
    if (why) *why = NULL;
    if (copy == NULL || out == NULL || !geometry_ok(g)) {
        if (why) *why = "a NULL pointer or a bad geometry";
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    memset(out, 0, sizeof *out);
    if (copy->magic != TRACEC_SHM_MAGIC) w = "not a shared buffer (magic)";
    else if (copy->version != TRACEC_SHM_VERSION) {
        if (why) *why = "another version of the shared layout";
        return TRACEC_STATUS_VERSION_MISMATCH;
    } else if (copy->header_bytes != TRACEC_SHM_HEADER_BYTES) w = "a header of another size";
    else if (copy->mode != g->mode) w = "another mode than agreed";
    else if (copy->halves != g->halves) w = "another number of halves than agreed";
    else if (copy->size != g->size || copy->half_bytes != g->half_bytes) w = "another half size than agreed";
    else if (copy->durable_bytes != g->durable_bytes) w = "another durable size than agreed";
    if (w) {
        if (why) *why = w;
        return TRACEC_STATUS_CORRUPT_DATA;
    }
    out->active = copy->active;
    if (out->active >= g->halves) {
        out->active = 0;
        out->clamped |= 1u << 3;
    }
    for (uint32_t r = 0; r < TRACEC_RECORDER_REGIONS; r++) {
        tracec_shm_region v = *header_region(copy, r);
        uint64_t cap = region_bytes(g, r);
        bool bad = false;
        if (v.handed != TRACEC_SHM_REGION_FREE && v.handed != TRACEC_SHM_REGION_HANDED) {
            v.handed = TRACEC_SHM_REGION_FREE;
            bad = true;
        }
        if (cap == 0 && (v.gen != 0 || v.handed != 0)) bad = true;
        if (cap == 0) v.gen = v.handed = 0;
        bad |= clamp_bytes(&v.extent, cap);
        bad |= clamp32(&v.blocks, v.extent / TRACEC_I_BLK_HDR);
        bad |= clamp_bytes(&v.reserved, cap);
        out->region[r] = v;
        if (v.handed == TRACEC_SHM_REGION_HANDED) out->handed |= 1u << r;
        if (bad) out->clamped |= 1u << r;
    }
    out->accepted = copy->accepted;
    out->dropped = copy->dropped;
    out->overwritten = copy->overwritten;
    out->refused = copy->refused;
    return TRACEC_STATUS_SUCCESS;
}

/* ---- the copy ------------------------------------------------------------------------ */

/*
 * A salvage copy, while writers may still be at work (a provider that did
 * not stop in time): forward, with acquire loads, so each chunk's committed
 * length is read before the bytes it covers, which its writer stored
 * before it.  memcpy may read the end of a range first (glibc loads the
 * last vectors before the loop): a committed length read after them could
 * cover bytes copied before they were written.
 */
static void copy_in_order(uint8_t *dst, const uint8_t *src, size_t n) {
    size_t i = 0;
    for (; i < n && ((uintptr_t)(src + i) & 7u) != 0; i++) dst[i] = __atomic_load_n(src + i, __ATOMIC_ACQUIRE);
    for (; i + 8 <= n; i += 8) {
        uint64_t v = __atomic_load_n((const uint64_t *)(const void *)(src + i), __ATOMIC_ACQUIRE);
        memcpy(dst + i, &v, 8);
    }
    for (; i < n; i++) dst[i] = __atomic_load_n(src + i, __ATOMIC_ACQUIRE);
}

tracec_status_t tracec_recorder_copy_region(const void *map, size_t map_size, const tracec_recorder_shm_geometry *g,
                                            uint32_t r, bool salvage, uint64_t from_gen, uint32_t from, void *dst,
                                            size_t cap, tracec_recorder_region_copy *out) {
    if (out) memset(out, 0, sizeof *out);
    uint64_t need = tracec_recorder_shm_bytes(g);
    if (map == NULL || dst == NULL || out == NULL || need == 0 || map_size < need || r >= TRACEC_RECORDER_REGIONS)
        return TRACEC_STATUS_INVALID_ARGUMENT;
    uint64_t size = region_bytes(g, r);
    if (size == 0 || cap < size) return TRACEC_STATUS_INVALID_ARGUMENT;
    const tracec_shm_region *live = header_region((const tracec_shm_header *)map, r);
    const uint8_t *src = (const uint8_t *)map + region_offset(g, r);
#ifdef MADV_POPULATE_READ
    bool populated = false;
#endif
    for (int attempt = 0; attempt < COPY_TRIES; attempt++) {
        uint64_t gen = __atomic_load_n(&live->gen, __ATOMIC_ACQUIRE);
        uint32_t extent = salvage ? __atomic_load_n(&live->reserved, __ATOMIC_RELAXED)
                                  : __atomic_load_n(&live->extent, __ATOMIC_ACQUIRE);
        (void)clamp_bytes(&extent, size);
        uint32_t start = gen == from_gen ? from : 0;
#ifdef MADV_POPULATE_READ
        /* the pages to copy mapped in one call, not one page fault each (a hint: a failure changes nothing) */
        if (!populated && start < extent) {
            uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = ((uintptr_t)src + start) & ~(page - 1u);
            (void)madvise((void *)a, (uintptr_t)src + extent - a, MADV_POPULATE_READ);
            populated = true;
        }
#endif
        if (start <= extent) {
            if (salvage)
                copy_in_order(dst, src + start, extent - start);
            else /* handed: its writers are done with it */
                memcpy(dst, src + start, extent - start);
        }
        TRACEC_I_REC_FENCE(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&live->gen, __ATOMIC_RELAXED) != gen) continue; /* reused under us */
        out->gen = gen;
        if (start > extent) {
            out->from = out->extent = start;
            return TRACEC_STATUS_CORRUPT_DATA;
        }
        out->from = start;
        out->extent = extent;
        out->len = extent - start;
        /* the durable packet being written at the hint, if any (the durable part has no chunks: a packet
           begun there is marked at the hint itself, never after a committed length) */
        if (salvage && r == TRACEC_RECORDER_REGION_DURABLE && (uint64_t)extent + TRACEC_I_BLK_HDR <= size) {
            const uint32_t *h = (const uint32_t *)(const void *)(src + extent);
            out->open = __atomic_load_n(&h[0], __ATOMIC_ACQUIRE) == 0 &&
                        __atomic_load_n(&h[1], __ATOMIC_ACQUIRE) == TRACEC_I_OPEN_MARK;
        }
        return TRACEC_STATUS_SUCCESS;
    }
    return TRACEC_STATUS_BAD_STATE;
}

/* ---- the walk ------------------------------------------------------------------------ */

typedef struct walk {
    const uint8_t *base;
    bool check; /* the walk checks each payload; else the callback does (CORRUPT_DATA: a bad record) */
    tracec_recorder_packet_fn fn;
    void *data;
    tracec_recorder_region_result *out;
    tracec_i_rec_saver *sv; /* not NULL: each record is saved there (tracec_i_rec_save_region), not handed to fn */
} walk;

static tracec_status_t stop(walk *k, const uint8_t *at, uint64_t *count, const char *why, tracec_status_t st) {
    *count = 1;
    k->out->end = (size_t)(at - k->base);
    k->out->why = why;
    return st;
}

/* The header at p (any alignment). */
static tracec_i_blk header_at(const uint8_t *p) {
    tracec_i_blk b;
    memcpy(&b, p, sizeof b);
    return b;
}

static bool all_zero(const tracec_i_blk *b) { return b->body == 0 && b->size == 0 && b->category == 0 && b->kind == 0; }

/* Checks the block (or record) at p with `rest` bytes left: NULL if its header is sound, else why not. */
static const char *block_bad(const tracec_i_blk *b, size_t rest) {
    if (rest < TRACEC_I_BLK_HDR) return "a block header cut short";
    if (b->body % TRACEC_I_BLK_ALIGN != 0) return "a block body that is not a multiple of 8";
    if (b->body > rest - TRACEC_I_BLK_HDR) return "a block that runs past the region";
    return NULL;
}

/* A record's payload saved to sv: the packet inside when it is one Trace.packet field.  A record the sequence
   map refuses (LIMIT_EXCEEDED, counted by the map) or the trace file has no room for (counted in
   sv->over_size) is skipped. */
static tracec_status_t save(tracec_i_rec_saver *sv, const uint8_t *packet, size_t size) {
    packet = tracec_i_rec_unwrap(packet, &size);
    uint64_t refused = tracec_trace_file_dropped(sv->out);
    tracec_status_t st = tracec_i_rec_save_packet(sv->out, sv->map, sv->next, packet, size, sv->pid, sv->uid,
                                                  sv->mark, &sv->why);
    if (st == TRACEC_STATUS_LIMIT_EXCEEDED) {
        sv->over_size += tracec_trace_file_dropped(sv->out) - refused;
        return TRACEC_STATUS_SUCCESS;
    }
    if (st == TRACEC_STATUS_SUCCESS) sv->delivered++;
    return st;
}

/* The record with header b at p (its header checked): checked and handed, or skipped when empty. */
static tracec_status_t record(walk *k, const tracec_i_blk *b, const uint8_t *p) {
    const char *why = NULL;
    if (b->size > b->body) return stop(k, p, &k->out->corrupt, "a record larger than its block", TRACEC_STATUS_CORRUPT_DATA);
    if (b->size > TRACEC_MAX_NESTED_SIZE)
        return stop(k, p, &k->out->corrupt, "a record over the size limit", TRACEC_STATUS_CORRUPT_DATA);
    if (b->size == 0) {
        k->out->empty++;
        return TRACEC_STATUS_SUCCESS;
    }
    const uint8_t *payload = p + TRACEC_I_BLK_HDR;
    if (k->check && !tracec_i_rec_packet_ok(payload, b->size, &why))
        return stop(k, p, &k->out->corrupt, why, TRACEC_STATUS_CORRUPT_DATA);
    tracec_status_t st = k->sv ? save(k->sv, payload, b->size) : k->fn(k->data, payload, b->size, b->category, b->kind);
    if (st == TRACEC_STATUS_CORRUPT_DATA && !k->check)
        return stop(k, p, &k->out->corrupt, "a record that fails the record check", st);
    if (st != TRACEC_STATUS_SUCCESS) {
        k->out->end = (size_t)(p - k->base);
        return st;
    }
    k->out->records++;
    k->out->bytes += b->size;
    return TRACEC_STATUS_SUCCESS;
}

/* The records of a chunk whose body is body[0..committed) of body_bytes; a record header marked open after
   them is counted (out->open). */
static tracec_status_t chunk(walk *k, const uint8_t *body, uint32_t committed, uint32_t body_bytes) {
    size_t off = 0;
    while (off < committed) {
        if (k->sv) { /* the usual records, one after the other; the general path from the first other one */
            tracec_status_t st;
            off += tracec_i_rec_save_run(k->sv, body + off, committed - off, k->out, &st);
            if (st != TRACEC_STATUS_SUCCESS) {
                k->out->end = (size_t)(body + off - k->base);
                return st;
            }
            if (off >= committed) break;
        }
        const uint8_t *p = body + off;
        size_t rest = committed - off;
        if (rest < TRACEC_I_BLK_HDR)
            return stop(k, p, &k->out->corrupt, "a record header cut short in a chunk", TRACEC_STATUS_CORRUPT_DATA);
        tracec_i_blk b = header_at(p);
        const char *why = block_bad(&b, rest);
        if (why) return stop(k, p, &k->out->corrupt, why, TRACEC_STATUS_CORRUPT_DATA);
        tracec_status_t st = record(k, &b, p);
        if (st != TRACEC_STATUS_SUCCESS) return st;
        off += TRACEC_I_BLK_HDR + (size_t)b.body;
    }
    if (body_bytes - committed >= TRACEC_I_BLK_HDR) { /* the packet its writer was writing, if any */
        tracec_i_blk h = header_at(body + committed);
        if (h.body == 0 && h.size == TRACEC_I_OPEN_MARK) k->out->open++;
    }
    return TRACEC_STATUS_SUCCESS;
}

static tracec_status_t walk_region(walk k, size_t extent, uint64_t gen, bool durable);

tracec_status_t tracec_i_rec_walk_region(const void *region, size_t extent, uint64_t gen, bool durable, bool check,
                                        tracec_recorder_packet_fn fn, void *data,
                                        tracec_recorder_region_result *out) {
    if (out) memset(out, 0, sizeof *out);
    if ((region == NULL && extent > 0) || fn == NULL || out == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    return walk_region((walk){(const uint8_t *)region, check, fn, data, out, NULL}, extent, gen, durable);
}

tracec_status_t tracec_i_rec_save_region(const void *region, size_t extent, uint64_t gen, bool durable,
                                         tracec_i_rec_saver *sv, tracec_recorder_region_result *out) {
    if (out) memset(out, 0, sizeof *out);
    if ((region == NULL && extent > 0) || sv == NULL || out == NULL) return TRACEC_STATUS_INVALID_ARGUMENT;
    return walk_region((walk){(const uint8_t *)region, false, NULL, NULL, out, sv}, extent, gen, durable);
}

static tracec_status_t walk_region(walk k, size_t extent, uint64_t gen, bool durable) {
    tracec_recorder_region_result *out = k.out;
    const uint32_t tag = TRACEC_SHM_CHUNK_TAG(gen);
    size_t off = 0;
    /* each step moves at least 16 bytes on: at most extent / 16 steps, chunks' records included */
    while (off < extent) {
        const uint8_t *p = k.base + off;
        size_t rest = extent - off;
        if (rest < TRACEC_I_BLK_HDR)
            return stop(&k, p, &out->corrupt, "a block header cut short", TRACEC_STATUS_CORRUPT_DATA);
        tracec_i_blk b = header_at(p);
        if (all_zero(&b)) return stop(&k, p, &out->unwritten, "a block never written", TRACEC_STATUS_SUCCESS);
        const char *why = block_bad(&b, rest);
        if (why) return stop(&k, p, &out->corrupt, why, TRACEC_STATUS_CORRUPT_DATA);
        tracec_status_t st;
        if (b.size == TRACEC_I_CHUNK_MARK) {
            if (durable)
                return stop(&k, p, &out->corrupt, "a chunk in the durable part", TRACEC_STATUS_CORRUPT_DATA);
            if (b.kind != tag)
                return stop(&k, p, &out->stale, "a chunk of another generation", TRACEC_STATUS_SUCCESS);
            if (b.committed > b.body)
                return stop(&k, p, &out->corrupt, "a chunk committed past its body", TRACEC_STATUS_CORRUPT_DATA);
            st = chunk(&k, p + TRACEC_I_BLK_HDR, b.committed, b.body);
        } else {
            st = record(&k, &b, p);
        }
        if (st != TRACEC_STATUS_SUCCESS) return st;
        out->blocks++;
        off += TRACEC_I_BLK_HDR + (size_t)b.body;
    }
    out->end = extent;
    return TRACEC_STATUS_SUCCESS;
}

tracec_status_t tracec_recorder_read_region(const void *region, size_t extent, uint64_t gen, bool durable,
                                            tracec_recorder_packet_fn fn, void *data,
                                            tracec_recorder_region_result *out) {
    return tracec_i_rec_walk_region(region, extent, gen, durable, true, fn, data, out);
}
