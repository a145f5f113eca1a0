/*
 * The invariant checker's reports (include/qs_check.h): what a record
 * describes, where in the program it was created (symbolized with
 * addr2line when it is installed, otherwise as file+offset), the
 * violation lines, and the summary with the seed and the replay line.
 * Everything here runs only after a violation, so it favours clarity over
 * speed.
 */
#include "hg/hg_check_internal.h"

#include "bulk/hg_bulk_internal.h"
#include "na_sim.h"
#include "qs_check.h"

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Past this many, violations are counted but no longer described. */
#define HG_CHECK_SHOWN 50

/* The address range of this library's loaded segments. */
static uintptr_t hg_check_lib_lo, hg_check_lib_hi;

static int
hg_check_phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    uintptr_t self = (uintptr_t) data, lo = UINTPTR_MAX, hi = 0;

    (void) size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;

        if (ph->p_type != PT_LOAD)
            continue;
        if (start < lo)
            lo = start;
        if (start + ph->p_memsz > hi)
            hi = start + ph->p_memsz;
    }
    if (self < lo || self >= hi)
        return 0;
    /* Linked statically into the program: no range tells the library's
     * frames from the program's, so none is skipped. */
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
        return 1;
    hg_check_lib_lo = lo;
    hg_check_lib_hi = hi;
    return 1;
}

void
hg_check_find_library(void)
{
    dl_iterate_phdr(hg_check_phdr_cb, (void *) (uintptr_t) hg_check_phdr_cb);
}

bool
hg_check_in_library(const void *pc)
{
    uintptr_t a = (uintptr_t) pc;

    return a >= hg_check_lib_lo && a < hg_check_lib_hi;
}

/* "function (file:line)" from addr2line, if it knows; without debug
 * information, "function (file+0xaddr)". */
static bool
hg_check_addr2line(const char *file, uintptr_t addr, char *buf, size_t size)
{
    char cmd[4400], func[512] = "", line[1024] = "";
    FILE *p;

    if (strchr(file, '\'') != NULL)
        return false;
    snprintf(cmd, sizeof(cmd), "addr2line -f -C -e '%s' 0x%llx 2>/dev/null",
             file, (unsigned long long) addr);
    p = popen(cmd, "r");
    if (p == NULL)
        return false;
    if (fgets(func, sizeof(func), p) == NULL ||
        fgets(line, sizeof(line), p) == NULL)
        func[0] = line[0] = '\0';
    pclose(p);
    func[strcspn(func, "\n")] = '\0';
    line[strcspn(line, "\n ")] = '\0'; /* drops " (discriminator N)" */
    if (func[0] == '\0' || strcmp(func, "??") == 0) {
        if (line[0] == '\0' || strncmp(line, "??", 2) == 0)
            return false;
        snprintf(buf, size, "%s", line);
    } else if (line[0] == '\0' || strncmp(line, "??", 2) == 0) {
        snprintf(buf, size, "%s (%s+0x%llx)", func, file,
                 (unsigned long long) addr);
    } else {
        snprintf(buf, size, "%s (%s)", func, line);
    }
    return true;
}

/* Where pc is, as precisely as this process can say. */
static void
hg_check_where(char *buf, size_t size, const void *pc, bool is_function)
{
    uintptr_t addr = (uintptr_t) pc - (is_function ? 0 : 1);
    char exe[4096];
    const char *file;
    Dl_info di;

    if (dladdr((void *) addr, &di) == 0 || di.dli_fname == NULL) {
        snprintf(buf, size, "%p", pc);
        return;
    }
    file = di.dli_fname;
    if (file[0] == '\0') { /* the main program */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        exe[n > 0 ? n : 0] = '\0';
        file = exe;
    }
    uintptr_t rel = addr - (uintptr_t) di.dli_fbase;
    const ElfW(Ehdr) *eh = di.dli_fbase;
    bool fixed = eh != NULL && eh->e_type == ET_EXEC;

    if (hg_check_addr2line(file, fixed ? addr : rel, buf, size))
        return;
    if (di.dli_sname != NULL)
        snprintf(buf, size, "%s+0x%llx (%s)", di.dli_sname,
                 (unsigned long long) (addr - (uintptr_t) di.dli_saddr), file);
    else
        snprintf(buf, size, "%s+0x%llx", file,
                 (unsigned long long) (fixed ? addr : rel));
}

