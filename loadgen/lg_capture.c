/* lg_capture: libpcap handles for the wire clock, the target's route, the
 * per-worker filter, and the run's choice of receive clock (lg_capture.h). */
#include "lg_capture.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* Headers only: link (up to 18) + IPv6 (40) + TCP with options (60). */
#define LG_CAP_SNAPLEN 128

struct lg_cap {
    pcap_t *pc;
    int dlt;
    uint16_t server_port;
    uint64_t packets;
};

static int same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
    if (a->sa_family != b->ss_family) return 0;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
    return 0;
}

/* The interface holding local, the source address of the route to dst. */
static int route_iface(const struct sockaddr *dst, socklen_t dlen, char *ifname, size_t if_len)
{
    int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_storage local;
    socklen_t ll = sizeof local;
    int rc = connect(fd, dst, dlen) == 0 && getsockname(fd, (struct sockaddr *)&local, &ll) == 0;
    close(fd);
    if (!rc) return -1;
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) return -1;
    rc = -1;
    for (i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && same_addr(i->ifa_addr, &local)) {
            snprintf(ifname, if_len, "%s", i->ifa_name);
            rc = 0;
            break;
        }
    freeifaddrs(ifs);
    return rc;
}

int lg_cap_target(const char *url, char *addr, size_t addr_len, int *port, char *ifname,
                  size_t if_len, char *err, size_t err_len)
{
    CURLU *u = curl_url();
    char *host = NULL, *ps = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &ps, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        snprintf(err, err_len, "cannot parse the target '%s'", url);
        goto out;
    }
    /* An IPv6 literal comes bracketed. */
    char h[256];
    size_t hl = strlen(host);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']')
        snprintf(h, sizeof h, "%.*s", (int)(hl - 2), host + 1);
    else
        snprintf(h, sizeof h, "%s", host);
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai = NULL;
    int g = getaddrinfo(h, ps, &hints, &ai);
    if (g != 0 || !ai) {
        snprintf(err, err_len, "cannot resolve '%s': %s", h, gai_strerror(g));
        goto out;
    }
    *port = atoi(ps);
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, (socklen_t)addr_len, NULL, 0,
                    NI_NUMERICHOST) != 0 ||
        route_iface(ai->ai_addr, ai->ai_addrlen, ifname, if_len) != 0) {
        snprintf(err, err_len, "no interface routes to '%s'", h);
        freeaddrinfo(ai);
        goto out;
    }
    freeaddrinfo(ai);
    rc = 0;
out:
    curl_free(host);
    curl_free(ps);
    curl_url_cleanup(u);
    return rc;
}

void lg_cap_filter(const char *addr, int port, int id, int k, char *filter, size_t len, int *lo,
                   int *hi)
{
    *lo = *hi = 0;
    /* The server's segments, and the client's that carry data: a request
     * anchors a connection whose SYN-ACK was missed, and times its own
     * departure (lg_wire.h). Data by its length, not by PSH: a request
     * longer than a segment leaves in several, and PSH marks only the last
     * of a send, so its first bytes (the departure) went untimed; and
     * `tcp[tcpflags]` reads IPv4 only, so over ::1 no departure was seen at
     * all (the IPv6 clause reads the TCP header at ip6[40], with no
     * extension header; one with any falls back, as a missed segment does).
     * Pure ACKs, one per server segment, stay out. No
     * `inbound`: it compiles to a load that only the kernel can run, and
     * libpcap runs the new filter in user space over the frames the ring
     * held when it was set, plus one: there the load fails and the packet
     * is dropped, so every handle lost its first packet (a connection's
     * SYN-ACK) and more when traffic came before the filter. Loopback's
     * sent copies are refused by the socket instead (lg_cap_open). */
    int n = snprintf(filter, len,
                     "tcp and host %s and port %d and (src port %d or (ip and ip[2:2] - ((ip[0] & "
                     "0xf) << 2) - ((tcp[12] & 0xf0) >> 2) > 0) or (ip6 and ip6[6] == 6 and "
                     "ip6[4:2] - ((ip6[52] & 0xf0) >> 2) > 0))",
                     addr, port, port);
    if (k <= 1 || n < 0 || (size_t)n >= len) return;
    /* Below the kernel's ephemeral range: worker i of k gets its own slice,
     * so its filter needs no knowledge of the others' connections. */
    int eph = 32768;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d", &eph) != 1) eph = 32768;
        fclose(f);
    }
    if (eph < 4096 || eph > 65535) eph = 32768;
    int span = (eph - 2048) / k;
    if (span > 4096) span = 4096;
    if (span < 1) span = 1;
    *lo = eph - (k - id) * span;
    *hi = *lo + span - 1;
    snprintf(filter + n, len - (size_t)n, " and portrange %d-%d", *lo, *hi);
}

