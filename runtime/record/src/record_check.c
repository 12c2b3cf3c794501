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

/*
 * What a one-byte tag (fields 1 to 15) asks of the check, per message type:
 * the class in the top 3 bits, and for a message its type's index or for a
 * packed run its elements' wire type in the rest; C_SEQ is the packet's
 * own field 10 as a varint.  SLOW (0) is every other case: a field number
 * 0, a group, an invalid wire type, field 10 of the packet as another wire
 * type; the general path reads those.
 */
enum { SLOW = 0, C_VARINT, C_FIXED64, C_FIXED32, C_LEN, C_MSG, C_PACKED, C_SEQ };
#define CLASS_SHIFT 13u
#define INDEX_MASK 0x1fffu

static uint16_t *g_dense; /* tracec_i_rec_schema_count rows of DENSE actions; NULL: search every time */
/* Per message type (with g_dense): 1 if a field numbered DENSE or more has an action, so its number is searched;
   0: such a number has none (an extension, an unknown field), no search */
static uint8_t *g_far;
/* tracec_i_rec_schema_count + 1 rows of 256 classes, one per first byte of a tag (the last row: the packet itself,
   at depth 1; a byte with its continuation bit is SLOW); NULL: none */
static uint16_t *g_tag1;
static const uint16_t g_slow_row[256]; /* all SLOW */
static pthread_once_t g_dense_once = PTHREAD_ONCE_INIT;
static int g_dense_done; /* build_dense ran (then g_dense and g_tag1 are final) */

static uint16_t action_of(const tracec_i_rec_field *d) {
    if (d->message && d->wire_type == TRACEC_WIRE_LEN) return d->message;
    if (d->packable) return (uint16_t)(PACKED | d->wire_type);
    return 0;
}

/* The class of one-byte tag t in message type m whose LEN actions are dense[] (root: the packet at depth 1). */
static uint16_t tag1_class(const uint16_t *dense, unsigned t, bool root) {
    unsigned number = t >> 3, wt = t & 7u;
    if (root && number == TRACEC_I_REC_SEQ_FIELD)
        return wt == TRACEC_WIRE_VARINT ? (uint16_t)(C_SEQ << CLASS_SHIFT) : (uint16_t)SLOW;
    if (number == 0) return SLOW;
    switch (wt) {
    case TRACEC_WIRE_VARINT: return (uint16_t)(C_VARINT << CLASS_SHIFT);
    case TRACEC_WIRE_FIXED64: return (uint16_t)(C_FIXED64 << CLASS_SHIFT);
    case TRACEC_WIRE_FIXED32: return (uint16_t)(C_FIXED32 << CLASS_SHIFT);
    case TRACEC_WIRE_LEN: {
        uint16_t a = dense[number];
        if (a == 0) return (uint16_t)(C_LEN << CLASS_SHIFT);
        if (a & PACKED) return (uint16_t)((C_PACKED << CLASS_SHIFT) | (a & 7u));
        return (uint16_t)((C_MSG << CLASS_SHIFT) | (uint16_t)(a - 1u));
    }
    default: return SLOW;
    }
}

static void build_dense(void) {
    uint32_t n = tracec_i_rec_schema_count;
    uint16_t *t = n ? calloc((size_t)n * DENSE, sizeof *t) : NULL;
    uint8_t *far = n ? calloc(n, 1) : NULL;
    if (t == NULL || far == NULL) {
        free(t);
        free(far);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        const tracec_i_rec_message *m = &tracec_i_rec_schema[i];
        for (uint32_t k = 0; k < m->field_count; k++) {
            if (m->fields[k].number < DENSE)
                t[i * DENSE + m->fields[k].number] = action_of(&m->fields[k]);
            else if (action_of(&m->fields[k]) != 0)
                far[i] = 1;
        }
    }
    g_far = far;
    uint16_t *c = n <= INDEX_MASK + 1u ? calloc((size_t)(n + 1u) * 256u, sizeof *c) : NULL;
    for (uint32_t i = 0; c != NULL && i <= n; i++) {
        const uint16_t *actions = t + (size_t)(i < n ? i : 0) * DENSE; /* the packet's row: TracePacket's actions */
        for (unsigned b = 0; b < 128u; b++) c[(size_t)i * 256u + b] = tag1_class(actions, b, i == n);
    }
    g_dense = t;
    g_tag1 = c;
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
    const uint16_t *dense, *row;
    long mi;
} level;

/* The action table of message type mi (an index of tracec_i_rec_schema; -1: no schema), or NULL: search. */
static const uint16_t *dense_of(long mi) { return g_dense != NULL && mi >= 0 ? g_dense + (size_t)mi * DENSE : NULL; }

/* The one-byte tag classes of message type mi (-1: no schema; tracec_i_rec_schema_count: the packet itself). */
static const uint16_t *row_of(long mi) { return g_tag1 != NULL && mi >= 0 ? g_tag1 + (size_t)mi * 256u : g_slow_row; }

