/* Shared code of the MoQT stream fuzz targets (moqt_subgroup_stream.c, moqt_fetch_stream.c):
 * a reference reader written here from spec 2, 3, 5, 6 and 7 (whole-buffer, independent of
 * src/moqt, with the integer and pairs of moqt_ref.h) that computes the standard event record of
 * the contract harness's moqt adapter (tests/contract/wk_contract_moqt.h), and the target body:
 * the reader driven by fuzz_drive (fuzz/fuzz_drive.h: the contract harness, in pushes of the
 * chosen size and whole, with the adapter's checks on every event), then compared with the
 * reference. Included by exactly those two files; everything is static. */
#ifndef WK_FUZZ_MOQT_FUZZ_H
#define WK_FUZZ_MOQT_FUZZ_H

#include <wirekit/moqt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_drive.h"
#include "moqt_ref.h"
#include "wk_contract_moqt.h"

static const size_t mf_pushes[8] = {1, 2, 3, 5, 8, 64, 1000, 0 /* whole */};
/* properties scratch capacities: index 0 = NULL (the reader's built-in 1024 bytes) */
static const size_t mf_caps[8] = {0, 0, 1, 4, 16, 300, 4096, 70000};
#define MF_SCRATCH_MAX 70000
static uint8_t mf_scratch[MF_SCRATCH_MAX];

/* ---------------------------------------------------------------------------------------------
 * Reference reader (spec 2, 3, 5, 6, 7), whole buffer, written from the spec and moqt.h's
 * decisions
 * ------------------------------------------------------------------------------------------- */

/* Properties Length and block; *p and *plen give the pairs. */
static bool ref_props(mr_ref *x, const wk_moqt_read_options *o, const uint8_t **p, size_t *plen)
{
    uint64_t at = x->pos, len;
    if (!mr_int(x, &len)) return false;
    if (len > wk_contract_moqt_scratch_cap(o))
        return mr_fail(x, WK_ERR_MOQT_PROPERTIES_TOO_LARGE, at);
    if (x->n - x->pos < len) return mr_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    *p = x->w + x->pos;
    *plen = (size_t)len;
    x->pos += (size_t)len;
    return true;
}

/* An object's payload of len bytes: recorded as far as the input holds it, then its end;
 * MOQT_ERR_TRUNCATED at the input's end when it is cut short. */
static bool ref_payload(mr_ref *x, wk_contract_hash *record, uint64_t len)
{
    uint64_t avail = x->n - x->pos;
    uint64_t got = avail < len ? avail : len;
    wk_contract_hash_add(record, x->w + x->pos, (size_t)got);
    x->pos += (size_t)got;
    if (got < len) return mr_fail(x, WK_ERR_MOQT_TRUNCATED, x->n);
    wk_contract_moqt_rec_payload_end(record, len);
    return true;
}

typedef struct ref_outcome {
    wk_code code;
    uint64_t offset;
    wk_contract_hash record;
} ref_outcome;

