/*
 * Quicksilver's invariant checker: an opt-in mode in which the library
 * itself checks that a program released everything it created and that
 * every callback ran exactly once.
 *
 * Turn it on with the environment variable QS_CHECK=1 (qs-sweep --check
 * sets it for every run), or call qs_check_enable() before the first
 * HG_Init() / margo_init(). When it is on, the library records where each
 * HG class, context, handle, address and bulk handle was created and
 * where each operation with a callback (forward, respond with a callback,
 * bulk transfer, callback-form address lookup) was started, and checks:
 *
 *  - at HG_Finalize() (which margo_finalize() and a Thallium engine's
 *    teardown call): nothing the class owns is still alive. A class that
 *    still holds a handle, address, bulk handle or context is reported
 *    object by object, with the place in the program that created it;
 *  - at each callback: that operation's callback has not run before. A
 *    second run is reported at once, with where the operation started;
 *  - at exit: every HG class was finalized. A class that was not (Margo
 *    gives up on an instance whose context stays busy) is reported with
 *    what it still holds, including operations whose callback never ran.
 *
 * Each violation is printed on stderr as it is found, on lines starting
 * with "qs-check:". When the process exits after a violation, the checker
 * prints the count, the first violation, the seed of the simulated world
 * and the line that replays the run, and the process exits with status
 * QS_CHECK_EXIT_STATUS even if main() returned 0. With QS_CHECK=abort the
 * first violation calls abort() instead, so a debugger stops there.
 *
 * Off (the default), each check point in the library costs one predicted
 * branch on a flag. docs/testing-your-service.md shows it in use.
 */
#ifndef QS_CHECK_H
#define QS_CHECK_H

#include "qs_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable: unset, "" or "0" off; "1" on; "abort" on,
 * and abort() at the first violation. Read when the library is loaded. */
#define QS_CHECK_ENV "QS_CHECK"

/* Exit status of a process that ended after a violation (sysexits.h's
 * EX_SOFTWARE). */
#define QS_CHECK_EXIT_STATUS 70

/* Turn the checker on, as QS_CHECK=1 does. Objects created before the
 * call are not tracked, so call it before the first HG_Init() or
 * margo_init(). Returns 0. */
QS_EXPORT int qs_check_enable(void);

/* Non-zero when the checker is on. */
QS_EXPORT int qs_check_enabled(void);

/* Violations found so far in this process. */
QS_EXPORT unsigned int qs_check_violations(void);

/* Forget the violations found so far, so that the process exits with its
 * own status: for a test that provokes a violation on purpose and has
 * checked it with qs_check_violations(). */
QS_EXPORT void qs_check_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* QS_CHECK_H */
