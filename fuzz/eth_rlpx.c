/* libFuzzer target: devp2p RLPx frame-data (wk_eth_rlpx_parse, wk_eth_rlpx_decode, wk_eth_rlpx_encode) and
 * the RLP subset (wk_eth_rlp_read_header, wk_eth_rlp_read_uint, wk_eth_rlp_check) on arbitrary bytes (eth.h,
 * spec 3 and 4).
 *
 * Input: byte 0, then the frame-data.
 *   bit 0     compression active (p2p version 5 on both sides)
 *   bits 1-3  max_data: 0 (the default, 16777216), 1, 16, 255, 4096, 65536, 16777215, 16777216
 *   bits 4-7  max_depth for wk_eth_rlp_check: 0, 1, 2, 3, 4, 5, 8, 16, 32, 64, 100, 255, 256, 257,
 *             4096, UINT_MAX
 *
 * Checked:
 *   - wk_eth_rlpx_parse against a message-id reader written here (canonical RLP uint64: no 00, no
 *     81 00..81 7f, no leading zero, at most 8 bytes, no list): RLPX_ERR_EMPTY exactly for empty
 *     input, RLPX_ERR_MSGID exactly when the reference rejects the id, else the same id and
 *     data_offset, and wk_eth_rlp_put_uint gives the id's bytes back; errors are PeerProtocol
 *     RLPX_ERR_* / SNAPPY_ERR_TRUNCATED / SNAPPY_ERR_PREAMBLE with an offset <= size;
 *   - a parsed message: data_offset + wire_len = size; compressed exactly when compression is on
 *     and the id is not Hello (0); compressed: data_len = the snappy preamble (our peek and
 *     libsnappy's own reader agree), plain: data_len = wire_len; data_len <= max_data, and
 *     RLPX_ERR_TOO_LARGE exactly when the length is above it;
 *   - wk_eth_rlpx_decode: dst_cap one below data_len is WK_ERR_ARG; compressed, it accepts exactly
 *     when wk_eth_snappy_block_validate accepts the body (same code, offset shifted by data_offset,
 *     never WK_ERR_BACKEND), and then writes libsnappy's own decoding; plain, it copies the body;
 *   - the decoded msg-data re-encodes with wk_eth_rlpx_encode (with and without compression) into a
 *     frame whose 3-byte frame-size is right and which parses and decodes back to the same id and
 *     bytes;
 *   - wk_eth_rlp_check on the raw input and on the decoded msg-data never crashes, agrees with a
 *     recursive reference checker written here (including the depth rule: a top-level list is
 *     level 1) and is consistent with wk_eth_rlp_read_header on the first item: the same error when
 *     the header fails; WK_OK only when the item spans the input exactly; RLP_ERR_TRAILING at
 *     the item's end; a string spanning the input is accepted; put_header gives the header bytes
 *     back. */
#include <wirekit/eth.h>
#include "wk_contract_eth.h"
#include <snappy-c.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "eth_ref.h"


static const uint64_t max_datas[8] = {0, 1, 16, 255, 4096, 65536, 16777215, 16777216};
static const unsigned depths[16] = {0, 1, 2, 3, 4, 5, 8, 16, 32, 64, 100, 255, 256, 257, 4096,
                                    UINT_MAX};

#define OUT_CAP ((size_t)16777216)

/* ---------------------------------------------------------------------------------------------
 * References, written from spec 3
 * ------------------------------------------------------------------------------------------- */

/* The message id at fd[0..n): true with *id and *used for a canonical RLP uint64. */
static bool ref_msgid(const uint8_t *fd, size_t n, uint64_t *id, size_t *used)
{
    if (n == 0) return false;
    uint8_t b = fd[0];
    if (b < 0x80) {
        if (b == 0) return false; /* zero is 80 */
        *id = b;
        *used = 1;
        return true;
    }
    if (b > 0x88) return false; /* a list, or a string of more than 8 bytes */
    size_t k = b - 0x80;
    if (n - 1 < k) return false;
    if (k == 0) {
        *id = 0;
        *used = 1;
        return true;
    }
    if (fd[1] == 0) return false;              /* leading zero */
    if (k == 1 && fd[1] < 0x80) return false;  /* a single byte below 0x80 wrapped */
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++) v = v << 8 | fd[1 + i];
    *id = v;
    *used = 1 + k;
    return true;
}

