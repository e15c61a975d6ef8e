/* colloq: the checker (spec "Checking"): state, sender, sequence, schedule. One code path for
 * all three encodings: decoders only fill a wk_colloq_frame. */
#include "colloq_internal.h"
#include <inttypes.h>

void wk_colloq_session_init(wk_colloq_session *s, const wk_colloq_plan *plan)
{
    s->plan = plan;
    s->state = plan->initial;
    s->next_seq = 0;
    s->finished = plan->is_final[plan->initial];
    s->failure = WK_OK;
    s->failure_seq = 0;
    memset(&s->error, 0, sizeof s->error);
}

/* A failed session reports its failure again, unchanged (every field of the wk_error). */
static wk_code refail(wk_colloq_session *s, wk_error *err)
{
    if (s->error.code != s->failure) /* failure set by hand (the struct is public) */
        wk_error_set(&s->error, s->failure, WK_NO_OFFSET, "seq %" PRIu64 ": session already failed (%s)",
                     s->failure_seq, wk_colloq_failure_name(s->failure));
    if (err) *err = s->error;
    return s->failure;
}

static wk_code fail(wk_colloq_session *s, wk_code code, uint64_t off, wk_error *err,
                    const char *why)
{
    s->failure = code;
    s->failure_seq = s->next_seq;
    wk_error_set(&s->error, code, off, "seq %" PRIu64 ": %s", s->next_seq, why);
    return refail(s, err);
}

wk_code wk_colloq_session_check(wk_colloq_session *s, const wk_colloq_frame *f, uint32_t sender,
                        wk_error *err)
{
    if (s->failure) return refail(s, err);
    if (s->finished) return fail(s, WK_ERR_COLLOQ_AFTER_FINAL, WK_NO_OFFSET, err, "frame after a final state");
    const wk_colloq_plan *plan = s->plan;
    uint32_t t = f->transition;
    if (t >= plan->transition_count)
        return fail(s, WK_ERR_COLLOQ_UNKNOWN_TRANSITION, WK_NO_OFFSET, err, "no such transition");
    const wk_colloq_transition *tr = &plan->transitions[t];
    if (tr->from != s->state)
        return fail(s, WK_ERR_COLLOQ_WRONG_STATE, WK_NO_OFFSET, err, "transition does not start at the current state");
    /* a reference frame whose "sender" names no transition from (state, message), or (live) a
     * frame that did not come from its transition's role */
    if (f->sender_mismatch || (sender != WK_COLLOQ_SENDER_TRANSCRIPT && tr->sender != sender))
        return fail(s, WK_ERR_COLLOQ_WRONG_SENDER, WK_NO_OFFSET, err, "sent by a role the transition does not name");
    if (f->seq != s->next_seq)
        return fail(s, WK_ERR_COLLOQ_BAD_SEQUENCE, WK_NO_OFFSET, err, "sequence number is not the next one");
    if (f->payload_error != WK_OK)
        return fail(s, f->payload_error, f->payload_error_offset, err,
                    f->payload_error_reason ? f->payload_error_reason : "payload does not fit its schedule");
    s->state = tr->to;
    s->next_seq++;
    s->finished = plan->is_final[tr->to];
    return WK_OK;
}

wk_code wk_colloq_session_fail(wk_colloq_session *s, wk_code code, wk_error *err)
{
    if (s->failure) return refail(s, err);
    if (s->finished) return fail(s, WK_ERR_COLLOQ_AFTER_FINAL, WK_NO_OFFSET, err, "input after a final state");
    if (!wk_colloq_code_is_failure(code)) code = WK_ERR_COLLOQ_MALFORMED_PAYLOAD;
    /* keep the decoder's message and offset when err already carries this code */
    if (err && err->code == code) {
        s->failure = code;
        s->failure_seq = s->next_seq;
        s->error = *err;
        return code;
    }
    return fail(s, code, WK_NO_OFFSET, err, wk_colloq_failure_name(code));
}

wk_result wk_colloq_session_finish(wk_colloq_session *s, const wk_in *rest, wk_error *err)
{
    size_t leftover = rest && rest->pos < rest->size ? rest->size - rest->pos : 0;
    if (s->failure) return refail(s, err), WK_ERROR;
    if (leftover == 0) return WK_DONE;
    if (s->finished) fail(s, WK_ERR_COLLOQ_AFTER_FINAL, WK_NO_OFFSET, err, "input after a final state");
    else fail(s, WK_ERR_COLLOQ_TRUNCATED, WK_NO_OFFSET, err, "input ended inside a frame");
    return WK_ERROR;
}

wk_result wk_colloq_session_step(wk_colloq_session *s, wk_colloq_decoder *d, wk_in *in,
                                 uint32_t sender, wk_colloq_frame *f, wk_error *err)
{
    wk_error local;
    if (!err) err = &local;
    if (s->failure) {
        refail(s, err);
        return WK_ERROR;
    }
    if (in->pos >= in->size) return WK_NEED_INPUT;
    wk_result r = wk_colloq_decoder_decode(d, in, f, err);
    if (r == WK_NEED_INPUT) return r;
    if (r == WK_ERROR) {
        wk_colloq_session_fail(s, err->code, err);
        return WK_ERROR;
    }
    return wk_colloq_session_check(s, f, sender, err) == WK_OK ? WK_DONE : WK_ERROR;
}
