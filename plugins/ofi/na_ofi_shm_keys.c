/*
 * ofi+shm: the keys of each class's registered regions, published in
 * shared memory so that an origin checks a key before it issues an RMA.
 *
 * libfabric 1.17's shm provider never completes an RMA whose key (or
 * range) the target does not have: the target drops the command and the
 * origin's operation waits forever. So every ofi+shm class keeps a table
 * of its regions (key, range, access) in a POSIX shared-memory object
 * named after its endpoint, "/qs-ofi-shm-<pid>-<port>" (the packed form
 * of its address), and an origin maps its target's table read-only and
 * refuses at post time, with NA_ACCESS or NA_PERMISSION, an RMA that the
 * table does not allow. The table is only a check of what the provider
 * then enforces itself; a target whose table cannot be opened (or that
 * registered more regions than the table holds) is not checked, as
 * before.
 *
 * Entries are written under a generation, as the na+sm region table is:
 * the owner clears gen, writes the fields, then sets a new non-zero gen;
 * a reader takes an entry only when gen is non-zero and the same before
 * and after it read the fields. Peers' bytes are read, never trusted to
 * be well formed: na_ofi_shm_keys_lookup(), a pure function fuzzed by
 * fuzz/fuzz_ofi_shm_keys.c, reads a table only within its size and
 * refuses one whose header or matching entry is impossible (a short
 * object, another magic, flags no class writes, a region that wraps the
 * address space) with NA_PROTOCOL_ERROR; the RMA is then refused and the
 * reason logged once per mapped table.
 */
#include "na_ofi_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NA_OFI_SHM_KEYS_MAGIC 0x51534b59u /* "QSKY" */
#define NA_OFI_SHM_PEERS_MAX 32u

/* ThreadSanitizer does not model atomic_thread_fence (gcc refuses it
 * under -fsanitize=thread): a compiler barrier there, loads being ordered
 * on the x86 machines TSan runs on (as in plugins/sm). */
#if defined(__SANITIZE_THREAD__)
#define NA_OFI_FENCE_ACQUIRE() atomic_signal_fence(memory_order_acquire)
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NA_OFI_FENCE_ACQUIRE() atomic_signal_fence(memory_order_acquire)
#endif
#endif
#ifndef NA_OFI_FENCE_ACQUIRE
#define NA_OFI_FENCE_ACQUIRE() atomic_thread_fence(memory_order_acquire)
#endif

struct na_ofi_shm_key_entry {
    _Atomic uint64_t gen;
    uint64_t key;
    uint64_t base;
    uint64_t len;
    uint64_t flags;
};

struct na_ofi_shm_keys {
    uint32_t magic;
    _Atomic uint32_t unchecked; /* some region is not in the table */
    _Atomic uint32_t closed;    /* its class is gone: open the name again */
    uint32_t pad;
    struct na_ofi_shm_key_entry e[NA_OFI_SHM_KEYS_SLOTS];
};

/* Peers' tables this process has mapped, and the class tables' writers. */
static pthread_mutex_t na_ofi_shm_keys_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint32_t pid;
    uint16_t port;
    const struct na_ofi_shm_keys *tab; /* NULL: could not be mapped */
    size_t size;                       /* of the object: short is refused */
    bool warned;                       /* its refusal was logged */
} na_ofi_shm_peers[NA_OFI_SHM_PEERS_MAX];
static unsigned na_ofi_shm_npeers, na_ofi_shm_next_evict;
static uint64_t na_ofi_shm_gen;

static void
na_ofi_shm_keys_name(uint32_t pid, uint16_t port, char *buf, size_t size)
{
    snprintf(buf, size, "/qs-ofi-shm-%u-%u", (unsigned) pid, (unsigned) port);
}

uint32_t
na_ofi_shm_key_slot(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (uint32_t) (key % NA_OFI_SHM_KEYS_SLOTS);
}

/* Tables left by processes that ended without finalizing their classes
 * (killed, or exited early): removed by the next class of this user. */
