/*
 * main.c - the `tracec` command: encode, decode, diff and args.
 *
 * Exit codes: 0 success, 1 a difference was found (diff), 2 usage error,
 * 3 invalid input (the error is on stderr).  `-` names standard input or
 * output; standard input is called `<stdin>` in messages.
 */
#define _DEFAULT_SOURCE 1
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracec/args.h"
#include "tracec/decode.h"
#include "tracec/descpool.h"
#include "tracec/diff.h"
#include "tracec/textproto.h"
#include "record_cmd.h"

#ifndef TRACEC_CLI_VERSION
#define TRACEC_CLI_VERSION "0.0.0"
#endif
#define TRACEC_I_XSTR(x) #x
#define TRACEC_I_STR(x) TRACEC_I_XSTR(x)

enum { EXIT_OK = 0, EXIT_DIFF = 1, EXIT_USAGE = 2, EXIT_INVALID = 3 };

typedef struct cli {
    const char *cmd;
    const char *type;
    const char **sets;
    size_t n_sets;
    const char **incs;
    size_t n_incs;
    const char **protos;
    size_t n_protos;
    const char *pos[3];
    size_t n_pos;
    int max_depth;
    bool no_builtin;
    bool allow_invalid_utf8;
    bool no_unknown;
} cli;

static const char *const usage_main =
    "usage: tracec <command> [options] [files]\n"
    "\n"
    "Typed Perfetto-compatible traces: textproto <-> binary, comparisons, args.\n"
    "\n"
    "commands:\n"
    "  encode   textproto to binary\n"
    "  decode   binary to textproto\n"
    "  diff     compare an expected textproto with a binary trace, by meaning\n"
    "  args     the track-event args a trace processor shows, as CSV\n"
    "  record   run a program (or attach) and record its providers into one trace\n"
    "\n"
    "Run `tracec <command> --help` for its options.  `tracec --version` prints the version.\n"
    "Exit codes: 0 ok, 1 difference found (diff), 2 usage error, 3 invalid input.\n";

static const char *const usage_schema =
    "schema options (the built-in Perfetto-compatible schema is loaded after -d and --proto):\n"
    "  --type T          root message type (default perfetto.protos.Trace)\n"
    "  -d, --descriptor_set_in SET.desc\n"
    "                    a FileDescriptorSet (protoc --include_imports --descriptor_set_out),\n"
    "                    or a trace: the sets of its ExtensionDescriptor packets;\n"
    "                    may be given many times; its names win over the built-in ones\n"
    "  -I DIR            import directory for --proto (many allowed; default .); tracec's\n"
    "                    schema folder (share/tracec/protos) is searched last\n"
    "  --proto FILE      a .proto file, compiled with protoc (many allowed)\n"
    "  --max-depth N     message nesting limit (default 100; at most 1000, encode 100000)\n"
    "  --no-builtin      do not load the built-in schema\n"
    "  -h, --help        this help\n";

