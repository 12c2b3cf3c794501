/* record_cmd.h - `tracec record` (record_cmd.c), called by main.c. */
#ifndef TRACEC_RECORD_CMD_H
#define TRACEC_RECORD_CMD_H
/* Runs `tracec record` with main's argv (argv[1] is "record"); returns the exit code. */
int tracec_cmd_record(int argc, char **argv);
#endif