/* One item at p[0..n) (n > 0): true with *len = its encoded length when it is canonical and lies
 * within n, lists checked recursively, `level` being the list nesting of the item's container. */
static bool ref_item(const uint8_t *p, size_t n, unsigned level, unsigned max_depth, size_t *len)
{
    uint8_t b = p[0];
    size_t hl, pl;
    bool list = b >= 0xc0;
    if (b < 0x80) {
        *len = 1;
        return true;
    }
    if (b <= 0xb7 || (b >= 0xc0 && b <= 0xf7)) {
        hl = 1;
        pl = (size_t)(b - (list ? 0xc0 : 0x80));
        if (pl > n - 1) return false;
        if (!list && pl == 1 && p[1] < 0x80) return false;
    } else {
        size_t k = (size_t)(b - (list ? 0xf7 : 0xb7));
        if (n - 1 < k || p[1] == 0) return false;
        uint64_t v = 0;
        for (size_t i = 0; i < k; i++) v = v << 8 | p[1 + i];
        if (v < 56) return false;
        hl = 1 + k;
        if (v > n - hl) return false;
        pl = (size_t)v;
    }
    if (list) {
        unsigned limit = max_depth > WK_ETH_RLP_MAX_DEPTH ? WK_ETH_RLP_MAX_DEPTH : max_depth;
        if (level + 1 > limit) return false;
        size_t pos = hl, end = hl + pl;
        while (pos < end) {
            size_t il;
            if (!ref_item(p + pos, end - pos, level + 1, max_depth, &il)) return false;
            pos += il;
        }
    }
    *len = hl + pl;
    return true;
}

static bool ref_check(const uint8_t *p, size_t n, unsigned max_depth)
{
    size_t len;
    return n > 0 && ref_item(p, n, 0, max_depth, &len) && len == n;
}

/* ---------------------------------------------------------------------------------------------
 * Checks
 * ------------------------------------------------------------------------------------------- */
static bool rlp_code(wk_code c)
{
    return c == WK_ERR_RLP_TRUNCATED || c == WK_ERR_RLP_NONCANON_SIZE ||
           c == WK_ERR_RLP_ELEM_TOO_LARGE || c == WK_ERR_RLP_TRAILING || c == WK_ERR_RLP_DEPTH;
}

/* wk_eth_rlp_check on p[0..n) against read_header and the reference. */
static void check_rlp(const uint8_t *p, size_t n, unsigned max_depth)
{
    wk_error ec, eh;
    wk_eth_rlp_item it;
    wk_code c = wk_eth_rlp_check(LOOK(p, n), max_depth, &ec);
    wk_code h = wk_eth_rlp_read_header(LOOK(p, n), &it, &eh);
    CHECK((c == WK_OK) == ref_check(p, n, max_depth));
    if (c != WK_OK) {
        CHECK(ec.code == c && rlp_code(c));
        CHECK(ec.category == WK_CAT_PEER_PROTOCOL && ec.has_offset && ec.offset <= n);
    }
    if (h != WK_OK) {
        CHECK(h == WK_ERR_RLP_TRUNCATED || h == WK_ERR_RLP_NONCANON_SIZE);
        CHECK(eh.category == WK_CAT_PEER_PROTOCOL && eh.has_offset && eh.offset <= n);
        CHECK(c == h && ec.offset == eh.offset);
        return;
    }
    size_t total = it.header_len + it.payload_len;
    CHECK(total <= n && total > 0);
    if (it.header_len == 0) CHECK(!it.is_list && it.payload_len == 1 && p[0] < 0x80);
    else {
        uint8_t hdr[WK_ETH_RLP_HEADER_MAX_LEN];
        size_t hl = wk_eth_rlp_put_header(it.is_list, it.payload_len, hdr);
        CHECK(hl == it.header_len && memcmp(hdr, p, hl) == 0);
    }
    if (c == WK_OK) CHECK(total == n);
    if (total < n) CHECK(c != WK_OK);
    if (c == WK_ERR_RLP_TRAILING) CHECK(ec.offset == total);
    if (!it.is_list && total == n) CHECK(c == WK_OK);
    if (it.is_list && max_depth == 0) CHECK(c == WK_ERR_RLP_DEPTH && ec.offset == 0);
}

