/* wirekit iltp items / blob: the Lace-060 item codec over one direction's bytes. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

static void print_hash(const uint8_t h[32], char out[44])
{
    wk_b64a_encode(h, 32, out);
    out[43] = 0;
}

static void print_item(const wk_iltp_item *it, bool json)
{
    char h[44], n[44];
    if (it->kind == WK_ILTP_ITEM_PREFACE) {
        const wk_iltp_preface *p = &it->preface;
        print_hash(p->nonce, n);
        const char *form = p->form == WK_ILTP_FORM_1_0 ? "1.0" : "0.13";
        if (json)
            printf("{\"item\":\"preface\",\"offset\":%llu,\"form\":\"%s\",\"nonce\":\"%s\",\"decode\":\"%.*s\",\"encode\":\"%.*s\"}\n",
                   (unsigned long long)it->offset, form, n, (int)p->decode.len, p->decode.text ? p->decode.text : "",
                   (int)p->encode.len, p->encode.text ? p->encode.text : "");
        else
            printf("preface %s nonce=%s decode=%.*s encode=%.*s\n", form, n,
                   p->decode.len ? (int)p->decode.len : 1, p->decode.len ? p->decode.text : "-",
                   p->encode.len ? (int)p->encode.len : 1, p->encode.len ? p->encode.text : "-");
    } else if (it->kind == WK_ILTP_ITEM_FACTS) {
        if (json) printf("{\"item\":\"facts\",\"offset\":%llu,\"rows\":%zu}\n", (unsigned long long)it->offset, it->rows);
        else printf("facts %zu\n", it->rows);
    } else {
        const wk_iltp_record *r = &it->record;
        const uint8_t *hash = r->type == 'B' ? r->blob.hash : r->type == 'P' ? r->plex.hash : r->seal.hash;
        print_hash(hash, h);
        if (json) {
            printf("{\"item\":\"record\",\"offset\":%llu,\"type\":\"%c\",\"hash\":\"%s\",\"length\":%zu",
                   (unsigned long long)it->offset, r->type, h, r->blob.len);
            if (r->type != 'B') printf(",\"fields\":%zu", r->plex.field_count);
            if (r->type == 'S') { print_hash(r->seal.by, n); printf(",\"by\":\"%s\"", n); }
            printf(",\"bytes\":%zu}\n", it->len);
        } else {
            printf("record %c %s %zu", r->type, h, r->blob.len);
            if (r->type != 'B') printf(" fields=%zu", r->plex.field_count);
            if (r->type == 'S') { print_hash(r->seal.by, n); printf(" by=%s", n); }
            printf("\n");
        }
    }
}

int wk_cli_iltp_items(int argc, char **argv)
{
    wk_iltp_encoding enc = WK_ILTP_IDENTITY;
    wk_iltp_form form = WK_ILTP_FORM_ANY;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            printf("usage: wirekit iltp items [--encoding TOKEN] [--form 1.0|0.13] [--json]\n"
                   "Reads one direction's bytes from stdin: raw prefaces and, after each preface,\n"
                   "items in TOKEN's encoding (default identity). Prints one line per item:\n"
                   "  preface FORM nonce=N decode=L encode=L | facts ROWS | record T HASH LEN\n"
                   "and the end-of-stream verdict. Exit 0 clean, 2 invalid, 3 truncated.\n"
                   "JSON offsets count stdin bytes, except inside a compressed session, where they\n"
                   "count that session's decoded bytes.\n");
            return 0;
        } else if (strcmp(a, "--encoding") == 0 && i + 1 < argc) {
            enc = wk_iltp_encoding_lookup(argv[i + 1], strlen(argv[i + 1]));
            if (enc == WK_ILTP_UNKNOWN) return wk_cli_usage("unknown encoding '%s'", argv[i + 1]);
            i++;
        } else if (strcmp(a, "--form") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "1.0") == 0) form = WK_ILTP_FORM_1_0;
            else if (strcmp(f, "0.13") == 0) form = WK_ILTP_FORM_0_13;
            else return wk_cli_usage("--form takes 1.0 or 0.13");
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else {
            return wk_cli_usage("wirekit iltp items: unknown or incomplete option '%s'", a);
        }
    }
    wk_error err;
    wk_iltp_stack_params sp = {form, 0, 0, NULL};
    wk_iltp_reader *r = wk_iltp_reader_create(&sp, &err);
    if (!r) return wk_cli_fail(&err);
    static uint8_t buf[65536];
    size_t have = 0, pos = 0;
    bool eof = false;
    int rc = 0;
    unsigned long long items = 0;
    for (;;) {
        if (pos == have && !eof) {
            /* what has arrived (the lines so far are flushed first) */
            if ((rc = wk_cli_read_some(buf, sizeof buf, &have)) != 0) break;
            pos = 0;
            if (have == 0) eof = true;
        }
        wk_in in = {buf, have, pos};
        wk_result res = wk_iltp_reader_read(r, &in, NULL, &err);
        pos = in.pos;
        if (res == WK_ERROR) { fflush(stdout); rc = wk_cli_fail(&err); break; }
        if (res == WK_EVENT) { /* an item: Blob streaming is off */
            const wk_iltp_item *it = wk_iltp_reader_item(r);
            items++;
            print_item(it, json);
            if (it->kind == WK_ILTP_ITEM_PREFACE && wk_iltp_reader_begin(r, enc, &err) != WK_OK) {
                fflush(stdout);
                rc = wk_cli_fail(&err);
                break;
            }
            continue;
        }
        if (eof) {
            wk_in rest = {buf, have, pos};
            wk_iltp_reader_phase ph = wk_iltp_reader_phase_get(r);
            if (wk_iltp_reader_finish(r, &rest, &err) != WK_DONE) { fflush(stdout); rc = wk_cli_fail(&err); break; }
            const char *why = ph == WK_ILTP_READER_NO_SESSION ? "before any preface"
                              : ph == WK_ILTP_READER_ENDED ? "after the end mark"
                                                            : "at an identity item boundary";
            if (json) printf("{\"end\":\"clean\",\"items\":%llu,\"where\":\"%s\"}\n", items, why);
            else printf("end clean: %llu items, boundary EOF %s\n", items, why);
            break;
        }
    }
    wk_iltp_reader_destroy(r);
    if (fflush(stdout) != 0 && rc == 0) rc = 1;
    return rc;
}

