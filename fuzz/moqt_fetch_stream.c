/* libFuzzer target: the MoQT draft-20 stream reader (wk_moqt_stream_reader, moqt.h) expecting a
 * fetch stream (or, by a header bit, any data stream), on arbitrary stream bytes.
 *
 * Input: two header bytes (see moqt_fuzz.h: push size, carrier, strict padding, properties
 * length-only, unknown status allowed, objects after end allowed, properties scratch size, End of
 * Range reading A or B, group order Descending / Ascending / default), then the stream; the end
 * of the input is FIN.
 *
 * The reader is driven by fuzz_drive (fuzz/fuzz_drive.h), in pushes of the chosen size and whole,
 * with the contract harness's checks on every call and the moqt adapter's on every event (as listed
 * in moqt_subgroup_stream.c: progress, borrowed payload pieces ending where the reader stopped,
 * contiguous piece offsets and `last`, at_boundary, typed sticky errors with offsets inside the
 * input, finish verdicts), among them:
 *   - FETCH_HEADER once, first; the one-shot wk_moqt_fetch_header_decode agrees;
 *   - every record: end_of_range exactly for 0x8C / 0x10C / 0x20C, any other value above 0x7F
 *     never reported; first_record only on the first; markers carry no Subgroup ID, Priority or
 *     Properties, payload length 0, and the delta slots and length field exactly in reading A;
 *     objects: the delta flags, DATAGRAM (no Subgroup ID) and PROPERTIES bits match the fields;
 *   - the record offset is the end of the previous record, properties slices as in the subgroup
 *     target;
 * The two runs agree on the event record, the verdict and the records reported; a reference
 * reader written in the target from spec 5 (delta rules in both group orders, first-record rules,
 * prior Subgroup ID / Priority references, End of Range markers in both readings, overflow and
 * underflow of every ID) gives the same verdict, offset and event record (resolved Group,
 * Subgroup and Object IDs, priorities, properties and payload bytes). */
#include "moqt_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return mf_target(data, size, WK_MOQT_CARRIER_FETCH);
}
