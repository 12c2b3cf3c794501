/*
 * tracec/status.h - the one status type every tracec call returns.
 *
 * Calls that can fail return tracec_status_t.  Writers record the first
 * error they meet in tracec_writer.status (it sticks: later errors do not
 * overwrite it) and the call that finishes a packet reports it.
 * tracec_status_str() gives a constant, human-readable name for each value.
 */
#ifndef TRACEC_STATUS_H
#define TRACEC_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tracec_status_t {
    TRACEC_STATUS_SUCCESS = 0,
    /* Generic failure with no more specific status. */
    TRACEC_STATUS_ERROR,
    /* An argument is out of its documented range (NULL pointer, zero size, ...). */
    TRACEC_STATUS_INVALID_ARGUMENT,
    /* An id does not name a live object. */
    TRACEC_STATUS_CONTEXT_NOT_FOUND,
    TRACEC_STATUS_BUFFER_NOT_FOUND,
    TRACEC_STATUS_THREAD_NOT_FOUND,
    TRACEC_STATUS_KIND_NOT_FOUND,
    TRACEC_STATUS_OPERATION_NOT_FOUND,
    /* The same service kind was configured twice on one context. */
    TRACEC_STATUS_SERVICE_ALREADY_CONFIGURED,
    /* The record did not fit and was dropped (and counted). */
    TRACEC_STATUS_BUFFER_FULL,
    /* The record is larger than the buffer could ever hold. */
    TRACEC_STATUS_RECORD_TOO_LARGE,
    /* A length-delimited message grew past 2^28 - 1 bytes. */
    TRACEC_STATUS_MESSAGE_TOO_LARGE,
    /* A nested message was ended out of order, twice, or never. */
    TRACEC_STATUS_NESTING_MISMATCH,
    /* The object was stopped, closed or destroyed. */
    TRACEC_STATUS_CLOSED,
    /* The call would deadlock (e.g. a synchronous flush from the buffer's own callback). */
    TRACEC_STATUS_WOULD_DEADLOCK,
    /* A combination of options that is not supported (e.g. ONESHOT + LOSSLESS). */
    TRACEC_STATUS_UNSUPPORTED,
    /* A fixed limit (name length, number of categories, ...) was exceeded. */
    TRACEC_STATUS_LIMIT_EXCEEDED,
    /* The object is not in a state that allows the call (e.g. start before initialize). */
    TRACEC_STATUS_BAD_STATE,
    TRACEC_STATUS_OUT_OF_MEMORY,
    /* An operating-system call failed; errno holds the reason. */
    TRACEC_STATUS_IO_ERROR,
    /* Input data (a trace, a descriptor set) is malformed. */
    TRACEC_STATUS_CORRUPT_DATA,
    /* Generated code and runtime disagree on the ABI version. */
    TRACEC_STATUS_VERSION_MISMATCH,
    TRACEC_STATUS_LAST
} tracec_status_t;

/* A constant string naming `status` ("TRACEC_STATUS_BUFFER_FULL"); never NULL. */
const char *tracec_status_str(tracec_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* TRACEC_STATUS_H */