static void
na_ofi_shm_keys_sweep(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *de;

    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        unsigned long pid;
        char *end;

        if (strncmp(de->d_name, "qs-ofi-shm-", 11) != 0)
            continue;
        pid = strtoul(de->d_name + 11, &end, 10);
        if (*end != '-' || pid == 0 || pid > 0x7fffffffUL)
            continue;
        if (kill((pid_t) pid, 0) != 0 && errno == ESRCH) {
            char name[300];
            snprintf(name, sizeof(name), "/%s", de->d_name);
            shm_unlink(name);
        }
    }
    closedir(d);
}

/*
 * libfabric's shm provider keeps each endpoint's region in /dev/shm under
 * "<pid>:<d>:<e>" and, finding that name taken, reuses it only when the
 * pid the region records is dead; otherwise opening the endpoint fails
 * with FI_EBUSY. A process killed without closing its endpoints leaves its
 * regions behind, and once its pid is recycled the new owner of that pid
 * finds its own names taken by a "live" process, itself (1 run in 200 of a
 * two-process ofi+shm case failed so, at init). No other process can make
 * names with our pid while we live, so every such name that exists before
 * this process opens its first shm endpoint is stale: removed once, before
 * that first endpoint.
 */
static void
na_ofi_shm_own_stale_sweep_once(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *de;
    char prefix[32];
    size_t len;

    if (d == NULL)
        return;
    len = (size_t) snprintf(prefix, sizeof(prefix), "%ld:", (long) getpid());
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, prefix, len) == 0) {
            char name[300];

            snprintf(name, sizeof(name), "/%s", de->d_name);
            shm_unlink(name);
        }
    }
    closedir(d);
}

void
na_ofi_shm_own_stale_sweep(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, na_ofi_shm_own_stale_sweep_once);
}

na_return_t
na_ofi_shm_keys_create(struct na_ofi_class *cls)
{
    char name[64];
    void *p;
    int fd;

    na_ofi_shm_keys_name(ntohl(cls->self->sin.sin_addr.s_addr),
                         ntohs(cls->self->sin.sin_port), name, sizeof(name));
    cls->shm_keys = NULL;
    na_ofi_shm_keys_sweep();
    fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct na_ofi_shm_keys)) != 0) {
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_WARNING,
               "ofi+shm: no key table %s (%s): RMA to this class is not "
               "checked before it is issued",
               name, strerror(errno));
        if (fd >= 0) {
            close(fd);
            shm_unlink(name);
        }
        return NA_SUCCESS; /* not fatal: peers do not check us */
    }
    p = mmap(NULL, sizeof(struct na_ofi_shm_keys), PROT_READ | PROT_WRITE,
             MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        return NA_SUCCESS;
    }
    cls->shm_keys = p;
    cls->shm_keys->magic = NA_OFI_SHM_KEYS_MAGIC;
    return NA_SUCCESS;
}

void
na_ofi_shm_keys_destroy(struct na_ofi_class *cls)
{
    char name[64];

    if (cls->shm_keys == NULL)
        return;
    na_ofi_shm_keys_name(ntohl(cls->self->sin.sin_addr.s_addr),
                         ntohs(cls->self->sin.sin_port), name, sizeof(name));
    atomic_store(&cls->shm_keys->closed, 1);
    munmap(cls->shm_keys, sizeof(struct na_ofi_shm_keys));
    cls->shm_keys = NULL;
    shm_unlink(name);
    na_ofi_shm_keys_forget(cls->self);
}

void
na_ofi_shm_keys_add(struct na_ofi_class *cls, struct na_mem_handle *mh)
{
    struct na_ofi_shm_keys *t = cls->shm_keys;
    uint32_t s0 = na_ofi_shm_key_slot(mh->key);

    mh->shm_slot = 0;
    if (t == NULL)
        return;
    pthread_mutex_lock(&na_ofi_shm_keys_lock);
    for (uint32_t i = 0; i < NA_OFI_SHM_KEYS_PROBE; i++) {
        struct na_ofi_shm_key_entry *e =
            &t->e[(s0 + i) % NA_OFI_SHM_KEYS_SLOTS];
        if (atomic_load_explicit(&e->gen, memory_order_relaxed) != 0)
            continue;
        e->key = mh->key;
        e->base = mh->base;
        e->len = mh->len;
        e->flags = mh->flags;
        atomic_store_explicit(&e->gen, ++na_ofi_shm_gen, memory_order_release);
        mh->shm_slot = (s0 + i) % NA_OFI_SHM_KEYS_SLOTS + 1;
        break;
    }
    if (mh->shm_slot == 0) /* no room near its slot: peers stop checking */
        atomic_store(&t->unchecked, 1);
    pthread_mutex_unlock(&na_ofi_shm_keys_lock);
}

