/* wirekit host: the unix: carrier (Lace-060 `unix:/absolute/path`) over libuv pipes.
 *
 * A listener removes a stale socket file at its path before binding (an earlier run's), and
 * prints the path as its canonical address. Proof assurance: Disabled unless overridden. */
#include "uvstream.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static wk_code unix_listen(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier_listener **out,
                           wk_error *err)
{
    wk_uvstream_listener *ls = wk_uvstream_listener_new(loop, cfg, false);
    if (!ls) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "listener");
    uv_pipe_init(loop->uv, &ls->h.pipe, 0);
    ls->h_init = true;
    unlink(cfg->addr.path); /* a stale socket file from an earlier run */
    int rc = uv_pipe_bind(&ls->h.pipe, cfg->addr.path);
    wk_code c = rc < 0 ? wk_host_uv_error(err, WK_ERR_HOST_LISTEN, rc, "listen") : wk_uvstream_listen(ls, cfg->backlog, err);
    if (c != WK_OK) {
        wk_uvstream_listener_discard(ls);
        return c;
    }
    *out = &ls->l;
    return WK_OK;
}

static void on_connect(uv_connect_t *r, int status)
{
    wk_uvstream *s = r->data;
    if (status == UV_ECANCELED) return;
    if (status < 0) {
        wk_error e;
        wk_host_uv_error(&e, WK_ERR_HOST_CONNECT, status, "connect");
        wk_uvstream_setup_failed(s, &e);
        return;
    }
    wk_uvstream_connected(s);
}

static void unix_dial(wk_uvstream *s)
{
    s->creq.data = s;
    uv_pipe_connect(&s->creq, &s->h.pipe, s->c.address.path, on_connect);
}

static wk_code unix_connect(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier **out, wk_error *err)
{
    wk_uvstream *s = wk_uvstream_new(loop, &cfg->addr, cfg->transport_timeout_ms, cfg->assurance_override);
    if (!s) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "carrier");
    uv_pipe_init(loop->uv, &s->h.pipe, 0);
    s->h_init = true;
    s->h.handle.data = s;
    s->dial = unix_dial;
    snprintf(s->c.peer, sizeof s->c.peer, "unix:%.80s", cfg->addr.path);
    *out = &s->c;
    return WK_OK;
}

const wk_carrier_kind wk_carrier_unix = {WK_ILTP_SCHEME_UNIX, unix_listen, unix_connect};
