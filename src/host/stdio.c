/* wirekit host: the stdio carrier (Lace-060 `stdio`): stdin and stdout of the process, which must
 * be pipes or sockets (libuv pipes; a terminal or a regular file is refused). One carrier per
 * process: a "listener" delivers it once (side0); a connector uses it as side1. Half-close shuts
 * stdout. Proof assurance: Disabled unless overridden. */
#include "uvstream.h"
#include <stdlib.h>
#include <string.h>

/* Both descriptors as one carrier, or NULL with *err. */
static wk_uvstream *open_stdio(wk_host_loop *loop, const wk_carrier_config *cfg, wk_error *err)
{
    wk_uvstream *s = wk_uvstream_new(loop, &cfg->addr, cfg->transport_timeout_ms, cfg->assurance_override);
    if (!s) {
        wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "carrier");
        return NULL;
    }
    uv_pipe_init(loop->uv, &s->h.pipe, 0);
    s->h_init = true;
    s->h.handle.data = s;
    uv_pipe_init(loop->uv, &s->wpipe, 0);
    s->wpipe_init = true;
    s->wpipe.data = s;
    if (uv_pipe_open(&s->h.pipe, 0) != 0 || uv_pipe_open(&s->wpipe, 1) != 0) {
        wk_error_set(err, WK_ERR_HOST_CARRIER, WK_NO_OFFSET, "stdio carrier needs pipes or sockets on stdin and stdout");
        wk_carrier_close(&s->c);
        return NULL;
    }
    return s;
}

static wk_code stdio_connect(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier **out, wk_error *err)
{
    wk_uvstream *s = open_stdio(loop, cfg, err);
    if (!s) return err ? err->code : WK_ERR_HOST_CARRIER;
    *out = &s->c;
    return WK_OK;
}

/* The listener: hands over the one carrier from the loop, then accepts nothing. */
typedef struct stdio_listener {
    wk_carrier_listener l;
    uv_timer_t timer;
    wk_uvstream *pending;
    bool closing;
} stdio_listener;

static void on_listener_closed(uv_handle_t *h) { free(h->data); }

static void l_close(wk_carrier_listener *l)
{
    stdio_listener *sl = (stdio_listener *)l;
    if (sl->closing) return;
    sl->closing = true;
    if (sl->pending) wk_carrier_close(&sl->pending->c);
    sl->pending = NULL;
    sl->timer.data = sl;
    uv_close((uv_handle_t *)&sl->timer, on_listener_closed);
}

static const wk_carrier_listener_ops stdio_listener_ops = {l_close};

static void on_deliver(uv_timer_t *t)
{
    stdio_listener *sl = t->data;
    wk_uvstream *s = sl->pending;
    sl->pending = NULL;
    if (s && !sl->closing) sl->l.accepted(&sl->l, &s->c);
}

static wk_code stdio_listen(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier_listener **out,
                            wk_error *err)
{
    stdio_listener *sl = calloc(1, sizeof *sl);
    if (!sl) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "listener");
    sl->pending = open_stdio(loop, cfg, err);
    if (!sl->pending) {
        free(sl);
        return err ? err->code : WK_ERR_HOST_CARRIER;
    }
    sl->l.ops = &stdio_listener_ops;
    sl->l.loop = loop;
    sl->l.address = cfg->addr;
    uv_timer_init(loop->uv, &sl->timer);
    sl->timer.data = sl;
    uv_timer_start(&sl->timer, on_deliver, 0, 0);
    *out = &sl->l;
    return WK_OK;
}

const wk_carrier_kind wk_carrier_stdio = {WK_ILTP_SCHEME_STDIO, stdio_listen, stdio_connect};