static ref_outcome ref_read(wk_moqt_carrier expect, const wk_moqt_read_options *o,
                            const uint8_t *w, size_t n)
{
    mr_ref x = {w, n, 0, WK_OK, 0};
    ref_outcome r = {WK_OK, 0, {0, 0}};
    wk_contract_hash_init(&r.record);
    wk_moqt_stream_kind kind = WK_MOQT_KIND_NONE;
    uint64_t objects = 0;
    bool sub_known = false;
    uint64_t sub_id = 0, pad = 0;
    uint64_t type;
    if (!mr_int(&x, &type)) goto out;
    /* spec 2 and moqt.h: padding accepted whatever is expected; 0x05 fetch; 0x2F00 setup */
    if (type == WK_MOQT_STREAM_TYPE_PADDING) {
        wk_contract_moqt_rec_padding(&r.record, type);
        kind = WK_MOQT_KIND_PADDING;
        if (o->strict_padding)
            for (size_t i = x.pos; i < n; i++)
                if (w[i]) {
                    mr_fail(&x, WK_ERR_MOQT_PADDING_NONZERO, i);
                    goto out;
                }
        pad = n - x.pos;
        goto out;
    }
    bool fetch;
    if (expect == WK_MOQT_CARRIER_FETCH) {
        if (type != WK_MOQT_STREAM_TYPE_FETCH) {
            mr_fail(&x, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0);
            goto out;
        }
        fetch = true;
    } else if (type == WK_MOQT_STREAM_TYPE_FETCH || type == WK_MOQT_STREAM_TYPE_SETUP) {
        if (expect == WK_MOQT_CARRIER_SUBGROUP || type == WK_MOQT_STREAM_TYPE_SETUP) {
            mr_fail(&x, WK_ERR_MOQT_WRONG_STREAM_TYPE, 0);
            goto out;
        }
        fetch = true;
    } else if (expect == WK_MOQT_CARRIER_ANY && (type >= 128 || !(type & 0x10))) {
        mr_fail(&x, WK_ERR_MOQT_UNKNOWN_STREAM_TYPE, 0);
        goto out;
    } else {
        /* the three subgroup conditions, in the draft's order */
        wk_code c = type >= 128 ? WK_ERR_MOQT_SUBGROUP_TYPE_TOO_LARGE
                    : !(type & 0x10) ? WK_ERR_MOQT_SUBGROUP_BIT4_CLEAR
                    : ((type >> 1) & 3) == 3 ? WK_ERR_MOQT_SUBGROUP_ID_MODE_RESERVED
                                             : WK_OK;
        if (c != WK_OK) {
            mr_fail(&x, c, 0);
            goto out;
        }
        fetch = false;
    }

    if (!fetch) {
        wk_moqt_subgroup_header h;
        memset(&h, 0, sizeof h);
        h.type = type;
        unsigned mode = (unsigned)(type >> 1) & 3;
        if (!mr_int(&x, &h.track_alias) || !mr_int(&x, &h.group_id)) goto out;
        h.subgroup_id_known = mode != 1;
        if (mode == 2 && !mr_int(&x, &h.subgroup_id)) goto out;
        h.has_priority = !(type & 0x20);
        if (h.has_priority && !mr_byte(&x, &h.publisher_priority)) goto out;
        wk_contract_moqt_rec_subgroup_header(&r.record, type, &h);
        kind = WK_MOQT_KIND_SUBGROUP;
        sub_known = h.subgroup_id_known;
        sub_id = h.subgroup_id;
        bool have_prev = false, ended = false;
        uint64_t prev = 0;
        while (x.pos < n) {
            wk_moqt_subgroup_object ob;
            memset(&ob, 0, sizeof ob);
            ob.offset = x.pos;
            if (!mr_int(&x, &ob.object_id_delta)) goto out;
            if (ended && !o->allow_objects_after_end) {
                mr_fail(&x, WK_ERR_MOQT_OBJECT_AFTER_END, ob.offset);
                goto out;
            }
            if (have_prev) {
                if (prev == UINT64_MAX || ob.object_id_delta > UINT64_MAX - prev - 1) {
                    mr_fail(&x, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, ob.offset);
                    goto out;
                }
                ob.object_id = prev + 1 + ob.object_id_delta;
            } else {
                ob.object_id = ob.object_id_delta;
            }
            ob.has_properties = type & 1;
            uint64_t props_at = 0;
            if (ob.has_properties) {
                if (!ref_props(&x, o, &ob.properties, &ob.properties_len)) goto out;
                props_at = x.pos - ob.properties_len;
            }
            if (!mr_int(&x, &ob.payload_length)) goto out;
            if (ob.payload_length == 0) {
                uint64_t at = x.pos;
                ob.has_status = true;
                if (!mr_int(&x, &ob.status)) goto out;
                if (!o->allow_unknown_status && !wk_moqt_status_is_assigned(ob.status)) {
                    mr_fail(&x, WK_ERR_MOQT_UNKNOWN_STATUS, at);
                    goto out;
                }
                if (ob.status == 3 || ob.status == 4) ended = true;
            }
            /* the pairs are validated once the framing is complete (reader.c's order) */
            if (ob.properties_len && !o->properties_length_only &&
                !mr_pairs(&x, ob.properties, ob.properties_len, props_at))
                goto out;
            if (!have_prev && !sub_known) {
                sub_known = true; /* SUBGROUP_ID_MODE 0b01 */
                sub_id = ob.object_id;
            }
            have_prev = true;
            prev = ob.object_id;
            objects++;
            wk_contract_moqt_rec_object(&r.record, &ob);
            if (!ref_payload(&x, &r.record, ob.payload_length)) goto out;
        }
        goto out;
    }

    /* fetch stream: the flags are judged at once, the IDs once the record's framing is read
     * (reader.c's order: fields, End of Range length, Group ID, Object ID, Subgroup ID, pairs) */
    uint64_t req;
    if (!mr_int(&x, &req)) goto out;
    wk_contract_moqt_rec_fetch_header(&r.record, req);
    kind = WK_MOQT_KIND_FETCH;
    bool desc = o->group_order == WK_MOQT_GROUP_ORDER_DESCENDING;
    bool abs = o->end_of_range == WK_MOQT_END_OF_RANGE_ABSOLUTE;
    bool any_record = false, any_object = false, prior_has_sub = false;
    uint64_t pg = 0, po = 0, psub = 0;
    uint8_t pprio = 0;
    while (x.pos < n) {
        wk_moqt_fetch_object fo;
        memset(&fo, 0, sizeof fo);
        fo.offset = x.pos;
        fo.first_record = !any_record;
        if (!mr_int(&x, &fo.flags)) goto out;
        uint64_t fl = fo.flags;
        bool dg = false;
        unsigned mode = 0;
        if (fl > WK_MOQT_FETCH_FLAGS_MAX) {
            if (!wk_moqt_fetch_flags_is_end_of_range(fl)) {
                mr_fail(&x, WK_ERR_MOQT_SERIALIZATION_FLAGS, fo.offset);
                goto out;
            }
            fo.end_of_range = true;
        } else {
            dg = fl & WK_MOQT_FETCH_DATAGRAM;
            mode = (unsigned)(fl & 3);
            bool refers_sub = !dg && (mode == 1 || mode == 2);
            bool refers_prio = !(fl & WK_MOQT_FETCH_PRIORITY);
            if (fo.first_record && (!(fl & WK_MOQT_FETCH_GROUP_ID_DELTA) ||
                                    !(fl & WK_MOQT_FETCH_OBJECT_ID_DELTA) || refers_sub ||
                                    refers_prio)) {
                mr_fail(&x, WK_ERR_MOQT_FIRST_RECORD, fo.offset);
                goto out;
            }
            if (!any_object && (refers_sub || refers_prio)) {
                mr_fail(&x, WK_ERR_MOQT_NO_PRIOR_OBJECT, fo.offset);
                goto out;
            }
            if (refers_sub && !prior_has_sub) {
                mr_fail(&x, WK_ERR_MOQT_PRIOR_NO_SUBGROUP, fo.offset);
                goto out;
            }
        }
        /* the fields */
        uint64_t gat = 0, oat = 0, props_at = 0;
        if (fo.end_of_range && abs) {
            if (!mr_int(&x, &fo.group_id) || !mr_int(&x, &fo.object_id)) goto out;
        } else {
            fo.has_group_id_delta = fo.end_of_range || (fl & WK_MOQT_FETCH_GROUP_ID_DELTA);
            fo.has_object_id_delta = fo.end_of_range || (fl & WK_MOQT_FETCH_OBJECT_ID_DELTA);
            fo.has_subgroup_id = !fo.end_of_range && !dg;
            fo.has_priority = !fo.end_of_range;
            fo.has_properties = !fo.end_of_range && (fl & WK_MOQT_FETCH_PROPERTIES);
            fo.has_payload_length = true;
            gat = x.pos;
            if (fo.has_group_id_delta && !mr_int(&x, &fo.group_id_delta)) goto out;
            if (fo.has_subgroup_id && mode == 3 && !mr_int(&x, &fo.subgroup_id)) goto out;
            oat = x.pos;
            if (fo.has_object_id_delta && !mr_int(&x, &fo.object_id_delta)) goto out;
            fo.publisher_priority = pprio;
            if (fo.has_priority && (fl & WK_MOQT_FETCH_PRIORITY) &&
                !mr_byte(&x, &fo.publisher_priority))
                goto out;
            if (fo.has_properties) {
                if (!ref_props(&x, o, &fo.properties, &fo.properties_len)) goto out;
                props_at = x.pos - fo.properties_len;
            }
            uint64_t lat = x.pos;
            if (!mr_int(&x, &fo.payload_length)) goto out;
            if (fo.end_of_range && fo.payload_length != 0) {
                mr_fail(&x, WK_ERR_MOQT_END_OF_RANGE_LENGTH, lat);
                goto out;
            }
            /* Group ID */
            uint64_t d = fo.group_id_delta;
            if (fo.first_record) {
                fo.group_id = d;
            } else if (!fo.has_group_id_delta) {
                fo.group_id = pg;
            } else if (!desc) {
                if (pg == UINT64_MAX || d > UINT64_MAX - pg - 1) {
                    mr_fail(&x, WK_ERR_MOQT_GROUP_ID_OVERFLOW, gat);
                    goto out;
                }
                fo.group_id = pg + d + 1;
            } else {
                if (d >= pg) {
                    mr_fail(&x, WK_ERR_MOQT_GROUP_ID_OVERFLOW, gat);
                    goto out;
                }
                fo.group_id = pg - d - 1;
            }
            /* Object ID */
            if (fo.has_object_id_delta &&
                (fo.first_record || fo.has_group_id_delta)) {
                fo.object_id = fo.object_id_delta;
            } else if (fo.has_object_id_delta) {
                if (fo.object_id_delta > UINT64_MAX - po) {
                    mr_fail(&x, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, oat);
                    goto out;
                }
                fo.object_id = po + fo.object_id_delta;
            } else {
                if (po == UINT64_MAX) {
                    mr_fail(&x, WK_ERR_MOQT_OBJECT_ID_OVERFLOW, fo.offset);
                    goto out;
                }
                fo.object_id = po + 1;
            }
            /* Subgroup ID */
            if (fo.has_subgroup_id) {
                if (mode == 0) fo.subgroup_id = 0;
                else if (mode == 1) fo.subgroup_id = psub;
                else if (mode == 2) {
                    if (psub == UINT64_MAX) {
                        mr_fail(&x, WK_ERR_MOQT_SUBGROUP_ID_OVERFLOW, fo.offset);
                        goto out;
                    }
                    fo.subgroup_id = psub + 1;
                }
            }
            if (fo.properties_len && !o->properties_length_only &&
                !mr_pairs(&x, fo.properties, fo.properties_len, props_at))
                goto out;
        }
        any_record = true;
        pg = fo.group_id;
        po = fo.object_id;
        if (!fo.end_of_range) {
            any_object = true;
            prior_has_sub = !dg;
            psub = dg ? 0 : fo.subgroup_id;
            pprio = fo.publisher_priority;
        }
        objects++;
        wk_contract_moqt_rec_fetch_object(&r.record, &fo);
        if (!ref_payload(&x, &r.record, fo.payload_length)) goto out;
    }
out:
    if (x.code == WK_OK)
        wk_contract_moqt_rec_end(&r.record, kind, pad, objects, sub_known, sub_id);
    r.code = x.code;
    r.offset = x.offset;
    return r;
}

