/* Lace-060 address strings: every example of the seed, defaults, canonical formatting and
 * round-trips, and a table of rejections with their offsets. Every input is parsed from an exact-size
 * heap copy (no terminating NUL), so ASan catches any read past len. */
#include "wk_test.h"
#include <wirekit/iltp.h>

#define S_STDIO WK_ILTP_SCHEME_STDIO
#define S_UNIX WK_ILTP_SCHEME_UNIX
#define S_TCP WK_ILTP_SCHEME_TCP
#define S_QUIB WK_ILTP_SCHEME_QUIB
#define S_WS WK_ILTP_SCHEME_WS
#define S_WSS WK_ILTP_SCHEME_WSS
#define H_NONE WK_ILTP_HOST_NONE
#define H_NAME WK_ILTP_HOST_NAME
#define H_V4 WK_ILTP_HOST_IPV4
#define H_V6 WK_ILTP_HOST_IPV6

/* Parses len bytes from an exact-size heap copy. */
static wk_code parse_n(const char *s, size_t len, wk_iltp_address *a, wk_error *err)
{
    char *copy = malloc(len ? len : 1);
    if (!copy) abort();
    memcpy(copy, s, len);
    wk_code rc = wk_iltp_address_parse(copy, len, a, err);
    free(copy);
    return rc;
}

static wk_code parse(const char *s, wk_iltp_address *a, wk_error *err)
{
    return parse_n(s, strlen(s), a, err);
}

static bool same_address(const wk_iltp_address *x, const wk_iltp_address *y)
{
    return x->scheme == y->scheme && x->host_kind == y->host_kind && strcmp(x->host, y->host) == 0 &&
           x->port == y->port && strcmp(x->path, y->path) == 0;
}

/* ---- valid addresses ---------------------------------------------------------------------- */

typedef struct valid_case {
    const char *in;
    wk_iltp_scheme scheme;
    wk_iltp_host_kind kind;
    const char *host;
    unsigned port;
    bool port_given;
    const char *path;
    bool path_given;
    const char *canonical;
} valid_case;

