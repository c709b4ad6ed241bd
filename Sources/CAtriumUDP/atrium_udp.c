// sendmmsg, recvmmsg and struct mmsghdr are GNU extensions.
#define _GNU_SOURCE
#include "CAtriumUDP.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <unistd.h>

socklen_t atrium_udp_make_ipv4(struct sockaddr_storage *out, uint32_t address, uint16_t port) {
    memset(out, 0, sizeof *out);
    struct sockaddr_in *sin = (struct sockaddr_in *)out;
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    sin->sin_addr.s_addr = htonl(address);
    return (socklen_t)sizeof *sin;
}

socklen_t atrium_udp_make_ipv6(struct sockaddr_storage *out, const uint8_t *address16, uint16_t port,
                               uint32_t scope_id) {
    memset(out, 0, sizeof *out);
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    memcpy(&sin6->sin6_addr, address16, 16);
    sin6->sin6_scope_id = scope_id;
    return (socklen_t)sizeof *sin6;
}

int atrium_udp_read_address(const struct sockaddr_storage *in, uint8_t *address16, uint16_t *port,
                            uint32_t *scope_id) {
    if (in->ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)in;
        memset(address16, 0, 16);
        memcpy(address16, &sin->sin_addr, 4);
        *port = ntohs(sin->sin_port);
        *scope_id = 0;
        return 4;
    }
    if (in->ss_family == AF_INET6) {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)in;
        memcpy(address16, &sin6->sin6_addr, 16);
        *port = ntohs(sin6->sin6_port);
        *scope_id = sin6->sin6_scope_id;
        return 6;
    }
    return 0;
}

static socklen_t address_length(const struct sockaddr_storage *a) {
    return a->ss_family == AF_INET6 ? (socklen_t)sizeof(struct sockaddr_in6) : (socklen_t)sizeof(struct sockaddr_in);
}

int atrium_udp_open(const struct sockaddr_storage *address, struct sockaddr_storage *bound) {
    int family = address->ss_family;
    if (family != AF_INET && family != AF_INET6) return -EAFNOSUPPORT;
    int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
    if (fd < 0) return -errno;
    if (family == AF_INET6) {
        int on = 1;
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) {
            int e = errno;
            close(fd);
            return -e;
        }
    }
    if (bind(fd, (const struct sockaddr *)address, address_length(address)) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    socklen_t len = sizeof *bound;
    memset(bound, 0, sizeof *bound);
    if (getsockname(fd, (struct sockaddr *)bound, &len) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int atrium_udp_set_buffers(int fd, int receive_bytes, int send_bytes) {
    if (receive_bytes > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_bytes, sizeof receive_bytes) != 0)
        return -errno;
    if (send_bytes > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_bytes, sizeof send_bytes) != 0)
        return -errno;
    return 0;
}

int atrium_udp_get_buffers(int fd, int *receive_bytes, int *send_bytes) {
    socklen_t len = sizeof *receive_bytes;
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, receive_bytes, &len) != 0) return -errno;
    len = sizeof *send_bytes;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, send_bytes, &len) != 0) return -errno;
    return 0;
}

int atrium_udp_enable_timestamps(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0 ? 0 : -errno;
}

int atrium_udp_recvmmsg_stamped(int fd, uint8_t *buffer, size_t stride, unsigned int count, size_t *lengths,
                                struct sockaddr_storage *sources, uint8_t *truncated, uint64_t *stamps_ns) {
    if (count > ATRIUM_UDP_MAX_BATCH) count = ATRIUM_UDP_MAX_BATCH;
    if (count == 0) return 0;
    struct mmsghdr msgs[ATRIUM_UDP_MAX_BATCH];
    struct iovec iov[ATRIUM_UDP_MAX_BATCH];
    // One control buffer per datagram, aligned for cmsghdr, with room for one SCM_TIMESTAMPNS.
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } control[ATRIUM_UDP_MAX_BATCH];
    memset(msgs, 0, sizeof(struct mmsghdr) * count);
    for (unsigned int i = 0; i < count; i++) {
        iov[i].iov_base = buffer + (size_t)i * stride;
        iov[i].iov_len = stride;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &sources[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
        if (stamps_ns != NULL) {
            msgs[i].msg_hdr.msg_control = control[i].bytes;
            msgs[i].msg_hdr.msg_controllen = sizeof control[i].bytes;
        }
    }
    int n;
    do {
        n = recvmmsg(fd, msgs, count, MSG_DONTWAIT, NULL);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        lengths[i] = msgs[i].msg_len;
        truncated[i] = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ? 1 : 0;
        if (stamps_ns == NULL) continue;
        stamps_ns[i] = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c != NULL; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(c), sizeof ts);
                stamps_ns[i] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
            }
        }
    }
    return n;
}