static void print_usage(FILE *f, const char *cmd) {
    if (!cmd) {
        fputs(usage_main, f);
        return;
    }
    if (strcmp(cmd, "encode") == 0) {
        fputs("usage: tracec encode [--type T] [-d SET.desc ...] [-I DIR ... --proto FILE ...] [IN [OUT]]\n"
              "\nParses the textproto IN (default: standard input) and writes its binary\n"
              "encoding to OUT (default: standard output).  Errors give FILE:LINE:COLUMN\n"
              "(1-based, columns in bytes).  ExtensionDescriptor packets in the text\n"
              "describe the extension fields of the packets after them, so the output of\n"
              "`tracec decode` re-encodes to the same bytes.\n\n"
              "  --allow-invalid-utf8  accept string values that are not valid UTF-8 (as\n"
              "                    `tracec decode` prints them: octal escapes), so that any\n"
              "                    decoded trace re-encodes; by default they are an error\n\n",
              f);
    } else if (strcmp(cmd, "decode") == 0) {
        fputs("usage: tracec decode [--type T] [-d SET.desc ...] [-I DIR ... --proto FILE ...] [IN [OUT]]\n"
              "\nPrints the binary message IN (default: standard input) as a textproto to OUT\n"
              "(default: standard output), in the style of `protoc --decode`.  Extension\n"
              "fields print as [full.name], unknown fields by number; ExtensionDescriptor\n"
              "packets in the trace (also extension_set_gzip) describe extensions.  A\n"
              "malformed input prints what was decoded, then the error with its byte offset.\n\n"
              "  --no-unknown      leave out unknown fields (undeclared fields, extensions\n"
              "                    without a descriptor, undeclared closed-enum values), as\n"
              "                    protobuf's print_unknown_fields = false does\n\n",
              f);
    } else if (strcmp(cmd, "diff") == 0) {
        fputs("usage: tracec diff [--type T] [-d SET.desc ...] [-I DIR ... --proto FILE ...]\n"
              "                   EXPECTED.textproto ACTUAL.pftrace\n"
              "\nCompares by meaning (field order in the text and packed/unpacked encodings\n"
              "do not matter) and prints a unified diff of the two textprotos.\n"
              "Exit 0 when equal, 1 when they differ.\n\n",
              f);
    } else if (strcmp(cmd, "args") == 0) {
        fputs("usage: tracec args [-d SET.desc ...] [-I DIR ... --proto FILE ...] TRACE.pftrace [OUT]\n"
              "\nPrints the args of every track event as CSV with the columns\n"
              "event,flat_key,key,int_value,string_value,real_value (events numbered from 0).\n"
              "Extension fields no descriptor explains are counted on standard error.\n\n",
              f);
    }
    fputs(usage_schema, f);
}

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "tracec%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'tracec%s%s --help'.\n", cmd ? " " : "", cmd ? cmd : "");
    return EXIT_USAGE;
}

static bool push(const char ***arr, size_t *n, const char *v) {
    const char **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na) return false;
    na[(*n)++] = v;
    *arr = na;
    return true;
}

static void cli_free(cli *c) {
    free(c->sets);
    free(c->incs);
    free(c->protos);
}

/* Returns -1 to go on, or an exit code. */
static int parse_args(cli *c, int argc, char **argv) {
    bool only_pos = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
            if (c->n_pos >= 2 + (strcmp(c->cmd, "diff") == 0))
                return usage_error(c->cmd, "unexpected argument '%s'", a);
            c->pos[c->n_pos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_usage(stdout, c->cmd);
            return EXIT_OK;
        }
        if (strcmp(a, "--version") == 0) {
            printf("tracec %s\n", TRACEC_CLI_VERSION);
            return EXIT_OK;
        }
        if (strcmp(a, "--no-builtin") == 0) {
            c->no_builtin = true;
            continue;
        }
        if (strcmp(a, "--no-unknown") == 0 && strcmp(c->cmd, "decode") == 0) {
            c->no_unknown = true;
            continue;
        }
        if (strcmp(a, "--allow-invalid-utf8") == 0 && strcmp(c->cmd, "encode") == 0) {
            c->allow_invalid_utf8 = true;
            continue;
        }
        /* Options with a value: "--opt V", "--opt=V", "-dV", "-IV". */
        const char *name = a;
        char buf[64];
        const char *eq = strchr(a, '=');
        if (a[1] == '-' && eq && (size_t)(eq - a) < sizeof buf) {
            memcpy(buf, a, (size_t)(eq - a));
            buf[eq - a] = 0;
            name = buf;
            val = eq + 1;
        } else if (a[1] != '-' && a[2] != 0) {
            buf[0] = '-';
            buf[1] = a[1];
            buf[2] = 0;
            name = buf;
            val = a + 2;
        }
        bool known = strcmp(name, "--type") == 0 || strcmp(name, "-d") == 0 ||
                     strcmp(name, "--descriptor_set_in") == 0 || strcmp(name, "-I") == 0 ||
                     strcmp(name, "--proto_path") == 0 || strcmp(name, "--proto") == 0 ||
                     strcmp(name, "--max-depth") == 0;
        if (!known) return usage_error(c->cmd, "unknown option '%s'", a);
        if (!val) {
            if (i + 1 >= argc) return usage_error(c->cmd, "option '%s' needs a value", a);
            val = argv[++i];
        }
        bool ok = true;
        if (strcmp(name, "--type") == 0) {
            c->type = val;
        } else if (strcmp(name, "-d") == 0 || strcmp(name, "--descriptor_set_in") == 0) {
            ok = push(&c->sets, &c->n_sets, val);
        } else if (strcmp(name, "-I") == 0 || strcmp(name, "--proto_path") == 0) {
            ok = push(&c->incs, &c->n_incs, val);
        } else if (strcmp(name, "--proto") == 0) {
            ok = push(&c->protos, &c->n_protos, val);
        } else {
            char *e;
            long v = strtol(val, &e, 10);
            if (*e || v <= 0 || v > 100000) return usage_error(c->cmd, "bad --max-depth '%s'", val);
            /* The decoder recurses per level: its limit keeps the stack bounded (encode does not recurse). */
            if (strcmp(c->cmd, "encode") != 0 && v > TRACEC_DECODE_MAX_DEPTH_LIMIT)
                return usage_error(c->cmd, "--max-depth %s is above the limit of " TRACEC_I_STR(
                                               TRACEC_DECODE_MAX_DEPTH_LIMIT) " (encode allows 100000)", val);
            c->max_depth = (int)v;
        }
        if (!ok) {
            fprintf(stderr, "tracec: out of memory\n");
            return EXIT_INVALID;
        }
    }
    return -1;
}