/* Reads a length at *pp (end - *pp > 0 or not): false, with *why, if it is bad or runs past end. */
static inline bool read_len(const uint8_t **pp, const uint8_t *end, uint64_t *len, const char **why) {
    const uint8_t *p = *pp;
    if (TRACEC_I_LIKELY(p < end && *p < 0x80u)) {
        *len = *p++;
    } else {
        tracec_varint_result vr = tracec_wire_read_varint(&p, end, len);
        if (vr != TRACEC_VARINT_OK) {
            *why = vr == TRACEC_VARINT_TRUNCATED ? "truncated length" : "length varint longer than 10 bytes";
            return false;
        }
    }
    if (*len > (uint64_t)(end - p)) {
        *why = "length runs past the end of the enclosing message";
        return false;
    }
    *pp = p;
    return true;
}

/* Reads the varint value at *pp into *v: false, with *why, if it is cut short or longer than 10 bytes. */
static inline bool read_value(const uint8_t **pp, const uint8_t *end, uint64_t *v, const char **why) {
    tracec_varint_result vr = tracec_wire_read_varint(pp, end, v);
    if (TRACEC_I_LIKELY(vr == TRACEC_VARINT_OK)) return true;
    *why = vr == TRACEC_VARINT_TRUNCATED ? "truncated varint" : "varint longer than 10 bytes";
    return false;
}

/* Steps over the varint value at *pp whose value nobody reads (a timestamp: 9 bytes): false, with *why, if bad. */
static inline bool skip_varint(const uint8_t **pp, const uint8_t *end, const char **why) {
    if (end - *pp < 10) { /* fewer than 10 bytes left: it ends in them or it is cut short */
        for (const uint8_t *q = *pp; q < end; q++) {
            if (*q < 0x80u) {
                *pp = q + 1;
                return true;
            }
        }
        *why = "truncated varint";
        return false;
    }
    const uint8_t *p = skip_varint10(*pp);
    if (p == NULL) {
        *why = "varint longer than 10 bytes";
        return false;
    }
    *pp = p;
    return true;
}

/* Steps over a fixed64 (n 8) or fixed32 (n 4) value at *pp: false, with *why, if it is cut short. */
static inline bool skip_fixed(const uint8_t **pp, const uint8_t *end, size_t n, const char **why) {
    if ((size_t)(end - *pp) < n) {
        *why = n == 8u ? "truncated fixed64 value" : "truncated fixed32 value";
        return false;
    }
    *pp += n;
    return true;
}

/* Notes a field-10 field of the packet at [start, end) (byte offsets). */
static inline void note_seq(tracec_i_rec_scan *s, uint32_t start, uint32_t end) {
    if (s->seq_fields < TRACEC_I_REC_SCAN_CUTS) {
        s->cut[2 * s->seq_fields] = start;
        s->cut[2 * s->seq_fields + 1] = end;
    }
    s->seq_fields++;
}

/*
 * The packet p[0..end) and every message nested in it, as
 * tracec_wire_read_field reads each level (the same limits and verdicts),
 * with no groups, following the schema's messages at most
 * TRACEC_I_REC_MAX_DEPTH levels deep (the packet is level 1): one loop and
 * a stack of the levels it is inside of, no call per message.  A field
 * with a one-byte tag takes its class from the level's row (one load), the
 * others the general path.  The packet's own field-10 fields are noted in
 * *s.
 */
