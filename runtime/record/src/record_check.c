/*
 * record_check.c - the recorder's check of a record read from a provider's
 * shared buffer (record_check.h).
 *
 * One pass over each level: a field's key, its value or length, and for a
 * length-delimited field the action tracec's schema asks for (follow a
 * message, split a packed run, nothing).  The action of a field number
 * below DENSE is a table look-up (built once from the generated schema);
 * larger numbers (extensions, mostly unknown) are searched.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record_check.h"
#include "record_seq.h"
#include "tracec/abi/hints.h"
#include "tracec/wire.h"

/* ---- the schema's actions on a length-delimited field ------------------------------------ */

/* Field numbers below this have their action in a table per message type. */
#define DENSE 128u
/* An action: 0 nothing; 1 .. 0x7fff follow the message type of that index + 1; PACKED | wire type: split it. */
#define PACKED 0x8000u

static uint16_t *g_dense; /* tracec_i_rec_schema_count rows of DENSE actions; NULL: search every time */
static pthread_once_t g_dense_once = PTHREAD_ONCE_INIT;
static int g_dense_done; /* build_dense ran (then g_dense is final) */

static uint16_t action_of(const tracec_i_rec_field *d) {
    if (d->message && d->wire_type == TRACEC_WIRE_LEN) return d->message;
    if (d->packable) return (uint16_t)(PACKED | d->wire_type);
    return 0;
}

static void build_dense(void) {
    uint32_t n = tracec_i_rec_schema_count;
    uint16_t *t = n ? calloc((size_t)n * DENSE, sizeof *t) : NULL;
    if (t == NULL) return;
    for (uint32_t i = 0; i < n; i++) {
        const tracec_i_rec_message *m = &tracec_i_rec_schema[i];
        for (uint32_t k = 0; k < m->field_count; k++)
            if (m->fields[k].number < DENSE) t[i * DENSE + m->fields[k].number] = action_of(&m->fields[k]);
    }
    g_dense = t;
    __atomic_store_n(&g_dense_done, 1, __ATOMIC_RELEASE);
}

/* The action on LEN field `number` of message type `mi` (an index of tracec_i_rec_schema). */
static uint16_t action_search(uint32_t mi, uint32_t number) {
    const tracec_i_rec_message *m = &tracec_i_rec_schema[mi];
    size_t lo = 0, hi = m->field_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->fields[mid].number < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->field_count && m->fields[lo].number == number ? action_of(&m->fields[lo]) : 0;
}

/* ---- records ----------------------------------------------------------------------------- */

/* Whether a packed run splits into whole elements of wire type `wt`. */
static bool packed_ok(int wt, const uint8_t *p, size_t n) {
    const uint8_t *end = p + n;
    if (wt == TRACEC_WIRE_FIXED32) return n % 4 == 0;
    if (wt == TRACEC_WIRE_FIXED64) return n % 8 == 0;
    while (p < end) {
        uint64_t v;
        if (tracec_wire_read_varint(&p, end, &v) != TRACEC_VARINT_OK) return false;
    }
    return true;
}

/* The end of the varint at p, which has at least 10 bytes after it; NULL if it is longer than 10 bytes. */
static inline const uint8_t *skip_varint10(const uint8_t *p) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, p, 8);
    uint64_t last = ~x & UINT64_C(0x8080808080808080); /* the bytes without a continuation bit */
    if (last != 0) return p + (unsigned)__builtin_ctzll(last) / 8u + 1u;
    if (p[8] < 0x80u) return p + 9;
    return p[9] < 0x80u ? p + 10 : NULL;
#else
    for (int i = 0; i < 10; i++)
        if (p[i] < 0x80u) return p + i + 1;
    return NULL;
#endif
}

/* A message the check is inside of while it reads one nested in it. */
typedef struct level {
    const uint8_t *end;
    const uint16_t *dense;
    long mi;
} level;

/* The action table of message type mi (an index of tracec_i_rec_schema; -1: no schema), or NULL: search. */
static const uint16_t *dense_of(long mi) { return g_dense != NULL && mi >= 0 ? g_dense + (size_t)mi * DENSE : NULL; }

/*
 * The packet p[0..end) and every message nested in it, as
 * tracec_wire_read_field reads each level (the same limits and verdicts),
 * with no groups, following the schema's messages at most
 * TRACEC_I_REC_MAX_DEPTH levels deep (the packet is level 1): one loop and
 * a stack of the levels it is inside of, no call per message.  The
 * packet's own field-10 fields are noted in *s.
 */
