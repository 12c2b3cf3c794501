/*
 * protoc.c - tracec_pool_add_proto_files(): .proto files compiled by protoc
 * (spawned with posix_spawnp, output captured in a temporary file) and added
 * to a pool as a descriptor set.
 *
 * It lives here and not in the pool (schema/) so that the schema layer reads
 * bytes and files of descriptors only and never runs a program; the `tracec`
 * command and the tests (through tracec/testing.h's users) link this library.
 */
#define _POSIX_C_SOURCE 200809L

#include "tracec/protoc.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

static const char *protoc_path(void) {
    const char *env = getenv("TRACEC_PROTOC");
    if (env && env[0]) return env;
#ifdef TRACEC_I_PROTOC_PATH
    return TRACEC_I_PROTOC_PATH;
#else
    return "protoc";
#endif
}

tracec_status_t tracec_pool_add_proto_files(tracec_pool *pool, const char *const *include_dirs,
                                            size_t n_include_dirs, const char *const *protos,
                                            size_t n_protos, tracec_error *err) {
    if (pool == NULL || (n_protos && protos == NULL) || (n_include_dirs && include_dirs == NULL)) {
        tracec_i_set_error(err, "tracec_pool_add_proto_files: NULL argument");
        return TRACEC_STATUS_INVALID_ARGUMENT;
    }
    if (n_protos == 0) return TRACEC_STATUS_SUCCESS;
    const char *tmpdir = getenv("TMPDIR");
    if (tmpdir == NULL || tmpdir[0] == '\0') tmpdir = "/tmp";
    char out_path[4096], log_path[4096];
    snprintf(out_path, sizeof out_path, "%s/tracec-set-XXXXXX", tmpdir);
    snprintf(log_path, sizeof log_path, "%s/tracec-log-XXXXXX", tmpdir);
    int out_fd = mkstemp(out_path);
    if (out_fd < 0) {
        tracec_i_set_error(err, "%s: %s", out_path, strerror(errno));
        return TRACEC_STATUS_IO_ERROR;
    }
    close(out_fd);
    int log_fd = mkstemp(log_path);
    if (log_fd < 0) {
        unlink(out_path);
        tracec_i_set_error(err, "%s: %s", log_path, strerror(errno));
        return TRACEC_STATUS_IO_ERROR;
    }

    size_t argc = 0, n_args = n_include_dirs + n_protos + 4;
    char **argv = calloc(n_args, sizeof *argv);
    char *out_arg = malloc(strlen(out_path) + 32);
    char **inc_args = calloc(n_include_dirs + 1, sizeof *inc_args);
    tracec_status_t st = TRACEC_STATUS_OUT_OF_MEMORY;
    if (argv == NULL || out_arg == NULL || inc_args == NULL) {
        tracec_i_set_error(err, "out of memory");
        goto done;
    }
    argv[argc++] = (char *)protoc_path();
    for (size_t i = 0; i < n_include_dirs; i++) {
        inc_args[i] = malloc(strlen(include_dirs[i]) + 3);
        if (inc_args[i] == NULL) {
            tracec_i_set_error(err, "out of memory");
            goto done;
        }
        sprintf(inc_args[i], "-I%s", include_dirs[i]);
        argv[argc++] = inc_args[i];
    }
    sprintf(out_arg, "--descriptor_set_out=%s", out_path);
    argv[argc++] = "--include_imports";
    argv[argc++] = out_arg;
    for (size_t i = 0; i < n_protos; i++) argv[argc++] = (char *)protos[i];
    argv[argc] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, log_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, log_fd, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        tracec_i_set_error(err, "cannot run %s: %s", argv[0], strerror(rc));
        st = TRACEC_STATUS_IO_ERROR;
        goto done;
    }
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        char log[sizeof(err->msg)];
        ssize_t n = pread(log_fd, log, sizeof log - 1, 0);
        log[n > 0 ? n : 0] = '\0';
        while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\r')) log[--n] = '\0';
        tracec_i_set_error(err, "protoc failed: %s", n > 0 ? log : "(no output)");
        st = TRACEC_STATUS_ERROR;
        goto done;
    }
    st = tracec_pool_add_set_file(pool, out_path, err);
done:
    close(log_fd);
    unlink(log_path);
    unlink(out_path);
    if (inc_args)
        for (size_t i = 0; i < n_include_dirs; i++) free(inc_args[i]);
    free(inc_args);
    free(out_arg);
    free(argv);
    return st;
}