/* Reads a whole file ("-": standard input) into a malloc'd buffer, followed by two NULs. */
static bool read_all(const char *path, char **out, size_t *size) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "tracec: %s: %s\n", path, strerror(errno));
        return false;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    bool ok = buf != NULL;
    while (ok) {
        if (cap - len < 3) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                ok = false;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len - 2, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                fprintf(stderr, "tracec: %s: read error: %s\n", path, strerror(errno));
                ok = false;
            }
            break;
        }
    }
    if (f != stdin) fclose(f);
    if (!ok) {
        if (!buf) fprintf(stderr, "tracec: %s: out of memory\n", path);
        free(buf);
        return false;
    }
    buf[len] = buf[len + 1] = 0;
    *out = buf;
    *size = len;
    return true;
}

static const char *display_name(const char *path) { return strcmp(path, "-") == 0 ? "<stdin>" : path; }

static FILE *open_out(const char *path) {
    if (!path || strcmp(path, "-") == 0) return stdout;
    FILE *f = fopen(path, "wb");
    if (!f) fprintf(stderr, "tracec: %s: %s\n", path, strerror(errno));
    return f;
}

static bool close_out(FILE *f, const char *path) {
    bool ok = fflush(f) == 0 && !ferror(f);
    if (f != stdout) ok = fclose(f) == 0 && ok;
    if (!ok) fprintf(stderr, "tracec: %s: write error: %s\n", path ? path : "<stdout>", strerror(errno));
    return ok;
}

static bool read_all(const char *path, char **out, size_t *size);

/*
 * A -d source: a FileDescriptorSet, or a trace whose ExtensionDescriptor
 * packets hold sets (as `tracec diff` and `decode` use a trace's own).
 */
static bool add_descriptor_source(tracec_pool *pool, const char *path) {
    char *data;
    size_t size, n_sets = 0;
    if (!read_all(path, &data, &size)) return false;
    tracec_error err;
    err.msg[0] = 0;
    tracec_status_t s = tracec_load_extension_descriptors(pool, data, size, TRACEC_DEFAULT_TYPE, &n_sets, &err);
    if (s == TRACEC_STATUS_SUCCESS && n_sets == 0) s = tracec_pool_add_set(pool, data, size, path, &err);
    free(data);
    if (s == TRACEC_STATUS_SUCCESS) return true;
    if (n_sets == 0 && s == TRACEC_STATUS_CORRUPT_DATA)
        fprintf(stderr, "tracec: %s: neither a FileDescriptorSet nor a trace with ExtensionDescriptor packets (%s)\n",
                path, err.msg);
    else
        fprintf(stderr, "tracec: %s: %s\n", path, err.msg);
    return false;
}

