/*
 * Objects laid out by cache line: zeroed memory on a 64-byte boundary,
 * rounded up to whole lines, so that an object shares no line with
 * another and the fields it groups by line stay on those lines.
 * qs_free_lines() releases it, given the size it was allocated with.
 *
 * The objects an RPC touches (HG classes, contexts, handles and their
 * procs, NA classes, contexts and operation ids, the simulator's nodes and
 * addresses) come from here. Up to
 * QS_LINES_MAX bytes they are carved from chunks that the library takes
 * from malloc and keeps: one chunk holds the objects of many handles and
 * nodes side by side, so a large simulated world touches fewer pages per
 * RPC, and once the chunks hold QS_LINES_HUGE_AFTER bytes each new chunk
 * asks the kernel for transparent huge pages (madvise; nothing happens
 * where the kernel gives none). A freed object goes on a list of its size
 * and is reused for the next object of that size; a chunk none of whose
 * objects is handed out goes back to malloc, unless it is the one being
 * carved (chunks are counted by mallinfo2() like any heap memory).
 * docs/architecture.md, "Memory", says more.
 *
 * Built with AddressSanitizer or ThreadSanitizer, linked into a program
 * built with either, run under valgrind, or run with QS_LINES=malloc in
 * the environment (decided once, at the first allocation), every object
 * is a posix_memalign() of its own, so that the sanitizers and valgrind
 * see each one's life.
 */
#ifndef QS_ALLOC_H
#define QS_ALLOC_H

#include <stddef.h>

#define QS_LINE 64u
/* Larger objects are each a posix_memalign() of their own. */
#define QS_LINES_MAX (16u * 1024u)
/* Chunks: the first is QS_LINES_CHUNK_MIN bytes, each next one as large
 * as all before it together, up to QS_LINES_CHUNK_MAX. */
#define QS_LINES_CHUNK_MIN (64u * 1024u)
#define QS_LINES_CHUNK_MAX (16u * 1024u * 1024u)
/* Chunks taken once this much is held are advised to huge pages. */
#define QS_LINES_HUGE_AFTER (8u * 1024u * 1024u)

/* `size` bytes rounded up to whole lines, zeroed, on a line boundary;
 * NULL when out of memory or when size is 0. */
void *qs_calloc_lines(size_t size);

/* Release an object of qs_calloc_lines(size), with that same size. NULL
 * is ignored; memory that did not come from qs_calloc_lines() (or the
 * inside of an object), an object freed twice, or one freed with another
 * size than it was allocated with stops the process with a message (it
 * would otherwise be handed out again as another object, to two owners,
 * or at the wrong size). The chunks keep two bytes per line for that
 * check. */
void qs_free_lines(void *p, size_t size);

/* The chunked allocator itself, whatever the build or the environment
 * chose for qs_calloc_lines() (for its unit test). */
void *qs_lines_chunked_alloc(size_t size);
void qs_lines_chunked_free(void *p, size_t size);
/* Bytes of the chunks held now, and how many of them were advised to
 * huge pages. */
size_t qs_lines_chunk_bytes(void);
size_t qs_lines_huge_chunks(void);

#endif /* QS_ALLOC_H */
