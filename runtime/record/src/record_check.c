/*
 * record_check.c - the recorder's check of a record read from a provider's
 * shared buffer (record_check.h).
 *
 * One pass over each level: a field's key, its value or length, and for a
 * length-delimited field the action tracec's schema asks for (follow a
 * message, split a packed run, nothing).  The first byte of a tag is
 * classed by one look-up in its message type's row, built once from the
 * generated schema; so is a LEN field's number below TRACEC_I_REC_DENSE.
 * Larger numbers (extensions, mostly unknown) are searched, and only in a
 * type that has such a field with an action.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "record_check.h"
#include "record_seq.h"
#include "tracec/abi/hints.h"
#include "tracec/wire.h"

/* ---- the schema's actions on a length-delimited field ------------------------------------ */

/* An action: 0 nothing; 1 .. 0x7fff follow the message type of that index + 1; PACKED | wire type: split it. */
#define PACKED 0x8000u

/*
 * A tag's class, per message type, in the type's row of tracec_i_rec_rows
 * (record_check.h): the class in the top 3 bits, and in the rest: for a
 * message its type's index, for a packed run its elements' wire type, for
 * a fixed-size value its size, for C_MULTI the tag's wire type.
 *   C_SEQ    the packet's own field 10 as a varint;
 *   C_MULTI  the first byte of a tag of 2 or more bytes, in a type whose
 *            fields past the row's LEN classes have no action: the tag's
 *            number is read, and only a LEN field under TRACEC_I_REC_DENSE
 *            needs the row again;
 *   SLOW (0) every other case: a field number 0, a group, an invalid wire
 *            type, a tag that may be the packet's field 10 as another wire
 *            type or with more bytes.  The general path reads those.
 */
enum { SLOW = 0, C_VARINT, C_FIXED, C_LEN, C_MSG, C_PACKED, C_SEQ, C_MULTI };
#define CLASS_SHIFT 13u
#define INDEX_MASK 0x1fffu
_Static_assert(INDEX_MASK + 1u == TRACEC_I_REC_MAX_TYPES, "every message type's index fits a class");
/* A row: 256 classes by the first byte of a tag, then the classes of LEN fields 1 to TRACEC_I_REC_DENSE - 1 by
   number; the entry of number 0 is 1 when a field numbered TRACEC_I_REC_DENSE or more has an action */
#define LEN_AT 256u
_Static_assert(LEN_AT + TRACEC_I_REC_DENSE == TRACEC_I_REC_ROW, "a row is the first bytes' and the LEN fields' classes");

static pthread_once_t g_rows_once = PTHREAD_ONCE_INIT;
static int g_rows_done; /* build_rows ran: tracec_i_rec_rows is final */

static uint16_t action_of(const tracec_i_rec_field *d) {
    if (d->message && d->wire_type == TRACEC_WIRE_LEN) return d->message;
    if (d->packable) return (uint16_t)(PACKED | d->wire_type);
    return 0;
}

/* The class of a LEN field whose action is a. */
static uint16_t len_class(uint16_t a) {
    if (a == 0) return (uint16_t)(C_LEN << CLASS_SHIFT);
    if (a & PACKED) return (uint16_t)((C_PACKED << CLASS_SHIFT) | (a & 7u));
    return (uint16_t)((C_MSG << CLASS_SHIFT) | (uint16_t)(a - 1u));
}

/* The class of a field of wire type wt (any number but 0) that the schema has no action for, by wire type; SLOW:
   a group or an invalid wire type. */
static const uint16_t k_plain[8] = {
    [TRACEC_WIRE_VARINT] = C_VARINT << CLASS_SHIFT,
    [TRACEC_WIRE_FIXED64] = C_FIXED << CLASS_SHIFT | 8u,
    [TRACEC_WIRE_LEN] = C_LEN << CLASS_SHIFT,
    [TRACEC_WIRE_FIXED32] = C_FIXED << CLASS_SHIFT | 4u,
};

/* Fills row[] of a message type whose LEN fields under TRACEC_I_REC_DENSE have their classes in row[LEN_AT + n]
   already (root: the packet itself, at depth 1). */