static const valid_case valid[] = {
    /* the seed's examples */
    {"stdio", S_STDIO, H_NONE, "", 0, false, "", false, "stdio"},
    {"unix:/tmp/lace.sock", S_UNIX, H_NONE, "", 0, false, "/tmp/lace.sock", true, "unix:/tmp/lace.sock"},
    {"tcp:127.0.0.1:4790", S_TCP, H_V4, "127.0.0.1", 4790, true, "", false, "tcp:127.0.0.1"},
    {"tcp:[::1]:4790", S_TCP, H_V6, "::1", 4790, true, "", false, "tcp:[::1]"},
    {"quib:example.com", S_QUIB, H_NAME, "example.com", 4790, false, "", false, "quib:example.com"},
    {"ws:127.0.0.1:4790/interlace", S_WS, H_V4, "127.0.0.1", 4790, true, "/interlace", true,
     "ws:127.0.0.1:4790"},
    {"wss:example.com/interlace", S_WSS, H_NAME, "example.com", 443, false, "/interlace", true,
     "wss:example.com"},
    /* defaults */
    {"tcp:example.com", S_TCP, H_NAME, "example.com", 4790, false, "", false, "tcp:example.com"},
    {"ws:example.com", S_WS, H_NAME, "example.com", 80, false, "/interlace", false, "ws:example.com"},
    {"wss:example.com", S_WSS, H_NAME, "example.com", 443, false, "/interlace", false, "wss:example.com"},
    {"ws:h:80", S_WS, H_NAME, "h", 80, true, "/interlace", false, "ws:h"},
    {"wss:h:443/interlace", S_WSS, H_NAME, "h", 443, true, "/interlace", true, "wss:h"},
    {"quib:h:443", S_QUIB, H_NAME, "h", 443, true, "", false, "quib:h:443"},
    {"wss:h:80", S_WSS, H_NAME, "h", 80, true, "/interlace", false, "wss:h:80"},
    /* ports */
    {"tcp:localhost:0", S_TCP, H_NAME, "localhost", 0, true, "", false, "tcp:localhost:0"},
    {"tcp:localhost:1", S_TCP, H_NAME, "localhost", 1, true, "", false, "tcp:localhost:1"},
    {"tcp:localhost:65535", S_TCP, H_NAME, "localhost", 65535, true, "", false, "tcp:localhost:65535"},
    /* paths */
    {"ws:h/", S_WS, H_NAME, "h", 80, false, "/", true, "ws:h/"},
    {"ws:h:8080/x/y", S_WS, H_NAME, "h", 8080, true, "/x/y", true, "ws:h:8080/x/y"},
    {"ws:h/a%20b~!$&'()*+,;=:@", S_WS, H_NAME, "h", 80, false, "/a%20b~!$&'()*+,;=:@", true,
     "ws:h/a%20b~!$&'()*+,;=:@"},
    {"ws:h/interlace/", S_WS, H_NAME, "h", 80, false, "/interlace/", true, "ws:h/interlace/"},
    /* IPv6: stored without brackets, in RFC 5952 form */
    {"wss:[2001:db8::1]:8443/lace", S_WSS, H_V6, "2001:db8::1", 8443, true, "/lace", true,
     "wss:[2001:db8::1]:8443/lace"},
    {"tcp:[2001:DB8:0:0:0:0:0:1]", S_TCP, H_V6, "2001:db8::1", 4790, false, "", false,
     "tcp:[2001:db8::1]"},
    {"tcp:[::ffff:1.2.3.4]:0", S_TCP, H_V6, "::ffff:1.2.3.4", 0, true, "", false, "tcp:[::ffff:1.2.3.4]:0"},
    {"ws:[::]/", S_WS, H_V6, "::", 80, false, "/", true, "ws:[::]/"},
    /* IPv4 and host names */
    {"tcp:0.0.0.0", S_TCP, H_V4, "0.0.0.0", 4790, false, "", false, "tcp:0.0.0.0"},
    {"tcp:255.255.255.255:9", S_TCP, H_V4, "255.255.255.255", 9, true, "", false, "tcp:255.255.255.255:9"},
    {"tcp:a-b.c-d.Example", S_TCP, H_NAME, "a-b.c-d.Example", 4790, false, "", false, "tcp:a-b.c-d.Example"},
    {"tcp:x", S_TCP, H_NAME, "x", 4790, false, "", false, "tcp:x"},
    {"tcp:123abc", S_TCP, H_NAME, "123abc", 4790, false, "", false, "tcp:123abc"},
    {"tcp:a1.b2.3c", S_TCP, H_NAME, "a1.b2.3c", 4790, false, "", false, "tcp:a1.b2.3c"},
    /* unix paths take any byte but NUL, CR and LF */
    {"unix:/", S_UNIX, H_NONE, "", 0, false, "/", true, "unix:/"},
    {"unix:/run/a b?c#d:e", S_UNIX, H_NONE, "", 0, false, "/run/a b?c#d:e", true, "unix:/run/a b?c#d:e"},
};

/* The canonical text of *a as a C string in dst (cap bytes with the NUL), through _size and
 * _encode: its length, or 0 when refused or too small (dst[0] = 0 then). */
static size_t fmt(const wk_iltp_address *a, char *dst, size_t cap)
{
    wk_error e;
    size_t n = 0;
    if (cap == 0) return 0;
    dst[0] = 0;
    if (wk_iltp_address_size(a, &n, &e) != WK_OK) return 0;
    wk_out o = {(uint8_t *)dst, cap - 1, 0};
    wk_result r = wk_iltp_address_encode(a, &o, &e);
    if (r != WK_DONE) {
        CHECK(r == WK_NEED_OUTPUT && o.pos == 0);
        return 0;
    }
    CHECK(o.pos == n);
    dst[n] = 0;
    return n;
}