static const char *
hg_check_rpc_name(struct hg_handle *handle, char *buf, size_t size)
{
    if (handle->rpc != NULL && handle->rpc->name != NULL)
        snprintf(buf, size, "\"%s\"", handle->rpc->name);
    else
        snprintf(buf, size, "id %llu", (unsigned long long) handle->info.id);
    return buf;
}

/* One line naming the object or operation of a record. */
static void
hg_check_describe(char *buf, size_t size, const struct hg_check_rec *rec)
{
    void *obj = (void *) (uintptr_t) rec->key;
    char name[160], addr[160];
    size_t addr_size = sizeof(addr);

    switch (rec->kind) {
    case HG_CHECK_CLASS:
        if (HG_Addr_to_string(obj, addr, (hg_size_t *) &addr_size,
                              ((hg_class_t *) obj)->core.self_addr) !=
            HG_SUCCESS)
            snprintf(addr, sizeof(addr), "?");
        snprintf(buf, size, "HG class %s", addr);
        break;
    case HG_CHECK_CONTEXT:
        snprintf(buf, size, "HG context %u", ((hg_context_t *) obj)->core.id);
        break;
    case HG_CHECK_HANDLE:
        snprintf(buf, size, "handle of RPC %s (HG_Destroy / margo_destroy)",
                 hg_check_rpc_name(obj, name, sizeof(name)));
        break;
    case HG_CHECK_TARGET:
        snprintf(buf, size,
                 "handle of a request for RPC %s, given to its handler "
                 "(HG_Destroy / margo_destroy)",
                 hg_check_rpc_name(obj, name, sizeof(name)));
        break;
    case HG_CHECK_ADDR: {
        struct hg_addr *a = obj;

        if (NA_Addr_to_string(a->hg_class->core.na_class, addr, &addr_size,
                              a->na_addr) != NA_SUCCESS)
            snprintf(addr, sizeof(addr), "?");
        snprintf(buf, size, "address %s, %u reference(s) (HG_Addr_free)", addr,
                 atomic_load(&a->refcount));
        break;
    }
    case HG_CHECK_BULK: {
        struct hg_bulk *b = obj;

        snprintf(buf, size,
                 "bulk handle of %llu bytes, %u reference(s) (HG_Bulk_free)",
                 (unsigned long long) b->size, atomic_load(&b->refcount));
        break;
    }
    case HG_CHECK_FORWARD:
        snprintf(buf, size, "forward of RPC %s",
                 hg_check_rpc_name(obj, name, sizeof(name)));
        break;
    case HG_CHECK_RESPOND:
        snprintf(buf, size, "respond to RPC %s",
                 hg_check_rpc_name(obj, name, sizeof(name)));
        break;
    case HG_CHECK_TRANSFER:
        snprintf(buf, size, "bulk %s of %llu bytes",
                 ((struct hg_bulk_xfer *) obj)->op == HG_BULK_PULL ? "pull"
                                                                   : "push",
                 (unsigned long long) ((struct hg_bulk_xfer *) obj)->size);
        break;
    case HG_CHECK_LOOKUP:
        snprintf(buf, size, "address lookup (HG_Addr_lookup with a callback)");
        break;
    case HG_CHECK_MARGO_REQUEST:
    case HG_CHECK_MARGO_TIMER:
        snprintf(buf, size, "%s", rec->what != NULL ? rec->what : "?");
        break;
    }
}

/* Count a violation and print it with the record's place of origin. */
static void
hg_check_violation(const struct hg_check_rec *rec, const char *verb,
                   const char *fmt, ...)
{
    char line[400], where[4608] = "";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (rec != NULL && rec->nframes > 0)
        hg_check_where(where, sizeof(where), rec->frames[0], rec->is_function);
    /* A long first violation is cut to fit: the return values are read
     * only to say so to the compiler. */
    if (hg_check.violations++ == 0 && where[0] != '\0') {
        if (snprintf(hg_check.first, sizeof(hg_check.first), "%s, %s %s", line,
                     verb, where) < 0)
            hg_check.first[0] = '\0';
    } else if (hg_check.violations == 1) {
        if (snprintf(hg_check.first, sizeof(hg_check.first), "%s", line) < 0)
            hg_check.first[0] = '\0';
    }
    if (hg_check.violations > HG_CHECK_SHOWN) {
        if (hg_check.violations == HG_CHECK_SHOWN + 1)
            fprintf(stderr, "qs-check: more violations; not shown\n");
        return;
    }
    fprintf(stderr, "qs-check: %s\n", line);
    if (where[0] == '\0')
        return;
    fprintf(stderr, "qs-check:     %s %s\n", verb, where);
    for (int i = 1; i < rec->nframes && i < 3; i++) {
        hg_check_where(where, sizeof(where), rec->frames[i], false);
        fprintf(stderr, "qs-check:     called from %s\n", where);
    }
}