/*
 * The schema folder that --proto imports come from last, as protoc's own
 * include folder: the installed one (TRACEC_CLI_SCHEMA_REL from the folder
 * of this program), or, for the program in its build tree, the source
 * tree's protos/.  NULL when neither is there.
 */
static const char *schema_dir(void) {
    static char dir[PATH_MAX + 64];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) return NULL;
    *slash = '\0';
    char probe[PATH_MAX + 128];
    if (strcmp(exe, TRACEC_CLI_BUILD_DIR) == 0) {
        snprintf(dir, sizeof dir, "%s", TRACEC_CLI_SOURCE_SCHEMA_DIR);
    } else {
        snprintf(dir, sizeof dir, "%s/%s", exe, TRACEC_CLI_SCHEMA_REL);
    }
    snprintf(probe, sizeof probe, "%s/perfetto/trace/trace.proto", dir);
    return access(probe, R_OK) == 0 ? dir : NULL;
}

static tracec_pool *build_pool(const cli *c) {
    tracec_pool *pool = tracec_pool_new();
    if (!pool) {
        fprintf(stderr, "tracec: out of memory\n");
        return NULL;
    }
    tracec_error err;
    for (size_t i = 0; i < c->n_sets; i++) {
        if (!add_descriptor_source(pool, c->sets[i])) {
            tracec_pool_free(pool);
            return NULL;
        }
    }
    if (c->n_protos) {
        /* The user's folders (protoc's default `.` when none), then the schema folder. */
        const char **incs = malloc((c->n_incs + 2) * sizeof *incs);
        if (incs == NULL) {
            fprintf(stderr, "tracec: out of memory\n");
            tracec_pool_free(pool);
            return NULL;
        }
        size_t n_incs = 0;
        for (size_t i = 0; i < c->n_incs; i++) incs[n_incs++] = c->incs[i];
        if (n_incs == 0) incs[n_incs++] = ".";
        const char *schema = schema_dir();
        if (schema != NULL) incs[n_incs++] = schema;
        tracec_status_t s = tracec_pool_add_proto_files(pool, incs, n_incs, c->protos, c->n_protos, &err);
        free(incs);
        if (s != TRACEC_STATUS_SUCCESS) {
            fprintf(stderr, "tracec: %s\n", err.msg);
            tracec_pool_free(pool);
            return NULL;
        }
    }
    if (!c->no_builtin && tracec_pool_add_builtin_schema(pool, &err) != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "tracec: built-in schema: %s\n", err.msg);
        tracec_pool_free(pool);
        return NULL;
    }
    (void)tracec_pool_add_registry(pool, &err);
    return pool;
}

/* Prints the pool's descriptor conflicts not printed yet, each once. */
static void report_conflicts(const tracec_pool *pool) {
    static size_t printed;
    for (; printed < tracec_pool_conflict_count(pool); printed++)
        fprintf(stderr, "tracec: warning: %s\n", tracec_pool_conflict(pool, printed));
}

static void load_trace_descriptors(tracec_pool *pool, const cli *c, const void *data, size_t size,
                                   const char *name) {
    tracec_error err;
    err.msg[0] = 0;
    if (tracec_load_extension_descriptors(pool, data, size, c->type, NULL, &err) != TRACEC_STATUS_SUCCESS)
        fprintf(stderr, "tracec: warning: %s: %s\n", name, err.msg);
    report_conflicts(pool);
}