void
na_ofi_shm_keys_remove(struct na_ofi_class *cls, struct na_mem_handle *mh)
{
    if (cls->shm_keys == NULL || mh->shm_slot == 0)
        return;
    atomic_store_explicit(&cls->shm_keys->e[mh->shm_slot - 1].gen, 0,
                          memory_order_release);
    mh->shm_slot = 0;
}

/* The entry of the class at `addr` in the peers' list, its table mapped
 * read-only once per process (lock held): tab NULL when there is no
 * object of that name or it cannot be mapped; size is the object's. */
static unsigned
na_ofi_shm_peer_table(const struct na_addr *addr)
{
    uint32_t pid = ntohl(addr->sin.sin_addr.s_addr);
    uint16_t port = ntohs(addr->sin.sin_port);
    const struct na_ofi_shm_keys *tab = NULL;
    size_t size = 0;
    unsigned at;
    char name[64];
    struct stat st;
    void *p;
    int fd;

    for (unsigned i = 0; i < na_ofi_shm_npeers; i++)
        if (na_ofi_shm_peers[i].pid == pid && na_ofi_shm_peers[i].port == port)
            return i;
    na_ofi_shm_keys_name(pid, port, name, sizeof(name));
    fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd >= 0 && fstat(fd, &st) == 0) {
        size = st.st_size > 0 ? (size_t) st.st_size : 0;
        if (size >= sizeof(struct na_ofi_shm_keys)) {
            p = mmap(NULL, sizeof(struct na_ofi_shm_keys), PROT_READ,
                     MAP_SHARED, fd, 0);
            if (p != MAP_FAILED)
                tab = p;
        }
    }
    if (fd >= 0)
        close(fd);
    if (na_ofi_shm_npeers < NA_OFI_SHM_PEERS_MAX) {
        at = na_ofi_shm_npeers++;
    } else {
        at = na_ofi_shm_next_evict++ % NA_OFI_SHM_PEERS_MAX;
        if (na_ofi_shm_peers[at].tab != NULL)
            munmap((void *) na_ofi_shm_peers[at].tab,
                   sizeof(struct na_ofi_shm_keys));
    }
    na_ofi_shm_peers[at].pid = pid;
    na_ofi_shm_peers[at].port = port;
    na_ofi_shm_peers[at].tab = tab;
    na_ofi_shm_peers[at].size = tab != NULL ? size : 0;
    na_ofi_shm_peers[at].warned = false;
    if (fd >= 0 && tab == NULL && size < sizeof(struct na_ofi_shm_keys))
        na_ofi_shm_peers[at].size = size; /* there, but short: refused */
    return at;
}

/* Forget a peer's table (its class is gone, or it is our own class). */
static void
na_ofi_shm_peer_forget(uint32_t pid, uint16_t port)
{
    for (unsigned i = 0; i < na_ofi_shm_npeers; i++) {
        if (na_ofi_shm_peers[i].pid != pid || na_ofi_shm_peers[i].port != port)
            continue;
        if (na_ofi_shm_peers[i].tab != NULL)
            munmap((void *) na_ofi_shm_peers[i].tab,
                   sizeof(struct na_ofi_shm_keys));
        na_ofi_shm_peers[i] = na_ofi_shm_peers[--na_ofi_shm_npeers];
        return;
    }
}

void
na_ofi_shm_keys_forget(const struct na_addr *addr)
{
    pthread_mutex_lock(&na_ofi_shm_keys_lock);
    na_ofi_shm_peer_forget(ntohl(addr->sin.sin_addr.s_addr),
                           ntohs(addr->sin.sin_port));
    pthread_mutex_unlock(&na_ofi_shm_keys_lock);
}

size_t
na_ofi_shm_keys_size(void)
{
    return sizeof(struct na_ofi_shm_keys);
}

