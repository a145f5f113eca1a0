/*
 * A program that picks the lookup form itself, before including
 * mercury.h, keeps its choice: here the name means the immediate form,
 * so the five-argument call below would not compile, and the three-
 * argument one does.
 */
#define HG_Addr_lookup HG_Addr_lookup2
#include <mercury.h>

hg_return_t
lookup(hg_class_t *hg_class, hg_addr_t *addr)
{
    hg_return_t (*fn)(hg_class_t *, const char *, hg_addr_t *) = HG_Addr_lookup;

    (void) fn;
    return HG_Addr_lookup(hg_class, "sim://x", addr);
}
