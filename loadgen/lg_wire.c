/* lg_wire: captured TCP segments to stream offsets and times (lg_wire.h). */
#include "lg_wire.h"

#include <stdlib.h>
#include <string.h>

typedef struct wrange {
    uint64_t s, e; /* [s, e) stream offsets */
    int64_t t_ns;
} wrange;

/* One direction of a connection: its captured ranges. */
typedef struct wside {
    uint32_t start; /* the sequence number of offset 0 */
    uint64_t hi;    /* the highest end offset seen (the wrap reference) */
    uint64_t base;  /* released: nothing below it is kept or taken */
    wrange *r;      /* sorted by offset, disjoint */
    size_t n, cap;
} wside;

typedef struct wconn {
    wside srv;     /* the server's bytes (the response stream) */
    wside cli;     /* the client's bytes (the request stream), if known */
    int tentative; /* anchored by the client's ack: holds if data starts at 0 */
    int cli_known; /* cli.start came from the SYN-ACK's acknowledgement */
} wconn;

struct lg_wire {
    size_t max_segs;
    wconn *conn[65536];
    /* a port with no state whose data was seen or which the client read
     * from: an anchor there could be a later request's (cleared by a
     * SYN-ACK or a close) */
    uint8_t tainted[65536 / 8];
    lg_wire_counts c;
};

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int lg_wire_parse(int dlt, const uint8_t *f, size_t caplen, lg_wire_seg *seg)
{
    size_t off;
    uint16_t etype = 0;
    switch (dlt) {
    case LG_WIRE_DLT_EN10MB:
        if (caplen < 14) return -1;
        etype = rd16(f + 12);
        off = 14;
        if (etype == 0x8100 && caplen >= 18) { /* one VLAN tag */
            etype = rd16(f + 16);
            off = 18;
        }
        break;
    case LG_WIRE_DLT_LINUX_SLL:
        if (caplen < 16) return -1;
        etype = rd16(f + 14);
        off = 16;
        break;
    case LG_WIRE_DLT_NULL:
        if (caplen < 4) return -1;
        off = 4;
        break;
    case LG_WIRE_DLT_RAW:
        off = 0;
        break;
    default:
        return -1;
    }
    if (caplen < off + 1) return -1;
    int ver = f[off] >> 4;
    if (etype && !((etype == 0x0800 && ver == 4) || (etype == 0x86dd && ver == 6))) return -1;
    size_t ip_hl, ip_payload;
    const uint8_t *ip = f + off;
    if (ver == 4) {
        if (caplen < off + 20) return -1;
        ip_hl = (size_t)(ip[0] & 0x0f) * 4;
        if (ip_hl < 20 || ip[9] != 6) return -1;
        if (rd16(ip + 6) & 0x3fff) return -1; /* a fragment */
        size_t total = rd16(ip + 2);
        if (total < ip_hl) return -1;
        ip_payload = total - ip_hl;
    } else if (ver == 6) {
        if (caplen < off + 40) return -1;
        ip_hl = 40;
        if (ip[6] != 6) return -1; /* extension headers are not followed */
        ip_payload = rd16(ip + 4);
    } else {
        return -1;
    }
    const uint8_t *tcp = ip + ip_hl;
    if (caplen < off + ip_hl + 20) return -1;
    size_t thl = (size_t)(tcp[12] >> 4) * 4;
    if (thl < 20 || ip_payload < thl) return -1;
    seg->sport = rd16(tcp);
    seg->dport = rd16(tcp + 2);
    seg->seq = rd32(tcp + 4);
    seg->ack = rd32(tcp + 8);
    seg->flags = tcp[13];
    seg->len = (uint32_t)(ip_payload - thl);
    return 0;
}

lg_wire *lg_wire_new(size_t max_segs)
{
    if (max_segs < 1) max_segs = 1;
    lg_wire *w = calloc(1, sizeof *w);
    if (w) w->max_segs = max_segs;
    return w;
}

static void taint(lg_wire *w, uint16_t port, int on)
{
    if (on)
        w->tainted[port >> 3] |= (uint8_t)(1u << (port & 7));
    else
        w->tainted[port >> 3] &= (uint8_t) ~(1u << (port & 7));
}

void lg_wire_close(lg_wire *w, uint16_t port)
{
    taint(w, port, 0);
    wconn *c = w->conn[port];
    if (!c) return;
    free(c->srv.r);
    free(c->cli.r);
    free(c);
    w->conn[port] = NULL;
    w->c.conns--;
}