int wk_cli_iltp_blob(int argc, char **argv)
{
    if (argc > 1 && wk_cli_is_help(argv[1])) {
        printf("usage: wirekit iltp blob < DATA\nWrites the canonical H3 Blob record for stdin (at most 32 MiB):\n"
               "the glyph line with BLAKE3 of the content, Data-Length, a blank line, the data.\n");
        return 0;
    }
    if (argc > 1) return wk_cli_usage("wirekit iltp blob takes no arguments");
    size_t len;
    bool too_long;
    uint8_t *data = wk_cli_read_all(stdin, WK_ILTP_BLOB_DATA_CAP, &len, &too_long);
    if (!data) {
        wk_error e;
        wk_error_set(&e, too_long ? WK_ERR_ILTP_BLOB_TOO_LARGE : WK_ERR_BACKEND, WK_NO_OFFSET,
                     too_long ? "Blob data over 32 MiB" : "cannot read stdin");
        return wk_cli_fail_usage(&e);
    }
    uint8_t hash[32], head[WK_ILTP_BLOB_HEAD_MAX];
    wk_iltp_blob_hash(data, len, hash);
    size_t hl = wk_iltp_blob_head_format(hash, len, head);
    int rc = (wk_cli_write(head, hl) && wk_cli_write(data, len) && fflush(stdout) == 0) ? 0 : 1;
    free(data);
    return rc;
}