void
hg_check_report_twice(struct hg_check_rec *op)
{
    char what[300], now[4608] = "";
    void *frames[32];
    int n = backtrace(frames, 32);

    hg_check_describe(what, sizeof(what), op);
    hg_check_violation(op, "started at", "callback ran twice: %s", what);
    for (int i = 1; i < n; i++) {
        if (!hg_check_in_library(frames[i])) {
            hg_check_where(now, sizeof(now), frames[i], false);
            break;
        }
    }
    if (now[0] && hg_check.violations <= HG_CHECK_SHOWN)
        fprintf(stderr, "qs-check:     and run again from %s\n", now);
}

/* Records that are not the program's to release: an address whose
 * references all belong to the class (its cached self address) or to
 * other tracked objects, and a handle that only its own unfinished
 * operation still holds (that operation is reported). */
static bool hg_check_is_private(const struct hg_check_rec *rec);

/* References to an address held by tracked handles, bulk handles and
 * transfers, which report themselves when they leak. */
static unsigned int
hg_check_addr_held(const struct hg_addr *a)
{
    unsigned int held = a == a->hg_class->core.self_addr ? 1 : 0;

    for (size_t b = 0; b < HG_CHECK_BUCKETS; b++) {
        for (const struct hg_check_rec *r = hg_check.objs[b]; r != NULL;
             r = r->next) {
            if (r->kind == HG_CHECK_HANDLE &&
                ((const struct hg_handle *) r->key)->info.addr == a)
                held++;
            else if (r->kind == HG_CHECK_BULK &&
                     ((const struct hg_bulk *) r->key)->addr == a)
                held++;
        }
        for (const struct hg_check_rec *r = hg_check.ops[b]; r != NULL;
             r = r->next) {
            if (r->kind == HG_CHECK_TRANSFER && r->runs == 0 &&
                ((const struct hg_bulk_xfer *) r->key)->addr == a)
                held++;
        }
    }
    return held;
}

static bool
hg_check_is_private(const struct hg_check_rec *rec)
{
    if (rec->kind == HG_CHECK_ADDR) {
        const struct hg_addr *a = rec->key;

        return atomic_load(&a->refcount) <= hg_check_addr_held(a);
    }
    if (rec->kind == HG_CHECK_HANDLE || rec->kind == HG_CHECK_TARGET) {
        const struct hg_handle *h = rec->key;
        const struct hg_check_rec *op = hg_check.ops[hg_check_hash(rec->key)];

        while (op != NULL && op->key != rec->key)
            op = op->next;
        return op != NULL && op->runs == 0 && atomic_load(&h->refcount) == 1;
    }
    return false;
}

/* Count the live records of one kind for a class; with `report`, also
 * report those not reported yet. */
static unsigned int
hg_check_scan(hg_class_t *hg_class, enum hg_check_kind kind, bool report)
{
    bool op = kind >= HG_CHECK_FORWARD && kind <= HG_CHECK_LOOKUP;
    struct hg_check_rec **table = op ? hg_check.ops : hg_check.objs;
    unsigned int live = 0;

    for (size_t b = 0; b < HG_CHECK_BUCKETS; b++) {
        for (struct hg_check_rec *rec = table[b]; rec != NULL;
             rec = rec->next) {
            char what[300];

            if (rec->hg_class != hg_class || rec->kind != kind ||
                (op && rec->runs > 0) || hg_check_is_private(rec))
                continue;
            live++;
            if (!report || rec->reported)
                continue;
            rec->reported = true;
            hg_check_describe(what, sizeof(what), rec);
            if (op)
                hg_check_violation(rec, "started at", "callback never ran: %s",
                                   what);
            else
                hg_check_violation(
                    rec, kind == HG_CHECK_TARGET ? "handled by" : "created at",
                    "not released: %s", what);
        }
    }
    return live;
}

/*
 * A class and its contexts are containers: when they cannot be torn down
 * because handles, bulk handles, addresses or operations are still alive,
 * those are the violations, and the container is only named. A context
 * or class that holds nothing and was still not released is one itself.
 */
