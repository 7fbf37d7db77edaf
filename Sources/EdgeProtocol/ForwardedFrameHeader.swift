import ShowroomWire

/// Writes the envelope of a forwarded media frame: `MEDIA_FRAME` with the publisher's
/// `MediaHeader`, its channel replaced by the destination channel, into storage reused from frame
/// to frame, so forwarding one frame into a destination allocates nothing here (the payload is
/// never touched: it is sent by reference).
///
/// The output is canonical protobuf (fields in number order, zero values left out), what
/// `WireEnvelope` decodes to `kind = MEDIA_FRAME`, `protocol_version = current` and a body that
/// decodes to the header with the new channel; unknown fields of the publisher's header are not
/// carried.
public struct ForwardedFrameHeader {
    /// The envelope bytes of the last ``write(_:channel:)``.
    public private(set) var bytes: [UInt8] = []
    private var body: [UInt8] = []

    /// Creates a writer with room for typical headers.
    public init() {
        bytes.reserveCapacity(192)
        body.reserveCapacity(160)
    }

    /// Writes the envelope of `header` moved to `channel` into ``bytes``.
    ///
    /// - Parameters:
    ///   - header: The publisher's header, as the edge decoded and checked it.
    ///   - channel: The destination channel (a valid name).
    ///   - also: More destination channels on the same edge (`also_channels`), sent with the
    ///     frame once for all of them.
    public mutating func write(_ header: WireMediaHeader, channel: String, also: ArraySlice<String> = []) {
        body.removeAll(keepingCapacity: true)
        Self.string(1, channel, into: &body)
        Self.varint(2, UInt64(header.publisherUid), into: &body)
        Self.varint(3, UInt64(truncatingIfNeeded: header.track.rawValue), into: &body)
        Self.varint(4, UInt64(truncatingIfNeeded: header.codec.rawValue), into: &body)
        Self.varint(5, UInt64(header.sequence), into: &body)
        Self.varint(6, header.captureTimeUs, into: &body)
        Self.varint(7, header.keyframe ? 1 : 0, into: &body)
        Self.varint(8, UInt64(header.audioLevel), into: &body)
        Self.varint(9, UInt64(header.width), into: &body)
        Self.varint(10, UInt64(header.height), into: &body)
        Self.varint(11, UInt64(header.payloadSize), into: &body)
        Self.varint(12, header.sendTimeUs, into: &body)
        for other in also { Self.string(13, other, into: &body) }
        bytes.removeAll(keepingCapacity: true)
        Self.varint(1, UInt64(WireMessageKind.mediaFrame.rawValue), into: &bytes)
        Self.tag(6, wireType: 2, into: &bytes)
        Self.raw(UInt64(body.count), into: &bytes)
        bytes.append(contentsOf: body)
        Self.varint(8, UInt64(WireEnvelope.currentProtocolVersion), into: &bytes)
    }

    private static func varint(_ field: UInt64, _ value: UInt64, into out: inout [UInt8]) {
        guard value != 0 else { return }
        tag(field, wireType: 0, into: &out)
        raw(value, into: &out)
    }

    private static func string(_ field: UInt64, _ value: String, into out: inout [UInt8]) {
        guard !value.isEmpty else { return }
        tag(field, wireType: 2, into: &out)
        raw(UInt64(value.utf8.count), into: &out)
        out.append(contentsOf: value.utf8)
    }

    private static func tag(_ field: UInt64, wireType: UInt64, into out: inout [UInt8]) {
        raw(field << 3 | wireType, into: &out)
    }

    private static func raw(_ value: UInt64, into out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }
}