na_return_t
na_ofi_shm_keys_lookup(const void *table, size_t size, uint64_t key,
                       uint64_t remote, uint64_t len, uint32_t need,
                       bool virt_addr, const char **why)
{
    const struct na_ofi_shm_keys *t = table;
    uint32_t s0 = na_ofi_shm_key_slot(key);
    uint32_t unchecked, closed;

    *why = NULL;
    if (t == NULL || size < sizeof(*t)) {
        *why = "the object is shorter than a key table";
        return NA_PROTOCOL_ERROR;
    }
    unchecked = atomic_load_explicit(&t->unchecked, memory_order_acquire);
    closed = atomic_load_explicit(&t->closed, memory_order_relaxed);
    if (t->magic != NA_OFI_SHM_KEYS_MAGIC) {
        *why = "its magic is not a key table's";
        return NA_PROTOCOL_ERROR;
    }
    if (unchecked > 1 || closed > 1 || t->pad != 0) {
        *why = "its header holds values no class writes";
        return NA_PROTOCOL_ERROR;
    }
    if (unchecked != 0)
        return NA_SUCCESS; /* some region is not listed: nothing to check */
    for (uint32_t i = 0; i < NA_OFI_SHM_KEYS_PROBE; i++) {
        const struct na_ofi_shm_key_entry *e =
            &t->e[(s0 + i) % NA_OFI_SHM_KEYS_SLOTS];
        uint64_t g = atomic_load_explicit(&e->gen, memory_order_acquire);
        uint64_t k = e->key, base = e->base, rlen = e->len, flags = e->flags;
        uint64_t lo;

        NA_OFI_FENCE_ACQUIRE();
        if (g == 0 ||
            atomic_load_explicit(&e->gen, memory_order_relaxed) != g ||
            k != key)
            continue;
        if (flags == 0 || (flags & ~(uint64_t) NA_MEM_READWRITE) != 0) {
            *why = "the entry of the key has access flags no class writes";
            return NA_PROTOCOL_ERROR;
        }
        if (virt_addr && base + rlen < base) {
            *why = "the region of the key wraps the address space";
            return NA_PROTOCOL_ERROR;
        }
        /* Virtual addresses, or offsets into the region. */
        lo = virt_addr ? remote - base : remote;
        if ((virt_addr && remote < base) || lo > rlen || len > rlen - lo)
            return NA_ACCESS;
        return (flags & need) != 0 ? NA_SUCCESS : NA_PERMISSION;
    }
    return NA_ACCESS;
}

na_return_t
na_ofi_shm_keys_check(const struct na_ofi_class *cls,
                      const struct na_addr *target, uint64_t key,
                      uint64_t remote, size_t size, uint32_t need)
{
    unsigned at;
    const char *why;
    na_return_t ret;

    pthread_mutex_lock(&na_ofi_shm_keys_lock);
    at = na_ofi_shm_peer_table(target);
    if (na_ofi_shm_peers[at].tab != NULL &&
        atomic_load_explicit(&na_ofi_shm_peers[at].tab->closed,
                             memory_order_acquire) == 1) {
        /* A class that has gone since we mapped its table: the name may
         * be served by a new one. */
        na_ofi_shm_peer_forget(ntohl(target->sin.sin_addr.s_addr),
                               ntohs(target->sin.sin_port));
        at = na_ofi_shm_peer_table(target);
    }
    if (na_ofi_shm_peers[at].tab == NULL && na_ofi_shm_peers[at].size == 0) {
        ret = NA_SUCCESS; /* no table: nothing to check against */
        goto unlock;
    }
    ret = na_ofi_shm_keys_lookup(na_ofi_shm_peers[at].tab,
                                 na_ofi_shm_peers[at].size, key, remote, size,
                                 need, cls->mr_virt_addr, &why);
    if (ret == NA_PROTOCOL_ERROR && !na_ofi_shm_peers[at].warned) {
        char name[64];

        na_ofi_shm_peers[at].warned = true;
        na_ofi_shm_keys_name(na_ofi_shm_peers[at].pid,
                             na_ofi_shm_peers[at].port, name, sizeof(name));
        qs_log(NA_OFI_CLASS_NAME, QS_LOG_ERROR,
               "ofi+shm: key table %s refused (%s): RMA to that class is "
               "refused with NA_PROTOCOL_ERROR",
               name, why);
    }
unlock:
    pthread_mutex_unlock(&na_ofi_shm_keys_lock);
    return ret;
}
