#ifndef ATRIUM_UDP_H
#define ATRIUM_UDP_H
// Thin wrappers over the Linux UDP, epoll and eventfd calls AtriumUDP needs. sendmmsg, recvmmsg and
// struct mmsghdr need _GNU_SOURCE, which a module header cannot define, so the calls live in atrium_udp.c
// (as SwiftNIO's CNIOLinux does). Every function returns a negative errno on failure, never sets a global.
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/// The most datagrams one recvmmsg call moves, and one send call; the mmsghdr and iovec arrays live on
/// the stack (about 100 octets per datagram sent).
#define ATRIUM_UDP_MAX_BATCH 64
#define ATRIUM_UDP_MAX_SEND_BATCH 256
/// The most events one atrium_epoll_wait call reports.
#define ATRIUM_EPOLL_MAX_EVENTS 64

/// Fills `out` with an IPv4 address (host byte order) and port; returns the sockaddr length.
socklen_t atrium_udp_make_ipv4(struct sockaddr_storage *out, uint32_t address, uint16_t port);
/// Fills `out` with an IPv6 address (16 bytes, network order), port and scope id; returns the length.
socklen_t atrium_udp_make_ipv6(struct sockaddr_storage *out, const uint8_t *address16, uint16_t port,
                               uint32_t scope_id);
/// Reads a sockaddr_storage: returns 4 or 6 (the family) and fills the outputs, or 0 for another family.
/// For IPv4 the first 4 bytes of `address16` hold the address in network order.
int atrium_udp_read_address(const struct sockaddr_storage *in, uint8_t *address16, uint16_t *port,
                            uint32_t *scope_id);

/// Creates a non-blocking, close-on-exec UDP socket bound to `address` (port 0 picks an ephemeral port).
/// IPv6 sockets are IPv6-only. Returns the fd and stores the bound address in `bound`, or -errno.
int atrium_udp_open(const struct sockaddr_storage *address, struct sockaddr_storage *bound);
/// Sets SO_RCVBUF and SO_SNDBUF (a value <= 0 leaves that one alone); returns 0 or -errno.
int atrium_udp_set_buffers(int fd, int receive_bytes, int send_bytes);
/// Reads the effective SO_RCVBUF and SO_SNDBUF (the kernel doubles what was asked); returns 0 or -errno.
int atrium_udp_get_buffers(int fd, int *receive_bytes, int *send_bytes);

/// Turns on kernel receive timestamps (SO_TIMESTAMPNS: CLOCK_REALTIME when the datagram reached the
/// socket) for atrium_udp_recvmmsg_stamped; returns 0 or -errno.
int atrium_udp_enable_timestamps(int fd);
/// Receives up to `count` (at most ATRIUM_UDP_MAX_BATCH) datagrams without blocking. Datagram i goes to
/// `buffer + i * stride`; its length to `lengths[i]`, its source to `sources[i]`, `truncated[i]` is 1
/// when it was longer than `stride`, and (unless `stamps_ns` is NULL) its kernel receive time to
/// `stamps_ns[i]` (CLOCK_REALTIME nanoseconds; 0 when the kernel attached none: timestamps not
/// enabled). Returns how many arrived (0 when none is waiting) or -errno.
int atrium_udp_recvmmsg_stamped(int fd, uint8_t *buffer, size_t stride, unsigned int count, size_t *lengths,
                                struct sockaddr_storage *sources, uint8_t *truncated, uint64_t *stamps_ns);
/// Sends up to `count` (at most ATRIUM_UDP_MAX_SEND_BATCH) datagrams: datagram i is `lengths[i]` bytes at
/// `buffer + i * stride`, to `destinations[i]`. Returns how many were handled, in order: sent, or refused
/// for their destination alone (`errors[i]` = -errno, else 0); fewer than `count` when the socket buffer
/// filled up. -errno when the socket itself failed before anything was handled.
int atrium_udp_sendmmsg(int fd, const uint8_t *buffer, size_t stride, unsigned int count, const size_t *lengths,
                        const struct sockaddr_storage *destinations, int *errors);

