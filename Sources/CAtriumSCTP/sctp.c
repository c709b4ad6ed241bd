#include "CAtriumSCTP.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <usrsctp.h>

static atrium_sctp_output_fn output_fn;
static atrium_sctp_event_fn event_fn;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int on_output(void *addr, void *buffer, size_t length, uint8_t tos, uint8_t set_df) {
    (void)tos;
    (void)set_df;
    output_fn((uintptr_t)addr, buffer, length);
    return 0;
}

static void on_notification(uintptr_t id, const union sctp_notification *n, size_t length) {
    if (length < sizeof(struct sctp_tlv)) return;
    switch (n->sn_header.sn_type) {
    case SCTP_ASSOC_CHANGE:
        if (n->sn_assoc_change.sac_state == SCTP_COMM_UP) {
            event_fn(id, 1, 0, 0, 1, NULL, 0);
        } else if (n->sn_assoc_change.sac_state == SCTP_COMM_LOST || n->sn_assoc_change.sac_state == SCTP_SHUTDOWN_COMP
                   || n->sn_assoc_change.sac_state == SCTP_CANT_STR_ASSOC) {
            event_fn(id, 2, 0, 0, 1, NULL, 0);
        }
        break;
    case SCTP_STREAM_RESET_EVENT: {
        const struct sctp_stream_reset_event *r = &n->sn_strreset_event;
        if (!(r->strreset_flags & SCTP_STREAM_RESET_INCOMING_SSN) || (r->strreset_flags & SCTP_STREAM_RESET_FAILED)) break;
        size_t count = (r->strreset_length - sizeof(*r)) / sizeof(uint16_t);
        for (size_t i = 0; i < count; i++) event_fn(id, 3, r->strreset_stream_list[i], 0, 1, NULL, 0);
        break;
    }
    default:
        break;
    }
}

static int on_receive(struct socket *sock, union sctp_sockstore addr, void *data, size_t length,
                      struct sctp_rcvinfo info, int flags, void *ulp_info) {
    (void)sock;
    (void)addr;
    uintptr_t id = (uintptr_t)ulp_info;
    if (data == NULL) {
        event_fn(id, 2, 0, 0, 1, NULL, 0);
        return 1;
    }
    if (flags & MSG_NOTIFICATION) {
        on_notification(id, (const union sctp_notification *)data, length);
    } else {
        event_fn(id, 0, info.rcv_sid, ntohl(info.rcv_ppid), (flags & MSG_EOR) != 0, data, length);
    }
    free(data);
    return 1;
}

static int on_send(struct socket *sock, uint32_t sb_free, void *ulp_info) {
    (void)sock;
    (void)sb_free;
    event_fn((uintptr_t)ulp_info, 4, 0, 0, 1, NULL, 0);
    return 0;
}

static void start(void) {
    usrsctp_init(0, on_output, NULL);
    // As the browsers configure it: no ECN over DTLS, answer strays with nothing, acknowledge at once
    // when the peer asks.
    usrsctp_sysctl_set_sctp_ecn_enable(0);
    usrsctp_sysctl_set_sctp_blackhole(2);
    usrsctp_sysctl_set_sctp_enable_sack_immediately(1);
}

void atrium_sctp_init(atrium_sctp_output_fn output, atrium_sctp_event_fn event) {
    output_fn = output;
    event_fn = event;
    pthread_once(&once, start);
}

static int set(struct socket *s, int level, int name, const void *value, socklen_t length) {
    return usrsctp_setsockopt(s, level, name, value, length);
}