static uint8_t *out_buf, *enc_buf, *re_buf, *lib_buf;
static size_t enc_cap;

/* Encodes (id, msg-data) as a frame and reads it back. */
static void re_encode(uint64_t id, const uint8_t *md, size_t len, bool compress)
{
    uint64_t need = wk_eth_rlpx_max_size(len);
    CHECK(need == 3 + WK_ETH_RLP_UINT_MAX_LEN + wk_eth_snappy_block_max_size(len));
    if (need > enc_cap) {
        free(enc_buf);
        enc_cap = (size_t)need;
        enc_buf = malloc(enc_cap);
        CHECK(enc_buf);
    }
    wk_error e;
    size_t flen = 0;
    CHECK(enc_out(wk_eth_rlpx_encode(id, md, len, compress, VIEW(enc_buf, (size_t)need), &e), &flen, &e) == WK_OK);
    CHECK(flen >= 4 && flen <= need);
    size_t fs = (size_t)enc_buf[0] << 16 | (size_t)enc_buf[1] << 8 | enc_buf[2];
    CHECK(fs == flen - 3);
    wk_eth_rlpx_message m;
    CHECK(wk_eth_rlpx_parse(LOOK(enc_buf + 3, fs), compress, 0, &m, &e) == WK_OK);
    CHECK(m.msg_id == id && m.data_len == len && m.data_offset + m.wire_len == fs);
    CHECK(m.compressed == (compress && id != WK_ETH_RLPX_MSG_HELLO));
    if (!m.compressed)
        CHECK(m.wire_len == len && (len == 0 || memcmp(enc_buf + 3 + m.data_offset, md, len) == 0));
    CHECK(enc_out(wk_eth_rlpx_decode(&m, IN(enc_buf + 3, fs), VIEW(re_buf, OUT_CAP), &e), NULL, &e) == WK_OK);
    CHECK(len == 0 || memcmp(re_buf, md, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eth_fuzz_kernel_for(data, size); /* WK_SNAPPY_KERNEL forces one */
    if (size < 1) return 0;
    bool compressed = data[0] & 1;
    uint64_t max_data = max_datas[(data[0] >> 1) & 7];
    uint64_t eff_max = max_data ? max_data : WK_ETH_RLPX_DEFAULT_MAX_DATA;
    unsigned max_depth = depths[data[0] >> 4];
    const uint8_t *fd = data + 1;
    size_t n = size - 1;
    if (!out_buf) {
        out_buf = malloc(OUT_CAP + 1);
        re_buf = malloc(OUT_CAP + 1);
        lib_buf = malloc(OUT_CAP + 1);
        CHECK(out_buf && re_buf && lib_buf);
    }

    check_rlp(fd, n, max_depth);

    wk_error e;
    wk_eth_rlpx_message m;
    memset(&m, 0, sizeof m);
    wk_code p = wk_eth_rlpx_parse(LOOK(fd, n), compressed, max_data, &m, &e);
    uint64_t rid = 0;
    size_t rused = 0;
    bool rok = ref_msgid(fd, n, &rid, &rused);
    if (n == 0) {
        CHECK(p == WK_ERR_RLPX_EMPTY && e.offset == 0);
    } else if (!rok) {
        CHECK(p == WK_ERR_RLPX_MSGID);
    } else {
        CHECK(p != WK_ERR_RLPX_EMPTY && p != WK_ERR_RLPX_MSGID);
    }
    if (p != WK_OK) {
        CHECK(e.code == p);
        CHECK(p == WK_ERR_RLPX_EMPTY || p == WK_ERR_RLPX_MSGID || p == WK_ERR_RLPX_TOO_LARGE ||
              p == WK_ERR_SNAPPY_TRUNCATED || p == WK_ERR_SNAPPY_PREAMBLE);
        CHECK(e.category == WK_CAT_PEER_PROTOCOL && e.has_offset && e.offset <= n);
        if (p == WK_ERR_SNAPPY_TRUNCATED || p == WK_ERR_SNAPPY_PREAMBLE) {
            CHECK(compressed && rid != WK_ETH_RLPX_MSG_HELLO);
            wk_error eb;
            CHECK(wk_eth_snappy_block_peek(LOOK(fd + rused, n - rused), UINT64_MAX, NULL, NULL, &eb) == p);
            CHECK(e.offset == eb.offset + rused);
        }
        if (p == WK_ERR_RLPX_TOO_LARGE) {
            if (compressed && rid != WK_ETH_RLPX_MSG_HELLO) {
                uint64_t decl;
                CHECK(wk_eth_snappy_block_peek(LOOK(fd + rused, n - rused), UINT64_MAX, &decl, NULL, &e) ==
                      WK_OK);
                CHECK(decl > eff_max);
            } else {
                CHECK(n - rused > eff_max);
            }
        }
        return 0;
    }

    CHECK(m.msg_id == rid && m.data_offset == rused);
    uint8_t idb[WK_ETH_RLP_UINT_MAX_LEN];
    CHECK(wk_eth_rlp_put_uint(m.msg_id, idb) == rused && memcmp(idb, fd, rused) == 0);
    uint64_t v;
    size_t used;
    CHECK(wk_eth_rlp_read_uint(LOOK(fd, n), &v, &used, &e) == WK_OK && v == rid && used == rused);
    CHECK(m.data_offset + m.wire_len == n);
    CHECK(m.compressed == (compressed && m.msg_id != WK_ETH_RLPX_MSG_HELLO));
    CHECK(m.data_len <= eff_max);
    const uint8_t *body = fd + m.data_offset;
    if (m.compressed) {
        uint64_t decl;
        CHECK(wk_eth_snappy_block_peek(LOOK(body, m.wire_len), UINT64_MAX, &decl, NULL, &e) == WK_OK);
        CHECK(decl == m.data_len);
        size_t lib_len;
        CHECK(snappy_uncompressed_length((const char *)body, m.wire_len, &lib_len) == SNAPPY_OK &&
              lib_len == m.data_len);
    } else {
        CHECK(m.data_len == m.wire_len);
    }

    if (m.data_len > 0) {
        wk_error ea;
        CHECK(enc_out(wk_eth_rlpx_decode(&m, IN(fd, n), VIEW(out_buf, m.data_len - 1), &ea), NULL, &ea) == ENC_NO_ROOM);
    }
    wk_error ed;
    wk_code d = enc_out(wk_eth_rlpx_decode(&m, IN(fd, n), VIEW(out_buf, OUT_CAP), &ed), NULL, &ed);
    CHECK(d != WK_ERR_BACKEND);
    if (m.compressed) {
        wk_error ev;
        wk_code vv = wk_eth_snappy_block_validate(LOOK(body, m.wire_len), m.data_len, NULL, &ev);
        CHECK((d == WK_OK) == (vv == WK_OK));
        if (d != WK_OK) {
            CHECK(ed.code == d && d == vv);
            CHECK(ed.category == WK_CAT_PEER_PROTOCOL && ed.has_offset);
            CHECK(ed.offset == ev.offset + m.data_offset && ed.offset <= n);
            return 0;
        }
        size_t got = m.data_len;
        CHECK(snappy_uncompress((const char *)body, m.wire_len, (char *)lib_buf, &got) ==
              SNAPPY_OK);
        CHECK(got == m.data_len && (got == 0 || memcmp(lib_buf, out_buf, got) == 0));
    } else {
        CHECK(d == WK_OK);
        CHECK(m.wire_len == 0 || memcmp(out_buf, body, m.wire_len) == 0);
    }

    /* msg-data is itself RLP: the optional structural check */
    check_rlp(out_buf, m.data_len, max_depth);

    if (m.data_len <= WK_ETH_RLPX_MAX_SEND_DATA) {
        re_encode(m.msg_id, out_buf, m.data_len, compressed);
        re_encode(m.msg_id, out_buf, m.data_len, !compressed);
    }
    return 0;
}