/// ICE-TCP (RFC 6544) needs a passive TCP port beside the UDP one. Opens a non-blocking, close-on-exec
/// TCP socket bound to `address` with SO_REUSEADDR, listening with `backlog`; stores the bound address in
/// `bound`. Returns the fd or -errno.
int atrium_tcp_listen(const struct sockaddr_storage *address, struct sockaddr_storage *bound, int backlog);
/// Accepts one connection without blocking (non-blocking, close-on-exec, TCP_NODELAY, SO_SNDBUF set to
/// `send_buffer` when > 0, TCP_USER_TIMEOUT (RFC 5482) set to `user_timeout_ms` when > 0: the kernel
/// aborts the connection with ETIMEDOUT once data it sent stays unacknowledged that long); stores the
/// peer in `peer`. Returns the fd, -EAGAIN when none is waiting, or -errno.
int atrium_tcp_accept(int fd, struct sockaddr_storage *peer, int send_buffer, unsigned int user_timeout_ms);
/// Reads up to `length` bytes without blocking: returns the count, 0 at end of stream, -EAGAIN when
/// nothing is waiting, or -errno.
long atrium_tcp_recv(int fd, uint8_t *buffer, size_t length);
/// Writes up to `length` bytes without blocking and without SIGPIPE: returns the count, -EAGAIN when the
/// send buffer is full, or -errno.
long atrium_tcp_send(int fd, const uint8_t *buffer, size_t length);
/// Changes what `fd` is watched for: readability, plus writability when `writable` is nonzero.
int atrium_epoll_modify(int epfd, int fd, uint64_t token, int writable);
/// The most datagrams one UDP GSO send carries (the kernel's UDP_MAX_SEGMENTS) and the most bytes.
#define ATRIUM_UDP_GSO_MAX_SEGMENTS 64
#define ATRIUM_UDP_GSO_MAX_BYTES 65000

/// Sends up to `count` (at most ATRIUM_UDP_MAX_SEND_BATCH) datagrams laid out as for atrium_udp_sendmmsg,
/// in their order, with UDP generic segmentation offload (Linux 4.18+, `UDP_SEGMENT`) when `*gso` is 1:
/// a run of two or more consecutive datagrams to one destination of the same length (the last one may
/// be shorter) goes to the kernel as one message that it cuts into datagrams. The caller groups the
/// batch by destination beforehand (UDPSocket's DestinationOrder). Everything else
/// goes out as single datagrams in the same sendmmsg calls. When the kernel refuses a segmented message
/// with EIO or EINVAL (no GSO on this kernel or device), `*gso` is set to 0 and the batch continues
/// without it. `status[i]` is 0 when datagram i was sent, -errno when it was refused for its
/// destination alone, 1 when it was not sent because the socket buffer filled up. Returns how many were
/// handled (sent or refused), or -errno when the socket itself failed before anything was handled.
/// `*messages` gets the number of messages passed to the kernel and `*segmented` how many datagrams
/// went out inside segmented ones.
int atrium_udp_send_batch(int fd, const uint8_t *buffer, size_t stride, unsigned int count, const size_t *lengths,
                          const struct sockaddr_storage *destinations, int *status, int *gso, int *messages,
                          int *segmented);
/// Sets SO_NO_CHECK (UDP checksums off), which makes the kernel refuse UDP_SEGMENT sends with EINVAL:
/// how the tests stand in for a kernel without GSO. Returns 0 or -errno.
int atrium_udp_refuse_segmentation(int fd);

/// Closes a descriptor; returns 0 or -errno.
int atrium_close(int fd);

/// Creates a close-on-exec epoll instance; returns the fd or -errno.
int atrium_epoll_create(void);
/// Watches `fd` for readability (level-triggered), reporting `token` when it is ready; returns 0 or -errno.
int atrium_epoll_add(int epfd, int fd, uint64_t token);
/// Stops watching `fd`; returns 0 or -errno.
int atrium_epoll_remove(int epfd, int fd);
/// Waits up to `timeout_ms` (-1: forever) and stores the tokens of ready descriptors. Returns how many
/// (0 on timeout or when a signal interrupted the wait) or -errno.
int atrium_epoll_wait(int epfd, uint64_t *tokens, int max_events, int timeout_ms);

/// Creates a non-blocking, close-on-exec eventfd; returns the fd or -errno.
int atrium_eventfd_create(void);
/// Adds one to the eventfd counter (safe from any thread); returns 0 or -errno.
int atrium_eventfd_signal(int fd);
/// Resets the counter; returns 0 or -errno (-EAGAIN when nothing was signalled).
int atrium_eventfd_drain(int fd);

/// Names the calling thread (pthread_setname_np, a GNU extension: what `top -H`, `perf` and
/// /proc/PID/task/TID/comm show), cut to the kernel's 15 bytes; 0 or an errno value.
int atrium_set_thread_name(const char *name);

#endif