static inline TRACEC_I_ALWAYS_INLINE bool packet_check(const uint8_t *p, const uint8_t *end, const char **why,
                                                      tracec_i_rec_scan *s) {
    const uint8_t *const base = p;
    level up[TRACEC_I_REC_MAX_DEPTH];
    int depth = 1;
    long mi = tracec_i_rec_schema_count ? 0 : -1;
    const uint16_t *dense = dense_of(mi), *row = row_of(mi < 0 ? -1 : (long)tracec_i_rec_schema_count);
    for (;;) {
        while (TRACEC_I_LIKELY(p < end)) {
            uint16_t e = row[*p];
            const uint8_t *data;
            uint64_t len;
            uint16_t a;
            switch (e >> CLASS_SHIFT) {
            case C_VARINT:
                if (TRACEC_I_LIKELY(end - p > 1 && p[1] < 0x80u)) {
                    p += 2;
                    continue;
                }
                p++;
                if (!skip_varint(&p, end, why)) return false;
                continue;
            case C_FIXED64:
                p++;
                if (!skip_fixed(&p, end, 8u, why)) return false;
                continue;
            case C_FIXED32:
                p++;
                if (!skip_fixed(&p, end, 4u, why)) return false;
                continue;
            case C_LEN:
                p++;
                if (!read_len(&p, end, &len, why)) return false;
                p += len;
                continue;
            case C_PACKED:
                p++;
                if (!read_len(&p, end, &len, why)) return false;
                if (!packed_ok((int)(e & 7u), p, (size_t)len)) {
                    *why = "a packed field that does not split into whole elements";
                    return false;
                }
                p += len;
                continue;
            case C_SEQ: {
                const uint8_t *start = p++;
                uint64_t v;
                if (TRACEC_I_LIKELY(p < end && *p < 0x80u))
                    v = *p++;
                else if (!read_value(&p, end, &v, why))
                    return false;
                note_seq(s, (uint32_t)(start - base), (uint32_t)(p - base));
                s->local = v;
                continue;
            }
            case C_MSG:
                p++;
                if (!read_len(&p, end, &len, why)) return false;
                if (TRACEC_I_UNLIKELY(depth >= TRACEC_I_REC_MAX_DEPTH)) {
                    *why = "messages nested deeper than the limit";
                    return false;
                }
                /* a class from a row: the tables exist, and the type's rows are at its index */
                up[depth - 1] = (level){end, dense, row, mi};
                depth++;
                end = p + len;
                mi = (long)(e & INDEX_MASK);
                dense = g_dense + (size_t)mi * DENSE;
                row = g_tag1 + (size_t)mi * 256u;
                continue;
            default:
                break;
            }
            /* the general path: any tag */
            const uint8_t *start = p;
            uint64_t tag, v = 0;
            if (TRACEC_I_LIKELY(*p < 0x80u)) {
                tag = *p++;
            } else if (end - p >= 2 && p[1] < 0x80u) { /* fields 16 to 2047 */
                tag = (uint64_t)(p[0] & 0x7fu) | (uint64_t)p[1] << 7;
                p += 2;
            } else if (end - p >= 3 && p[1] >= 0x80u && p[2] < 0x80u) { /* to 262143: extensions */
                tag = (uint64_t)(p[0] & 0x7fu) | (uint64_t)(p[1] & 0x7fu) << 7 | (uint64_t)p[2] << 14;
                p += 3;
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
            bool seq = depth == 1 && number == TRACEC_I_REC_SEQ_FIELD;
            data = NULL;
            a = 0;
            switch (tag & 7u) {
            case TRACEC_WIRE_VARINT:
                if (!(seq ? read_value(&p, end, &v, why) : skip_varint(&p, end, why))) return false;
                break;
            case TRACEC_WIRE_FIXED64:
                if (!skip_fixed(&p, end, 8u, why)) return false;
                break;
            case TRACEC_WIRE_FIXED32:
                if (!skip_fixed(&p, end, 4u, why)) return false;
                break;
            case TRACEC_WIRE_LEN:
                if (!read_len(&p, end, &len, why)) return false;
                data = p;
                p += len;
                /* a number past the table is searched only where the type has such a field with an action */
                if (mi >= 0 && dense != NULL && number < DENSE)
                    a = dense[number];
                else if (mi >= 0 && (dense == NULL || g_far[mi]))
                    a = action_search((uint32_t)mi, number);
                break;
            case TRACEC_WIRE_SGROUP:
            case TRACEC_WIRE_EGROUP:
                *why = "a group";
                return false;
            default:
                *why = "invalid wire type";
                return false;
            }
            if (seq) {
                note_seq(s, (uint32_t)(start - base), (uint32_t)(p - base));
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
            /* a message (type a - 1) at data[0..p): its fields next, then the rest of this one */
            if (depth >= TRACEC_I_REC_MAX_DEPTH) {
                *why = "messages nested deeper than the limit";
                return false;
            }
            up[depth - 1] = (level){end, dense, row, mi};
            depth++;
            end = p;
            p = data;
            mi = (long)a - 1;
            dense = dense_of(mi);
            row = row_of(mi);
        }
        if (depth == 1) return true;
        depth--;
        end = up[depth - 1].end;
        dense = up[depth - 1].dense;
        row = up[depth - 1].row;
        mi = up[depth - 1].mi;
    }
}

bool tracec_i_rec_packet_scan(const uint8_t *p, size_t n, tracec_i_rec_scan *s, const char **why) {
    const char *w = NULL;
    if (TRACEC_I_UNLIKELY(!__atomic_load_n(&g_dense_done, __ATOMIC_ACQUIRE))) (void)pthread_once(&g_dense_once, build_dense);
    s->local = 0;
    s->seq_fields = 0;
    if (TRACEC_I_UNLIKELY(n > UINT32_MAX)) {
        if (why) *why = "a packet over 4 GiB";
        return false;
    }
    if (TRACEC_I_LIKELY(packet_check(p, p + n, &w, s))) return true; /* inlined: one call per packet */
    if (why) *why = w;
    return false;
}

bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why) {
    tracec_i_rec_scan s;
    return tracec_i_rec_packet_scan(p, n, &s, why);
}