static void check_valid(const valid_case *c)
{
    wk_iltp_address a;
    wk_error err;
    memset(&a, 0x77, sizeof a);
    wk_code rc = parse(c->in, &a, &err);
    CHECKF(rc == WK_OK, "'%s' rejected: %s", c->in, rc == WK_OK ? "" : err.msg);
    if (rc != WK_OK) return;
    CHECKF(a.scheme == c->scheme, "'%s' scheme %d", c->in, (int)a.scheme);
    CHECKF(a.host_kind == c->kind, "'%s' host kind %d", c->in, (int)a.host_kind);
    CHECKF(strcmp(a.host, c->host) == 0, "'%s' host '%s'", c->in, a.host);
    CHECKF(a.port == c->port, "'%s' port %u", c->in, (unsigned)a.port);
    CHECKF(a.port_given == c->port_given, "'%s' port_given", c->in);
    CHECKF(strcmp(a.path, c->path) == 0, "'%s' path '%s'", c->in, a.path);
    CHECKF(a.path_given == c->path_given, "'%s' path_given", c->in);

    char buf[WK_ILTP_ADDRESS_MAX + 16];
    size_t n = fmt(&a, buf, sizeof buf);
    CHECKF(n == strlen(c->canonical) && strcmp(buf, c->canonical) == 0, "'%s' formats as '%s'", c->in, buf);

    /* parse(format(a)) == a, and the canonical text is a fixed point */
    wk_iltp_address b;
    rc = parse(buf, &b, &err);
    CHECKF(rc == WK_OK && same_address(&a, &b), "'%s' canonical '%s' does not round-trip", c->in, buf);
    char buf2[WK_ILTP_ADDRESS_MAX + 16];
    CHECK(fmt(&b, buf2, sizeof buf2) == n && strcmp(buf, buf2) == 0);

    /* capacity: exactly n bytes fit; n - 1 is WK_NEED_OUTPUT with the view untouched */
    uint8_t *tight = malloc(n + 1);
    wk_out to = {tight, n, 0};
    CHECK(wk_iltp_address_encode(&a, &to, &err) == WK_DONE && to.pos == n && memcmp(tight, c->canonical, n) == 0);
    if (n > 0) {
        memset(tight, 0xAA, n);
        wk_out ts = {tight, n - 1, 0};
        CHECK(wk_iltp_address_encode(&a, &ts, &err) == WK_NEED_OUTPUT && ts.pos == 0 && tight[0] == 0xAA);
    }
    free(tight);
}

/* ---- rejections --------------------------------------------------------------------------- */

typedef struct invalid_case {
    const char *in;
    size_t len; /* 0: strlen(in) */
    uint64_t offset;
    const char *msg; /* a substring of the message */
} invalid_case;