static int cmd_encode(const cli *c, tracec_pool *pool) {
    const char *in = c->n_pos > 0 ? c->pos[0] : "-";
    const char *outp = c->n_pos > 1 ? c->pos[1] : "-";
    char *text;
    size_t len;
    if (!read_all(in, &text, &len)) return EXIT_INVALID;
    tracec_text_options to = TRACEC_TEXT_OPTIONS_INIT;
    to.file_name = display_name(in);
    if (c->max_depth) to.max_depth = c->max_depth;
    to.allow_invalid_utf8 = c->allow_invalid_utf8;
    to.text_in_place = true; /* read_all's buffer ends with two NULs: no copy of the input */
    tracec_bytes out = TRACEC_BYTES_INIT;
    tracec_error err;
    err.msg[0] = 0;
    tracec_status_t s = tracec_text_encode_trace(pool, c->type, text, len, &to, &out, &err);
    free(text);
    if (s != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "%s\n", err.msg);
        tracec_bytes_free(&out);
        return s == TRACEC_STATUS_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_INVALID;
    }
    FILE *f = open_out(outp);
    if (!f) {
        tracec_bytes_free(&out);
        return EXIT_INVALID;
    }
    bool ok = out.size == 0 || fwrite(out.data, 1, out.size, f) == out.size;
    ok = close_out(f, outp) && ok;
    tracec_bytes_free(&out);
    return ok ? EXIT_OK : EXIT_INVALID;
}

/*
 * decode and args: reads the trace `in`, adds the descriptors it carries to
 * the pool, and opens `outp`.  NULL (the error already printed) if either
 * fails; otherwise the caller frees *data and closes the stream.
 */
static FILE *open_trace_io(const cli *c, tracec_pool *pool, const char *in, const char *outp, char **data,
                           size_t *size) {
    if (!read_all(in, data, size)) return NULL;
    load_trace_descriptors(pool, c, *data, *size, display_name(in));
    FILE *f = open_out(outp);
    if (!f) free(*data);
    return f;
}

static int cmd_decode(const cli *c, tracec_pool *pool) {
    const char *in = c->n_pos > 0 ? c->pos[0] : "-";
    const char *outp = c->n_pos > 1 ? c->pos[1] : "-";
    char *data;
    size_t size;
    FILE *f = open_trace_io(c, pool, in, outp, &data, &size);
    if (!f) return EXIT_INVALID;
    static char obuf[1 << 16];
    setvbuf(f, obuf, _IOFBF, sizeof obuf);
    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    o.type_name = c->type;
    o.file_name = display_name(in);
    o.extension_descriptors = false;
    o.hide_unknown = c->no_unknown;
    if (c->max_depth) o.max_depth = c->max_depth;
    tracec_error err;
    err.msg[0] = 0;
    tracec_status_t s = tracec_decode_text(pool, data, size, &o, tracec_write_file, f, &err);
    free(data);
    bool ok = close_out(f, outp);
    if (s != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "tracec decode: %s\n", err.msg);
        return s == TRACEC_STATUS_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_INVALID;
    }
    return ok ? EXIT_OK : EXIT_INVALID;
}

static int cmd_diff(const cli *c, tracec_pool *pool) {
    if (c->n_pos != 2) return usage_error(c->cmd, "%s", "needs EXPECTED.textproto and ACTUAL.pftrace");
    if (strcmp(c->pos[0], "-") == 0 && strcmp(c->pos[1], "-") == 0)
        return usage_error(c->cmd, "%s", "only one of the inputs can be standard input");
    char *text, *data;
    size_t len, size;
    if (!read_all(c->pos[0], &text, &len)) return EXIT_INVALID;
    if (!read_all(c->pos[1], &data, &size)) {
        free(text);
        return EXIT_INVALID;
    }
    bool equal = false;
    tracec_bytes diff = TRACEC_BYTES_INIT;
    tracec_error err;
    err.msg[0] = 0;
    tracec_status_t s = tracec_compare_text_binary(pool, c->type, text, len, display_name(c->pos[0]),
                                                   data, size, display_name(c->pos[1]), &equal, &diff, &err);
    free(text);
    free(data);
    if (diff.size) fwrite(diff.data, 1, diff.size, stdout);
    tracec_bytes_free(&diff);
    if (s != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "tracec diff: %s\n", err.msg);
        return s == TRACEC_STATUS_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_INVALID;
    }
    if (!close_out(stdout, NULL)) return EXIT_INVALID;
    return equal ? EXIT_OK : EXIT_DIFF;
}

