/* wirekit host: the event loop, the carrier table and proof-assurance resolution.
 *
 * One libuv loop runs every carrier and session of a process; nothing on it blocks. The carrier
 * table maps a scheme to the file that implements its carrier (carrier.h explains how one plugs
 * in). */
#include "carrier.h"
#include <netdb.h>
#include <stdio.h>
#include <string.h>

/* ---- the loop ---------------------------------------------------------------------------- */
wk_code wk_host_loop_init(wk_host_loop *l, FILE *log, wk_error *err)
{
    memset(l, 0, sizeof *l);
    l->uv = uv_default_loop();
    if (!l->uv) return wk_error_set(err, WK_ERR_HOST_IO, WK_NO_OFFSET, "cannot create the event loop");
    l->log = log ? log : stderr;
    return WK_OK;
}

void wk_host_loop_run(wk_host_loop *l) { uv_run(l->uv, UV_RUN_DEFAULT); }

void wk_host_loop_close(wk_host_loop *l)
{
    if (!l->uv) return;
    uv_run(l->uv, UV_RUN_NOWAIT); /* pending close callbacks */
    l->uv = NULL;
}

uint64_t wk_host_loop_now(const wk_host_loop *l) { return uv_now(l->uv); }

wk_code wk_host_resolve(const wk_iltp_address *a, int socktype, struct sockaddr_storage *ss, socklen_t *len,
                        wk_error *err)
{
    char port[8];
    snprintf(port, sizeof port, "%u", a->port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = socktype;
    int rc = getaddrinfo(a->host, port, &hints, &res);
    if (rc != 0 || !res)
        return wk_error_set(err, WK_ERR_HOST_RESOLVE, WK_NO_OFFSET, "cannot resolve %s: %s", a->host, gai_strerror(rc));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    if (len) *len = (socklen_t)res->ai_addrlen;
    freeaddrinfo(res);
    return WK_OK;
}

wk_code wk_host_uv_error(wk_error *err, wk_code code, int uv_status, const char *what)
{
    return wk_error_set(err, code, WK_NO_OFFSET, "%s: %s", what, uv_strerror(uv_status));
}

/* ---- the carrier table ------------------------------------------------------------------- */
static const wk_carrier_kind *const kinds[] = {
    &wk_carrier_stdio,
    &wk_carrier_unix,
    &wk_carrier_tcp,
    &wk_carrier_ws,
    &wk_carrier_wss,
    &wk_carrier_quib,
};

const wk_carrier_kind *wk_carrier_kind_for(wk_iltp_scheme scheme)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i]->scheme == scheme) return kinds[i];
    return NULL;
}

/* ---- proof assurance (Lace-060 resolution table) ----------------------------------------- */
wk_iltp_assurance wk_host_assurance_resolve(wk_iltp_scheme scheme, bool verified_tls, bool has_exporter,
                                            wk_host_assurance_override override)
{
    bool bound = scheme == WK_ILTP_SCHEME_QUIB && has_exporter;
    switch (override) {
    case WK_HOST_OVERRIDE_DISABLED: return WK_ILTP_ASSURANCE_DISABLED;
    case WK_HOST_OVERRIDE_TRUST_CONFIDENTIAL_CHANNEL:
        return bound ? WK_ILTP_ASSURANCE_CHANNEL_BOUND : WK_ILTP_ASSURANCE_CONFIDENTIAL_CHANNEL;
    default: break;
    }
    if (bound) return WK_ILTP_ASSURANCE_CHANNEL_BOUND;
    if (scheme == WK_ILTP_SCHEME_WSS && verified_tls) return WK_ILTP_ASSURANCE_CONFIDENTIAL_CHANNEL;
    return WK_ILTP_ASSURANCE_DISABLED;
}
