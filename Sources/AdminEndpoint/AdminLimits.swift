extension AdminServer {
    /// What one client may cost the admin port. Requests beyond a limit are answered with their
    /// status code and the connection is closed, before the HTTP parser sees them.
    public struct Limits: Sendable, Equatable {
        /// Longest request target (path and query) in bytes; longer gets 414 URI Too Long.
        public var maxURIBytes: Int
        /// Largest request head (request line and header fields) in bytes; larger gets 431 Request
        /// Header Fields Too Large as soon as the limit is crossed, without reading the rest.
        public var maxHeaderBytes: Int
        /// Largest request body in bytes: the admin paths take none, so this only tolerates
        /// clients that send an empty or tiny one. A larger `Content-Length`, or any
        /// `Transfer-Encoding`, gets 413 Content Too Large.
        public var maxBodyBytes: Int
        /// Seconds a request may take to arrive in full, from its first byte to its last; a
        /// client that sends part of a request and stalls gets 408 and is disconnected.
        public var requestTimeout: Double
        /// Seconds a keep-alive connection may sit without a request before it is closed (also
        /// the time a new connection has to start its first request).
        public var idleTimeout: Double
        /// Connections served at once; further ones wait in the listen backlog until one closes.
        public var maxConnections: Int
        /// Seconds a rejected client may keep sending (its bytes are read and dropped) before the
        /// connection is closed: closing at once, with its bytes unread, resets the connection
        /// and the client may never see the error status.
        public var lingerTimeout: Double
        /// Seconds `/status` waits for the status document before answering 503.
        public var statusTimeout: Double

        /// Defaults: a 4 KiB target, a 16 KiB head, 1 KiB body, a request within 5 s, keep-alive
        /// connections idle for at most 30 s, 64 connections, `/status` within 5 s.
        public init(
            maxURIBytes: Int = 4096,
            maxHeaderBytes: Int = 16 * 1024,
            maxBodyBytes: Int = 1024,
            requestTimeout: Double = 5,
            idleTimeout: Double = 30,
            maxConnections: Int = 64,
            lingerTimeout: Double = 1,
            statusTimeout: Double = 5
        ) {
            self.maxURIBytes = maxURIBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
            self.requestTimeout = requestTimeout
            self.idleTimeout = idleTimeout
            self.maxConnections = maxConnections
            self.lingerTimeout = lingerTimeout
            self.statusTimeout = statusTimeout
        }
    }
}
