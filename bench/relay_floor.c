// The machine's floor for a forwarding server: a plain UDP relay that does nothing a media server
// must do (no ICE, DTLS, SRTP or RTP), only the least any of them can do on this kernel (sleep in
// epoll, read the burst with recvmmsg, write it to each receiver with sendmmsg, a run of same-size
// datagrams to one receiver in one UDP GSO message), with a paced sender of the benchmark's packet pattern and
// a receiver that counts and, like the benchmark's viewers, lets datagrams gather 4 ms between polls.
// bench/viewers_sweep.py runs it beside the servers and prints its CPU per delivered packet: what
// this machine charges for the wakeups, system calls and loopback deliveries alone.
//
//   relay_floor send PORT CAM_FPS CAM_PACKETS SCREEN_FPS SCREEN_PACKETS MIC_PPS  paced bursts to PORT
//   relay_floor relay PORT FIRST_OUT N                 each datagram to FIRST_OUT .. FIRST_OUT + N - 1
//   relay_floor recv FIRST_PORT N                      counts; a line on stdin prints the count
//
// Everything on 127.0.0.1; video packets of 1100 bytes, microphone packets of 120 bytes. Exit codes:
// 1 a system call failed (said on stderr), 2 bad arguments, 3 a port was taken.
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

// A GSO message carries at most 64 segments and 64 KiB.
enum { BATCH = 64, MAX_RECEIVERS = 4096, MTU = 1500, MAX_SEGMENTS = 64, MAX_GSO_BYTES = 65000 };
static const long GATHER_NANOSECONDS = 4000000;

static void fail(const char *what) {
    fprintf(stderr, "relay_floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

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
    if (s < 0) fail("socket");
    struct sockaddr_in a = loopback(port);
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0) {
        if (errno == EADDRINUSE) exit(3);
        fail("bind");
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

static long long nanoseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pause_for(long long ns) {
    if (ns <= 0) return;
    struct timespec t = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    nanosleep(&t, NULL);
}

static uint8_t buffers[BATCH][MTU];
static struct mmsghdr in[BATCH], out[BATCH];
static struct iovec in_io[BATCH], out_io[BATCH];
static union {
    char bytes[CMSG_SPACE(sizeof(uint16_t))];
    struct cmsghdr align;
} controls[BATCH];

// Sends every message of out[0..<count], again from where a partial sendmmsg stopped; a socket
// buffer that stays full drops the rest (the receiver's count says so).
static void send_all(int s, unsigned count) {
    unsigned sent = 0;
    while (sent < count) {
        int n = sendmmsg(s, out + sent, count - sent, 0);
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) fail("sendmmsg");
            return;
        }
        sent += (unsigned)n;
    }
}

// Queues message `m`: the iovecs out_io[first ..< first + segments] to `to`, one UDP GSO message
// of `size`-byte segments when there are several.
static void message(unsigned m, unsigned first, unsigned segments, size_t size, struct sockaddr_in *to) {
    memset(&out[m], 0, sizeof out[m]);
    out[m].msg_hdr.msg_iov = &out_io[first];
    out[m].msg_hdr.msg_iovlen = segments;
    out[m].msg_hdr.msg_name = to;
    out[m].msg_hdr.msg_namelen = sizeof *to;
    if (segments > 1) {
        out[m].msg_hdr.msg_control = controls[m].bytes;
        out[m].msg_hdr.msg_controllen = sizeof controls[m].bytes;
        struct cmsghdr *c = CMSG_FIRSTHDR(&out[m].msg_hdr);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        uint16_t segment = (uint16_t)size;
        memcpy(CMSG_DATA(c), &segment, sizeof segment);
    }
}

static int send_pattern(int argc, char **argv) {
    if (argc != 8) return 2;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) fail("socket");
    struct sockaddr_in to = loopback(number(argv[2], 1, 65535));
    int fps[3] = {number(argv[3], 1, 1000), number(argv[5], 1, 1000), number(argv[7], 1, 1000)};
    int packets[3] = {number(argv[4], 1, BATCH / 3), number(argv[6], 1, BATCH / 3), 1};
    size_t sizes[3] = {1100, 1100, 120};
    // The streams start together, as the benchmark's publisher's do: a camera frame and a screen
    // frame fall due at once every other camera frame.
    long long start = nanoseconds(), due[3] = {start, start, start};
    for (;;) {
        long long next = due[0];
        for (int k = 1; k < 3; k++)
            if (due[k] < next) next = due[k];
        pause_for(next - nanoseconds());
        long long now = nanoseconds();
        // What is due, in one sendmmsg, as the publisher sends it.
        unsigned queued = 0;
        for (int k = 0; k < 3; k++) {
            if (now < due[k]) continue;
            for (int i = 0; i < packets[k]; i++, queued++) {
                out_io[queued].iov_base = buffers[queued];
                out_io[queued].iov_len = sizes[k];
                message(queued, queued, 1, sizes[k], &to);
            }
            due[k] += 1000000000LL / fps[k];
        }
        send_all(s, queued);
    }
}