void *atrium_sctp_open(uintptr_t id, uint16_t port, uint32_t send_buffer) {
    usrsctp_register_address((void *)id);
    struct socket *s = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, on_receive, on_send, send_buffer / 2,
                                      (void *)id);
    if (s == NULL) {
        usrsctp_deregister_address((void *)id);
        return NULL;
    }
    int one = 1;
    struct linger linger = {.l_onoff = 1, .l_linger = 0};
    struct sctp_assoc_value reset = {.assoc_id = SCTP_ALL_ASSOC, .assoc_value = SCTP_ENABLE_RESET_STREAM_REQ};
    struct sctp_initmsg init = {.sinit_num_ostreams = 1024, .sinit_max_instreams = 1024};
    int buffer = (int)send_buffer;
    int ok = usrsctp_set_non_blocking(s, 1) == 0 && set(s, SOL_SOCKET, SO_LINGER, &linger, sizeof linger) == 0
             && set(s, IPPROTO_SCTP, SCTP_ENABLE_STREAM_RESET, &reset, sizeof reset) == 0
             && set(s, IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof one) == 0
             && set(s, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof init) == 0
             && set(s, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer) == 0;
    const uint16_t events[] = {SCTP_ASSOC_CHANGE, SCTP_STREAM_RESET_EVENT, SCTP_SEND_FAILED_EVENT};
    for (size_t i = 0; ok && i < sizeof events / sizeof events[0]; i++) {
        struct sctp_event e = {.se_assoc_id = SCTP_ALL_ASSOC, .se_type = events[i], .se_on = 1};
        ok = set(s, IPPROTO_SCTP, SCTP_EVENT, &e, sizeof e) == 0;
    }
    struct sockaddr_conn local;
    memset(&local, 0, sizeof local);
    local.sconn_family = AF_CONN;
    local.sconn_port = htons(port);
    local.sconn_addr = (void *)id;
    if (ok) ok = usrsctp_bind(s, (struct sockaddr *)&local, sizeof local) == 0;
    if (ok) ok = usrsctp_connect(s, (struct sockaddr *)&local, sizeof local) == 0 || errno == EINPROGRESS;
    if (!ok) {
        usrsctp_close(s);
        usrsctp_deregister_address((void *)id);
        return NULL;
    }
    return s;
}

void atrium_sctp_input(uintptr_t id, const void *packet, size_t length) {
    usrsctp_conninput((void *)id, packet, length, 0);
}

long atrium_sctp_send(void *socket, uint16_t sid, uint32_t ppid, int unordered, int max_retransmits,
                      const void *data, size_t length) {
    struct sctp_sendv_spa spa;
    memset(&spa, 0, sizeof spa);
    spa.sendv_flags = SCTP_SEND_SNDINFO_VALID;
    spa.sendv_sndinfo.snd_sid = sid;
    spa.sendv_sndinfo.snd_ppid = htonl(ppid);
    spa.sendv_sndinfo.snd_flags = SCTP_EOR | (unordered ? SCTP_UNORDERED : 0);
    if (max_retransmits >= 0) {
        spa.sendv_flags |= SCTP_SEND_PRINFO_VALID;
        spa.sendv_prinfo.pr_policy = SCTP_PR_SCTP_RTX;
        spa.sendv_prinfo.pr_value = (uint32_t)max_retransmits;
    }
    ssize_t n = usrsctp_sendv((struct socket *)socket, data, length, NULL, 0, &spa, sizeof spa, SCTP_SENDV_SPA, 0);
    return n < 0 ? -(long)errno : (long)n;
}

int atrium_sctp_reset_stream(void *socket, uint16_t sid) {
    size_t length = sizeof(struct sctp_reset_streams) + sizeof(uint16_t);
    struct sctp_reset_streams *r = calloc(1, length);
    if (r == NULL) return -ENOMEM;
    r->srs_assoc_id = SCTP_ALL_ASSOC;
    r->srs_flags = SCTP_STREAM_RESET_OUTGOING;
    r->srs_number_streams = 1;
    r->srs_stream_list[0] = sid;
    int rc = usrsctp_setsockopt((struct socket *)socket, IPPROTO_SCTP, SCTP_RESET_STREAMS, r, (socklen_t)length);
    free(r);
    return rc == 0 ? 0 : -errno;
}

void atrium_sctp_close(void *socket, uintptr_t id) {
    usrsctp_close((struct socket *)socket);
    usrsctp_deregister_address((void *)id);
}

uint64_t atrium_sctp_rejected_packets(void) {
    struct sctpstat st;
    memset(&st, 0, sizeof st);
    usrsctp_get_stat(&st);
    return (uint64_t)st.sctps_badsum + st.sctps_outoftheblue + st.sctps_hdrops + st.sctps_badvtag;
}