static const invalid_case invalid[] = {
    /* the whole string */
    {"", 0, 0, "empty address"},
    {" stdio", 0, 0, "white space"},
    {"stdio ", 0, 5, "white space"},
    {"tcp:h\n", 0, 5, "white space"},
    {"stdin", 0, 0, "not an address"},
    {"STDIO", 0, 0, "lower case"},
    {"stdio:", 0, 5, "stdio takes no address"},
    {"stdio:x", 0, 5, "stdio takes no address"},
    {"tcp", 0, 3, "missing ':'"},
    {"tcp:", 0, 4, "missing address after 'tcp:'"},
    {"unix:", 0, 5, "missing address after 'unix:'"},
    {":4790", 0, 0, "missing scheme"},
    {"http:example.com", 0, 0, "unknown scheme 'http'"},
    {"TCP:example.com", 0, 0, "lower case"},
    /* URL forms */
    {"ws://example.com/interlace", 0, 3, "URL form 'ws://' is not a Lace address; write ws:host[:port][/path]"},
    {"wss://example.com", 0, 4, "URL form 'wss://' is not a Lace address; write wss:host[:port][/path]"},
    {"tcp://127.0.0.1:4790", 0, 4, "URL form 'tcp://'"},
    {"quib://h", 0, 5, "URL form 'quib://'"},
    {"unix:///tmp/lace.sock", 0, 5, "URL form 'unix://'"},
    /* unix */
    {"unix:tmp/lace.sock", 0, 5, "absolute"},
    {"unix:/tmp/a\nb", 0, 11, "LF"},
    {"unix:/tmp/a\rb", 0, 11, "CR"},
    {"unix:/tmp/a\0b", 13, 11, "NUL"},
    /* IPv6 */
    {"tcp:::1", 0, 4, "bracket IPv6 addresses: tcp:[::1]:4790"},
    {"tcp:::1:4790", 0, 4, "bracket IPv6 addresses"},
    {"ws:fe80::1/x", 0, 3, "bracket IPv6 addresses: ws:[::1]:80"},
    {"tcp:fe80::1%eth0", 0, 4, "bracket IPv6"},
    {"tcp:[::1", 0, 4, "unterminated '['"},
    {"tcp:[]", 0, 5, "empty IPv6"},
    {"tcp:[fe80::1%eth0]:4790", 0, 12, "zone ids"},
    {"tcp:[::g]", 0, 5, "invalid IPv6 address '::g'"},
    {"tcp:[1.2.3.4]", 0, 5, "invalid IPv6"},
    {"tcp:[1:2:3:4:5:6:7:8:9]", 0, 5, "invalid IPv6"},
    {"tcp:[::1]x", 0, 9, "after ']'"},
    {"tcp:[::1]/x", 0, 9, "tcp addresses take no path"},
    {"ws:[::1]/a?b", 0, 10, "query strings"},
    /* host */
    {"tcp::4790", 0, 4, "empty host"},
    {"ws:/interlace", 0, 3, "empty host"},
    {"tcp:-host", 0, 4, "starts with '-'"},
    {"tcp:host-", 0, 8, "ends with '-'"},
    {"tcp:a-.b", 0, 5, "ends with '-'"},
    {"tcp:a.-b", 0, 6, "starts with '-'"},
    {"tcp:a..b", 0, 6, "empty label"},
    {"tcp:.a", 0, 4, "starts with '.'"},
    {"tcp:example.com.", 0, 15, "trailing dot"},
    {"tcp:ex_ample", 0, 6, "invalid character '_'"},
    {"tcp:h\xc3\xa9", 0, 5, "invalid character '\\xC3'"},
    {"tcp:h\0st", 8, 5, "invalid character '\\x00'"},
    {"tcp:user@host", 0, 8, "user info"},
    {"tcp:host?x=1", 0, 8, "query strings"},
    {"tcp:host#f", 0, 8, "fragments"},
    /* IPv4: all digits and dots must be a dotted quad */
    {"tcp:256.1.1.1", 0, 4, "above 255"},
    {"tcp:1.2.3.999:80", 0, 10, "above 255"},
    {"tcp:1.2.3.4444", 0, 10, "above 255"},
    {"tcp:1.2.3", 0, 9, "has 3 parts"},
    {"tcp:1.2.3:4790", 0, 9, "has 3 parts"},
    {"tcp:123", 0, 7, "has 1 part,"},
    {"tcp:1.2.3.4.5", 0, 11, "more than 4 parts"},
    {"tcp:01.2.3.4", 0, 4, "leading zero"},
    {"tcp:1.2.3.00", 0, 10, "leading zero"},
    {"tcp:1..3.4", 0, 6, "empty part"},
    {"tcp:1.2.3.4.", 0, 11, "more than 4 parts"},
    {"tcp:.1.2.3", 0, 4, "empty part"},
    /* port */
    {"tcp:host:", 0, 9, "empty port"},
    {"tcp:[::1]:", 0, 10, "empty port"},
    {"ws:h:/x", 0, 5, "empty port"},
    {"tcp:host:65536", 0, 9, "out of range"},
    {"tcp:host:99999999999999999999999", 0, 9, "out of range"},
    {"tcp:host:080", 0, 9, "leading zero"},
    {"tcp:host:00", 0, 9, "leading zero"},
    {"tcp:host:+80", 0, 9, "invalid character '+' in port"},
    {"tcp:host:-1", 0, 9, "invalid character '-' in port"},
    {"tcp:host:8o", 0, 10, "invalid character 'o' in port"},
    {"tcp:host:80:90", 0, 11, "invalid character ':' in port"},
    {"tcp:host: 80", 0, 9, "invalid character ' ' in port"},
    {"ws:host:80?x", 0, 10, "query strings"},
    /* path */
    {"tcp:host:80/x", 0, 11, "tcp addresses take no path"},
    {"quib:host/x", 0, 9, "quib addresses take no path"},
    {"tcp:host/", 0, 8, "take no path"},
    {"ws:host/interlace?x=1", 0, 17, "query strings ('?') are not allowed"},
    {"ws:host/a#frag", 0, 9, "fragments ('#') are not allowed"},
    {"wss:host/?", 0, 9, "query strings"},
    {"ws:host?x", 0, 7, "query strings"},
    {"ws:host/a b", 0, 9, "invalid byte 0x20"},
    {"ws:host/a\x7f", 0, 9, "invalid byte 0x7F"},
    {"ws:host/\xc3\xa9", 0, 8, "invalid byte 0xC3"},
    {"ws:host/a\tb", 0, 9, "invalid byte 0x09"},
};