static void fill_first_bytes(uint16_t *row, bool root) {
    for (unsigned b = 0; b < 256u; b++) {
        unsigned number = (b >> 3) & 15u, wt = b & 7u;
        uint16_t e = SLOW;
        if (b >= 0x80u) { /* the first byte of a longer tag: number's low 4 bits */
            if (k_plain[wt] != SLOW && row[LEN_AT] == 0 && !(root && number == TRACEC_I_REC_SEQ_FIELD))
                e = (uint16_t)(C_MULTI << CLASS_SHIFT | wt);
        } else if (root && number == TRACEC_I_REC_SEQ_FIELD) {
            e = wt == TRACEC_WIRE_VARINT ? (uint16_t)(C_SEQ << CLASS_SHIFT) : (uint16_t)SLOW;
        } else if (number != 0) {
            e = wt == TRACEC_WIRE_LEN ? row[LEN_AT + number] : k_plain[wt];
        }
        row[b] = e;
    }
}

static void build_rows(void) {
    uint32_t n = tracec_i_rec_schema_count;
    for (uint32_t i = 0; i <= n; i++) {
        const tracec_i_rec_message *m = &tracec_i_rec_schema[i < n ? i : 0]; /* the last row is the packet's */
        uint16_t *row = tracec_i_rec_rows + (size_t)i * TRACEC_I_REC_ROW;
        for (unsigned k = 1; k < TRACEC_I_REC_DENSE; k++) row[LEN_AT + k] = len_class(0);
        for (uint32_t k = 0; k < m->field_count; k++) {
            const tracec_i_rec_field *f = &m->fields[k];
            if (f->number == 0) continue;
            if (f->number < TRACEC_I_REC_DENSE)
                row[LEN_AT + f->number] = len_class(action_of(f));
            else if (action_of(f) != 0)
                row[LEN_AT] = 1;
        }
        fill_first_bytes(row, i == n);
    }
    __atomic_store_n(&g_rows_done, 1, __ATOMIC_RELEASE);
}

/* The action on LEN field `number` of message type `mi` (an index of tracec_i_rec_schema), searched. */
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