/* ---------------------------------------------------------------------------------------------
 * The target body shared by both stream targets
 *
 * Header bytes:
 *   byte 0  bits 0-2 push size (1, 2, 3, 5, 8, 64, 1000, all), bit 3 carrier ANY (else the
 *           target's own), bit 4 strict_padding, bit 5 properties_length_only, bit 6
 *           allow_unknown_status, bit 7 allow_objects_after_end
 *   byte 1  bits 0-2 properties scratch (NULL = built-in 1024 bytes, or a caller buffer of 0, 1,
 *           4, 16, 300, 4096, 70000 bytes), bit 3 End of Range reading B (absolute), bit 4 group
 *           order Descending, bit 5 group order given explicitly as Ascending (same as the default)
 * ------------------------------------------------------------------------------------------- */
static int mf_target(const uint8_t *data, size_t size, wk_moqt_carrier own)
{
    if (size < 2) return 0;
    wk_moqt_read_options o;
    memset(&o, 0, sizeof o);
    wk_moqt_carrier expect = (data[0] & 0x08) ? WK_MOQT_CARRIER_ANY : own;
    size_t push = mf_pushes[data[0] & 7];
    o.strict_padding = data[0] & 0x10;
    o.properties_length_only = data[0] & 0x20;
    o.allow_unknown_status = data[0] & 0x40;
    o.allow_objects_after_end = data[0] & 0x80;
    unsigned ci = data[1] & 7;
    if (ci) {
        o.properties_buf = mf_scratch;
        o.properties_cap = mf_caps[ci];
    }
    o.end_of_range = (data[1] & 0x08) ? WK_MOQT_END_OF_RANGE_ABSOLUTE : WK_MOQT_END_OF_RANGE_DELTA;
    o.group_order = (data[1] & 0x10)   ? WK_MOQT_GROUP_ORDER_DESCENDING
                    : (data[1] & 0x20) ? WK_MOQT_GROUP_ORDER_ASCENDING
                                       : WK_MOQT_GROUP_ORDER_DEFAULT;
    const uint8_t *w = data + 2;
    size_t n = size - 2;
    /* the contract on every call and event, in the chosen pushes and whole, both alike */
    static wk_contract_moqt m; /* reused: every run re-initializes the reader */
    wk_contract_moqt_setup(&m, expect, &o);
    wk_contract_outcome oc = fuzz_drive(&wk_contract_moqt_ops, &m, NULL, w, n, push, 0);
    if (oc.verdict == WK_ERROR) mr_check_error(&oc.error, n);
    /* the reference reader: the same verdict and events */
    ref_outcome ref = ref_read(expect, &o, w, n);
    wk_code code = oc.verdict == WK_DONE ? WK_OK : oc.error.code;
    uint64_t offset = oc.verdict == WK_DONE ? 0 : oc.error.offset;
    bool same_record = ref.record.h == oc.record.h && ref.record.n == oc.record.n;
    if (ref.code != code || ref.offset != offset || !same_record) {
        fprintf(stderr, "reference: %s at %llu; reader: %s at %llu; records %s\n",
                wk_error_name(ref.code), (unsigned long long)ref.offset, wk_error_name(code),
                (unsigned long long)offset, same_record ? "agree" : "differ");
        CHECK(0);
    }
    return 0;
}

#endif