static void check_invalid(const invalid_case *c, size_t idx)
{
    size_t len = c->len ? c->len : strlen(c->in);
    wk_iltp_address a, before;
    memset(&a, 0x5c, sizeof a);
    before = a;
    wk_error err;
    memset(&err, 0, sizeof err);
    wk_code rc = parse_n(c->in, len, &a, &err);
    CHECKF(rc == WK_ERR_ILTP_ADDRESS, "case %zu '%s' accepted or wrong code %d", idx, c->in, (int)rc);
    if (rc != WK_ERR_ILTP_ADDRESS) return;
    CHECK(err.code == WK_ERR_ILTP_ADDRESS);
    CHECK(err.category == WK_CAT_PEER_PROTOCOL);
    CHECKF(err.has_offset && err.offset == c->offset, "case %zu '%s': offset %llu, want %llu (%s)", idx,
           c->in, (unsigned long long)err.offset, (unsigned long long)c->offset, err.msg);
    CHECKF(strstr(err.msg, c->msg) != NULL, "case %zu '%s': message '%s' lacks '%s'", idx, c->in,
           err.msg, c->msg);
    CHECK(memcmp(&a, &before, sizeof a) == 0); /* output untouched on failure */
    char line[256];
    wk_error_format(&err, line, sizeof line);
    CHECK(strncmp(line, "ILTP_ERR_ADDRESS at offset ", 27) == 0);
}

/* Rejections that need long inputs, and their limits' valid neighbours. */
static void test_limits(void)
{
    char buf[WK_ILTP_ADDRESS_MAX + 8];
    wk_iltp_address a;
    wk_error err;

    /* unix path: 107 bytes fit sockaddr_un, 108 do not */
    strcpy(buf, "unix:/");
    memset(buf + 6, 'p', 106);
    buf[112] = 0;
    CHECK(parse(buf, &a, &err) == WK_OK && strlen(a.path) == 107);
    strcat(buf, "q");
    CHECK(parse(buf, &a, &err) == WK_ERR_ILTP_ADDRESS);
    CHECK(err.offset == 112 && strstr(err.msg, "108 bytes") && strstr(err.msg, "sockaddr_un"));

    /* label: 63 bytes fine, 64 not */
    strcpy(buf, "tcp:");
    memset(buf + 4, 'a', 63);
    strcpy(buf + 67, ".b");
    CHECK(parse(buf, &a, &err) == WK_OK);
    memset(buf + 4, 'a', 64);
    strcpy(buf + 68, ".b");
    CHECK(parse(buf, &a, &err) == WK_ERR_ILTP_ADDRESS);
    CHECK(err.offset == 67 && strstr(err.msg, "longer than 63"));

    /* name: 253 bytes fine, 254 not (labels of 49 plus dots) */
    strcpy(buf, "tcp:");
    size_t o = 4;
    for (int i = 0; i < 5; i++) {
        memset(buf + o, 'a' + i, 49);
        o += 49;
        buf[o++] = '.';
    }
    memset(buf + o, 'z', 3); /* 5 * 50 + 3 = 253 */
    o += 3;
    buf[o] = 0;
    CHECK(parse(buf, &a, &err) == WK_OK && strlen(a.host) == 253);
    char canon[WK_ILTP_ADDRESS_MAX];
    CHECK(fmt(&a, canon, sizeof canon) == o && strcmp(canon, buf) == 0);
    buf[o++] = 'z';
    buf[o] = 0;
    CHECK(parse(buf, &a, &err) == WK_ERR_ILTP_ADDRESS);
    CHECK(err.offset == 4 + 253 && strstr(err.msg, "longer than 253"));

    /* whole address: 1023 bytes fine, 1024 not */
    strcpy(buf, "ws:h/");
    memset(buf + 5, 'x', WK_ILTP_ADDRESS_MAX - 1 - 5);
    buf[WK_ILTP_ADDRESS_MAX - 1] = 0;
    CHECK(parse(buf, &a, &err) == WK_OK && strlen(a.path) == WK_ILTP_ADDRESS_MAX - 1 - 4);
    CHECK(fmt(&a, canon, sizeof canon) == WK_ILTP_ADDRESS_MAX - 1);
    buf[WK_ILTP_ADDRESS_MAX - 1] = 'x';
    buf[WK_ILTP_ADDRESS_MAX] = 0;
    CHECK(parse(buf, &a, &err) == WK_ERR_ILTP_ADDRESS);
    CHECK(err.offset == WK_ILTP_ADDRESS_MAX - 1 && strstr(err.msg, "longer than 1023"));
}

