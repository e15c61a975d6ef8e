/* The contract harness's adapter for wk_colloq_reader: see wk_contract_colloq.h. */
#include "wk_contract_colloq.h"

#include <stdlib.h>
#include <string.h>

enum { REC_FRAME = 1, REC_END };

void wk_contract_colloq_setup(wk_contract_colloq *m, const wk_colloq_plan *plan,
                              wk_colloq_wire wire, uint32_t sender)
{
    memset(m, 0, sizeof *m);
    m->params.plan = plan;
    m->params.wire = wire;
    m->params.sender = sender;
}

static bool c_reset(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_colloq *m = obj;
    wk_error err;
    wk_colloq_reader_destroy(m->r);
    m->r = wk_colloq_reader_create(&m->params, &err);
    m->frames = 0;
    memset(&m->end, 0, sizeof m->end);
    return m->r != NULL;
}

static void c_destroy(void *obj, void *ctx)
{
    (void)ctx;
    wk_contract_colloq *m = obj;
    wk_colloq_reader_destroy(m->r);
    m->r = NULL;
}

static wk_result c_step(void *obj, wk_in *in, wk_out *out, wk_error *err)
{
    wk_contract_colloq *m = obj;
    if (m->sender_at &&
        wk_colloq_reader_sender_set(m->r, m->sender_at(m, wk_colloq_reader_consumed_get(m->r)), err) !=
            WK_OK)
        return WK_ERROR;
    return wk_colloq_reader_read(m->r, in, out, err);
}

static wk_result c_finish(void *obj, const wk_in *rest, wk_error *err)
{
    return wk_colloq_reader_finish(((wk_contract_colloq *)obj)->r, rest, err);
}

static bool c_event(wk_contract *c, void *obj)
{
    wk_contract_colloq *m = obj;
    const wk_colloq_plan *plan = m->params.plan;
    const wk_colloq_frame *f = wk_colloq_reader_frame_get(m->r);
    const wk_colloq_session *s = wk_colloq_reader_session_get(m->r);
    if (f->transition >= plan->transition_count)
        return wk_contract_fail(c, "frame %llu: transition %u outside the table",
                                (unsigned long long)m->frames, (unsigned)f->transition);
    const wk_colloq_transition *t = &plan->transitions[f->transition];
    const uint64_t seq = (m->params.session ? m->params.session->next_seq : 0) + m->frames;
    if (f->seq != seq || s->next_seq != seq + 1 || s->state != t->to || s->failure)
        return wk_contract_fail(c, "frame %llu: seq %llu, session at seq %llu state %u (want %u)",
                                (unsigned long long)m->frames, (unsigned long long)f->seq,
                                (unsigned long long)s->next_seq, (unsigned)s->state, (unsigned)t->to);
    if (wk_colloq_reader_consumed_get(m->r) != c->push_offset + c->push->pos)
        return wk_contract_fail(c, "frame %llu: consumed() %llu, the harness saw %llu",
                                (unsigned long long)m->frames,
                                (unsigned long long)wk_colloq_reader_consumed_get(m->r),
                                (unsigned long long)(c->push_offset + c->push->pos));
    size_t n = 0;
    wk_error err;
    if (wk_colloq_trace_frame_size(plan, f, &n, &err) != WK_OK)
        return wk_contract_fail(c, "frame %llu: no trace line: %s", (unsigned long long)m->frames,
                                err.msg);
    uint8_t *line = malloc(n);
    wk_out o = {line, n, 0};
    bool ok = line && wk_colloq_trace_frame_encode(plan, f, &o, &err) == WK_DONE && o.pos == n;
    if (ok) {
        wk_contract_record_u64(c, REC_FRAME);
        wk_contract_record_u64(c, f->transition);
        wk_contract_record_u64(c, f->seq);
        wk_contract_record(c, line, n);
    }
    free(line);
    if (!ok)
        return wk_contract_fail(c, "frame %llu: the trace line is not %zu bytes",
                                (unsigned long long)m->frames, n);
    m->frames++;
    return m->on_event ? m->on_event(c, m) : true;
}

static bool c_end(wk_contract *c, void *obj)
{
    wk_contract_colloq *m = obj;
    const wk_colloq_session *s = wk_colloq_reader_session_get(m->r);
    m->end = *s;
    if (c->oc.verdict == WK_DONE && s->failure)
        return wk_contract_fail(c, "a clean end with the session failed (%s)",
                                wk_error_name(s->failure));
    if (c->oc.verdict == WK_ERROR) {
        const wk_error *e = &c->oc.error;
        if (!wk_colloq_code_is_failure(e->code) || e->code != s->failure ||
            e->category != WK_CAT_PEER_PROTOCOL ||
            s->failure_seq != (m->params.session ? m->params.session->next_seq : 0) + m->frames)
            return wk_contract_fail(c, "the error %s is not the session's failure %s at seq %llu",
                                    wk_error_name(e->code), wk_error_name(s->failure),
                                    (unsigned long long)m->frames);
    }
    uint64_t rec[] = {REC_END, s->state, s->next_seq, s->finished, (uint64_t)s->failure,
                      s->failure_seq};
    for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++) wk_contract_record_u64(c, rec[i]);
    return true;
}

const wk_contract_ops wk_contract_colloq_ops = {
    "colloq_reader", c_reset, c_destroy, c_step, c_finish, c_event, c_end, false, 0, NULL};
