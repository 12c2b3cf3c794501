/*
 * tracec/version.h - version of the runtime and of the generated-code ABI.
 *
 * Generated headers check TRACEC_GENERATED_ABI_VERSION and refuse to
 * compile against a runtime with another ABI.
 */
#ifndef TRACEC_VERSION_H
#define TRACEC_VERSION_H

#define TRACEC_VERSION_MAJOR 0
#define TRACEC_VERSION_MINOR 2
#define TRACEC_VERSION_PATCH 0
#define TRACEC_VERSION_STRING "0.2.0"

/* Bumped whenever generated code needs a different runtime. */
#define TRACEC_GENERATED_ABI_VERSION 1

#endif /* TRACEC_VERSION_H */