static void test_misc(void)
{
    wk_iltp_address a;
    wk_error err;
    /* only len bytes are read */
    CHECK(wk_iltp_address_parse("tcp:host:80garbage", 11, &a, &err) == WK_OK && a.port == 80);
    CHECK(wk_iltp_address_parse("stdio:", 5, &a, &err) == WK_OK && a.scheme == S_STDIO);
    /* argument errors */
    CHECK(wk_iltp_address_parse(NULL, 3, &a, &err) == WK_ERR_ARG);
    CHECK(wk_iltp_address_parse("stdio", 5, NULL, &err) == WK_ERR_ARG);
    CHECK(wk_iltp_address_parse(NULL, 0, &a, &err) == WK_ERR_ILTP_ADDRESS && err.offset == 0);
    CHECK(wk_iltp_address_parse("tcp:", 4, &a, NULL) == WK_ERR_ILTP_ADDRESS); /* err may be NULL */
    /* scheme names */
    CHECK(strcmp(wk_iltp_scheme_name(S_STDIO), "stdio") == 0);
    CHECK(strcmp(wk_iltp_scheme_name(S_UNIX), "unix") == 0);
    CHECK(strcmp(wk_iltp_scheme_name(S_TCP), "tcp") == 0);
    CHECK(strcmp(wk_iltp_scheme_name(S_QUIB), "quib") == 0);
    CHECK(strcmp(wk_iltp_scheme_name(S_WS), "ws") == 0);
    CHECK(strcmp(wk_iltp_scheme_name(S_WSS), "wss") == 0);
    CHECK(wk_iltp_scheme_name((wk_iltp_scheme)99) == NULL);
    /* format edge cases */
    char buf[64] = "x";
    wk_out ob = {(uint8_t *)buf, sizeof buf, 0}, none = {(uint8_t *)buf, 0, 0};
    size_t size;
    CHECK(wk_iltp_address_encode(NULL, &ob, &err) == WK_ERROR && err.code == WK_ERR_ARG && ob.pos == 0);
    CHECK(wk_iltp_address_size(NULL, &size, &err) == WK_ERR_ARG);
    a.scheme = (wk_iltp_scheme)99; /* refused whatever the room */
    CHECK(wk_iltp_address_encode(&a, &none, &err) == WK_ERROR && err.code == WK_ERR_ARG);
    CHECK(parse("stdio", &a, &err) == WK_OK);
    CHECK(wk_iltp_address_encode(&a, &none, &err) == WK_NEED_OUTPUT && none.pos == 0);
    CHECK(fmt(&a, buf, 0) == 0);
    /* a caller-built ws address with an empty path formats like the default */
    memset(&a, 0, sizeof a);
    a.scheme = S_WS;
    a.host_kind = H_NAME;
    strcpy(a.host, "h");
    a.port = 80;
    CHECK(fmt(&a, buf, sizeof buf) == 4 && strcmp(buf, "ws:h") == 0);
}

int main(void)
{
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) check_valid(&valid[i]);
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) check_invalid(&invalid[i], i);
    test_limits();
    test_misc();
    printf("%zu valid and %zu invalid table cases\n", sizeof valid / sizeof valid[0],
           sizeof invalid / sizeof invalid[0]);
    return wk_test_summary("iltp_address");
}
