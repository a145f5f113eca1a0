/* Must NOT compile: HG_Addr_lookup takes three or five arguments. */
#include <mercury.h>

hg_return_t
four_arguments(hg_class_t *hg_class, hg_addr_t *addr)
{
    return HG_Addr_lookup(hg_class, "sim://x", addr, 0);
}
