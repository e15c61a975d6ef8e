/* wirekit eth: devp2p RLPx message compression (spec 4, EIP-706). frame-data = RLP(msg-id) ||
 * msg-data, msg-data a Snappy block when both peers speak p2p version 5 (except Hello, which is
 * always plain). Encryption and MACs are outside this layer: this file reads and writes
 * frame-data and the 24-bit frame-size. No allocation. */
#include "eth_internal.h"

bool wk_eth_rlpx_snappy_active(uint64_t our_version, uint64_t their_version)
{
    return our_version >= WK_ETH_RLPX_SNAPPY_P2P_VERSION && their_version >= WK_ETH_RLPX_SNAPPY_P2P_VERSION;
}

wk_code wk_eth_rlpx_parse(const wk_in *in, bool compressed, uint64_t max_data,
                          wk_eth_rlpx_message *msg, wk_error *err)
{
    const uint8_t *fd;
    size_t n;
    if (!wk_eth_view_bytes(in, &fd, &n, err)) return WK_ERR_ARG;
    if (n == 0) return wk_error_set(err, WK_ERR_RLPX_EMPTY, 0, "frame-data is empty: no message id");
    if (max_data == 0) max_data = WK_ETH_RLPX_DEFAULT_MAX_DATA;

    wk_eth_rlpx_message m = {0, 0, 0, 0, false};
    wk_error e;
    size_t used = 0;
    wk_in whole = {fd, n, 0};
    if (wk_eth_rlp_read_uint(&whole, &m.msg_id, &used, &e) != WK_OK)
        return wk_error_set(err, WK_ERR_RLPX_MSGID, e.has_offset ? e.offset : 0,
                            "message id is not a canonical RLP uint64 (%s)", wk_error_name(e.code));
    m.data_offset = used;
    m.wire_len = n - used;
    m.compressed = compressed && m.msg_id != WK_ETH_RLPX_MSG_HELLO;

    if (m.compressed) {
        uint64_t declared = 0;
        wk_in body = {fd, n, used};
        wk_code rc = wk_eth_snappy_block_peek(&body, WK_ETH_SNAPPY_BLOCK_MAX, &declared, NULL, err);
        if (rc != WK_OK) {
            if (err && err->has_offset) err->offset += used;
            return rc;
        }
        if (declared > max_data || declared > SIZE_MAX)
            return wk_error_set(err, WK_ERR_RLPX_TOO_LARGE, used,
                                "declared uncompressed size %llu above the limit %llu",
                                (unsigned long long)declared, (unsigned long long)max_data);
        m.data_len = (size_t)declared;
    } else {
        if (m.wire_len > max_data)
            return wk_error_set(err, WK_ERR_RLPX_TOO_LARGE, used,
                                "msg-data of %zu bytes above the limit %llu", m.wire_len,
                                (unsigned long long)max_data);
        m.data_len = m.wire_len;
    }
    if (msg) *msg = m;
    return WK_OK;
}

wk_result wk_eth_rlpx_decode(const wk_eth_rlpx_message *msg, wk_in *in, wk_out *out, wk_error *err)
{
    size_t n = in && in->pos <= in->size ? in->size - in->pos : 0;
    if (!in || in->pos > in->size || !out || out->pos > out->size || !msg ||
        msg->data_offset > n || msg->wire_len != n - msg->data_offset ||
        (!msg->compressed && msg->data_len != msg->wire_len)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                     "message does not describe this frame-data (parse it first), or no view");
        return WK_ERROR;
    }
    if (out->size - out->pos < msg->data_len) return WK_NEED_OUTPUT; /* nothing written */
    const uint8_t *src = in->src + in->pos + msg->data_offset;
    if (!msg->compressed) {
        if (msg->wire_len) memcpy(out->dst + out->pos, src, msg->wire_len);
        out->pos += msg->wire_len;
        in->pos = in->size;
        return WK_DONE;
    }
    wk_in body = {src, msg->wire_len, 0};
    wk_out o = {out->dst + out->pos, msg->data_len, 0};
    wk_result r = wk_eth_snappy_block_decode(&body, msg->data_len, &o, err);
    if (r != WK_DONE) {
        if (r == WK_ERROR && err && err->has_offset) err->offset += msg->data_offset;
        return WK_ERROR; /* (no NEED_OUTPUT: the room was checked against the parsed length) */
    }
    if (o.pos != msg->data_len) { /* the preamble was read by parse: cannot differ */
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "msg-data length differs from the parse");
        return WK_ERROR;
    }
    out->pos += o.pos;
    in->pos = in->size;
    return WK_DONE;
}

uint64_t wk_eth_rlpx_max_size(uint64_t n)
{
    return 3 + WK_ETH_RLP_UINT_MAX_LEN + wk_eth_snappy_block_max_size(n);
}

wk_result wk_eth_rlpx_encode(uint64_t msg_id, const uint8_t *data, size_t n, bool compress,
                             wk_out *out, wk_error *err)
{
    if (n > WK_ETH_RLPX_MAX_SEND_DATA) {
        wk_error_set(err, WK_ERR_RLPX_TOO_LARGE, WK_NO_OFFSET,
                     "msg-data of %zu bytes: above 16777215 it is not sent", n);
        return WK_ERROR;
    }
    if (!out || out->pos > out->size || (n && !data)) {
        wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, n && !data ? "NULL msg-data" : "no output view");
        return WK_ERROR;
    }
    bool comp = compress && msg_id != WK_ETH_RLPX_MSG_HELLO;
    size_t dst_cap = out->size - out->pos;
    uint8_t idb[WK_ETH_RLP_UINT_MAX_LEN];
    size_t id_len = wk_eth_rlp_put_uint(msg_id, idb);
    if (!comp && id_len + n > WK_ETH_RLPX_FRAME_SIZE_MAX) {
        wk_error_set(err, WK_ERR_RLPX_FRAME_SIZE, WK_NO_OFFSET,
                     "frame-data of %zu bytes does not fit frame-size", id_len + n);
        return WK_ERROR;
    }
    /* plain: exactly 3 + id + n; compressed: libsnappy needs its worst case of room */
    if (dst_cap < (comp ? 3 + id_len + wk_eth_snappy_block_max_size(n) : 3 + id_len + n))
        return WK_NEED_OUTPUT;
    uint8_t *dst = out->dst + out->pos;
    memcpy(dst + 3, idb, id_len);
    uint8_t *body = dst + 3 + id_len;
    size_t body_len = 0;
    if (comp) {
        wk_out bo = {body, dst_cap - 3 - id_len, 0};
        if (wk_eth_snappy_block_encode(data, n, &bo, err) != WK_DONE) return WK_ERROR;
        body_len = bo.pos;
    } else {
        if (n) memcpy(body, data, n);
        body_len = n;
    }
    size_t frame = id_len + body_len;
    if (frame > WK_ETH_RLPX_FRAME_SIZE_MAX) {
        wk_error_set(err, WK_ERR_RLPX_FRAME_SIZE, WK_NO_OFFSET,
                     "frame-data of %zu bytes does not fit frame-size", frame);
        return WK_ERROR;
    }
    wk_put_be(dst, frame, 3);
    out->pos += 3 + frame;
    return WK_DONE;
}
