// The machine's floor for a forwarding server: a plain UDP relay that does nothing a media server
// must do (no ICE, DTLS, SRTP or RTP), only what every one of them does at least (sleep in epoll,
// read the burst with recvmmsg, write it to each receiver with sendmmsg), with a paced sender of the
// benchmark's packet pattern and a receiver that counts. bench/viewers_sweep.py runs it beside the
// servers and prints its CPU per delivered packet: what this machine charges for the wakeups,
// system calls and loopback deliveries alone.
//
//   relay_floor send PORT CAM_FPS CAM_PACKETS SCREEN_FPS SCREEN_PACKETS MIC_PPS  paced bursts to PORT
//   relay_floor relay PORT FIRST_OUT N                 each datagram to FIRST_OUT .. FIRST_OUT + N - 1
//   relay_floor recv FIRST_PORT N                      counts; a line on stdin prints the count
//
// Everything on 127.0.0.1; video packets of 1100 bytes, microphone packets of 120 bytes.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { BATCH = 64, MAX_RECEIVERS = 1024, MTU = 1500 };

static struct sockaddr_in loopback(int port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static int bound(int port) {
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = loopback(port);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("relay_floor: bind");
        exit(1);
    }
    return s;
}

static int number(const char *s, int low, int high) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v < low || v > high) {
        fprintf(stderr, "relay_floor: %s is not a number in %d..%d\n", s, low, high);
        exit(2);
    }
    return (int)v;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t buffers[BATCH][MTU];
static struct mmsghdr in[BATCH], out[BATCH];
static struct iovec in_io[BATCH], out_io[BATCH];

// Sends `count` datagrams of `size` bytes to `to` in one sendmmsg, as a publisher sends a frame.
static void burst(int s, struct sockaddr_in *to, int count, size_t size) {
    for (int i = 0; i < count; i++) {
        out_io[i].iov_base = buffers[i];
        out_io[i].iov_len = size;
        memset(&out[i], 0, sizeof out[i]);
        out[i].msg_hdr.msg_iov = &out_io[i];
        out[i].msg_hdr.msg_iovlen = 1;
        out[i].msg_hdr.msg_name = to;
        out[i].msg_hdr.msg_namelen = sizeof *to;
    }
    if (sendmmsg(s, out, (unsigned)count, 0) < 0) perror("relay_floor: sendmmsg");
}

static int send_pattern(int argc, char **argv) {
    if (argc != 8) return 2;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = loopback(number(argv[2], 1, 65535));
    int fps[3] = {number(argv[3], 1, 1000), number(argv[5], 1, 1000), number(argv[7], 1, 1000)};
    int packets[3] = {number(argv[4], 1, BATCH), number(argv[6], 1, BATCH), 1};
    size_t sizes[3] = {1100, 1100, 120};
    double start = seconds(), due[3] = {start, start + 0.011, start + 0.005};
    for (;;) {
        double next = due[0];
        for (int k = 1; k < 3; k++)
            if (due[k] < next) next = due[k];
        double wait = next - seconds();
        if (wait > 0) {
            struct timespec t = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
            nanosleep(&t, NULL);
        }
        double now = seconds();
        for (int k = 0; k < 3; k++) {
            if (now < due[k]) continue;
            burst(s, &to, packets[k], sizes[k]);
            due[k] += 1.0 / fps[k];
        }
    }
}

// Reads what waits on `s` in batches until a short batch; returns the datagrams read, their lengths
// in in[i].msg_len.
static int read_batch(int s) {
    for (int i = 0; i < BATCH; i++) {
        in_io[i].iov_base = buffers[i];
        in_io[i].iov_len = MTU;
        memset(&in[i], 0, sizeof in[i]);
        in[i].msg_hdr.msg_iov = &in_io[i];
        in[i].msg_hdr.msg_iovlen = 1;
    }
    int n = recvmmsg(s, in, BATCH, MSG_DONTWAIT, NULL);
    return n < 0 ? 0 : n;
}

static int relay(int argc, char **argv) {
    if (argc != 5) return 2;
    int s = bound(number(argv[2], 1, 65535));
    int first = number(argv[3], 1, 65535), receivers = number(argv[4], 1, MAX_RECEIVERS);
    static struct sockaddr_in to[MAX_RECEIVERS];
    for (int r = 0; r < receivers; r++) to[r] = loopback(first + r);
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, s, &e);
    for (;;) {
        struct epoll_event ready;
        if (epoll_wait(ep, &ready, 1, -1) < 0 && errno != EINTR) return 1;
        int n;
        do {
            n = read_batch(s);
            // Every datagram to every receiver, BATCH messages per sendmmsg.
            int queued = 0;
            for (int r = 0; r < receivers; r++) {
                for (int i = 0; i < n; i++) {
                    out_io[queued].iov_base = buffers[i];
                    out_io[queued].iov_len = in[i].msg_len;
                    memset(&out[queued], 0, sizeof out[queued]);
                    out[queued].msg_hdr.msg_iov = &out_io[queued];
                    out[queued].msg_hdr.msg_iovlen = 1;
                    out[queued].msg_hdr.msg_name = &to[r];
                    out[queued].msg_hdr.msg_namelen = sizeof to[r];
                    if (++queued == BATCH) {
                        sendmmsg(s, out, BATCH, MSG_DONTWAIT);
                        queued = 0;
                    }
                }
            }
            if (queued > 0) sendmmsg(s, out, (unsigned)queued, MSG_DONTWAIT);
        } while (n == BATCH);
    }
}

static int receive(int argc, char **argv) {
    if (argc != 4) return 2;
    int first = number(argv[2], 1, 65535), receivers = number(argv[3], 1, MAX_RECEIVERS);
    static int sockets[MAX_RECEIVERS];
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = MAX_RECEIVERS};
    epoll_ctl(ep, EPOLL_CTL_ADD, 0, &e);
    for (int r = 0; r < receivers; r++) {
        sockets[r] = bound(first + r);
        e.data.u32 = (uint32_t)r;
        epoll_ctl(ep, EPOLL_CTL_ADD, sockets[r], &e);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long long count = 0;
    for (;;) {
        struct epoll_event ready[64];
        int n = epoll_wait(ep, ready, 64, -1);
        for (int i = 0; i < n; i++) {
            uint32_t r = ready[i].data.u32;
            if (r == MAX_RECEIVERS) {
                char line[64];
                if (read(0, line, sizeof line) <= 0) return 0;
                printf("%llu\n", count);
                continue;
            }
            int got;
            while ((got = read_batch(sockets[r])) > 0) {
                count += (unsigned long long)got;
                if (got < BATCH) break;
            }
        }
    }
}

int main(int argc, char **argv) {
    int rc = 2;
    if (argc > 1 && strcmp(argv[1], "send") == 0) rc = send_pattern(argc, argv);
    if (argc > 1 && strcmp(argv[1], "relay") == 0) rc = relay(argc, argv);
    if (argc > 1 && strcmp(argv[1], "recv") == 0) rc = receive(argc, argv);
    if (rc == 2) fprintf(stderr, "usage: see the comment at the top of bench/relay_floor.c\n");
    return rc;
}
