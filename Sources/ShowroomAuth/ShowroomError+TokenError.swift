import ShowroomWire

extension ShowroomError {
    /// The error an edge sends when it refuses a token: the token error's wire code and message.
    ///
    /// - Parameter error: Why the token was refused.
    public init(_ error: TokenError) {
        self.init(.init(wire: error.wireCode), error.message)
    }
}
