/*
 * Work-unit-specific data (ABT_key) and the ABT_self_* queries.
 *
 * Keys are numbered in a process-wide registry (abt_g.key_lock) that holds
 * their destructors, so a ULT freed after its key was freed finds no
 * destructor instead of a dangling one. A ULT's values live in a small
 * array in the ULT, also under abt_g.key_lock.
 */
#include "abt/abt_internal.h"

#include <stdlib.h>

static void (**key_dtors)(void *); /* abt_g.key_lock: by key id */
static int *key_live;              /* abt_g.key_lock */
static int key_count;              /* abt_g.key_lock */

int
ABT_key_create(void (*destructor)(void *value), ABT_key *newkey)
{
    if (!newkey)
        return ABT_ERR_INV_ARG;
    ABT_key k = calloc(1, sizeof(*k));
    if (!k)
        return ABT_ERR_MEM;
    pthread_mutex_lock(&abt_g.key_lock);
    void (**d)(void *) =
        realloc(key_dtors, (size_t) (key_count + 1) * sizeof(*d));
    if (d)
        key_dtors = d;
    int *l =
        d ? realloc(key_live, (size_t) (key_count + 1) * sizeof(*l)) : NULL;
    if (!l) {
        pthread_mutex_unlock(&abt_g.key_lock);
        free(k);
        return ABT_ERR_MEM;
    }
    key_live = l;
    k->id = key_count++;
    key_dtors[k->id] = destructor;
    key_live[k->id] = 1;
    pthread_mutex_unlock(&abt_g.key_lock);
    *newkey = k;
    return ABT_SUCCESS;
}

int
ABT_key_free(ABT_key *key)
{
    if (!key || !*key)
        return ABT_ERR_INV_KEY;
    pthread_mutex_lock(&abt_g.key_lock);
    key_live[(*key)->id] = 0;
    key_dtors[(*key)->id] = NULL;
    pthread_mutex_unlock(&abt_g.key_lock);
    free(*key);
    *key = ABT_KEY_NULL;
    return ABT_SUCCESS;
}

int
ABT_thread_set_specific(ABT_thread thread, ABT_key key, void *value)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!key)
        return ABT_ERR_INV_KEY;
    int ret = ABT_SUCCESS;
    pthread_mutex_lock(&abt_g.key_lock);
    int i;
    for (i = 0; i < thread->nkeys; i++)
        if (thread->keys[i].key == key->id)
            break;
    if (i == thread->nkeys) {
        struct abt_key_val *kv =
            realloc(thread->keys, (size_t) (thread->nkeys + 1) * sizeof(*kv));
        if (!kv) {
            ret = ABT_ERR_MEM;
            goto unlock;
        }
        thread->keys = kv;
        thread->nkeys++;
        kv[i].key = key->id;
    }
    thread->keys[i].value = value;
unlock:
    pthread_mutex_unlock(&abt_g.key_lock);
    return ret;
}

int
ABT_thread_get_specific(ABT_thread thread, ABT_key key, void **value)
{
    if (!thread)
        return ABT_ERR_INV_THREAD;
    if (!key)
        return ABT_ERR_INV_KEY;
    if (!value)
        return ABT_ERR_INV_ARG;
    *value = NULL;
    pthread_mutex_lock(&abt_g.key_lock);
    for (int i = 0; i < thread->nkeys; i++)
        if (thread->keys[i].key == key->id)
            *value = thread->keys[i].value;
    pthread_mutex_unlock(&abt_g.key_lock);
    return ABT_SUCCESS;
}

int
ABT_key_set(ABT_key key, void *value)
{
    if (!key)
        return ABT_ERR_INV_KEY;
    if (!abt_self.thread)
        return ABT_ERR_INV_XSTREAM;
    return ABT_thread_set_specific(abt_self.thread, key, value);
}

int
ABT_key_get(ABT_key key, void **value)
{
    if (!key)
        return ABT_ERR_INV_KEY;
    if (!abt_self.thread)
        return ABT_ERR_INV_XSTREAM;
    return ABT_thread_get_specific(abt_self.thread, key, value);
}

int
ABT_self_set_specific(ABT_key key, void *value)
{
    return ABT_key_set(key, value);
}

int
ABT_self_get_specific(ABT_key key, void **value)
{
    return ABT_key_get(key, value);
}

void
abt_thread_destroy(ABT_thread t)
{
    for (int i = 0; i < t->nkeys; i++) {
        void (*d)(void *) = NULL;
        pthread_mutex_lock(&abt_g.key_lock);
        if (key_live[t->keys[i].key])
            d = key_dtors[t->keys[i].key];
        pthread_mutex_unlock(&abt_g.key_lock);
        if (d && t->keys[i].value)
            d(t->keys[i].value);
    }
    free(t->keys);
    free(t);
}

/* ---- the caller ---------------------------------------------------------- */

int
ABT_self_get_xstream(ABT_xstream *xstream)
{
    return ABT_xstream_self(xstream);
}

int
ABT_self_get_xstream_rank(int *rank)
{
    return ABT_xstream_self_rank(rank);
}

int
ABT_self_is_primary(ABT_bool *is_primary)
{
    if (!is_primary)
        return ABT_ERR_INV_ARG;
    if (!abt_self.xs || !abt_self.thread)
        return ABT_ERR_INV_XSTREAM;
    *is_primary = abt_self.thread->primary ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_self_on_primary_xstream(ABT_bool *on_primary)
{
    if (!on_primary)
        return ABT_ERR_INV_ARG;
    if (!abt_self.xs)
        return ABT_ERR_INV_XSTREAM;
    *on_primary = abt_self.xs->primary ? ABT_TRUE : ABT_FALSE;
    return ABT_SUCCESS;
}

int
ABT_self_get_last_pool(ABT_pool *pool)
{
    if (!pool)
        return ABT_ERR_INV_ARG;
    if (!abt_self.xs || !abt_self.thread)
        return ABT_ERR_INV_XSTREAM;
    return ABT_thread_get_last_pool(abt_self.thread, pool);
}

int
ABT_self_get_last_pool_id(int *pool_id)
{
    ABT_pool pool = ABT_POOL_NULL;
    if (!pool_id)
        return ABT_ERR_INV_ARG;
    int ret = ABT_self_get_last_pool(&pool);
    if (ret != ABT_SUCCESS)
        return ret;
    return ABT_pool_get_id(pool, pool_id);
}

int
ABT_self_get_arg(void **arg)
{
    if (!arg)
        return ABT_ERR_INV_ARG;
    if (!abt_self.xs || !abt_self.thread)
        return ABT_ERR_INV_XSTREAM;
    *arg = abt_self.thread->arg;
    return ABT_SUCCESS;
}