static int cmd_args(const cli *c, tracec_pool *pool) {
    if (c->n_pos < 1) return usage_error(c->cmd, "%s", "needs TRACE.pftrace");
    if (strcmp(c->type, TRACEC_DEFAULT_TYPE) != 0)
        return usage_error(c->cmd, "--type must be %s", TRACEC_DEFAULT_TYPE);
    const char *in = c->pos[0];
    const char *outp = c->n_pos > 1 ? c->pos[1] : "-";
    char *data;
    size_t size;
    FILE *f = open_trace_io(c, pool, in, outp, &data, &size);
    if (!f) return EXIT_INVALID;
    tracec_decode_options o = TRACEC_DECODE_OPTIONS_INIT;
    o.file_name = display_name(in);
    o.extension_descriptors = false;
    if (c->max_depth) o.max_depth = c->max_depth;
    tracec_args_stats st;
    tracec_error err;
    err.msg[0] = 0;
    tracec_status_t s = tracec_args_csv(pool, data, size, &o, tracec_write_file, f, &st, &err);
    free(data);
    bool ok = close_out(f, outp);
    if (st.unknown_extension_fields || st.unknown_nested_fields)
        fprintf(stderr,
                "tracec args: %llu extension field(s) without a descriptor were skipped "
                "(unknown_extension_fields), %llu unknown field(s) inside extension messages\n",
                (unsigned long long)st.unknown_extension_fields,
                (unsigned long long)st.unknown_nested_fields);
    if (s != TRACEC_STATUS_SUCCESS) {
        fprintf(stderr, "tracec args: %s\n", err.msg);
        return EXIT_INVALID;
    }
    return ok ? EXIT_OK : EXIT_INVALID;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr, NULL);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(argv[2], "record") == 0) {
            char *help[] = {argv[0], argv[2], (char *)"--help", NULL};
            return tracec_cmd_record(3, help);
        }
        if (argc > 2) {
            print_usage(stdout, argv[2]);
            return EXIT_OK;
        }
        print_usage(stdout, NULL);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("tracec %s\n", TRACEC_CLI_VERSION);
        return EXIT_OK;
    }
    if (strcmp(cmd, "record") == 0) return tracec_cmd_record(argc, argv);
    if (strcmp(cmd, "encode") != 0 && strcmp(cmd, "decode") != 0 && strcmp(cmd, "diff") != 0 &&
        strcmp(cmd, "args") != 0)
        return usage_error(NULL, "unknown command '%s'", cmd);
    cli c;
    memset(&c, 0, sizeof c);
    c.cmd = cmd;
    c.type = TRACEC_DEFAULT_TYPE;
    int rc = parse_args(&c, argc, argv);
    if (rc >= 0) {
        cli_free(&c);
        return rc;
    }
    if (c.n_protos == 0 && c.n_incs > 0) {
        cli_free(&c);
        return usage_error(cmd, "%s", "-I needs --proto");
    }
    tracec_pool *pool = build_pool(&c);
    if (!pool) {
        cli_free(&c);
        return EXIT_INVALID;
    }
    report_conflicts(pool);
    if (strcmp(cmd, "encode") == 0)
        rc = cmd_encode(&c, pool);
    else if (strcmp(cmd, "decode") == 0)
        rc = cmd_decode(&c, pool);
    else if (strcmp(cmd, "diff") == 0)
        rc = cmd_diff(&c, pool);
    else
        rc = cmd_args(&c, pool);
    report_conflicts(pool); /* those met in the text (encode, diff) */
    tracec_pool_free(pool);
    cli_free(&c);
    return rc;
}