static bool packet_check(const uint8_t *p, const uint8_t *end, const char **why, tracec_i_rec_scan *s) {
    const uint8_t *const base = p;
    level up[TRACEC_I_REC_MAX_DEPTH];
    int depth = 1;
    long mi = tracec_i_rec_schema_count ? 0 : -1;
    const uint16_t *dense = dense_of(mi);
    for (;;) {
        if (p >= end) {
            if (depth == 1) return true;
            depth--;
            end = up[depth - 1].end;
            dense = up[depth - 1].dense;
            mi = up[depth - 1].mi;
            continue;
        }
        const uint8_t *start = p;
        uint64_t tag, v = 0;
        if (TRACEC_I_LIKELY(*p < 0x80u)) {
            tag = *p++;
        } else {
            tracec_varint_result vr = tracec_wire_read_varint(&p, end, &tag);
            if (vr != TRACEC_VARINT_OK || tag > UINT32_MAX) {
                *why = vr == TRACEC_VARINT_TRUNCATED ? "truncated tag" : "invalid tag";
                return false;
            }
        }
        uint32_t number = (uint32_t)(tag >> 3);
        if (TRACEC_I_UNLIKELY(number == 0)) {
            *why = "invalid field number 0";
            return false;
        }
        const uint8_t *data = NULL;
        uint16_t a = 0;
        switch (tag & 7u) {
        case TRACEC_WIRE_VARINT:
            if (TRACEC_I_LIKELY(p < end && *p < 0x80u)) {
                v = *p++;
            } else if (!(depth == 1 && number == TRACEC_I_REC_SEQ_FIELD) && end - p >= 10) {
                /* a value nobody reads (a timestamp: 9 bytes): only where it ends */
                p = skip_varint10(p);
                if (p == NULL) {
                    *why = "varint longer than 10 bytes";
                    return false;
                }
            } else {
                tracec_varint_result vr = tracec_wire_read_varint(&p, end, &v);
                if (vr != TRACEC_VARINT_OK) {
                    *why = vr == TRACEC_VARINT_TRUNCATED ? "truncated varint" : "varint longer than 10 bytes";
                    return false;
                }
            }
            break;
        case TRACEC_WIRE_FIXED64:
            if ((size_t)(end - p) < 8u) {
                *why = "truncated fixed64 value";
                return false;
            }
            p += 8;
            break;
        case TRACEC_WIRE_FIXED32:
            if ((size_t)(end - p) < 4u) {
                *why = "truncated fixed32 value";
                return false;
            }
            p += 4;
            break;
        case TRACEC_WIRE_LEN: {
            uint64_t len;
            if (TRACEC_I_LIKELY(p < end && *p < 0x80u)) {
                len = *p++;
            } else {
                tracec_varint_result vr = tracec_wire_read_varint(&p, end, &len);
                if (vr != TRACEC_VARINT_OK) {
                    *why = vr == TRACEC_VARINT_TRUNCATED ? "truncated length" : "length varint longer than 10 bytes";
                    return false;
                }
            }
            if (len > (uint64_t)(end - p)) {
                *why = "length runs past the end of the enclosing message";
                return false;
            }
            data = p;
            p += len;
            if (mi >= 0) a = dense != NULL && number < DENSE ? dense[number] : action_search((uint32_t)mi, number);
            break;
        }
        case TRACEC_WIRE_SGROUP:
        case TRACEC_WIRE_EGROUP:
            *why = "a group";
            return false;
        default:
            *why = "invalid wire type";
            return false;
        }
        if (depth == 1 && number == TRACEC_I_REC_SEQ_FIELD) {
            if (s->seq_fields < TRACEC_I_REC_SCAN_CUTS) {
                s->cut[2 * s->seq_fields] = (uint32_t)(start - base);
                s->cut[2 * s->seq_fields + 1] = (uint32_t)(p - base);
            }
            s->seq_fields++;
            if ((tag & 7u) == TRACEC_WIRE_VARINT) s->local = v;
        }
        if (a == 0) continue; /* unknown, a scalar, a string or bytes: well formed is enough */
        if (a & PACKED) {
            if (!packed_ok((int)(a & 7u), data, (size_t)(p - data))) {
                *why = "a packed field that does not split into whole elements";
                return false;
            }
            continue;
        }
        /* a message: its fields next, then the rest of this one */
        if (depth >= TRACEC_I_REC_MAX_DEPTH) {
            *why = "messages nested deeper than the limit";
            return false;
        }
        up[depth - 1] = (level){end, dense, mi};
        depth++;
        end = p;
        p = data;
        mi = (long)a - 1;
        dense = dense_of(mi);
    }
}

bool tracec_i_rec_packet_scan(const uint8_t *p, size_t n, tracec_i_rec_scan *s, const char **why) {
    const char *w = NULL;
    if (!__atomic_load_n(&g_dense_done, __ATOMIC_ACQUIRE)) (void)pthread_once(&g_dense_once, build_dense);
    s->local = 0;
    s->seq_fields = 0;
    bool ok = n <= UINT32_MAX && packet_check(p, p + n, &w, s);
    if (!ok && why) *why = w ? w : "a packet over 4 GiB";
    return ok;
}

bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why) {
    tracec_i_rec_scan s;
    return tracec_i_rec_packet_scan(p, n, &s, why);
}
