/*
 * record_check.c - the recorder's check of a record read from a provider's
 * shared buffer (record_check.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record_check.h"
#include "tracec/wire.h"

/* ---- records ----------------------------------------------------------------------------- */

static const tracec_i_rec_field *find_field(const tracec_i_rec_message *m, uint32_t number) {
    size_t lo = 0, hi = m->field_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->fields[mid].number < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->field_count && m->fields[lo].number == number ? &m->fields[lo] : NULL;
}

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

static bool message_ok(const tracec_i_rec_message *m, const uint8_t *p, size_t n, int depth, const char **why) {
    if (depth > TRACEC_I_REC_MAX_DEPTH) {
        *why = "messages nested deeper than the limit";
        return false;
    }
    const uint8_t *end = p + n, *at;
    tracec_wire_field f;
    int rc;
    while ((rc = tracec_wire_read_field(&p, end, 0, &f, why, &at)) > 0) {
        if (f.type == TRACEC_WIRE_SGROUP || f.type == TRACEC_WIRE_EGROUP) {
            *why = "a group";
            return false;
        }
        const tracec_i_rec_field *d = m ? find_field(m, f.number) : NULL;
        if (d == NULL || f.type != TRACEC_WIRE_LEN) continue; /* unknown, or a scalar: well formed is enough */
        if (d->message && d->wire_type == TRACEC_WIRE_LEN) {
            if (!message_ok(&tracec_i_rec_schema[d->message - 1], f.data, f.size, depth + 1, why)) return false;
        } else if (d->packable && !packed_ok(d->wire_type, f.data, f.size)) {
            *why = "a packed field that does not split into whole elements";
            return false;
        }
    }
    return rc == 0;
}

bool tracec_i_rec_packet_ok(const uint8_t *p, size_t n, const char **why) {
    const char *w = NULL;
    bool ok = message_ok(tracec_i_rec_schema_count ? &tracec_i_rec_schema[0] : NULL, p, n, 1, &w);
    if (why) *why = w ? w : "malformed";
    return ok;
}
