extension Socket {
    /// A DEALER for a client link to an edge, connected: high-water marks set, a monitor that
    /// reports the connection breaking (made before connecting, so no event is missed), and CURVE
    /// with a fresh key pair of its own when the edge gives its server key (clients are
    /// authenticated by their tokens, not by keys).
    ///
    /// - Parameters:
    ///   - endpoint: The edge's client endpoint.
    ///   - serverPublicKey: The edge's CURVE public key (Z85); empty for a plain link.
    ///   - send: Send high-water mark (messages).
    ///   - receive: Receive high-water mark (messages).
    ///   - context: The context.
    /// - Returns: The socket and its monitor (watching for disconnection, and for connection
    ///   attempts retried: nobody listens at the endpoint).
    public static func monitoredDealer(
        to endpoint: String, serverPublicKey: String, send: Int32, receive: Int32, context: Context
    ) throws(ZeroMQError) -> (socket: Socket, monitor: SocketMonitor) {
        let socket = try Socket(.dealer, context: context)
        try socket.setHighWaterMarks(send: send, receive: receive)
        let monitor = try SocketMonitor(watching: socket, events: [.disconnected, .connectRetried], context: context)
        if !serverPublicKey.isEmpty {
            try socket.makeCurveClient(try CurveKeyPair.generate(), serverPublicKey: serverPublicKey)
        }
        try socket.connect(endpoint)
        return (socket, monitor)
    }
}
