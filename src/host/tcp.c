/* wirekit host: the tcp: carrier (Lace-060 `tcp:host[:port]`, default port 4790) over libuv.
 *
 * The host name resolves once, when the carrier is made (literal addresses, or the system
 * resolver before the loop runs). A listener prints its canonical address with the bound port
 * (port 0 asks the OS for one). Proof assurance: Disabled unless overridden (Lace-060 "Transport
 * proof defaults"). */
#include "uvstream.h"
#include <netdb.h>
#include <stdio.h>
#include <string.h>

static wk_code tcp_listen(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier_listener **out,
                          wk_error *err)
{
    struct sockaddr_storage ss;
    if (wk_host_resolve(&cfg->addr, SOCK_STREAM, &ss, NULL, err) != WK_OK) return err ? err->code : WK_ERR_HOST_RESOLVE;
    wk_uvstream_listener *ls = wk_uvstream_listener_new(loop, cfg, true);
    if (!ls) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "listener");
    uv_tcp_init(loop->uv, &ls->h.tcp);
    ls->h_init = true;
    int rc = uv_tcp_bind(&ls->h.tcp, (const struct sockaddr *)&ss, 0);
    wk_code c = rc < 0 ? wk_host_uv_error(err, WK_ERR_HOST_LISTEN, rc, "listen") : wk_uvstream_listen(ls, cfg->backlog, err);
    if (c != WK_OK) {
        wk_uvstream_listener_discard(ls);
        return c;
    }
    struct sockaddr_storage bound;
    int bl = sizeof bound;
    uv_tcp_getsockname(&ls->h.tcp, (struct sockaddr *)&bound, &bl);
    ls->l.address.port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                           : ((struct sockaddr_in *)&bound)->sin_port);
    ls->l.address.port_given = true;
    *out = &ls->l;
    return WK_OK;
}

static void on_connect(uv_connect_t *r, int status)
{
    wk_uvstream *s = r->data;
    if (status == UV_ECANCELED) return; /* closed while connecting */
    if (status < 0) {
        wk_error e;
        wk_host_uv_error(&e, WK_ERR_HOST_CONNECT, status, "connect");
        wk_uvstream_setup_failed(s, &e);
        return;
    }
    uv_tcp_nodelay(&s->h.tcp, 1); /* batches are written whole; small ones must not wait */
    wk_uvstream_peer_name(s);
    wk_uvstream_connected(s);
}

/* The dial, run by start(), to the address resolved when the carrier was made. */
static void tcp_dial(wk_uvstream *s)
{
    wk_error e;
    s->creq.data = s;
    int rc = uv_tcp_connect(&s->creq, &s->h.tcp, (const struct sockaddr *)&s->dial_addr, on_connect);
    if (rc < 0) {
        wk_host_uv_error(&e, WK_ERR_HOST_CONNECT, rc, "connect");
        wk_uvstream_setup_failed(s, &e);
    }
}

static wk_code tcp_connect(wk_host_loop *loop, const wk_carrier_config *cfg, wk_carrier **out, wk_error *err)
{
    struct sockaddr_storage ss;
    /* resolved now, before the loop runs (the resolver blocks), so a bad name fails at once */
    if (wk_host_resolve(&cfg->addr, SOCK_STREAM, &ss, NULL, err) != WK_OK) return err ? err->code : WK_ERR_HOST_RESOLVE;
    wk_uvstream *s = wk_uvstream_new(loop, &cfg->addr, cfg->transport_timeout_ms, cfg->assurance_override);
    if (!s) return wk_error_set(err, WK_ERR_NOMEM, WK_NO_OFFSET, "carrier");
    s->dial_addr = ss;
    uv_tcp_init(loop->uv, &s->h.tcp);
    s->h_init = true;
    s->h.handle.data = s;
    s->dial = tcp_dial;
    *out = &s->c;
    return WK_OK;
}

const wk_carrier_kind wk_carrier_tcp = {WK_ILTP_SCHEME_TCP, tcp_listen, tcp_connect};
