/// One room's media (mediasoup's Router): the transports of its participants and, on them, the
/// producers and consumers. A consumer is only ever fed by a producer of its own router, whatever
/// the commands say: a room's media never reaches another room. The unit a later step places on a
/// worker thread of its own. Owned by the worker thread.
final class Router {
    let id: String
    var transports: [String: Transport] = [:]
    var producers: [String: Producer] = [:]
    var consumers: [String: Consumer] = [:]

    init(id: String) { self.id = id }
}
