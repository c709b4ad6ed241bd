#ifndef ATRIUM_CATRIUMSCTP_H
#define ATRIUM_CATRIUMSCTP_H
// A thin layer over usrsctp for WebRTC data channels (RFC 8831): one AF_CONN socket per association,
// addressed by an integer id (never a pointer, so a late callback for a closed association finds
// nothing), and two plain callbacks instead of usrsctp's by-value unions.
#include <stddef.h>
#include <stdint.h>

/// An SCTP packet to send to the peer of association `id` (over DTLS). Any thread: usrsctp's timer
/// thread sends retransmissions.
typedef void (*atrium_sctp_output_fn)(uintptr_t id, const void *packet, size_t length);

/// What reaches the owner of association `id`. `kind`: 0 a message (or part of one: `eor` 0), 1 the
/// association came up, 2 it went down, 3 the peer reset incoming stream `sid`, 4 the send buffer has room.
typedef void (*atrium_sctp_event_fn)(uintptr_t id, int kind, uint16_t sid, uint32_t ppid, int eor,
                                     const void *data, size_t length);

/// Starts usrsctp once per process (its timer thread included); later calls do nothing.
void atrium_sctp_init(atrium_sctp_output_fn output, atrium_sctp_event_fn event);

/// Opens the association `id` on `port` (both ends use the same, 5000 in WebRTC) and starts the
/// handshake (both ends connect: SCTP's simultaneous open). NULL on failure.
void *atrium_sctp_open(uintptr_t id, uint16_t port, uint32_t send_buffer);

/// An SCTP packet from the peer (after DTLS), processed at once on the calling thread.
void atrium_sctp_input(uintptr_t id, const void *packet, size_t length);

/// Sends a message on stream `sid`. `unordered`, and `max_retransmits` >= 0 for partial reliability
/// (0: never retransmitted). Returns the bytes queued, or -errno (-EWOULDBLOCK: the buffer is full).
long atrium_sctp_send(void *socket, uint16_t sid, uint32_t ppid, int unordered, int max_retransmits,
                      const void *data, size_t length);

/// Resets outgoing stream `sid` (closing a data channel, RFC 8831 section 6.7).
int atrium_sctp_reset_stream(void *socket, uint16_t sid);

/// Closes the association; no callback for `id` follows once this returns.
void atrium_sctp_close(void *socket, uintptr_t id);

/// usrsctp's count of received packets with a bad checksum or no association (sctps_badsum,
/// sctps_outoftheblue), for the metrics.
uint64_t atrium_sctp_rejected_packets(void);

#endif
