/*
 * Entry points of the child roles of test_ofi_faults (ofserver.c). argv[1]
 * is the role; the options follow in pairs.
 */
#ifndef OF_ROLES_H
#define OF_ROLES_H

/* `--server [--info <string>]`: serve until of_shutdown; the exit status
 * is 0 only if every callback ran once and HG_Finalize succeeded. */
int of_server_main(int argc, char **argv);

/* `--origin --target <address> [--size <bytes>]`: expose a buffer, ask the
 * target to pull it and progress until killed. */
int of_origin_main(int argc, char **argv);

#endif /* OF_ROLES_H */
