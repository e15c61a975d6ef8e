/* wirekit eth: devp2p RLPx message compression (spec 4, EIP-706). frame-data = RLP(msg-id) ||
 * msg-data, msg-data a Snappy block when both peers speak p2p version 5 (except Hello, which is
 * always plain). Encryption and MACs are outside this layer: this file reads and writes
 * frame-data and the 24-bit frame-size. No allocation. */
#include <wirekit/eth.h>
#include <string.h>

bool wk_eth_rlpx_snappy_active(uint64_t our_version, uint64_t their_version)
{
    return our_version >= WK_ETH_RLPX_SNAPPY_P2P_VERSION && their_version >= WK_ETH_RLPX_SNAPPY_P2P_VERSION;
}

wk_code wk_eth_rlpx_parse(const uint8_t *fd, size_t n, bool compressed, uint64_t max_data,
                      wk_eth_rlpx_message *msg, wk_error *err)
{
    if (n == 0) return wk_error_set(err, WK_ERR_RLPX_EMPTY, 0, "frame-data is empty: no message id");
    if (max_data == 0) max_data = WK_ETH_RLPX_DEFAULT_MAX_DATA;

    wk_eth_rlpx_message m = {0, 0, 0, 0, false};
    wk_error e;
    size_t used = 0;
    if (wk_eth_rlp_read_uint(fd, n, &m.msg_id, &used, &e) != WK_OK)
        return wk_error_set(err, WK_ERR_RLPX_MSGID, e.has_offset ? e.offset : 0,
                            "message id is not a canonical RLP uint64 (%s)", wk_error_name(e.code));
    m.data_offset = used;
    m.wire_len = n - used;
    m.compressed = compressed && m.msg_id != WK_ETH_RLPX_MSG_HELLO;

    if (m.compressed) {
        uint64_t declared = 0;
        wk_code rc = wk_eth_snappy_block_peek(fd + used, m.wire_len, WK_ETH_SNAPPY_BLOCK_MAX, &declared, NULL,
                                          err);
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

wk_code wk_eth_rlpx_decode(const uint8_t *fd, size_t n, const wk_eth_rlpx_message *msg, uint8_t *dst,
                       size_t dst_cap, wk_error *err)
{
    if (!msg || msg->data_offset > n || msg->wire_len != n - msg->data_offset)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET,
                            "message does not describe this frame-data (parse it first)");
    if (dst_cap < msg->data_len)
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "output holds %zu bytes, msg-data has %zu",
                            dst_cap, msg->data_len);
    const uint8_t *src = fd + msg->data_offset;
    if (!msg->compressed) {
        if (msg->data_len != msg->wire_len)
            return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "plain message with data_len != wire_len");
        if (msg->wire_len) memcpy(dst, src, msg->wire_len);
        return WK_OK;
    }
    size_t out_len = 0;
    wk_code rc = wk_eth_snappy_block_decode(src, msg->wire_len, msg->data_len, dst, dst_cap, &out_len, err);
    if (rc != WK_OK) {
        if (err && err->has_offset) err->offset += msg->data_offset;
        return rc;
    }
    if (out_len != msg->data_len) /* the preamble was read by parse: cannot differ */
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "msg-data length differs from the parse");
    return WK_OK;
}

uint64_t wk_eth_rlpx_max_encoded_len(uint64_t n)
{
    return 3 + WK_ETH_RLP_UINT_MAX_LEN + wk_eth_snappy_max_compressed_len(n);
}

/* Marks the error just set as encoder-side (local): Integration. */
static wk_code local(wk_error *err, wk_code code)
{
    if (err) err->category = WK_CAT_INTEGRATION;
    return code;
}

wk_code wk_eth_rlpx_encode(uint64_t msg_id, const uint8_t *data, size_t n, bool compress, uint8_t *dst,
                       size_t dst_cap, size_t *out_len, wk_error *err)
{
    if (n > WK_ETH_RLPX_MAX_SEND_DATA)
        return local(err, wk_error_set(err, WK_ERR_RLPX_TOO_LARGE, WK_NO_OFFSET,
                                       "msg-data of %zu bytes: above 16777215 it is not sent", n));
    if (dst_cap < wk_eth_rlpx_max_encoded_len(n))
        return wk_error_set(err, WK_ERR_ARG, WK_NO_OFFSET, "output holds %zu bytes, %llu needed",
                            dst_cap, (unsigned long long)wk_eth_rlpx_max_encoded_len(n));
    size_t id_len = wk_eth_rlp_put_uint(msg_id, dst + 3);
    uint8_t *body = dst + 3 + id_len;
    size_t body_len = 0;
    if (compress && msg_id != WK_ETH_RLPX_MSG_HELLO) {
        wk_code rc = wk_eth_snappy_block_encode(data, n, body, dst_cap - 3 - id_len, &body_len, err);
        if (rc != WK_OK) return rc;
    } else {
        if (n) memcpy(body, data, n);
        body_len = n;
    }
    size_t frame = id_len + body_len;
    if (frame > WK_ETH_RLPX_FRAME_SIZE_MAX)
        return local(err, wk_error_set(err, WK_ERR_RLPX_FRAME_SIZE, WK_NO_OFFSET,
                                       "frame-data of %zu bytes does not fit frame-size", frame));
    wk_put_be(dst, frame, 3);
    if (out_len) *out_len = 3 + frame;
    return WK_OK;
}
