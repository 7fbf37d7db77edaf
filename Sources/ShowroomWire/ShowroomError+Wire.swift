// The error as it travels in `Envelope.error`, for the modules of this package only: apps see
// ``ShowroomError`` and its ``ShowroomError/Code``, never the generated wire types.

extension ShowroomError {
    /// Creates an error from one received on the wire, keeping unknown codes' numbers as they are.
    ///
    /// - Parameter wire: The `Error` message taken from an envelope.
    package init(wire: WireError) {
        number = wire.code.rawValue
        message = wire.message
        if wire.hasRedirect { redirect = wire.redirect }
    }

    /// This error as the wire message that goes into `Envelope.error`.
    package var wire: WireError {
        var error = WireError()
        error.code = wireCode
        error.message = message
        if let redirect { error.redirect = redirect }
        return error
    }

    /// The code as the wire spells it (`UNRECOGNIZED` for a number this build does not know).
    package var wireCode: WireErrorCode { WireErrorCode(rawValue: number) ?? .UNRECOGNIZED(number) }
}

extension ShowroomError.Code {
    /// The code a wire code stands for (``unrecognized`` for one this build does not know).
    package init(wire: WireErrorCode) {
        self = Self(rawValue: wire.rawValue) ?? .unrecognized
    }

    /// The code as the wire spells it.
    package var wire: WireErrorCode { WireErrorCode(rawValue: rawValue) ?? .UNRECOGNIZED(rawValue) }
}