lg_cap *lg_cap_open(const char *ifname, const char *filter, int buffer_kib, int server_port,
                    int *why, char *err, size_t err_len)
{
    char ebuf[PCAP_ERRBUF_SIZE] = "";
    *why = -EIO;
    pcap_t *pc = pcap_create(ifname, ebuf);
    if (!pc) {
        snprintf(err, err_len, "%s", ebuf);
        return NULL;
    }
    pcap_set_snaplen(pc, LG_CAP_SNAPLEN);
    pcap_set_immediate_mode(pc, 1);
    pcap_set_tstamp_precision(pc, PCAP_TSTAMP_PRECISION_NANO);
    pcap_set_buffer_size(pc, buffer_kib * 1024);
    int rc = pcap_activate(pc);
    if (rc < 0) {
        if (rc == PCAP_ERROR_PERM_DENIED)
            *why = -EPERM;
        else if (rc == PCAP_ERROR_NO_SUCH_DEVICE)
            *why = -ENODEV;
        snprintf(err, err_len, "%s: %s", ifname, pcap_geterr(pc));
        pcap_close(pc);
        return NULL;
    }
    /* Loopback hands a packet socket each packet twice, sent and received;
     * libpcap drops the sent copy only after the ring took it. The socket
     * can refuse it (Linux 4.20); without that, libpcap's drop remains. */
#ifdef PACKET_IGNORE_OUTGOING
    if (strcmp(ifname, "lo") == 0) {
        int one = 1;
        (void)setsockopt(pcap_fileno(pc), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    }
#endif
    struct bpf_program prog;
    if (pcap_compile(pc, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
        *why = -EINVAL;
        snprintf(err, err_len, "filter '%s': %s", filter, pcap_geterr(pc));
        pcap_close(pc);
        return NULL;
    }
    rc = pcap_setfilter(pc, &prog);
    pcap_freecode(&prog);
    if (rc != 0 || pcap_setnonblock(pc, 1, ebuf) != 0) {
        snprintf(err, err_len, "%s: %s", ifname, rc ? pcap_geterr(pc) : ebuf);
        pcap_close(pc);
        return NULL;
    }
    lg_cap *c = calloc(1, sizeof *c);
    if (!c) {
        pcap_close(pc);
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    c->pc = pc;
    c->dlt = pcap_datalink(pc);
    c->server_port = (uint16_t)server_port;
    return c;
}

static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
    void **ctx = (void **)user;
    lg_cap *c = ctx[0];
    lg_wire_seg seg;
    c->packets++;
    if (lg_wire_parse(c->dlt, bytes, h->caplen, &seg) != 0) return;
    /* nanosecond precision: tv_usec holds nanoseconds */
    int64_t t = (int64_t)h->ts.tv_sec * 1000000000LL + (int64_t)h->ts.tv_usec;
    lg_wire_feed(ctx[1], &seg, c->server_port, t);
}

int lg_cap_drain(lg_cap *c, lg_wire *wire)
{
    void *ctx[2] = {c, wire};
    /* One call takes every frame ready (immediate mode is TPACKET_V2: frame
     * by frame) and makes no system call when the first one is; a second
     * call would find none and poll. */
    int n = pcap_dispatch(c->pc, -1, on_packet, (u_char *)ctx);
    return n < 0 ? -1 : n;
}

void lg_cap_stats(lg_cap *c, uint64_t *packets, uint64_t *drops)
{
    struct pcap_stat ps;
    *packets = c->packets;
    *drops = 0;
    /* ps_drop: packets the ring had no room for. (ps_ifdrop is the whole
     * interface's, every process's: not this capture's.) */
    if (pcap_stats(c->pc, &ps) == 0) *drops = ps.ps_drop;
}

void lg_cap_close(lg_cap *c)
{
    if (!c) return;
    pcap_close(c->pc);
    free(c);
}

int lg_capture_resolve(lg_opts *o, int k)
{
    o->receive_clock_fallback[0] = 0;
    o->capture_iface[0] = 0;
    o->capture_filter[0] = 0;
    if (o->receive_clock != LG_RXC_WIRE) return 0;
    /* (TLS too: its events are timed by the records that carried them,
     * lg_tls_scan in lg_wire.h) */
    char addr[INET6_ADDRSTRLEN + 8], err[512] = "", filter[320];
    int port, why = -EIO, lo, hi;
    lg_cap *c = NULL;
    if (lg_cap_target(o->base_url, addr, sizeof addr, &port, o->capture_iface,
                      sizeof o->capture_iface, err, sizeof err) == 0) {
        lg_cap_filter(addr, port, 0, 1, filter, sizeof filter, &lo, &hi);
        c = lg_cap_open(o->capture_iface, filter, o->capture_buffer_kib, port, &why, err,
                        sizeof err);
    }
    if (c) {
        lg_cap_close(c);
        lg_cap_filter(addr, port, 0, k, o->capture_filter, sizeof o->capture_filter, &lo, &hi);
        return 0;
    }
    const char *how = why == -EPERM ? "capturing packets needs CAP_NET_RAW (run as root, or grant "
                                      "it: setcap cap_net_raw+ep $(command -v loadgen))"
                                    : err;
    if (o->receive_clock_given) {
        fprintf(stderr, "loadgen: --receive-clock wire: cannot capture: %s%s%s\n", how,
                why == -EPERM ? ": " : "", why == -EPERM ? err : "");
        return 2;
    }
    /* (at most the field's room: err is longer, and a Debug build's
     * -Wformat-truncation refuses an unbounded %s here) */
    snprintf(o->receive_clock_fallback, sizeof o->receive_clock_fallback, "%.*s",
             (int)sizeof o->receive_clock_fallback - 1,
             why == -EPERM ? "no CAP_NET_RAW: packets cannot be captured" : err);
    fprintf(stderr, "loadgen: receive clock: kernel, not wire (%s)\n", how);
    o->receive_clock = LG_RXC_KERNEL;
    return 0;
}

/* Ranges kept per connection: a reader behind by this many segments loses
 * the oldest (counted as fallbacks when looked up). */
#define LG_WIRE_MAX_SEGS 4096

int lg_wclock_open(lg_wclock *wc, const lg_opts *o, const char *url, int id, int k, char *err,
                   size_t err_len)
{
    *wc = (lg_wclock){.port = -1};
    char addr[INET6_ADDRSTRLEN + 8], ifname[64];
    int port, why;
    if (lg_cap_target(url, addr, sizeof addr, &port, ifname, sizeof ifname, err, err_len) != 0)
        return -1;
    const char *dev = o->capture_iface[0] ? o->capture_iface : ifname;
    lg_cap_filter(addr, port, id, k, wc->filter, sizeof wc->filter, &wc->port_lo, &wc->port_hi);
    wc->wire = lg_wire_new(LG_WIRE_MAX_SEGS);
    if (!wc->wire) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    wc->cap = lg_cap_open(dev, wc->filter, o->capture_buffer_kib, port, &why, err, err_len);
    if (!wc->cap) {
        lg_wire_free(wc->wire);
        wc->wire = NULL;
        return -1;
    }
    wc->on = 1;
    return 0;
}

int lg_wclock_read(lg_wclock *wc, int port, const void *buf, size_t n, uint64_t off)
{
    if (!wc->on) return -1;
    int got = lg_cap_drain(wc->cap, wc->wire);
    if (got < 0) {
        wc->on = 0; /* the interface went away: the kernel's stamps from here */
        return -1;
    }
    wc->packets += (uint64_t)got;
    if (port > 0 && port < 65536) lg_wire_release(wc->wire, (uint16_t)port, off);
    wc->port = port;
    wc->buf = buf;
    wc->n = n;
    wc->off = off;
    return got;
}

int lg_wclock_time(lg_wclock *wc, int port, const char *p, int64_t *real_ns)
{
    if (!wc->on || port != wc->port || port <= 0 || port >= 65536 || !p || p < wc->buf ||
        p >= wc->buf + wc->n)
        return -1;
    uint64_t off = wc->off + (uint64_t)(p - wc->buf);
    if (lg_wire_lookup(wc->wire, (uint16_t)port, off, real_ns) == 0) return 0;
    /* The read's drain may have stopped short of a long backlog: take the
     * rest (the byte was read, so its segment is in the ring) and look again. */
    int got = lg_cap_drain(wc->cap, wc->wire);
    if (got <= 0) return -1;
    wc->packets += (uint64_t)got;
    return lg_wire_lookup(wc->wire, (uint16_t)port, off, real_ns);
}

int lg_wclock_time_last(lg_wclock *wc, int port, int64_t *real_ns)
{
    if (!wc->on || port != wc->port || !wc->buf || !wc->n) return -1;
    return lg_wclock_time(wc, port, wc->buf + wc->n - 1, real_ns);
}

/* Both ends of [lo, hi) of port's request stream: 0, or -1. */
static int sent_ends(const lg_wclock *wc, uint16_t port, uint64_t lo, uint64_t hi, int64_t *first,
                     int64_t *last)
{
    return lg_wire_sent_lookup(wc->wire, port, lo, first) == 0 &&
                   lg_wire_sent_lookup(wc->wire, port, hi - 1, last) == 0
               ? 0
               : -1;
}

int lg_wclock_sent(lg_wclock *wc, int port, uint64_t lo, uint64_t hi, int64_t *first_real_ns,
                   int64_t *last_real_ns)
{
    if (!wc->on || port <= 0 || port >= 65536 || hi <= lo) return -1;
    uint16_t p = (uint16_t)port;
    int rc = sent_ends(wc, p, lo, hi, first_real_ns, last_real_ns);
    if (rc != 0) {
        /* the request left before its response came, so its segments are in
         * the ring by now: take what the last drain left, and look again */
        int got = lg_cap_drain(wc->cap, wc->wire);
        if (got > 0) {
            wc->packets += (uint64_t)got;
            rc = sent_ends(wc, p, lo, hi, first_real_ns, last_real_ns);
        }
    }
    lg_wire_sent_release(wc->wire, p, hi);
    return rc;
}

void lg_wclock_close(lg_wclock *wc)
{

    lg_cap_close(wc->cap);
    lg_wire_free(wc->wire);
    *wc = (lg_wclock){.port = -1};
}
