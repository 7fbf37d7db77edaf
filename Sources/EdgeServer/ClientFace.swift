import Edge
import ShowroomWire
import ZeroMQ

/// The edge's client side as its shell drives it: how client messages come in, how replies,
/// events and media frames reach a client session, and where the timer and the edge-to-edge
/// links come from. ``RouterClientFace`` is the client ROUTER on the edge's loop;
/// ``InProcessClientFace`` carries the same messages, as opaque bytes, to clients in the same
/// process on one thread.
///
/// The shell is generic over its face, so the media path calls the ROUTER's send directly: no
/// existential, nothing allocated per frame.
protocol ClientFace: AnyObject {
    /// Starts serving: `receive` gets each client message, `[routing id][envelope]` or
    /// `[routing id][envelope][payload]`, and returns true when it kept the buffer (the face then
    /// reads into a new one); `tick` runs every `interval`.
    func start(receive: @escaping (Multipart) -> Bool, tick: @escaping () -> Void, every interval: Duration)
    /// Sends frames 1… of `frame` (the envelope and the payload, by reference) to `session`.
    func sendFrame(_ frame: Multipart, to session: SessionID) -> DeliveryOutcome
    /// Sends a control message (one envelope) to `session`, behind those waiting for it.
    ///
    /// - Returns: false if the client is gone (unknown, or too far behind).
    func sendControl(_ bytes: [UInt8], to session: SessionID) -> Bool
    /// Answers a peer that has no usable session id, once, if it can.
    func sendRaw(_ bytes: [UInt8], to routingID: [UInt8])
    /// Sends what waits for clients that were behind, as far as they take it.
    ///
    /// - Returns: The clients found gone.
    func flush() -> [SessionID]
    /// The session closed: what waits for it is dropped.
    func sessionClosed(_ session: SessionID)
    /// `session` was opened by the connection `message` came on.
    ///
    /// - Returns: The IP address that connection comes from, if the transport knows it.
    func sessionOpened(_ session: SessionID, by message: Multipart) -> String?
    /// Closes the connections that opened no session in time.
    func closeUnopened()
    /// A link to `edge`'s client side for `key` (connecting; opened by the caller).
    func link(_ key: ForwardKey, to edge: ForwardEdge, now: Duration) throws(ShowroomError) -> ForwardLink
    /// Watches a new link: `receive` when messages wait, `broke` when its connection breaks.
    func attach(_ link: ForwardLink, receive: @escaping (ForwardLink) -> Void, broke: @escaping (ForwardLink) -> Void)
    /// Stops watching a link.
    func detach(_ link: ForwardLink)
}