void lg_wire_free(lg_wire *w)
{
    if (!w) return;
    for (size_t i = 0; i < 65536; i++)
        lg_wire_close(w, (uint16_t)i);
    free(w);
}

static wconn *conn_new(lg_wire *w, uint16_t port, uint32_t start)
{
    lg_wire_close(w, port);
    wconn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->srv.start = start;
    w->conn[port] = c;
    w->c.conns++;
    return c;
}

int lg_wire_syn(lg_wire *w, uint16_t port, uint32_t isn)
{
    taint(w, port, 0);
    return conn_new(w, port, isn + 1) ? 0 : -1;
}

int lg_wire_client(lg_wire *w, uint16_t port, uint32_t ack)
{
    if (w->conn[port]) return 1;
    /* Only a connection the client has not read from yet: its first
     * request's ack is ISN + 1; a later one's also counts the responses. */
    if (w->tainted[port >> 3] & (1u << (port & 7))) return 1;
    wconn *c = conn_new(w, port, ack);
    if (!c) return -1;
    c->tentative = 1;
    return 0;
}

/* The first range whose end is past off (n: none). */
static size_t first_after(const wside *c, uint64_t off)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->r[mid].e > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Inserts [s, e) at position pos; 0, 1 (dropped: the lowest range of a
 * full connection), -1 no memory. *pos stays at the new range. */
static int insert_at(lg_wire *w, wside *c, size_t *pos, uint64_t s, uint64_t e, int64_t t)
{
    if (c->n == w->max_segs) {
        w->c.evicted++;
        if (*pos == 0) return 1;
        memmove(c->r, c->r + 1, (c->n - 1) * sizeof *c->r);
        c->n--;
        (*pos)--;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        if (cap > w->max_segs) cap = w->max_segs;
        wrange *r = realloc(c->r, cap * sizeof *r);
        if (!r) return -1;
        c->r = r;
        c->cap = cap;
    }
    memmove(c->r + *pos + 1, c->r + *pos, (c->n - *pos) * sizeof *c->r);
    c->r[*pos] = (wrange){.s = s, .e = e, .t_ns = t};
    c->n++;
    return 0;
}

/* The 64-bit offset of seq nearest the side's highest seen (the sequence
 * space wraps). */
static int64_t side_offset(const wside *c, uint32_t seq)
{
    uint32_t rel = seq - c->start;
    return (int64_t)c->hi + (int32_t)(rel - (uint32_t)c->hi);
}

/* Takes [s64, s64 + len) captured at t into side c; dup counts the bytes
 * seen before. 0, or -1 no memory. */
static int side_add(lg_wire *w, wside *c, int64_t s64, uint32_t len, int64_t t_ns, uint64_t *dup)
{
    if (s64 + (int64_t)len <= 0) return 0; /* before the stream (the SYN's byte) */
    uint64_t s = s64 < 0 ? 0 : (uint64_t)s64, e = (uint64_t)(s64 + (int64_t)len);
    if (e > c->hi) c->hi = e;
    if (s < c->base) {
        *dup += (e < c->base ? e : c->base) - s;
        s = c->base;
    }
    size_t pos = first_after(c, s);
    while (s < e) {
        if (pos < c->n && c->r[pos].s <= s) { /* seen: the first capture wins */
            uint64_t to = c->r[pos].e < e ? c->r[pos].e : e;
            *dup += to - s;
            s = to;
            pos++;
            continue;
        }
        uint64_t stop = pos < c->n && c->r[pos].s < e ? c->r[pos].s : e;
        int rc = insert_at(w, c, &pos, s, stop, t_ns);
        if (rc < 0) return -1;
        if (rc == 0) pos++;
        s = stop;
    }
    return 0;
}

int lg_wire_data(lg_wire *w, uint16_t port, uint32_t seq, uint32_t len, int64_t t_ns)
{
    wconn *c = w->conn[port];
    if (!c) {
        taint(w, port, 1);
        w->c.unknown++;
        return 1;
    }
    if (!len) return 0;
    int64_t s64 = side_offset(&c->srv, seq);
    if (c->tentative) {
        if (s64 != 0) { /* the anchor was not the first request's: no times */
            lg_wire_close(w, port);
            w->c.unknown++;
            return 1;
        }
        c->tentative = 0;
    }
    if (s64 + (int64_t)len > 0) w->c.segments++;
    return side_add(w, &c->srv, s64, len, t_ns, &w->c.dup_bytes);
}