/* The class of LEN field `number` (not 0) in the message type whose row is `row`. */
static uint16_t len_class_at(const uint16_t *row, uint32_t number) {
    if (number < TRACEC_I_REC_DENSE) return row[LEN_AT + number];
    if (row[LEN_AT] == 0) return len_class(0); /* no field out there has an action */
    uint32_t mi = (uint32_t)((size_t)(row - tracec_i_rec_rows) / TRACEC_I_REC_ROW);
    return len_class(action_search(mi == tracec_i_rec_schema_count ? 0 : mi, number)); /* the packet's: 0 */
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

/* A shape's mask (record_check.h): bytes [at, at + n) keep only the bits `keep`. */
static inline void relax(uint8_t *mask, ptrdiff_t at, ptrdiff_t n, uint8_t keep) {
    memset(mask + at, keep, (size_t)n);
}

/* A message the check is inside of while it reads one nested in it: its end, and its type's tag row. */
typedef struct level {
    const uint8_t *end;
    const uint16_t *row;
} level;

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

/*
 * Steps over the varint value at *pp, which must end before `end`, whose
 * value nobody reads (a timestamp: 9 bytes); the bytes up to lim (>= end,
 * the packet's end) may be read.  false, with *why, if it is bad.
 */
static inline bool skip_varint(const uint8_t **pp, const uint8_t *end, const uint8_t *lim, const char **why) {
    if (TRACEC_I_LIKELY(lim - *pp >= 10)) { /* 10 bytes to look at: where it ends, without a loop */
        const uint8_t *p = skip_varint10(*pp);
        if (TRACEC_I_LIKELY(p != NULL && p <= end)) {
            *pp = p;
            return true;
        }
        /* longer than 10 bytes, unless the message ends first: then it is cut short, as a reader sees it */
        *why = end - *pp >= 10 ? "varint longer than 10 bytes" : "truncated varint";
        return false;
    }
    for (const uint8_t *q = *pp; q < end; q++) { /* fewer than 10 bytes left: it ends in them or it is cut short */
        if (*q < 0x80u) {
            *pp = q + 1;
            return true;
        }
    }
    *why = "truncated varint";
    return false;
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
 * takes its class from the first byte of its tag in its type's row (one
 * load); a first byte the row does not class (SLOW) sends the field to the
 * general path, which reads the whole tag, classes it, and comes back to the
 * switch with p at the tag's last byte.  The packet's own field-10 fields
 * are noted in *s.
 */
static inline TRACEC_I_ALWAYS_INLINE bool packet_check(const uint8_t *p, const uint8_t *end, const char **why,
                                                      tracec_i_rec_scan *s, uint8_t *mask) {
    const uint8_t *const base = p, *const lim = end; /* lim: how far a varint may be looked at */
    level up[TRACEC_I_REC_MAX_DEPTH];
    int depth = 1;
    const uint16_t *row = tracec_i_rec_rows + (size_t)tracec_i_rec_schema_count * TRACEC_I_REC_ROW; /* the packet's */
    for (;;) {
        while (TRACEC_I_LIKELY(p < end)) {
            uint16_t e = row[*p];
            uint64_t len;
            if (e == (uint16_t)(C_VARINT << CLASS_SHIFT) && TRACEC_I_LIKELY(end - p > 1 && p[1] < 0x80u)) {
                if (mask) relax(mask, p + 1 - base, 1, 0x80u);
                p += 2;
                continue;
            }
        classed:
            switch (e >> CLASS_SHIFT) {
            case C_VARINT: {
                if (TRACEC_I_LIKELY(end - p > 1 && p[1] < 0x80u)) {
                    if (mask) relax(mask, p + 1 - base, 1, 0x80u);
                    p += 2;
                    continue;
                }
                const uint8_t *v = ++p;
                if (!skip_varint(&p, end, lim, why)) return false;
                if (mask && p - v <= 9) relax(mask, v - base, p - v, 0x80u);
                continue;
            }
            case C_FIXED:
                p++;
                if (!skip_fixed(&p, end, e & 15u, why)) return false;
                if (mask) relax(mask, p - base - (e & 15u), e & 15u, 0);
                continue;
            case C_LEN:
                p++;
                if (!read_len(&p, end, &len, why)) return false;
                if (mask) relax(mask, p - base, len, 0);
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
                if (mask && p - start <= 10) relax(mask, start + 1 - base, p - start - 1, 0x80u);
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
                up[depth - 1] = (level){end, row};
                depth++;
                end = p + len;
                row = tracec_i_rec_rows + (size_t)(e & INDEX_MASK) * TRACEC_I_REC_ROW;
                continue;
            case C_MULTI: {
                /* a tag of 2 or 3 bytes (fields 16 to 262143) in a type whose far fields have no action */
                uint32_t number;
                const uint8_t *last;
                if (TRACEC_I_LIKELY(end - p >= 2 && p[1] < 0x80u)) {
                    number = (uint32_t)(p[0] >> 3 & 15u) | (uint32_t)p[1] << 4;
                    last = p + 1;
                } else if (end - p >= 3 && p[1] >= 0x80u && p[2] < 0x80u) {
                    number = (uint32_t)(p[0] >> 3 & 15u) | (uint32_t)(p[1] & 0x7fu) << 4 | (uint32_t)p[2] << 11;
                    last = p + 2;
                } else {
                    break; /* longer, or cut short: the general path */
                }
                if (TRACEC_I_UNLIKELY(number == 0)) break;
                unsigned wt = e & 7u;
                e = wt == TRACEC_WIRE_LEN && number < TRACEC_I_REC_DENSE ? row[LEN_AT + number] : k_plain[wt];
                p = last; /* at the tag's last byte, where each class starts */
                goto classed;
            }
            default:
                break;
            }
            /* the general path: the whole tag */
            const uint8_t *start = p;
            uint64_t tag;
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
            unsigned wt = (unsigned)(tag & 7u);
            if (wt == TRACEC_WIRE_SGROUP || wt == TRACEC_WIRE_EGROUP) {
                *why = "a group";
                return false;
            }
            if (wt > TRACEC_WIRE_FIXED32) {
                *why = "invalid wire type";
                return false;
            }
            if (TRACEC_I_UNLIKELY(depth == 1 && number == TRACEC_I_REC_SEQ_FIELD)) {
                /* the packet's field 10 of another wire type, or with a tag of more than one byte: noted whole */
                uint64_t v = 0;
                bool ok = wt == TRACEC_WIRE_VARINT  ? read_value(&p, end, &v, why)
                          : wt == TRACEC_WIRE_LEN   ? read_len(&p, end, &len, why) && (p += len, true)
                          : skip_fixed(&p, end, wt == TRACEC_WIRE_FIXED64 ? 8u : 4u, why);
                if (!ok) return false;
                note_seq(s, (uint32_t)(start - base), (uint32_t)(p - base));
                if (wt == TRACEC_WIRE_VARINT) s->local = v;
                continue;
            }
            e = wt == TRACEC_WIRE_LEN ? len_class_at(row, number) : k_plain[wt];
            p--; /* at the tag's last byte, where each class starts */
            goto classed;
        }
        if (depth == 1) return true;
        depth--;
        end = up[depth - 1].end;
        row = up[depth - 1].row;
    }
}

/* Before a check: the table built, the scan empty. */
static inline void begin_check(tracec_i_rec_scan *s) {
    if (TRACEC_I_UNLIKELY(!__atomic_load_n(&g_rows_done, __ATOMIC_ACQUIRE))) (void)pthread_once(&g_rows_once, build_rows);
    s->local = 0;
    s->seq_fields = 0;
}

bool tracec_i_rec_packet_scan(const uint8_t *p, size_t n, tracec_i_rec_scan *s, const char **why) {
    const char *w = NULL;
    begin_check(s);
    if (TRACEC_I_UNLIKELY(n > UINT32_MAX)) {
        if (why) *why = "a packet over 4 GiB";
        return false;
    }
    if (TRACEC_I_LIKELY(packet_check(p, p + n, &w, s, NULL))) return true; /* inlined: one call per packet */
    if (why) *why = w;
    return false;
}

bool tracec_i_rec_packet_shape(const uint8_t *p, size_t n, tracec_i_rec_scan *s, tracec_i_rec_shape *sh,
                               const char **why) {
    if (n < 8u || n > TRACEC_I_REC_SHAPE_MAX) {
        sh->n = 0;
        return tracec_i_rec_packet_scan(p, n, s, why);
    }
    const char *w = NULL;
    begin_check(s);
    memset(sh->mask, 0xff, n); /* every bit counts unless the check says it reads no more of it */
    if (!packet_check(p, p + n, &w, s, sh->mask)) {
        sh->n = 0;
        if (why) *why = w;
        return false;
    }
    /* The id's value is read from each packet (one field 10, a varint with a one-byte tag), so packets of
       several sequences share a shape; any other field 10 is kept whole. */
    sh->seq_value = s->seq_fields == 1 && p[s->cut[0]] == TRACEC_TAG(TRACEC_I_REC_SEQ_FIELD, TRACEC_WIRE_VARINT) &&
                    s->cut[1] - s->cut[0] <= 10u;
    if (!sh->seq_value) {
        if (s->seq_fields > TRACEC_I_REC_SCAN_CUTS) {
            sh->n = 0;
            return true;
        }
        for (uint32_t i = 0; i < s->seq_fields; i++) relax(sh->mask, s->cut[2 * i], s->cut[2 * i + 1] - s->cut[2 * i], 0xffu);
    }
    for (size_t i = 0; i < n; i++) sh->bits[i] = p[i] & sh->mask[i];
    sh->scan = *s;
    sh->n = (uint32_t)n;
    return true;
}

bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why) {
    tracec_i_rec_scan s;
    return tracec_i_rec_packet_scan(p, n, &s, why);
}