void
hg_check_report_class(hg_class_t *hg_class, const char *during)
{
    struct hg_check_rec *cls = NULL;
    unsigned int held = 0, contexts;
    char what[300];

    for (struct hg_check_rec *r = hg_check.objs[hg_check_hash(hg_class)];
         r != NULL; r = r->next)
        if (r->key == hg_class)
            cls = r;
    if (cls == NULL)
        return; /* created before the checker was on */
    for (int k = HG_CHECK_HANDLE; k <= HG_CHECK_LOOKUP; k++)
        held += hg_check_scan(hg_class, (enum hg_check_kind) k, false);
    contexts = hg_check_scan(hg_class, HG_CHECK_CONTEXT, false);
    hg_check_describe(what, sizeof(what), cls);
    if (during != NULL) {
        if (hg_check.violations < HG_CHECK_SHOWN)
            fprintf(stderr, "qs-check: %s(%s): the class is still in use\n",
                    during, what);
        cls->reported = true;
    } else if (!cls->reported) {
        cls->reported = true;
        if (held + contexts == 0)
            hg_check_violation(cls, "created at",
                               "%s was never finalized (HG_Finalize / "
                               "margo_finalize)",
                               what);
        else if (hg_check.violations < HG_CHECK_SHOWN)
            fprintf(stderr,
                    "qs-check: at exit, %s was never finalized: it is "
                    "still in use\n",
                    what);
    }
    for (int k = HG_CHECK_HANDLE; k <= HG_CHECK_LOOKUP; k++)
        hg_check_scan(hg_class, (enum hg_check_kind) k, true);
    if (held == 0)
        hg_check_scan(hg_class, HG_CHECK_CONTEXT, true);
}

/* A Margo object not released: at exit (when == NULL) a request or a
 * timer; at margo_finalize() an address the program kept, which Margo
 * releases itself. */
void
hg_check_report_margo(struct hg_check_rec *rec, const char *when)
{
    char what[300];

    hg_check_describe(what, sizeof(what), rec);
    if (when != NULL)
        hg_check_violation(rec, "created at",
                           "not released before %s (margo_addr_free): %s", when,
                           what);
    else
        hg_check_violation(rec, "created at", "not released at exit: Margo %s",
                           what);
}

/* A word for a shell command line, quoted when it needs to be. */
static void
hg_check_shell_word(FILE *out, const char *w)
{
    if (w[0] != '\0' &&
        strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                  "QRSTUVWXYZ0123456789_-+=./:,@%") == strlen(w)) {
        fputs(w, out);
        return;
    }
    fputc('\'', out);
    for (; *w; w++) {
        if (*w == '\'')
            fputs("'\\''", out);
        else
            fputc(*w, out);
    }
    fputc('\'', out);
}

void
hg_check_report_summary(void)
{
    static const char *const envs[] = {"QS_SIM_FAULTS", "QS_NA_INFO"};
    char cmdline[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t len = f ? fread(cmdline, 1, sizeof(cmdline) - 1, f) : 0;

    if (f != NULL)
        fclose(f);
    cmdline[len] = '\0';
    fprintf(stderr, "qs-check: %u violation(s); the first: %s\n",
            hg_check.violations, hg_check.first);
    fprintf(stderr, "qs-check: ");
    if (hg_check.sim_seen)
        fprintf(stderr, "seed %llu; ", (unsigned long long) hg_check.sim_seed);
    fprintf(stderr, "replay: QS_CHECK=1");
    if (hg_check.sim_seen)
        fprintf(stderr, " %s=%llu", NA_SIM_SEED_ENV,
                (unsigned long long) hg_check.sim_seed);
    for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
        const char *v = getenv(envs[i]);

        if (v != NULL) {
            fprintf(stderr, " %s=", envs[i]);
            hg_check_shell_word(stderr, v);
        }
    }
    for (size_t off = 0; off < len; off += strlen(cmdline + off) + 1) {
        fputc(' ', stderr);
        hg_check_shell_word(stderr, cmdline + off);
    }
    fputc('\n', stderr);
}

void
hg_check_maybe_abort(void)
{
    bool stop;

    pthread_mutex_lock(&hg_check_lock);
    stop = hg_check.abort_mode && hg_check.violations > 0;
    pthread_mutex_unlock(&hg_check_lock);
    if (stop) {
        fprintf(stderr, "qs-check: QS_CHECK=abort: stopping at the first "
                        "violation\n");
        abort();
    }
}