// One recvmmsg of up to BATCH datagrams into `buffers`; their lengths in in[i].msg_len.
static int read_batch(int s) {
    for (int i = 0; i < BATCH; i++) {
        in_io[i].iov_base = buffers[i];
        in_io[i].iov_len = MTU;
        memset(&in[i], 0, sizeof in[i]);
        in[i].msg_hdr.msg_iov = &in_io[i];
        in[i].msg_hdr.msg_iovlen = 1;
    }
    int n = recvmmsg(s, in, BATCH, MSG_DONTWAIT, NULL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) fail("recvmmsg");
    return n < 0 ? 0 : n;
}

static int relay(int argc, char **argv) {
    if (argc != 5) return 2;
    int s = bound(number(argv[2], 1, 65535));
    int receivers = number(argv[4], 1, MAX_RECEIVERS);
    int first = number(argv[3], 1, 65535 - receivers + 1);
    static struct sockaddr_in to[MAX_RECEIVERS];
    for (int r = 0; r < receivers; r++) to[r] = loopback(first + r);
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, s, &e) != 0) fail("epoll");
    for (;;) {
        struct epoll_event ready;
        if (epoll_wait(ep, &ready, 1, -1) < 0 && errno != EINTR) fail("epoll_wait");
        int n;
        do {
            n = read_batch(s);
            // Each receiver gets the batch as messages of consecutive same-size datagrams (a run
            // in one GSO message), BATCH messages and BATCH iovecs per sendmmsg.
            unsigned messages = 0, iovecs = 0;
            for (int r = 0; r < receivers; r++) {
                for (int i = 0; i < n;) {
                    size_t size = in[i].msg_len;
                    int run = 1;
                    while (size > 0 && i + run < n && in[i + run].msg_len == size && run < MAX_SEGMENTS &&
                           (size_t)(run + 1) * size <= MAX_GSO_BYTES)
                        run++;
                    if (messages == BATCH || iovecs + (unsigned)run > BATCH) {
                        send_all(s, messages);
                        messages = iovecs = 0;
                    }
                    for (int k = 0; k < run; k++) {
                        out_io[iovecs + (unsigned)k].iov_base = buffers[i + k];
                        out_io[iovecs + (unsigned)k].iov_len = size;
                    }
                    message(messages++, iovecs, (unsigned)run, size, &to[r]);
                    iovecs += (unsigned)run;
                    i += run;
                }
            }
            if (messages > 0) send_all(s, messages);
        } while (n == BATCH);
    }
}

static int receive(int argc, char **argv) {
    if (argc != 4) return 2;
    int receivers = number(argv[3], 1, MAX_RECEIVERS);
    int first = number(argv[2], 1, 65535 - receivers + 1);
    // A socket per receiver: the soft limit of open files raised to the hard one.
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    static int sockets[MAX_RECEIVERS];
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = MAX_RECEIVERS};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, 0, &e) != 0) fail("epoll");
    for (int r = 0; r < receivers; r++) {
        sockets[r] = bound(first + r);
        e.data.u32 = (uint32_t)r;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, sockets[r], &e) != 0) fail("epoll_ctl");
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long long count = 0;
    for (;;) {
        struct epoll_event ready[64];
        int n = epoll_wait(ep, ready, 64, -1);
        if (n < 0 && errno != EINTR) fail("epoll_wait");
        long long woke = nanoseconds();
        int received = 0;
        for (int i = 0; i < n; i++) {
            uint32_t r = ready[i].data.u32;
            if (r == MAX_RECEIVERS) {
                char line[64];
                if (read(0, line, sizeof line) <= 0) return 0;
                printf("%llu\n", count);
                continue;
            }
            int got;
            do {
                got = read_batch(sockets[r]);
                count += (unsigned long long)got;
                received += got;
            } while (got == BATCH);
        }
        // As the benchmark's viewers do: what arrives in the next 4 ms waits for one read.
        if (received > 0) pause_for(GATHER_NANOSECONDS - (nanoseconds() - woke));
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
