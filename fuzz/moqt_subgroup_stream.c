/* libFuzzer target: the MoQT draft-20 stream reader (wk_moqt_stream_reader, moqt.h) expecting a
 * subgroup stream (or, by a header bit, any data stream), on arbitrary stream bytes.
 *
 * Input: two header bytes (see moqt_fuzz.h: push size, carrier, strict padding, properties
 * length-only, unknown status allowed, objects after End of Group/Track allowed, properties
 * scratch size, End of Range reading, group order), then the stream; the end of the input is FIN.
 *
 * Pass 1 reads the stream in pushes of the chosen size, pass 2 in one push on the same reader
 * after wk_moqt_stream_reader_init (a re-initialized reader behaves as a fresh one). Checked:
 *   - in.pos only moves forward, within the push; NEED_INPUT only with the push consumed; every
 *     other event covers at least one byte of its push; consumed() counts the bytes taken;
 *   - one header event first (SUBGROUP_HEADER, FETCH_HEADER or PADDING); the header's Type Flags
 *     are valid by wk_moqt_subgroup_type_is_valid, has_priority follows DEFAULT_PRIORITY, the
 *     Subgroup ID is 0 in mode 0 and unknown until the first object in mode 1 (then that
 *     object's ID), and the one-shot wk_moqt_subgroup_header_decode gives the same header and
 *     length;
 *   - objects: offset = end of the previous object; IDs first = delta, then prior + delta + 1,
 *     strictly increasing; has_properties = the PROPERTIES bit; status on the wire exactly when
 *     the length is 0, assigned unless allowed; no object after End of Group/Track unless
 *     allowed; the properties slice is at most the scratch size, validates (strict mode), and is
 *     borrowed from this push or from the scratch (always from the input with one push);
 *   - payload pieces are borrowed from the current push and end where the reader stopped, their
 *     offsets are contiguous from 0, `last` exactly at the payload length, PAYLOAD events carry
 *     bytes; at_boundary() is true exactly between objects;
 *   - errors are PeerProtocol WK_ERR_MOQT_* codes with a category from wk_moqt_error_category and
 *     an offset inside the bytes pushed, never TRUNCATED from read, and sticky (read and finish
 *     repeat them without consuming);
 *   - finish: OK exactly when at_boundary(), else MOQT_ERR_TRUNCATED at offset = stream length,
 *     sticky; padding streams count every byte after the type;
 * The two passes agree on the event record (every event's fields, properties and payload bytes),
 * the verdict (code and offset) and the objects reported. A reference reader written in the
 * target from the spec (fuzz/moqt_fuzz.h) gives the same verdict, offset and event record. */
#include "moqt_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return mf_target(data, size, WK_MOQT_CARRIER_SUBGROUP);
}
