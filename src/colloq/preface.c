/* colloq: the session preface (frame zero, one JSON line; spec "Session preface"). */
#include "colloq_internal.h"
#include <stdio.h>

static void write_preface(jw *w, const wk_colloq_plan *plan, const char *wire, const char *role)
{
    jw_str(w, "{\"colloq\":\"wire/v0\",\"plan\":\"");
    jw_str(w, plan->identity);
    jw_str(w, "\",\"wire\":\"");
    jw_str(w, wire);
    jw_str(w, "\",\"role\":");
    jw_json_string(w, role, strlen(role));
    jw_str(w, "}\n");
}

static wk_code preface_check_args(const wk_colloq_plan *plan, wk_colloq_wire wire, uint32_t role,
                                  const char **wname, wk_error *err)
{
    *wname = wk_colloq_wire_name(wire);
    if (!*wname) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "unknown wire %d", (int)wire);
    if (role >= plan->role_count)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "role %u is not in the plan", (unsigned)role);
    return WK_OK;
}

wk_code wk_colloq_preface_size(const wk_colloq_plan *plan, wk_colloq_wire wire, uint32_t role,
                               size_t *size, wk_error *err)
{
    const char *wname;
    *size = 0;
    wk_code rc = preface_check_args(plan, wire, role, &wname, err);
    if (!rc) COLLOQ_TEXT_SIZE(write_preface(&w, plan, wname, plan->roles[role]));
    return rc;
}

wk_result wk_colloq_preface_encode(const wk_colloq_plan *plan, wk_colloq_wire wire, uint32_t role,
                                   wk_out *out, wk_error *err)
{
    const char *wname;
    if (preface_check_args(plan, wire, role, &wname, err)) return WK_ERROR;
    COLLOQ_TEXT_ENCODE(out, err, write_preface(&w, plan, wname, plan->roles[role]));
}

static bool is_identity(const char *s, size_t n)
{
    if (n != WK_COLLOQ_IDENTITY_LEN) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

wk_code wk_colloq_preface_parse(const char *line, size_t len, wk_colloq_preface *out,
                                wk_error *err)
{
    if (len > 0 && line[len - 1] == '\n') len--;
    if (memchr(line, '\n', len))
        return wk_error_set(err, WK_ERR_COLLOQ_PREFACE, (uint64_t)((const char *)memchr(line, '\n', len) - line),
                            "preface is more than one line");
    size_t bad = 0;
    bool dup = false;
    json_object *o = colloq_json_parse_unique(line, len, &bad, &dup, NULL, 0);
    if (!o)
        return wk_error_set(err, WK_ERR_COLLOQ_PREFACE, bad,
                            dup ? "preface has a duplicate key" : "preface is not valid JSON");
    wk_code rc = WK_OK;
    json_object *v;
    const char *keys[4] = {"colloq", "plan", "wire", "role"};
    const char *vals[4];
    size_t lens[4];
    if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) != 4) {
        rc = wk_error_set(err, WK_ERR_COLLOQ_PREFACE, 0,
                          "preface must be an object with exactly colloq, plan, wire, role");
        goto done;
    }
    for (int i = 0; i < 4; i++) {
        if (!json_object_object_get_ex(o, keys[i], &v) || !json_object_is_type(v, json_type_string)) {
            rc = wk_error_set(err, WK_ERR_COLLOQ_PREFACE, 0, "preface key \"%s\" missing or not a string",
                              keys[i]);
            goto done;
        }
        vals[i] = json_object_get_string(v);
        lens[i] = (size_t)json_object_get_string_len(v);
    }
    if (lens[0] != 7 || memcmp(vals[0], "wire/v0", 7) != 0) {
        rc = wk_error_set(err, WK_ERR_COLLOQ_PREFACE, 0, "preface version is not wire/v0");
        goto done;
    }
    if (!is_identity(vals[1], lens[1])) {
        rc = wk_error_set(err, WK_ERR_COLLOQ_PREFACE, 0, "plan is not 64 lowercase hex characters");
        goto done;
    }
    if (strlen(vals[2]) != lens[2] || !wk_colloq_wire_parse(vals[2], &out->wire)) {
        rc = wk_error_set(err, WK_ERR_COLLOQ_PREFACE, 0, "wire is not reference, compact or binary");
        goto done;
    }
    if (lens[3] == 0 || lens[3] >= sizeof out->role || strlen(vals[3]) != lens[3]) {
        rc = wk_error_set(err, WK_ERR_COLLOQ_PREFACE, 0, "role empty, too long or with a NUL");
        goto done;
    }
    memcpy(out->plan, vals[1], WK_COLLOQ_IDENTITY_LEN + 1);
    memcpy(out->role, vals[3], lens[3] + 1);
done:
    json_object_put(o);
    return rc;
}

wk_code wk_colloq_preface_check(const wk_colloq_plan *plan, const wk_colloq_preface *peer,
                                wk_colloq_wire our_wire, uint32_t our_role, uint32_t *peer_role,
                                wk_error *err)
{
    if (strcmp(peer->plan, plan->identity) != 0)
        return wk_error_set(err, WK_ERR_COLLOQ_PLAN_MISMATCH, WK_NO_OFFSET,
                            "peer plan %.16s... is not ours (%.16s...)", peer->plan, plan->identity);
    if (peer->wire != our_wire)
        return wk_error_set(err, WK_ERR_COLLOQ_WIRE_MISMATCH, WK_NO_OFFSET,
                            "peer wire %s, ours %s", wk_colloq_wire_name(peer->wire),
                            wk_colloq_wire_name(our_wire));
    if (peer->wire == WK_COLLOQ_WIRE_BINARY && !plan->has_schedules)
        return wk_error_set(err, WK_ERR_COLLOQ_WIRE_MISMATCH, WK_NO_OFFSET,
                            "binary wire on a v0 plan without payload schedules");
    int32_t r = wk_colloq_plan_role_find(plan, peer->role, strlen(peer->role));
    if (r < 0)
        return wk_error_set(err, WK_ERR_COLLOQ_PREFACE_ROLE, WK_NO_OFFSET,
                            "peer role \"%.40s\" is not in the plan", peer->role);
    if (our_role != WK_COLLOQ_ROLE_ANY && (uint32_t)r == our_role)
        return wk_error_set(err, WK_ERR_COLLOQ_PREFACE_ROLE, WK_NO_OFFSET,
                            "peer role \"%.40s\" is our own", peer->role);
    if (peer_role) *peer_role = (uint32_t)r;
    return WK_OK;
}