int atrium_udp_sendmmsg(int fd, const uint8_t *buffer, size_t stride, unsigned int count, const size_t *lengths,
                        const struct sockaddr_storage *destinations, int *errors) {
    if (count > ATRIUM_UDP_MAX_SEND_BATCH) count = ATRIUM_UDP_MAX_SEND_BATCH;
    if (count == 0) return 0;
    struct mmsghdr msgs[ATRIUM_UDP_MAX_SEND_BATCH];
    struct iovec iov[ATRIUM_UDP_MAX_SEND_BATCH];
    memset(msgs, 0, sizeof(struct mmsghdr) * count);
    for (unsigned int i = 0; i < count; i++) {
        iov[i].iov_base = (void *)(buffer + (size_t)i * stride);
        iov[i].iov_len = lengths[i] < stride ? lengths[i] : stride;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = (void *)&destinations[i];
        msgs[i].msg_hdr.msg_namelen = address_length(&destinations[i]);
        errors[i] = 0;
    }
    // sendmmsg stops at the first datagram the kernel refuses and reports it only when it was the
    // first of the call: resume after it, so one destination's error (a firewall's EPERM, an
    // unreachable route) costs that datagram alone. A refused datagram after the first is thus tried
    // once more, as the first of the next call.
    unsigned int done = 0;
    while (done < count) {
        int n = sendmmsg(fd, msgs + done, count - done, MSG_DONTWAIT);
        if (n > 0) {
            done += (unsigned int)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;
        if (errno == EBADF || errno == ENOTSOCK || errno == EFAULT) return done > 0 ? (int)done : -errno;
        errors[done] = -errno;
        done += 1;
    }
    return (int)done;
}

int atrium_tcp_listen(const struct sockaddr_storage *address, struct sockaddr_storage *bound, int backlog) {
    int family = address->ss_family;
    if (family != AF_INET && family != AF_INET6) return -EAFNOSUPPORT;
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) return -errno;
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
        bind(fd, (const struct sockaddr *)address, address_length(address)) != 0 || listen(fd, backlog) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    socklen_t length = sizeof *bound;
    if (getsockname(fd, (struct sockaddr *)bound, &length) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int atrium_tcp_accept(int fd, struct sockaddr_storage *peer, int send_buffer, unsigned int user_timeout_ms) {
    socklen_t length = sizeof *peer;
    int c = accept4(fd, (struct sockaddr *)peer, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) return (errno == EWOULDBLOCK) ? -EAGAIN : -errno;
    int one = 1;
    (void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (send_buffer > 0) (void)setsockopt(c, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer);
    if (user_timeout_ms > 0) (void)setsockopt(c, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
    return c;
}

long atrium_tcp_recv(int fd, uint8_t *buffer, size_t length) {
    ssize_t n = recv(fd, buffer, length, MSG_DONTWAIT);
    if (n < 0) return (errno == EWOULDBLOCK) ? -EAGAIN : -errno;
    return (long)n;
}

long atrium_tcp_send(int fd, const uint8_t *buffer, size_t length) {
    ssize_t n = send(fd, buffer, length, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) return (errno == EWOULDBLOCK) ? -EAGAIN : -errno;
    return (long)n;
}

int atrium_epoll_modify(int epfd, int fd, uint64_t token, int writable) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN | (writable ? EPOLLOUT : 0);
    ev.data.u64 = token;
    return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) == 0 ? 0 : -errno;
}

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

static int same_destination(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
    return a->ss_family == b->ss_family && memcmp(a, b, address_length(a)) == 0;
}

/// One message of a batch: `segments` datagrams starting at datagram `first`.
struct batch_message {
    unsigned int first;
    unsigned int segments;
    uint16_t segment_size;
};

int atrium_udp_send_batch(int fd, const uint8_t *buffer, size_t stride, unsigned int count, const size_t *lengths,
                          const struct sockaddr_storage *destinations, int *status, int *gso, int *messages,
                          int *segmented) {
    if (count > ATRIUM_UDP_MAX_SEND_BATCH) count = ATRIUM_UDP_MAX_SEND_BATCH;
    *messages = 0;
    *segmented = 0;
    if (count == 0) return 0;
    for (unsigned int i = 0; i < count; i++) status[i] = 1;
    struct mmsghdr msgs[ATRIUM_UDP_MAX_SEND_BATCH];
    struct iovec iov[ATRIUM_UDP_MAX_SEND_BATCH];
    struct batch_message plan[ATRIUM_UDP_MAX_SEND_BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } control[ATRIUM_UDP_MAX_SEND_BATCH];
    for (unsigned int k = 0; k < count; k++) {
        iov[k].iov_base = (void *)(buffer + (size_t)k * stride);
        iov[k].iov_len = lengths[k] < stride ? lengths[k] : stride;
    }
    unsigned int handled = 0;
    unsigned int start = 0;  // the datagram from which the plan is (re)built
rebuild:;
    unsigned int m = 0;
    for (unsigned int k = start; k < count;) {
        unsigned int first = k;
        size_t size = iov[k].iov_len;
        unsigned int run = 1;
        if (*gso && size > 0 && size <= UINT16_MAX) {
            size_t total = size;
            while (k + run < count && run < ATRIUM_UDP_GSO_MAX_SEGMENTS &&
                   same_destination(&destinations[k + run], &destinations[first])) {
                size_t next = iov[k + run].iov_len;
                if (next > size || next == 0 || total + next > ATRIUM_UDP_GSO_MAX_BYTES) break;
                total += next;
                run += 1;
                if (next < size) break;  // a shorter datagram ends the run
            }
        }
        plan[m].first = k;
        plan[m].segments = run;
        plan[m].segment_size = run > 1 ? (uint16_t)size : 0;
        struct msghdr *h = &msgs[m].msg_hdr;
        memset(&msgs[m], 0, sizeof msgs[m]);
        h->msg_iov = &iov[k];
        h->msg_iovlen = run;
        h->msg_name = (void *)&destinations[first];
        h->msg_namelen = address_length(&destinations[first]);
        if (run > 1) {
            memset(&control[m], 0, sizeof control[m]);
            h->msg_control = control[m].buf;
            h->msg_controllen = sizeof control[m].buf;
            struct cmsghdr *c = CMSG_FIRSTHDR(h);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t segment = (uint16_t)size;
            memcpy(CMSG_DATA(c), &segment, sizeof segment);
        }
        m += 1;
        k += run;
    }
    unsigned int done = 0;
    while (done < m) {
        int sent = sendmmsg(fd, msgs + done, m - done, MSG_DONTWAIT);
        if (sent > 0) {
            for (unsigned int x = done; x < done + (unsigned int)sent; x++) {
                for (unsigned int s = 0; s < plan[x].segments; s++) status[plan[x].first + s] = 0;
                handled += plan[x].segments;
                *messages += 1;
                if (plan[x].segments > 1) *segmented += (int)plan[x].segments;
            }
            done += (unsigned int)sent;
            continue;
        }
        if (sent < 0 && errno == EINTR) continue;
        if (sent == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;
        int e = errno;
        if (e == EBADF || e == ENOTSOCK || e == EFAULT) return handled > 0 ? (int)handled : -e;
        if (plan[done].segments > 1 && (e == EIO || e == EINVAL)) {
            // No segmentation here: send the rest one datagram at a time.
            *gso = 0;
            start = plan[done].first;
            goto rebuild;
        }
        // Refused for this destination alone: the message's datagrams are counted refused, the batch
        // resumes after it. (Refused after the first of a call, a message ends that call unreported and
        // is sent again here as the first of the next: it is tried twice.)
        for (unsigned int s = 0; s < plan[done].segments; s++) status[plan[done].first + s] = -e;
        handled += plan[done].segments;
        *messages += 1;
        done += 1;
    }
    return (int)handled;
}

int atrium_udp_refuse_segmentation(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &on, sizeof on) == 0 ? 0 : -errno;
}

int atrium_close(int fd) { return close(fd) == 0 ? 0 : -errno; }

int atrium_epoll_create(void) {
    int fd = epoll_create1(EPOLL_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int atrium_epoll_add(int epfd, int fd, uint64_t token) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.u64 = token;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

int atrium_epoll_remove(int epfd, int fd) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &ev) == 0 ? 0 : -errno;
}

int atrium_epoll_wait(int epfd, uint64_t *tokens, int max_events, int timeout_ms) {
    if (max_events > ATRIUM_EPOLL_MAX_EVENTS) max_events = ATRIUM_EPOLL_MAX_EVENTS;
    if (max_events <= 0) return -EINVAL;
    struct epoll_event events[ATRIUM_EPOLL_MAX_EVENTS];
    int n = epoll_wait(epfd, events, max_events, timeout_ms);
    if (n < 0) return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++) tokens[i] = events[i].data.u64;
    return n;
}

int atrium_eventfd_create(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int atrium_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t n;
    do {
        n = write(fd, &one, sizeof one);
    } while (n < 0 && errno == EINTR);
    // EAGAIN means the counter is saturated: a wakeup is already pending, which is all we need.
    if (n < 0) return errno == EAGAIN ? 0 : -errno;
    return 0;
}

int atrium_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t n;
    do {
        n = read(fd, &value, sizeof value);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : 0;
}

int atrium_set_thread_name(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    return pthread_setname_np(pthread_self(), shortened);
}
