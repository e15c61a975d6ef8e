/* The host's carrier layer without sockets: the proof-assurance resolution table (Lace-060) and
 * the carrier table. */
#include "wk_test.h"
#include "carrier.h" /* white-box: src/host is on this test's include path (host.cmake) */

static void test_resolution(void)
{
    const wk_iltp_assurance D = WK_ILTP_ASSURANCE_DISABLED, C = WK_ILTP_ASSURANCE_CONFIDENTIAL_CHANNEL,
                            B = WK_ILTP_ASSURANCE_CHANNEL_BOUND;
    const wk_host_assurance_override NONE = WK_HOST_OVERRIDE_NONE, OFF = WK_HOST_OVERRIDE_DISABLED,
                                     TRUST = WK_HOST_OVERRIDE_TRUST_CONFIDENTIAL_CHANNEL;
    /* automatic */
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_QUIB, true, true, NONE) == B);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_QUIB, true, false, NONE) == D);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_WSS, true, false, NONE) == C);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_WSS, false, false, NONE) == D); /* unverified */
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_WS, false, false, NONE) == D);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_TCP, false, false, NONE) == D);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_UNIX, false, false, NONE) == D);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_STDIO, false, false, NONE) == D);
    /* override Disabled */
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_QUIB, true, true, OFF) == D);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_WSS, true, false, OFF) == D);
    /* override TrustConfidentialChannel: keep ChannelBound when available */
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_QUIB, true, true, TRUST) == B);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_WS, false, false, TRUST) == C);
    CHECK(wk_host_assurance_resolve(WK_ILTP_SCHEME_TCP, false, false, TRUST) == C);
    CHECK(strcmp(wk_iltp_assurance_name(B), "ChannelBound") == 0);
    CHECK(strcmp(wk_iltp_assurance_name(C), "ConfidentialChannel") == 0);
    CHECK(strcmp(wk_iltp_assurance_name(D), "Disabled") == 0);
}

static void test_table(void)
{
    CHECK(wk_carrier_kind_for(WK_ILTP_SCHEME_TCP) == &wk_carrier_tcp);
    CHECK(wk_carrier_kind_for(WK_ILTP_SCHEME_UNIX) == &wk_carrier_unix);
    CHECK(wk_carrier_kind_for(WK_ILTP_SCHEME_STDIO) == &wk_carrier_stdio);
    CHECK(wk_carrier_kind_for(WK_ILTP_SCHEME_WS) == &wk_carrier_ws);
    CHECK(wk_carrier_kind_for(WK_ILTP_SCHEME_WSS) == &wk_carrier_wss);
    CHECK(wk_carrier_kind_for(WK_ILTP_SCHEME_QUIB) == &wk_carrier_quib);
    for (wk_iltp_scheme s = WK_ILTP_SCHEME_STDIO; s <= WK_ILTP_SCHEME_WSS; s++) {
        const wk_carrier_kind *k = wk_carrier_kind_for(s);
        if (k) CHECK(k->scheme == s && k->listen && k->connect);
    }
}

int main(void)
{
    test_resolution();
    test_table();
    return wk_test_summary("host_carrier");
}
