/* The Lace-065 stream-encoding dictionary: the seed's UTF-8 fragments concatenated in order,
 * with the seed's labels as comments. 830 bytes; BLAKE3
 * eb56b8cfb9f118671f72c2b391e8a39fa2dfe57bd3af49613047851847e545fd (checked in tests). */
#include <wirekit/iltp.h>

static const char dictionary[] =
    /* Operand body and the generic parts of compiled 040 rules. */
    "::policy-body\n🖧: B."
    ".H3\nData-Length: "
    "\n\n"
    "ExposeRecord("
    ") :- Have("
    "), Field("
    ",'By','0','V."
    ".H3'), not Field("
    ",'By','1',_).\n"
    "SelectAdvertisedCandidate("
    ") :- Advertised("
    "), AdvertisedField("
    "','0','"
    "'), not AdvertisedField("
    ",'1',_), PeerConfidential("
    "SelectStoredRecord("
    /* Proof: none, or a Seal over the empty Blob. */
    "::as unknown\n"
    "::as\n🖧: S."
    ".H3\nBy: V."
    ".H3\nMark: "
    "\n🖧: P."
    ".H3\nChallenge-side0: "
    "\nChallenge-side1: "
    "\nChannel-Binding: "
    "\nProof-Profile: lace-iltp-peer-proof-v3\nProof-Role: side0\n"
    "🖧: B.svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO.H3\nData-Length: 0\n\n\n"
    /* Policy announcement and its answers. */
    "::policy B."
    ".H3\n::policy-known\n"
    "::policy-missing\n"
    /* Listings, projected fields and symbols. */
    "\n::offers\nS."
    ".H3\n\tBy: V."
    ".H3\n\t"
    ": "
    "\nP."
    ".H3\n\t:Length: "
    "\n\t:Type: S\n\tData-Length: "
    "\n\tMark: "
    "\n\n::offers-unshared\n"
    "::symbols\n"
    " 1\n\n"
    /* Responses. */
    "::response\n🖧: S."
    ".H3\nBy: V."
    ".H3\nMark: "
    "\n🖧: P."
    ".H3\n"
    "\n🖧: B."
    ".H3\nData-Length: "
    "\n\n"
    /* Later-round changes and requests. */
    "::offers-changed\n+ S."
    ".H3\n- S."
    ".H3\n\n"
    "::want\nS."
    ".H3\nP."
    ".H3\n\n"
    /* Fence and an unchanged round. */
    "\n::round-end\n::offers-changed\n\n::want\n\n";

_Static_assert(sizeof dictionary - 1 == WK_ILTP_DICTIONARY_LEN, "the dictionary is 830 bytes");

const uint8_t *wk_iltp_dictionary_get(void) { return (const uint8_t *)dictionary; }
