/* ILTP address strings (Lace-060 "Address strings"):
 *   stdio | unix:/abs/path | tcp:host[:port] | quib:host[:port] | ws:host[:port][/path]
 *   | wss:host[:port][/path]
 * Default ports: tcp and quib 4790, ws 80, wss 443; an absent WebSocket path means /interlace.
 * Host: an RFC 1123 host name, a dotted-quad IPv4 address, or an IPv6 address in brackets.
 * URL forms (ws://...), query strings, fragments, zone ids and unbracketed IPv6 are rejected with
 * WK_ERR_ILTP_ADDRESS, the offset of the offending byte and a message that says what to write.
 * Parsing is pure: no name resolution, no I/O (inet_pton/inet_ntop only convert text). */
#include <wirekit/iltp.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* sockaddr_un.sun_path is 108 bytes on Linux, one of them for the terminating NUL. Fixed here (not
 * taken from <sys/un.h>) so the grammar is the same on every platform. */
#define UNIX_PATH_MAX 107
#define HOST_NAME_MAX_LEN 253
#define LABEL_MAX_LEN 63
#define DEFAULT_WS_PATH "/interlace"
/* the longest canonical text and its NUL: scheme, ":[", host, "]", ":port", path */
#define ADDRESS_TEXT_MAX (16 + 256 + 8 + WK_ILTP_ADDRESS_MAX)

typedef struct scheme_info {
    const char *name;
    wk_iltp_scheme scheme;
    uint16_t default_port;
    const char *form; /* what to write, for messages */
} scheme_info;

static const scheme_info schemes[] = {
    {"stdio", WK_ILTP_SCHEME_STDIO, 0, "stdio"},
    {"unix", WK_ILTP_SCHEME_UNIX, 0, "unix:/absolute/path"},
    {"tcp", WK_ILTP_SCHEME_TCP, 4790, "tcp:host[:port]"},
    {"quib", WK_ILTP_SCHEME_QUIB, 4790, "quib:host[:port]"},
    {"ws", WK_ILTP_SCHEME_WS, 80, "ws:host[:port][/path]"},
    {"wss", WK_ILTP_SCHEME_WSS, 443, "wss:host[:port][/path]"},
};
#define N_SCHEMES (sizeof schemes / sizeof schemes[0])

