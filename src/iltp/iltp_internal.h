/* Internal helpers shared by the ILTP source files (not installed). */
#ifndef WK_ILTP_INTERNAL_H
#define WK_ILTP_INTERNAL_H
#include <wirekit/iltp.h>

/* Checks UTF-8 validity and NFC of p[0..n) (n <= 1024 for the fixed scratch bound). On failure
 * returns WK_ERR_ILTP_UTF8 with *bad the offset and *why a static message. */
wk_code wk_iltp_text_nfc_check(const uint8_t *p, size_t n, size_t *bad, const char **why);
/* Checks one fact line (without its LF). On success sets *arity. On failure returns the code
 * with *bad (offset in the line) and *why (static message). */
wk_code wk_iltp_fact_line_check(const uint8_t *p, size_t n, size_t *bad, const char **why,
                                size_t *arity);
/* The item decoder's step with the item filled into *item (WK_DONE) instead of the decoder's
 * own (the reader collects into its own item without a copy); otherwise as
 * wk_iltp_item_decoder_decode. */
wk_result wk_iltp_item_decoder_step(wk_iltp_item_decoder *d, wk_in *in, wk_iltp_item *item,
                                    wk_error *err);
#endif
