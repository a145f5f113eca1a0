/*
 * Addresses of the shared-memory plugin. An address is a name: the class's
 * own (from "sm://<name>", or "<pid>-<n>" when the info string names
 * none), printed "na+sm://<name>". Addresses are interned per class, one
 * object per name, so comparing two is comparing pointers; an object lives
 * while users or a connection hold a reference.
 *
 * Wire form (serialization): 2 bytes magic "SM" (big-endian 0x4d53),
 * 1 byte name length n (1..NA_SM_NAME_MAX), n name bytes.
 */
#include "na_sm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
na_sm_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > NA_SM_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
              c == ':'))
            return false;
    }
    return true;
}

/* "na+sm://name", "sm://name" or a bare "name" into name[]. */
na_return_t
na_sm_name_parse(const char *str, char *name)
{
    const char *sep = strstr(str, "://");
    size_t len;

    if (sep != NULL) {
        size_t scheme = (size_t) (sep - str);
        if (!((scheme == 2 && strncmp(str, "sm", 2) == 0) ||
              (scheme == 5 && strncmp(str, "na+sm", 5) == 0)))
            return NA_INVALID_ARG;
        str = sep + 3;
    }
    len = strlen(str);
    if (!na_sm_name_valid(str, len))
        return NA_INVALID_ARG;
    memcpy(name, str, len);
    name[len] = '\0';
    return NA_SUCCESS;
}

/* Find or create the object for `name`; returns a new reference. Called
 * with the class lock held. */
struct na_addr *
na_sm_addr_intern(struct na_sm_class *cls, const char *name)
{
    struct na_plugin_addr *head;
    struct na_addr *a;

    LIST_FOREACH(head, &cls->addrs, entry)
    {
        a = na_plugin_addr_of(head);
        if (strcmp(a->name, name) == 0) {
            na_plugin_addr_ref(a);
            return a;
        }
    }
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->cls = cls;
    a->self = strcmp(name, cls->name) == 0;
    strcpy(a->name, name);
    na_plugin_addr_insert(&cls->addrs, &cls->lock, a);
    return a;
}

static na_return_t
na_sm_addr_to_string(na_class_t *na_class, char *buf, size_t *buf_size,
                     na_addr_t addr)
{
    char tmp[NA_SM_NAME_MAX + 16];

    (void) na_class;
    snprintf(tmp, sizeof(tmp), "na+sm://%s", addr->name);
    return na_plugin_addr_string_out(tmp, buf, buf_size);
}

static na_return_t
na_sm_addr_serialize(na_class_t *na_class, void *buf, size_t *buf_size,
                     na_addr_t addr)
{
    size_t len = strlen(addr->name);
    uint8_t *p = buf;

    (void) na_class;
    if (!na_plugin_serialize_room(buf, buf_size, 3 + len))
        return NA_OVERFLOW;
    p[0] = (uint8_t) (NA_SM_ADDR_WIRE_MAGIC >> 8);
    p[1] = (uint8_t) (NA_SM_ADDR_WIRE_MAGIC & 0xff);
    p[2] = (uint8_t) len;
    memcpy(p + 3, addr->name, len);
    return NA_SUCCESS;
}

/* Untrusted bytes: every length is checked before it is used. */
static na_return_t
na_sm_addr_deserialize(na_class_t *na_class, na_addr_t *addr, const void *buf,
                       size_t buf_size)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    const uint8_t *p = buf;
    char name[NA_SM_NAME_MAX + 1];
    struct na_addr *a;
    size_t len;

    if (buf == NULL || buf_size < 3)
        return NA_MSGSIZE;
    if (((unsigned) p[0] << 8 | p[1]) != NA_SM_ADDR_WIRE_MAGIC)
        return NA_PROTOCOL_ERROR;
    len = p[2];
    if (buf_size < 3 + len)
        return NA_MSGSIZE;
    if (!na_sm_name_valid((const char *) p + 3, len))
        return NA_PROTOCOL_ERROR;
    memcpy(name, p + 3, len);
    name[len] = '\0';
    pthread_mutex_lock(&cls->lock);
    a = na_sm_addr_intern(cls, name);
    pthread_mutex_unlock(&cls->lock);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static const struct na_addr_codec_ops na_sm_addr_codec_ops = {
    .to_string = na_sm_addr_to_string,
    .serialize = na_sm_addr_serialize,
    .deserialize = na_sm_addr_deserialize,
};

/* Lookups never connect: a name nobody serves fails its first send. */
static na_return_t
na_sm_addr_lookup(na_class_t *na_class, const char *name, na_addr_t *addr)
{
    struct na_sm_class *cls = na_sm_class(na_class);
    char n[NA_SM_NAME_MAX + 1];
    struct na_addr *a;

    if (name == NULL || addr == NULL)
        return NA_INVALID_ARG;
    if (na_sm_name_parse(name, n) != NA_SUCCESS)
        return NA_INVALID_ARG;
    pthread_mutex_lock(&cls->lock);
    a = na_sm_addr_intern(cls, n);
    pthread_mutex_unlock(&cls->lock);
    if (a == NULL)
        return NA_NOMEM;
    *addr = a;
    return NA_SUCCESS;
}

static na_return_t
na_sm_addr_self(na_class_t *na_class, na_addr_t *addr)
{
    struct na_sm_class *cls = na_sm_class(na_class);

    na_plugin_addr_ref(cls->self);
    *addr = cls->self;
    return NA_SUCCESS;
}

static bool
na_sm_addr_is_self(na_class_t *na_class, na_addr_t addr)
{
    (void) na_class;
    return addr->self;
}

const struct na_addr_ops na_sm_addr_ops = {
    .lookup = na_sm_addr_lookup,
    .free = na_plugin_addr_free_interned,
    .self = na_sm_addr_self,
    .dup = na_plugin_addr_dup_interned,
    .is_self = na_sm_addr_is_self,
    .codec = &na_sm_addr_codec_ops,
};
