/* libFuzzer target: the MoQT draft-20 stream reader (wk_moqt_stream_reader, moqt.h) expecting a
 * subgroup stream (or, by a header bit, any data stream), on arbitrary stream bytes.
 *
 * Input: two header bytes (see moqt_fuzz.h: push size, carrier, strict padding, properties
 * length-only, unknown status allowed, objects after End of Group/Track allowed, properties
 * scratch size, End of Range reading, group order), then the stream; the end of the input is FIN.
 *
 * The reader is driven by fuzz_drive (fuzz/fuzz_drive.h): the contract harness, in pushes of the
 * chosen size and in one push on the same (re-initialized) reader, each push a fresh heap copy.
 * Checked on every call (the harness): in.pos only moves forward within the push; NEED_INPUT only
 * with the push consumed; every event covers at least one byte; errors have the code table's
 * category and are sticky (read and finish repeat them unchanged, consuming nothing); finish
 * answers DONE or ERROR, the same when repeated. On every event and at the end (the moqt adapter,
 * tests/contract/wk_contract_moqt.h): consumed() counts the bytes taken; one header event first
 * (SUBGROUP_HEADER, FETCH_HEADER or PADDING); the header's Type Flags are valid, has_priority
 * follows DEFAULT_PRIORITY, the Subgroup ID is 0 in mode 0 and unknown until the first object in
 * mode 1 (then that object's ID), the one-shot wk_moqt_subgroup_header_decode gives the same
 * header and length; objects: offset = end of the previous object; IDs first = delta, then
 * prior + delta + 1, strictly increasing; has_properties = the PROPERTIES bit; status on the wire
 * exactly when the length is 0, assigned unless allowed; no object after End of Group/Track
 * unless allowed; the properties slice is at most the scratch size, validates (strict mode), and
 * is borrowed from this push or the scratch (always from the input with one push); payload pieces
 * are borrowed from the current push and end where the reader stopped, offsets contiguous from 0,
 * `last` exactly at the payload length, PAYLOAD events carry bytes; at_boundary() is true exactly
 * between objects; errors are PeerProtocol WK_ERR_MOQT_* codes with a vectors' category and an
 * offset inside the input, MOQT_ERR_TRUNCATED only from finish at the input's end; a clean end
 * follows a complete header and object, and padding streams count every byte after the type.
 * The two runs agree on the event record (every event's fields, properties and payload bytes),
 * the verdict and the error's offset. A reference reader written in the target from the spec
 * (fuzz/moqt_fuzz.h) gives the same verdict, offset and event record. */
#include "moqt_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return mf_target(data, size, WK_MOQT_CARRIER_SUBGROUP);
}
