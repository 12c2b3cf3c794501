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

/*
 * The fields of one message body p[0..end) of type `mi` (an index of
 * tracec_i_rec_schema; -1: no schema) at nesting level `depth`, as
 * tracec_wire_read_field reads them (the same limits and verdicts), with no
 * groups.  `s`: the packet's own level, whose field-10 fields are noted
 * (offsets from `base`).
 */
static bool message_ok(long mi, const uint8_t *p, const uint8_t *end, int depth, const char **why,
                       tracec_i_rec_scan *s, const uint8_t *base) {
    if (depth > TRACEC_I_REC_MAX_DEPTH) {
        *why = "messages nested deeper than the limit";
        return false;
    }
    const uint16_t *dense = g_dense != NULL && mi >= 0 ? g_dense + (size_t)mi * DENSE : NULL;
    while (p < end) {
        const uint8_t *start = p;
        uint64_t tag, v;
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
        v = 0;
        switch (tag & 7u) {
        case TRACEC_WIRE_VARINT: {
            tracec_varint_result vr = tracec_wire_read_varint(&p, end, &v);
            if (vr != TRACEC_VARINT_OK) {
                *why = vr == TRACEC_VARINT_TRUNCATED ? "truncated varint" : "varint longer than 10 bytes";
                return false;
            }
            break;
        }
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
            tracec_varint_result vr = tracec_wire_read_varint(&p, end, &len);
            if (vr != TRACEC_VARINT_OK || len > (uint64_t)(end - p)) {
                *why = vr == TRACEC_VARINT_TRUNCATED  ? "truncated length"
                       : vr == TRACEC_VARINT_TOO_LONG ? "length varint longer than 10 bytes"
                                                      : "length runs past the end of the enclosing message";
                return false;
            }
            const uint8_t *data = p;
            p += len;
            if (mi < 0) break;
            uint16_t a = dense != NULL && number < DENSE ? dense[number] : action_search((uint32_t)mi, number);
            if (a == 0) break; /* unknown, a string or bytes: well formed is enough */
            if (a & PACKED) {
                if (!packed_ok((int)(a & 7u), data, (size_t)len)) {
                    *why = "a packed field that does not split into whole elements";
                    return false;
                }
            } else if (!message_ok((long)a - 1, data, p, depth + 1, why, NULL, NULL)) {
                return false;
            }
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
        if (s != NULL && number == TRACEC_I_REC_SEQ_FIELD) {
            if (s->seq_fields < TRACEC_I_REC_SCAN_CUTS) {
                s->cut[2 * s->seq_fields] = (uint32_t)(start - base);
                s->cut[2 * s->seq_fields + 1] = (uint32_t)(p - base);
            }
            s->seq_fields++;
            if ((tag & 7u) == TRACEC_WIRE_VARINT) s->local = v;
        }
    }
    return true;
}

bool tracec_i_rec_packet_scan(const uint8_t *p, size_t n, tracec_i_rec_scan *s, const char **why) {
    const char *w = NULL;
    if (!__atomic_load_n(&g_dense_done, __ATOMIC_ACQUIRE)) (void)pthread_once(&g_dense_once, build_dense);
    s->local = 0;
    s->seq_fields = 0;
    bool ok = n <= UINT32_MAX && message_ok(tracec_i_rec_schema_count ? 0 : -1, p, p + n, 1, &w, s, p);
    if (!ok && why) *why = w ? w : "a packet over 4 GiB";
    return ok;
}

bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why) {
    tracec_i_rec_scan s;
    return tracec_i_rec_packet_scan(p, n, &s, why);
}