static const scheme_info *scheme_by_name(const char *s, size_t n, bool fold_case)
{
    for (size_t i = 0; i < N_SCHEMES; i++) {
        const char *name = schemes[i].name;
        if (strlen(name) != n) continue;
        size_t k = 0;
        for (; k < n; k++) {
            char c = s[k];
            if (fold_case && c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
            if (c != name[k]) break;
        }
        if (k == n) return &schemes[i];
    }
    return NULL;
}

static const scheme_info *scheme_by_id(wk_iltp_scheme scheme)
{
    for (size_t i = 0; i < N_SCHEMES; i++)
        if (schemes[i].scheme == scheme) return &schemes[i];
    return NULL;
}

const char *wk_iltp_scheme_name(wk_iltp_scheme scheme)
{
    const scheme_info *si = scheme_by_id(scheme);
    return si ? si->name : NULL;
}

static wk_code bad(wk_error *err, size_t off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static wk_code bad(wk_error *err, size_t off, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return wk_error_set(err, WK_ERR_ILTP_ADDRESS, off, "%s", msg);
}

/* Renders n bytes of user input for a message: printable ASCII as is, others as \xHH, cut to fit
 * (with "..."). */
static const char *show(const char *p, size_t n, char *buf, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        size_t need = c >= 0x20 && c < 0x7f ? 1 : 4;
        if (o + need + 4 > cap) {
            memcpy(buf + o, "...", 4);
            return buf;
        }
        if (need == 1) buf[o++] = (char)c;
        else o += (size_t)snprintf(buf + o, cap - o, "\\x%02X", c);
    }
    buf[o] = 0;
    return buf;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

/* The message for a byte that has a special meaning in URLs, or NULL. */
static const char *url_byte_message(char c)
{
    switch (c) {
    case '?': return "query strings ('?') are not allowed in Lace addresses";
    case '#': return "fragments ('#') are not allowed in Lace addresses";
    case '@': return "user info ('user@') is not allowed in Lace addresses";
    default: return NULL;
    }
}

/* s[h..e) is all digits and dots: it must be a dotted quad. */
static wk_code parse_ipv4(const char *s, size_t h, size_t e, wk_iltp_address *a, wk_error *err)
{
    size_t parts = 0, i = h;
    for (;;) {
        size_t ps = i;
        while (i < e && s[i] != '.') i++;
        size_t n = i - ps;
        if (parts == 4) return bad(err, ps - 1, "IPv4 address has more than 4 parts");
        if (n == 0)
            return bad(err, ps, "empty part in IPv4 address '%.*s'", (int)(e - h), s + h);
        if (n > 1 && s[ps] == '0')
            return bad(err, ps, "IPv4 part '%.*s' has a leading zero", (int)n, s + ps);
        unsigned v = 0;
        for (size_t k = ps; k < i && v <= 255; k++) v = v * 10 + (unsigned)(s[k] - '0');
        if (v > 255) return bad(err, ps, "IPv4 part '%.*s' is above 255", (int)(n > 10 ? 10 : n), s + ps);
        parts++;
        if (i == e) break;
        i++; /* the dot */
    }
    if (parts != 4)
        return bad(err, e, "IPv4 address '%.*s' has %zu part%s, not 4 (an all-numeric host must be "
                   "a dotted quad)", (int)(e - h > 20 ? 20 : e - h), s + h, parts, parts == 1 ? "" : "s");
    memcpy(a->host, s + h, e - h);
    a->host[e - h] = 0;
    a->host_kind = WK_ILTP_HOST_IPV4;
    return WK_OK;
}

/* s[h..e) is a nonempty host that is not bracketed. */
static wk_code parse_host(const char *s, size_t h, size_t e, wk_iltp_address *a, wk_error *err)
{
    bool numeric = true;
    for (size_t i = h; i < e && numeric; i++) numeric = is_digit(s[i]) || s[i] == '.';
    if (numeric) return parse_ipv4(s, h, e, a, err);

    size_t ls = h; /* start of the current label */
    for (size_t i = h; i < e; i++) {
        char c = s[i];
        if (c == '.') {
            if (i == h) return bad(err, i, "host name starts with '.'");
            if (i == ls) return bad(err, i, "empty label ('..') in host name");
            if (s[i - 1] == '-') return bad(err, i - 1, "host name label ends with '-'");
            ls = i + 1;
            continue;
        }
        if (!is_alnum(c) && c != '-') {
            const char *m = url_byte_message(c);
            if (m) return bad(err, i, "%s", m);
            char shown[8];
            return bad(err, i, "invalid character '%s' in host name (letters, digits, '-' and '.')",
                       show(&s[i], 1, shown, sizeof shown));
        }
        if (c == '-' && i == ls) return bad(err, i, "host name label starts with '-'");
        if (i - ls >= LABEL_MAX_LEN)
            return bad(err, i, "host name label longer than %d bytes", LABEL_MAX_LEN);
    }
    if (ls == e) return bad(err, e - 1, "host name ends with '.' (write it without the trailing dot)");
    if (s[e - 1] == '-') return bad(err, e - 1, "host name label ends with '-'");
    if (e - h > HOST_NAME_MAX_LEN)
        return bad(err, h + HOST_NAME_MAX_LEN, "host name longer than %d bytes", HOST_NAME_MAX_LEN);
    memcpy(a->host, s + h, e - h);
    a->host[e - h] = 0;
    a->host_kind = WK_ILTP_HOST_NAME;
    return WK_OK;
}

/* s[h] is '['. Parses "[ipv6]" and sets *after to the offset after ']'. */
static wk_code parse_ipv6(const char *s, size_t len, size_t h, wk_iltp_address *a, size_t *after,
                          wk_error *err)
{
    const char *rb = memchr(s + h, ']', len - h);
    if (!rb) return bad(err, h, "unterminated '[': write an IPv6 host as [address]");
    size_t start = h + 1, end = (size_t)(rb - s), n = end - start;
    if (n == 0) return bad(err, start, "empty IPv6 address in brackets");
    const char *pct = memchr(s + start, '%', n);
    if (pct) return bad(err, (size_t)(pct - s), "IPv6 zone ids ('%%') are not allowed in Lace addresses");
    char text[INET6_ADDRSTRLEN];
    struct in6_addr in6;
    bool ok = n < sizeof text && !memchr(s + start, 0, n);
    if (ok) {
        memcpy(text, s + start, n);
        text[n] = 0;
        ok = inet_pton(AF_INET6, text, &in6) == 1;
    }
    if (!ok) {
        char shown[48];
        return bad(err, start, "invalid IPv6 address '%s'", show(s + start, n, shown, sizeof shown));
    }
    /* store the RFC 5952 text form, so equal addresses format equally */
    if (!inet_ntop(AF_INET6, &in6, a->host, sizeof a->host))
        return bad(err, start, "cannot convert the IPv6 address");
    a->host_kind = WK_ILTP_HOST_IPV6;
    *after = end + 1;
    return WK_OK;
}

/* s[ps..pe) follows a ':' after the host. */
static wk_code parse_port(const char *s, size_t ps, size_t pe, wk_iltp_address *a, wk_error *err)
{
    if (pe == ps) return bad(err, ps, "empty port after ':'");
    uint32_t v = 0;
    for (size_t i = ps; i < pe; i++) {
        char c = s[i];
        if (!is_digit(c)) {
            const char *m = url_byte_message(c);
            if (m) return bad(err, i, "%s", m);
            char shown[8];
            return bad(err, i, "invalid character '%s' in port: a port is decimal digits 0-65535",
                       show(&s[i], 1, shown, sizeof shown));
        }
        if (v <= 65535) v = v * 10 + (uint32_t)(c - '0');
    }
    if (pe - ps > 1 && s[ps] == '0') return bad(err, ps, "port has a leading zero");
    if (v > 65535)
        return bad(err, ps, "port %.*s%s is out of range 0-65535", (int)(pe - ps > 12 ? 12 : pe - ps),
                   s + ps, pe - ps > 12 ? "..." : "");
    a->port = (uint16_t)v;
    a->port_given = true;
    return WK_OK;
}

static wk_code parse_unix(const char *s, size_t len, size_t p, wk_iltp_address *a, wk_error *err)
{
    if (s[p] != '/') return bad(err, p, "unix socket path must be absolute (start with '/')");
    for (size_t i = p; i < len; i++) {
        if (s[i] == 0) return bad(err, i, "NUL byte in unix socket path");
        if (s[i] == '\r' || s[i] == '\n')
            return bad(err, i, "%s in unix socket path", s[i] == '\r' ? "CR" : "LF");
    }
    size_t n = len - p;
    if (n > UNIX_PATH_MAX)
        return bad(err, p + UNIX_PATH_MAX, "unix socket path is %zu bytes; at most %d fit in sockaddr_un",
                   n, UNIX_PATH_MAX);
    memcpy(a->path, s + p, n);
    a->path[n] = 0;
    a->path_given = true;
    return WK_OK;
}

/* tcp, quib, ws, wss: host[:port][/path] from s[p..len), p < len. */
static wk_code parse_network(const char *s, size_t len, size_t p, const scheme_info *si,
                             wk_iltp_address *a, wk_error *err)
{
    bool ws = si->scheme == WK_ILTP_SCHEME_WS || si->scheme == WK_ILTP_SCHEME_WSS;
    size_t q = p; /* offset after the host */
    wk_code rc;
    if (s[p] == '[') {
        if ((rc = parse_ipv6(s, len, p, a, &q, err)) != WK_OK) return rc;
        if (q < len && s[q] != ':' && s[q] != '/') {
            char shown[8];
            return bad(err, q, "unexpected '%s' after ']': expected ':port'%s or the end",
                       show(&s[q], 1, shown, sizeof shown), ws ? ", '/path'" : "");
        }
    } else {
        /* the authority part ends at the first '/'; two or more colons in it made only of hex
         * digits and dots (up to a '%' zone id) is an IPv6 address without brackets */
        size_t auth_end = p, colons = 0;
        bool ipv6ish = true, zone = false;
        for (; auth_end < len && s[auth_end] != '/'; auth_end++) {
            char c = s[auth_end];
            if (c == '%') zone = true; /* a zone id may hold any name */
            else if (c == ':' && !zone) colons++;
            else if (!zone && !is_hex(c) && c != '.') ipv6ish = false;
        }
        if (colons >= 2 && ipv6ish)
            return bad(err, p, "bracket IPv6 addresses: %s:[::1]:%u", si->name, si->default_port);
        q = p;
        while (q < len && s[q] != ':' && s[q] != '/') q++;
        if (q == p) return bad(err, p, "empty host (write %s)", si->form);
        if ((rc = parse_host(s, p, q, a, err)) != WK_OK) return rc;
    }

    a->port = si->default_port;
    if (q < len && s[q] == ':') {
        size_t pe = q + 1;
        while (pe < len && s[pe] != '/') pe++;
        if ((rc = parse_port(s, q + 1, pe, a, err)) != WK_OK) return rc;
        q = pe;
    }

    if (q == len) {
        if (ws) memcpy(a->path, DEFAULT_WS_PATH, sizeof DEFAULT_WS_PATH);
        return WK_OK;
    }
    /* only '/' can be here: the host and port scans stop at ':' or '/', the IPv6 check above */
    if (!ws) return bad(err, q, "%s addresses take no path", si->name);
    for (size_t i = q; i < len; i++) {
        char c = s[i];
        const char *m = c == '?' || c == '#' ? url_byte_message(c) : NULL;
        if (m) return bad(err, i, "%s", m);
        if ((unsigned char)c < 0x21 || (unsigned char)c > 0x7e)
            return bad(err, i, "invalid byte 0x%02X in WebSocket path (printable ASCII only)",
                       (unsigned char)c);
    }
    memcpy(a->path, s + q, len - q);
    a->path[len - q] = 0;
    a->path_given = true;
    return WK_OK;
}

wk_code wk_iltp_address_parse(const char *s, size_t len, wk_iltp_address *out, wk_error *err)
{
    if (!out || (!s && len)) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "NULL address or output");
    wk_iltp_address a;
    memset(&a, 0, sizeof a);
    if (len == 0) return bad(err, 0, "empty address (write stdio or scheme:address)");
    if (len >= WK_ILTP_ADDRESS_MAX)
        return bad(err, WK_ILTP_ADDRESS_MAX - 1, "address longer than %d bytes", WK_ILTP_ADDRESS_MAX - 1);
    if (is_space(s[0])) return bad(err, 0, "address starts with white space");
    if (is_space(s[len - 1])) return bad(err, len - 1, "address ends with white space");

    const char *colon = memchr(s, ':', len);
    if (!colon) {
        if (len == 5 && memcmp(s, "stdio", 5) == 0) {
            a.scheme = WK_ILTP_SCHEME_STDIO;
            *out = a;
            return WK_OK;
        }
        const scheme_info *si = scheme_by_name(s, len, true);
        if (si && si->scheme == WK_ILTP_SCHEME_STDIO) return bad(err, 0, "write 'stdio' in lower case");
        if (si) return bad(err, len, "missing ':' and address after '%.*s' (write %s)", (int)len, s, si->form);
        return bad(err, 0, "not an address: write stdio or scheme:address (unix, tcp, quib, ws, wss)");
    }

    size_t slen = (size_t)(colon - s), p = slen + 1;
    if (slen == 0) return bad(err, 0, "missing scheme before ':' (unix, tcp, quib, ws, wss)");
    const scheme_info *si = scheme_by_name(s, slen, false);
    if (!si) {
        const scheme_info *folded = scheme_by_name(s, slen, true);
        if (folded) return bad(err, 0, "scheme names are lower case: write '%s:'", folded->name);
        char shown[24];
        return bad(err, 0, "unknown scheme '%s' (stdio, unix, tcp, quib, ws, wss)",
                   show(s, slen, shown, sizeof shown));
    }
    if (si->scheme == WK_ILTP_SCHEME_STDIO) return bad(err, slen, "stdio takes no address: write 'stdio'");
    if (len - p >= 2 && s[p] == '/' && s[p + 1] == '/')
        return bad(err, p, "URL form '%s://' is not a Lace address; write %s", si->name, si->form);
    if (p == len) return bad(err, p, "missing address after '%s:' (write %s)", si->name, si->form);

    a.scheme = si->scheme;
    wk_code rc = si->scheme == WK_ILTP_SCHEME_UNIX ? parse_unix(s, len, p, &a, err)
                                                   : parse_network(s, len, p, si, &a, err);
    if (rc != WK_OK) return rc;
    *out = a;
    return WK_OK;
}

/* The canonical text of *a into buf (NUL-terminated): WK_OK with *len, or WK_ERR_ARG. */
static wk_code address_build(const wk_iltp_address *a, char buf[ADDRESS_TEXT_MAX], size_t *len, wk_error *err)
{
    const scheme_info *si = a ? scheme_by_id(a->scheme) : NULL;
    if (!si) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "no address or an unknown scheme");
    int host_len = (int)strnlen(a->host, sizeof a->host);
    int path_len = (int)strnlen(a->path, sizeof a->path);
    int n;
    switch (a->scheme) {
    case WK_ILTP_SCHEME_STDIO: n = snprintf(buf, ADDRESS_TEXT_MAX, "stdio"); break;
    case WK_ILTP_SCHEME_UNIX: n = snprintf(buf, ADDRESS_TEXT_MAX, "unix:%.*s", path_len, a->path); break;
    default: {
        char port[8] = "";
        if (a->port != si->default_port) snprintf(port, sizeof port, ":%u", (unsigned)a->port);
        bool ws = a->scheme == WK_ILTP_SCHEME_WS || a->scheme == WK_ILTP_SCHEME_WSS;
        if (!ws || strncmp(a->path, DEFAULT_WS_PATH, sizeof a->path) == 0) path_len = 0;
        if (a->host_kind == WK_ILTP_HOST_IPV6)
            n = snprintf(buf, ADDRESS_TEXT_MAX, "%s:[%.*s]%s%.*s", si->name, host_len, a->host, port, path_len,
                         a->path);
        else
            n = snprintf(buf, ADDRESS_TEXT_MAX, "%s:%.*s%s%.*s", si->name, host_len, a->host, port, path_len,
                         a->path);
        break;
    }
    }
    if (n < 0 || n >= ADDRESS_TEXT_MAX) return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "address text");
    *len = (size_t)n;
    return WK_OK;
}

wk_code wk_iltp_address_size(const wk_iltp_address *a, size_t *size, wk_error *err)
{
    char buf[ADDRESS_TEXT_MAX];
    return address_build(a, buf, size, err);
}

wk_result wk_iltp_address_encode(const wk_iltp_address *a, wk_out *out, wk_error *err)
{
    char buf[ADDRESS_TEXT_MAX];
    size_t n = 0;
    if (address_build(a, buf, &n, err) != WK_OK) return WK_ERROR;
    if (out->size - out->pos < n) return WK_NEED_OUTPUT;
    memcpy(out->dst + out->pos, buf, n);
    out->pos += n;
    return WK_DONE;
}
