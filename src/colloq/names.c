/* colloq: names of types, wires and failure kinds. */
#include "colloq_internal.h"

static const char *const type_names[WK_COLLOQ_TYPE_COUNT] = {
    "bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64", "string", "bytes"};
static const unsigned type_widths[WK_COLLOQ_TYPE_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 0, 0};

const char *wk_colloq_type_name(wk_colloq_type type)
{
    return (unsigned)type < WK_COLLOQ_TYPE_COUNT ? type_names[type] : NULL;
}

bool wk_colloq_type_parse(const char *name, size_t len, wk_colloq_type *out)
{
    for (unsigned i = 0; i < WK_COLLOQ_TYPE_COUNT; i++)
        if (strlen(type_names[i]) == len && memcmp(type_names[i], name, len) == 0) {
            *out = (wk_colloq_type)i;
            return true;
        }
    return false;
}

unsigned wk_colloq_type_width_get(wk_colloq_type type)
{
    return (unsigned)type < WK_COLLOQ_TYPE_COUNT ? type_widths[type] : 0;
}

static const char *const wire_names[3] = {"reference", "compact", "binary"};

const char *wk_colloq_wire_name(wk_colloq_wire wire)
{
    return (unsigned)wire < 3 ? wire_names[wire] : NULL;
}

bool wk_colloq_wire_parse(const char *name, wk_colloq_wire *out)
{
    for (unsigned i = 0; i < 3; i++)
        if (strcmp(name, wire_names[i]) == 0) {
            *out = (wk_colloq_wire)i;
            return true;
        }
    return false;
}

static const struct {
    wk_code code;
    const char *name;
} failures[] = {
    {WK_ERR_COLLOQ_UNKNOWN_TRANSITION, "unknown-transition"},
    {WK_ERR_COLLOQ_WRONG_STATE, "wrong-state"},
    {WK_ERR_COLLOQ_WRONG_SENDER, "wrong-sender"},
    {WK_ERR_COLLOQ_BAD_SEQUENCE, "bad-sequence"},
    {WK_ERR_COLLOQ_MALFORMED_PAYLOAD, "malformed-payload"},
    {WK_ERR_COLLOQ_PAYLOAD_TOO_LARGE, "payload-too-large"},
    {WK_ERR_COLLOQ_TRUNCATED, "truncated"},
    {WK_ERR_COLLOQ_AFTER_FINAL, "after-final"},
};

const char *wk_colloq_failure_name(wk_code code)
{
    for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++)
        if (failures[i].code == code) return failures[i].name;
    return NULL;
}

wk_code wk_colloq_failure_parse(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++)
        if (strlen(failures[i].name) == len && memcmp(failures[i].name, name, len) == 0)
            return failures[i].code;
    return WK_OK;
}

bool wk_colloq_code_is_failure(wk_code code)
{
    return code >= WK_ERR_COLLOQ_UNKNOWN_TRANSITION && code <= WK_ERR_COLLOQ_AFTER_FINAL;
}
