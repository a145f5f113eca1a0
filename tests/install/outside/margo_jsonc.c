/*
 * Margo's margo.pc and target margo carry json-c, so a program that reads
 * margo_get_config()'s JSON with json-c links through margo alone (as
 * mochi-margo's tests/unit-tests/margo-config.c does).
 */
#include <margo.h>
#include <json-c/json.h>

int
main(void)
{
    struct json_object *o = json_tokener_parse("{\"a\": 1}");
    int ok = o != NULL && json_object_is_type(o, json_type_object);

    json_object_put(o);
    return ok ? 0 : 1;
}
