/* commands.h - the subcommands of `iohint`, one file each (cmd_*.c).
 * Each takes the arguments after its name (argv[0] is the subcommand) and
 * returns the process exit status: 0 success, 1 failure, 2 usage error. */
#ifndef IOH_COMMANDS_H
#define IOH_COMMANDS_H

int ioh_cmd_run(int argc, char **argv);
int ioh_cmd_dump(int argc, char **argv);
int ioh_cmd_analyze(int argc, char **argv);
int ioh_cmd_export(int argc, char **argv);
int ioh_cmd_compare(int argc, char **argv);

#endif