int lg_wire_client_start(lg_wire *w, uint16_t port, uint32_t next)
{
    wconn *c = w->conn[port];
    if (!c || c->tentative) return -1;
    free(c->cli.r);
    c->cli = (wside){.start = next};
    c->cli_known = 1;
    return 0;
}

int lg_wire_sent(lg_wire *w, uint16_t port, uint32_t seq, uint32_t len, int64_t t_ns)
{
    wconn *c = w->conn[port];
    if (!c || !c->cli_known) return 1;
    if (!len) return 0;
    int64_t s64 = side_offset(&c->cli, seq);
    if (s64 + (int64_t)len > 0) w->c.sent_segments++;
    return side_add(w, &c->cli, s64, len, t_ns, &w->c.sent_dup_bytes);
}

int lg_wire_feed(lg_wire *w, const lg_wire_seg *seg, uint16_t server_port, int64_t t_ns)
{
    if (seg->dport == server_port && seg->sport != server_port) {
        if (!seg->len || !(seg->flags & LG_TCP_ACK) || (seg->flags & LG_TCP_SYN)) return 2;
        if (lg_wire_client(w, seg->sport, seg->ack) < 0) return -1;
        return lg_wire_sent(w, seg->sport, seg->seq, seg->len, t_ns) < 0 ? -1 : 2;
    }
    if (seg->sport != server_port) return 2;
    if (seg->flags & LG_TCP_SYN) {
        if (!(seg->flags & LG_TCP_ACK)) return 2;
        if (lg_wire_syn(w, seg->dport, seg->seq) < 0) return -1;
        /* its acknowledgement is the client's ISN + 1: the request stream's 0 */
        lg_wire_client_start(w, seg->dport, seg->ack);
        return 0;
    }
    if (!seg->len) return 2;
    return lg_wire_data(w, seg->dport, seg->seq, seg->len, t_ns);
}

static int side_lookup(const wside *c, uint64_t offset, int64_t *t_ns)
{
    if (offset < c->base) return -1;
    size_t i = first_after(c, offset);
    if (i == c->n || c->r[i].s > offset) return -1;
    *t_ns = c->r[i].t_ns;
    return 0;
}

static void side_release(wside *c, uint64_t offset)
{
    if (offset <= c->base) return;
    c->base = offset;
    size_t i = first_after(c, offset);
    if (!i) return;
    memmove(c->r, c->r + i, (c->n - i) * sizeof *c->r);
    c->n -= i;
}

int lg_wire_lookup(const lg_wire *w, uint16_t port, uint64_t offset, int64_t *t_ns)
{
    const wconn *c = w->conn[port];
    return c ? side_lookup(&c->srv, offset, t_ns) : -1;
}

int lg_wire_sent_lookup(const lg_wire *w, uint16_t port, uint64_t offset, int64_t *t_ns)
{
    const wconn *c = w->conn[port];
    return c && c->cli_known ? side_lookup(&c->cli, offset, t_ns) : -1;
}

void lg_wire_release(lg_wire *w, uint16_t port, uint64_t offset)
{
    wconn *c = w->conn[port];
    if (!c) {
        taint(w, port, 1); /* the client reads a connection with no anchor yet */
        return;
    }
    side_release(&c->srv, offset);
}

void lg_wire_sent_release(lg_wire *w, uint16_t port, uint64_t offset)
{
    wconn *c = w->conn[port];
    if (c) side_release(&c->cli, offset);
}

size_t lg_wire_ranges(const lg_wire *w, uint16_t port)
{
    return w->conn[port] ? w->conn[port]->srv.n : 0;
}

lg_wire_counts lg_wire_get_counts(const lg_wire *w)
{
    return w->c;
}

int lg_tls_scan_read(lg_tls_scan *s, const uint8_t *buf, size_t n)
{
    if (s->bad) return -1;
    int body = 0; /* the last byte taken was a record's last body byte */
    size_t i = 0;
    while (i < n) {
        if (s->body_left) {
            size_t take = n - i < s->body_left ? n - i : s->body_left;
            s->body_left -= (uint32_t)take;
            i += take;
            body = s->body_left == 0;
            continue;
        }
        s->hdr[s->hdr_n++] = buf[i++];
        body = 0;
        if (s->hdr_n < 5) continue;
        s->hdr_n = 0;
        uint32_t len = (uint32_t)s->hdr[3] << 8 | s->hdr[4];
        if (s->hdr[0] < 20 || s->hdr[0] > 24 || s->hdr[1] != 3 || len > 16384 + 2048) {
            s->bad = 1;
            return -1;
        }
        s->body_left = len;
        body = len == 0;
    }
    return body;
}
